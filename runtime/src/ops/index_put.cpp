// Index assignment `td[index] = other`: in-place writes, with lazy preallocation of the keys this
// TensorDict lacks (the `data = TensorDict({}, {N}); data[i] = sample` pattern).
#include <ATen/ATen.h>

#include "core/lazy_state.h"
#include "ops/util.h"

namespace tensordict {
namespace {

using detail::IndexPlan;

// A freshly allocated entry for `key` of `dst`, shaped like `src`'s entry past `src`'s batch dims.
Value preallocate(const TensorDict& dst, const TensorDict& src, const Value& value) {
  const auto& batch = dst.batch_size();
  const size_t src_nb = src.batch_size().size();
  switch (value.kind()) {
    case Value::Kind::Tensor: {
      const at::Tensor& t = value.tensor();
      return at::zeros(detail::join_shape(batch, t.sizes(), src_nb), t.options());
    }
    case Value::Kind::TensorDict: {
      const auto shape = detail::join_shape(batch, value.tensordict().batch_size(), src_nb);
      return detail::make_tensordict(BatchSize(shape.begin(), shape.end()), dst.device());
    }
    case Value::Kind::NonTensorData:
    case Value::Kind::NonTensorStack:  // items not written yet stay null
      break;
  }
  return NonTensorStack::filled(batch, Json());
}

// Writes a non-tensor `value` at `plan` into the non-tensor entry `slot`.
void put_non_tensor(Value& slot, const IndexPlan& plan, const Value& value, const BatchSize& batch,
                    const std::string& key) {
  if (slot.is_non_tensor_data() && value.is_non_tensor_data() &&
      slot.non_tensor_data() == value.non_tensor_data()) {
    return;
  }
  NonTensorStack stack = slot.is_non_tensor_stack()
                             ? slot.non_tensor_stack()
                             : NonTensorStack::filled(batch, slot.non_tensor_data().data);
  const at::Tensor pos = detail::apply_index(detail::positions(stack.shape()), plan).contiguous();
  const int64_t* p = pos.data_ptr<int64_t>();
  if (value.is_non_tensor_stack() && value.non_tensor_stack().shape() != pos.sizes().vec()) {
    throw ShapeError("index_put_: key '" + key + "': cannot write a NonTensorStack of shape " +
                     shape_str(value.non_tensor_stack().shape()) + " into the indexed shape " +
                     shape_str(pos.sizes()));
  }
  for (int64_t k = 0; k < pos.numel(); ++k) {
    stack.items()[static_cast<size_t>(p[k])] =
        value.is_non_tensor_data() ? value.non_tensor_data().data
                                   : value.non_tensor_stack().items()[static_cast<size_t>(k)];
  }
  const bool uniform = stack.all_equal() && stack.numel() > 0 && !stack.items()[0].is_null();
  slot = uniform ? Value(NonTensorData{stack.items()[0]}) : Value(std::move(stack));
}

void put_tensor(at::Tensor& dst, const IndexPlan& plan, const at::Tensor& value,
                const std::string& key) {
  try {
    if (plan.expanded.empty()) {  // the whole entry: torch takes no empty index list
      dst.copy_(value);
    } else {
      dst.index_put_(plan.expanded, value);
    }
  } catch (const c10::Error& e) {
    throw ShapeError("index_put_: key '" + key + "': cannot write a value of shape " +
                     shape_str(value.sizes()) + " into an entry of shape " +
                     shape_str(dst.sizes()) + " at the index: " + detail::first_line(e.what()));
  }
}

void put_level(TensorDict& dst, const IndexPlan& plan, const TensorDict& src,
               const std::string& prefix);

// Coordinates of the row-major positions `flat` in `shape`, one long tensor per dim.
Index unravel(at::Tensor flat, const BatchSize& shape) {
  Index coords(shape.size(), IndexItem(int64_t{0}));
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = flat.remainder(shape[i]);
    flat = flat.div(shape[i], "floor");
  }
  return coords;
}

// A lazy stack takes the rows element by element, as Python's lazy stacks do: each selected
// position is written into the element holding it, at that element's own position. Elements
// with no selected position are left as they are (new keys included).
void put_lazy(const TensorDict& dst, const IndexPlan& plan, const TensorDict& src,
              const std::string& prefix) {
  const BatchSize& batch = dst.batch_size();
  const at::Tensor selected = detail::apply_index(detail::positions(batch), plan);
  const BatchSize selected_shape = selected.sizes().vec();
  TensorDict rows = src.batch_size() == selected_shape ? src : src.expand(selected_shape);
  rows = rows.reshape({selected.numel()});
  const at::Tensor flat = selected.reshape(-1);
  const auto d = static_cast<size_t>(dst.stack_dim());
  int64_t inner = 1;  // positions per step along the stack dim
  for (size_t i = d + 1; i < batch.size(); ++i) inner *= batch[i];
  const at::Tensor element = flat.div(inner, "floor").remainder(batch[d]);
  const at::Tensor local = flat.div(inner * batch[d], "floor") * inner + flat.remainder(inner);
  BatchSize element_batch = batch;
  element_batch.erase(element_batch.begin() + static_cast<std::ptrdiff_t>(d));
  const auto& elements = detail::lazy::state(dst).tds;
  for (size_t k = 0; k < elements.size(); ++k) {
    const at::Tensor mine = (element == static_cast<int64_t>(k)).nonzero().flatten();
    if (mine.numel() == 0) continue;
    TensorDict target = elements[k];
    if (element_batch.empty()) {  // a 0-dim element: the last row written to it wins
      put_level(target, detail::plan_index({}, {}), rows.index({mine[-1].item<int64_t>()}), prefix);
    } else {
      const Index at = unravel(local.index({mine}), element_batch);
      put_level(target, detail::plan_index(at, element_batch), rows.index({mine}), prefix);
    }
  }
}

void put_level(TensorDict& dst, const IndexPlan& plan, const TensorDict& src,
               const std::string& prefix) {
  if (dst.is_lazy_stack()) return put_lazy(dst, plan, src, prefix);
  const auto& s = detail::impl_of(src);
  for (size_t i = 0; i < s.keys.size(); ++i) {
    const std::string& name = s.keys[i];
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    const Value& value = s.values[i];
    if (detail::impl_of(dst).find(name) < 0) dst.set(name, preallocate(dst, src, value));
    Value& slot = detail::impl_of(dst).values[static_cast<size_t>(detail::impl_of(dst).find(name))];
    const bool same_kind =
        slot.kind() == value.kind() || (slot.is_non_tensor() && value.is_non_tensor());
    if (!same_kind) {
      throw TypeError("index_put_: key '" + key + "' holds a " + slot.kind_name() +
                      ", cannot write a " + value.kind_name() + " into it");
    }
    if (value.is_tensor()) {
      put_tensor(slot.tensor(), plan, value.tensor(), key);
    } else if (value.is_tensordict()) {
      TensorDict child = slot.tensordict();
      put_level(child, plan, value.tensordict(), key);
    } else {
      put_non_tensor(slot, plan, value, dst.batch_size(), key);
    }
  }
}

}  // namespace

