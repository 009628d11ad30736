// Shape ops over the batch dims. Each computes the new batch size itself (so misuse is reported in
// batch terms) and maps every entry with the matching tensor op on the leading dims.
#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

#include "lazy/internal.h"
#include "ops/util.h"

namespace tensordict {

using detail::join_shape;
using detail::locked_as;
using detail::map_batch;
using detail::wrap_dim;

namespace {

size_t nb_of(const TensorDict& td) { return td.batch_size().size(); }

// view / reshape keep the names only when the batch size does not change (Python returns self).
detail::NamesOp names_if_same(const BatchSize& old, const BatchSize& batch) {
  if (old == batch) return detail::same_names();
  return [n = batch.size()](const DimNames&) { return DimNames(n); };
}

}  // namespace

TensorDict TensorDict::view(at::IntArrayRef shape) const {
  const BatchSize batch = detail::infer_shape(shape, numel(), "view", batch_size());
  if (impl_->lazy) return locked_as(*this, detail::lazy::view(*this, batch));
  const size_t nb = nb_of(*this);
  return locked_as(
      *this, map_batch(
                 *this, nb, batch,
                 [&](const at::Tensor& t) { return t.view(join_shape(batch, t.sizes(), nb)); },
                 "view", {}, names_if_same(batch_size(), batch)));
}

TensorDict TensorDict::view(at::ScalarType dtype, BatchSize batch_size) const {
  // Every batch dim is dropped first: a leaf's last dim rescales with the element size, so the
  // new batch size is checked against the viewed leaves.
  TensorDict out = map_batch(
      densify(), nb_of(*this), {}, [dtype](const at::Tensor& t) { return t.view(dtype); }, "view");
  out.set_batch_size(std::move(batch_size));
  return out;
}

TensorDict TensorDict::reshape(at::IntArrayRef shape) const {
  const BatchSize batch = detail::infer_shape(shape, numel(), "reshape", batch_size());
  if (impl_->lazy) return locked_as(*this, detail::lazy::reshape(*this, batch));
  const size_t nb = nb_of(*this);
  return locked_as(
      *this, map_batch(
                 *this, nb, batch,
                 [&](const at::Tensor& t) { return t.reshape(join_shape(batch, t.sizes(), nb)); },
                 "reshape", {}, names_if_same(batch_size(), batch)));
}

TensorDict TensorDict::squeeze(std::optional<int64_t> dim) const {
  const auto& old = batch_size();
  std::vector<int64_t> dims;  // batch dims to drop, highest first
  if (dim) {
    const int64_t d = wrap_dim(*dim, ndim(), "squeeze", old);
    if (old[static_cast<size_t>(d)] == 1) dims.push_back(d);
  } else {
    for (int64_t d = ndim() - 1; d >= 0; --d)
      if (old[static_cast<size_t>(d)] == 1) dims.push_back(d);
  }
  if (impl_->lazy) return locked_as(*this, detail::lazy::squeeze(*this, dims));
  BatchSize batch = old;
  for (int64_t d : dims) batch.erase(batch.begin() + d);
  return locked_as(*this, map_batch(
                              *this, nb_of(*this), batch,
                              [&](const at::Tensor& t) {
                                at::Tensor out = t;
                                for (int64_t d : dims) out = out.squeeze(d);
                                return out;
                              },
                              "squeeze", {},
                              [&](const DimNames& names) {
                                DimNames out = names;
                                for (int64_t d : dims) out.erase(out.begin() + d);
                                return out;
                              }));
}

TensorDict TensorDict::unsqueeze(int64_t dim) const {
  const int64_t d = wrap_dim(dim, ndim() + 1, "unsqueeze", batch_size());
  if (impl_->lazy) return locked_as(*this, detail::lazy::unsqueeze(*this, d));
  BatchSize batch = batch_size();
  batch.insert(batch.begin() + d, 1);
  return locked_as(
      *this, map_batch(
                 *this, nb_of(*this), batch, [d](const at::Tensor& t) { return t.unsqueeze(d); },
                 "unsqueeze", {}, detail::insert_name(d)));
}

TensorDict TensorDict::permute(at::IntArrayRef dims) const {
  const auto& old = batch_size();
  std::vector<int64_t> order;
  std::vector<bool> seen(old.size(), false);
  if (dims.size() != old.size()) {
    throw ShapeError("permute: expected " + std::to_string(old.size()) + " dims for batch_size " +
                     shape_str(old) + ", got " + shape_str(dims));
  }
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim(), "permute", old);
    if (seen[static_cast<size_t>(w)]) {
      throw ShapeError("permute: dims " + shape_str(dims) + " repeat dim " + std::to_string(w));
    }
    seen[static_cast<size_t>(w)] = true;
    order.push_back(w);
  }
  if (impl_->lazy) return locked_as(*this, detail::lazy::permute(*this, order));
  BatchSize batch;
  for (int64_t d : order) batch.push_back(old[static_cast<size_t>(d)]);
  return locked_as(*this, map_batch(
                              *this, old.size(), batch,
                              [&](const at::Tensor& t) {
                                detail::Shape full(order.begin(), order.end());
                                for (int64_t d = ndim(); d < t.dim(); ++d) full.push_back(d);
                                return t.permute(full);
                              },
                              "permute", {},
                              [&](const DimNames& names) {
                                DimNames out;
                                for (int64_t d : order)
                                  out.push_back(names[static_cast<size_t>(d)]);
                                return out;
                              }));
}

