#pragma once
// TensorClass<Derived>: the generic half of every class tcgen generates.
//
// A generated class is a typed view over one TensorDict (Python's `_tensordict`) plus a static
// ClassSpec describing its fields. Fields are stored in schema order, so once the runtime has seen
// that the keys are exactly the fields in order, the accessor of field i reads slot i inline (the
// TensorDict forgets that fact whenever its keys change). A field whose value is None is absent
// from the TensorDict, as in Python (it lives in `_non_tensordict` there).
//
// Everything that does not depend on the field types lives here and in tensorclass*.cpp, tested
// once: casting per the class options (format spec §7), construction, get/set by name, repr,
// state_dict, equality, the TensorDict ops returning the typed class, and the memmap layout of
// tensorclasses (spec §3).

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tensordict/class_contract.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/state_dict.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// ---- the static description of a class ---------------------------------------------------------

struct ClassSpec;

/// One field of a class. Generated code builds it by name:
/// `FieldSpec("obs", FieldKind::Tensor).with_dtype(at::ScalarType::Float).with_shape({-1, 3})`.
struct FieldSpec {
  const char* name;
  FieldKind kind;
  bool optional = false;
  /// Class fields: the nested class's spec.
  const ClassSpec& (*nested)() = nullptr;
  /// Tensor fields: required dtype, and shape (-1 = any size) when the schema gives one.
  std::optional<at::ScalarType> dtype = std::nullopt;
  std::optional<std::vector<int64_t>> shape = std::nullopt;

  FieldSpec(const char* field_name, FieldKind field_kind) : name(field_name), kind(field_kind) {}
  /// The field may be None (`optional[...]` in the schema).
  FieldSpec& nullable() { return optional = true, *this; }
  FieldSpec& with_class(const ClassSpec& (*spec)()) { return nested = spec, *this; }
  FieldSpec& with_dtype(at::ScalarType required) { return dtype = required, *this; }
  FieldSpec& with_shape(std::vector<int64_t> required) {
    return shape = std::move(required), *this;
  }
};

struct ClassSpec {
  const char* name;         ///< C++ / Python class name, e.g. "RewardData"
  const char* python_type;  ///< `_type` on disk, e.g. "<class 'torchrl...RewardData'>"
  ClassOptions options;
  std::vector<FieldSpec> fields;

  /// Index of the field called `name`, or -1.
  int64_t field_index(std::string_view name) const;
};

struct TensorClassTag;

/// A value given to a field: None, a tensor, a nested collection (a TensorDict or an instance of a
/// generated class) or JSON-like data. Which kind is stored then depends on the class options
/// (spec §7.1).
class FieldValue {
 public:
  FieldValue() = default;        // None
  FieldValue(std::nullopt_t) {}  // NOLINT: None
  /// An undefined tensor (a default-constructed Args member) means None.
  FieldValue(at::Tensor t) {  // NOLINT
    if (t.defined()) v_ = std::move(t);
  }
  FieldValue(TensorDict td) : v_(std::move(td)) {}  // NOLINT
  template <class T, class = std::enable_if_t<std::is_base_of_v<TensorClassTag, T>>>
  FieldValue(const T& instance) : v_(instance._tensordict()) {}  // NOLINT
  FieldValue(Json json) : v_(std::move(json)) {}                 // NOLINT
  FieldValue(const char* s) : v_(Json(s)) {}                     // NOLINT
  FieldValue(std::string s) : v_(Json(std::move(s))) {}          // NOLINT
  FieldValue(bool b) : v_(Json(b)) {}                            // NOLINT
  FieldValue(int v) : v_(Json(static_cast<int64_t>(v))) {}       // NOLINT
  FieldValue(int64_t v) : v_(Json(v)) {}                         // NOLINT
  FieldValue(double v) : v_(Json(v)) {}                          // NOLINT
  template <class T>
  FieldValue(std::optional<T> v) {  // NOLINT
    if (v) *this = FieldValue(std::move(*v));
  }
  template <class T>
  FieldValue(const std::vector<T>& items) : v_(Json(items)) {}  // NOLINT

  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  const at::Tensor* tensor() const { return std::get_if<at::Tensor>(&v_); }
  const TensorDict* tensordict() const { return std::get_if<TensorDict>(&v_); }
  const Json* json() const { return std::get_if<Json>(&v_); }

