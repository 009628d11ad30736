#include "tensordict/non_tensor.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

#include "tensordict/errors.h"

namespace tensordict {
namespace {

// tensordict 0.14's defaults.
std::atomic<bool> g_capture_non_tensor_stack{false};
std::atomic<bool> g_list_to_stack{true};

int64_t product(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// Depth-first walk of a nested list, flattening its first `ndim` levels.
void flatten_into(const Json& node, int64_t depth, int64_t ndim, std::vector<int64_t>& shape,
                  std::vector<Json>& out) {
  if (depth == ndim) {
    out.push_back(node);
    return;
  }
  if (!node.is_array()) {
    throw ShapeError("NonTensorStack: expected a list at depth " + std::to_string(depth) +
                     " of a " + std::to_string(ndim) + "-dim stack, got " + node.dump());
  }
  const auto n = static_cast<int64_t>(node.size());
  if (static_cast<int64_t>(shape.size()) == depth) {
    shape.push_back(n);
  } else if (shape[depth] != n) {
    throw ShapeError("NonTensorStack: ragged nested list, dim " + std::to_string(depth) +
                     " has sizes " + std::to_string(shape[depth]) + " and " + std::to_string(n));
  }
  for (const auto& child : node) flatten_into(child, depth + 1, ndim, shape, out);
}

Json nest(const std::vector<int64_t>& shape, const NonTensorStack::Items& items, size_t dim,
          size_t& pos) {
  if (dim == shape.size()) return items[pos++];
  Json list = Json::array();
  for (int64_t i = 0; i < shape[dim]; ++i) list.push_back(nest(shape, items, dim + 1, pos));
  return list;
}

}  // namespace

NonTensorStack::NonTensorStack(std::vector<int64_t> shape, std::vector<Json> items)
    : shape_(std::move(shape)), count_(items.size()) {
  data_ = std::make_shared<std::vector<Json>>(std::move(items));
  if (product(shape_) != numel()) {
    throw ShapeError("NonTensorStack: " + std::to_string(count_) +
                     " items do not fill a stack of " + std::to_string(product(shape_)) +
                     " elements");
  }
}

NonTensorStack NonTensorStack::from_list(const Json& nested, int64_t ndim) {
  std::vector<int64_t> shape;
  std::vector<Json> items;
  flatten_into(nested, 0, ndim, shape, items);
  // An empty list leaves inner dims unknown; they are empty too.
  shape.resize(static_cast<size_t>(ndim), 0);
  return NonTensorStack(std::move(shape), std::move(items));
}

NonTensorStack NonTensorStack::filled(std::vector<int64_t> shape, const Json& value) {
  std::vector<Json> items(static_cast<size_t>(product(shape)), value);
  return NonTensorStack(std::move(shape), std::move(items));
}

const Json& NonTensorStack::Items::at(size_t i) const {
  if (i >= n_) {
    throw IndexError("NonTensorStack: item " + std::to_string(i) + " of " + std::to_string(n_));
  }
  return first_[i];
}

NonTensorStack NonTensorStack::row(int64_t i) const {
  if (shape_.empty() || i < 0 || i >= shape_[0]) {
    throw ShapeError("NonTensorStack: row " + std::to_string(i) + " is out of range for shape " +
                     std::to_string(shape_.empty() ? 0 : shape_[0]) + " rows");
  }
  NonTensorStack out;
  out.shape_.assign(shape_.begin() + 1, shape_.end());
  out.count_ = static_cast<size_t>(product(out.shape_));
  out.data_ = data_;
  out.offset_ = offset_ + static_cast<size_t>(i) * out.count_;
  return out;
}

std::vector<Json>& NonTensorStack::items() {
  const bool whole = data_ && offset_ == 0 && count_ == data_->size();
  if (!whole || data_.use_count() > 1) {
    const Items view = static_cast<const NonTensorStack&>(*this).items();
    data_ = std::make_shared<std::vector<Json>>(view.begin(), view.end());
    offset_ = 0;
  }
  return *data_;
}

bool operator==(const NonTensorStack& a, const NonTensorStack& b) {
  const auto ia = a.items(), ib = b.items();
  return a.shape_ == b.shape_ && std::equal(ia.begin(), ia.end(), ib.begin(), ib.end());
}

Json NonTensorStack::tolist() const {
  size_t pos = 0;
  return nest(shape_, items(), 0, pos);
}

bool NonTensorStack::all_equal() const {
  const Items all = items();
  return std::adjacent_find(all.begin(), all.end(), std::not_equal_to<>()) == all.end();
}

bool capture_non_tensor_stack() { return g_capture_non_tensor_stack.load(); }
bool list_to_stack() { return g_list_to_stack.load(); }

CaptureNonTensorStack::CaptureNonTensorStack(bool mode)
    : previous_(g_capture_non_tensor_stack.exchange(mode)) {}
CaptureNonTensorStack::~CaptureNonTensorStack() { g_capture_non_tensor_stack.store(previous_); }

ListToStack::ListToStack(bool mode) : previous_(g_list_to_stack.exchange(mode)) {}
ListToStack::~ListToStack() { g_list_to_stack.store(previous_); }

}  // namespace tensordict
