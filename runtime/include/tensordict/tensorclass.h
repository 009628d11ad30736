#pragma once
/// \file
/// `TensorClass<Derived>`: the generic half of every class tcgen generates (docs/schema.md).
///
/// A generated class is a TensorDict (this base derives from it; Python's TypedTensorDict is one
/// too) plus a static ClassSpec describing its fields. Fields are stored in schema order, so once
/// the runtime has seen that the keys are exactly the fields in order, the accessor of field i
/// reads slot i inline (the TensorDict forgets that fact whenever its keys change). A field whose
/// value is None is absent from the TensorDict, as in Python (it lives in `_non_tensordict` there).
///
/// \code
///   example::MyData batch({at::randn({4, 3}), "train"}, {4});  // examples/mydata.yaml
///   example::MyData first = batch[0];                          // ops return the class
///   batch.memmap("data/mydata");                               // Python loads example.MyData
///   auto loaded = example::MyData::load_memmap("data/mydata");
///   at::Tensor obs = loaded.obs();                             // a generated accessor
/// \endcode
///
/// Everything that does not depend on the field types lives here and in runtime/src/tensorclass/
/// (declared in detail/tensorclass_support.h), tested once: casting per the class options (format
/// spec §7), construction, get/set by name, repr, state_dict, equality, the TensorDict ops
/// returning the typed class, and the memmap layout of tensorclasses (spec §3).

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
#include "tensordict/class_registry.h"
#include "tensordict/class_spec.h"
#include "tensordict/detail/tensorclass_support.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/state_dict.h"
#include "tensordict/tensorclass_future.h"
#include "tensordict/tensordict.h"

namespace tensordict {

// ---- the CRTP base
// -------------------------------------------------------------------------------

/// Marks generated classes (tested without instantiating TensorClass<T> for arbitrary T).
struct TensorClassTag {};

/// Base of generated classes (CRTP): a TensorDict with Python's `@tensorclass` API on a typed
/// class. `Derived` provides `static const ClassSpec& class_spec()` and a private constructor from
/// (detail::WrapTag, TensorDict) that wraps a TensorDict (befriending this base). TensorDict's
/// members that give back a TensorDict give back a `Derived`.
template <class Derived>
class TensorClass : public TensorDict, public TensorClassTag {
 public:
  /// The class's ClassSpec: `Derived::class_spec()`.
  static const ClassSpec& spec() { return Derived::class_spec(); }
  /// Field names in schema order.
  static std::vector<std::string> fields() {
    std::vector<std::string> names;
    for (const auto& f : spec().fields) names.emplace_back(f.name);
    return names;
  }

  /// Python's from_tensordict(td, non_tensordict, safe): wraps `td` (aliasing it); the fields in
  /// `non_tensordict` are set too (then on a structure copy of `td`, so that `td` keeps its keys).
  /// `safe`: KeyError unless every key is a field, TypeError / ShapeError naming a field whose
  /// tensor has another dtype or shape than the schema's (safe = false skips the checks).
  static Derived from_tensordict(TensorDict td, const FieldValues& non_tensordict = {},
                                 bool safe = true) {
    if (non_tensordict.empty()) {
      if (safe) detail::tc::check_fields(td, spec());
      detail::tc::mark_class(td, spec());
      return wrap(std::move(td));
    }
    return wrap(detail::tc::from_tensordict(td, spec(), non_tensordict, safe));
  }
  /// A new TensorDict with the fields (tensors cloned, nested classes converted); None fields
  /// are dropped unless `retain_none`, which keeps them as NonTensorData(None). The default is
  /// what Python 0.14 does (its docstring says True, its code drops them).
  TensorDict to_tensordict(bool retain_none = false) const {
    return detail::tc::to_tensordict(td(), spec(), retain_none);
  }
  /// This instance as its TensorDict (Python's `_tensordict`), aliasing it.
  const TensorDict& _tensordict() const { return *this; }

