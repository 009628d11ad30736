// Shape ops on lazy stacks, as Python's LazyStackedTensorDict does them: the batch dims move
// around the stack dim, so each op becomes the same op on every element (the dims renumbered
// without the stack dim) and a restack along the stack dim's new position. Nothing is stacked.
#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

#include "core/shape.h"
#include "lazy/internal.h"

namespace tensordict::detail::lazy {
namespace {

// `dim` of the stack as a dim of its elements (which lack the stack dim).
int64_t element_dim(int64_t dim, int64_t stack_dim) { return dim < stack_dim ? dim : dim - 1; }

// The elements as a list of handles (writes through them reach the stack's elements).
std::vector<TensorDict> elements(const TensorDict& td) { return td.unbind(state(td).stack_dim); }

// Dims i..j of `from` merged into one give `to` (j > i): sets them and returns true. The first
// such i is taken (sizes of 1 can make several fit; they give the same elements in order).
bool merges_dims(const BatchSize& from, const BatchSize& to, int64_t& i, int64_t& j) {
  if (to.size() >= from.size() || to.empty()) return false;
  const size_t merged = from.size() - to.size() + 1;
  for (size_t lead = 0; lead < to.size(); ++lead) {
    if (lead > 0 && from[lead - 1] != to[lead - 1]) return false;  // the prefix must match
    int64_t product = 1;
    for (size_t k = lead; k < lead + merged; ++k) product *= from[k];
    if (product == to[lead] &&
        std::equal(from.begin() + static_cast<int64_t>(lead + merged), from.end(),
                   to.begin() + static_cast<int64_t>(lead + 1))) {
      i = static_cast<int64_t>(lead);
      j = static_cast<int64_t>(lead + merged - 1);
      return true;
    }
  }
  return false;
}

}  // namespace

TensorDict permute(const TensorDict& td, const std::vector<int64_t>& order) {
  const int64_t sd = state(td).stack_dim;
  int64_t new_stack_dim = 0;
  std::vector<int64_t> element_order;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == sd) {
      new_stack_dim = static_cast<int64_t>(i);
    } else {
      element_order.push_back(element_dim(order[i], sd));
    }
  }
  std::vector<TensorDict> out;
  for (const TensorDict& e : state(td).tds) out.push_back(e.permute(element_order));
  return restack(td, out, new_stack_dim);
}

TensorDict unsqueeze(const TensorDict& td, int64_t dim) {
  const int64_t sd = state(td).stack_dim;
  std::vector<TensorDict> out;
  for (const TensorDict& e : state(td).tds) out.push_back(e.unsqueeze(dim > sd ? dim - 1 : dim));
  return restack(td, out, dim > sd ? sd : sd + 1);
}

TensorDict expand(const TensorDict& td, const BatchSize& batch, size_t lead) {
  const int64_t sd = state(td).stack_dim + static_cast<int64_t>(lead);
  BatchSize element_batch = batch;
  element_batch.erase(element_batch.begin() + sd);
  const std::vector<TensorDict>& tds = state(td).tds;
  // The batch check let the stack dim grow only from one element.
  const auto n = static_cast<size_t>(batch[static_cast<size_t>(sd)]);
  std::vector<TensorDict> out;
  for (size_t k = 0; k < n; ++k) out.push_back(tds[tds.size() == n ? k : 0].expand(element_batch));
  return restack(td, out, sd);
}

TensorDict squeeze(const TensorDict& td, const std::vector<int64_t>& dims) {
  TensorDict out = td;
  for (const int64_t d : dims) {  // highest first, so the lower ones keep their numbers
    if (!out.is_lazy_stack()) {
      out = out.squeeze(d);
      continue;
    }
    const int64_t sd = state(out).stack_dim;
    if (d == sd) {  // one element: the element itself, as Python
      out = elements(out).front();
      continue;
    }
    std::vector<TensorDict> squeezed;
    for (const TensorDict& e : state(out).tds) squeezed.push_back(e.squeeze(element_dim(d, sd)));
    out = restack(out, squeezed, d > sd ? sd : sd - 1);
  }
  return out;
}

