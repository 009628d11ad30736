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

namespace tensordict {
struct ClassSpec;
class TensorDict;
}  // namespace tensordict

namespace tensordict::nn {

/// True when this build can load AOTInductor packages (libtorch 2.6 or later).
bool can_load_exported_models();

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
  /// Its call spec and input signatures together (what check_class compares).
  const PackageSignature& signature() const;
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

  /// Runs a package exported with generated classes (`forward(self, x: In) -> Out`, the classes of
  /// tcgen's Python module): `input`'s fields are the inputs, and the outputs come back as an
  /// `Out`, field by field, its other fields holding the values the package recorded for them.
  /// ValueError when the package takes or returns another class (naming both), or was exported
  /// for another instance's layout: a non-tensor field of another value, a field set that was
  /// None or None that was set (naming the field).
  template <class Out, class In>
  Out call(const In& input) const {
    return Out::from_tensordict(call_class(input, In::class_spec(), Out::class_spec()));
  }
  /// call, untyped: `input` an instance of `in`; the result a TensorDict of class `out`.
  TensorDict call_class(const TensorDict& input, const ClassSpec& in, const ClassSpec& out) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// Checks that a generated tensorclass holds what a package reads and writes, so that a program
/// refuses, at start-up, a model shipped with another signature. Every input key must be a
/// tensor field of `cls` (a nested dict's keys, fields of a nested class), of the dtype and sizes
/// the package's input checks record where the class declares them; every output key a tensor
/// field. Fields the package does not use are fine. Where the package takes or returns a generated
/// class (ExportedModel::call), it must be `cls` (and its nested classes those of `cls`'s
/// fields). ValueError naming the package and the class and listing every mismatch (key, what
/// the package takes, what the class declares). `in_keys` / `out_keys` name positional inputs and
/// tuple outputs, as for TensorDictModule.
void check_class(const PackageSignature& package, const ClassSpec& cls,
                 const std::string& package_name, const std::vector<NestedKey>& in_keys = {},
                 const std::vector<NestedKey>& out_keys = {});
/// check_class of a package that takes `in` and returns `out` (ExportedModel::call<Out, In>).
void check_classes(const PackageSignature& package, const ClassSpec& in, const ClassSpec& out,
                   const std::string& package_name);

/// check_class of the generated class `T` against a loaded package.
template <class T>
void check_class(const ExportedModel& model, const std::vector<NestedKey>& in_keys = {},
                 const std::vector<NestedKey>& out_keys = {}) {
  check_class(model.signature(), T::class_spec(), model.path(), in_keys, out_keys);
}

/// check_classes of the generated classes `In` and `Out` against a loaded package.
template <class In, class Out>
void check_classes(const ExportedModel& model) {
  check_classes(model.signature(), In::class_spec(), Out::class_spec(), model.path());
}

/// check_class of the generated class `T` against the package at `path`, read without loading
/// it (on any libtorch).
template <class T>
void check_class(const std::string& path, const std::vector<NestedKey>& in_keys = {},
                 const std::vector<NestedKey>& out_keys = {}) {
  check_class(read_package_signature(path), T::class_spec(), path, in_keys, out_keys);
}

}  // namespace tensordict::nn