TensorDict TensorDict::transpose(int64_t dim0, int64_t dim1) const {
  const int64_t a = wrap_dim(dim0, ndim(), "transpose", batch_size());
  const int64_t b = wrap_dim(dim1, ndim(), "transpose", batch_size());
  if (impl_->lazy) return locked_as(*this, detail::lazy::transpose(*this, a, b));
  BatchSize batch = batch_size();
  std::swap(batch[static_cast<size_t>(a)], batch[static_cast<size_t>(b)]);
  return locked_as(*this,
                   map_batch(
                       *this, nb_of(*this), batch,
                       [a, b](const at::Tensor& t) { return t.transpose(a, b); }, "transpose", {},
                       [a, b](const DimNames& names) {
                         DimNames out = names;
                         std::swap(out[static_cast<size_t>(a)], out[static_cast<size_t>(b)]);
                         return out;
                       }));
}

TensorDict TensorDict::flatten(int64_t start_dim, int64_t end_dim) const {
  // No batch dims: Python gives batch [1] for flatten(0, -1) (and (0, 0)), as torch.flatten of a
  // 0-dim tensor does.
  if (ndim() == 0 && start_dim == 0 && (end_dim == -1 || end_dim == 0)) return unsqueeze(0);
  const auto& old = batch_size();
  const int64_t s = wrap_dim(start_dim, ndim(), "flatten", old);
  const int64_t e = wrap_dim(end_dim, ndim(), "flatten", old);
  if (s > e) {
    throw ShapeError("flatten: start_dim " + std::to_string(start_dim) + " comes after end_dim " +
                     std::to_string(end_dim) + " for batch_size " + shape_str(old));
  }
  BatchSize batch(old.begin(), old.begin() + s);
  batch.push_back(detail::product(at::IntArrayRef(old).slice(s, e - s + 1)));
  batch.insert(batch.end(), old.begin() + e + 1, old.end());
  if (impl_->lazy) return view(batch);
  return locked_as(
      *this, map_batch(
                 *this, old.size(), batch, [s, e](const at::Tensor& t) { return t.flatten(s, e); },
                 "flatten", {}, [s, e](const DimNames& names) {  // one unnamed dim
                   DimNames out = names;
                   out.erase(out.begin() + s, out.begin() + e + 1);
                   out.insert(out.begin() + s, std::nullopt);
                   return out;
                 }));
}

TensorDict TensorDict::unflatten(int64_t dim, at::IntArrayRef sizes) const {
  const auto& old = batch_size();
  const int64_t d = wrap_dim(dim, ndim(), "unflatten", old);
  const BatchSize inner = detail::infer_shape(sizes, old[static_cast<size_t>(d)], "unflatten", old);
  BatchSize batch(old.begin(), old.begin() + d);
  batch.insert(batch.end(), inner.begin(), inner.end());
  batch.insert(batch.end(), old.begin() + d + 1, old.end());
  if (impl_->lazy) return view(batch);
  return locked_as(*this, map_batch(
                              *this, old.size(), batch,
                              [&](const at::Tensor& t) {
                                return t.view(join_shape(batch, t.sizes(), old.size()));
                              },
                              "unflatten", {},
                              [&](const DimNames& names) {  // the name goes to the last new dim
                                DimNames out = names;
                                out.insert(out.begin() + d, inner.size() - 1, std::nullopt);
                                return out;
                              }));
}

