#pragma once
/// \file
/// The call spec of an exported model: how a `torch.export` program, packaged by AOTInductor,
/// takes its inputs and returns its outputs, as the pytrees its `.pt2` package records
/// (`AOTIModelPackageLoader::get_call_spec()`: torch.utils._pytree's treespec JSON, protocol 1).
/// The package's runner takes and returns flat lists of tensors, the leaves of those trees in
/// order; the keys of a TensorDict name them.
///
/// \code
///   // forward(td: dict) -> dict, exported with {"observation": ..., "goal": {"bias": ...}}
///   const CallSpec spec = CallSpec::parse(in_spec_json, out_spec_json);
///   spec.input_keys({});   // {"observation"}, {"goal", "bias"}: the runner's inputs, in order
///   spec.output_keys({});  // {"logits"}, {"action"}, {"value"}
/// \endcode
///
/// Leaves inside a dict are named by their keys (a nested dict gives a nested key), leaves inside a
/// generated class by its fields' names (its emitted Python module registers each class as a
/// pytree node, named by its dotted Python name, with a JSON context); leaves passed positionally,
/// or returned in a tuple or list, by the in_keys or out_keys a module is given, in order.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/nested_key.h"

namespace tensordict::nn {

/// One node of a pytree spec.
struct TreeSpec {
  /// What the node is.
  enum class Kind {
    Leaf,   ///< a tensor
    Tuple,  ///< builtins.tuple
    List,   ///< builtins.list
    Dict,   ///< builtins.dict (and collections.OrderedDict): `keys` name the children
    None,   ///< builtins.NoneType: no leaves
    Class,  ///< a generated class: `keys` name the fields that are children, `type` the class
  };
  Kind kind = Kind::Leaf;          ///< what the node is
  std::vector<std::string> keys;   ///< Dict, Class: one per child, in order
  std::vector<TreeSpec> children;  ///< in the order of the runner's leaves

  /// Class: its Python dotted name, as the package records it ("nntest.PolicyStep").
  std::string type;
  /// Class: how many leading dims of its children are its batch dims.
  int64_t batch_dims = 0;
  /// Class: its batch size, recorded only where it has no children to read it from.
  std::optional<std::vector<int64_t>> batch_size;
  /// Class: the values of its fields that are neither tensors nor None (strings, numbers...), as
  /// the text of a JSON object; the package was exported for these values only.
  std::string non_tensor = "{}";
  /// Class: its device ("cpu", "cuda:0"), empty for none.
  std::string device;

  /// Number of leaves below (and including) this node.
  size_t leaves() const;
};

/// An exported program's inputs (`(args, kwargs)`) and outputs.
class CallSpec {
 public:
  /// Parses the two treespec JSON texts a package records. FormatError, naming which spec and
  /// what is wrong, on anything else (another protocol, an unknown node type, a dict keyed by
  /// other than strings).
  static CallSpec parse(const std::string& in_spec, const std::string& out_spec);

  /// The key of each input leaf, in the runner's order: the dicts' keys, and `in_keys` in order
  /// for the leaves passed positionally. ValueError when `in_keys` does not have one key per
  /// positional leaf, or when an input sits in a tuple or list inside an argument.
  std::vector<NestedKey> input_keys(const std::vector<NestedKey>& in_keys) const;
  /// The key of each output leaf, in the runner's order: `out_keys` when given (one per leaf),
  /// else the returned dict's keys. ValueError when there are no names for them (a tuple returned,
  /// no out_keys) or `out_keys` has another count.
  std::vector<NestedKey> output_keys(const std::vector<NestedKey>& out_keys) const;

  /// The in_spec: a tuple of the positional arguments' tuple and the keyword arguments' dict.
  const TreeSpec& inputs() const { return in_; }
  /// The out_spec.
  const TreeSpec& outputs() const { return out_; }

 private:
  TreeSpec in_;
  TreeSpec out_;
};

/// One dim of an input as a package's compiled code checks it: a static size (min == max) or a
/// range of sizes.
struct DimRange {
  int64_t min = 0;                                    ///< smallest size taken
  int64_t max = std::numeric_limits<int64_t>::max();  ///< largest size taken
  /// True for a dim of one size only.
  bool is_static() const { return min == max; }
};

/// What a package's compiled code requires of one input tensor, where its source records it
/// (recent AOTInductor releases write a check_input_N function per input, which the package
/// runs only under AOTI_RUNTIME_CHECK_INPUTS=1: torch 2.14 writes them, torch 2.6 does not).
struct InputSignature {
  std::string dtype;           ///< a dtype name ("float32", as tensordict names dtypes)
  std::vector<DimRange> dims;  ///< one per dim; empty for a 0-dim tensor
};

/// The input checks an AOTInductor wrapper's C++ source records, one per runner input in order;
/// empty when the source has none. FormatError when the checks are there but not as expected
/// (inputs numbered out of order, an unknown dtype, more than `max_inputs` of them). Linear in
/// the source's length.
std::vector<InputSignature> parse_input_checks(
    std::string_view wrapper_source, size_t max_inputs = std::numeric_limits<size_t>::max());

/// What an AOTInductor package says of its inputs and outputs, read from the wrapper source it
/// carries, without loading it: on any libtorch, and in tcgen (`tcgen import x.pt2`).
struct PackageSignature {
  CallSpec call_spec;                  ///< its in/out pytrees
  std::vector<InputSignature> inputs;  ///< one per input leaf; empty where none are recorded
};

/// The signature a wrapper's C++ source records (its `in_spec_` and `out_spec_` strings, raw or
/// escaped, and its input checks). FormatError, prefixed by `what`, when the source has no call
/// spec or checks another number of inputs than the spec has.
PackageSignature parse_wrapper_source(std::string_view wrapper_source, const std::string& what);

/// The signature of the package at `path`, from its wrapper source (the `.cpp` entry that holds
/// the call spec). FormatError naming the package for a file that is not a zip of stored entries
/// or holds no wrapper source.
PackageSignature read_package_signature(const std::string& path);

}  // namespace tensordict::nn
