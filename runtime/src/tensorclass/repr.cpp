// Printing of tensorclasses in Python's repr layout: tensor-dict fields sorted by name, then the
// None fields, then batch_size, device and is_shared (those not shadowed by a field), each
// indented by four spaces.
#include <ATen/ATen.h>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <string_view>

#include "lazy/internal.h"
#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict/tensorclass.h"

namespace tensordict::detail::tc {
namespace {

std::string torch_size(at::IntArrayRef shape) { return "torch.Size(" + shape_str(shape) + ")"; }

std::string device_str(const std::optional<at::Device>& device) {
  return device ? device->str() : "None";
}

// Every line after the first shifted right, so a multi-line repr nests under its key.
std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

std::string entry_repr(const Value& value, const FieldSpec& field, const TensorDict& owner) {
  std::ostringstream os;
  if (value.is_tensordict() && field.kind == FieldKind::Class) {
    print(os, value.tensordict(), field.nested());
  } else if (value.is_non_tensor_data()) {
    const Json& data = value.non_tensor_data().data;
    os << "NonTensorData(data=" << (data.is_string() ? data.get<std::string>() : python_repr(data))
       << ", batch_size=" << torch_size(owner.batch_size())
       << ", device=" << device_str(owner.device()) << ")";
  } else {
    os << value;
  }
  return os.str();
}

// A tensor field of a ragged lazy stack cannot be stacked: shown with -1 where the elements
// differ, as Python's repr does.
std::string ragged_tensor_repr(const TensorDict& td, const char* name) {
  const auto shape = detail::lazy::item_shape(td, name);
  const at::Tensor& first = td.tensordicts()[0].get(name);
  return "Tensor(shape=" + torch_size(shape) + ", device=" + first.device().str() +
         ", dtype=torch." + dtype_name(first.scalar_type()) + ", is_shared=False)";
}

}  // namespace

void print(std::ostream& os, const TensorDict& td, const ClassSpec& spec) {
  const std::string indent = "    ";
  std::vector<std::pair<std::string, std::string>> present;
  std::vector<std::string> none;
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const Value* v = nullptr;
    try {
      v = find(td, spec, i);
    } catch (const ShapeError&) {
      if (!td.is_lazy_stack()) throw;
      present.emplace_back(spec.fields[i].name, ragged_tensor_repr(td, spec.fields[i].name));
      continue;
    }
    if (v) {
      present.emplace_back(spec.fields[i].name, entry_repr(*v, spec.fields[i], td));
    } else {
      none.emplace_back(spec.fields[i].name);
    }
  }
  std::sort(present.begin(), present.end());
  os << spec.name << "(\n";
  for (const auto& [name, repr] : present) {
    os << indent << name << "=" << indented(repr, indent) << ",\n";
  }
  for (const auto& name : none) os << indent << name << "=None,\n";
  // A field named like a line of these (option shadow) takes its place: batch_size then prints as
  // shape (unless a field is named shape too), and device not at all, as Python prints them.
  const auto is_field = [&](const char* name) {
    return std::any_of(spec.fields.begin(), spec.fields.end(),
                       [&](const FieldSpec& f) { return std::string_view(f.name) == name; });
  };
  if (!is_field("batch_size")) {
    os << indent << "batch_size=" << torch_size(td.batch_size()) << ",\n";
  } else if (!is_field("shape")) {
    os << indent << "shape=" << torch_size(td.batch_size()) << ",\n";
  }
  if (!is_field("device")) os << indent << "device=" << device_str(td.device()) << ",\n";
  os << indent << "is_shared=False)";
}

}  // namespace tensordict::detail::tc