  // ---- by key ----------------------------------------------------------------------------------
  /// The stored entry at `key` (a field name, or a path into nested class fields and TensorDicts:
  /// `{"inner", "x"}`), or nullopt when that field is None. KeyError when `key` does not resolve.
  std::optional<Value> get(const NestedKey& key) const {
    return detail::tc::get_path(td(), spec(), key, nullptr);
  }
  /// Python's get(key, default): `default_value` when `key` does not resolve; a None field still
  /// gives nullopt. `get(key, std::nullopt)` is Python's `get(key)`.
  std::optional<Value> get(const NestedKey& key, const std::optional<Value>& default_value) const {
    return detail::tc::get_path(td(), spec(), key, &default_value);
  }
  /// TensorDict's get<T>: the entry at `key` as a `T` (a tensor, a TensorDict, a value).
  template <class T>
  T get(const NestedKey& key) const {
    return TensorDict::get<T>(key);
  }
  /// Python's set(key, value, inplace): sets a field through the class's casting rules, or an
  /// entry of a nested class field / TensorDict. `inplace` writes into the stored tensor.
  Derived& set(const NestedKey& key, const FieldValue& value, bool inplace = false) {
    detail::tc::set_path(mutable_td(), spec(), key, value, inplace);
    return self();
  }

  // ---- every TensorDict member ------------------------------------------------------------------
  // A class is a TensorDict: TensorDict's members are its members. Those giving back a TensorDict
  // give back the class (an in-place one, this instance), as Python's tensorclass wraps them;
  // runtime/cmake/ClassMembers.cmake writes them from tensordict.h at configure time (the names
  // declared in this class keep its meaning; class_contract.h lists the few left unwrapped).
#include "tensordict/detail/class_members.inc"