std::vector<TensorDict> split(const TensorDict& td, int64_t dim,
                              const std::vector<int64_t>& lengths) {
  const int64_t sd = state(td).stack_dim;
  std::vector<TensorDict> pieces;
  if (dim == sd) {  // runs of elements
    const std::vector<TensorDict> all = elements(td);
    size_t start = 0;
    for (const int64_t n : lengths) {
      if (n == 0) {
        throw ShapeError("split: an empty piece of the stack dim of a lazy stack (batch_size " +
                         shape_str(td.batch_size()) + ") has no elements to stack");
      }
      pieces.push_back(
          restack(td,
                  std::vector<TensorDict>(all.begin() + static_cast<int64_t>(start),
                                          all.begin() + static_cast<int64_t>(start + size_t(n))),
                  sd));
      start += static_cast<size_t>(n);
    }
    return pieces;
  }
  std::vector<std::vector<TensorDict>> columns(lengths.size());
  for (const TensorDict& e : state(td).tds) {
    std::vector<TensorDict> parts = e.split(lengths, element_dim(dim, sd));
    for (size_t j = 0; j < parts.size(); ++j) columns[j].push_back(std::move(parts[j]));
  }
  for (const auto& column : columns) pieces.push_back(restack(td, column, sd));
  return pieces;
}

std::optional<TensorDict> try_view(const TensorDict& td, const BatchSize& batch) {
  const BatchSize& old = td.batch_size();
  if (batch == old) return td;
  int64_t i = 0;
  int64_t j = 0;
  if (merges_dims(old, batch, i, j)) {
    // Dims i..j become one: unbind each of them, and stack the flat list of pieces at i.
    std::vector<TensorDict> pieces{td};
    for (int64_t k = i; k <= j; ++k) {
      std::vector<TensorDict> next;
      for (const TensorDict& piece : pieces) {
        for (TensorDict& row : piece.unbind(i)) next.push_back(std::move(row));
      }
      pieces = std::move(next);
    }
    return lazy_stack(pieces, i);
  }
  if (merges_dims(batch, old, i, j)) {
    // Dim i becomes dims i..j: split it into batch[i] runs, each a stack along i, and so on.
    TensorDict out = td;
    for (int64_t k = i; k < j; ++k) {
      std::vector<TensorDict> runs = out.chunk(batch[static_cast<size_t>(k)], k);
      out = lazy_stack(runs, k);
    }
    return out;
  }
  return std::nullopt;
}

void pad_(TensorDict& td, at::IntArrayRef pad_size, double value) {
  auto& st = *impl_of(td).lazy;
  const auto d = static_cast<size_t>(st.stack_dim);
  // The pairs of the elements' dims (the stack dim's pair left out), and the stack dim's own.
  std::vector<int64_t> element_pad;
  int64_t before = 0;
  int64_t after = 0;
  for (size_t i = 0; i + 1 < pad_size.size(); i += 2) {
    if (i / 2 == d) {
      before = pad_size[i];
      after = pad_size[i + 1];
    } else {
      element_pad.push_back(pad_size[i]);
      element_pad.push_back(pad_size[i + 1]);
    }
  }
  const bool pads_elements =
      std::any_of(element_pad.begin(), element_pad.end(), [](int64_t p) { return p != 0; });
  if (pads_elements) {
    for (TensorDict& element : st.tds) element.pad_(element_pad, value);
  }
  const auto n = static_cast<int64_t>(st.tds.size());
  if (before + n + after <= 0) {
    throw ShapeError("pad_: pad_size " + shape_str(pad_size) +
                     " leaves no element of the lazy "
                     "stack along its stack dim");
  }
  // The added elements hold `value`, and None for non-tensor data, as pad's padding does.
  TensorDict filler = st.tds[0].new_full(st.tds[0].batch_size(), value);
  for (const auto& key : filler.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    if (filler.get_value(key).is_non_tensor_data()) filler.set_non_tensor(key, Json());
  }
  std::vector<TensorDict> tds;
  for (int64_t k = 0; k < before; ++k) tds.push_back(filler.clone());
  for (int64_t k = std::max<int64_t>(0, -before); k < n - std::max<int64_t>(0, -after); ++k)
    tds.push_back(st.tds[static_cast<size_t>(k)]);
  for (int64_t k = 0; k < after; ++k) tds.push_back(filler.clone());
  impl_of(td).batch_size = impl_of(lazy_stack(tds, st.stack_dim)).batch_size;
  st.tds = std::move(tds);
}

TensorDict view(const TensorDict& td, const BatchSize& batch) {
  std::optional<TensorDict> out = try_view(td, batch);
  if (!out) {
    throw ShapeError("view: a lazy stack of batch_size " + shape_str(td.batch_size()) +
                     " views only as dims merged or split, not as " + shape_str(batch) +
                     " (call reshape)");
  }
  return *out;
}

TensorDict reshape(const TensorDict& td, const BatchSize& batch) {
  std::optional<TensorDict> out = try_view(td, batch);
  return out ? *out : td.densify().reshape(batch);  // as Python: dense where no view does it
}

TensorDict transpose(const TensorDict& td, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> order(static_cast<size_t>(td.ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[static_cast<size_t>(dim0)], order[static_cast<size_t>(dim1)]);
  return permute(td, order);
}

}  // namespace tensordict::detail::lazy
