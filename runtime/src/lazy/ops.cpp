// LazyStackedTensorDict ops: indexing, unbind, stack / cat, update, densify, padded get.
#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "core/shape.h"
#include "lazy/internal.h"

namespace tensordict {
namespace detail::lazy {
namespace {

// Batch dims an index entry consumes, and result dims it produces.
int64_t consumed(const IndexItem& ix) {
  if (ix.is_none() || ix.is_ellipsis() || ix.is_boolean()) return 0;
  if (ix.is_tensor() && ix.tensor().scalar_type() == at::kBool) return ix.tensor().dim();
  return 1;
}
int64_t produced(const IndexItem& ix) {
  if (ix.is_integer() || ix.is_ellipsis()) return 0;
  if (ix.is_tensor() && ix.tensor().scalar_type() != at::kBool) return ix.tensor().dim();
  return 1;
}

// The elements an index entry on the stack dim selects (an int selects one and drops the dim).
std::vector<int64_t> selected(const IndexItem& ix, int64_t n) {
  std::vector<int64_t> out;
  if (ix.is_integer()) {
    int64_t i = ix.integer();
    if (i < -n || i >= n) {
      throw ShapeError("index: index " + std::to_string(i) + " is out of range for the " +
                       std::to_string(n) + " elements of the lazy stack");
    }
    out.push_back(i < 0 ? i + n : i);
  } else if (ix.is_slice()) {
    const Slice& s = ix.slice();
    at::Tensor pos = positions({n}).slice(
        0, s.start().value_or(0), s.stop().value_or(std::numeric_limits<int64_t>::max()), s.step());
    for (int64_t k = 0; k < pos.numel(); ++k) out.push_back(pos[k].item<int64_t>());
  } else if (ix.is_tensor() && ix.tensor().dim() == 1) {
    at::Tensor pos = positions({n}).index({ix.tensor()}).contiguous();
    out.assign(pos.data_ptr<int64_t>(), pos.data_ptr<int64_t>() + pos.numel());
  } else {
    throw TypeError(
        "index: only an int, a slice or a 1-D tensor can index the stack dim of a "
        "lazy stack");
  }
  return out;
}

// Element k itself (same state: writes reach it), as a handle whose reference count is the stack
// state's: the rows of an unbind all touch that one count instead of one per element scattered in
// memory, so a row costs the same at any stack size. The state owns the elements, so the handle
// keeps its element alive.
TensorDict element_handle(const TensorDict& td, size_t k) {
  const std::shared_ptr<LazyState>& owner = detail::impl_of(td).lazy;
  return detail::Access::wrap(
      std::shared_ptr<TensorDictImpl>(owner, &detail::impl_of(owner->tds[k])));
}

}  // namespace

TensorDict index(const TensorDict& td, const Index& index) {
  const LazyState& st = state(td);
  const int64_t nb = td.ndim();
  int64_t used = 0;
  for (const auto& ix : index) used += consumed(ix);
  if (used > nb) {
    throw ShapeError("index: too many indices for batch_size " + shape_str(td.batch_size()) +
                     ": the index covers " + std::to_string(used) + " dims");
  }
  Index ex;  // ellipsis spelled out
  for (const auto& ix : index) {
    if (!ix.is_ellipsis()) {
      ex.push_back(ix);
      continue;
    }
    for (int64_t k = 0; k < nb - used; ++k) ex.emplace_back(Slice());
  }
  int64_t dim = 0, out_dims = 0;
  size_t at = ex.size();
  for (size_t i = 0; i < ex.size(); ++i) {
    const int64_t c = consumed(ex[i]);
    if (dim <= st.stack_dim && st.stack_dim < dim + c) {
      // A boolean mask over several dims including the stack dim picks rows across elements
      // in an order no element holds: the dense stack answers, with the same values.
      if (c != 1) return td.densify().index(index);
      at = i;
      break;
    }
    dim += c;
    out_dims += produced(ex[i]);
  }
  Index rest = ex;
  auto element = [&rest](const TensorDict& e) { return rest.empty() ? e : e.index(rest); };
  std::vector<TensorDict> out;
  if (at == ex.size()) {  // the stack dim is not indexed: it stays, after the produced dims
    for (const auto& e : st.tds) out.push_back(element(e));
    return restack(td, out, out_dims + (st.stack_dim - dim));
  }
  rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(at));
  const auto picks = selected(ex[at], static_cast<int64_t>(st.tds.size()));
  if (ex[at].is_integer()) {
    const auto k = static_cast<size_t>(picks[0]);
    return rest.empty() ? element_handle(td, k) : element(st.tds[k]);
  }
  if (picks.empty()) throw ShapeError("index: the index selects no element of the lazy stack");
  for (int64_t k : picks) out.push_back(element(st.tds[static_cast<size_t>(k)]));
  return restack(td, out, out_dims);
}

std::vector<TensorDict> unbind(const TensorDict& td, int64_t dim) {
  const LazyState& st = state(td);
  const int64_t d = wrap_dim(dim, td.ndim(), "unbind", td.batch_size());
  if (d == st.stack_dim) {  // the elements themselves
    std::vector<TensorDict> out;
    out.reserve(st.tds.size());
    for (size_t k = 0; k < st.tds.size(); ++k) out.push_back(element_handle(td, k));
    return out;
  }
  const int64_t n = td.batch_size()[static_cast<size_t>(d)];
  if (n < 0) {
    throw ShapeError("unbind: dim " + std::to_string(d) + " of the lazy stack of batch_size " +
                     shape_str(td.batch_size()) + " is ragged");
  }
  const int64_t element_dim = d < st.stack_dim ? d : d - 1;
  std::vector<std::vector<TensorDict>> columns(static_cast<size_t>(n));
  for (const auto& e : st.tds) {
    auto parts = e.unbind(element_dim);
    for (size_t j = 0; j < parts.size(); ++j) columns[j].push_back(std::move(parts[j]));
  }
  std::vector<TensorDict> out;
  for (const auto& column : columns)
    out.push_back(restack(td, column, d < st.stack_dim ? st.stack_dim - 1 : st.stack_dim));
  return out;
}

TensorDict stack_any(const std::vector<TensorDict>& tds, int64_t dim) {
  return lazy_stack(tds, dim);
}

std::optional<TensorDict> stack_elementwise(
    const std::vector<TensorDict>& tds, int64_t dim,
    const std::function<TensorDict(const std::vector<TensorDict>&, int64_t)>& stack_elements) {
  for (const auto& td : tds) {
    if (!td.is_lazy_stack() || state(td).stack_dim != state(tds[0]).stack_dim ||
        state(td).tds.size() != state(tds[0]).tds.size()) {
      return std::nullopt;
    }
  }
  const int64_t stack_dim = state(tds[0]).stack_dim;
  const bool before = dim <= stack_dim;  // the new dim comes before the stack dim
  std::vector<TensorDict> out;
  for (size_t i = 0; i < state(tds[0]).tds.size(); ++i) {
    std::vector<TensorDict> parts;
    for (const auto& td : tds) parts.push_back(state(td).tds[i]);
    out.push_back(stack_elements(parts, before ? dim : dim - 1));
  }
  return restack(tds[0], out, before ? stack_dim + 1 : stack_dim);
}

TensorDict cat_any(const std::vector<TensorDict>& tds, int64_t dim) {
  const LazyState& first = state(tds[0]);
  const int64_t d = wrap_dim(dim, tds[0].ndim(), "cat", tds[0].batch_size());
  for (size_t k = 1; k < tds.size(); ++k) {
    if (!tds[k].is_lazy_stack() || state(tds[k]).stack_dim != first.stack_dim) {
      throw TypeError("cat: TensorDict " + std::to_string(k) +
                      " is not a lazy stack along the stack dim " +
                      std::to_string(first.stack_dim) + " of TensorDict 0");
    }
  }
  std::vector<TensorDict> out;
  if (d == first.stack_dim) {  // more elements
    for (const auto& td : tds)
      for (const auto& e : state(td).tds) out.push_back(e);
    return restack(tds[0], out, d);
  }
  const size_t n = first.tds.size();
  for (size_t k = 1; k < tds.size(); ++k) {
    if (state(tds[k]).tds.size() != n) {
      throw ShapeError("cat: lazy stack " + std::to_string(k) + " has " +
                       std::to_string(state(tds[k]).tds.size()) + " elements, lazy stack 0 has " +
                       std::to_string(n));
    }
  }
  for (size_t i = 0; i < n; ++i) {  // element-wise cat along the element's dim
    std::vector<TensorDict> parts;
    for (const auto& td : tds) parts.push_back(state(td).tds[i]);
    out.push_back(cat(parts, d < first.stack_dim ? d : d - 1));
  }
  return restack(tds[0], out, first.stack_dim);
}

void update(const TensorDict& td, const TensorDict& other, bool in_place) {
  const LazyState& st = state(td);
  std::vector<TensorDict> parts;
  if (other.is_lazy_stack() && state(other).stack_dim == st.stack_dim &&
      state(other).tds.size() == st.tds.size()) {
    parts = state(other).tds;
  } else {
    if (other.batch_size() != td.batch_size()) {
      throw ShapeError(std::string(in_place ? "update_" : "update") + ": batch_size " +
                       shape_str(other.batch_size()) + " does not match the lazy stack's " +
                       shape_str(td.batch_size()));
    }
    parts = other.unbind(st.stack_dim);
  }
  for (size_t k = 0; k < st.tds.size(); ++k) {
    TensorDict e = st.tds[k];
    if (in_place) {
      e.update_(parts[k]);
    } else {
      e.update(parts[k]);
    }
  }
}

TensorDict densify(const TensorDict& td) {
  const LazyState& st = state(td);
  std::vector<TensorDict> dense;
  for (const auto& e : st.tds) {
    if (e.batch_size() != st.tds[0].batch_size()) {
      throw ShapeError("densify: the lazy stack is ragged: element " +
                       std::to_string(dense.size()) + " has batch_size " +
                       shape_str(e.batch_size()) + ", element 0 has " +
                       shape_str(st.tds[0].batch_size()) + " (use get_padded for its tensors)");
    }
    dense.push_back(e.densify());
  }
  return stack(dense, st.stack_dim);
}

at::Tensor get_padded(const TensorDict& td, const NestedKey& key, double padding_value) {
  const LazyState& st = state(td);
  std::vector<at::Tensor> ts;
  for (const auto& e : st.tds) ts.push_back(e.get_padded(key, padding_value));
  std::vector<int64_t> longest = ts[0].sizes().vec();
  for (size_t k = 1; k < ts.size(); ++k) {
    if (ts[k].dim() != ts[0].dim()) {
      throw ShapeError("get_padded: key " + key.repr() + " has " + std::to_string(ts[0].dim()) +
                       " dims in element 0 of the lazy stack but " + std::to_string(ts[k].dim()) +
                       " in element " + std::to_string(k));
    }
    for (size_t d = 0; d < longest.size(); ++d) longest[d] = std::max(longest[d], ts[k].size(d));
  }
  for (auto& t : ts) {
    std::vector<int64_t> pad;  // constant_pad_nd: (before, after) pairs from the last dim
    for (size_t d = longest.size(); d-- > 0;) {
      pad.push_back(0);
      pad.push_back(longest[d] - t.size(static_cast<int64_t>(d)));
    }
    t = at::constant_pad_nd(t, pad, padding_value);
  }
  return at::stack(ts, st.stack_dim);
}

TensorDict& masked_fill_(TensorDict& td, const at::Tensor& mask, const at::Scalar& value) {
  const std::vector<at::Tensor> rows = rows_along_stack(td, mask);
  size_t k = 0;
  for_each(td, [&](TensorDict& element) { element.masked_fill_(rows[k++], value); });
  return td;
}

TensorDict where(const TensorDict& td, const at::Tensor& condition, const TensorDict& other) {
  const std::vector<at::Tensor> conditions = rows_along_stack(td, condition);
  size_t k = 0;
  return zip_elements(
      td, other.unbind(td.stack_dim()),
      [&](const TensorDict& element, const TensorDict& row) {
        return element.where(conditions[k++], row);
      },
      "where");
}

}  // namespace detail::lazy

