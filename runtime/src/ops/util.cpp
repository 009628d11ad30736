// Shared machinery of the TensorDict ops: key and message helpers, the positions trick for
// NonTensorStacks (positions themselves: core/shape.cpp), and the recursive walkers that build
// same-structure TensorDicts.
#include "ops/util.h"

#include <ATen/ATen.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>

#include "core/lazy_state.h"

namespace tensordict::detail {

std::string join_key(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

NonTensorStack gather_items(const NonTensorStack::Items& items, const at::Tensor& pos) {
  const at::Tensor flat = pos.contiguous();
  const int64_t* p = flat.data_ptr<int64_t>();
  std::vector<Json> out;
  out.reserve(static_cast<size_t>(flat.numel()));
  for (int64_t i = 0; i < flat.numel(); ++i) out.push_back(items[static_cast<size_t>(p[i])]);
  return NonTensorStack(pos.sizes().vec(), std::move(out));
}

NonTensorStack apply_to_stack(const NonTensorStack& stack, const TensorOp& op) {
  return gather_items(stack.items(), op(positions(stack.shape())));
}

NonTensorStack select_items(const NonTensorStack& stack, int64_t dim, int64_t i) {
  const auto& shape = stack.shape();
  const auto d = static_cast<size_t>(dim);
  const int64_t n = shape[d];
  const int64_t outer = product(at::IntArrayRef(shape).slice(0, d));
  const int64_t inner = product(at::IntArrayRef(shape).slice(d + 1));
  const int64_t row = i < 0 ? i + n : i;
  if (dim == 0) return stack.row(row);
  std::vector<Json> items;
  items.reserve(static_cast<size_t>(outer * inner));
  const auto src = stack.items();
  for (int64_t o = 0; o < outer; ++o) {
    const auto first = src.begin() + (o * n + row) * inner;
    items.insert(items.end(), first, first + inner);
  }
  std::vector<int64_t> out_shape = shape;
  out_shape.erase(out_shape.begin() + dim);
  return NonTensorStack(std::move(out_shape), std::move(items));
}

int64_t machine_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  int64_t memory = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page
                                         : std::numeric_limits<int64_t>::max();
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    int64_t limit = 0;
    if (in >> limit && limit > 0) memory = std::min(memory, limit);  // "max" reads as nothing
  }
  return memory;
}

std::string first_line(const char* what) {
  std::string msg(what);
  const auto end = msg.find('\n');
  return end == std::string::npos ? msg : msg.substr(0, end);
}

void rethrow_torch(const char* op, const std::string& key, at::IntArrayRef shape,
                   const std::exception& e) {
  throw ShapeError(std::string(op) + ": key '" + key + "' of shape " + shape_str(shape) + ": " +
                   first_line(e.what()));
}

namespace {

at::Tensor guarded(const TensorOp& op, const at::Tensor& t, const char* op_name,
                   const std::string& key) {
  try {
    return op(t);
  } catch (const c10::Error& e) {
    rethrow_torch(op_name, key, t.sizes(), e);
  }
}

// A lazy stack as the batch ops see it. Python's lazy stacks build a regular TensorDict from
// their stacked leaves for every op that is given a batch size (LazyStackedTensorDict._apply_nest);
// the ops that keep a stack lazy (lazy/shape.cpp) never reach here.
TensorDict stacked(const TensorDict& td, const char* op_name) {
  if (!td.is_lazy_stack()) return td;
  try {
    return td.densify();
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(op_name) + ": " + e.what());
  }
}

// One level of map_batch; `first` carries a result already computed for slot `first_slot`.
TensorDict map_batch_level(const TensorDict& lazy_or_dense, size_t nb, const BatchSize& new_batch,
                           const TensorOp& op, const char* op_name, int64_t first_slot,
                           const at::Tensor& first, const StackOp& stack_op, const NamesOp& names,
                           const LazyOp& nested_lazy) {
  const TensorDict td = stacked(lazy_or_dense, op_name);
  const auto& src = detail::impl_of(td);
  const auto tail = join_shape(new_batch, src.batch_size, nb);
  TensorDict out = make_tensordict(BatchSize(tail.begin(), tail.end()), src.device,
                                   moved_names(src.names, nb, names));
  impl_of(out).class_info = src.class_info;
  std::vector<Value> values;
  values.reserve(src.keys.size());
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const Value& value = src.values[i];
    switch (value.kind()) {
      case Value::Kind::Tensor:
        values.emplace_back(static_cast<int64_t>(i) == first_slot
                                ? first
                                : guarded(op, value.tensor(), op_name, src.keys[i]));
        break;
      case Value::Kind::TensorDict:
        values.emplace_back(nested_lazy && value.tensordict().is_lazy_stack()
                                ? nested_lazy(value.tensordict())
                                : map_batch_level(value.tensordict(), nb, new_batch, op, op_name,
                                                  -1, at::Tensor(), stack_op, names, nested_lazy));
        break;
      case Value::Kind::NonTensorData:
        values.push_back(value);
        break;
      case Value::Kind::NonTensorStack:
        values.emplace_back(stack_op ? stack_op(value.non_tensor_stack())
                                     : apply_to_stack(value.non_tensor_stack(), op));
        break;
    }
  }
  set_values(detail::impl_of(out), src, std::move(values));
  return out;
}

}  // namespace

TensorDict locked_as(const TensorDict& src, TensorDict out) {
  if (src.is_locked() && !out.is_locked()) out.lock_();
  return out;
}

