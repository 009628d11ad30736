// tdtool ls: the tree of a memmap directory, read from its meta.json files only (device "meta":
// no data file is opened).
#include <ATen/ATen.h>

#include <map>
#include <ostream>

#include "commands.h"
#include "tensordict/dtype.h"
#include "tensordict/errors.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"

namespace tdtool {
namespace {

using tensordict::Json;
using tensordict::TensorDict;
using tensordict::Value;

struct Totals {
  int64_t tensors = 0;
  int64_t bytes = 0;
};

std::string short_json(const Json& value) {
  tensordict::JsonStyle style;
  style.ensure_ascii = false;
  std::string text = tensordict::dumps_python(value, style);
  constexpr size_t kMax = 80;
  return text.size() > kMax ? text.substr(0, kMax - 3) + "..." : text;
}

std::string class_label(const tensordict::memmap::ClassInfo& info) {
  return tensordict::memmap::class_short_name(info.type) + " (tensorclass " + info.type + ")";
}

std::string kind_label(const TensorDict& td) {
  if (!td.is_lazy_stack()) return "TensorDict";
  return "LazyStackedTensorDict stack_dim=" + std::to_string(td.stack_dim());
}

// "  batch_size=[2, 3]", with "  names=['t', None]" when a dim has a name.
std::string batch_label(const TensorDict& td) {
  const std::string out = "  batch_size=" + tensordict::shape_str(td.batch_size());
  const Json names = names_json(td);
  return names.is_null() ? out : out + "  names=" + tensordict::python_repr(names);
}

class TreePrinter {
 public:
  TreePrinter(std::ostream& out, const tensordict::memmap::Loaded& loaded) : out_(out) {
    for (const auto& [key, info] : loaded.nested_classes) classes_.emplace(key.join("\x1f"), info);
  }

  void print_td(const TensorDict& td, const std::vector<std::string>& path, int depth) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    if (td.is_lazy_stack()) {  // its elements, as on disk (0/, 1/, ...), each with its own keys
      const auto& elements = td.tensordicts();
      for (size_t i = 0; i < elements.size(); ++i) {
        std::vector<std::string> child_path = path;
        child_path.push_back(std::to_string(i));
        print_entry(indent + std::to_string(i), elements[i], child_path, depth);
      }
      return;
    }
    for (size_t i = 0; i < td.size(); ++i) {
      std::vector<std::string> child_path = path;
      child_path.push_back(td.key_at(i));
      print_entry(indent + td.key_at(i), td.value_at(i), child_path, depth);
    }
  }

  void print_none_fields(const Json& fields, int depth) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    for (const auto& [key, value] : fields.items())
      out_ << indent << key << "  " << short_json(value) << "\n";
  }

  const Totals& totals() const { return totals_; }

 private:
  void print_entry(const std::string& label, const Value& value,
                   const std::vector<std::string>& path, int depth) {
    switch (value.kind()) {
      case Value::Kind::Tensor: {
        const at::Tensor& t = value.tensor();
        const int64_t bytes = t.numel() * static_cast<int64_t>(t.element_size());
        totals_.tensors += 1;
        totals_.bytes += bytes;
        out_ << label << "  " << tensordict::dtype_name(t.scalar_type()) << " "
             << tensordict::shape_str(t.sizes()) << "  " << bytes << " bytes\n";
        return;
      }
      case Value::Kind::TensorDict: {
        const TensorDict& td = value.tensordict();
        auto cls = classes_.find(join(path));
        out_ << label << "/  "
             << (cls == classes_.end() ? kind_label(td) : class_label(cls->second))
             << batch_label(td) << "\n";
        print_td(td, path, depth + 1);
        if (cls != classes_.end()) print_none_fields(cls->second.fields, depth + 1);
        return;
      }
      case Value::Kind::NonTensorData:
        out_ << label << "  NonTensorData " << short_json(value.non_tensor_data().data) << "\n";
        return;
      case Value::Kind::NonTensorStack: {
        const auto& stack = value.non_tensor_stack();
        out_ << label << "  NonTensorStack " << tensordict::shape_str(stack.shape()) << " "
             << short_json(stack.tolist()) << "\n";
        return;
      }
    }
  }

  static std::string join(const std::vector<std::string>& path) {
    std::string out;
    for (size_t i = 0; i < path.size(); ++i) out += (i ? "\x1f" : "") + path[i];
    return out;
  }

  std::ostream& out_;
  std::map<std::string, tensordict::memmap::ClassInfo> classes_;
  Totals totals_;
};

}  // namespace

Json names_json(const TensorDict& td) {
  try {
    return tensordict::format::names_entry(td.names());
  } catch (const tensordict::Error&) {  // a lazy stack whose elements name a dim differently
    return nullptr;
  }
}

int run_ls(const std::string& dir, std::ostream& out) {
  const auto loaded = load_tree(dir, at::Device(at::kMeta));
  // The meta-device load reads meta.json files only; a listing of a directory that does not load
  // would mislead, so the data files are checked too (mapped, not read).
  const auto problems = verify_tree(dir);
  if (!problems.empty()) throw tensordict::FormatError(problems.front());
  TreePrinter printer(out, loaded);
  if (!loaded.value.is_tensordict()) {
    out << dir << "  " << loaded.type << "\n";
    return 0;
  }
  const TensorDict& td = loaded.value.tensordict();
  std::string root = dir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  out << root << "/  " << (loaded.class_info ? class_label(*loaded.class_info) : kind_label(td))
      << batch_label(td) << "\n";
  printer.print_td(td, {}, 1);
  if (loaded.class_info) printer.print_none_fields(loaded.class_info->fields, 1);
  out << "total: " << printer.totals().tensors << " tensors, " << printer.totals().bytes
      << " bytes\n";
  return 0;
}

}  // namespace tdtool
