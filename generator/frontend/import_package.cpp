#include "frontend/import_package.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/import_types.h"
#include "model/name_rules.h"
#include "tensordict/errors.h"
#include "tensordict/nn/call_spec.h"

namespace tcgen {
namespace {

namespace fs = std::filesystem;
using tensordict::NestedKey;
using tensordict::nn::InputSignature;

// `policy_net` -> `PolicyNet`: the words of `text` (split at what is not a letter or digit),
// each capitalized.
std::string pascal_case(const std::string& text) {
  std::string out;
  bool word_start = true;
  for (const char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      word_start = true;
      continue;
    }
    out += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    word_start = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front()))) out = "Model" + out;
  return out;
}

NestedKey dotted_key(const std::string& text) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts.size() == 1 ? NestedKey(parts.front()) : NestedKey(parts);
}

std::vector<NestedKey> dotted_keys(const std::vector<std::string>& texts) {
  std::vector<NestedKey> keys;
  for (const auto& text : texts) keys.push_back(dotted_key(text));
  return keys;
}

// The message of a call spec's refusal of the keys given; where it is about `keys` (in_keys,
// out_keys), it names the option that gives them.
std::string name_them(const tensordict::ValueError& e, const std::string& keys) {
  std::string option = "--" + keys;
  option[option.find('_')] = '-';
  const std::string message = e.what();
  return message.find(keys) == std::string::npos ? message
                                                 : message + " (name them with " + option + ")";
}

// How many leading dims every input has dynamic, with the same range: the batch dims.
size_t batch_rank(const std::vector<InputSignature>& inputs) {
  if (inputs.empty()) return 0;
  size_t rank = std::numeric_limits<size_t>::max();
  for (const auto& input : inputs) {
    size_t n = 0;
    while (n < input.dims.size() && !input.dims[n].is_static()) ++n;
    rank = std::min(rank, n);
  }
  for (size_t d = 0; d < rank; ++d) {
    for (const auto& input : inputs) {
      if (input.dims[d].min != inputs.front().dims[d].min ||
          input.dims[d].max != inputs.front().dims[d].max) {
        return d;
      }
    }
  }
  return rank;
}

// `tensor[dtype, (batch dims, sizes)]` of an input the package checks: dynamic dims past the
// batch dims are free names (D<dim>), a dtype schemas cannot name is left out.
Type input_type(const InputSignature& input, const std::vector<std::string>& batch_names) {
  Type type = make_type(TypeKind::Tensor);
  if (schema_dtype(input.dtype)) type.dtype = input.dtype;
  std::vector<Dim> shape;
  for (size_t d = 0; d < input.dims.size(); ++d) {
    if (d < batch_names.size()) {
      shape.push_back(Dim{batch_names[d], -1});
    } else if (input.dims[d].is_static()) {
      shape.push_back(Dim{"", input.dims[d].min});
    } else {
      shape.push_back(Dim{"D" + std::to_string(d), -1});
    }
  }
  type.shape = std::move(shape);
  return type;
}

// A dict of the model's inputs and outputs, merged: its keys in the order met, each a tensor or
// a nested dict.
struct Level {
  struct Entry {
    std::string key;
    std::optional<Type> tensor;  // unset for a nested dict
    bool input = false;          // read by the model (else only written)
    size_t child = 0;            // nested dicts: index into Builder::levels_
  };
  std::vector<Entry> entries;
  std::unordered_map<std::string, size_t> position;  // of each key in entries: finds stay O(1)
  Entry* find(const std::string& key) {
    const auto it = position.find(key);
    return it == position.end() ? nullptr : &entries[it->second];
  }
  Entry& append(Entry entry) {
    position.emplace(entry.key, entries.size());
    entries.push_back(std::move(entry));
    return entries.back();
  }
};

class Builder {
 public:
  Builder(std::string display, Diagnostics& diagnostics)
      : display_(std::move(display)), diagnostics_(diagnostics), levels_(1) {}