TensorDict TensorDict::expand(at::IntArrayRef shape) const {
  const auto& old = batch_size();
  const size_t lead = shape.size() - std::min(shape.size(), old.size());
  BatchSize batch(shape.begin(), shape.end());
  bool ok = shape.size() >= old.size();
  for (size_t i = 0; ok && i < old.size(); ++i) {
    int64_t& want = batch[lead + i];
    if (want == -1) want = old[i];
    ok = want == old[i] || old[i] == 1;
  }
  if (!ok || std::any_of(batch.begin(), batch.end(), [](int64_t v) { return v < 0; })) {
    throw ShapeError("expand: cannot expand batch_size " + shape_str(old) + " to " +
                     shape_str(shape));
  }
  if (impl_->lazy) return locked_as(*this, detail::lazy::expand(*this, batch, lead));
  return locked_as(*this, map_batch(
                              *this, old.size(), batch,
                              [&](const at::Tensor& t) {
                                return t.expand(join_shape(batch, t.sizes(), old.size()));
                              },
                              "expand", {},
                              [lead](const DimNames& names) {  // new leading dims are unnamed
                                DimNames out(lead);
                                out.insert(out.end(), names.begin(), names.end());
                                return out;
                              }));
}

TensorDict TensorDict::expand_as(const TensorDict& other) const {
  // The batch dims first, then each leaf to its partner's shape (feature dims too), as Python.
  return detail::zip_leaves(
      expand(other.batch_size()), other,
      [](const at::Tensor& mine, const at::Tensor& theirs) { return mine.expand_as(theirs); },
      "expand_as");
}

TensorDict TensorDict::expand_as(const at::Tensor& other) const { return expand(other.sizes()); }

namespace {

// Pieces [start, start + length) of batch dim `dim`, each a view.
std::vector<TensorDict> narrow_pieces(const TensorDict& td, int64_t dim,
                                      const std::vector<int64_t>& lengths) {
  if (td.is_lazy_stack()) return detail::lazy::split(td, dim, lengths);
  std::vector<TensorDict> out;
  out.reserve(lengths.size());
  int64_t start = 0;
  for (int64_t len : lengths) {
    BatchSize batch = td.batch_size();
    batch[static_cast<size_t>(dim)] = len;
    out.push_back(map_batch(
        td, td.batch_size().size(), batch,
        [=](const at::Tensor& t) { return t.narrow(dim, start, len); }, "split", {},
        detail::same_names()));
    start += len;
  }
  return out;
}

}  // namespace

std::vector<TensorDict> TensorDict::split(int64_t split_size, int64_t dim) const {
  const int64_t d = wrap_dim(dim, ndim(), "split", batch_size());
  if (split_size <= 0) {
    throw ShapeError("split: split_size must be positive, got " + std::to_string(split_size));
  }
  const int64_t n = batch_size()[static_cast<size_t>(d)];
  std::vector<int64_t> lengths;
  for (int64_t start = 0; start < n; start += split_size)
    lengths.push_back(std::min(split_size, n - start));
  if (lengths.empty()) lengths.push_back(0);
  return narrow_pieces(*this, d, lengths);
}

std::vector<TensorDict> TensorDict::split(at::IntArrayRef split_sizes, int64_t dim) const {
  const int64_t d = wrap_dim(dim, ndim(), "split", batch_size());
  const int64_t n = batch_size()[static_cast<size_t>(d)];
  const bool negative =
      std::any_of(split_sizes.begin(), split_sizes.end(), [](int64_t v) { return v < 0; });
  if (negative || std::accumulate(split_sizes.begin(), split_sizes.end(), int64_t{0}) != n) {
    throw ShapeError("split: sizes " + shape_str(split_sizes) + " do not sum to " +
                     std::to_string(n) + ", the size of batch dim " + std::to_string(d) +
                     " of batch_size " + shape_str(batch_size()));
  }
  return narrow_pieces(*this, d, split_sizes.vec());
}

std::vector<TensorDict> TensorDict::chunk(int64_t chunks, int64_t dim) const {
  if (chunks <= 0) {
    throw ShapeError("chunk: chunks must be positive, got " + std::to_string(chunks));
  }
  const int64_t d = wrap_dim(dim, ndim(), "chunk", batch_size());
  const int64_t n = batch_size()[static_cast<size_t>(d)];
  return split(std::max<int64_t>(1, (n + chunks - 1) / chunks), d);
}