TensorDict TensorDict::densify() const {
  if (impl_->lazy) return detail::lazy::densify(*this);
  std::optional<TensorDict> out;  // copied only when some child is (or holds) a lazy stack
  for (size_t i = 0; i < impl_->keys.size(); ++i) {
    const Value& v = impl_->values[i];
    if (!v.is_tensordict()) continue;
    TensorDict child = v.tensordict().densify();
    if (child.impl_ == v.tensordict().impl_) continue;
    if (!out) {
      out = detail::empty_result_of(*this);
      detail::impl_of(*out).share_keys(*impl_);
      detail::impl_of(*out).values = impl_->values;
    }
    detail::impl_of(*out).values[i] = child;
  }
  return out ? *out : *this;
}

at::Tensor TensorDict::get_padded(const NestedKey& key, double padding_value) const {
  if (impl_->lazy) return detail::lazy::get_padded(*this, key, padding_value);
  if (key.is_nested()) {
    const Value child = get_value(NestedKey(key.front()));
    if (child.is_tensordict()) {
      std::vector<std::string> rest(key.begin() + 1, key.end());
      return child.tensordict().get_padded(NestedKey(rest), padding_value);
    }
  }
  return get(key);
}

std::vector<at::Tensor> TensorDict::get_list(const NestedKey& key) const {
  if (impl_->lazy) {
    std::vector<at::Tensor> out;
    for (const auto& e : tensordicts()) out.push_back(e.get(key));
    return out;
  }
  if (key.is_nested()) {
    const Value child = get_value(NestedKey(key.front()));
    if (child.is_tensordict()) {
      std::vector<std::string> rest(key.begin() + 1, key.end());
      return child.tensordict().get_list(NestedKey(rest));
    }
  }
  // Python gives a dense TensorDict's tensor itself, which iterates over its rows.
  if (batch_size().empty())
    throw IndexError("get_list: key " + key.repr() + " of a TensorDict without batch dims");
  return get(key).unbind(0);
}

at::Tensor TensorDict::get_nested_tensor(const NestedKey& key) const {
  return at::_nested_tensor_from_tensor_list(get_list(key));
}

}  // namespace tensordict
