#pragma once
/// \file
/// The argument types of TensorDict's methods: batch sizes and dim names, the functions apply()
/// takes, the dims of a reduction (ReduceDims, reduce_all) and the options of memmap() and
/// state_dict().
/// tensordict.h includes this header.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensordict/class_contract.h"

namespace at {
class Tensor;
}

namespace tensordict {

/// Sizes of the leading dims every entry of a TensorDict shares (Python's `batch_size`).
using BatchSize = std::vector<int64_t>;
/// Optional name per batch dim (Python's `names`).
using DimNames = std::vector<std::optional<std::string>>;
/// (from, to) pairs of rename(): Python's `rename(c="g")` is `{{"c", "g"}}`.
using DimRenames = std::vector<std::pair<std::string, std::optional<std::string>>>;
/// Function applied to every tensor leaf; returning an undefined tensor drops the leaf.
using LeafFn = std::function<at::Tensor(const at::Tensor&)>;
/// Function merging the tensors several TensorDicts hold at one key (merge_tensordicts).
using MergeFn = std::function<at::Tensor(const std::vector<at::Tensor>&)>;
/// Function applied to the tensor leaves of two TensorDicts at the same key (apply(fn, other));
/// returning an undefined tensor drops the leaf.
using LeafFn2 = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

/// The dims a reduction covers (Python's `dim`): every element of each leaf (the default), some
/// batch dims (`0`, `{0, 1}`; negative counts from the last batch dim), or every feature dim
/// (`ReduceDims::feature()`, Python's dim="feature").
class ReduceDims {
 public:
  /// Every element of each leaf (Python's dim=None).
  ReduceDims() = default;
  /// One batch dim or several (`{0, 1}`); negative dims count from the last batch dim.
  ///@{
  ReduceDims(int64_t dim) : dims_{dim} {}                           // NOLINT
  ReduceDims(int dim) : dims_{dim} {}                               // NOLINT
  ReduceDims(std::initializer_list<int64_t> dims) : dims_(dims) {}  // NOLINT
  ///@}
  /// Every feature dim of each leaf, the batch dims kept (Python's dim="feature"); not with
  /// keepdim (TypeError).
  static ReduceDims feature() {
    ReduceDims out;
    out.feature_ = true;
    return out;
  }
  /// True for the default: every element of each leaf.
  bool is_all() const { return dims_.empty() && !feature_; }
  /// True for feature().
  bool is_feature() const { return feature_; }
  /// The batch dims given (empty for the default and for feature()).
  const std::vector<int64_t>& dims() const { return dims_; }

 private:
  std::vector<int64_t> dims_;
  bool feature_ = false;
};

/// Tag of the reductions that return one tensor over every leaf (Python's `reduce=True`):
/// `td.sum(reduce_all)`.
struct ReduceAll {};
/// The ReduceAll tag: `td.sum(reduce_all)`, `td.max(reduce_all, 0)`.
inline constexpr ReduceAll reduce_all{};

/// Options of state_dict (TensorDict's and TensorClass's), with Python's meaning.
struct StateDictOptions {
  std::string prefix;      ///< prepended to every key as is ("model." gives "model.x")
  bool keep_vars = false;  ///< tensors as stored (not detached)
  bool flatten = true;     ///< false: nested levels as nested StateDicts (StateDict::nested)
};

/// Options of the memmap family, with Python's meaning.
struct MemmapOptions {
  int num_threads = 0;         ///< >1 writes leaves in parallel.
  bool existsok = true;        ///< false: refuse to overwrite an existing leaf file.
  bool copy_existing = false;  ///< copy leaves already mapped from another file.
  /// Version of the on-disk format written (docs/format.md, "Format versions"): kFormatVersion,
  /// or 0 for the files of tensordict 0.15.2 and older (no version, class or dim-name entries).
  int format_version = kFormatVersion;
};

}  // namespace tensordict