std::vector<TensorDict> TensorDict::unbind(int64_t dim) const {
  if (impl_->lazy) return detail::lazy::unbind(*this, dim);
  const int64_t d = wrap_dim(dim, ndim(), "unbind", batch_size());
  BatchSize batch = batch_size();
  const int64_t n = batch[static_cast<size_t>(d)];
  batch.erase(batch.begin() + d);
  std::vector<TensorDict> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(map_batch(
        *this, nb_of(*this), batch, [=](const at::Tensor& t) { return t.select(d, i); }, "unbind",
        [=](const NonTensorStack& s) { return detail::select_items(s, d, i); },
        detail::erase_name(d)));
  }
  return out;
}

std::vector<TensorDict> TensorDict::tensor_split(int64_t sections, int64_t dim) const {
  const int64_t d = wrap_dim(dim, ndim(), "tensor_split", batch_size());
  if (sections <= 0) {
    throw ShapeError("tensor_split: the number of sections must be positive, got " +
                     std::to_string(sections));
  }
  const int64_t n = batch_size()[static_cast<size_t>(d)];
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < sections; ++i) lengths.push_back(n / sections + (i < n % sections));
  return narrow_pieces(*this, d, lengths);
}

std::vector<TensorDict> TensorDict::tensor_split(at::IntArrayRef indices, int64_t dim) const {
  const int64_t d = wrap_dim(dim, ndim(), "tensor_split", batch_size());
  const int64_t n = batch_size()[static_cast<size_t>(d)];
  // Python's slices [prev:index]: negative indices count from the end, all are clamped to [0, n].
  auto clamp = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  std::vector<int64_t> lengths;
  int64_t start = 0;
  for (int64_t index : indices) {
    const int64_t stop = std::max(clamp(index), start);
    lengths.push_back(stop - start);
    start = stop;
  }
  lengths.push_back(n - start);
  return narrow_pieces(*this, d, lengths);
}

TensorDict TensorDict::movedim(at::IntArrayRef source, at::IntArrayRef destination) const {
  if (source.size() != destination.size()) {
    throw ShapeError("movedim: source " + shape_str(source) + " and destination " +
                     shape_str(destination) + " differ in length");
  }
  const int64_t n = ndim();
  std::vector<int64_t> order(static_cast<size_t>(n), -1);
  std::vector<bool> moved(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t from = wrap_dim(source[i], n, "movedim", batch_size());
    const int64_t to = wrap_dim(destination[i], n, "movedim", batch_size());
    if (moved[static_cast<size_t>(from)] || order[static_cast<size_t>(to)] >= 0) {
      throw ShapeError("movedim: a dim is repeated in source " + shape_str(source) +
                       " or destination " + shape_str(destination));
    }
    moved[static_cast<size_t>(from)] = true;
    order[static_cast<size_t>(to)] = from;
  }
  int64_t next = 0;  // the dims not moved fill the free positions in order
  for (auto& slot : order) {
    if (slot >= 0) continue;
    while (moved[static_cast<size_t>(next)]) ++next;
    slot = next++;
  }
  return permute(order);
}

TensorDict TensorDict::flip(at::IntArrayRef dims) const {
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, ndim(), "flip", batch_size()));
  return map_batch(
      *this, nb_of(*this), batch_size(), [&](const at::Tensor& t) { return t.flip(wrapped); },
      "flip", {}, detail::same_names());
}

TensorDict TensorDict::fliplr() const {
  if (ndim() < 2) {
    throw ShapeError("fliplr: needs at least 2 batch dims (batch_size " + shape_str(batch_size()) +
                     ")");
  }
  return flip(1);
}

TensorDict TensorDict::flipud() const {
  if (ndim() < 1) throw ShapeError("flipud: needs at least 1 batch dim (batch_size [])");
  return flip(0);
}

TensorDict TensorDict::rot90(int64_t k, at::IntArrayRef dims) const {
  if (dims.size() != 2) {
    throw ShapeError("rot90: dims must name 2 batch dims, got " + shape_str(dims));
  }
  const int64_t a = wrap_dim(dims[0], ndim(), "rot90", batch_size());
  const int64_t b = wrap_dim(dims[1], ndim(), "rot90", batch_size());
  if (a == b) throw ShapeError("rot90: the two dims must differ, got " + shape_str(dims));
  const int64_t turns = ((k % 4) + 4) % 4;
  BatchSize batch = batch_size();
  const bool swapped = turns % 2 == 1;
  if (swapped) std::swap(batch[static_cast<size_t>(a)], batch[static_cast<size_t>(b)]);
  return map_batch(
      *this, nb_of(*this), batch,
      [&](const at::Tensor& t) {
        return t.rot90(turns, {a, b});
      },
      "rot90", {},
      [a, b, swapped](const DimNames& names) {
        DimNames out = names;
        if (swapped) std::swap(out[static_cast<size_t>(a)], out[static_cast<size_t>(b)]);
        return out;
      });
}

