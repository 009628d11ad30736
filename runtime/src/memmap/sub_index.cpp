// The index of a _SubTensorDict directory, as Python tensordict writes it (td[index] saved as
// a view: meta.json {"_type": "<class 'tensordict._td._SubTensorDict'>", "index": ...} beside the
// source TensorDict under _source/). Python tags each container of the index:
//   ["tuple", [items]]  ["list", [items]]  ["slice", {"start", "stop", "step"}]
//   ["range", {"start", "stop", "step"}]  ["tensor", nested lists, "device"]  ["ellipsis"]
// and writes ints, None and bools as they are; an untagged list is an older tuple.
#include <ATen/ATen.h>

#include <functional>
#include <optional>

#include "memmap/internal.h"
#include "tensordict/index.h"

namespace tensordict::memmap::detail {
namespace {

std::optional<int64_t> bound(const Json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) {
    throw FormatError(where + ": the index's \"" + name + "\" is not an int: " + it->dump());
  }
  return it->get<int64_t>();
}

// A tensor of the nested lists `values` (bools or ints, rectangular).
at::Tensor tensor_from_json(const Json& values, const std::string& where) {
  std::vector<int64_t> shape;
  for (const Json* level = &values; level->is_array(); level = &(*level)[0]) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  std::vector<int64_t> flat;
  bool bools = false;
  bool ints = false;
  std::function<void(const Json&, size_t)> walk = [&](const Json& node, size_t dim) {
    if (dim == shape.size()) {
      if (node.is_boolean()) {
        bools = true;
        flat.push_back(node.get<bool>() ? 1 : 0);
      } else if (node.is_number_integer()) {
        ints = true;
        flat.push_back(node.get<int64_t>());
      } else {
        throw FormatError(where + ": the index tensor holds " + node.dump() +
                          ", not a bool or an int");
      }
      return;
    }
    if (!node.is_array() || static_cast<int64_t>(node.size()) != shape[dim]) {
      throw FormatError(where + ": the index tensor's lists are not rectangular");
    }
    for (const Json& child : node) walk(child, dim + 1);
  };
  walk(values, 0);
  if (bools && ints) throw FormatError(where + ": the index tensor mixes bools and ints");
  const at::Tensor t = at::tensor(flat, at::kLong).reshape(shape);
  return bools ? t.to(at::kBool) : t;
}

void add_item(const Json& item, const std::string& where, Index& out);

// A mask as the positions it selects, one long tensor per dim (the same selection, and one that
// tensors of device "meta", which tdtool ls loads, can take).
void add_tensor(const at::Tensor& t, Index& out) {
  if (t.scalar_type() != at::kBool || t.dim() == 0) {
    out.emplace_back(t);
    return;
  }
  for (const at::Tensor& positions : t.nonzero().unbind(1)) out.emplace_back(positions);
}

void add_item(const Json& item, const std::string& where, Index& out) {
  if (item.is_number_integer()) return void(out.emplace_back(item.get<int64_t>()));
  if (item.is_null()) return void(out.emplace_back(std::nullopt));
  if (item.is_boolean()) return void(out.emplace_back(item.get<bool>()));
  if (!item.is_array() || item.empty() || !item[0].is_string()) {
    throw FormatError(where + ": an index entry Python does not write: " + item.dump());
  }
  const std::string tag = item[0].get<std::string>();
  if (tag == "ellipsis") return void(out.emplace_back(Ellipsis));
  if (item.size() < 2) throw FormatError(where + ": the index entry " + item.dump() + " is cut");
  const Json& content = item[1];
  if (tag == "slice" && content.is_object()) {
    return void(
        out.emplace_back(Slice(bound(content, "start", where), bound(content, "stop", where),
                               bound(content, "step", where).value_or(1))));
  }
  if (tag == "range" && content.is_object()) {
    const int64_t start = bound(content, "start", where).value_or(0);
    const auto stop = bound(content, "stop", where);
    if (!stop) throw FormatError(where + ": a range index without a stop");
    return add_tensor(at::arange(start, *stop, bound(content, "step", where).value_or(1)), out);
  }
  if (tag == "tensor" || tag == "list") return add_tensor(tensor_from_json(content, where), out);
  throw FormatError(where + ": an index entry Python does not write: " + item.dump());
}

}  // namespace

Index index_from_json(const Json& index, const std::string& where) {
  Index out;
  if (index.is_array() && !index.empty() && index[0] == "tuple" && index.size() == 2 &&
      index[1].is_array()) {
    for (const Json& item : index[1]) add_item(item, where, out);
  } else if (index.is_array() && (index.empty() || !index[0].is_string())) {
    for (const Json& item : index) add_item(item, where, out);  // untagged: a tuple
  } else {
    add_item(index, where, out);
  }
  return out;
}

}  // namespace tensordict::memmap::detail
