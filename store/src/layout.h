#pragma once
// Python tensordict 0.14's store layout for one leaf (private to the store): key paths, the m:
// hash, the d: bytes, and what checks them. store.cpp keeps TensorDicts on it, lazy.cpp lazy
// stacks.

#include <ATen/core/Tensor.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/nested_key.h"
#include "tensordict/store.h"

namespace tensordict::store::layout {

using Command = std::vector<std::string>;
using Keys = std::set<std::string>;

/// Whether a leaf may have dtype `t`: those whose bytes numpy and torch.frombuffer agree on.
bool stored_dtype(at::ScalarType t);
/// `torch.float32`, as Python writes a dtype.
std::string dtype_text(at::ScalarType t);
/// `[3, 2]`, as Python's json.dumps writes a shape.
std::string shape_text(at::IntArrayRef shape);
/// A key's dotted path in the store (KeyError for a component that is empty or holds a dot).
std::string path_of(const NestedKey& key);
/// The key of a dotted path.
NestedKey key_of(const std::string& path);
/// Whether `path` lies below the nested level `level`.
bool under(const std::string& path, const std::string& level);
/// A path as messages name a key.
std::string repr(const std::string& path);
/// A JSON list of non-negative integers (a shape or a batch size); FormatError otherwise.
std::vector<int64_t> int_list(const std::string& text, const std::string& what);
/// An error reply: a key of the wrong Redis type is bad store contents (FormatError), anything
/// else (NOPERM, OOM, ...) the server's refusal (ConnectionError).
[[noreturn]] void throw_reply(const Reply& r, const std::string& what);
/// A string reply's text; FormatError for another type, throw_reply for an error.
const std::string& string_reply(const Reply& r, const std::string& what);
/// throw_reply for the first error among `replies`.
void check_ok(const std::vector<Reply>& replies, const std::string& what);
/// `commands` sent together on `conn` (in one transaction with `transaction`), their replies in
/// order; a lost connection (ConnectionError) or a timeout (TimeoutError) names `what`, the
/// entry the commands were for. Error replies are returned, for the caller to judge.
std::vector<Reply> exchange(Connection& conn, const std::vector<Command>& commands,
                            bool transaction, const std::string& what);
/// Connection::transactions, errors named as exchange's.
std::vector<std::vector<Reply>> exchange_transactions(
    Connection& conn, const std::vector<std::vector<Connection::CommandView>>& groups,
    const std::string& what);

/// A leaf's m: hash, decoded and checked.
struct Meta {
  bool non_tensor = false;
  std::string encoding;
  std::vector<int64_t> shape;
  at::ScalarType dtype = at::kFloat;
  int64_t nbytes = 0;     // what the shape and dtype need
  int64_t row_bytes = 0;  // one row of dim 0
  /// The hash's fields as read, for the lazy stacks' own (homogeneous, shapes).
  std::vector<std::pair<std::string, std::string>> fields;
  /// The field `name`, or nullptr.
  const std::string* field(const std::string& name) const;
  /// A tensor leaf's metadata (sizes that exist: no overflow check).
  static Meta of_tensor(at::IntArrayRef shape, at::ScalarType dtype);
};
/// The Meta of the leaf at `path` from its HGETALL reply; FormatError naming the key when the
/// hash is missing, malformed, or sizes a value larger than any the server keeps.
Meta parse_meta(const std::string& path, const Reply& hash);
/// Bytes read and checked for `path`: a tensor of `meta`'s shape and dtype (FormatError naming
/// the key when the byte count differs).
at::Tensor from_bytes(const std::string& path, const std::string& bytes, const Meta& meta);
/// The same, taking the reply's string: the tensor keeps it as its memory (no copy) unless small.
at::Tensor from_bytes(const std::string& path, std::string&& bytes, const Meta& meta);
/// `t` as the C-contiguous CPU tensor whose bytes are what Python's `tensor.numpy().tobytes()`
/// gives (`t` itself when it is one).
at::Tensor contiguous_cpu(const at::Tensor& t);
/// The bytes of a tensor contiguous_cpu gave, viewed.
std::string_view bytes_of(const at::Tensor& contiguous);
/// A tensor's contiguous_cpu bytes, copied.
std::string to_bytes(const at::Tensor& t);
/// A random UUID4, as Python's uuid.uuid4() spells it (a new store's td_id).
std::string uuid4();

/// One leaf of a write, checked before anything is sent.
struct Leaf {
  std::string path;
  std::string text;   // a non-tensor leaf's JSON
  at::Tensor tensor;  // a tensor leaf, contiguous_cpu: sent from its memory
  std::vector<std::pair<std::string, std::string>> meta;  // field order as Python writes
  /// The d: value.
  std::string_view data() const { return tensor.defined() ? bytes_of(tensor) : text; }
};

}  // namespace tensordict::store::layout

namespace tensordict::store::layout {

/// Python's LazyStackedTensorDictStore (`__type__` = `lazy_stack`): `__count__` elements of batch
/// size `__inner_batch_size__` stacked along `__stack_dim__`.
struct LazyShape {
  /// The most elements a lazy stack store is read with: each is a TensorDict in memory, and a
  /// hostile `__count__` (with zero-byte leaves, which no value size bounds) must not exhaust it.
  static constexpr int64_t kMaxCount = int64_t{1} << 24;

  int64_t count = 0;
  int64_t stack_dim = 0;
  BatchSize inner;
  /// The stack's batch size: `inner` with `count` inserted at `stack_dim`.
  BatchSize batch_size() const;
};
/// The lazy stack whose leaves are `paths`, each key named by `key` ("d:<path>" -> the Redis
/// key), read in one pipeline: a homogeneous leaf (m: `homogeneous` "1") is one blob of `count`
/// equal rows, a heterogeneous one ("0") the elements' bytes back to back, with `count + 1`
/// little-endian int64 offsets in d:<path>:idx and the shapes in m:'s `shapes`. FormatError
/// naming the key for contents that do not agree; TypeError for a non-tensor leaf (not read yet).
TensorDict read_lazy_stack(Connection& conn,
                           const std::function<std::string(const std::string&)>& key,
                           const Keys& paths, const LazyShape& shape,
                           std::optional<at::Device> device);
/// Writes the lazy stack `td` as Python's from_lazy_stack does (the metadata, then one
/// transaction per leaf: homogeneous when every element's tensor has one shape and dtype), each
/// leaf checked before anything is sent. Returns its LazyShape. TypeError for non-tensor leaves,
/// nested lazy stacks, dtypes that differ between elements; KeyError for a leaf an element lacks;
/// ShapeError past the server's value limit.
LazyShape write_lazy_stack(Connection& conn,
                           const std::function<std::string(const std::string&)>& key,
                           const TensorDict& td, std::optional<at::Device> device);

}  // namespace tensordict::store::layout
