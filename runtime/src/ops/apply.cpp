// Per-leaf ops: apply, casts and copies, in-place fills, masked_fill and where.
#include <ATen/ATen.h>

#include "lazy/internal.h"
#include "ops/util.h"

namespace tensordict {

using detail::map_leaves;

TensorDict TensorDict::apply(const LeafFn& fn) const { return map_leaves(*this, fn, "apply"); }

namespace {

TensorDict named_level(const TensorDict& td, const std::optional<NestedKey>& prefix,
                       const std::function<at::Tensor(const NestedKey&, const at::Tensor&)>& fn,
                       bool nested_keys) {
  if (td.is_lazy_stack()) {
    return detail::lazy::per_element(
        td, [&](const TensorDict& e) { return named_level(e, prefix, fn, nested_keys); });
  }
  TensorDict out = detail::empty_result_of(td);
  for (const auto& [key, value] : td.items()) {
    const NestedKey full = prefix ? prefix->child(key.front()) : key;
    if (value.is_tensor()) {
      at::Tensor mapped = fn(nested_keys ? full : key, value.tensor());
      if (mapped.defined()) out.set(key, mapped);  // undefined: dropped, as apply
    } else if (value.is_tensordict()) {
      out.set(key, named_level(value.tensordict(), full, fn, nested_keys));
    } else {
      out.set(key, value);
    }
  }
  return out;
}

}  // namespace

TensorDict TensorDict::named_apply(
    const std::function<at::Tensor(const NestedKey&, const at::Tensor&)>& fn,
    bool nested_keys) const {
  return named_level(*this, std::nullopt, fn, nested_keys);
}

namespace {

// The entry of `other` matching `key` in `self`'s walk; KeyError/TypeError naming the key. With
// `missing_ok`, nullptr when `other` lacks it.
const Value* partner(const TensorDict& other, const std::string& name, const std::string& key,
                     const Value& mine, const char* op, bool missing_ok) {
  const int64_t slot = detail::impl_of(other).find(name);
  if (slot < 0) {
    if (missing_ok) return nullptr;
    throw KeyError(std::string(op) + ": key '" + key + "' is missing from the other TensorDict");
  }
  const Value& theirs = detail::impl_of(other).values[static_cast<size_t>(slot)];
  if (theirs.kind() != mine.kind() && !(theirs.is_non_tensor() && mine.is_non_tensor())) {
    throw TypeError(std::string(op) + ": key '" + key + "' is a " + mine.kind_name() +
                    " here but a " + theirs.kind_name() + " in the other TensorDict");
  }
  return &theirs;
}

// Walks `a` and `b` together; tensors go through `tensor_fn`, non-tensors through `other_fn`.
// With `missing_ok`, what `b` lacks reaches `tensor_fn` as an undefined tensor (a non-tensor entry
// is kept, a TensorDict walked against an empty one).
TensorDict zip(const TensorDict& a, const TensorDict& b, const std::string& prefix, const char* op,
               const LeafFn2& tensor_fn,
               const std::function<Value(const Value&, const Value&, const BatchSize&)>& other_fn,
               bool missing_ok = false) {
  const auto& src = detail::impl_of(a);
  TensorDict out = detail::empty_result_of(a);
  std::vector<Value> values;
  values.reserve(src.keys.size());
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const std::string key = prefix.empty() ? src.keys[i] : prefix + "." + src.keys[i];
    const Value& mine = src.values[i];
    const Value* theirs = partner(b, src.keys[i], key, mine, op, missing_ok);
    if (mine.is_tensor()) {
      at::Tensor r;
      try {
        r = tensor_fn(mine.tensor(), theirs ? theirs->tensor() : at::Tensor());
      } catch (const c10::Error& e) {
        detail::rethrow_torch(op, key, mine.tensor().sizes(), e);
      }
      values.emplace_back(std::move(r));  // undefined: dropped
    } else if (mine.is_tensordict()) {
      const TensorDict none = detail::empty_like_meta(mine.tensordict());
      values.emplace_back(zip(mine.tensordict(), theirs ? theirs->tensordict() : none, key, op,
                              tensor_fn, other_fn, missing_ok));
    } else {
      values.push_back(theirs ? other_fn(mine, *theirs, src.batch_size) : mine);
    }
  }
  detail::set_values(detail::impl_of(out), src, std::move(values));
  return out;
}

Value keep_first(const Value& a, const Value&, const BatchSize&) { return a; }

}  // namespace

