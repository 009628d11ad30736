// Batch ops that make new rows: repeat, repeat_interleave, and the new_empty / new_zeros /
// new_ones / new_full family, which keeps the keys and leaf layouts over another batch size.
#include <ATen/ATen.h>

#include "ops/util.h"

namespace tensordict {

TensorDict TensorDict::repeat(at::IntArrayRef repeats) const {
  if (repeats.size() < batch_size().size()) {
    throw ShapeError("repeat: " + std::to_string(repeats.size()) +
                     " repeat counts for batch_size " + shape_str(batch_size()) +
                     " (at least one per batch dim, as torch's repeat)");
  }
  // tile once every batch dim has its count; the names stay where the dims do, as Python's.
  TensorDict out = tile(repeats);
  if (repeats.size() == batch_size().size()) out.set_names(names());
  return out;
}

namespace {

// What repeat_interleave works on, as Python's: a TensorDict without batch dims gains one, and
// without a dim the batch is flattened to one dim (torch's rule for a tensor).
std::pair<TensorDict, int64_t> interleave_target(const TensorDict& td, std::optional<int64_t> dim) {
  TensorDict target = td.ndim() == 0 ? td.unsqueeze(0) : td;
  if (!dim) return {target.ndim() > 1 ? target.reshape({-1}) : target, 0};
  return {target, detail::wrap_dim(*dim, target.ndim(), "repeat_interleave", target.batch_size())};
}

}  // namespace

TensorDict TensorDict::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  const auto [target, d] = interleave_target(*this, dim);
  if (repeats < 0) {
    throw ShapeError("repeat_interleave: repeats must be >= 0, got " + std::to_string(repeats));
  }
  BatchSize batch = target.batch_size();
  batch[static_cast<size_t>(d)] *= repeats;
  return detail::map_batch(
      target, target.batch_size().size(), batch,
      [d = d, repeats](const at::Tensor& t) { return t.repeat_interleave(repeats, d); },
      "repeat_interleave", {}, detail::same_names());
}

TensorDict TensorDict::repeat_interleave(const at::Tensor& repeats,
                                         std::optional<int64_t> dim) const {
  const auto [target, d] = interleave_target(*this, dim);
  const auto n = static_cast<size_t>(d);
  const int64_t rows = target.batch_size()[n];
  const bool one_count = repeats.numel() == 1;
  if (!one_count && (repeats.dim() != 1 || repeats.size(0) != rows)) {
    throw ShapeError("repeat_interleave: " + std::to_string(repeats.numel()) +
                     " counts for batch dim " + std::to_string(d) + " of size " +
                     std::to_string(rows) + " (one, or one per row)");
  }
  BatchSize batch = target.batch_size();
  batch[n] = one_count ? rows * repeats.item<int64_t>() : repeats.sum().item<int64_t>();
  return detail::map_batch(
      target, target.batch_size().size(), batch,
      [&, d = d](const at::Tensor& t) { return t.repeat_interleave(repeats, d); },
      "repeat_interleave", {}, detail::same_names());
}

namespace {

// `make(shape, options)` per tensor leaf, with the leaf's feature dims after `batch`; non-tensor
// items are None (Python's new_* leave nothing to copy there).
TensorDict new_like(
    const TensorDict& td, BatchSize batch, const char* op,
    const std::function<at::Tensor(at::IntArrayRef, const at::TensorOptions&)>& make) {
  for (int64_t size : batch) {
    if (size < 0) throw ShapeError(std::string(op) + ": negative size in " + shape_str(batch));
  }
  const size_t nb = td.batch_size().size();
  return detail::map_batch(
      td.densify(), nb, batch,
      [&](const at::Tensor& t) {
        return make(detail::join_shape(batch, t.sizes(), nb), t.options());
      },
      op, [&](const NonTensorStack&) { return NonTensorStack::filled(batch, Json()); });
}

}  // namespace

TensorDict TensorDict::new_empty(BatchSize batch_size) const {
  return new_like(
      *this, std::move(batch_size), "new_empty",
      [](at::IntArrayRef shape, const at::TensorOptions& o) { return at::empty(shape, o); });
}
TensorDict TensorDict::new_zeros(BatchSize batch_size) const {
  return new_like(
      *this, std::move(batch_size), "new_zeros",
      [](at::IntArrayRef shape, const at::TensorOptions& o) { return at::zeros(shape, o); });
}
TensorDict TensorDict::new_ones(BatchSize batch_size) const {
  return new_like(
      *this, std::move(batch_size), "new_ones",
      [](at::IntArrayRef shape, const at::TensorOptions& o) { return at::ones(shape, o); });
}
TensorDict TensorDict::new_full(BatchSize batch_size, const at::Scalar& value) const {
  return new_like(
      *this, std::move(batch_size), "new_full",
      [&](at::IntArrayRef shape, const at::TensorOptions& o) { return at::full(shape, value, o); });
}

}  // namespace tensordict