 private:
  std::variant<std::monostate, at::Tensor, TensorDict, Json> v_;
};

/// What an autocast class's constructor and setters take for an int, float, bool or str field: a
/// `T`, None, or a tensor, which the class casts to `T` as Python's autocast does (`int(t)`).
template <class T>
class Autocast : public FieldValue {
 public:
  Autocast() = default;
  Autocast(std::nullopt_t) {}                                         // NOLINT: None
  Autocast(T value) : FieldValue(std::move(value)) {}                 // NOLINT
  Autocast(std::optional<T> value) : FieldValue(std::move(value)) {}  // NOLINT
  Autocast(at::Tensor t) : FieldValue(std::move(t)) {}                // NOLINT
  /// A string literal for a str field (one user-defined conversion, not two).
  template <class U = T, class = std::enable_if_t<std::is_same_v<U, std::string>>>
  Autocast(const char* s) : FieldValue(s) {}  // NOLINT
};

/// Field values by name: Python's `non_tensordict` argument of from_tensordict.
using FieldValues = std::vector<std::pair<std::string, FieldValue>>;

/// Options of TensorClass::state_dict, with Python's meaning.
struct StateDictOptions {
  std::string prefix;      ///< prepended to every key as is ("model." gives "model.x")
  bool keep_vars = false;  ///< tensors as stored (not detached)
  bool flatten = true;     ///< false: nested levels as nested StateDicts (StateDict::nested)
};

// ---- type-erased machinery (tensorclass*.cpp) ---------------------------------------------------
namespace tc {

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

/// Checks that `td` only holds fields of `spec` (KeyError otherwise) and recursively that nested
/// class fields hold TensorDicts.
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

}  // namespace tc

namespace detail {
/// Passed to a generated class's private constructor that wraps an existing TensorDict.
struct WrapTag {};
}  // namespace detail

/// The instance a background memmap will give (Python's memmap(return_early=True)): get() waits
/// and returns it (or rethrows the write's error), once.
template <class T>
class TensorClassFuture {
 public:
  explicit TensorClassFuture(TensorDictFuture inner) : inner_(std::move(inner)) {}
  T get() { return T::from_tensordict(inner_.get(), {}, false); }
  void wait() const { inner_.wait(); }
  bool valid() const { return inner_.valid(); }

 private:
  TensorDictFuture inner_;
};

// ---- the CRTP base
// -------------------------------------------------------------------------------

/// Marks generated classes (tested without instantiating TensorClass<T> for arbitrary T).
struct TensorClassTag {};

/// Base of generated classes. `Derived` provides `static const ClassSpec& class_spec()` and a
/// private default constructor (befriending this base).
template <class Derived>
class TensorClass : public TensorClassTag {
 public:
  static const ClassSpec& spec() { return Derived::class_spec(); }
  /// Field names in schema order.
  static std::vector<std::string> fields() {
    std::vector<std::string> names;
    for (const auto& f : spec().fields) names.emplace_back(f.name);
    return names;
  }

