#include "tensordict/nn/call_spec.h"

#include <string_view>

#include "tensordict/errors.h"
#include "tensordict/json.h"

namespace tensordict::nn {
namespace {

// A node's context: JSON text inside the JSON (null for builtins' nodes without one).
Json context_of(const Json& node, const std::string& what) {
  const Json& context = node.value("context", Json());
  return context.is_string() ? parse_json(context.get<std::string>(), what) : Json();
}

std::vector<std::string> string_list(const Json& list, const std::string& of,
                                     const std::string& what) {
  if (!list.is_array()) throw FormatError(what + ": " + of + " is not a list");
  std::vector<std::string> out;
  for (const Json& item : list) {
    if (!item.is_string()) throw FormatError(what + ": " + of + " holds " + item.dump());
    out.push_back(item.get<std::string>());
  }
  return out;
}

// The context a generated class's emitted Python module records (templates/
// python_module.mustache): {"fields": [...], "batch_dims": n, "non_tensor": {...},
// "device": "cpu" | null, and "batch_size": [...] where it has no children}.
void read_class_context(const Json& context, TreeSpec& spec, const std::string& what) {
  const std::string of = "the context of class '" + spec.type + "'";
  spec.keys = string_list(context["fields"], of + "'s fields", what);
  const Json& dims = context.value("batch_dims", Json());
  const Json& values = context.value("non_tensor", Json::object());
  const Json& device = context.value("device", Json());
  if (spec.keys.size() != spec.children.size() || !dims.is_number_integer() ||
      dims.get<int64_t>() < 0 || !values.is_object() || !(device.is_null() || device.is_string())) {
    throw FormatError(what + ": " + of + " is not {\"fields\", \"batch_dims\", \"non_tensor\", " +
                      "\"device\"} with a field per child");
  }
  spec.batch_dims = dims.get<int64_t>();
  spec.non_tensor = values.dump();
  if (device.is_string()) spec.device = device.get<std::string>();
  if (context.contains("batch_size")) {
    const Json& given = context["batch_size"];
    std::vector<int64_t> sizes;
    for (const Json& size : given.is_array() ? given : Json::array({-1})) {
      if (!size.is_number_integer() || size.get<int64_t>() < 0)
        throw FormatError(what + ": " + of + " has a batch size of " + given.dump());
      sizes.push_back(size.get<int64_t>());
    }
    spec.batch_size = std::move(sizes);
  }
  if (!spec.batch_size && spec.children.empty()) {
    throw FormatError(what + ": " + of + " has neither children nor a batch size");
  }
}

// A node of torch.utils._pytree's treespec JSON (protocol 1):
//   {"type": "builtins.dict" | ... | null (a leaf), "context": "<JSON text>" | null,
//    "children_spec": [<node>, ...]}
TreeSpec parse_node(const Json& node, const std::string& what) {
  if (!node.is_object() || !node.contains("type") || !node.contains("children_spec") ||
      !node["children_spec"].is_array()) {
    throw FormatError(what + ": a node is not {\"type\", \"context\", \"children_spec\"}");
  }
  TreeSpec spec;
  const Json& type = node["type"];
  const Json& children = node["children_spec"];
  if (type.is_null()) {
    if (!children.empty()) throw FormatError(what + ": a leaf with children");
    return spec;
  }
  const std::string name = type.is_string() ? type.get<std::string>() : type.dump();
  if (name == "builtins.tuple") {
    spec.kind = TreeSpec::Kind::Tuple;
  } else if (name == "builtins.list") {
    spec.kind = TreeSpec::Kind::List;
  } else if (name == "builtins.dict" || name == "collections.OrderedDict") {
    spec.kind = TreeSpec::Kind::Dict;
  } else if (name == "builtins.NoneType") {
    spec.kind = TreeSpec::Kind::None;
  } else if (context_of(node, what).contains("fields")) {
    spec.kind = TreeSpec::Kind::Class;
    spec.type = name;
  } else {
    throw FormatError(what + ": nodes of type '" + name +
                      "' are not supported (tensors in dicts, tuples, lists and generated classes "
                      "are)");
  }
  for (const Json& child : children) spec.children.push_back(parse_node(child, what));
  if (spec.kind == TreeSpec::Kind::Class) read_class_context(context_of(node, what), spec, what);
  if (spec.kind == TreeSpec::Kind::Dict) {
    const Json keys = context_of(node, what);
    if (!keys.is_array() || keys.size() != spec.children.size()) {
      throw FormatError(what + ": a dict whose keys do not match its children");
    }
    for (const Json& key : keys) {
      if (!key.is_string())
        throw FormatError(what + ": a dict key " + key.dump() + " is not a str");
      spec.keys.push_back(key.get<std::string>());
    }
  }
  return spec;
}

TreeSpec parse_spec(const std::string& text, const std::string& what) {
  const Json json = parse_json(text, what);
  if (!json.is_array() || json.size() != 2 || json[0] != 1) {
    throw FormatError(what + " is not a treespec of protocol 1 ([1, {...}])");
  }
  return parse_node(json[1], what);
}

NestedKey key_of(const std::vector<std::string>& path) {
  return path.size() == 1 ? NestedKey(path.front()) : NestedKey(path);
}

std::string path_text(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& part : path) out += (out.empty() ? "" : ".") + part;
  return out;
}

// The leaves of a dict (or a leaf at `path`), each named by its path of keys.
void named_leaves(const TreeSpec& node, std::vector<std::string>& path,
                  std::vector<NestedKey>& out) {
  switch (node.kind) {
    case TreeSpec::Kind::Leaf:
      out.push_back(key_of(path));
      return;
    case TreeSpec::Kind::Dict:
    case TreeSpec::Kind::Class:
      for (size_t i = 0; i < node.children.size(); ++i) {
        path.push_back(node.keys[i]);
        named_leaves(node.children[i], path, out);
        path.pop_back();
      }
      return;
    case TreeSpec::Kind::None:
      return;
    case TreeSpec::Kind::Tuple:
    case TreeSpec::Kind::List:
      throw ValueError("the tensors in the " +
                       std::string(node.kind == TreeSpec::Kind::Tuple ? "tuple" : "list") +
                       " at '" + path_text(path) +
                       "' have no keys: export the model with a dict there");
  }
}

}  // namespace

