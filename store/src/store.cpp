// TensorDictStore on Python tensordict 0.14's layout (tensordict/store/_store.py), every key
// `{prefix}:{<td_id>}:<suffix>`:
//   d:<a.b.c>       string: a leaf's raw bytes (C-contiguous, little-endian), or its JSON text
//   m:<a.b.c>       hash: shape (JSON list) and dtype ("torch.float32"), or is_non_tensor "1"
//                   and encoding ("json", "json_array"; "pickle" is Python-only)
//   __keys__        set: the dotted path of every leaf
//   __batch_size__  string: JSON list; __device__: "" or "cpu", "cuda:0"; __tensorclass__
// Nested TensorDicts leave no key of their own: they are the paths' prefixes.
#include <ATen/ATen.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "layout.h"
#include "tensordict/class_registry.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"
#include "tensordict/store.h"

namespace tensordict::store {

using namespace layout;

struct TensorDictStore::Impl {
  std::shared_ptr<Connection> conn;
  std::string prefix;
  std::string td_id;
  BatchSize batch;
  std::optional<at::Device> device;
  std::optional<std::string> tensorclass;
  /// Set for Python's LazyStackedTensorDictStore (lazy.cpp): read whole by to_local.
  std::optional<LazyShape> lazy;

  /// Python's cache_metadata, for the key registry: the registry as this handle (and its copies)
  /// last read or changed it, so that a call costs no SMEMBERS round trip. Another client's new
  /// keys are seen after refresh(); leaves' metadata is always read with their data, in the same
  /// transaction (docs/store.md, "Semantics").
  bool caching = true;
  mutable std::mutex cache_mutex;
  mutable std::shared_ptr<const Keys> cached_keys;  // null: read the registry on next use

  void forget() const {
    std::lock_guard<std::mutex> lock(cache_mutex);
    cached_keys.reset();
  }
  // Records what a write or a delete did to the registry.
  void remember(const std::vector<std::string>& added,
                const std::vector<std::string>& removed = {}) const {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (!cached_keys) return;
    auto keys = std::make_shared<Keys>(*cached_keys);
    keys->insert(added.begin(), added.end());
    for (const auto& k : removed) keys->erase(k);
    cached_keys = std::move(keys);
  }

  std::string key(std::string_view suffix) const {
    return prefix + ":{" + td_id + "}:" + std::string(suffix);
  }
  std::string data_key(const std::string& path) const { return key("d:" + path); }
  // Operations on a lazy stack store other than to_local, keys and clear_redis.
  void refuse_lazy(const char* op) const {
    if (lazy)
      throw TypeError(std::string(op) + ": store " + key("") +
                      " holds a lazy stack, which C++ reads whole with to_local() (its other "
                      "operations are not implemented yet)");
  }
  std::string meta_key(const std::string& path) const { return key("m:" + path); }

