// Printing in the layout of Python tensordict's repr.
#include <ATen/ATen.h>

#include <algorithm>
#include <ostream>
#include <sstream>

#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict_impl.h"

namespace tensordict {
namespace {

std::string torch_size(at::IntArrayRef shape) { return "torch.Size(" + shape_str(shape) + ")"; }

std::string device_str(const std::optional<at::Device>& device) {
  return device ? device->str() : "None";
}

// Unquoted for plain strings, as Python's f-string of NonTensorData.data.
std::string data_str(const Json& value) {
  return value.is_string() ? value.get<std::string>() : python_repr(value);
}

void print_td(std::ostream& os, const TensorDict& td, const std::string& indent);

void print_value(std::ostream& os, const Value& value, const BatchSize& batch,
                 const std::optional<at::Device>& device, const std::string& indent) {
  switch (value.kind()) {
    case Value::Kind::Tensor: {
      const at::Tensor& t = value.tensor();
      os << "Tensor(shape=" << torch_size(t.sizes()) << ", device=" << t.device()
         << ", dtype=torch." << dtype_name(t.scalar_type())
         << ", is_shared=" << (t.is_cuda() ? "True" : "False") << ")";
      break;
    }
    case Value::Kind::TensorDict:
      print_td(os, value.tensordict(), indent);
      break;
    case Value::Kind::NonTensorData:
      os << "NonTensorData(data=" << data_str(value.non_tensor_data().data)
         << ", batch_size=" << torch_size(batch) << ", device=" << device_str(device) << ")";
      break;
    case Value::Kind::NonTensorStack: {
      const auto& stack = value.non_tensor_stack();
      os << "NonTensorStack(\n"
         << indent << "    " << python_repr(stack.tolist()) << ",\n"
         << indent << "    batch_size=" << torch_size(stack.shape()) << ",\n"
         << indent << "    device=" << device_str(device) << ")";
      break;
    }
  }
}

void print_td(std::ostream& os, const TensorDict& td, const std::string& indent) {
  const auto& impl = td.impl();
  std::vector<size_t> order(impl.keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return impl.keys[a] < impl.keys[b]; });

  const std::string inner = indent + "    ";
  os << "TensorDict(\n" << inner << "fields={";
  for (size_t n = 0; n < order.size(); ++n) {
    os << (n ? ",\n" : "\n") << inner << "    " << impl.keys[order[n]] << ": ";
    print_value(os, impl.values[order[n]], impl.batch_size, impl.device, inner + "    ");
  }
  if (order.empty()) os << "\n" << inner;
  os << "},\n"
     << inner << "batch_size=" << torch_size(impl.batch_size) << ",\n"
     << inner << "device=" << device_str(impl.device) << ",\n"
     << inner << "is_shared=False)";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const TensorDict& td) {
  print_td(os, td, "");
  return os;
}

std::ostream& operator<<(std::ostream& os, const Value& value) {
  print_value(os, value, value.shape().value_or(BatchSize{}), std::nullopt, "");
  return os;
}

}  // namespace tensordict