  /// Python's from_tensordict(td, non_tensordict, safe): wraps `td` (aliasing it); the fields in
  /// `non_tensordict` are set too (then on a structure copy of `td`, so that `td` keeps its keys).
  /// `safe`: KeyError unless every key is a field (safe = false skips the checks).
  static Derived from_tensordict(TensorDict td, const FieldValues& non_tensordict = {},
                                 bool safe = true) {
    if (non_tensordict.empty()) {
      if (safe) tc::check_fields(td, spec());
      return wrap(std::move(td));
    }
    return wrap(tc::from_tensordict(td, spec(), non_tensordict, safe));
  }
  /// A new TensorDict with the fields (tensors cloned, nested classes converted); None fields
  /// are dropped unless `retain_none`, which keeps them as NonTensorData(None). The default is
  /// what Python 0.14 does (its docstring says True, its code drops them).
  TensorDict to_tensordict(bool retain_none = false) const {
    return tc::to_tensordict(td_, spec(), retain_none);
  }
  /// The inner TensorDict (Python's `_tensordict`), aliasing this instance.
  const TensorDict& _tensordict() const { return td_; }

  // ---- by key ----------------------------------------------------------------------------------
  /// The stored entry at `key` (a field name, or a path into nested class fields and TensorDicts:
  /// `{"inner", "x"}`), or nullopt when that field is None. KeyError when `key` does not resolve.
  std::optional<Value> get(const NestedKey& key) const {
    return tc::get_path(td_, spec(), key, nullptr);
  }
  /// Python's get(key, default): `default_value` when `key` does not resolve; a None field still
  /// gives nullopt. `get(key, std::nullopt)` is Python's `get(key)`.
  std::optional<Value> get(const NestedKey& key, const std::optional<Value>& default_value) const {
    return tc::get_path(td_, spec(), key, &default_value);
  }
  /// Python's set(key, value, inplace): sets a field through the class's casting rules, or an
  /// entry of a nested class field / TensorDict. `inplace` writes into the stored tensor.
  Derived& set(const NestedKey& key, const FieldValue& value, bool inplace = false) {
    tc::set_path(td_, spec(), key, value, inplace);
    return self();
  }

  // ---- shape, device, lock ----------------------------------------------------------------------
  const BatchSize& batch_size() const { return td_.batch_size(); }
  void set_batch_size(BatchSize batch_size) { td_.set_batch_size(std::move(batch_size)); }
  int64_t ndim() const { return td_.ndim(); }
  int64_t batch_dims() const { return td_.ndim(); }
  int64_t numel() const { return td_.numel(); }
  std::optional<at::Device> device() const { return td_.device(); }
  bool is_locked() const { return td_.is_locked(); }
  /// Python's `names`: one optional name per batch dim; batch ops move them as Python does.
  DimNames names() const { return td_.names(); }
  Derived& set_names(std::optional<DimNames> names) {
    td_.set_names(std::move(names));
    return self();
  }
  Derived& refine_names(const DimNames& names) { return td_.refine_names(names), self(); }
  Derived rename(std::optional<DimNames> names) const { return wrap(td_.rename(std::move(names))); }
  Derived rename(const DimRenames& rename_map) const { return wrap(td_.rename(rename_map)); }
  Derived& rename_(std::optional<DimNames> names) { return td_.rename_(std::move(names)), self(); }
  Derived& rename_(const DimRenames& rename_map) { return td_.rename_(rename_map), self(); }
  Derived& lock_() { return td_.lock_(), self(); }
  Derived& unlock_() { return td_.unlock_(), self(); }