size_t TreeSpec::leaves() const {
  if (kind == Kind::Leaf) return 1;
  size_t n = 0;
  for (const auto& child : children) n += child.leaves();
  return n;
}

CallSpec CallSpec::parse(const std::string& in_spec, const std::string& out_spec) {
  CallSpec spec;
  spec.in_ = parse_spec(in_spec, "the package's in_spec");
  spec.out_ = parse_spec(out_spec, "the package's out_spec");
  const auto& in = spec.in_;
  if (in.kind != TreeSpec::Kind::Tuple || in.children.size() != 2 ||
      in.children[0].kind != TreeSpec::Kind::Tuple || in.children[1].kind != TreeSpec::Kind::Dict) {
    throw FormatError("the package's in_spec is not (args, kwargs)");
  }
  return spec;
}

std::vector<NestedKey> CallSpec::input_keys(const std::vector<NestedKey>& in_keys) const {
  std::vector<NestedKey> out;
  size_t positional = 0;
  const TreeSpec& args = in_.children[0];
  for (size_t i = 0; i < args.children.size(); ++i) {
    const TreeSpec& arg = args.children[i];
    if (arg.kind == TreeSpec::Kind::Leaf) {
      if (positional == in_keys.size()) {
        throw ValueError("the model takes more positional tensors than the " +
                         std::to_string(in_keys.size()) + " in_keys given");
      }
      out.push_back(in_keys[positional++]);
    } else if (arg.kind == TreeSpec::Kind::Tuple || arg.kind == TreeSpec::Kind::List) {
      throw ValueError("argument " + std::to_string(i) +
                       " of the model is a tuple or list of tensors, which have no keys: export "
                       "the model with a dict or with tensors as arguments");
    } else {
      std::vector<std::string> path;
      named_leaves(arg, path, out);
    }
  }
  std::vector<std::string> path;
  named_leaves(in_.children[1], path, out);  // keyword arguments, by name
  if (positional != in_keys.size()) {
    throw ValueError(std::to_string(in_keys.size()) + " in_keys given for the model's " +
                     std::to_string(positional) + " positional tensors");
  }
  return out;
}

std::vector<NestedKey> CallSpec::output_keys(const std::vector<NestedKey>& out_keys) const {
  const size_t leaves = out_.leaves();
  if (!out_keys.empty()) {
    if (out_keys.size() != leaves) {
      throw ValueError(std::to_string(out_keys.size()) + " out_keys given for the model's " +
                       std::to_string(leaves) + " outputs");
    }
    return out_keys;
  }
  if (out_.kind != TreeSpec::Kind::Dict && out_.kind != TreeSpec::Kind::Class) {
    throw ValueError("the model returns " + std::to_string(leaves) +
                     " tensors without names: give out_keys");
  }
  std::vector<NestedKey> out;
  std::vector<std::string> path;
  named_leaves(out_, path, out);
  return out;
}

}  // namespace tensordict::nn