  // Adds the tensor at `key`; an output already read as an input is the same field.
  void add(const NestedKey& key, const Type& type, bool input) {
    size_t level = 0;
    for (size_t i = 0; i < key.size(); ++i) {
      const bool last = i + 1 == key.size();
      Level::Entry* entry = levels_[level].find(key[i]);
      if (!entry) {
        Level::Entry fresh{key[i], std::nullopt, input, 0};
        if (last) {
          fresh.tensor = type;
        } else {
          fresh.child = levels_.size();
          levels_.emplace_back();
        }
        entry = &levels_[level].append(std::move(fresh));
      } else if (last != entry->tensor.has_value()) {
        diagnostics_.error(SourceLoc{display_, 0, 0},
                           "'" + key.join(".") + "' is both a tensor and a dict of the model");
        return;
      }
      entry->input = entry->input || input;
      if (!last) level = entry->child;
    }
  }

  // The classes: `name` for the top level first, then each nested dict's, named after its path.
  std::vector<Class> classes(const std::string& name, const std::vector<std::string>& batch_dims) {
    std::vector<Class> out;
    emit(0, name, batch_dims, out);
    return out;
  }

 private:
  void emit(size_t level, const std::string& name, const std::vector<std::string>& batch_dims,
            std::vector<Class>& out) {
    const size_t index = out.size();
    out.emplace_back();
    out[index].name = name;
    out[index].batch_dims = batch_dims;
    out[index].loc = SourceLoc{display_, 0, 0};
    for (const auto& entry : levels_[level].entries) {
      Field field;
      field.name = entry.key;
      field.loc = out[index].loc;
      if (entry.tensor) {
        field.type = *entry.tensor;
      } else {
        field.type = make_type(TypeKind::Class);
        field.type.class_name = name + pascal_case(entry.key);
        emit(entry.child, field.type.class_name, batch_dims, out);
      }
      // What only the model writes is absent until it ran.
      if (!entry.input) field.type = wrap(TypeKind::Optional, field.type);
      if (is_reserved_name(field.name)) out[index].options.shadow = true;
      out[index].fields.push_back(std::move(field));
    }
  }

  std::string display_;
  Diagnostics& diagnostics_;
  std::vector<Level> levels_;  // the top level first
};

}  // namespace

bool is_package_argument(const std::string& path) { return fs::path(path).extension() == ".pt2"; }

Schema import_package(const std::string& path, const std::string& display,
                      const ImportOptions& options, Diagnostics& diagnostics) {
  Schema schema;
  schema.path = path;
  schema.display_path = display;
  schema.cpp_namespace = options.cpp_namespace;
  const SourceLoc where{display, 0, 0};
  try {
    const tensordict::nn::PackageSignature package = tensordict::nn::read_package_signature(path);
    std::vector<NestedKey> inputs, outputs;
    try {
      inputs = package.call_spec.input_keys(dotted_keys(options.in_keys));
    } catch (const tensordict::ValueError& e) {
      throw tensordict::ValueError(name_them(e, "in_keys"));
    }
    try {
      outputs = package.call_spec.output_keys(dotted_keys(options.out_keys));
    } catch (const tensordict::ValueError& e) {
      throw tensordict::ValueError(name_them(e, "out_keys"));
    }
    const std::vector<std::string> batch_dims = batch_dim_names(batch_rank(package.inputs));
    Builder builder(display, diagnostics);
    for (size_t i = 0; i < inputs.size(); ++i) {
      builder.add(inputs[i],
                  i < package.inputs.size() ? input_type(package.inputs[i], batch_dims)
                                            : make_type(TypeKind::Tensor),
                  true);
    }
    for (const auto& key : outputs) builder.add(key, make_type(TypeKind::Tensor), false);
    const std::string name = !options.class_name.empty()
                                 ? options.class_name
                                 : pascal_case(fs::path(path).stem().string());
    schema.classes = builder.classes(name, batch_dims);
  } catch (const tensordict::Error& e) {
    diagnostics.error(where, e.what());
  }
  return schema;
}

}  // namespace tcgen
