// Python's to_dict and from_dict: a TensorDict as a JSON object and back (tensors as nested
// lists, as tolist() and torch.tensor(list) make them).
#include <ATen/ATen.h>

#include "core/tensor_json.h"
#include "core/tensordict_impl.h"
#include "tensordict/lazy_stack.h"

namespace tensordict {
namespace {

// How many leading dims a nested list has (its first elements' depth).
int64_t list_depth(const Json& list) {
  int64_t depth = 0;
  for (const Json* level = &list; level->is_array() && !level->empty(); level = &level->front())
    ++depth;
  return depth;
}

// The entry Python's from_any / TensorDict.__init__ makes of one value of a dict.
Value entry_of(const Json& item, const BatchSize& batch, std::optional<at::Device> device);

TensorDict dict_to_tensordict(const Json& dict, const BatchSize& batch,
                              std::optional<at::Device> device) {
  TensorDict td({}, batch, device);
  for (const auto& [key, item] : dict.items()) td.set(key, entry_of(item, batch, device));
  return td;
}

Value entry_of(const Json& item, const BatchSize& batch, std::optional<at::Device> device) {
  if (item.is_object()) return dict_to_tensordict(item, batch, device);
  if (item.is_array() && item.empty()) return at::empty({0});  // torch.tensor([])
  if (detail::is_numeric_tree(item)) {
    at::Tensor t = detail::numbers_to_tensor(item);
    return device ? t.to(*device) : t;
  }
  if (item.is_array()) return NonTensorStack::from_list(item, list_depth(item));
  return NonTensorData{item};
}

}  // namespace

Json TensorDict::to_dict(bool retain_none) const {
  Json out = Json::object();
  for (const auto& [key, value] : items()) {
    const std::string& name = key.front();
    switch (value.kind()) {
      case Value::Kind::Tensor:
        out[name] = detail::tensor_to_json(value.tensor());
        break;
      case Value::Kind::TensorDict:
        out[name] = value.tensordict().to_dict(retain_none);
        break;
      case Value::Kind::NonTensorData:
        if (retain_none || !value.non_tensor_data().data.is_null())
          out[name] = value.non_tensor_data().data;
        break;
      case Value::Kind::NonTensorStack:
        out[name] = value.non_tensor_stack().tolist();
        break;
    }
  }
  // A tensorclass instance's None fields are absent from its TensorDict: Python lists them last.
  const auto& cls = impl_->class_info;
  if (retain_none && cls) {
    for (const auto& [name, remembered] : cls->fields.items()) {
      if (remembered.is_null() && !out.contains(name)) out[name] = nullptr;
    }
  }
  return out;
}

TensorDict TensorDict::from_dict(const Json& dict, std::optional<BatchSize> batch_size,
                                 std::optional<at::Device> device,
                                 std::optional<int64_t> batch_dims,
                                 std::optional<bool> auto_batch_size) {
  if (!dict.is_object()) {
    throw TypeError(std::string("from_dict: expects a JSON object, got ") + dict.type_name());
  }
  if (batch_size && batch_dims) {
    throw ValueError("from_dict: pass batch_size or batch_dims, not both");
  }
  TensorDict out = dict_to_tensordict(dict, batch_size.value_or(BatchSize{}), device);
  if (!batch_size && auto_batch_size.value_or(batch_dims.has_value())) {
    out.auto_batch_size_(batch_dims);
  }
  return out;
}

TensorDict TensorDict::from_list(const Json& items, std::optional<BatchSize> batch_size,
                                 std::optional<at::Device> device,
                                 std::optional<int64_t> batch_dims,
                                 std::optional<bool> auto_batch_size, std::optional<bool> lazy) {
  if (!items.is_array()) {
    throw TypeError(std::string("from_list: expects a JSON list, got ") + items.type_name());
  }
  const int64_t n = static_cast<int64_t>(items.size());
  std::optional<BatchSize> each;
  if (batch_size) {
    if (batch_size->empty() || batch_size->front() != n) {
      throw ValueError("from_list: batch_size " + shape_str(*batch_size) +
                       " does not start with the length of the list (" + std::to_string(n) + ")");
    }
    each = BatchSize(batch_size->begin() + 1, batch_size->end());
  }
  if (batch_dims) --*batch_dims;  // the stacked dim is not an item's
  std::vector<TensorDict> tds;
  tds.reserve(items.size());
  for (const Json& item : items) {
    if (!item.is_object()) {
      throw TypeError("from_list: item " + std::to_string(tds.size()) +
                      " is not a JSON object but " + item.type_name());
    }
    tds.push_back(from_dict(item, each, device, batch_dims, auto_batch_size));
  }
  if (!lazy) return maybe_dense_stack(tds);
  return *lazy ? lazy_stack(tds) : stack(tds);
}

}  // namespace tensordict
