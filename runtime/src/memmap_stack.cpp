// Dense stacking of the elements of a lazy stack directory (spec §4), with torch.stack's rules:
// the elements must have the same keys and shapes. Kept local to the reader so loading does not
// depend on the ops library; heterogeneous lazy stacks are refused with a FormatError.
#include <ATen/ATen.h>

#include "memmap_internal.h"
#include "tensordict_impl.h"

namespace tensordict::memmap::detail {
namespace {

Json stacked_list(const std::vector<Value>& values) {
  Json list = Json::array();
  for (const auto& v : values) {
    list.push_back(v.is_non_tensor_data() ? v.non_tensor_data().data : v.non_tensor_stack().tolist());
  }
  return list;
}

Value stack_values(const std::string& key, const std::vector<Value>& values, int64_t dim);

TensorDict stack_tds(const std::vector<TensorDict>& tds, int64_t dim) {
  const auto& first = tds.front().impl();
  BatchSize batch = first.batch_size;
  const auto ndim = static_cast<int64_t>(batch.size());
  if (dim < 0) dim += ndim + 1;
  if (dim < 0 || dim > ndim) throw FormatError("stack_dim out of range for batch " + shape_str(batch));
  for (const auto& td : tds) {
    if (td.batch_size() != first.batch_size || td.impl().keys != first.keys) {
      throw FormatError("elements differ in batch size or keys (" + shape_str(td.batch_size()) +
                        " vs " + shape_str(first.batch_size) + ")");
    }
  }
  batch.insert(batch.begin() + dim, static_cast<int64_t>(tds.size()));
  TensorDict out = tensordict::detail::make_tensordict(batch, first.device);
  for (size_t slot = 0; slot < first.keys.size(); ++slot) {
    std::vector<Value> column;
    for (const auto& td : tds) column.push_back(td.impl().values[slot]);
    out.impl().append(first.keys[slot], stack_values(first.keys[slot], column, dim));
  }
  return out;
}

Value stack_values(const std::string& key, const std::vector<Value>& values, int64_t dim) {
  const Value::Kind kind = values.front().kind();
  for (const auto& v : values) {
    if (v.kind() != kind) throw FormatError("key '" + key + "' has different kinds across elements");
  }
  if (kind == Value::Kind::Tensor) {
    std::vector<at::Tensor> tensors;
    for (const auto& v : values) tensors.push_back(v.tensor());
    for (const auto& t : tensors) {
      if (t.sizes() != tensors.front().sizes() || t.scalar_type() != tensors.front().scalar_type()) {
        throw FormatError("key '" + key + "' has different shapes or dtypes across elements");
      }
    }
    return at::stack(tensors, dim);
  }
  if (kind == Value::Kind::TensorDict) {
    std::vector<TensorDict> tds;
    for (const auto& v : values) tds.push_back(v.tensordict());
    return stack_tds(tds, dim);
  }
  if (dim != 0) throw FormatError("key '" + key + "': non-tensor data stacked along dim != 0");
  if (kind == Value::Kind::NonTensorData) {
    bool equal = true;
    for (const auto& v : values) equal = equal && v.non_tensor_data() == values.front().non_tensor_data();
    if (equal) return values.front();
    return NonTensorStack::from_list(stacked_list(values), 1);
  }
  const auto inner = static_cast<int64_t>(values.front().non_tensor_stack().shape().size());
  return NonTensorStack::from_list(stacked_list(values), inner + 1);
}

}  // namespace

TensorDict stack_elements(const std::vector<TensorDict>& tds, int64_t dim) {
  return stack_tds(tds, dim);
}

}  // namespace tensordict::memmap::detail
