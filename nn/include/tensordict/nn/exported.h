#pragma once
/// \file
/// Models exported from Python with `torch.export` and packaged by AOTInductor (a `.pt2` file),
/// run on TensorDicts by key: the way a model trained in Python reaches C++ now that TorchScript
/// is deprecated.
///
/// \code
///   // Python: ep = torch.export.export(policy, (inputs,), dynamic_shapes=...)
///   //         torch._inductor.aoti_compile_and_package(ep, package_path="policy.pt2")
///   nn::ExportedModel policy("policy.pt2");
///   nn::TensorDictModule actor(policy);  // keys from the package's own call spec
///   actor(data);                         // reads observation, goal.bias; writes logits, ...
/// \endcode
///
/// A package's runner takes and returns flat lists of tensors; its call spec (call_spec.h) says
/// which key each one is. Loading needs libtorch 2.6 or later (AOTIModelPackageLoader), and a
/// package made by the same torch release: where this library was built against an older
/// libtorch, loading throws an Error that says so.

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensordict/nn/call_spec.h"

namespace tensordict::nn {

/// True when this build can load AOTInductor packages (libtorch 2.6 or later).
bool can_load_exported_models();

/// The input checks an AOTInductor package's wrapper source records (parse_input_checks), read
/// from the package without loading it, on any libtorch; empty when it records none.
/// FormatError for a file that is not a zip of stored entries.
std::vector<InputSignature> package_input_checks(const std::string& path);

/// An AOTInductor package, loaded.
class ExportedModel {
 public:
  /// Loads the package at `path`. Error, naming the path, when it cannot be loaded (a package of
  /// another torch release, a file that is not one) or when this build cannot load packages.
  explicit ExportedModel(const std::string& path);

  /// The path it was loaded from.
  const std::string& path() const;
  /// How it takes its inputs and returns its outputs.
  const CallSpec& call_spec() const;
  /// The package's metadata, e.g. AOTI_DEVICE_KEY ("cpu", "cuda").
  const std::map<std::string, std::string>& metadata() const;
  /// What the package's compiled code requires of each input (dtype, static dims, the range of
  /// dynamic ones), where its source records it; empty otherwise (torch 2.6's packages).
  const std::vector<InputSignature>& input_signatures() const;
  /// Runs on the inputs as the in_spec's leaves, in order; returns the out_spec's leaves. First
  /// each input is checked against input_signatures(): another dtype is a TypeError, another
  /// rank, static size or a size out of range a ShapeError, naming the input by `names` (one per
  /// input, e.g. the in_keys; its position otherwise) with what the package takes. An input the
  /// package itself refuses is a ValueError naming every input's shape and dtype.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<NestedKey>& names = {}) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace tensordict::nn