  // The registry of leaf paths (`needed_for`: the entry or operation asking, for messages).
  std::shared_ptr<const Keys> all_keys(const std::string& needed_for) const {
    if (caching) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      if (cached_keys) return cached_keys;
    }
    // Named for the entry or the operation that needs it: that is what a caller knows.
    const std::string what = "store key registry " + key("__keys__") + " (for " + needed_for + ")";
    const Reply r = exchange(*conn, {{"SMEMBERS", key("__keys__")}}, false, what).front();
    if (r.type == Reply::Type::Error) throw_reply(r, what);
    Keys out;
    for (const Reply& e : r.element) {
      // A path is dot-separated non-empty components: "a..b" or ".a" name no entry.
      if (e.type != Reply::Type::String || e.str.empty() || e.str.front() == '.' ||
          e.str.back() == '.' || e.str.find("..") != std::string::npos)
        throw FormatError(what + " holds '" + e.str + "', which is not a key path");
      out.insert(e.str);
    }
    auto keys = std::make_shared<const Keys>(std::move(out));
    if (caching) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      cached_keys = keys;
    }
    return keys;
  }

  // A leaf's metadata and the length of its data, read together.
  std::pair<Meta, int64_t> meta_and_size(const std::string& path) const {
    const std::string what = "store leaf " + repr(path);
    const auto r =
        exchange(*conn, {{"HGETALL", meta_key(path)}, {"STRLEN", data_key(path)}}, true, what);
    if (r[1].type == Reply::Type::Error) throw_reply(r[1], what);
    return {parse_meta(path, r[0]), r[1].integer};
  }

  Meta tensor_meta(const std::string& path, const NestedKey& name) const {
    const auto keys = all_keys(repr(path));
    if (!keys->count(path)) {
      for (const auto& k : *keys)
        if (under(k, path))
          throw TypeError("store entry " + name.repr() + " is a nested TensorDict, not a tensor");
      throw KeyError("key " + name.repr() + " not found in the store " + key(""));
    }
    auto [meta, size] = meta_and_size(path);
    if (meta.non_tensor)
      throw TypeError("store entry " + name.repr() + " is non-tensor data, not a tensor");
    if (size != meta.nbytes)
      throw FormatError("store leaf " + name.repr() + " holds " + std::to_string(size) +
                        " bytes; its shape " + shape_text(meta.shape) + " and dtype " +
                        dtype_text(meta.dtype) + " need " + std::to_string(meta.nbytes));
    if (meta.shape.empty())
      throw IndexError("store leaf " + name.repr() + " is 0-dim: it has no rows to index");
    return meta;
  }

  // Rows [start, stop) of a leaf, one GETRANGE of their bytes.
  at::Tensor read_rows(const std::string& path, const Meta& meta, int64_t start,
                       int64_t stop) const {
    const int64_t n = meta.shape[0];
    if (start < 0 || stop < start || stop > n)
      throw IndexError("store leaf " + repr(path) + ": rows [" + std::to_string(start) + ", " +
                       std::to_string(stop) + ") are outside dim 0 of size " + std::to_string(n));
    Meta part = meta;
    part.shape[0] = stop - start;
    part.nbytes = part.row_bytes * (stop - start);
    std::string bytes;
    if (part.nbytes > 0) {
      const int64_t first = start * meta.row_bytes;
      const std::string what = "store leaf " + repr(path);
      bytes = string_reply(exchange(*conn,
                                    {{"GETRANGE", data_key(path), std::to_string(first),
                                      std::to_string(first + part.nbytes - 1)}},
                                    false, what)
                               .front(),
                           what);
    }
    at::Tensor t = from_bytes(path, bytes, part);
    return device ? t.to(*device) : t;
  }

  // Rows from `start`, one SETRANGE of their bytes; cast as tensor assignment casts.
  void write_rows(const std::string& path, const Meta& meta, int64_t start,
                  const at::Tensor& value) const {
    const std::vector<int64_t> row_shape(meta.shape.begin() + 1, meta.shape.end());
    const auto sizes = value.sizes();
    if (sizes.size() != meta.shape.size() ||
        !std::equal(row_shape.begin(), row_shape.end(), sizes.begin() + 1))
      throw ShapeError("store leaf " + repr(path) + " of shape " + shape_text(meta.shape) +
                       ": cannot write rows of shape " + shape_text(sizes));
    const int64_t count = sizes[0];
    if (start < 0 || start > meta.shape[0] - count)  // (no overflow for any start)
      throw IndexError("store leaf " + repr(path) + ": rows [" + std::to_string(start) + ", " +
                       std::to_string(start + count) + ") are outside dim 0 of size " +
                       std::to_string(meta.shape[0]));
    if (count == 0 || meta.row_bytes == 0) return;
    const std::string what = "writing rows of store leaf " + repr(path);
    check_ok(exchange(*conn,
                      {{"SETRANGE", data_key(path), std::to_string(start * meta.row_bytes),
                        to_bytes(value.to(meta.dtype))}},
                      false, what),
             what);
  }

  // Refuses writes that would make a path both a leaf and a nested level.
  void check_structure(const std::vector<std::string>& paths, const Keys& keys) const {
    for (const auto& path : paths) {
      // A leaf below `path` sorts first among the keys starting with "path.".
      const std::string level = path + ".";
      const auto below = keys.lower_bound(level);
      if (below != keys.end() && below->compare(0, level.size(), level) == 0)
        throw TypeError("store entry " + repr(path) +
                        " is a nested TensorDict: delete it before storing a leaf there");
      for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
        const std::string above = path.substr(0, dot);
        if (keys.count(above))
          throw TypeError("store entry " + repr(above) + " is a leaf: cannot store " + repr(path) +
                          " under it");
      }
    }
  }

  void write(const std::vector<Leaf>& leaves) const {
    std::vector<std::string> paths;
    for (const auto& l : leaves) paths.push_back(l.path);
    check_structure(paths, *all_keys(repr(paths.empty() ? std::string() : paths.front())));
    // One transaction per leaf, as Python's pipelines: a leaf's data, hash and registry entry
    // change together; every leaf's transaction goes in one round trip. The hash is replaced,
    // not merged (HSET alone would keep a former non-tensor entry's is_non_tensor field).
    // Values are sent from the tensors' memory.
    const std::string registry = key("__keys__");
    std::vector<std::string> names;  // d: and m: keys, alive while the views are
    names.reserve(2 * leaves.size());
    std::vector<std::vector<Connection::CommandView>> groups;
    for (const auto& l : leaves) {
      const std::string& data = names.emplace_back(data_key(l.path));
      const std::string& meta = names.emplace_back(meta_key(l.path));
      Connection::CommandView hset{"HSET", meta};
      for (const auto& [field, value] : l.meta) {
        hset.push_back(field);
        hset.push_back(value);
      }
      groups.push_back({{"SET", data, l.data()}, {"DEL", meta}, hset, {"SADD", registry, l.path}});
    }
    const std::string what = leaves.size() == 1 ? "writing store leaf " + repr(paths.front())
                                                : "writing store " + key("");
    std::vector<std::vector<Reply>> replies;
    try {
      replies = exchange_transactions(*conn, groups, what);
    } catch (...) {
      forget();  // the transactions may or may not have run
      throw;
    }
    remember(paths);
    for (size_t i = 0; i < leaves.size(); ++i)
      check_ok(replies[i], "writing store leaf " + repr(leaves[i].path));
  }

  Leaf tensor_leaf(const std::string& path, const at::Tensor& value) const {
    if (!value.defined()) throw TypeError("store entry " + repr(path) + ": undefined tensor");
    if (!stored_dtype(value.scalar_type()))
      throw TypeError("store entry " + repr(path) + ": dtype " + dtype_text(value.scalar_type()) +
                      " cannot be stored (the layout carries bool, integers, floats, complex)");
    const auto sizes = value.sizes();
    if (sizes.size() < batch.size() || !std::equal(batch.begin(), batch.end(), sizes.begin()))
      throw ShapeError("store entry " + repr(path) + ": shape " + shape_text(sizes) +
                       " does not start with the batch size " + shape_text(batch));
    if (static_cast<int64_t>(value.nbytes()) > kMaxValueBytes)
      throw ShapeError("store entry " + repr(path) + ": " + std::to_string(value.nbytes()) +
                       " bytes exceed the server's 512 MB value limit");
    return {path,
            {},
            contiguous_cpu(value),
            {{"shape", shape_text(sizes)}, {"dtype", dtype_text(value.scalar_type())}}};
  }

  Leaf json_leaf(const std::string& path, const Json& value, const char* encoding) const {
    std::string text = dumps_python(value);
    if (static_cast<int64_t>(text.size()) > kMaxValueBytes)
      throw ShapeError("store entry " + repr(path) + ": its JSON exceeds the 512 MB value limit");
    return {path, std::move(text), {}, {{"is_non_tensor", "1"}, {"encoding", encoding}}};
  }

  // The leaves of `td` under `path` (empty: the root), in its key order.
  void collect(const TensorDict& td, const std::string& path, std::vector<Leaf>& out) const {
    if (td.is_lazy_stack())
      throw TypeError("store entry " + (path.empty() ? std::string("(root)") : repr(path)) +
                      ": lazy stacks cannot be stored yet");
    for (const auto& [k, v] : td.items()) {
      const std::string p = path.empty() ? path_of(k) : path + "." + path_of(k);
      if (const at::Tensor* t = v.tensor_if()) {
        out.push_back(tensor_leaf(p, *t));
      } else if (const TensorDict* nested = v.tensordict_if()) {
        collect(*nested, p, out);
      } else if (v.is_non_tensor_data()) {
        out.push_back(json_leaf(p, v.non_tensor_data().data, "json"));
      } else {
        // A stack along one dim is Python's json_array (what per-row writes make, read back as
        // a stack); deeper stacks go as Python's set() writes them: the nested list, "json".
        const NonTensorStack& s = v.non_tensor_stack();
        if (s.shape().size() == 1)
          out.push_back(json_leaf(p, Json(s.items().to_vector()), "json_array"));
        else
          out.push_back(json_leaf(p, s.tolist(), "json"));
      }
    }
  }

  Value decode(const std::string& path, std::string&& bytes, const Meta& meta) const {
    if (!meta.non_tensor) {
      at::Tensor t = from_bytes(path, std::move(bytes), meta);
      return device ? t.to(*device) : t;
    }
    const std::string what = "store non-tensor entry " + repr(path);
    if (meta.encoding == "json") return NonTensorData{parse_json(bytes, what)};
    if (meta.encoding == "json_array") {
      Json items = parse_json(bytes, what);
      if (!items.is_array()) throw FormatError(what + ": json_array data is not a list");
      const int64_t n = static_cast<int64_t>(items.size());
      return NonTensorStack({n}, std::vector<Json>(items.begin(), items.end()));
    }
    if (meta.encoding == "pickle")
      throw TypeError(what + " holds a pickled Python object, which C++ cannot read");
    throw FormatError(what + ": unknown encoding '" + meta.encoding + "'");
  }

  // The leaves `paths`, read in one transaction (Python: one pipeline of GETs then HGETALLs).
  std::vector<std::pair<std::string, Value>> read(const std::vector<std::string>& paths) const {
    std::vector<Command> cmds;
    for (const auto& p : paths) cmds.push_back({"GET", data_key(p)});
    for (const auto& p : paths) cmds.push_back({"HGETALL", meta_key(p)});
    auto replies = exchange(*conn, cmds, true,
                            paths.size() == 1 ? "reading store leaf " + repr(paths.front())
                                              : "reading store " + key(""));
    std::vector<std::pair<std::string, Value>> out;
    for (size_t i = 0; i < paths.size(); ++i) {
      // A leaf deleted since the registry was read is skipped, as Python's to_tensordict does;
      // the cached registry is stale then.
      if (replies[i].type == Reply::Type::Nil) {
        forget();
        continue;
      }
      const Meta meta = parse_meta(paths[i], replies[paths.size() + i]);
      string_reply(replies[i], "store leaf " + repr(paths[i]));  // (checks the reply's type)
      out.emplace_back(paths[i], decode(paths[i], std::move(replies[i].str), meta));
    }
    return out;
  }

  // The leaves under `level` (empty: all) as a TensorDict of the store's batch size.
  TensorDict subtree(const std::string& level, const Keys& keys) const {
    std::vector<std::string> paths;
    for (const auto& k : keys)
      if (level.empty() || under(k, level)) paths.push_back(k);
    TensorDict out(std::vector<std::pair<NestedKey, Value>>{}, batch, device);
    const size_t strip = level.empty() ? 0 : level.size() + 1;
    for (auto& [path, value] : read(paths)) out.set(key_of(path.substr(strip)), std::move(value));
    return out;
  }

  /// A leaf to allocate: its path, whole shape and dtype.
  struct Allocation {
    std::string path;
    std::vector<int64_t> shape;
    at::ScalarType dtype;
  };
  // Zero-filled leaves made on the server, each sized by one SETRANGE of its last byte (no bytes
  // cross the network), in one round trip: Python's from_schema and first indexed write. Every
  // leaf is checked before anything is sent.
  void allocate(const std::vector<Allocation>& leaves, const Keys& keys) const {
    std::vector<std::string> paths;
    std::vector<std::vector<std::string>> texts;  // per leaf: d:, m:, last byte, shape, dtype
    for (const auto& l : leaves) {
      if (!stored_dtype(l.dtype))
        throw TypeError("store entry " + repr(l.path) + ": dtype " + dtype_text(l.dtype) +
                        " cannot be stored");
      for (int64_t d : l.shape)
        if (d < 0)
          throw ShapeError("store entry " + repr(l.path) + ": negative shape " +
                           shape_text(l.shape));
      int64_t total = static_cast<int64_t>(c10::elementSize(l.dtype));
      for (int64_t d : l.shape) {
        if (d != 0 && total > kMaxValueBytes / d)
          throw ShapeError("store entry " + repr(l.path) + ": shape " + shape_text(l.shape) +
                           " exceeds the server's 512 MB value limit");
        total *= d;
      }
      paths.push_back(l.path);
      texts.push_back({data_key(l.path), meta_key(l.path), std::to_string(total - 1),
                       shape_text(l.shape), dtype_text(l.dtype), total > 0 ? "1" : "0"});
    }
    check_structure(paths, keys);
    const std::string registry = key("__keys__");
    std::vector<std::vector<Connection::CommandView>> groups;
    for (size_t i = 0; i < leaves.size(); ++i) {
      const auto& t = texts[i];
      Connection::CommandView size =
          t[5] == "1" ? Connection::CommandView{"SETRANGE", t[0], t[2], std::string_view("\0", 1)}
                      : Connection::CommandView{"SET", t[0], ""};
      groups.push_back({size,
                        {"DEL", t[1]},
                        {"HSET", t[1], "shape", t[3], "dtype", t[4]},
                        {"SADD", registry, paths[i]}});
    }
    const std::string what =
        "allocating store leaf " + repr(paths.empty() ? std::string() : paths.front());
    std::vector<std::vector<Reply>> replies;
    try {
      replies = exchange_transactions(*conn, groups, what);
    } catch (...) {
      forget();
      throw;
    }
    remember(paths);
    for (size_t i = 0; i < leaves.size(); ++i)
      check_ok(replies[i], "allocating store leaf " + repr(paths[i]));
  }

  /// A handle on `where` (a new UUID4 id unless it names one; `existing`: it must).
  static std::shared_ptr<Impl> connect(const StoreLocation& where, bool existing);
  /// A handle for a new store of `batch` and `device` (its metadata not written yet).
  static std::shared_ptr<Impl> fresh(const StoreLocation& where, BatchSize batch,
                                     std::optional<at::Device> device) {
    for (int64_t d : batch)
      if (d < 0) throw ShapeError("store batch size " + shape_text(batch) + " is negative");
    auto impl = connect(where, false);
    impl->batch = std::move(batch);
    impl->device = device;
    return impl;
  }

  void persist_metadata() const {
    std::vector<Command> cmds{{"SET", key("__batch_size__"), shape_text(batch)},
                              {"SET", key("__device__"), device ? device->str() : ""}};
    if (tensorclass) cmds.push_back({"SET", key("__tensorclass__"), *tensorclass});
    const std::string what = "writing the metadata of store " + key("");
    check_ok(exchange(*conn, cmds, true, what), what);
  }
};

