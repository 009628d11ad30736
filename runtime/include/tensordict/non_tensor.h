#pragma once
// Non-tensor entries of a TensorDict, as in Python tensordict:
//  - NonTensorData: one JSON-like value shared by the whole batch (its batch size is always the
//    batch size of the TensorDict holding it);
//  - NonTensorStack: one value per batch element (shape = the batch dims it covers).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace tensordict {

/// JSON-like value (string, number, bool, null, list, object); objects keep insertion order.
using Json = nlohmann::ordered_json;

struct NonTensorData {
  Json data;

  friend bool operator==(const NonTensorData& a, const NonTensorData& b) {
    return a.data == b.data;
  }
};

class NonTensorStack {
 public:
  NonTensorStack() = default;
  /// `items` in row-major order over `shape`; throws ShapeError when the counts differ.
  NonTensorStack(std::vector<int64_t> shape, std::vector<Json> items);
  /// From a nested JSON list whose first `ndim` levels are the stack dims.
  static NonTensorStack from_list(const Json& nested, int64_t ndim);
  /// A stack of `shape` holding `value` everywhere.
  static NonTensorStack filled(std::vector<int64_t> shape, const Json& value);

  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<Json>& items() const { return items_; }
  std::vector<Json>& items() { return items_; }
  int64_t numel() const { return static_cast<int64_t>(items_.size()); }
  /// Nested list in row-major order, as Python's NonTensorStack.tolist().
  Json tolist() const;
  /// True when every item is equal (such a stack can collapse into one NonTensorData).
  bool all_equal() const;

  friend bool operator==(const NonTensorStack& a, const NonTensorStack& b) {
    return a.shape_ == b.shape_ && a.items_ == b.items_;
  }

 private:
  std::vector<int64_t> shape_;
  std::vector<Json> items_;
};

}  // namespace tensordict