  // ---- the class's own ops ---------------------------------------------------------------------
  /// Python's torch.stack / torch.cat of instances: an instance over tensordict::stack /
  /// tensordict::cat of their TensorDicts along batch dim `dim`.
  ///@{
  static Derived stack(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::stack(inner_all(items), dim));
  }
  static Derived cat(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::cat(inner_all(items), dim));
  }
  ///@}
  /// Python's lazy_stack: an instance over a lazy stack of the items' TensorDicts (rows may be
  /// ragged; x[i] is then items[i] itself).
  static Derived lazy_stack(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::lazy_stack(inner_all(items), dim));
  }
  /// Python's maybe_dense_stack: stack when the items' structures match, else lazy_stack.
  static Derived maybe_dense_stack(const std::vector<Derived>& items, int64_t dim = 0) {
    return wrap(tensordict::maybe_dense_stack(inner_all(items), dim));
  }
  /// Python's C.from_dict: an instance of the TensorDict::from_dict of `dict` (same arguments),
  /// checked as from_tensordict checks; null values are None fields.
  static Derived from_dict(const Json& dict, std::optional<BatchSize> batch_size = std::nullopt,
                           std::optional<at::Device> device = std::nullopt,
                           std::optional<int64_t> batch_dims = std::nullopt,
                           std::optional<bool> auto_batch_size = std::nullopt) {
    return from_tensordict(detail::tc::from_dict(spec(), dict, std::move(batch_size), device,
                                                 batch_dims, auto_batch_size));
  }
  /// Python's C.from_list: the instances from_dict makes of the objects of `items`, stacked as
  /// TensorDict::from_list stacks them (same arguments).
  static Derived from_list(const Json& items, std::optional<BatchSize> batch_size = std::nullopt,
                           std::optional<at::Device> device = std::nullopt,
                           std::optional<int64_t> batch_dims = std::nullopt,
                           std::optional<bool> auto_batch_size = std::nullopt,
                           std::optional<bool> lazy = std::nullopt) {
    return from_tensordict(detail::tc::from_list(spec(), items, std::move(batch_size), device,
                                                 batch_dims, auto_batch_size, lazy));
  }
  /// Python's `obj[index] = value`: an instance of this class, of a class with the same fields, or
  /// a TensorDict (ValueError for an instance of a class with other fields), a tensor or a
  /// number, written at `index` as TensorDict::index_put_ writes it. Returns this instance.
  ///@{
  Derived& index_put_(const Index& index, const TensorDict& value) {
    detail::tc::check_assignable(spec(), value);
    TensorDict::index_put_(index, value);
    return self();
  }
  Derived& index_put_(const Index& index, const at::Tensor& value) {
    TensorDict::index_put_(index, value);
    return self();
  }
  Derived& index_put_(const Index& index, const at::Scalar& value) {
    TensorDict::index_put_(index, value);
    return self();
  }
  ///@}
  // ---- math: Python's operators, giving back the class ------------------------------------------
  /// TensorDict's operators (operand.h: `+ - * / %`, `& | ^`, unary `-`, a scalar on the left as in
  /// `1 - c`, `2 / c` and `true ^ c`, `< <= > >=`, and the compound assignments, in place,
  /// returning `a`) on every tensor field, giving back the class. The operand is a scalar, a tensor
  /// broadcast over the batch dims, a TensorDict or an instance. The named forms (`add`, `pow`,
  /// `abs`, ...) are TensorDict's members, above.
  ///@{
  friend Derived operator+(const Derived& a, const Operand& b) { return wrap(as_td(a) + b); }
  friend Derived operator-(const Derived& a, const Operand& b) { return wrap(as_td(a) - b); }
  friend Derived operator*(const Derived& a, const Operand& b) { return wrap(as_td(a) * b); }
  friend Derived operator/(const Derived& a, const Operand& b) { return wrap(as_td(a) / b); }
  friend Derived operator%(const Derived& a, const Operand& b) { return wrap(as_td(a) % b); }
  friend Derived operator&(const Derived& a, const Operand& b) { return wrap(as_td(a) & b); }
  friend Derived operator|(const Derived& a, const Operand& b) { return wrap(as_td(a) | b); }
  friend Derived operator^(const Derived& a, const Operand& b) { return wrap(as_td(a) ^ b); }
  friend Derived operator-(const Derived& a) { return wrap(-as_td(a)); }
  friend Derived operator+(const at::Scalar& a, const Derived& b) { return wrap(a + as_td(b)); }
  friend Derived operator-(const at::Scalar& a, const Derived& b) { return wrap(a - as_td(b)); }
  friend Derived operator*(const at::Scalar& a, const Derived& b) { return wrap(a * as_td(b)); }
  friend Derived operator/(const at::Scalar& a, const Derived& b) { return wrap(a / as_td(b)); }
  friend Derived operator&(const at::Scalar& a, const Derived& b) { return wrap(a & as_td(b)); }
  friend Derived operator|(const at::Scalar& a, const Derived& b) { return wrap(a | as_td(b)); }
  friend Derived operator^(const at::Scalar& a, const Derived& b) { return wrap(a ^ as_td(b)); }
  friend Derived operator<(const Derived& a, const Operand& b) { return wrap(as_td(a) < b); }
  friend Derived operator<=(const Derived& a, const Operand& b) { return wrap(as_td(a) <= b); }
  friend Derived operator>(const Derived& a, const Operand& b) { return wrap(as_td(a) > b); }
  friend Derived operator>=(const Derived& a, const Operand& b) { return wrap(as_td(a) >= b); }
  friend Derived& operator+=(Derived& a, const Operand& b) { return as_td(a) += b, a; }
  friend Derived& operator-=(Derived& a, const Operand& b) { return as_td(a) -= b, a; }
  friend Derived& operator*=(Derived& a, const Operand& b) { return as_td(a) *= b, a; }
  friend Derived& operator/=(Derived& a, const Operand& b) { return as_td(a) /= b, a; }
  ///@}

  // ---- memmap family (spec §3) ------------------------------------------------------------------
  /// Python's memmap / memmap_like: writes a tensorclass directory at `prefix` (meta.json with
  /// `_type` and the None fields, the entries under `_tensordict/`), which Python loads as the
  /// class; returns the memory-mapped, locked instance (memmap_like: files sized, no data copied).
  ///@{
  Derived memmap(const std::string& prefix, const MemmapOptions& options = {}) const {
    return wrap(detail::tc::memmap(td(), spec(), prefix, options, false));
  }
  Derived memmap_like(const std::string& prefix, const MemmapOptions& options = {}) const {
    return wrap(detail::tc::memmap(td(), spec(), prefix, options, true));
  }
  ///@}
  /// Python's memmap(return_early=True): the write runs on a background thread.
  TensorClassFuture<Derived> memmap_async(const std::string& prefix,
                                          const MemmapOptions& options = {}) const {
    return TensorClassFuture<Derived>(detail::tc::memmap_async(td(), spec(), prefix, options));
  }
  /// Python's memmap_: writes as memmap, then this instance (every handle to its TensorDict,
  /// nested levels included) maps the files; returns it.
  Derived& memmap_(const std::string& prefix, const MemmapOptions& options = {}) {
    detail::tc::memmap_in_place(mutable_td(), spec(), prefix, options);
    return self();
  }
  /// Python's save / dumps: memmap(prefix, options).
  ///@{
  Derived save(const std::string& prefix, const MemmapOptions& options = {}) const {
    return memmap(prefix, options);
  }
  Derived dumps(const std::string& prefix, const MemmapOptions& options = {}) const {
    return memmap(prefix, options);
  }
  ///@}
  /// Loads a directory written for this class (by C++ or by its Python counterpart), Python's
  /// load_memmap / load; FormatError unless its `_type` is the class's and its keys are fields.
  ///@{
  static Derived load_memmap(const std::string& prefix,
                             std::optional<at::Device> device = std::nullopt) {
    return wrap(detail::tc::load_memmap(spec(), prefix, device));
  }
  static Derived load(const std::string& prefix, std::optional<at::Device> device = std::nullopt) {
    return load_memmap(prefix, device);
  }
  ///@}
  /// Python's load_memmap_ / load_: refills this instance from `prefix` in place (every handle to
  /// its TensorDict sees the loaded fields); returns it.
  ///@{
  Derived& load_memmap_(const std::string& prefix) {
    detail::tc::load_memmap_in_place(mutable_td(), spec(), prefix);
    return self();
  }
  Derived& load_(const std::string& prefix) { return load_memmap_(prefix); }
  ///@}
  /// Reloads every field from the directory this instance is memory-mapped to (Python's
  /// memmap_refresh_); Error when it is not memory-mapped.
  Derived& memmap_refresh_() {
    detail::tc::memmap_refresh(mutable_td(), spec());
    return self();
  }
  // ---- state dict, comparison, printing --------------------------------------------------------
  /// Python's state_dict(prefix=, keep_vars=, flatten=): `state_dict({"model."})`.
  StateDict state_dict(const StateDictOptions& options = {}) const {
    return detail::tc::state_dict(td(), spec(), options);
  }
  /// Python's load_state_dict(state_dict, strict, assign, from_flatten): loads a StateDict that
  /// state_dict made (flat or nested); tensors are copied into the stored ones (`assign`:
  /// replaced). `strict`: KeyError listing the missing and unexpected keys. Returns this instance.
  Derived& load_state_dict(const StateDict& state, bool strict = true, bool assign = false,
                           std::optional<bool> from_flatten = std::nullopt) {
    detail::tc::load_state_dict(mutable_td(), spec(), state, strict, assign, from_flatten);
    return self();
  }
  /// True when every field (None included) holds equal values (!=: when one differs).
  ///@{
  friend bool operator==(const Derived& a, const Derived& b) {
    return detail::tc::equal(as_td(a), as_td(b));
  }
  friend bool operator!=(const Derived& a, const Derived& b) { return !(a == b); }
  ///@}
  /// Python's repr layout: `Name(field=..., batch_size=..., device=..., is_shared=...)`, one
  /// field per line.
  friend std::ostream& operator<<(std::ostream& os, const Derived& obj) {
    detail::tc::print(os, as_td(obj), spec());
    return os;
  }

 protected:
  /// An instance over `td` (generated constructors pass build()'s result).
  explicit TensorClass(TensorDict td) : TensorDict(std::move(td)) {}

  /// A `Derived` over `td`, without checks (through the generated private constructor).
  static Derived wrap(TensorDict td) { return Derived(detail::WrapTag{}, std::move(td)); }
  /// Points this instance at `td` (hand-written methods' inplace=True, e.g. History::append).
  void rebind(TensorDict td) { mutable_td() = std::move(td); }
  /// The inner TensorDict of a new instance: one value per field in schema order, cast per the
  /// class options (TypeError / ShapeError naming the field), dims named `names`; locked when
  /// the class is frozen.
  static TensorDict build(const std::vector<FieldValue>& values, BatchSize batch_size,
                          std::optional<at::Device> device,
                          std::optional<DimNames> names = std::nullopt) {
    return detail::tc::build(spec(), values, std::move(batch_size), device, std::move(names));
  }

  // Typed field access for the generated accessors. Inline while the keys are known to be the
  // fields in schema order (TensorDict::class_slot), through the runtime otherwise.
  /// The stored entry of field `i`, or nullptr when the field is None.
  const Value* field_entry(size_t i) const {
    if (const Value* v = class_slot(&Derived::class_spec, i)) return v;
    return detail::tc::entry(td(), &Derived::class_spec, i);
  }
  /// The stored entry of field `i`; KeyError naming the field when it is None.
  const Value& required_entry(size_t i) const {
    const Value* v = field_entry(i);
    return v ? *v : detail::tc::require(td(), spec(), i);  // KeyError naming the field
  }
  /// The tensor of field `i`; KeyError when the field is None, TypeError when it holds no tensor.
  const at::Tensor& tensor_field(size_t i) const {
    if (const Value* v = class_slot(&Derived::class_spec, i)) {
      if (const at::Tensor* t = v->tensor_if()) return *t;
    }
    return detail::tc::tensor(td(), &Derived::class_spec, i);
  }
  /// The tensor of an optional field `i`, or nullopt when it is None.
  std::optional<at::Tensor> optional_tensor_field(size_t i) const {
    const Value* v = field_entry(i);
    return v ? std::optional<at::Tensor>(v->tensor()) : std::nullopt;
  }
  /// The value of a str, int, float, bool or list field `i` as a `T`; KeyError when it is None,
  /// TypeError when it does not convert.
  template <class T>
  T value_field(size_t i) const {
    T out{};
    detail::tc::read(required_entry(i), spec(), i, out);
    return out;
  }
  /// value_field for an optional field: nullopt when it is None.
  template <class T>
  std::optional<T> optional_value_field(size_t i) const {
    const Value* v = field_entry(i);
    if (!v) return std::nullopt;
    const Json* json = detail::tc::stored_json(*v);
    if (json && json->is_null()) return std::nullopt;
    T out{};
    detail::tc::read(*v, spec(), i, out);
    return out;
  }
  /// An `any` field: its JSON value, null when the field is None (Python returns None).
  Json any_field(size_t i) const {
    const Value* v = nullptr;
    try {
      v = field_entry(i);
    } catch (const Error&) {  // elements that do not stack: one value each
      if (!is_lazy_stack() || stack_dim() != 0) throw;
      return detail::tc::read_any_per_element(td(), spec(), i);
    }
    Json out;
    if (v) detail::tc::read(*v, spec(), i, out);
    return out;
  }
  /// A class field `i` as a `Nested` over the stored TensorDict (aliasing it); KeyError when None.
  template <class Nested>
  Nested nested_field(size_t i) const {
    return Nested::wrap(required_entry(i).tensordict());
  }
  /// nested_field for an optional field: nullopt when it is None.
  template <class Nested>
  std::optional<Nested> optional_nested_field(size_t i) const {
    const Value* v = field_entry(i);
    return v ? std::optional<Nested>(Nested::wrap(v->tensordict())) : std::nullopt;
  }
  /// Sets field `i` to `value`, cast per the class options (None removes it); LockedError when the
  /// instance is locked. Returns this instance.
  Derived& set_field(size_t i, FieldValue value) {
    detail::tc::set(mutable_td(), spec(), i, std::move(value));
    return self();
  }
  /// set_field for a tensor (the generated tensor setters), without the FieldValue round trip.
  Derived& set_field(size_t i, at::Tensor value) {
    detail::tc::set_tensor(mutable_td(), &Derived::class_spec, i, std::move(value));
    return self();
  }

  /// Converts an Args member or a setter's argument to a FieldValue (nested classes give their
  /// inner TensorDict; an empty optional gives None).
  ///@{
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
  ///@}

 private:
  template <class Other>
  friend class TensorClass;

  Derived& self() { return static_cast<Derived&>(*this); }
  // This instance, or an instance `x`, as its TensorDict: for the runtime's functions and
  // TensorDict's operators. `as_td(x)`, not `x.td()`, where a field accessor could hide `td`.
  const TensorDict& td() const { return *this; }
  TensorDict& mutable_td() { return *this; }
  static const TensorDict& as_td(const Derived& x) { return x; }
  static TensorDict& as_td(Derived& x) { return x; }
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
    for (const auto& item : items) out.push_back(as_td(item));
    return out;
  }
};

}  // namespace tensordict
