// TensorDictStore::Impl (store_impl.h): the registry and its cache, leaves read and written.
#include "store_impl.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <iterator>

#include "tensordict/json.h"

namespace tensordict::store {

using namespace layout;

// Records what a write or a delete did to the registry and to the leaves' metadata (`metas[i]`
// for `added[i]`; none: a non-tensor leaf, read with its hash).
void TensorDictStore::Impl::remember(const std::vector<std::string>& added,
                                     const std::vector<std::string>& removed,
                                     const std::vector<std::shared_ptr<const Meta>>& metas) const {
  std::lock_guard<std::mutex> lock(cache_mutex);
  for (const auto& k : removed) cached_meta.erase(k);
  for (size_t i = 0; i < added.size(); ++i) {
    if (caching && i < metas.size() && metas[i])
      cached_meta.insert_or_assign(added[i], metas[i]);
    else
      cached_meta.erase(added[i]);
  }
  if (!cached_keys) return;
  // Copied only for a change: an update of known leaves, the usual write, changes nothing here.
  const auto known = [this](const std::string& k) { return cached_keys->count(k) > 0; };
  if (std::all_of(added.begin(), added.end(), known) &&
      std::none_of(removed.begin(), removed.end(), known))
    return;
  auto keys = std::make_shared<Keys>(*cached_keys);
  keys->insert(added.begin(), added.end());
  for (const auto& k : removed) keys->erase(k);
  cached_keys = std::move(keys);
}

std::vector<std::shared_ptr<const Meta>> TensorDictStore::Impl::known_metas(
    const std::vector<std::string>& paths) const {
  std::vector<std::shared_ptr<const Meta>> out(paths.size());
  if (!caching) return out;
  std::lock_guard<std::mutex> lock(cache_mutex);
  for (size_t i = 0; i < paths.size(); ++i)
    if (const auto it = cached_meta.find(paths[i]); it != cached_meta.end()) out[i] = it->second;
  return out;
}

// The registry of leaf paths (`needed_for`: the entry or operation asking, for messages).
std::shared_ptr<const Keys> TensorDictStore::Impl::all_keys(const std::string& needed_for) const {
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
std::pair<Meta, int64_t> TensorDictStore::Impl::meta_and_size(const std::string& path) const {
  const std::string what = "store leaf " + repr(path);
  const auto r =
      exchange(*conn, {{"HGETALL", meta_key(path)}, {"STRLEN", data_key(path)}}, true, what);
  if (r[1].type == Reply::Type::Error) throw_reply(r[1], what);
  return {parse_meta(path, r[0]), r[1].integer};
}

Meta TensorDictStore::Impl::tensor_meta(const std::string& path, const NestedKey& name) const {
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
at::Tensor TensorDictStore::Impl::read_rows(const std::string& path, const Meta& meta,
                                            int64_t start, int64_t stop) const {
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
void TensorDictStore::Impl::write_rows(const std::string& path, const Meta& meta, int64_t start,
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
void TensorDictStore::Impl::check_structure(const std::vector<std::string>& paths,
                                            const Keys& keys) const {
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

void TensorDictStore::Impl::write(const std::vector<Leaf>& leaves) const {
  std::vector<std::string> paths;
  for (const auto& l : leaves) paths.push_back(l.path);
  check_structure(paths, *all_keys(repr(paths.empty() ? std::string() : paths.front())));
  // Leaves go in groups, one MULTI/EXEC transaction each, every group in one round trip: a
  // group's bytes (MSET), hashes and registry entries (SADD) change together. Small leaves share
  // a group (1,000 of them cost ~1,000 commands, not 6,000); a leaf of kGroupBytes or more is a
  // group of its own, so the server never queues more than one large value. A hash is replaced,
  // not merged (HSET alone would keep a former non-tensor entry's is_non_tensor field). Values
  // are sent from the tensors' memory.
  constexpr size_t kGroupBytes = size_t{1} << 20;
  std::vector<std::pair<size_t, size_t>> groups;  // [first, last) leaves
  size_t group_bytes = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const size_t bytes = leaves[i].data().size();
    if (groups.empty() || group_bytes + bytes > kGroupBytes) {
      groups.emplace_back(i, i);
      group_bytes = 0;
    }
    groups.back().second = i + 1;
    group_bytes += bytes;
  }
  const std::string registry = key("__keys__");
  std::vector<std::string> names;  // d: and m: keys, alive while the views are
  names.reserve(2 * leaves.size());
  for (const auto& l : leaves) {
    names.push_back(data_key(l.path));
    names.push_back(meta_key(l.path));
  }
  std::vector<std::vector<Connection::CommandView>> transactions;
  for (const auto& [first, last] : groups) {
    Connection::CommandView mset{"MSET"}, del{"DEL"}, sadd{"SADD", registry};
    std::vector<Connection::CommandView> hsets;
    for (size_t i = first; i < last; ++i) {
      mset.insert(mset.end(), {names[2 * i], leaves[i].data()});
      del.push_back(names[2 * i + 1]);
      sadd.push_back(paths[i]);
      Connection::CommandView& hset =
          hsets.emplace_back(Connection::CommandView{"HSET", names[2 * i + 1]});
      for (const auto& [field, value] : leaves[i].meta) hset.insert(hset.end(), {field, value});
    }
    auto& t = transactions.emplace_back();
    t.reserve(hsets.size() + 3);
    t.push_back(std::move(mset));
    t.push_back(std::move(del));
    std::move(hsets.begin(), hsets.end(), std::back_inserter(t));
    t.push_back(std::move(sadd));
  }
  const auto leaves_named = [&paths](size_t first, size_t last) {
    return last - first == 1
               ? "store leaf " + repr(paths[first])
               : "store leaves " + repr(paths[first]) + " to " + repr(paths[last - 1]);
  };
  const std::string what =
      leaves.empty() ? "writing store " + key("") : "writing " + leaves_named(0, leaves.size());
  std::vector<std::vector<Reply>> replies;
  try {
    replies = exchange_transactions(*conn, transactions, what);
  } catch (...) {
    forget();  // the transactions may or may not have run
    throw;
  }
  std::vector<std::shared_ptr<const Meta>> metas;
  for (const auto& l : leaves)
    metas.push_back(l.tensor.defined() ? std::make_shared<const Meta>(Meta::of_tensor(
                                             l.tensor.sizes(), l.tensor.scalar_type()))
                                       : nullptr);
  remember(paths, {}, metas);
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto [first, last] = groups[g];
    for (size_t c = 0; c < replies[g].size(); ++c) {
      if (replies[g][c].type != Reply::Type::Error) continue;
      forget();  // a transaction ran its other commands: what the server holds is not known
      // An HSET is one leaf's; MSET, DEL and SADD are the group's.
      const bool hset = c >= 2 && c < 2 + (last - first);
      throw_reply(replies[g][c], "writing " + (hset ? leaves_named(first + c - 2, first + c - 1)
                                                    : leaves_named(first, last)));
    }
  }
}

Leaf TensorDictStore::Impl::tensor_leaf(const std::string& path, const at::Tensor& value) const {
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

Leaf TensorDictStore::Impl::json_leaf(const std::string& path, const Json& value,
                                      const char* encoding) const {
  std::string text = dumps_python(value);
  if (static_cast<int64_t>(text.size()) > kMaxValueBytes)
    throw ShapeError("store entry " + repr(path) + ": its JSON exceeds the 512 MB value limit");
  return {path, std::move(text), {}, {{"is_non_tensor", "1"}, {"encoding", encoding}}};
}

// The leaves of `td` under `path` (empty: the root), in its key order.
void TensorDictStore::Impl::collect(const TensorDict& td, const std::string& path,
                                    std::vector<Leaf>& out) const {
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

Value TensorDictStore::Impl::decode(const std::string& path, std::string&& bytes,
                                    const Meta& meta) const {
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

// The leaves `paths`, read in one transaction: one MGET of their bytes, and the hashes of those
// whose metadata is not cached (Python: a pipeline of GETs, HGETALLs for what it has not cached).
std::vector<std::pair<std::string, Value>> TensorDictStore::Impl::read(
    const std::vector<std::string>& paths) const {
  if (paths.empty()) return {};
  const size_t n = paths.size();
  const std::vector<std::shared_ptr<const Meta>> metas = known_metas(paths);
  // Every d: and m: key in one buffer (one allocation, not one per key), viewed once it is whole.
  std::string text;
  std::vector<size_t> ends;
  auto add_name = [&](const std::string& path, const char* kind) {
    text += prefix;
    text += ":{";
    text += td_id;
    text += "}:";
    text += kind;
    text += path;
    ends.push_back(text.size());
  };
  for (const auto& p : paths) add_name(p, "d:");
  std::vector<size_t> hash_of(n, 0);  // the reply index of path i's hash (0: cached)
  for (size_t i = 0, next = 1; i < n; ++i)
    if (!metas[i]) {
      hash_of[i] = next++;
      add_name(paths[i], "m:");
    }
  std::vector<std::string_view> names;
  for (size_t k = 0, begin = 0; k < ends.size(); begin = ends[k++])
    names.emplace_back(text.data() + begin, ends[k] - begin);
  std::vector<Connection::CommandView> cmds{{"MGET"}};
  cmds[0].insert(cmds[0].end(), names.begin(), names.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t k = n; k < names.size(); ++k) cmds.push_back({"HGETALL", names[k]});
  const std::string what =
      n == 1 ? "reading store leaf " + repr(paths.front()) : "reading store " + key("");
  auto replies = std::move(exchange_transactions(*conn, {cmds}, what).front());
  if (replies[0].type != Reply::Type::Array || replies[0].element.size() != n)
    string_reply(replies[0], what);  // an error reply: says which
  std::vector<Reply>& data = replies[0].element;

  std::vector<std::optional<Value>> values(n);
  std::vector<std::string> stale;  // cached metadata the bytes do not fit: read again
  std::vector<std::shared_ptr<const Meta>> learned(n);
  for (size_t i = 0; i < n; ++i) {
    const Reply* hash = hash_of[i] ? &replies[hash_of[i]] : nullptr;
    if (data[i].type == Reply::Type::Nil) {
      // MGET gives nil for a missing key and for a key of another type alike: GET tells which
      // (WRONGTYPE is bad contents, a FormatError).
      if (!hash || (hash->type == Reply::Type::Array && !hash->element.empty()))
        data[i] = exchange(*conn, {{"GET", std::string(names[i])}}, false, what).front();
      // A leaf deleted since the registry was read is skipped, as Python's to_tensordict does;
      // the cached registry is stale then.
      if (data[i].type == Reply::Type::Nil) {
        forget();
        continue;
      }
    }
    if (data[i].type != Reply::Type::String)  // an error reply, another type: says which
      string_reply(data[i], "store leaf " + repr(paths[i]));
    if (metas[i]) {
      if (static_cast<int64_t>(data[i].str.size()) != metas[i]->nbytes) {
        stale.push_back(paths[i]);
        continue;
      }
      values[i] = decode(paths[i], std::move(data[i].str), *metas[i]);
    } else {
      auto meta = std::make_shared<const Meta>(parse_meta(paths[i], *hash));
      values[i] = decode(paths[i], std::move(data[i].str), *meta);
      if (!meta->non_tensor) learned[i] = std::move(meta);
    }
  }
  if (caching) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (size_t i = 0; i < n; ++i)
      if (learned[i]) cached_meta.insert_or_assign(paths[i], std::move(learned[i]));
    for (const auto& p : stale) cached_meta.erase(p);  // read again below, with the hash
  }
  std::vector<std::pair<std::string, Value>> again;
  if (!stale.empty()) again = read(stale);
  std::vector<std::pair<std::string, Value>> out;
  out.reserve(n);
  auto from_again = again.begin();
  for (size_t i = 0; i < n; ++i) {
    if (values[i])
      out.emplace_back(paths[i], std::move(*values[i]));
    else if (from_again != again.end() && from_again->first == paths[i])
      out.push_back(std::move(*from_again++));
  }
  return out;
}

// The leaves under `level` (empty: all) as a TensorDict of the store's batch size.
TensorDict TensorDictStore::Impl::subtree(const std::string& level, const Keys& keys) const {
  std::vector<std::string> paths;
  for (const auto& k : keys)
    if (level.empty() || under(k, level)) paths.push_back(k);
  TensorDict out(std::vector<std::pair<NestedKey, Value>>{}, batch, device);
  const size_t strip = level.empty() ? 0 : level.size() + 1;
  for (auto& [path, value] : read(paths)) {
    // Most paths are one key: no split for them.
    const bool nested = path.find('.', strip) != std::string::npos;
    out.set(nested ? key_of(path.substr(strip)) : NestedKey(path.substr(strip)), std::move(value));
  }
  return out;
}

// Zero-filled leaves made on the server, each sized by one SETRANGE of its last byte (no bytes
// cross the network), in one round trip: Python's from_schema and first indexed write. Every
// leaf is checked before anything is sent.
void TensorDictStore::Impl::allocate(const std::vector<Allocation>& leaves,
                                     const Keys& keys) const {
  std::vector<std::string> paths;
  std::vector<std::vector<std::string>> texts;  // per leaf: d:, m:, last byte, shape, dtype
  for (const auto& l : leaves) {
    if (!stored_dtype(l.dtype))
      throw TypeError("store entry " + repr(l.path) + ": dtype " + dtype_text(l.dtype) +
                      " cannot be stored");
    for (int64_t d : l.shape)
      if (d < 0)
        throw ShapeError("store entry " + repr(l.path) + ": negative shape " + shape_text(l.shape));
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
  std::vector<std::shared_ptr<const Meta>> metas;
  for (const auto& l : leaves)
    metas.push_back(std::make_shared<const Meta>(Meta::of_tensor(l.shape, l.dtype)));
  remember(paths, {}, metas);
  for (size_t i = 0; i < leaves.size(); ++i) {
    for (const Reply& r : replies[i]) {
      if (r.type != Reply::Type::Error) continue;
      forget();  // as in write()
      throw_reply(r, "allocating store leaf " + repr(paths[i]));
    }
  }
}

/// A handle for a new store of `batch` and `device` (its metadata not written yet).
std::shared_ptr<TensorDictStore::Impl> TensorDictStore::Impl::fresh(
    const StoreLocation& where, BatchSize batch, std::optional<at::Device> device) {
  for (int64_t d : batch)
    if (d < 0) throw ShapeError("store batch size " + shape_text(batch) + " is negative");
  auto impl = connect(where, false);
  impl->batch = std::move(batch);
  impl->device = device;
  return impl;
}

void TensorDictStore::Impl::persist_metadata() const {
  std::vector<Command> cmds{{"SET", key("__batch_size__"), shape_text(batch)},
                            {"SET", key("__device__"), device ? device->str() : ""}};
  if (tensorclass) cmds.push_back({"SET", key("__tensorclass__"), *tensorclass});
  const std::string what = "writing the metadata of store " + key("");
  check_ok(exchange(*conn, cmds, true, what), what);
}

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

}  // namespace tensordict::store
