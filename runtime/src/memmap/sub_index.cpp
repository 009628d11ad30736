// The index of a _SubTensorDict directory, as Python tensordict writes it (td[index] saved as
// a view: meta.json {"_type": "<class 'tensordict._td._SubTensorDict'>", "index": ...} beside the
// source TensorDict under _source/). Python tags each container of the index:
//   ["tuple", [items]]  ["list", [items]]  ["slice", {"start", "stop", "step"}]
//   ["range", {"start", "stop", "step"}]  ["tensor", nested lists, "device"]  ["ellipsis"]
// and writes ints, None and bools as they are; an untagged list is an older tuple.
//
// Every item is checked against the batch dims of the source it lands on before a tensor is made
// from it, the same way on every device (ATen skips bounds checks on "meta", which tdtool ls
// loads): ints and positions within their dim, masks of exactly the dims they cover, ranges no
// longer than their dim (so that one is never a large allocation), no more positions than the dim
// has rows. The work and memory are linear in the index's JSON and the source's batch dims.
#include <ATen/ATen.h>

#include <functional>
#include <limits>
#include <optional>

#include "memmap/internal.h"
#include "tensordict/index.h"

namespace tensordict::memmap::detail {
namespace {

// Nones and bools add dims; no tensor op takes more than this many dims beyond its source's.
constexpr size_t kMaxAddedDims = 64;

int64_t int_of(const Json& value, const std::string& what, const std::string& where) {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
    throw FormatError(where + ": " + what + " is not an int64: " + value.dump());
  }
  return value.get<int64_t>();
}

std::optional<int64_t> bound(const Json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return int_of(*it, std::string("the index's \"") + name + "\"", where);
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
        flat.push_back(int_of(node, "an entry of the index tensor", where));
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

struct RangeItem {
  int64_t start, stop, step;
  // Python's len(range(start, stop, step)), without overflow: unsigned differences of ordered
  // int64s are exact.
  uint64_t length() const {
    if (step > 0 ? stop <= start : stop >= start) return 0;
    const uint64_t span = step > 0 ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start)
                                   : static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
    const uint64_t by = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
    return span / by + (span % by != 0 ? 1 : 0);
  }
};

// One entry of the index, read from its JSON: the batch dims of the source it takes, and checked
// against them before it becomes an IndexItem.
struct Item {
  enum Kind { Int, SliceItem, NoneItem, Bool, EllipsisItem, Range, Positions, Mask };
  explicit Item(Kind k, int64_t v = 0) : kind(k), value(v) {}

  Kind kind;
  int64_t value;               // Int; Bool (0 or 1)
  std::optional<Slice> slice;  // SliceItem
  RangeItem range{};           // Range
  at::Tensor tensor;           // Positions (long, 0-dim: an int) and Mask (bool)

