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

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "tensordict/class_registry.h"
#include "tensordict/class_spec.h"
#include "tensordict/detail/tensorclass_support.h"
#include "tensordict/dtype.h"
#include "tensordict/errors.h"
#include "tensordict/internal.h"
#include "tensordict/json.h"
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

// Where a tree node is a generated class, whether it is `cls`, and its nested class nodes the
// classes of `cls`'s fields: a mismatch per node that is not.
void class_node_problems(const TreeSpec& node, const ClassSpec& cls, const std::string& role,
                         const std::string& path, std::vector<std::string>& problems) {
  if (node.kind != TreeSpec::Kind::Class) return;
  if (node.type != cls.python_name()) {
    problems.push_back(role + (path.empty() ? "" : " '" + path + "'") + ": the package " +
                       (role == "input" ? "takes " : "returns ") + node.type + ", not " +
                       std::string(cls.python_name()));
    return;
  }
  for (size_t i = 0; i < node.children.size(); ++i) {
    const int64_t index = cls.field_index(node.keys[i]);
    const FieldSpec* field = index < 0 ? nullptr : &cls.fields[static_cast<size_t>(index)];
    if (field && field->kind == FieldKind::Class && field->nested) {
      class_node_problems(node.children[i], field->nested(), role,
                          path + (path.empty() ? "" : ".") + node.keys[i], problems);
    }
  }
}

void check(const PackageSignature& package, const ClassSpec& in_cls, const ClassSpec& out_cls,
           const std::string& package_name, const std::vector<NestedKey>& in_keys,
           const std::vector<NestedKey>& out_keys) {
  std::vector<std::string> problems;
  const auto tensor_field = [&](const ClassSpec& cls, const NestedKey& key,
                                const char* role) -> const FieldSpec* {
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
  for (const TreeSpec& arg : package.call_spec.inputs().children[0].children) {
    class_node_problems(arg, in_cls, "input", "", problems);
  }
  class_node_problems(package.call_spec.outputs(), out_cls, "output", "", problems);
  if (problems.empty()) {  // fields by key, where the classes are the package's
    const std::vector<NestedKey> inputs = package.call_spec.input_keys(in_keys);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const FieldSpec* field = tensor_field(in_cls, inputs[i], "input");
      if (!field || i >= package.inputs.size()) continue;
      const InputSignature& sig = package.inputs[i];
      const std::string mismatch = input_mismatch(*field, sig);
      if (!mismatch.empty()) {
        problems.push_back("input '" + inputs[i].join(".") + "': the package takes " +
                           (sig.dtype.empty() ? "any dtype" : sig.dtype) + " " +
                           dims_str(sig.dims) + ", " + in_cls.name + " declares " +
                           declared(*field) + " (" + mismatch + ")");
      }
    }
    for (const NestedKey& key : package.call_spec.output_keys(out_keys)) {
      tensor_field(out_cls, key, "output");
    }
  }
  if (problems.empty()) return;
  const std::string classes = &in_cls == &out_cls
                                  ? std::string(in_cls.name)
                                  : std::string(in_cls.name) + " -> " + out_cls.name;
  std::string message =
      "the AOTInductor package '" + base_name(package_name) + "' does not fit " + classes + ":";
  for (const std::string& problem : problems) message += "\n  " + problem;
  throw ValueError(message);
}

// The runner's inputs from an instance laid out as the class node `node` records it: its children
// in order, and every other field as the package was exported with it (a value it recorded, or
// None).
void gather_inputs(const TreeSpec& node, const TensorDict& td, const std::string& path,
                   const std::string& package, std::vector<at::Tensor>& out) {
  const auto name = [&](const std::string& key) { return "'" + path + key + "'"; };
  const auto refuse = [&](const std::string& key, const std::string& what) {
    throw ValueError("the AOTInductor package '" + package + "' was exported with field " +
                     name(key) + " " + what);
  };
  const Json recorded = parse_json(node.non_tensor, "the package's in_spec");
  for (const auto& [key, value] : recorded.items()) {
    const Json given = td.contains(key) ? td.get_non_tensor(key) : Json();
    if (given != value) refuse(key, value.dump() + ", not " + given.dump());
  }
  for (const NestedKey& key : td.keys()) {
    const std::string& field = key.front();
    const bool in_tree = std::find(node.keys.begin(), node.keys.end(), field) != node.keys.end();
    if (!in_tree && !recorded.contains(field)) refuse(field, "None, not set");
  }
  for (size_t i = 0; i < node.children.size(); ++i) {
    const std::string& key = node.keys[i];
    if (!td.contains(key)) refuse(key, "set, not None");
    const TreeSpec& child = node.children[i];
    if (child.kind == TreeSpec::Kind::Class) {
      gather_inputs(child, td.get_tensordict(key), path + key + ".", package, out);
    } else if (child.kind == TreeSpec::Kind::Leaf) {
      out.push_back(td.get(key));
    } else {
      throw ValueError("the AOTInductor package '" + package + "' takes field " + name(key) +
                       " as a node its class cannot be");
    }
  }
}

