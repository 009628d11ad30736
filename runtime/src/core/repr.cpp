// Printing in the layout of Python tensordict's repr.
#include <ATen/ATen.h>

#include <algorithm>
#include <ostream>
#include <sstream>

#include "core/lazy_state.h"
#include "core/tensordict_impl.h"
#include "tensordict/dtype.h"
#include "tensordict/json.h"

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
void print_lazy(std::ostream& os, const TensorDict& td, const std::string& indent);

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
      if (value.tensordict().is_lazy_stack()) {
        print_lazy(os, value.tensordict(), indent);
      } else {
        print_td(os, value.tensordict(), indent);
      }
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
  const auto& impl = detail::impl_of(td);
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

// `keys` of `td` sorted, one per line at `indent` (Python's _td_fields). A ragged tensor is shown
// with -1 where the elements differ, as Python's get_item_shape.
void print_fields(std::ostream& os, const TensorDict& td, std::vector<std::string> keys,
                  const std::string& indent) {
  std::sort(keys.begin(), keys.end());
  for (size_t n = 0; n < keys.size(); ++n) {
    os << (n ? ",\n" : "\n") << indent << keys[n] << ": ";
    if (!td.is_lazy_stack()) {
      print_value(os, td.get_value(keys[n]), td.batch_size(), td.device(), indent);
      continue;
    }
    const auto shape = detail::lazy::item_shape(td, keys[n]);
    const Value first = td.tensordicts()[0].get_value(keys[n]);
    if (first.is_tensor() && std::find(shape.begin(), shape.end(), -1) != shape.end()) {
      const at::Tensor& t = first.tensor();
      os << "Tensor(shape=" << torch_size(shape) << ", device=" << t.device() << ", dtype=torch."
         << dtype_name(t.scalar_type()) << ", is_shared=False)";
    } else {
      print_value(os, td.get_value(keys[n]), td.batch_size(), td.device(), indent);
    }
  }
}

void print_lazy(std::ostream& os, const TensorDict& td, const std::string& indent) {
  const std::string inner = indent + "    ";
  std::vector<std::string> shared;
  for (const auto& key : td.keys()) shared.push_back(key.front());
  os << "LazyStackedTensorDict(\n" << inner << "fields={";
  print_fields(os, td, shared, inner + "    ");
  if (shared.empty()) os << "\n" << inner;
  os << "},\n" << inner << "exclusive_fields={\n";
  bool any = false;
  const auto& tds = td.tensordicts();
  for (size_t k = 0; k < tds.size(); ++k) {
    std::vector<std::string> own;
    for (const auto& key : tds[k].keys())
      if (std::find(shared.begin(), shared.end(), key.front()) == shared.end())
        own.push_back(key.front());
    if (own.empty()) continue;
    os << (any ? ",\n" : "") << inner << "    " << k << " ->";
    print_fields(os, tds[k], own, inner + "        ");
    any = true;
  }
  os << (any ? "" : inner) << "},\n"
     << inner << "batch_size=" << torch_size(td.batch_size()) << ",\n"
     << inner << "device=" << device_str(td.device()) << ",\n"
     << inner << "is_shared=False,\n"
     << inner << "stack_dim=" << td.stack_dim() << ")";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const TensorDict& td) {
  if (td.is_lazy_stack()) {
    print_lazy(os, td, "");
    return os;
  }
  print_td(os, td, "");
  return os;
}

std::ostream& operator<<(std::ostream& os, const Value& value) {
  print_value(os, value, value.shape().value_or(BatchSize{}), std::nullopt, "");
  return os;
}

}  // namespace tensordict
