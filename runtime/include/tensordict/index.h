#pragma once
/// \file
/// Indices over batch dims, spelled as in Python: td[0], td[1:3] (Slice(1, 3)), td[..., None]
/// (Ellipsis, None), td[mask], td[long_tensor]. The runtime's own type rather than ATen's
/// TensorIndex: <ATen/TensorIndexing.h> costs every includer ~160k preprocessed lines, and building
/// TensorIndex lists trips a GCC 12 -Wmaybe-uninitialized false positive in users' code.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

// ATen's own spellings are accepted too (torch::indexing::Slice, Ellipsis, None, TensorIndex) where
// the caller includes <ATen/TensorIndexing.h>; this header only names them.
namespace at::indexing {
struct Slice;
struct EllipsisIndexType;
struct TensorIndex;
}  // namespace at::indexing

namespace tensordict {

/// Python's start:stop:step; an unset bound means the start / the end of the dim.
class Slice {
 public:
  /// `Slice()` is `:`, `Slice(1, 3)` is `1:3`, `Slice(std::nullopt, std::nullopt, 2)` is `::2`.
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        int64_t step = 1)
      : start_(start), stop_(stop), step_(step) {}
  /// The bounds and the step as given (negative bounds count from the end, as in Python).
  ///@{
  const std::optional<int64_t>& start() const { return start_; }
  const std::optional<int64_t>& stop() const { return stop_; }
  int64_t step() const { return step_; }
  ///@}
  /// `:` (every element).
  bool is_full() const { return !start_.value_or(0) && !stop_ && step_ == 1; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

/// Python's `...`: as many full slices as the dims the other entries leave.
struct EllipsisIndex {};
/// `td.index({Ellipsis, 0})` is Python's `td[..., 0]`.
inline constexpr EllipsisIndex Ellipsis{};
/// Python's `None` in an index: a new dim of size 1.
struct NoneIndex {};
/// `td.index({None})` is Python's `td[None]`.
inline constexpr NoneIndex None{};

/// One entry of an index.
class IndexItem {
 public:
  /// Implicit from each kind of entry: an integer (removes its dim), a Slice, Ellipsis, None or
  /// std::nullopt (a new dim of size 1), a bool (a new dim of size 1 for true, 0 for false, as in
  /// Python), a tensor (a bool mask or long indices).
  ///@{
  IndexItem(int64_t i) : v_(i) {}                    // NOLINT
  IndexItem(int i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  IndexItem(Slice s) : v_(s) {}                      // NOLINT
  IndexItem(EllipsisIndex e) : v_(e) {}              // NOLINT
  IndexItem(NoneIndex n) : v_(n) {}                  // NOLINT
  IndexItem(std::nullopt_t) : v_(NoneIndex{}) {}     // NOLINT
  IndexItem(bool b) : v_(b) {}                       // NOLINT
  IndexItem(at::Tensor t) : v_(std::move(t)) {}      // NOLINT
  ///@}
  /// ATen's index entries: `td.index({torch::indexing::Slice(0, 2), torch::indexing::None})`.
  ///@{
  IndexItem(const at::indexing::Slice& s);              // NOLINT
  IndexItem(const at::indexing::EllipsisIndexType& e);  // NOLINT
  IndexItem(const at::indexing::TensorIndex& ix);       // NOLINT
  ///@}
  /// torch::indexing::None (c10::nullopt, a type of its own in libtorch 1.x).
  template <class T,
            std::enable_if_t<
                std::is_same_v<T, c10::nullopt_t> && !std::is_same_v<T, std::nullopt_t>, int> = 0>
  IndexItem(T) : v_(NoneIndex{}) {}  // NOLINT

  /// Which kind of entry this is.
  ///@{
  bool is_integer() const { return std::holds_alternative<int64_t>(v_); }
  bool is_slice() const { return std::holds_alternative<Slice>(v_); }
  bool is_ellipsis() const { return std::holds_alternative<EllipsisIndex>(v_); }
  bool is_none() const { return std::holds_alternative<NoneIndex>(v_); }
  bool is_boolean() const { return std::holds_alternative<bool>(v_); }
  bool is_tensor() const { return std::holds_alternative<at::Tensor>(v_); }
  ///@}
  /// The entry's value; std::bad_variant_access when it is of another kind.
  ///@{
  int64_t integer() const { return std::get<int64_t>(v_); }
  const Slice& slice() const { return std::get<Slice>(v_); }
  bool boolean() const { return std::get<bool>(v_); }
  const at::Tensor& tensor() const { return std::get<at::Tensor>(v_); }
  ///@}

 private:
  std::variant<int64_t, Slice, EllipsisIndex, NoneIndex, bool, at::Tensor> v_;
};

/// An index over the batch dims: `{0, Slice(1, 3)}` is Python's `[0, 1:3]`.
using Index = std::vector<IndexItem>;

}  // namespace tensordict