  // ---- TensorDict ops returning the typed class -------------------------------------------------
  Derived index(const Index& index) const { return wrap(td_.index(index)); }
  Derived operator[](int64_t i) const { return wrap(td_[i]); }
  Derived view(at::IntArrayRef shape) const { return wrap(td_.view(shape)); }
  Derived reshape(at::IntArrayRef shape) const { return wrap(td_.reshape(shape)); }
  Derived squeeze(std::optional<int64_t> dim = std::nullopt) const {
    return wrap(td_.squeeze(dim));
  }
  Derived unsqueeze(int64_t dim) const { return wrap(td_.unsqueeze(dim)); }
  Derived permute(at::IntArrayRef dims) const { return wrap(td_.permute(dims)); }
  Derived transpose(int64_t d0, int64_t d1) const { return wrap(td_.transpose(d0, d1)); }
  Derived flatten(int64_t start = 0, int64_t end = -1) const {
    return wrap(td_.flatten(start, end));
  }
  Derived unflatten(int64_t dim, at::IntArrayRef sizes) const {
    return wrap(td_.unflatten(dim, sizes));
  }
  Derived expand(at::IntArrayRef shape) const { return wrap(td_.expand(shape)); }
  std::vector<Derived> unbind(int64_t dim = 0) const { return wrap_all(td_.unbind(dim)); }
  std::vector<Derived> split(int64_t size, int64_t dim = 0) const {
    return wrap_all(td_.split(size, dim));
  }
  std::vector<Derived> chunk(int64_t chunks, int64_t dim = 0) const {
    return wrap_all(td_.chunk(chunks, dim));
  }
  static Derived stack(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::stack(inner_all(items), dim));
  }
  static Derived cat(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::cat(inner_all(items), dim));
  }
  /// Python's lazy_stack: an instance over a lazy stack of the items' TensorDicts (rows may be
  /// ragged; x[i] is then items[i] itself).
  static Derived lazy_stack(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::lazy_stack(inner_all(items), dim));
  }
  Derived to(at::Device device, bool non_blocking = false) const {
    return wrap(td_.to(device, non_blocking));
  }
  Derived to(at::ScalarType dtype) const { return wrap(td_.to(dtype)); }
  Derived clone(bool recurse = true) const { return wrap(td_.clone(recurse)); }
  Derived contiguous() const { return wrap(td_.contiguous()); }
  Derived detach() const { return wrap(td_.detach()); }
  Derived apply(const LeafFn& fn) const { return wrap(td_.apply(fn)); }
  Derived& apply_(const LeafFn& fn) { return td_.apply_(fn), self(); }
  Derived& update(const Derived& other) { return td_.update(other.td_), self(); }
  Derived& update_(const Derived& other) { return td_.update_(other.td_), self(); }

  // ---- math: element-wise operators on every tensor field, returning the typed class ------------
  // (the operand: a scalar, a tensor broadcast over the batch dims, or an instance of the class;
  // reductions and named ops: through _tensordict(), e.g. `obj._tensordict().sum()`).
  friend Derived operator+(const Derived& a, const Operand& b) { return wrap(a.td_ + b); }
  friend Derived operator-(const Derived& a, const Operand& b) { return wrap(a.td_ - b); }
  friend Derived operator*(const Derived& a, const Operand& b) { return wrap(a.td_ * b); }
  friend Derived operator/(const Derived& a, const Operand& b) { return wrap(a.td_ / b); }
  friend Derived operator+(const Derived& a, const Derived& b) { return wrap(a.td_ + b.td_); }
  friend Derived operator-(const Derived& a, const Derived& b) { return wrap(a.td_ - b.td_); }
  friend Derived operator*(const Derived& a, const Derived& b) { return wrap(a.td_ * b.td_); }
  friend Derived operator/(const Derived& a, const Derived& b) { return wrap(a.td_ / b.td_); }
  friend Derived operator-(const Derived& a) { return wrap(-a.td_); }
  friend Derived operator<(const Derived& a, const Operand& b) { return wrap(a.td_ < b); }
  friend Derived operator<=(const Derived& a, const Operand& b) { return wrap(a.td_ <= b); }
  friend Derived operator>(const Derived& a, const Operand& b) { return wrap(a.td_ > b); }
  friend Derived operator>=(const Derived& a, const Operand& b) { return wrap(a.td_ >= b); }
  friend Derived& operator+=(Derived& a, const Operand& b) { return a.td_ += b, a; }
  friend Derived& operator-=(Derived& a, const Operand& b) { return a.td_ -= b, a; }
  friend Derived& operator*=(Derived& a, const Operand& b) { return a.td_ *= b, a; }
  friend Derived& operator/=(Derived& a, const Operand& b) { return a.td_ /= b, a; }
  friend Derived& operator+=(Derived& a, const Derived& b) { return a.td_ += b.td_, a; }
  friend Derived& operator-=(Derived& a, const Derived& b) { return a.td_ -= b.td_, a; }

  // ---- memmap family (spec §3) ------------------------------------------------------------------
  Derived memmap(const std::string& prefix, const MemmapOptions& options = {}) const {
    return wrap(tc::memmap(td_, spec(), prefix, options, false));
  }
  Derived memmap_like(const std::string& prefix, const MemmapOptions& options = {}) const {
    return wrap(tc::memmap(td_, spec(), prefix, options, true));
  }
  /// Python's memmap(return_early=True): the write runs on a background thread.
  TensorClassFuture<Derived> memmap_async(const std::string& prefix,
                                          const MemmapOptions& options = {}) const {
    return TensorClassFuture<Derived>(tc::memmap_async(td_, spec(), prefix, options));
  }
  Derived& memmap_(const std::string& prefix, const MemmapOptions& options = {}) {
    tc::memmap_in_place(td_, spec(), prefix, options);
    return self();
  }
  Derived save(const std::string& prefix, const MemmapOptions& options = {}) const {
    return memmap(prefix, options);
  }
  Derived dumps(const std::string& prefix, const MemmapOptions& options = {}) const {
    return memmap(prefix, options);
  }
  /// Loads a directory written for this class (by C++ or by its Python counterpart).
  static Derived load_memmap(const std::string& prefix,
                             std::optional<at::Device> device = std::nullopt) {
    return wrap(tc::load_memmap(spec(), prefix, device));
  }
  static Derived load(const std::string& prefix, std::optional<at::Device> device = std::nullopt) {
    return load_memmap(prefix, device);
  }
  Derived& load_memmap_(const std::string& prefix) {
    tc::load_memmap_in_place(td_, spec(), prefix);
    return self();
  }
  Derived& load_(const std::string& prefix) { return load_memmap_(prefix); }
  /// Reloads every field from the directory this instance is memory-mapped to.
  Derived& memmap_refresh_() {
    tc::memmap_refresh(td_, spec());
    return self();
  }
  bool is_memmap() const { return td_.is_memmap(); }
  std::optional<std::string> saved_path() const { return td_.saved_path(); }

  // ---- state dict, comparison, printing --------------------------------------------------------
  /// Python's state_dict(prefix=, keep_vars=, flatten=): `state_dict({"model."})`.
  StateDict state_dict(const StateDictOptions& options = {}) const {
    return tc::state_dict(td_, spec(), options);
  }
  Derived& load_state_dict(const StateDict& state, bool strict = true, bool assign = false,
                           std::optional<bool> from_flatten = std::nullopt) {
    tc::load_state_dict(td_, spec(), state, strict, assign, from_flatten);
    return self();
  }
  /// Element-wise comparison of every tensor field (a TensorDict of bool tensors).
  TensorDict eq(const Derived& other) const { return td_ == other.td_; }
  /// True when every field (None included) holds equal values.
  friend bool operator==(const Derived& a, const Derived& b) { return tc::equal(a.td_, b.td_); }
  friend bool operator!=(const Derived& a, const Derived& b) { return !(a == b); }
  /// Python's repr layout: `Name(\n    field=...,\n    batch_size=..., device=..., is_shared=...)`.
  friend std::ostream& operator<<(std::ostream& os, const Derived& obj) {
    tc::print(os, obj.td_, spec());
    return os;
  }

 protected:
  explicit TensorClass(TensorDict td) : td_(std::move(td)) {}

  static Derived wrap(TensorDict td) { return Derived(detail::WrapTag{}, std::move(td)); }
  static TensorDict build(const std::vector<FieldValue>& values, BatchSize batch_size,
                          std::optional<at::Device> device,
                          std::optional<DimNames> names = std::nullopt) {
    return tc::build(spec(), values, std::move(batch_size), device, std::move(names));
  }

  // Typed field access for the generated accessors. Inline while the keys are known to be the
  // fields in schema order (TensorDict::class_slot), through the runtime otherwise.
  const Value* field_entry(size_t i) const {
    if (const Value* v = td_.class_slot(&Derived::class_spec, i)) return v;
    return tc::entry(td_, &Derived::class_spec, i);
  }
  const Value& required_entry(size_t i) const {
    const Value* v = field_entry(i);
    return v ? *v : tc::require(td_, spec(), i);  // KeyError naming the field
  }
  const at::Tensor& tensor_field(size_t i) const {
    if (const Value* v = td_.class_slot(&Derived::class_spec, i)) {
      if (const at::Tensor* t = v->tensor_if()) return *t;
    }
    return tc::tensor(td_, &Derived::class_spec, i);
  }
  std::optional<at::Tensor> optional_tensor_field(size_t i) const {
    const Value* v = field_entry(i);
    return v ? std::optional<at::Tensor>(v->tensor()) : std::nullopt;
  }
  template <class T>
  T value_field(size_t i) const {
    T out{};
    tc::read(required_entry(i), spec(), i, out);
    return out;
  }
  template <class T>
  std::optional<T> optional_value_field(size_t i) const {
    const Value* v = field_entry(i);
    if (!v) return std::nullopt;
    const Json* json = tc::stored_json(*v);
    if (json && json->is_null()) return std::nullopt;
    T out{};
    tc::read(*v, spec(), i, out);
    return out;
  }
  /// An `any` field: its JSON value, null when the field is None (Python returns None).
  Json any_field(size_t i) const {
    const Value* v = field_entry(i);
    Json out;
    if (v) tc::read(*v, spec(), i, out);
    return out;
  }
  template <class Nested>
  Nested nested_field(size_t i) const {
    return Nested::wrap(required_entry(i).tensordict());
  }
  template <class Nested>
  std::optional<Nested> optional_nested_field(size_t i) const {
    const Value* v = field_entry(i);
    return v ? std::optional<Nested>(Nested::wrap(v->tensordict())) : std::nullopt;
  }
  Derived& set_field(size_t i, FieldValue value) {
    tc::set(td_, spec(), i, value);
    return self();
  }

  /// Converts an Args member or a setter's argument to a FieldValue (nested classes give their
  /// inner TensorDict; an empty optional gives None).
  template <class T>
  static FieldValue as_field(T value) {
    if constexpr (std::is_base_of_v<TensorClassTag, T>) {
      return FieldValue(value._tensordict());
    } else {
      return FieldValue(std::move(value));
    }
  }
  template <class T>
  static FieldValue as_field(std::optional<T> value) {
    return value ? as_field(std::move(*value)) : FieldValue();
  }

  TensorDict td_;

 private:
  template <class Other>
  friend class TensorClass;

  Derived& self() { return static_cast<Derived&>(*this); }
  static std::vector<Derived> wrap_all(const std::vector<TensorDict>& tds) {
    std::vector<Derived> out;
    out.reserve(tds.size());
    for (const auto& td : tds) out.push_back(wrap(td));
    return out;
  }
  // Rows returned by an op (unbind, split) are moved, not copied: one handle touch per row.
  static std::vector<Derived> wrap_all(std::vector<TensorDict>&& tds) {
    std::vector<Derived> out;
    out.reserve(tds.size());
    for (auto& td : tds) out.push_back(wrap(std::move(td)));
    return out;
  }
  static std::vector<TensorDict> inner_all(const std::vector<Derived>& items) {
    std::vector<TensorDict> out;
    out.reserve(items.size());
    for (const auto& item : items) out.push_back(item.td_);
    return out;
  }
};

}  // namespace tensordict