TensorDict TensorDict::roll(at::IntArrayRef shifts, at::IntArrayRef dims) const {
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, ndim(), "roll", batch_size()));
  if (!dims.empty() && dims.size() != shifts.size()) {
    throw ShapeError("roll: shifts " + shape_str(shifts) + " and dims " + shape_str(dims) +
                     " differ in length");
  }
  return map_batch(
      *this, nb_of(*this), batch_size(),
      [&](const at::Tensor& t) { return t.roll(shifts, wrapped); }, "roll", {},
      detail::same_names());
}

TensorDict TensorDict::narrow(int64_t dim, int64_t start, int64_t length) const {
  const int64_t d = wrap_dim(dim, ndim(), "narrow", batch_size());
  const int64_t n = batch_size()[static_cast<size_t>(d)];
  const int64_t from = start < 0 ? start + n : start;
  if (from < 0 || length < 0 || from + length > n) {
    throw ShapeError("narrow: start " + std::to_string(start) + " and length " +
                     std::to_string(length) + " do not fit batch dim " + std::to_string(d) +
                     " of batch_size " + shape_str(batch_size()));
  }
  BatchSize batch = batch_size();
  batch[static_cast<size_t>(d)] = length;
  return map_batch(
      *this, nb_of(*this), batch, [=](const at::Tensor& t) { return t.narrow(d, from, length); },
      "narrow", {}, detail::same_names());
}

TensorDict TensorDict::tile(at::IntArrayRef reps) const {
  const size_t nb = nb_of(*this);
  const size_t extra = reps.size() > nb ? reps.size() - nb : 0;
  // Batch dims and leaves get the same reps: padded to the batch dims, then 1 per feature dim.
  std::vector<int64_t> batch_reps(nb + extra - reps.size(), 1);
  batch_reps.insert(batch_reps.end(), reps.begin(), reps.end());
  BatchSize batch(extra, 1);
  batch.insert(batch.end(), batch_size().begin(), batch_size().end());
  for (size_t i = 0; i < batch.size(); ++i) batch[i] *= batch_reps[i];
  return map_batch(
      *this, nb, batch,
      [&](const at::Tensor& t) {
        std::vector<int64_t> leaf_reps = batch_reps;
        leaf_reps.resize(batch_reps.size() + static_cast<size_t>(t.dim()) - nb, 1);
        return t.tile(leaf_reps);
      },
      "tile");
}

TensorDict TensorDict::broadcast_to(at::IntArrayRef shape) const {
  return expand(shape).rename(std::nullopt);
}

TensorDict TensorDict::atleast_1d() const { return ndim() >= 1 ? *this : unsqueeze(0); }

TensorDict TensorDict::atleast_2d() const {
  return ndim() >= 2 ? *this : atleast_1d().unsqueeze(0);
}

TensorDict TensorDict::atleast_3d() const {
  return ndim() >= 3 ? *this : atleast_2d().unsqueeze(0);
}

}  // namespace tensordict

