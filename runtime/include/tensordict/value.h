#pragma once
/// \file
/// Value: one entry of a TensorDict (a tensor, a nested TensorDict, NonTensorData or a
/// NonTensorStack), and the members of TensorDict that read a Value inline (get<T>, the slots of
/// generated accessors).
// Complete only after TensorDict, which it holds by value: tensordict.h includes this header after
// its class, and this header includes tensordict.h first, so that either may be included alone.
#include "tensordict/tensordict.h"

#include <atomic>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tensordict {

/// One entry of a TensorDict: a tensor, a nested TensorDict, NonTensorData or a NonTensorStack.
/// Strings and JSON become NonTensorData; C++ numbers become 0-dim tensors (int64, float32, bool,
/// as Python's torch.as_tensor).
class Value {
 public:
  /// Which kind of entry a Value holds, in the order of the alternatives (kind_name() spells it).
  enum class Kind { Tensor, TensorDict, NonTensorData, NonTensorStack };

  /// Implicit from each kind of entry: a tensor, a TensorDict, NonTensorData, a NonTensorStack;
  /// a string becomes NonTensorData; bool, int / int64_t and float / double become 0-dim bool,
  /// int64 and float32 tensors.
  ///@{
  Value(at::Tensor tensor) : v_(std::move(tensor)) {}                    // NOLINT
  Value(TensorDict td) : v_(std::move(td)) {}                            // NOLINT
  Value(NonTensorData data) : v_(std::move(data)) {}                     // NOLINT
  Value(NonTensorStack stack) : v_(std::move(stack)) {}                  // NOLINT
  Value(const char* text) : v_(NonTensorData{Json(text)}) {}             // NOLINT
  Value(std::string text) : v_(NonTensorData{Json(std::move(text))}) {}  // NOLINT
  Value(bool b);                                                         // NOLINT
  Value(int v) : Value(static_cast<int64_t>(v)) {}                       // NOLINT
  Value(int64_t v);                                                      // NOLINT
  Value(double v);                                                       // NOLINT
  Value(float v) : Value(static_cast<double>(v)) {}                      // NOLINT
  ///@}

  /// The kind of entry held.
  Kind kind() const { return static_cast<Kind>(v_.index()); }
  /// Whether the entry is a tensor, a TensorDict, NonTensorData, a NonTensorStack, or either
  /// non-tensor kind (is_non_tensor).
  ///@{
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_tensordict() const { return kind() == Kind::TensorDict; }
  bool is_non_tensor_data() const { return kind() == Kind::NonTensorData; }
  bool is_non_tensor_stack() const { return kind() == Kind::NonTensorStack; }
  bool is_non_tensor() const { return is_non_tensor_data() || is_non_tensor_stack(); }
  ///@}

  /// Typed access; TypeError (naming the actual kind) when the entry is of another kind.
  ///@{
  const at::Tensor& tensor() const;
  const TensorDict& tensordict() const;
  const NonTensorData& non_tensor_data() const;
  const NonTensorStack& non_tensor_stack() const;
  at::Tensor& tensor();
  NonTensorStack& non_tensor_stack();
  ///@}
  /// The tensor, or nullptr when the entry is of another kind (no exception path).
  ///@{
  const at::Tensor* tensor_if() const noexcept { return std::get_if<at::Tensor>(&v_); }
  at::Tensor* tensor_if() noexcept { return std::get_if<at::Tensor>(&v_); }
  ///@}
  /// The nested TensorDict, or nullptr when the entry is of another kind (inline: the nested
  /// lookups of `get` read it once per level).
  const TensorDict* tensordict_if() const noexcept { return std::get_if<TensorDict>(&v_); }

  /// "Tensor", "TensorDict", "NonTensorData" or "NonTensorStack".
  const char* kind_name() const;
  /// Leading shape of the entry: tensor sizes, nested batch size, stack shape; NonTensorData has
  /// none (it takes its parent's batch size).
  std::optional<std::vector<int64_t>> shape() const;

  /// Visits the alternative; useful for ops that treat each kind differently.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), v_);
  }

 private:
  std::variant<at::Tensor, TensorDict, NonTensorData, NonTensorStack> v_;
};

namespace detail {
/// The part of a TensorDict's state that generated accessors read inline: the entries' values in
/// slot order, and the class whose fields the keys are known to be, in order. TensorDictImpl
/// (private to the runtime) derives from it, holds the keys, and clears `layout` whenever they
/// change; a value's kind is checked on each read, so replacing values needs no bookkeeping.
struct Slots {
  std::vector<Value> values;
  std::atomic<ClassToken> layout{nullptr};
};

[[noreturn]] void throw_get_conversion(const NestedKey& key, const Value& value,
                                       const char* wanted);
/// Whether `T` is a generated class (it has a static class_spec()).
template <class T, class = void>
struct is_generated_class : std::false_type {};
template <class T>
struct is_generated_class<T, std::void_t<decltype(&T::class_spec)>> : std::true_type {};
/// TypeError naming `key` when `td` is stored as a tensorclass other than `python_type`.
void check_stored_class(const TensorDict& td, const NestedKey& key, const char* python_type);
}  // namespace detail

template <class T>
T TensorDict::get(const NestedKey& key) const {
  if constexpr (std::is_same_v<T, at::Tensor>) {
    return get(key);
  } else if constexpr (std::is_same_v<T, TensorDict>) {
    return get_tensordict(key);
  } else if constexpr (std::is_same_v<T, Value>) {
    return get_value(key);
  } else if constexpr (detail::is_generated_class<T>::value) {  // the class it was stored as
    TensorDict stored = get_tensordict(key);
    detail::check_stored_class(stored, key, T::class_spec().python_type);
    return T::from_tensordict(std::move(stored));
  } else {
    const Value value = get_value(key);
    if constexpr (std::is_arithmetic_v<T>) {
      if (const at::Tensor* t = value.tensor_if()) {
        if (t->numel() != 1) detail::throw_get_conversion(key, value, "a number");
        return t->item<T>();
      }
    }
    if (!value.is_non_tensor()) detail::throw_get_conversion(key, value, "non-tensor data");
    const Json json = get_non_tensor(key);
    if constexpr (std::is_same_v<T, Json>) {
      return json;
    } else {
      try {
        return json.get<T>();
      } catch (const nlohmann::json::exception&) {
        detail::throw_get_conversion(key, value, "the requested type");
      }
    }
  }
}

inline const Value* TensorDict::class_slot(detail::ClassToken cls, size_t slot) const noexcept {
  return slots_->layout.load(std::memory_order_relaxed) == cls ? &slots_->values[slot] : nullptr;
}

}  // namespace tensordict
