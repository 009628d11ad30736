// Tensors as JSON and back (core/tensor_json.h).
#include "core/tensor_json.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "tensordict/errors.h"

namespace tensordict::detail {

namespace {

// The nested lists of `sizes[dim:]` over the row-major values at `data` (advanced past them).
template <class T>
Json nested_lists(const T*& data, at::IntArrayRef sizes, size_t dim) {
  if (dim == sizes.size()) return Json(*data++);
  Json list = Json::array();
  for (int64_t i = 0; i < sizes[dim]; ++i) list.push_back(nested_lists(data, sizes, dim + 1));
  return list;
}

template <class T>
Json tensor_as(const at::Tensor& t, at::ScalarType as) {
  const at::Tensor flat = t.detach().to(at::kCPU, as).contiguous();
  const T* data = flat.data_ptr<T>();
  return nested_lists(data, flat.sizes(), 0);
}

}  // namespace

Json tensor_to_json(const at::Tensor& t) {
  // One conversion of the whole tensor, not one item() per element.
  if (t.scalar_type() == at::kBool) return tensor_as<bool>(t, at::kBool);
  if (at::isFloatingType(t.scalar_type())) return tensor_as<double>(t, at::kDouble);
  if (at::isComplexType(t.scalar_type())) {
    throw TypeError("cannot write a complex tensor as JSON numbers (dtype " +
                    std::string(c10::toString(t.scalar_type())) + ")");
  }
  return tensor_as<int64_t>(t, at::kLong);
}

bool is_numeric_tree(const Json& json) {
  if (json.is_number() || json.is_boolean()) return true;
  if (!json.is_array() || json.empty()) return false;
  return std::all_of(json.begin(), json.end(), is_numeric_tree);
}

namespace {

void flatten_numbers(const Json& json, std::vector<double>& out, bool& any_float, bool& all_bool) {
  if (json.is_array()) {
    for (const auto& item : json) flatten_numbers(item, out, any_float, all_bool);
    return;
  }
  any_float = any_float || json.is_number_float();
  all_bool = all_bool && json.is_boolean();
  out.push_back(json.is_boolean() ? (json.get<bool>() ? 1.0 : 0.0) : json.get<double>());
}

}  // namespace

at::Tensor numbers_to_tensor(const Json& json) {
  std::vector<int64_t> shape;
  for (const Json* level = &json; level->is_array(); level = &level->front()) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  std::vector<double> flat;
  bool any_float = false, all_bool = true;
  flatten_numbers(json, flat, any_float, all_bool);
  auto dtype = all_bool ? at::kBool : any_float ? at::kFloat : at::kLong;
  at::Tensor t = at::tensor(flat, at::kDouble);
  if (t.numel() != c10::multiply_integers(shape)) {
    throw ShapeError("cannot make a tensor of a ragged list " + json.dump());
  }
  return t.reshape(shape).to(dtype);
}

}  // namespace tensordict::detail
