// AOTInductor packages (tensordict/nn/exported.h): loading, running, and TensorDictModule over
// them. AOTIModelPackageLoader exists from libtorch 2.6 on; older builds compile the refusals.
#include "tensordict/nn/exported.h"

#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#define TC_HAVE_AOTI 1
#else
#define TC_HAVE_AOTI 0
#endif

#include <limits>
#include <utility>

#include "tensordict/class_spec.h"
#include "tensordict/dtype.h"
#include "tensordict/errors.h"
#include "tensordict/internal.h"
#include "tensordict/nn/module.h"

namespace tensordict::nn {

struct ExportedModel::State {
  std::string path;
  PackageSignature signature;  // the loader's call spec, the source's input checks
  std::map<std::string, std::string> metadata;
#if TC_HAVE_AOTI
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
#endif
};

namespace {

#if TC_HAVE_AOTI
std::string shapes_of(const std::vector<at::Tensor>& inputs) {
  std::string out;
  for (const auto& t : inputs) {
    std::string shape;
    for (const int64_t d : t.sizes()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    out +=
        (out.empty() ? "" : "; ") + std::string(dtype_name(t.scalar_type())) + " [" + shape + "]";
  }
  return out;
}
#endif

// The file name of a package, for messages and module names.
std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string dims_str(const std::vector<DimRange>& dims) {
  std::string out;
  for (const DimRange& d : dims) {
    out += out.empty() ? "" : ", ";
    out += d.is_static()
               ? std::to_string(d.min)
               : std::to_string(d.min) + ".." +
                     (d.max == std::numeric_limits<int64_t>::max() ? std::string()
                                                                   : std::to_string(d.max));
  }
  return "[" + out + "]";
}

bool dim_fits(int64_t size, const DimRange& range) {
  // torch.export specializes sizes 0 and 1, so a dynamic dim exported as Dim(min=1) is recorded
  // from 2; the compiled code takes 1 as well (the fixtures run batch 1), so a recorded 2 lets 1
  // in.
  const int64_t min = !range.is_static() && range.min == 2 ? 1 : range.min;
  return size >= min && size <= range.max;
}

// Refuses, naming the input, what the package's checks would refuse or its code misread: another
// dtype, rank, static size or a size out of a dynamic dim's range.
void check_input(const at::Tensor& t, const InputSignature& sig, const std::string& name,
                 const std::string& package) {
  if (!sig.dtype.empty() && dtype_name(t.scalar_type()) != sig.dtype) {
    throw TypeError("the AOTInductor package '" + package + "': input " + name + " is " +
                    dtype_name(t.scalar_type()) + ", the package takes " + sig.dtype);
  }
  bool fits = static_cast<size_t>(t.dim()) == sig.dims.size();
  for (size_t d = 0; fits && d < sig.dims.size(); ++d) fits = dim_fits(t.size(d), sig.dims[d]);
  if (!fits) {
    throw ShapeError("the AOTInductor package '" + package + "': input " + name + " has shape " +
                     shape_str(t.sizes()) + ", the package takes " + dims_str(sig.dims));
  }
}

// The field of `cls` that `key` names, through nested classes; null with `problem` set when there
// is none.
const FieldSpec* find_field(const ClassSpec& cls, const NestedKey& key, std::string& problem) {
  const ClassSpec* level = &cls;
  for (size_t i = 0; i < key.size(); ++i) {
    const int64_t index = level->field_index(key[i]);
    if (index < 0) {
      problem = std::string(level->name) + " has no field '" + key[i] + "'";
      return nullptr;
    }
    const FieldSpec& field = level->fields[static_cast<size_t>(index)];
    if (i + 1 == key.size()) return &field;
    if (field.kind != FieldKind::Class || !field.nested) {
      problem = "field '" + key[i] + "' of " + level->name + " is " +
                std::string(spelling(field.kind).schema) + ", the package reads a dict there";
      return nullptr;
    }
    level = &field.nested();
  }
  return nullptr;  // keys are never empty
}

std::string declared(const FieldSpec& field) {
  std::string out = field.dtype ? dtype_name(*field.dtype) : "any dtype";
  if (!field.shape) return out + ", any shape";
  std::string dims;
  for (const int64_t d : *field.shape) {
    dims += (dims.empty() ? "" : ", ") + (d < 0 ? std::string("*") : std::to_string(d));
  }
  return out + " [" + dims + "]";
}

// Why `field` cannot hold what the package takes as `sig`; empty when it can.
std::string input_mismatch(const FieldSpec& field, const InputSignature& sig) {
  if (!sig.dtype.empty() && field.dtype && dtype_name(*field.dtype) != sig.dtype) return "dtype";
  if (sig.dims.empty() || !field.shape) return "";
  if (field.shape->size() != sig.dims.size()) return "rank";
  for (size_t d = 0; d < sig.dims.size(); ++d) {
    const int64_t size = (*field.shape)[d];
    if (size >= 0 && !dim_fits(size, sig.dims[d])) return "size of dim " + std::to_string(d);
  }
  return "";
}

}  // namespace

void check_class(const PackageSignature& package, const ClassSpec& cls,
                 const std::string& package_name, const std::vector<NestedKey>& in_keys,
                 const std::vector<NestedKey>& out_keys) {
  std::vector<std::string> problems;
  const auto tensor_field = [&](const NestedKey& key, const char* role) -> const FieldSpec* {
    std::string problem;
    const FieldSpec* field = find_field(cls, key, problem);
    if (field && field->kind != FieldKind::Tensor) {
      problem = "field '" + key.back() + "' is " + std::string(spelling(field->kind).schema) +
                ", the package " + (role[0] == 'i' ? "takes" : "returns") + " a tensor";
      field = nullptr;
    }
    if (!field) problems.push_back(std::string(role) + " '" + key.join(".") + "': " + problem);
    return field;
  };
  const std::vector<NestedKey> inputs = package.call_spec.input_keys(in_keys);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FieldSpec* field = tensor_field(inputs[i], "input");
    if (!field || i >= package.inputs.size()) continue;
    const InputSignature& sig = package.inputs[i];
    const std::string mismatch = input_mismatch(*field, sig);
    if (!mismatch.empty()) {
      problems.push_back("input '" + inputs[i].join(".") + "': the package takes " +
                         (sig.dtype.empty() ? "any dtype" : sig.dtype) + " " + dims_str(sig.dims) +
                         ", " + cls.name + " declares " + declared(*field) + " (" + mismatch + ")");
    }
  }
  for (const NestedKey& key : package.call_spec.output_keys(out_keys)) tensor_field(key, "output");
  if (problems.empty()) return;
  std::string message =
      "the AOTInductor package '" + base_name(package_name) + "' does not fit " + cls.name + ":";
  for (const std::string& problem : problems) message += "\n  " + problem;
  throw ValueError(message);
}

bool can_load_exported_models() { return TC_HAVE_AOTI; }

ExportedModel::ExportedModel(const std::string& path) : state_(std::make_shared<State>()) {
  state_->path = path;
#if TC_HAVE_AOTI
  try {
    state_->loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(path);
  } catch (const std::exception& e) {
    throw Error("cannot load the AOTInductor package '" + path +
                "': " + ::tensordict::detail::first_line(e.what()));
  }
  const std::vector<std::string> spec = state_->loader->get_call_spec();
  if (spec.size() != 2) {
    throw FormatError("the AOTInductor package '" + path + "' has no call spec");
  }
  state_->signature.call_spec = CallSpec::parse(spec[0], spec[1]);
  for (const auto& [key, value] : state_->loader->get_metadata()) {
    state_->metadata.emplace(key, value);
  }
  try {
    const PackageSignature source = read_package_signature(path);
    if (source.inputs.size() == state_->signature.call_spec.inputs().leaves()) {
      state_->signature.inputs = source.inputs;
    }
  } catch (const FormatError&) {
    // A source this reader does not know, though the loader took the package: no checks to offer.
  }
#else
  throw Error("cannot load the AOTInductor package '" + path +
              "': this build uses libtorch " TORCH_VERSION
              ", and loading packages needs libtorch 2.6 or later");
#endif
}

const std::string& ExportedModel::path() const { return state_->path; }
const CallSpec& ExportedModel::call_spec() const { return state_->signature.call_spec; }
const PackageSignature& ExportedModel::signature() const { return state_->signature; }
const std::map<std::string, std::string>& ExportedModel::metadata() const {
  return state_->metadata;
}
const std::vector<InputSignature>& ExportedModel::input_signatures() const {
  return state_->signature.inputs;
}

std::vector<at::Tensor> ExportedModel::run(const std::vector<at::Tensor>& inputs,
                                           const std::vector<NestedKey>& names) const {
  const size_t expected = call_spec().inputs().leaves();
  if (inputs.size() != expected) {
    throw ValueError("the AOTInductor package '" + state_->path + "' takes " +
                     std::to_string(expected) + " tensors, not " + std::to_string(inputs.size()));
  }
  const auto name = [&](size_t i) {
    return i < names.size() ? names[i].repr() : std::to_string(i);
  };
  const std::vector<InputSignature>& checks = input_signatures();
  for (size_t i = 0; i < checks.size(); ++i) {
    check_input(inputs[i], checks[i], name(i), base_name(state_->path));
  }
  // The compiled code reads its inputs with the strides it was exported with: contiguous ones.
  std::vector<at::Tensor> contiguous;
  contiguous.reserve(inputs.size());
  for (const at::Tensor& t : inputs) contiguous.push_back(t.contiguous());
#if TC_HAVE_AOTI
  try {
    return state_->loader->run(contiguous);
  } catch (const std::exception& e) {
    throw ValueError("the AOTInductor package '" + state_->path + "' refused its inputs (" +
                     shapes_of(contiguous) + "): " + ::tensordict::detail::first_line(e.what()));
  }
#else
  throw Error("cannot run '" + state_->path + "': this build cannot load AOTInductor packages");
#endif
}

TensorDictModule::TensorDictModule(const ExportedModel& model, std::vector<NestedKey> in_keys,
                                   std::vector<NestedKey> out_keys, std::string name)
    : TensorDictModule(
          [model, keys = model.call_spec().input_keys(in_keys)](const std::vector<Value>& inputs,
                                                                const BatchSize&) {
            if (inputs.size() < keys.size()) throw detail::WrongInputCount{};  // it takes all
            std::vector<at::Tensor> tensors;
            tensors.reserve(inputs.size());
            for (size_t i = 0; i < inputs.size(); ++i) {
              tensors.push_back(detail::input_tensor(inputs, i));
            }
            std::vector<Value> outputs;
            for (at::Tensor& t : model.run(tensors, keys)) outputs.emplace_back(std::move(t));
            return outputs;
          },
          model.call_spec().input_keys(in_keys), model.call_spec().output_keys(out_keys),
          name.empty() ? base_name(model.path()) : std::move(name), Tag{}) {}

}  // namespace tensordict::nn