TensorDict map_batch(const TensorDict& td, size_t nb, const BatchSize& new_batch,
                     const TensorOp& op, const char* op_name, const StackOp& stack_op,
                     const NamesOp& names, const LazyOp& nested_lazy) {
  return map_batch_level(td, nb, new_batch, op, op_name, -1, at::Tensor(), stack_op, names,
                         nested_lazy);
}

TensorDict map_batch_infer(const TensorDict& lazy_or_dense, const TensorOp& op, const char* op_name,
                           const NamesOp& names, const LazyOp& nested_lazy) {
  const TensorDict td = stacked(lazy_or_dense, op_name);
  const auto& src = detail::impl_of(td);
  const size_t nb = src.batch_size.size();
  for (size_t i = 0; i < src.keys.size(); ++i) {
    if (!src.values[i].is_tensor()) continue;
    const at::Tensor& t = src.values[i].tensor();
    at::Tensor first = guarded(op, t, op_name, src.keys[i]);
    const auto new_nb = static_cast<size_t>(first.dim() - (t.dim() - static_cast<int64_t>(nb)));
    const auto sizes = first.sizes().slice(0, new_nb);
    return map_batch_level(td, nb, BatchSize(sizes.begin(), sizes.end()), op, op_name,
                           static_cast<int64_t>(i), first, {}, names, nested_lazy);
  }
  // No top-level tensor: learn the new batch size from a stand-in of the batch shape.
  const at::Tensor stand_in = guarded(op, positions(src.batch_size), op_name, "<batch>");
  return map_batch_level(td, nb, stand_in.sizes().vec(), op, op_name, -1, at::Tensor(), {}, names,
                         nested_lazy);
}

namespace {

bool has_batch(at::IntArrayRef shape, const BatchSize& batch) {
  return shape.size() >= batch.size() && std::equal(batch.begin(), batch.end(), shape.begin());
}

}  // namespace

TensorDict map_leaves(const TensorDict& td, const std::function<at::Tensor(const at::Tensor&)>& fn,
                      const char* op_name, std::optional<at::Device> device) {
  if (td.is_lazy_stack()) {
    return lazy::per_element(
        td, [&](const TensorDict& e) { return map_leaves(e, fn, op_name, device); });
  }
  const auto& src = detail::impl_of(td);
  TensorDict out = make_tensordict(src.batch_size, device ? device : src.device, src.names);
  impl_of(out).class_info = src.class_info;
  std::vector<Value> values;
  values.reserve(src.keys.size());
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const Value& value = src.values[i];
    if (value.is_tensor()) {
      at::Tensor mapped = guarded(fn, value.tensor(), op_name, src.keys[i]);
      if (mapped.defined() && !has_batch(mapped.sizes(), src.batch_size)) {
        throw ShapeError(std::string(op_name) + ": the result for key '" + src.keys[i] +
                         "' has shape " + shape_str(mapped.sizes()) +
                         ", which lacks the batch dims " + shape_str(src.batch_size));
      }
      values.emplace_back(std::move(mapped));  // undefined: dropped by set_values
    } else if (value.is_tensordict()) {
      values.emplace_back(map_leaves(value.tensordict(), fn, op_name, device));
    } else {
      values.push_back(value);
    }
  }
  set_values(detail::impl_of(out), src, std::move(values));
  return out;
}

namespace {

void for_each_leaf_at(const TensorDict& td, const std::optional<NestedKey>& prefix,
                      const std::function<void(const NestedKey&, at::Tensor&)>& fn) {
  if (td.is_lazy_stack()) {
    for (const auto& element : lazy::state(td).tds) for_each_leaf_at(element, prefix, fn);
    return;
  }
  auto& impl = detail::impl_of(td);
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    Value& value = impl.values[i];
    if (!value.is_tensor() && !value.is_tensordict()) continue;
    NestedKey key = prefix ? prefix->child(impl.keys[i]) : NestedKey(impl.keys[i]);
    if (value.is_tensor()) {
      fn(key, value.tensor());
    } else {
      for_each_leaf_at(value.tensordict(), key, fn);
    }
  }
}

}  // namespace

void for_each_leaf(const TensorDict& td,
                   const std::function<void(const NestedKey&, at::Tensor&)>& fn) {
  for_each_leaf_at(td, std::nullopt, fn);
}

namespace {

void adopt_level(TensorDictImpl& mine, const TensorDictImpl& result) {
  mine.batch_size = result.batch_size;
  mine.names = result.names;
  mine.consolidated = at::Tensor();  // the leaves are replaced
  for (size_t i = 0; i < mine.keys.size(); ++i) {
    Value& value = mine.values[i];
    const Value& replacement = result.values.at(i);
    if (value.is_tensordict() && replacement.is_tensordict()) {
      adopt_level(detail::impl_of(value.tensordict()), detail::impl_of(replacement.tensordict()));
    } else {
      value = replacement;
    }
  }
}

}  // namespace

TensorDict& adopt(TensorDict& td, const TensorDict& result, const char* op_name) {
  // A lazy stack's batch size is its elements': it cannot take another in place (Python refuses
  // inplace=True on it alike).
  dense_only(td, op_name);
  if (td.is_locked()) {
    throw LockedError(std::string(op_name) + ": cannot change a locked TensorDict in place");
  }
  adopt_level(detail::impl_of(td), detail::impl_of(result));
  return td;
}

}  // namespace tensordict::detail
