#pragma once
/// \file
/// Operand, the right-hand side of TensorDict math, and the operators over TensorDicts.
// Complete only after TensorDict, which it holds by value: tensordict.h includes this header after
// its class, and this header includes tensordict.h first, so that either may be included alone.
#include "tensordict/tensordict.h"

#include <type_traits>
#include <variant>

namespace tensordict {

/// The right-hand side of TensorDict math: a scalar, a tensor (broadcast over the batch dims) or
/// a TensorDict with the same keys.
class Operand {
 public:
  /// Implicit from a number (any arithmetic type), an at::Scalar, a tensor or a TensorDict.
  ///@{
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Operand(T scalar) : v_(at::Scalar(scalar)) {}      // NOLINT
  Operand(const at::Scalar& scalar) : v_(scalar) {}  // NOLINT
  Operand(const at::Tensor& tensor) : v_(tensor) {}  // NOLINT
  Operand(const TensorDict& td) : v_(td) {}          // NOLINT
  ///@}
  /// The operand as a scalar, a tensor or a TensorDict, or nullptr when it is another kind.
  ///@{
  const at::Scalar* scalar() const { return std::get_if<at::Scalar>(&v_); }
  const at::Tensor* tensor() const { return std::get_if<at::Tensor>(&v_); }
  const TensorDict* tensordict() const { return std::get_if<TensorDict>(&v_); }
  ///@}

 private:
  std::variant<at::Scalar, at::Tensor, TensorDict> v_;
};

/// Python's arithmetic operators on TensorDicts: `td + o`, `td - o`, `td * o`, `td / o`,
/// `td % o` (add, sub, mul, div, mod), `td & o`, `td | o`, `td ^ o` (bitwise_and, _or, _xor),
/// `-td` (neg), and a scalar on the left (`1 - td`, `2 / td`, `true ^ td`).
///@{
inline TensorDict operator+(const TensorDict& a, const Operand& b) { return a.add(b); }
inline TensorDict operator-(const TensorDict& a, const Operand& b) { return a.sub(b); }
inline TensorDict operator*(const TensorDict& a, const Operand& b) { return a.mul(b); }
inline TensorDict operator/(const TensorDict& a, const Operand& b) { return a.div(b); }
inline TensorDict operator%(const TensorDict& a, const Operand& b) { return a.mod(b); }
inline TensorDict operator&(const TensorDict& a, const Operand& b) { return a.bitwise_and(b); }
inline TensorDict operator|(const TensorDict& a, const Operand& b) { return a.bitwise_or(b); }
inline TensorDict operator^(const TensorDict& a, const Operand& b) { return a.bitwise_xor(b); }
inline TensorDict operator-(const TensorDict& a) { return a.neg(); }
inline TensorDict operator+(const at::Scalar& a, const TensorDict& b) { return b.add(a); }
inline TensorDict operator-(const at::Scalar& a, const TensorDict& b) { return b.neg().add(a); }
inline TensorDict operator*(const at::Scalar& a, const TensorDict& b) { return b.mul(a); }
inline TensorDict operator/(const at::Scalar& a, const TensorDict& b) {
  return b.reciprocal().mul(a);
}
inline TensorDict operator&(const at::Scalar& a, const TensorDict& b) { return b.bitwise_and(a); }
inline TensorDict operator|(const at::Scalar& a, const TensorDict& b) { return b.bitwise_or(a); }
inline TensorDict operator^(const at::Scalar& a, const TensorDict& b) { return b.bitwise_xor(a); }
///@}
/// Python's comparison operators: lt, le, gt, ge (TensorDicts of bool tensors).
///@{
inline TensorDict operator<(const TensorDict& a, const Operand& b) { return a.lt(b); }
inline TensorDict operator<=(const TensorDict& a, const Operand& b) { return a.le(b); }
inline TensorDict operator>(const TensorDict& a, const Operand& b) { return a.gt(b); }
inline TensorDict operator>=(const TensorDict& a, const Operand& b) { return a.ge(b); }
///@}
/// Python's `td += o`, `-=`, `*=`, `/=`: add_, sub_, mul_, div_ (in place); return `a`.
///@{
inline TensorDict& operator+=(TensorDict& a, const Operand& b) { return a.add_(b); }
inline TensorDict& operator-=(TensorDict& a, const Operand& b) { return a.sub_(b); }
inline TensorDict& operator*=(TensorDict& a, const Operand& b) { return a.mul_(b); }
inline TensorDict& operator/=(TensorDict& a, const Operand& b) { return a.div_(b); }
///@}

}  // namespace tensordict
