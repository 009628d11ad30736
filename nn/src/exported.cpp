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

#include <utility>

#include "tensordict/dtype.h"
#include "tensordict/errors.h"
#include "tensordict/internal.h"
#include "tensordict/nn/module.h"

namespace tensordict::nn {

struct ExportedModel::State {
  std::string path;
  CallSpec spec;
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

}  // namespace

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
  state_->spec = CallSpec::parse(spec[0], spec[1]);
  for (const auto& [key, value] : state_->loader->get_metadata()) {
    state_->metadata.emplace(key, value);
  }
#else
  throw Error("cannot load the AOTInductor package '" + path +
              "': this build uses libtorch " TORCH_VERSION
              ", and loading packages needs libtorch 2.6 or later");
#endif
}

const std::string& ExportedModel::path() const { return state_->path; }
const CallSpec& ExportedModel::call_spec() const { return state_->spec; }
const std::map<std::string, std::string>& ExportedModel::metadata() const {
  return state_->metadata;
}

std::vector<at::Tensor> ExportedModel::run(const std::vector<at::Tensor>& inputs) const {
  const size_t expected = state_->spec.inputs().leaves();
  if (inputs.size() != expected) {
    throw ValueError("the AOTInductor package '" + state_->path + "' takes " +
                     std::to_string(expected) + " tensors, not " + std::to_string(inputs.size()));
  }
#if TC_HAVE_AOTI
  try {
    return state_->loader->run(inputs);
  } catch (const std::exception& e) {
    throw ValueError("the AOTInductor package '" + state_->path + "' refused its inputs (" +
                     shapes_of(inputs) + "): " + ::tensordict::detail::first_line(e.what()));
  }
#else
  throw Error("cannot run '" + state_->path + "': this build cannot load AOTInductor packages");
#endif
}

TensorDictModule::TensorDictModule(const ExportedModel& model, std::vector<NestedKey> in_keys,
                                   std::vector<NestedKey> out_keys, std::string name)
    : TensorDictModule(
          [model](const std::vector<Value>& inputs, const BatchSize&) {
            std::vector<at::Tensor> tensors;
            tensors.reserve(inputs.size());
            for (size_t i = 0; i < inputs.size(); ++i) {
              tensors.push_back(detail::input_tensor(inputs, i));
            }
            std::vector<Value> outputs;
            for (at::Tensor& t : model.run(tensors)) outputs.emplace_back(std::move(t));
            return outputs;
          },
          model.call_spec().input_keys(in_keys), model.call_spec().output_keys(out_keys),
          name.empty() ? base_name(model.path()) : std::move(name), Tag{}) {}

}  // namespace tensordict::nn