  size_t dims() const {
    switch (kind) {
      case Int:
      case SliceItem:
      case Range:
      case Positions:
        return 1;
      case Mask:
        return static_cast<size_t>(std::max<int64_t>(tensor.dim(), 1));
      default:
        return 0;
    }
  }
};

Item read_item(const Json& item, const std::string& where) {
  if (item.is_boolean()) return Item{Item::Bool, item.get<bool>() ? 1 : 0};
  if (item.is_number()) return Item{Item::Int, int_of(item, "an index entry", where)};
  if (item.is_null()) return Item{Item::NoneItem};
  if (!item.is_array() || item.empty() || !item[0].is_string()) {
    throw FormatError(where + ": an index entry Python does not write: " + item.dump());
  }
  const std::string tag = item[0].get<std::string>();
  if (tag == "ellipsis") return Item{Item::EllipsisItem};
  if (item.size() < 2) throw FormatError(where + ": the index entry " + item.dump() + " is cut");
  const Json& content = item[1];
  if ((tag == "slice" || tag == "range") && content.is_object()) {
    const auto start = bound(content, "start", where);
    const auto stop = bound(content, "stop", where);
    const int64_t step = bound(content, "step", where).value_or(1);
    if (step == 0)
      throw FormatError(where + ": the " + tag + " index " + item.dump() + " has step 0");
    if (tag == "slice") {
      Item out{Item::SliceItem};
      out.slice = Slice(start, stop, step);
      return out;
    }
    if (!stop) throw FormatError(where + ": a range index without a stop");
    Item out{Item::Range};
    out.range = RangeItem{start.value_or(0), *stop, step};
    return out;
  }
  if (tag == "tensor" || tag == "list") {
    Item out{Item::Positions};
    out.tensor = tensor_from_json(content, where);
    if (out.tensor.scalar_type() == at::kBool)
      out.kind = out.tensor.dim() == 0 ? Item::Bool : Item::Mask;
    if (out.kind == Item::Bool) out.value = out.tensor.item<bool>() ? 1 : 0;
    return out;
  }
  throw FormatError(where + ": an index entry Python does not write: " + item.dump());
}

void check_position(int64_t position, int64_t size, size_t dim, const std::string& where) {
  if (position < -size || position >= size) {
    throw FormatError(where + ": index " + std::to_string(position) + " is out of range for dim " +
                      std::to_string(dim) + " of its _source, of size " + std::to_string(size));
  }
}

// The IndexItems of `item`, which takes the source's dims from `dim` on.
void add_checked(const Item& item, const BatchSize& source, size_t dim, const std::string& where,
                 Index& out) {
  const int64_t size = dim < source.size() ? source[dim] : 0;
  switch (item.kind) {
    case Item::Int:
      check_position(item.value, size, dim, where);
      return void(out.emplace_back(item.value));
    case Item::SliceItem:
      return void(out.emplace_back(*item.slice));
    case Item::NoneItem:
      return void(out.emplace_back(std::nullopt));
    case Item::Bool:
      return void(out.emplace_back(item.value != 0));
    case Item::EllipsisItem:
      return void(out.emplace_back(Ellipsis));
    case Item::Range: {
      const RangeItem& r = item.range;
      const uint64_t positions = r.length();
      if (positions > static_cast<uint64_t>(size)) {
        throw FormatError(where + ": a range index of " + std::to_string(positions) +
                          " positions, more than the " + std::to_string(size) + " rows of dim " +
                          std::to_string(dim) + " of its _source");
      }
      const auto length = static_cast<int64_t>(positions);
      if (length > 0) {
        check_position(r.start, size, dim, where);
        check_position(r.start + (length - 1) * r.step, size, dim, where);
      }
      return void(out.emplace_back(at::arange(r.start, r.start + length * r.step, r.step)));
    }
    case Item::Positions: {
      if (item.tensor.numel() > std::max<int64_t>(size, 1)) {
        throw FormatError(where + ": the index selects " + std::to_string(item.tensor.numel()) +
                          " positions of dim " + std::to_string(dim) + ", which has " +
                          std::to_string(size) + " rows");
      }
      if (item.tensor.numel() > 0) {
        check_position(item.tensor.min().item<int64_t>(), size, dim, where);
        check_position(item.tensor.max().item<int64_t>(), size, dim, where);
      }
      return void(out.emplace_back(item.tensor));
    }
    case Item::Mask: {
      const auto covered = at::IntArrayRef(source).slice(dim, item.tensor.dim());
      if (!item.tensor.sizes().equals(covered)) {
        throw FormatError(where + ": a mask of shape " + shape_str(item.tensor.sizes()) +
                          " over dims of its _source of sizes " + shape_str(covered));
      }
      // The positions it selects, one long tensor per dim: the same selection, which tensors of
      // device "meta" can take too.
      for (const at::Tensor& positions : item.tensor.nonzero().unbind(1))
        out.emplace_back(positions);
      return;
    }
  }
}

}  // namespace

Index index_from_json(const Json& index, const BatchSize& source, const std::string& where) {
  const Json* entries = nullptr;
  Json single = Json::array();
  if (index.is_array() && !index.empty() && index[0] == "tuple" && index.size() == 2 &&
      index[1].is_array()) {
    entries = &index[1];
  } else if (index.is_array() && (index.empty() || !index[0].is_string())) {
    entries = &index;  // untagged: a tuple
  } else {
    single.push_back(index);
    entries = &single;
  }
  if (entries->size() > source.size() + kMaxAddedDims) {
    throw FormatError(where + ": an index of " + std::to_string(entries->size()) +
                      " entries for a _source of " + std::to_string(source.size()) + " dims");
  }
  std::vector<Item> items;
  size_t taken = 0, ellipses = 0;
  for (const Json& entry : *entries) {
    items.push_back(read_item(entry, where));
    taken += items.back().dims();
    ellipses += items.back().kind == Item::EllipsisItem ? 1 : 0;
  }
  if (taken > source.size() || ellipses > 1) {
    throw FormatError(where + ": the index " +
                      (ellipses > 1 ? std::string("has more than one ellipsis")
                                    : "takes " + std::to_string(taken) + " dims, its _source has " +
                                          std::to_string(source.size())));
  }
  // Items after an ellipsis take the last dims.
  Index out;
  size_t dim = 0;
  for (const Item& item : items) {
    if (item.kind == Item::EllipsisItem) dim = source.size() - (taken - dim);
    add_checked(item, source, dim, where, out);
    dim += item.dims();
  }
  return out;
}

}  // namespace tensordict::memmap::detail