// The class node `node` of the out_spec, built from the runner's outputs from `next` on: its
// batch size read from its first child (or recorded), its other fields the values recorded.
TensorDict build_output(const TreeSpec& node, std::vector<at::Tensor>::iterator& next,
                        const std::string& package) {
  std::vector<std::pair<NestedKey, Value>> children;
  for (size_t i = 0; i < node.children.size(); ++i) {
    const TreeSpec& child = node.children[i];
    if (child.kind == TreeSpec::Kind::Class) {
      children.emplace_back(node.keys[i], build_output(child, next, package));
    } else if (child.kind == TreeSpec::Kind::Leaf) {
      children.emplace_back(node.keys[i], std::move(*next++));
    } else {
      throw ValueError("the AOTInductor package '" + package + "' returns field '" + node.keys[i] +
                       "' as a node its class cannot be");
    }
  }
  std::vector<int64_t> batch;
  if (node.batch_size) {
    batch = *node.batch_size;
  } else {
    const Value& first = children.front().second;
    const std::vector<int64_t> sizes =
        first.is_tensor() ? first.tensor().sizes().vec() : first.tensordict().batch_size();
    if (static_cast<int64_t>(sizes.size()) < node.batch_dims) {
      throw ValueError("the AOTInductor package '" + package + "' returned '" +
                       children.front().first.join(".") + "' with fewer dims than " + node.type +
                       "'s batch dims");
    }
    batch.assign(sizes.begin(), sizes.begin() + node.batch_dims);
  }
  std::optional<at::Device> device;
  try {
    if (!node.device.empty()) device = at::Device(node.device);
  } catch (const c10::Error&) {
    throw FormatError("the AOTInductor package '" + package + "' records " + node.type +
                      "'s device as '" + node.device + "', which is no device");
  }
  TensorDict out(children, batch, device);
  const Json recorded = parse_json(node.non_tensor, "the package's out_spec");
  for (const auto& [key, value] : recorded.items()) {
    out.set_non_tensor(key, value);
  }
  if (const ClassSpec* cls = find_class("<class '" + node.type + "'>")) {
    ::tensordict::detail::tc::mark_class(out, *cls);
  }
  return out;
}

}  // namespace

void check_class(const PackageSignature& package, const ClassSpec& cls,
                 const std::string& package_name, const std::vector<NestedKey>& in_keys,
                 const std::vector<NestedKey>& out_keys) {
  check(package, cls, cls, package_name, in_keys, out_keys);
}

void check_classes(const PackageSignature& package, const ClassSpec& in, const ClassSpec& out,
                   const std::string& package_name) {
  check(package, in, out, package_name, {}, {});
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

TensorDict ExportedModel::call_class(const TensorDict& input, const ClassSpec& in,
                                     const ClassSpec& out) const {
  const TreeSpec& args = call_spec().inputs().children[0];
  const TreeSpec& kwargs = call_spec().inputs().children[1];
  const std::string package = base_name(state_->path);
  if (args.children.size() != 1 || args.children[0].kind != TreeSpec::Kind::Class ||
      !kwargs.children.empty() || call_spec().outputs().kind != TreeSpec::Kind::Class) {
    throw ValueError("the AOTInductor package '" + package +
                     "' does not take one instance of a generated class and return one: run it "
                     "with a TensorDictModule");
  }
  check_classes(signature(), in, out, state_->path);
  std::vector<at::Tensor> inputs;
  gather_inputs(args.children[0], input, "", package, inputs);
  std::vector<at::Tensor> outputs = run(inputs, call_spec().input_keys({}));
  if (outputs.size() != call_spec().outputs().leaves()) {
    throw ValueError("the AOTInductor package '" + package + "' returned " +
                     std::to_string(outputs.size()) + " tensors, its out_spec has " +
                     std::to_string(call_spec().outputs().leaves()));
  }
  auto next = outputs.begin();
  return build_output(call_spec().outputs(), next, package);
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