TensorDict detail::zip_leaves(const TensorDict& a, const TensorDict& b, const LeafFn2& fn,
                              const char* op, bool missing_ok) {
  // As Python: a lazy stack pairs each element with the other's row along its stack dim; a lazy
  // other is read as the dense TensorDict it stands for.
  if (a.is_lazy_stack()) {
    return lazy::zip_elements(
        a, b.unbind(a.stack_dim()),
        [&](const TensorDict& element, const TensorDict& row) {
          return zip_leaves(element, row, fn, op, missing_ok);
        },
        op);
  }
  return zip(a, b.is_lazy_stack() ? b.densify() : b, "", op, fn, keep_first, missing_ok);
}

TensorDict TensorDict::apply(const LeafFn2& fn, const TensorDict& other, bool default_none) const {
  return detail::zip_leaves(*this, other, fn, "apply", default_none);
}

TensorDict& TensorDict::apply_(const LeafFn2& fn, const TensorDict& other, bool default_none) {
  return update_(apply(fn, other, default_none));
}

TensorDict& TensorDict::named_apply_(
    const std::function<at::Tensor(const NestedKey&, const at::Tensor&)>& fn, bool nested_keys) {
  return update_(named_apply(fn, nested_keys));  // undefined results were dropped: left as is
}

TensorDict& TensorDict::apply_(const LeafFn& fn) {
  detail::for_each_leaf(*this, [&](const NestedKey& key, at::Tensor& t) {
    at::Tensor r = fn(t);
    if (!r.defined() || r.is_same(t)) return;  // fn already wrote in place
    if (r.sizes() != t.sizes()) {
      throw ShapeError("apply_: the result for key " + key.repr() + " has shape " +
                       shape_str(r.sizes()) + ", expected " + shape_str(t.sizes()));
    }
    t.copy_(r);
  });
  return *this;
}

TensorDict TensorDict::to(at::Device device, bool non_blocking) const {
  const at::Tensor flat = detail::consolidated_buffer(*this);
  if (flat.defined()) {  // one copy of the buffer; the result is locked, as Python's
    TensorDict out = detail::rebuild_over(*this, flat.to(device, non_blocking), device);
    return out.lock_();
  }
  return map_leaves(
      *this, [device, non_blocking](const at::Tensor& t) { return t.to(device, non_blocking); },
      "to", device);
}

TensorDict TensorDict::to(at::ScalarType dtype) const {
  return map_leaves(
      *this, [dtype](const at::Tensor& t) { return t.to(dtype); }, "to");
}

