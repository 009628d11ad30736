// TensorDictStore's operations (tensordict/store.h), on the shared state of a handle
// (store_impl.h).
#include <ATen/ATen.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "store_impl.h"
#include "tensordict/class_registry.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"
#include "tensordict/memmap.h"
#include "tensordict/store.h"

namespace tensordict::store {

using namespace layout;

TensorDictStore::TensorDictStore(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

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
