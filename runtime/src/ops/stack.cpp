// stack and cat: one recursive walk; they differ only in the tensor op and the shape rule. Also
// pad_sequence and the maybe-dense stacks built on them.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "lazy/internal.h"
#include "ops/util.h"
#include "tensordict/dtype.h"

namespace tensordict {
namespace {

struct Combine {
  const char* name;  // "stack" or "cat"
  bool new_dim;      // stack inserts a dim; cat grows an existing one
  int64_t dim;
  // maybe_dense_stack: a lazy stack where the keys or batch sizes differ, instead of an error.
  bool lazy_fallback = false;

  at::Tensor tensors(at::TensorList ts) const {
    return new_dim ? at::stack(ts, dim) : at::cat(ts, dim);
  }
  // stack needs equal shapes; cat equal shapes except at `dim`.
  bool compatible(at::IntArrayRef a, at::IntArrayRef b) const {
    if (a.size() != b.size()) return false;
    for (size_t d = 0; d < a.size(); ++d)
      if (a[d] != b[d] && (new_dim || static_cast<int64_t>(d) != dim)) return false;
    return true;
  }
  void check(const std::string& key, at::IntArrayRef a, at::IntArrayRef b, size_t k) const {
    if (!compatible(a, b)) {
      throw ShapeError(std::string(name) + ": key '" + key + "' has shape " + shape_str(a) +
                       " in TensorDict 0 but " + shape_str(b) + " in TensorDict " +
                       std::to_string(k));
    }
  }
};

// The entry `name` of every TensorDict (same slot in the common case of equal key order).
std::vector<const Value*> gather(const std::vector<TensorDict>& tds, size_t slot,
                                 const std::string& key, const Combine& op) {
  const std::string& name = detail::impl_of(tds[0]).keys[slot];
  std::vector<const Value*> out;
  out.reserve(tds.size());
  for (size_t k = 0; k < tds.size(); ++k) {
    const auto& impl = detail::impl_of(tds[k]);
    int64_t at = slot < impl.keys.size() && impl.keys[slot] == name ? static_cast<int64_t>(slot)
                                                                    : impl.find(name);
    if (at < 0) {
      throw KeyError(std::string(op.name) + ": key '" + key + "' is in TensorDict 0 but not in " +
                     "TensorDict " + std::to_string(k));
    }
    const Value& v = impl.values[static_cast<size_t>(at)];
    const bool same =
        out.empty() || v.kind() == out[0]->kind() || (v.is_non_tensor() && out[0]->is_non_tensor());
    if (!same) {
      throw TypeError(std::string(op.name) + ": key '" + key + "' is a " + out[0]->kind_name() +
                      " in TensorDict 0 but a " + v.kind_name() + " in TensorDict " +
                      std::to_string(k));
    }
    out.push_back(&v);
  }
  return out;
}

// Non-tensor entries: stack builds a NonTensorStack (tensordict 0.14, whose
// capture_non_tensor_stack is off by default) but of equal MetaData, or of equal NonTensorData
// under capture_non_tensor_stack; cat keeps equal NonTensorData as one, as Python. Otherwise
// items follow the positions.
Value combine_non_tensor(const std::vector<const Value*>& vs, const std::vector<TensorDict>& tds,
                         const std::string& key, const Combine& op) {
  bool all_equal_data = true, all_metadata = true;
  for (const Value* v : vs) {
    all_equal_data = all_equal_data && v->is_non_tensor_data() &&
                     v->non_tensor_data() == vs[0]->non_tensor_data();
    all_metadata = all_metadata && v->is_non_tensor_data() && v->non_tensor_data().metadata;
  }
  if (all_equal_data && (!op.new_dim || all_metadata || capture_non_tensor_stack())) return *vs[0];
  std::vector<Json> items;
  std::vector<at::Tensor> pos;
  for (size_t k = 0; k < vs.size(); ++k) {
    const NonTensorStack s =
        vs[k]->is_non_tensor_stack()
            ? vs[k]->non_tensor_stack()
            : NonTensorStack::filled(tds[k].batch_size(), vs[k]->non_tensor_data().data);
    if (k > 0) op.check(key, pos[0].sizes(), s.shape(), k);  // items carry their own dims
    pos.push_back(detail::positions(s.shape(), static_cast<int64_t>(items.size())));
    items.insert(items.end(), s.items().begin(), s.items().end());
  }
  return detail::gather_items(items, op.tensors(pos));
}

BatchSize combined_batch(const std::vector<TensorDict>& tds, const Combine& op) {
  BatchSize batch = tds[0].batch_size();
  const auto d = static_cast<size_t>(op.dim);
  if (op.new_dim) {
    batch.insert(batch.begin() + op.dim, static_cast<int64_t>(tds.size()));
  } else {
    batch[d] = 0;
    for (const auto& td : tds) batch[d] += td.batch_size()[d];
  }
  return batch;
}

// Python's names: cat keeps the first TensorDict's; stack inserts an unnamed dim when every
// input has the same names, and drops them otherwise.
std::optional<DimNames> combined_names(const std::vector<TensorDict>& tds, const Combine& op) {
  std::optional<DimNames> names = detail::impl_of(tds[0]).names;
  if (!op.new_dim || !names) return names;
  for (const auto& td : tds)
    if (detail::impl_of(td).names != names) return std::nullopt;
  names->insert(names->begin() + op.dim, std::nullopt);
  return names;
}

// Names a key that TensorDict 0 (keys `first`) and TensorDict k (`other`) do not share.
std::string key_difference(const std::vector<std::string>& first, const TensorDict& other,
                           size_t k) {
  const std::string td_k = "TensorDict " + std::to_string(k);
  for (const auto& key : first) {
    if (other.slot_of(key) < 0) return td_k + " lacks key '" + key + "' of TensorDict 0";
  }
  for (size_t i = 0; i < other.size(); ++i) {
    const std::string& key = other.key_at(i);
    if (std::find(first.begin(), first.end(), key) == first.end()) {
      return td_k + " has key '" + key + "' that TensorDict 0 lacks";
    }
  }
  return td_k + " has other keys than TensorDict 0";
}

// Whether every TensorDict has the batch size and the keys of the first (any order).
// The shape Python's dense stack compares per key: a tensor's sizes, a TensorDict's batch size.
std::vector<int64_t> entry_shape(const Value& v) {
  if (v.is_tensor()) return v.tensor().sizes().vec();
  if (v.is_tensordict()) return v.tensordict().batch_size();
  return {};
}

// True when `tds` stack densely at this level: same batch size and keys, and under each key
// entries of one shape (ragged tensors or nested batch sizes make Python's maybe_dense_stack lazy).
bool congruent(const std::vector<TensorDict>& tds) {
  const auto& first = detail::impl_of(tds[0]);
  return std::all_of(tds.begin(), tds.end(), [&](const TensorDict& td) {
    return td.batch_size() == first.batch_size && td.size() == first.keys.size() &&
           std::all_of(first.keys.begin(), first.keys.end(), [&](const std::string& key) {
             const int64_t slot = td.slot_of(key);
             return slot >= 0 && entry_shape(td.value_at(static_cast<size_t>(slot))) ==
                                     entry_shape(first.values[&key - first.keys.data()]);
           });
  });
}

TensorDict combine(const std::vector<TensorDict>& tds, const Combine& op,
                   const std::string& prefix);

// A lazy stack anywhere keeps the result lazy (Python's stack of lazy stacks);
// maybe_dense_stack stacks lazy stacks along one stack dim element by element.
TensorDict combine_lazy(const std::vector<TensorDict>& tds, const Combine& op,
                        const std::string& prefix) {
  if (op.lazy_fallback) {
    auto elementwise = detail::lazy::stack_elementwise(
        tds, op.dim, [&](const std::vector<TensorDict>& parts, int64_t dim) {
          Combine inner = op;
          inner.dim = dim;
          return combine(parts, inner, prefix);
        });
    if (elementwise) return *elementwise;
  }
  return op.new_dim ? detail::lazy::stack_any(tds, op.dim) : detail::lazy::cat_any(tds, op.dim);
}

TensorDict combine(const std::vector<TensorDict>& tds, const Combine& op,
                   const std::string& prefix) {
  if (std::any_of(tds.begin(), tds.end(), [](const TensorDict& td) { return td.is_lazy_stack(); }))
    return combine_lazy(tds, op, prefix);
  if (op.lazy_fallback && !congruent(tds)) return lazy_stack(tds, op.dim);
  const auto& first = detail::impl_of(tds[0]);
  for (size_t k = 1; k < tds.size(); ++k) {
    const std::string where = prefix.empty() ? "" : " at key '" + prefix + "'";
    if (!op.compatible(first.batch_size, tds[k].batch_size())) {
      throw ShapeError(std::string(op.name) + ": batch_size " + shape_str(first.batch_size) +
                       " of TensorDict 0" + where + " does not match batch_size " +
                       shape_str(tds[k].batch_size()) + " of TensorDict " + std::to_string(k));
    }
    if (tds[k].size() != first.keys.size()) {
      throw KeyError(std::string(op.name) + ": " + key_difference(first.keys, tds[k], k) + where +
                     " (" + std::to_string(first.keys.size()) + " keys vs " +
                     std::to_string(tds[k].size()) + ")");
    }
  }
  TensorDict out =
      detail::make_tensordict(combined_batch(tds, op), first.device, combined_names(tds, op));
  detail::impl_of(out).class_info = detail::common_class(tds);
  std::vector<Value> values;
  values.reserve(first.keys.size());
  std::vector<at::Tensor> ts(tds.size());
  std::vector<TensorDict> children(tds.size());
  for (size_t i = 0; i < first.keys.size(); ++i) {
    const std::string key = detail::join_key(prefix, first.keys[i]);
    const auto vs = gather(tds, i, key, op);
    if (vs[0]->is_tensor()) {
      for (size_t k = 0; k < vs.size(); ++k) {
        ts[k] = vs[k]->tensor();
        op.check(key, ts[0].sizes(), ts[k].sizes(), k);
      }
      values.emplace_back(op.tensors(ts));
    } else if (vs[0]->is_tensordict()) {
      for (size_t k = 0; k < vs.size(); ++k) children[k] = vs[k]->tensordict();
      values.emplace_back(combine(children, op, key));
    } else {
      values.push_back(combine_non_tensor(vs, tds, key, op));
    }
  }
  detail::set_values(detail::impl_of(out), first, std::move(values));
  return out;
}

TensorDict run(const std::vector<TensorDict>& tds, int64_t dim, bool new_dim, const char* name,
               bool lazy_fallback = false) {
  if (tds.empty()) throw ShapeError(std::string(name) + ": expected at least one TensorDict");
  const auto& batch = tds[0].batch_size();
  const auto ndim = static_cast<int64_t>(batch.size()) + (new_dim ? 1 : 0);
  const Combine op{name, new_dim, detail::wrap_dim(dim, ndim, name, batch), lazy_fallback};
  return combine(tds, op, "");
}

}  // namespace

TensorDict stack(const std::vector<TensorDict>& tds, int64_t dim) {
  return run(tds, dim, true, "stack");
}

TensorDict cat(const std::vector<TensorDict>& tds, int64_t dim) {
  return run(tds, dim, false, "cat");
}

namespace {

// pad_sequence's dim `pad_dim` of a leaf (negative: from its last dim).
int64_t leaf_dim(int64_t pad_dim, const at::Tensor& t, const std::string& key) {
  const int64_t pos = pad_dim < 0 ? pad_dim + t.dim() : pad_dim;
  if (pos < 0 || pos >= t.dim()) {
    throw ShapeError("pad_sequence: pad_dim " + std::to_string(pad_dim) +
                     " is out of range for key '" + key + "' of shape " + shape_str(t.sizes()));
  }
  return pos;
}

// pad_sequence of one key: each tensor padded with `value` to the longest along its dim `pad_dim`
// (dim 0 for a 1-dim tensor, as Python's), then stacked along a new dim 0.
at::Tensor pad_and_stack(const std::vector<at::Tensor>& ts, int64_t pad_dim,
                         const at::Scalar& value, const std::string& key) {
  const int64_t ndim = ts[0].dim();
  const int64_t pos = ndim > 1 ? leaf_dim(pad_dim, ts[0], key) : 0;
  int64_t longest = 0;
  for (const auto& t : ts) {
    if (t.dim() != ndim) {
      throw ShapeError("pad_sequence: key '" + key + "' has shape " + shape_str(t.sizes()) +
                       " in one TensorDict and " + shape_str(ts[0].sizes()) + " in the first");
    }
    longest = std::max(longest, t.size(pos));
  }
  // What ATen would stop on deep inside: a padding value the dtype cannot hold (NaN or 1e300
  // into int64), a padded result larger than memory (see machine_memory).
  if (value.isFloatingPoint() && !at::isFloatingType(ts[0].scalar_type()) &&
      !at::isComplexType(ts[0].scalar_type())) {
    const double v = value.toDouble();
    if (!std::isfinite(v) || std::abs(v) >= 9.2e18) {
      throw ValueError("pad_sequence: padding value " + std::to_string(v) + " does not fit key '" +
                       key + "' of dtype " + dtype_name(ts[0].scalar_type()));
    }
  }
  int64_t bytes = static_cast<int64_t>(ts.size()) * ts[0].element_size();
  bool too_big = __builtin_mul_overflow(bytes, longest, &bytes);
  for (int64_t d = 0; d < ndim && !too_big; ++d) {
    if (d != pos) too_big = __builtin_mul_overflow(bytes, ts[0].size(d), &bytes);
  }
  if (too_big || bytes > detail::machine_memory()) {
    throw ShapeError("pad_sequence: key '" + key + "': " + std::to_string(ts.size()) +
                     " values padded to " + std::to_string(longest) + " along dim " +
                     std::to_string(pos) + " take more than this machine's memory");
  }
  try {
    std::vector<at::Tensor> padded;
    padded.reserve(ts.size());
    for (const auto& t : ts) {
      std::vector<int64_t> pad(static_cast<size_t>(2 * (ndim - pos)), 0);  // last dim first
      pad.back() = longest - t.size(pos);
      padded.push_back(at::constant_pad_nd(t, pad, value));
    }
    return at::stack(padded, 0);
  } catch (const c10::Error& e) {
    throw ShapeError("pad_sequence: key '" + key + "': " + detail::first_line(e.what()));
  }
}

}  // namespace

TensorDict pad_sequence(const std::vector<TensorDict>& tds, int64_t pad_dim, double padding_value,
                        const std::optional<NestedKey>& masks_key) {
  if (tds.empty()) throw ShapeError("pad_sequence: expected at least one TensorDict");
  const std::vector<NestedKey> keys = tds[0].keys(/*include_nested=*/true, /*leaves_only=*/true);
  const auto nb = static_cast<int64_t>(tds[0].ndim());
  BatchSize batch = tds[0].batch_size();
  bool pads_batch = nb > 0;  // the pad dim is a batch dim of every leaf: the batch grows
  int64_t longest = 0;
  for (size_t k = 0; k < tds.size(); ++k) {
    if (tds[k].keys(true, true, true) != tds[0].keys(true, true, true) ||
        tds[k].batch_size().size() != batch.size()) {
      throw KeyError("pad_sequence: TensorDict " + std::to_string(k) +
                     " has other leaf keys or batch dims than TensorDict 0");
    }
    for (const auto& key : keys) {
      const Value value = tds[k].get_value(key);
      const at::Tensor* t = value.tensor_if();
      if (t == nullptr) continue;
      if (t->dim() == 0) {
        throw ShapeError("pad_sequence: key " + key.repr() +
                         " is a scalar, which cannot be padded");
      }
      const int64_t pos = leaf_dim(pad_dim, *t, key.join("."));
      longest = std::max(longest, t->size(pos));
      pads_batch = pads_batch && pos < nb;
    }
  }
  if (pads_batch)
    batch[static_cast<size_t>(detail::wrap_dim(pad_dim, nb, "pad_sequence", batch))] = longest;
  BatchSize stacked = batch;
  stacked.insert(stacked.begin(), static_cast<int64_t>(tds.size()));
  TensorDict out(std::vector<std::pair<NestedKey, Value>>{}, stacked, tds[0].device());
  for (const auto& key : keys) {
    if (!tds[0].get_value(key).is_tensor()) {  // non-tensor entries: one item per TensorDict
      std::vector<TensorDict> items;
      for (const auto& td : tds) items.push_back(TensorDict({{key, td.get_value(key)}}, batch));
      out.set(key, stack(items, 0).get_value(key));
      continue;
    }
    std::vector<at::Tensor> values, masks;
    for (const auto& td : tds) {
      const at::Tensor t = td.get(key);
      values.push_back(t);
      if (!masks_key) continue;
      BatchSize mask_shape = td.batch_size();  // true where the values are not padding
      const int64_t pos = leaf_dim(pad_dim, t, key.join("."));
      if (pos >= nb) mask_shape.push_back(t.size(pos));
      masks.push_back(at::ones(mask_shape, t.options().dtype(at::kBool)));
    }
    out.set(key, pad_and_stack(values, pad_dim, padding_value, key.join(".")));
    if (masks_key) {
      std::vector<std::string> parts(masks_key->begin(), masks_key->end());
      parts.insert(parts.end(), key.begin(), key.end());
      out.set(NestedKey(parts), pad_and_stack(masks, pad_dim, false, key.join(".")));
    }
  }
  return out;
}

TensorDict maybe_dense_stack(const std::vector<TensorDict>& tds, int64_t dim) {
  return run(tds, dim, true, "maybe_dense_stack", /*lazy_fallback=*/true);
}

TensorDict dense_stack_tds(const std::vector<TensorDict>& tds, int64_t dim) {
  return maybe_dense_stack(tds, dim);
}

TensorDict dense_stack_tds(const TensorDict& td) {
  if (!td.is_lazy_stack()) return td;
  return maybe_dense_stack(td.tensordicts(), td.stack_dim());
}

TensorDict& stack_out(TensorDict& out, const std::vector<TensorDict>& tds, int64_t dim) {
  return detail::write_into(out, stack(tds, dim));
}
TensorDict& cat_out(TensorDict& out, const std::vector<TensorDict>& tds, int64_t dim) {
  return detail::write_into(out, cat(tds, dim));
}

}  // namespace tensordict