namespace {

// Row-major strides of `t`'s shape: is_contiguous() also accepts other strides on size-1 dims.
bool has_canonical_strides(const at::Tensor& t) {
  int64_t expected = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

}  // namespace

TensorDict TensorDict::contiguous(bool canonical) const {
  // As Python: a lazy stack's contiguous form is the dense stack of its entries.
  const TensorDict dense = densify();
  TensorDict out = map_leaves(
      dense,
      [canonical](const at::Tensor& t) {
        if (canonical && !has_canonical_strides(t)) return t.clone(at::MemoryFormat::Contiguous);
        return t.contiguous();
      },
      "contiguous");
  detail::inherit_consolidated(dense, out);
  return out;
}

TensorDict& TensorDict::contiguous_(bool canonical) {
  // A lazy stack's contiguous form is a dense TensorDict, which it cannot become in place (adopt
  // refuses it, as Python's contiguous(inplace=True) does).
  return detail::adopt(*this, contiguous(canonical), "contiguous_");
}

TensorDict TensorDict::detach() const {
  TensorDict out = map_leaves(
      *this, [](const at::Tensor& t) { return t.detach(); }, "detach");
  detail::inherit_consolidated(*this, out);
  return detail::locked_as(*this, out);
}

TensorDict& TensorDict::zero_() {
  const at::Tensor flat = detail::consolidated_buffer(*this);
  if (flat.defined()) {  // one memset for the whole TensorDict
    flat.zero_();
    return *this;
  }
  detail::for_each_leaf(*this, [](const NestedKey&, at::Tensor& t) { t.zero_(); });
  return *this;
}

TensorDict& TensorDict::fill_(const NestedKey& key, const at::Scalar& value) {
  // Through a lazy stack, each element fills its own entry (reading it would stack a copy).
  if (const auto lazy = detail::lazy::on_path(*this, key)) {
    detail::lazy::for_each(lazy->first, [&](TensorDict& e) { e.fill_(lazy->second, value); });
    return *this;
  }
  const Value entry = get_value(key);
  if (entry.is_tensor()) {
    entry.tensor().fill_(value);
  } else if (entry.is_tensordict()) {
    detail::for_each_leaf(entry.tensordict(),
                          [&](const NestedKey&, at::Tensor& t) { t.fill_(value); });
  } else {
    throw TypeError("fill_: key " + key.repr() + " holds a " + entry.kind_name() +
                    ", not a Tensor or TensorDict");
  }
  return *this;
}

namespace {

// A batch mask viewed with trailing singleton dims so that it broadcasts over `t`'s feature dims.
at::Tensor broadcast_mask(const at::Tensor& mask, const at::Tensor& t) {
  detail::Shape shape(mask.sizes().begin(), mask.sizes().end());
  shape.resize(static_cast<size_t>(std::max(t.dim(), mask.dim())), 1);
  return mask.view(shape);
}

void check_mask(const at::Tensor& mask, const BatchSize& batch, const char* op) {
  const auto covered = at::IntArrayRef(batch).slice(0, std::min(batch.size(), mask.sizes().size()));
  if (mask.scalar_type() != at::kBool) {
    throw TypeError(std::string(op) + ": the mask must be a bool tensor, got " +
                    std::string(c10::toString(mask.scalar_type())));
  }
  if (mask.dim() > static_cast<int64_t>(batch.size()) || mask.sizes() != covered) {
    throw ShapeError(std::string(op) + ": mask of shape " + shape_str(mask.sizes()) +
                     " does not match the leading dims of batch_size " + shape_str(batch));
  }
}

}  // namespace

TensorDict TensorDict::masked_fill(const at::Tensor& mask, const at::Scalar& value) const {
  check_mask(mask, batch_size(), "masked_fill");
  if (impl_->lazy) {
    return detail::lazy::zip_elements(
        *this, detail::lazy::rows_along_stack(*this, mask),
        [&](const TensorDict& element, const at::Tensor& rows) {
          return element.masked_fill(rows, value);
        },
        "masked_fill");
  }
  return map_leaves(
      *this, [&](const at::Tensor& t) { return t.masked_fill(broadcast_mask(mask, t), value); },
      "masked_fill");
}

TensorDict& TensorDict::masked_fill_(const at::Tensor& mask, const at::Scalar& value) {
  check_mask(mask, batch_size(), "masked_fill_");
  if (impl_->lazy) return detail::lazy::masked_fill_(*this, mask, value);
  detail::for_each_leaf(*this, [&](const NestedKey&, at::Tensor& t) {
    t.masked_fill_(broadcast_mask(mask, t), value);
  });
  return *this;
}

TensorDict TensorDict::where(const at::Tensor& condition, const TensorDict& other) const {
  check_mask(condition, batch_size(), "where");
  if (impl_->lazy) return detail::lazy::where(*this, condition, other);
  auto tensors = [&](const at::Tensor& a, const at::Tensor& b) {
    return at::where(broadcast_mask(condition, a), a, b);
  };
  // Non-tensor entries: pick items by position from the concatenation of both.
  auto non_tensors = [&](const Value& a, const Value& b, const BatchSize& batch) -> Value {
    if (a.is_non_tensor_data() && b.is_non_tensor_data() &&
        a.non_tensor_data() == b.non_tensor_data()) {
      return a;
    }
    auto as_stack = [&](const Value& v) {
      return v.is_non_tensor_stack() ? v.non_tensor_stack()
                                     : NonTensorStack::filled(batch, v.non_tensor_data().data);
    };
    const NonTensorStack sa = as_stack(a);
    const NonTensorStack sb = as_stack(b);
    std::vector<Json> items = sa.items().to_vector();
    items.insert(items.end(), sb.items().begin(), sb.items().end());
    const at::Tensor pa = detail::positions(sa.shape());
    const at::Tensor pos = at::where(broadcast_mask(condition, pa), pa, pa + sa.numel());
    return detail::gather_items(items, pos);
  };
  return zip(*this, other, "", "where", tensors, non_tensors);
}

TensorDict TensorDict::where(const at::Tensor& condition, const at::Scalar& other) const {
  return where(condition, apply([&](const at::Tensor& t) { return at::full_like(t, other); }));
}

TensorDict TensorDict::where(const at::Tensor& condition, const TensorDict& other,
                             const at::Scalar& pad) const {
  // Each side gets `pad` where the other has a tensor it lacks (non-tensor data as it is).
  TensorDict mine = clone(false);
  TensorDict theirs = other.clone(false);
  auto fill_missing = [&pad](TensorDict& into, const TensorDict& from) {
    for (const auto& key : from.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
      if (into.contains(key)) continue;
      const Value value = from.get_value(key);
      const at::Tensor* t = value.tensor_if();
      into.set(key, t ? Value(at::full_like(*t, pad)) : value);
    }
  };
  fill_missing(theirs, *this);
  fill_missing(mine, other);
  return mine.where(condition, theirs);
}

TensorDict& TensorDict::apply_out(TensorDict& out, const LeafFn& fn) const {
  return out.update(apply(fn));
}
TensorDict& TensorDict::where_out(TensorDict& out, const at::Tensor& condition,
                                  const TensorDict& other, std::optional<at::Scalar> pad) const {
  return detail::write_into(out, pad ? where(condition, other, *pad) : where(condition, other));
}
TensorDict& TensorDict::gather_out(TensorDict& out, int64_t dim, const at::Tensor& index) const {
  return detail::write_into(out, gather(dim, index));
}

TensorDict TensorDict::replace(const TensorDict& other) const {
  TensorDict out = clone(false);
  return out.update(other);
}

TensorDict TensorDict::new_tensor(const TensorDict& data) const {
  return (device() ? data.to(*device()) : data).clone();
}
at::Tensor TensorDict::new_tensor(const at::Tensor& data) const {
  return (device() ? data.to(*device()) : data).clone();
}

TensorDict& TensorDict::to_(at::Device device) {
  if (impl_->lazy) {
    detail::lazy::for_each(*this, [&](TensorDict& element) { element.to_(device); });
    return *this;
  }
  detail::adopt(*this, to(device), "to_");
  impl_->device = device;
  return *this;
}
TensorDict& TensorDict::to_(at::ScalarType dtype) {
  if (impl_->lazy) {
    detail::lazy::for_each(*this, [&](TensorDict& element) { element.to_(dtype); });
    return *this;
  }
  return detail::adopt(*this, to(dtype), "to_");
}

}  // namespace tensordict