TensorDict& TensorDict::index_put_(const Index& index, const TensorDict& value) {
  const IndexPlan plan = detail::plan_index(index, impl_->batch_size);
  // The value's entries are read level by level: a lazy stack in it (which holds elements, not
  // entries) is read densified, as Python reads it through get().
  put_level(*this, plan, value.densify(), "");
  return *this;
}

}  // namespace tensordict

namespace tensordict {

TensorDict& TensorDict::update_at_(const TensorDict& other, const Index& index) {
  for (const auto& key : other.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    if (!contains(key)) {
      throw KeyError("update_at_: key " + key.repr() + " is not in the TensorDict updated");
    }
  }
  return index_put_(index, other);
}

namespace {

// The batch shape `index` selects of `batch`.
std::vector<int64_t> selected_batch(const BatchSize& batch, const Index& index) {
  return detail::apply_index(detail::positions(batch), detail::plan_index(index, batch))
      .sizes()
      .vec();
}

// `value` cast to the tensor `leaf` at `key` and broadcast to its part of batch shape `selected`,
// as `tensor[index] = value` broadcasts; ShapeError naming the key otherwise.
at::Tensor broadcast_to_part(const at::Tensor& leaf, const NestedKey& key, const at::Tensor& value,
                             std::vector<int64_t> selected, size_t batch_dims) {
  std::vector<int64_t> target = std::move(selected);
  target.insert(target.end(), leaf.sizes().begin() + static_cast<std::ptrdiff_t>(batch_dims),
                leaf.sizes().end());
  if (!at::is_expandable_to(value.sizes(), target)) {
    throw ShapeError("set_at_: a value of shape " + shape_str(value.sizes()) +
                     " does not broadcast to " + shape_str(target) + ", key " + key.repr() +
                     " indexed");
  }
  return value.to(leaf.scalar_type()).expand(target);
}

}  // namespace

TensorDict& TensorDict::set_at_(const NestedKey& key, const at::Tensor& value, const Index& index) {
  if (!contains(key)) throw KeyError("set_at_: key " + key.repr() + " not found");
  const auto selected = selected_batch(batch_size(), index);
  TensorDict part = detail::make_tensordict(selected, device());
  part.set(key, broadcast_to_part(get(key), key, value, selected, batch_dims()));
  return update_at_(part, index);
}

TensorDict& TensorDict::index_put_(const Index& index, const at::Tensor& value) {
  // Every leaf's part made first, then one write: a value that does not fit one leaf writes none.
  const auto selected = selected_batch(batch_size(), index);
  TensorDict part = detail::make_tensordict(selected, device());
  for (const auto& [key, leaf] : items(true, true)) {
    if (leaf.is_tensor())
      part.set(key, broadcast_to_part(leaf.tensor(), key, value, selected, batch_dims()));
  }
  return update_at_(part, index);
}

TensorDict& TensorDict::index_put_(const Index& index, const at::Scalar& value) {
  return index_put_(index, at::scalar_tensor(value));
}

at::Tensor TensorDict::get_at(const NestedKey& key, const Index& index) const {
  TensorDict alone = detail::make_tensordict(batch_size(), device());
  alone.set(key, get(key));  // KeyError naming the key when missing
  return alone.index(index).get(key);
}

at::Tensor TensorDict::get_at(const NestedKey& key, const Index& index,
                              const at::Tensor& default_value) const {
  return contains(key) ? get_at(key, index) : default_value;
}

TensorDict& TensorDict::copy_at_(const TensorDict& other, const Index& index) {
  return update_at_(other, index);
}

}  // namespace tensordict