TensorDictStore::TensorDictStore(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<TensorDictStore::Impl> TensorDictStore::Impl::connect(const StoreLocation& where,
                                                                      bool existing) {
  if (existing && where.td_id.empty()) throw ValueError("a store location needs a td_id");
  // The id sits in a cluster hash tag: braces in it would end the tag early.
  if (where.td_id.find_first_of("{}") != std::string::npos)
    throw ValueError("store td_id '" + where.td_id + "' may not contain braces");
  auto impl = std::make_shared<Impl>();
  impl->conn = std::make_shared<Connection>(where.connection);
  impl->prefix = where.prefix;
  impl->td_id = where.td_id.empty() ? uuid4() : where.td_id;
  impl->caching = where.cache_metadata;
  return impl;
}

TensorDictStore TensorDictStore::create(const StoreLocation& where, BatchSize batch_size,
                                        std::optional<at::Device> device) {
  auto impl = Impl::fresh(where, std::move(batch_size), device);
  impl->persist_metadata();
  return TensorDictStore(std::move(impl));
}

namespace {
// A decimal count of the lazy stack metadata.
int64_t count_of(const Reply& r, const std::string& what) {
  const std::string& text = string_reply(r, what);
  const std::vector<int64_t> one = int_list("[" + text + "]", what);
  if (one.size() != 1) throw FormatError(what + " '" + text + "' is not a count");
  return one.front();
}
}  // namespace

TensorDictStore TensorDictStore::open(const StoreLocation& where) {
  auto impl = Impl::connect(where, true);
  const std::string where_text = "store " + impl->key("");
  const auto r = exchange(*impl->conn,
                          {{"GET", impl->key("__batch_size__")},
                           {"GET", impl->key("__device__")},
                           {"GET", impl->key("__tensorclass__")},
                           {"GET", impl->key("__type__")},
                           {"GET", impl->key("__count__")},
                           {"GET", impl->key("__stack_dim__")},
                           {"GET", impl->key("__inner_batch_size__")}},
                          true, "opening " + where_text);
  if (r[3].type != Reply::Type::Nil &&
      string_reply(r[3], where_text + " __type__") == "lazy_stack") {
    LazyShape shape;
    shape.count = count_of(r[4], where_text + " __count__");
    shape.stack_dim = count_of(r[5], where_text + " __stack_dim__");
    shape.inner = int_list(string_reply(r[6], where_text + " __inner_batch_size__"),
                           where_text + " __inner_batch_size__");
    if (shape.count == 0 || shape.count > LazyShape::kMaxCount ||
        shape.stack_dim > static_cast<int64_t>(shape.inner.size()))
      throw FormatError(where_text + ": a lazy stack of " + std::to_string(shape.count) +
                        " elements along dim " + std::to_string(shape.stack_dim) +
                        " of inner batch size " + shape_text(shape.inner));
    impl->batch = shape.batch_size();
    impl->lazy = std::move(shape);
  } else if (r[0].type == Reply::Type::Nil) {
    throw KeyError("no TensorDictStore with td_id '" + where.td_id + "' (prefix '" + where.prefix +
                   "') on the server");
  } else {
    impl->batch = int_list(string_reply(r[0], where_text + " __batch_size__"),
                           where_text + " __batch_size__");
  }
  if (r[1].type != Reply::Type::Nil) {
    const std::string text = string_reply(r[1], where_text + " __device__");
    if (!text.empty()) {
      try {
        impl->device = at::Device(text);
      } catch (const c10::Error&) {
        throw FormatError(where_text + " __device__ '" + text + "' is not a device");
      }
    }
  }
  if (r[2].type != Reply::Type::Nil)
    impl->tensorclass = string_reply(r[2], where_text + " __tensorclass__");
  return TensorDictStore(std::move(impl));
}

TensorDictStore TensorDictStore::from_tensordict(const TensorDict& td, const StoreLocation& where) {
  if (td.is_lazy_stack()) {  // Python's LazyStackedTensorDictStore.from_lazy_stack
    auto impl = Impl::connect(where, false);
    impl->device = td.device();
    impl->lazy = write_lazy_stack(
        *impl->conn, [&impl](const std::string& suffix) { return impl->key(suffix); }, td,
        impl->device);
    impl->batch = impl->lazy->batch_size();
    return TensorDictStore(std::move(impl));
  }
  TensorDictStore out = create(where, td.batch_size(), td.device());
  if (const ClassSpec* spec = class_of(td)) {  // as Python records a tensorclass's path
    out.impl_->tensorclass = format::class_path(spec->python_type);
    out.impl_->persist_metadata();
  }
  out.update(td);
  return out;
}

TensorDictStore TensorDictStore::from_schema(const std::vector<LeafSchema>& schema,
                                             const StoreLocation& where, BatchSize batch_size,
                                             std::optional<at::Device> device) {
  std::vector<Impl::Allocation> leaves;
  for (const LeafSchema& leaf : schema) {
    std::vector<int64_t> shape(batch_size.begin(), batch_size.end());
    shape.insert(shape.end(), leaf.shape.begin(), leaf.shape.end());
    leaves.push_back({path_of(leaf.key), std::move(shape), leaf.dtype});
  }
  // The leaves first, then the metadata that makes the store visible to open(): a bad leaf
  // leaves nothing behind, and a reader never opens the store half allocated.
  auto impl = Impl::fresh(where, std::move(batch_size), device);
  impl->allocate(leaves, *impl->all_keys("from_schema"));
  impl->persist_metadata();
  return TensorDictStore(std::move(impl));
}

const std::string& TensorDictStore::td_id() const { return impl_->td_id; }
const std::string& TensorDictStore::prefix() const { return impl_->prefix; }
Connection& TensorDictStore::connection() const { return *impl_->conn; }
std::string TensorDictStore::redis_key(std::string_view suffix) const { return impl_->key(suffix); }
const BatchSize& TensorDictStore::batch_size() const { return impl_->batch; }
std::optional<at::Device> TensorDictStore::device() const { return impl_->device; }
std::optional<std::string> TensorDictStore::tensorclass() const { return impl_->tensorclass; }

void TensorDictStore::set_batch_size(BatchSize batch_size) {
  impl_->refuse_lazy("set_batch_size");
  const auto keys = impl_->all_keys("set_batch_size");
  std::vector<Command> cmds;
  for (const auto& k : *keys) cmds.push_back({"HGETALL", impl_->meta_key(k)});
  const auto replies =
      exchange(*impl_->conn, cmds, true, "set_batch_size of store " + impl_->key(""));
  size_t i = 0;
  for (const auto& k : *keys) {
    const Meta meta = parse_meta(k, replies[i++]);
    if (meta.non_tensor) continue;
    if (meta.shape.size() < batch_size.size() ||
        !std::equal(batch_size.begin(), batch_size.end(), meta.shape.begin()))
      throw ShapeError("set_batch_size " + shape_text(batch_size) + ": store leaf " + repr(k) +
                       " has shape " + shape_text(meta.shape));
  }
  const BatchSize old = impl_->batch;
  impl_->batch = std::move(batch_size);
  try {
    impl_->persist_metadata();
  } catch (...) {
    impl_->batch = old;
    throw;
  }
}

void TensorDictStore::set(const NestedKey& key, const at::Tensor& value) {
  impl_->refuse_lazy("set");
  impl_->write({impl_->tensor_leaf(path_of(key), value)});
}

void TensorDictStore::set(const NestedKey& key, const TensorDict& value) {
  impl_->refuse_lazy("set");
  std::vector<Leaf> leaves;
  impl_->collect(value, path_of(key), leaves);
  impl_->write(leaves);
}

void TensorDictStore::set_non_tensor(const NestedKey& key, const Json& value) {
  impl_->refuse_lazy("set_non_tensor");
  impl_->write({impl_->json_leaf(path_of(key), value, "json")});
}

void TensorDictStore::update(const TensorDict& td) {
  impl_->refuse_lazy("update");
  std::vector<Leaf> leaves;
  impl_->collect(td, "", leaves);
  impl_->write(leaves);
}

Value TensorDictStore::get_value(const NestedKey& key) const {
  impl_->refuse_lazy("get");
  const std::string path = path_of(key);
  const auto keys = impl_->all_keys(key.repr());
  if (keys->count(path)) {
    auto values = impl_->read({path});
    if (values.empty()) throw KeyError("key " + key.repr() + " not found in the store");
    return std::move(values.front().second);
  }
  for (const auto& k : *keys)
    if (under(k, path)) return impl_->subtree(path, *keys);
  throw KeyError("key " + key.repr() + " not found in the store " + impl_->key(""));
}

at::Tensor TensorDictStore::get(const NestedKey& key) const {
  Value v = get_value(key);
  if (const at::Tensor* t = v.tensor_if()) return *t;
  throw TypeError("store entry " + key.repr() + " is a " + v.kind_name() + ", not a tensor");
}

Json TensorDictStore::get_non_tensor(const NestedKey& key) const {
  Value v = get_value(key);
  if (v.is_non_tensor_data()) return v.non_tensor_data().data;
  if (v.is_non_tensor_stack()) return v.non_tensor_stack().tolist();
  throw TypeError("store entry " + key.repr() + " is a " + v.kind_name() + ", not non-tensor data");
}

namespace {
int64_t wrap_row(const std::string& path, int64_t row, int64_t n) {
  if (row < -n || row >= n)
    throw IndexError("store leaf " + repr(path) + ": row " + std::to_string(row) +
                     " is out of range for dim 0 of size " + std::to_string(n));
  return row < 0 ? row + n : row;
}
}  // namespace

at::Tensor TensorDictStore::get_at(const NestedKey& key, int64_t row) const {
  impl_->refuse_lazy("get_at");
  const std::string path = path_of(key);
  const Meta meta = impl_->tensor_meta(path, key);
  row = wrap_row(path, row, meta.shape[0]);
  return impl_->read_rows(path, meta, row, row + 1)[0];
}

at::Tensor TensorDictStore::get_rows(const NestedKey& key, int64_t start, int64_t stop) const {
  impl_->refuse_lazy("get_rows");
  const std::string path = path_of(key);
  return impl_->read_rows(path, impl_->tensor_meta(path, key), start, stop);
}

void TensorDictStore::set_rows(const NestedKey& key, int64_t start, const at::Tensor& value) {
  impl_->refuse_lazy("set_rows");
  const std::string path = path_of(key);
  impl_->write_rows(path, impl_->tensor_meta(path, key), start, value);
}

void TensorDictStore::set_at(const NestedKey& key, int64_t row, const at::Tensor& value) {
  impl_->refuse_lazy("set_at");
  const std::string path = path_of(key);
  const auto keys = impl_->all_keys(key.repr());
  if (!keys->count(path)) {
    // Python's first indexed write: a zero-filled leaf of batch_size[0] rows.
    if (impl_->batch.empty())
      throw IndexError("store entry " + key.repr() + ": no batch dim to index");
    std::vector<int64_t> shape{impl_->batch[0]};
    shape.insert(shape.end(), value.sizes().begin(), value.sizes().end());
    impl_->allocate({{path, std::move(shape), value.scalar_type()}}, *keys);
  }
  const Meta meta = impl_->tensor_meta(path, key);
  impl_->write_rows(path, meta, wrap_row(path, row, meta.shape[0]), value.unsqueeze(0));
}

bool TensorDictStore::contains(const NestedKey& key) const {
  const std::string path = path_of(key);
  const auto keys = impl_->all_keys(key.repr());
  if (keys->count(path)) return true;
  return std::any_of(keys->begin(), keys->end(), [&](const auto& k) { return under(k, path); });
}

std::vector<NestedKey> TensorDictStore::keys(bool include_nested, bool leaves_only) const {
  // Leaves and, unless leaves_only, the nested levels above them; top level only without
  // include_nested. Sorted by path, so a level comes before its leaves.
  std::set<std::string> out;
  for (const auto& k : *impl_->all_keys("keys")) {
    const NestedKey key = key_of(k);
    if (!include_nested) {
      if (!leaves_only || key.size() == 1) out.insert(key.front());
      continue;
    }
    out.insert(k);
    if (!leaves_only)
      for (size_t dot = k.find('.'); dot != std::string::npos; dot = k.find('.', dot + 1))
        out.insert(k.substr(0, dot));
  }
  std::vector<NestedKey> result;
  for (const auto& p : out) result.push_back(key_of(p));
  return result;
}

void TensorDictStore::del_(const NestedKey& key) {
  impl_->refuse_lazy("del_");
  const std::string path = path_of(key);
  impl_->forget();  // deletes what the server holds now, another client's leaves under it too
  std::vector<Command> cmds;
  std::vector<std::string> removed;
  for (const auto& k : *impl_->all_keys(key.repr())) {
    if (k != path && !under(k, path)) continue;
    cmds.push_back({"DEL", impl_->data_key(k), impl_->meta_key(k)});
    cmds.push_back({"SREM", impl_->key("__keys__"), k});
    removed.push_back(k);
  }
  if (cmds.empty()) throw KeyError("key " + key.repr() + " not found in the store");
  try {
    const std::string what = "deleting store entry " + key.repr();
    check_ok(exchange(*impl_->conn, cmds, true, what), what);
  } catch (...) {
    impl_->forget();
    throw;
  }
  impl_->remember({}, removed);
}

TensorDict TensorDictStore::to_local() const {
  if (impl_->lazy) {
    return read_lazy_stack(
        *impl_->conn, [this](const std::string& suffix) { return impl_->key(suffix); },
        *impl_->all_keys("to_local"), *impl_->lazy, impl_->device);
  }
  TensorDict out = impl_->subtree("", *impl_->all_keys("to_local"));
  if (impl_->tensorclass) {
    if (const ClassSpec* spec = find_class("<class '" + *impl_->tensorclass + "'>"))
      memmap::set_class_info(out, *spec->identity);
  }
  return out;
}

bool TensorDictStore::is_lazy_stack() const { return impl_->lazy.has_value(); }

void TensorDictStore::clear_redis() {
  impl_->forget();
  Command del{"DEL"};
  for (const auto& k : *impl_->all_keys("clear_redis")) {
    del.push_back(impl_->data_key(k));
    del.push_back(impl_->meta_key(k));
    del.push_back(impl_->data_key(k + ":idx"));  // a lazy stack's offset table
  }
  for (const char* meta : {"__keys__", "__batch_size__", "__device__", "__tensorclass__",
                           "__type__", "__count__", "__stack_dim__", "__inner_batch_size__"})
    del.push_back(impl_->key(meta));
  const std::string what = "deleting store " + impl_->key("");
  const auto deleted = exchange(*impl_->conn, {del}, false, what);
  impl_->forget();
  check_ok(deleted, what);
}

void TensorDictStore::refresh() { impl_->forget(); }

}  // namespace tensordict::store
