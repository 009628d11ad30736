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

std::vector<NestedKey> dotted_keys(const std::vector<std::string>& texts) {
  std::vector<NestedKey> keys;
  for (const auto& text : texts) keys.push_back(NestedKey::split(text));
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
    KeyTree builder(display, diagnostics);
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
