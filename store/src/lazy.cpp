// Python's LazyStackedTensorDictStore, read (layout.h): tensordict/store/_store.py at v0.14.0
// writes `__type__` = "lazy_stack", `__count__`, `__stack_dim__` and `__inner_batch_size__`, and
// per leaf either one blob of equal rows or the elements' bytes with an offset table.
#include <ATen/ATen.h>

#include <cstring>

#include "layout.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"

namespace tensordict::store::layout {
namespace {

// The offset table of a heterogeneous leaf: `count + 1` little-endian int64, from 0 up to the
// blob's size, never decreasing.
std::vector<int64_t> offsets(const std::string& path, const std::string& table, int64_t count,
                             size_t blob) {
  const std::string what = "store leaf " + repr(path) + " offset table";
  if (table.size() != static_cast<size_t>(count + 1) * sizeof(int64_t)) {
    throw FormatError(what + " holds " + std::to_string(table.size()) + " bytes; " +
                      std::to_string(count) + " elements need " + std::to_string((count + 1) * 8));
  }
  std::vector<int64_t> out(static_cast<size_t>(count + 1));
  std::memcpy(out.data(), table.data(), table.size());
  if (out.front() != 0 || out.back() != static_cast<int64_t>(blob))
    throw FormatError(what + " does not span the leaf's " + std::to_string(blob) + " bytes");
  for (size_t k = 1; k < out.size(); ++k)
    if (out[k] < out[k - 1]) throw FormatError(what + " decreases at element " + std::to_string(k));
  return out;
}

// Element k's tensor of a heterogeneous leaf: its shape from m:'s `shapes`.
std::vector<at::Tensor> heterogeneous(const std::string& path, const Meta& meta,
                                      const std::string& blob, const std::string& table,
                                      int64_t count) {
  const std::string what = "store metadata of " + repr(path);
  const std::string* shapes_text = meta.field("shapes");
  if (!shapes_text) throw FormatError(what + ": a heterogeneous leaf without 'shapes'");
  const Json shapes = parse_json(*shapes_text, what + " 'shapes'");
  if (!shapes.is_array() || static_cast<int64_t>(shapes.size()) != count)
    throw FormatError(what + ": 'shapes' is not a list of " + std::to_string(count) + " shapes");
  const auto bounds = offsets(path, table, count, blob.size());
  std::vector<at::Tensor> out;
  for (int64_t k = 0; k < count; ++k) {
    Meta element = meta;
    element.shape = int_list(shapes[static_cast<size_t>(k)].dump(), what + " 'shapes'");
    int64_t nbytes = static_cast<int64_t>(c10::elementSize(meta.dtype));
    for (int64_t d : element.shape) {
      if (d != 0 && nbytes > TensorDictStore::kMaxValueBytes / d)
        throw FormatError(what + ": element " + std::to_string(k) + "'s shape is too large");
      nbytes *= d;
    }
    element.nbytes = nbytes;
    const auto begin = static_cast<size_t>(bounds[static_cast<size_t>(k)]);
    const auto end = static_cast<size_t>(bounds[static_cast<size_t>(k) + 1]);
    out.push_back(from_bytes(path, blob.substr(begin, end - begin), element));
  }
  return out;
}

}  // namespace

namespace {

// One leaf of a lazy stack, ready to send.
struct LazyLeaf {
  std::string path;
  std::string blob;
  std::string offsets;  // heterogeneous: the d:<path>:idx table
  std::vector<std::pair<std::string, std::string>> meta;
};

LazyLeaf lazy_leaf(const std::string& path, const NestedKey& key,
                   const std::vector<TensorDict>& elements) {
  std::vector<at::Tensor> parts;
  for (size_t k = 0; k < elements.size(); ++k) {
    if (!elements[k].contains(key))
      throw KeyError("lazy stack element " + std::to_string(k) + " has no key " + key.repr() +
                     ", which element 0 has: a store holds the keys every element has");
    const Value v = elements[k].get_value(key);
    if (!v.is_tensor())
      throw TypeError("store entry " + key.repr() + " of a lazy stack is a " + v.kind_name() +
                      ": C++ stores only tensor leaves of lazy stacks yet");
    parts.push_back(v.tensor());
  }
  const at::ScalarType dtype = parts.front().scalar_type();
  if (!stored_dtype(dtype))
    throw TypeError("store entry " + key.repr() + ": dtype " + dtype_text(dtype) +
                    " cannot be stored");
  bool homogeneous = true;
  int64_t total = 0;
  for (const at::Tensor& t : parts) {
    if (t.scalar_type() != dtype)
      throw TypeError("store entry " + key.repr() + " of a lazy stack has dtypes " +
                      dtype_text(dtype) + " and " + dtype_text(t.scalar_type()) +
                      "; the layout keeps one dtype per leaf");
    homogeneous = homogeneous && t.sizes() == parts.front().sizes();
    total += static_cast<int64_t>(t.nbytes());
    if (total > TensorDictStore::kMaxValueBytes)
      throw ShapeError("store entry " + key.repr() +
                       ": its elements exceed the server's 512 MB "
                       "value limit");
  }
  LazyLeaf leaf{path, {}, {}, {}};
  std::vector<int64_t> bounds{0};
  Json shapes = Json::array();
  for (const at::Tensor& t : parts) {
    leaf.blob += to_bytes(t);
    bounds.push_back(static_cast<int64_t>(leaf.blob.size()));
    shapes.push_back(t.sizes().vec());
  }
  std::vector<int64_t> full{static_cast<int64_t>(parts.size())};
  full.insert(full.end(), parts.front().sizes().begin(), parts.front().sizes().end());
  leaf.meta = {{"shape", shape_text(full)},
               {"dtype", dtype_text(dtype)},
               {"homogeneous", homogeneous ? "1" : "0"}};
  if (!homogeneous) {
    leaf.meta.emplace_back("shapes", dumps_python(shapes));
    leaf.offsets.assign(reinterpret_cast<const char*>(bounds.data()),
                        bounds.size() * sizeof(int64_t));
  }
  return leaf;
}

}  // namespace

LazyShape write_lazy_stack(Connection& conn,
                           const std::function<std::string(const std::string&)>& key,
                           const TensorDict& td, std::optional<at::Device> device) {
  const std::vector<TensorDict>& elements = td.tensordicts();
  LazyShape shape{static_cast<int64_t>(elements.size()), td.stack_dim(),
                  elements.front().batch_size()};
  std::vector<LazyLeaf> leaves;
  for (const NestedKey& k : elements.front().keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    for (const TensorDict& e : elements) {
      if (e.contains(k) && e.get_value(k).is_tensordict() && e.get_tensordict(k).is_lazy_stack())
        throw TypeError("store entry " + k.repr() + ": nested lazy stacks cannot be stored yet");
    }
    leaves.push_back(lazy_leaf(path_of(k), k, elements));
  }
  const std::string what = "writing the metadata of lazy stack store " + key("");
  check_ok(exchange(conn,
                    {{"SET", key("__type__"), "lazy_stack"},
                     {"SET", key("__count__"), std::to_string(shape.count)},
                     {"SET", key("__stack_dim__"), std::to_string(shape.stack_dim)},
                     {"SET", key("__inner_batch_size__"), shape_text(shape.inner)},
                     {"SET", key("__device__"), device ? device->str() : ""}},
                    true, what),
           what);
  for (const LazyLeaf& leaf : leaves) {
    Command hset{"HSET", key("m:" + leaf.path)};
    for (const auto& [field, value] : leaf.meta) {
      hset.push_back(field);
      hset.push_back(value);
    }
    std::vector<Command> cmds{{"SET", key("d:" + leaf.path), leaf.blob},
                              {"DEL", key("m:" + leaf.path), key("d:" + leaf.path + ":idx")},
                              hset,
                              {"SADD", key("__keys__"), leaf.path}};
    if (!leaf.offsets.empty())
      cmds.push_back({"SET", key("d:" + leaf.path + ":idx"), leaf.offsets});
    const std::string what_leaf = "writing store leaf " + repr(leaf.path);
    check_ok(exchange(conn, cmds, true, what_leaf), what_leaf);
  }
  return shape;
}

BatchSize LazyShape::batch_size() const {
  BatchSize out = inner;
  out.insert(out.begin() + stack_dim, count);
  return out;
}

TensorDict read_lazy_stack(Connection& conn,
                           const std::function<std::string(const std::string&)>& key,
                           const Keys& paths, const LazyShape& shape,
                           std::optional<at::Device> device) {
  std::vector<Command> cmds;
  for (const auto& p : paths) {
    cmds.push_back({"HGETALL", key("m:" + p)});
    cmds.push_back({"GET", key("d:" + p)});
    cmds.push_back({"GET", key("d:" + p + ":idx")});
  }
  const auto replies = exchange(conn, cmds, true, "reading lazy stack store " + key(""));
  std::vector<std::vector<std::pair<NestedKey, at::Tensor>>> leaves(
      static_cast<size_t>(shape.count));
  size_t r = 0;
  for (const auto& p : paths) {
    const Reply& hash = replies[r++];
    const Reply& data = replies[r++];
    const Reply& table = replies[r++];
    if (data.type == Reply::Type::Nil) continue;  // deleted since the registry was read
    const Meta meta = parse_meta(p, hash);
    if (meta.non_tensor)
      throw TypeError("store leaf " + repr(p) +
                      " of a lazy stack is non-tensor data, which C++ "
                      "does not read from lazy stack stores yet");
    const std::string what = "store leaf " + repr(p);  // named: blob refers into data
    const std::string& blob = string_reply(data, what);
    std::vector<at::Tensor> rows;
    const std::string* homogeneous = meta.field("homogeneous");
    if (!homogeneous || *homogeneous == "1") {
      if (meta.shape.empty() || meta.shape[0] != shape.count)
        throw FormatError("store leaf " + repr(p) + " of shape " + shape_text(meta.shape) +
                          " does not hold the stack's " + std::to_string(shape.count) +
                          " elements");
      rows = from_bytes(p, blob, meta).unbind(0);
    } else {
      rows = heterogeneous(p, meta, blob, string_reply(table, "store leaf " + repr(p) + " :idx"),
                           shape.count);
    }
    for (size_t k = 0; k < rows.size(); ++k)
      leaves[k].emplace_back(key_of(p), device ? rows[k].to(*device) : rows[k]);
  }
  std::vector<TensorDict> elements;
  for (auto& element : leaves) {
    // Elements of a ragged stack have batch sizes of their own: the inner one's dims, from their
    // first leaf when it does not fit them all.
    BatchSize batch = shape.inner;
    if (!element.empty() && !std::all_of(element.begin(), element.end(), [&](const auto& leaf) {
          const auto sizes = leaf.second.sizes();
          return sizes.size() >= batch.size() &&
                 std::equal(batch.begin(), batch.end(), sizes.begin());
        })) {
      const auto sizes = element.front().second.sizes();
      if (sizes.size() < batch.size())
        throw FormatError("store leaf " + element.front().first.repr() +
                          " has fewer dims than "
                          "the stack's inner batch size " +
                          shape_text(batch));
      batch.assign(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(batch.size()));
    }
    TensorDict td(std::vector<std::pair<NestedKey, Value>>{}, batch, device);
    for (auto& [k, t] : element) td.set(k, std::move(t));
    elements.push_back(std::move(td));
  }
  return lazy_stack(elements, shape.stack_dim);
}

}  // namespace tensordict::store::layout