namespace tensordict {

namespace {

// Python pads a NonTensorData that has batch dims as a NonTensorStack (None in the padding): the
// same value in every row first.
TensorDict non_tensor_data_as_stacks(const TensorDict& td) {
  TensorDict out = td.clone(false);
  const BatchSize& batch = td.batch_size();
  for (const auto& [key, value] : td.items()) {
    if (value.is_tensordict()) {
      out.set(key, non_tensor_data_as_stacks(value.tensordict()));
    } else if (value.is_non_tensor_data() && !batch.empty()) {
      const auto n = static_cast<size_t>(detail::product(batch));
      out.set(key, NonTensorStack(batch, std::vector<Json>(n, value.non_tensor_data().data)));
    }
  }
  return out;
}

// Python's pad_size: an even number of sizes, at most two per batch dim.
void check_pad_size(const TensorDict& td, at::IntArrayRef pad_size, const char* op) {
  if (pad_size.size() % 2 != 0 || pad_size.size() > 2 * nb_of(td)) {
    throw ShapeError(std::string(op) + ": pad_size " + shape_str(pad_size) +
                     " must hold an even number of sizes, at most 2 per batch dim (batch_size " +
                     shape_str(td.batch_size()) + ")");
  }
}

}  // namespace

TensorDict TensorDict::pad(at::IntArrayRef pad_size, double value) const {
  const size_t nb = nb_of(*this);
  check_pad_size(*this, pad_size, "pad");
  BatchSize batch = batch_size();
  for (size_t i = 0; i < pad_size.size(); ++i) batch[i / 2] += pad_size[i];
  for (size_t d = 0; d < nb; ++d) {
    if (batch[d] < 0) {
      throw ShapeError("pad: pad_size " + shape_str(pad_size) + " crops batch dim " +
                       std::to_string(d) + " of batch_size " + shape_str(batch_size()) +
                       " below 0");
    }
  }
  // torch's pad lists dims from the last: the batch dims' pairs reversed, after zeros for the
  // dims that follow them.
  auto torch_pad = [&](int64_t ndim) {
    std::vector<int64_t> out(static_cast<size_t>(2 * ndim) - pad_size.size(), 0);
    for (size_t i = pad_size.size(); i >= 2; i -= 2) {
      out.push_back(pad_size[i - 2]);
      out.push_back(pad_size[i - 1]);
    }
    return out;
  };
  // Items of a NonTensorStack: the padding holds None (position -1).
  auto pad_stack = [&](const NonTensorStack& stack) {
    const at::Tensor pos =
        at::constant_pad_nd(detail::positions(stack.shape()),
                            torch_pad(static_cast<int64_t>(stack.shape().size())), -1);
    const auto items = stack.items();
    const at::Tensor flat = pos.reshape({-1});
    const int64_t* p = flat.data_ptr<int64_t>();
    std::vector<Json> out;
    out.reserve(static_cast<size_t>(flat.numel()));
    for (int64_t k = 0; k < flat.numel(); ++k)
      out.push_back(p[k] < 0 ? Json() : items[static_cast<size_t>(p[k])]);
    return NonTensorStack(pos.sizes().vec(), std::move(out));
  };
  const bool pads = std::any_of(pad_size.begin(), pad_size.end(), [](int64_t p) { return p != 0; });
  return map_batch(
      pads ? non_tensor_data_as_stacks(*this) : *this, nb, batch,
      [&](const at::Tensor& t) { return at::constant_pad_nd(t, torch_pad(t.dim()), value); }, "pad",
      pad_stack, {});
}

TensorDict& TensorDict::reshape_(at::IntArrayRef shape) {
  return detail::adopt(*this, reshape(shape), "reshape_");
}
TensorDict& TensorDict::flatten_(int64_t start_dim, int64_t end_dim) {
  return detail::adopt(*this, flatten(start_dim, end_dim), "flatten_");
}
TensorDict& TensorDict::unflatten_(int64_t dim, at::IntArrayRef sizes) {
  return detail::adopt(*this, unflatten(dim, sizes), "unflatten_");
}
TensorDict& TensorDict::repeat_(at::IntArrayRef repeats) {
  return detail::adopt(*this, repeat(repeats), "repeat_");
}
TensorDict& TensorDict::repeat_interleave_(int64_t repeats, int64_t dim) {
  return detail::adopt(*this, repeat_interleave(repeats, dim), "repeat_interleave_");
}
TensorDict& TensorDict::repeat_interleave_(const at::Tensor& repeats, int64_t dim) {
  return detail::adopt(*this, repeat_interleave(repeats, dim), "repeat_interleave_");
}
TensorDict& TensorDict::roll_(at::IntArrayRef shifts, at::IntArrayRef dims) {
  return detail::adopt(*this, roll(shifts, dims), "roll_");
}
TensorDict& TensorDict::gather_(int64_t dim, const at::Tensor& index) {
  return detail::adopt(*this, gather(dim, index), "gather_");
}
TensorDict& TensorDict::pad_(at::IntArrayRef pad_size, double value) {
  if (!impl_->lazy) return detail::adopt(*this, pad(pad_size, value), "pad_");
  check_pad_size(*this, pad_size, "pad_");
  if (impl_->locked) throw LockedError("pad_: cannot change a locked TensorDict in place");
  detail::lazy::pad_(*this, pad_size, value);
  return *this;
}

}  // namespace tensordict
