#pragma once
/// \file
/// Non-tensor entries of a TensorDict, as in Python tensordict:
///  - NonTensorData: one JSON-like value shared by the whole batch (its batch size is always the
///    batch size of the TensorDict holding it);
///  - NonTensorStack: one value per batch element (shape = the batch dims it covers);
/// and the two policies tensordict applies to them (capture_non_tensor_stack, list_to_stack).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace tensordict {

/// JSON-like value (string, number, bool, null, list, object); objects keep insertion order.
using Json = nlohmann::ordered_json;

/// Python's NonTensorData: one value for every element of the batch.
struct NonTensorData {
  /// The value.
  Json data;
  /// Python's MetaData (a NonTensorData subclass): stacked with equal values it stays one value
  /// whatever capture_non_tensor_stack says, and it is saved as MetaData.
  bool metadata = false;

  /// Equal values (JSON equality; MetaData or not).
  friend bool operator==(const NonTensorData& a, const NonTensorData& b) {
    return a.data == b.data;
  }
};

/// Python's NonTensorStack: one value per element of `shape()`. Copies and rows share the items
/// until one of them is modified (copy-on-write).
class NonTensorStack {
 public:
  /// Read-only view of the items in row-major order (a range of a storage that stacks sharing
  /// it, such as the rows made by td[i] or unbind, do not copy).
  class Items {
   public:
    /// The `n` items from `first`.
    Items(const Json* first, size_t n) : first_(first), n_(n) {}
    /// Iteration, size and unchecked access, as a std::span (C++20) has them.
    ///@{
    const Json* begin() const { return first_; }
    const Json* end() const { return first_ + n_; }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    const Json& operator[](size_t i) const { return first_[i]; }
    ///@}
    /// Bounds-checked access (IndexError).
    const Json& at(size_t i) const;
    /// The first item (unchecked).
    const Json& front() const { return first_[0]; }
    /// A copy of the items.
    std::vector<Json> to_vector() const { return {begin(), end()}; }

   private:
    const Json* first_;
    size_t n_;
  };

  NonTensorStack() = default;
  /// `items` in row-major order over `shape`; throws ShapeError when the counts differ.
  NonTensorStack(std::vector<int64_t> shape, std::vector<Json> items);
  /// From a nested JSON list whose first `ndim` levels are the stack dims.
  static NonTensorStack from_list(const Json& nested, int64_t ndim);
  /// A stack of `shape` holding `value` everywhere.
  static NonTensorStack filled(std::vector<int64_t> shape, const Json& value);
  /// Row `i` of dim 0 (shape without its first dim): shares this stack's storage, O(1).
  NonTensorStack row(int64_t i) const;

  /// The batch dims the stack covers.
  const std::vector<int64_t>& shape() const { return shape_; }
  /// The items in row-major order, read-only.
  Items items() const { return {data_ ? data_->data() + offset_ : nullptr, count_}; }
  /// Mutable items; a stack sharing its storage (copies, rows) first takes a copy of its own.
  std::vector<Json>& items();
  /// Number of items (the product of shape()).
  int64_t numel() const { return static_cast<int64_t>(count_); }
  /// Nested list in row-major order, as Python's NonTensorStack.tolist().
  Json tolist() const;
  /// True when every item is equal (such a stack can collapse into one NonTensorData).
  bool all_equal() const;

  /// Same shape and equal items.
  friend bool operator==(const NonTensorStack& a, const NonTensorStack& b);

 private:
  std::vector<int64_t> shape_;
  // Items [offset_, offset_ + count_) of a storage shared (copy-on-write) by copies and rows.
  std::shared_ptr<std::vector<Json>> data_;
  size_t offset_ = 0;
  size_t count_ = 0;
};

/// Python's capture_non_tensor_stack(): whether stacking NonTensorData of equal values gives one
/// NonTensorData (true) or a NonTensorStack (false: tensordict 0.14's default). Process-wide, as
/// in Python.
bool capture_non_tensor_stack();
/// Python's list_to_stack(): whether a list given to a tensorclass field becomes a tensor (numbers)
/// or a NonTensorStack along the batch dims (true: tensordict 0.14's default) or one NonTensorData
/// holding the list (false). Process-wide, as in Python.
bool list_to_stack();

/// Python's `with set_capture_non_tensor_stack(mode):`: the policy is `mode` while the scope
/// lives, then what it was.
class CaptureNonTensorStack {
 public:
  /// Sets the policy to `mode`.
  explicit CaptureNonTensorStack(bool mode);
  /// Restores the policy it found.
  ~CaptureNonTensorStack();
  CaptureNonTensorStack(const CaptureNonTensorStack&) = delete;
  CaptureNonTensorStack& operator=(const CaptureNonTensorStack&) = delete;

 private:
  bool previous_;
};

/// Python's `with set_list_to_stack(mode):`: the policy is `mode` while the scope lives, then
/// what it was.
class ListToStack {
 public:
  /// Sets the policy to `mode`.
  explicit ListToStack(bool mode);
  /// Restores the policy it found.
  ~ListToStack();
  ListToStack(const ListToStack&) = delete;
  ListToStack& operator=(const ListToStack&) = delete;

 private:
  bool previous_;
};

}  // namespace tensordict
