#pragma once
// The type-erased machinery behind TensorClass<Derived> (runtime/src/tensorclass/): casting per
// the class options, construction, field reads, repr, state_dict, memmap, the API by key. Called
// by tensorclass.h only; not an API for users.

#include <ATen/core/Tensor.h>

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/class_spec.h"
#include "tensordict/state_dict.h"
#include "tensordict/tensordict.h"

namespace tensordict {

namespace detail::tc {

/// The value to store for `value` in field `field` per the class options, or nullopt for None.
/// Checks the declared dtype/shape (TypeError / ShapeError naming the field).
std::optional<Value> cast(const ClassSpec& spec, size_t field, const FieldValue& value,
                          const BatchSize& batch_size, std::optional<at::Device> device);
/// Builds the inner TensorDict from one value per field (in field order), its dims named `names`
/// (Python's `names=`); locked when frozen.
TensorDict build(const ClassSpec& spec, const std::vector<FieldValue>& values, BatchSize batch_size,
                 std::optional<at::Device> device, std::optional<DimNames> names = std::nullopt);
/// LockedError naming the field when `td` is locked (a frozen or memory-mapped instance).
void check_settable(const TensorDict& td, const ClassSpec& spec, size_t field);
/// Stores `value` in field `field` (None removes it).
void set(TensorDict& td, const ClassSpec& spec, size_t field, const FieldValue& value);
/// Same; a tensor stored as is is moved out of `value` (the generated setters' path).
void set(TensorDict& td, const ClassSpec& spec, size_t field, FieldValue&& value);
/// The generated setters' path for a tensor: moved straight into the field's slot when the keys
/// are known to be the fields of `cls` in order (TensorDict::class_slot) and `t` passes every
/// check, through set() otherwise (which then records that layout when it holds).
void set_tensor(TensorDict& td, detail::ClassToken cls, size_t field, at::Tensor&& t);
/// The stored entry of field `field` (slot `field` when its key matches, else a lookup), or
/// nullptr when the field is None.
const Value* find(const TensorDict& td, const ClassSpec& spec, size_t field);
/// Same, throwing KeyError naming the class and field when the field is None.
const Value& require(const TensorDict& td, const ClassSpec& spec, size_t field);
// The generated accessors' slow path (their fast path is TensorDict::class_slot): like find, and
// records the class layout when the keys are the fields of `cls` in order, so that the next reads
// are inline.
const Value* entry(const TensorDict& td, detail::ClassToken cls, size_t field);
/// The tensor of field `field`; KeyError when None, TypeError when the entry is not a tensor.
const at::Tensor& tensor(const TensorDict& td, detail::ClassToken cls, size_t field);
/// Field index of `name`; KeyError listing the fields when there is none.
size_t index_of(const ClassSpec& spec, std::string_view name);
/// A stored entry as JSON: NonTensorData's data, a stack's nested list, a tensor's item / list,
/// a nested TensorDict's tolist() (dicts of its entries, one list level per batch dim).
Json to_json(const Value& value);

// Reading a non-tensor field as its C++ type. NonTensorData is read in place (no JSON copy);
// tensors (numbers stored as tensors) convert directly. A value of another kind (e.g. one string
// per element after stacking) throws TypeError naming `Class.field`, the expected and actual kind.
void read(const Value& value, const ClassSpec& spec, size_t field, std::string& out);
void read(const Value& value, const ClassSpec& spec, size_t field, int64_t& out);
void read(const Value& value, const ClassSpec& spec, size_t field, double& out);
void read(const Value& value, const ClassSpec& spec, size_t field, bool& out);
void read(const Value& value, const ClassSpec& spec, size_t field, Json& out);
void read(const Value& value, const ClassSpec& spec, size_t field, std::vector<int64_t>& out);
void read(const Value& value, const ClassSpec& spec, size_t field, std::vector<double>& out);
/// A TensorDict field: the stored TensorDict (a handle: writes reach the instance).
void read(const Value& value, const ClassSpec& spec, size_t field, TensorDict& out);
/// An `any` field of a lazy stack along dim 0 whose elements hold it as different kinds, or
/// ragged: one value per element (nested lists for nested stacks; null where an element lacks
/// it), as Python's tolist() reads them one by one.
Json read_any_per_element(const TensorDict& lazy, const ClassSpec& spec, size_t field);
/// The stored JSON of NonTensorData (no copy), else nullptr.
const Json* stored_json(const Value& value);
[[noreturn]] void wrong_kind(const ClassSpec& spec, size_t field, const Json& actual);
/// Any other (list) type: through nlohmann's conversion, with the same TypeError.
template <class T>
void read(const Value& value, const ClassSpec& spec, size_t field, T& out) {
  const Json* stored = stored_json(value);
  const Json converted = stored ? Json() : to_json(value);
  const Json& json = stored ? *stored : converted;
  try {
    out = json.template get<T>();
  } catch (const nlohmann::json::exception&) {
    wrong_kind(spec, field, json);
  }
}

/// "expects dtype float32, got float64" when `t` breaks the field's dtype constraint, else "".
std::string dtype_problem(const FieldSpec& field, const at::Tensor& t);
/// "expects shape [*, 3], got [4, 2]" when `t` breaks the field's shape constraint, else "".
std::string shape_problem(const FieldSpec& field, const at::Tensor& t);
/// The schema's default of `field` (None when it gives none).
FieldValue default_of(const FieldSpec& field);

/// Checks that `td` only holds fields of `spec` (KeyError otherwise), recursively that nested
/// class fields hold TensorDicts, and that tensors have their fields' dtypes and shapes (TypeError,
/// ShapeError naming the field).
void check_fields(const TensorDict& td, const ClassSpec& spec);
TensorDict to_tensordict(const TensorDict& td, const ClassSpec& spec, bool retain_none);
void print(std::ostream& os, const TensorDict& td, const ClassSpec& spec);
/// True when both hold the same fields with equal values (None fields included).
bool equal(const TensorDict& a, const TensorDict& b);

StateDict state_dict(const TensorDict& td, const ClassSpec& spec,
                     const StateDictOptions& options = {});
void load_state_dict(TensorDict& td, const ClassSpec& spec, const StateDict& state, bool strict,
                     bool assign, std::optional<bool> from_flatten);

/// Writes the tensorclass directory (meta.json with `_type` first and the None fields, the
/// entries under `_tensordict/`); nested class fields become tensorclass directories. Returns the
/// memory-mapped inner TensorDict. `like`: memmap_like.
TensorDict memmap(const TensorDict& td, const ClassSpec& spec, const std::string& prefix,
                  const MemmapOptions& options, bool like);
/// memmap_: writes like `memmap`, then points `td` (and every handle sharing it, nested levels
/// included) at the mapped files.
void memmap_in_place(TensorDict& td, const ClassSpec& spec, const std::string& prefix,
                     const MemmapOptions& options);
/// load_memmap_: refills `td` (every handle sharing it sees the loaded fields) from `prefix`.
void load_memmap_in_place(TensorDict& td, const ClassSpec& spec, const std::string& prefix);
/// Loads a tensorclass directory; FormatError unless its `_type` is `spec.python_type` and its
/// keys are fields of the class.
TensorDict load_memmap(const ClassSpec& spec, const std::string& prefix,
                       std::optional<at::Device> device);
/// `memmap` on a background thread.
TensorDictFuture memmap_async(const TensorDict& td, const ClassSpec& spec,
                              const std::string& prefix, const MemmapOptions& options);
/// Reloads a memory-mapped instance from the directory it was saved to (Error when it has none).
void memmap_refresh(TensorDict& td, const ClassSpec& spec);

// ---- the everyday API by key (tensorclass/api.cpp) ----------------------------------------------
/// Python's get(key[, default]): the entry at `key` (a field, or a path through class fields and
/// TensorDicts); nullopt when that field is None. A key that does not resolve (no such field, a
/// None or non-collection entry on the path, a key missing from a TensorDict) gives
/// `*default_value`, or a KeyError naming the key when `default_value` is null.
std::optional<Value> get_path(const TensorDict& td, const ClassSpec& spec, const NestedKey& key,
                              const std::optional<Value>* default_value);
/// Python's set(key, value, inplace): a field (cast per the class options) or a path into a
/// nested class field or TensorDict. `inplace` copies a tensor into the stored tensor (a nested
/// instance or TensorDict: update_) and refuses to replace a stored entry with a value of another
/// kind (TypeError); a missing entry is simply set.
void set_path(TensorDict& td, const ClassSpec& spec, const NestedKey& key, const FieldValue& value,
              bool inplace);
/// The TensorDict an instance built by from_tensordict(td, non_tensordict, safe) wraps: `td`
/// itself, or with `non_tensordict` a structure copy of it (tensors shared) holding those fields
/// too. `safe` checks that the keys are fields of the class (KeyError) and nested classes hold
/// TensorDicts; a key both in `td` and in `non_tensordict` with a value other than None is a
/// KeyError.
TensorDict from_tensordict(const TensorDict& td, const ClassSpec& spec,
                           const FieldValues& non_tensordict, bool safe);
/// TensorDict::from_dict of `dict` without its None fields (null values of fields, in nested
/// class fields too), for C::from_dict.
TensorDict from_dict(const ClassSpec& spec, const Json& dict, std::optional<BatchSize> batch_size,
                     std::optional<at::Device> device, std::optional<int64_t> batch_dims,
                     std::optional<bool> auto_batch_size);
/// TensorDict::from_list of `items` without their None fields, for C::from_list.
TensorDict from_list(const ClassSpec& spec, const Json& items, std::optional<BatchSize> batch_size,
                     std::optional<at::Device> device, std::optional<int64_t> batch_dims,
                     std::optional<bool> auto_batch_size, std::optional<bool> lazy);
/// ValueError unless `value` may be written into an instance of `spec` at an index: a plain
/// TensorDict, an instance of the class, or of a class with the same fields (Python's __setitem__).
void check_assignable(const ClassSpec& spec, const TensorDict& value);
/// Marks `td` as an instance of `spec`'s class unless it already is one of some class (an instance
/// viewed as its base keeps its own class): stored anywhere, it is then saved as that class.
void mark_class(const TensorDict& td, const ClassSpec& spec);

}  // namespace detail::tc

namespace detail {
/// Passed to a generated class's private constructor that wraps an existing TensorDict.
struct WrapTag {};
}  // namespace detail

}  // namespace tensordict
