// Indexing over the batch dims: int, slice, ellipsis, None, bool mask, long index tensor.
#include <ATen/ATen.h>

#include <algorithm>

#include "lazy/internal.h"
#include "ops/util.h"

namespace tensordict {

namespace detail {
namespace {

using at::indexing::TensorIndex;

TensorIndex to_aten(const IndexItem& ix) {
  if (ix.is_integer()) return TensorIndex(ix.integer());
  if (ix.is_ellipsis()) return TensorIndex(at::indexing::Ellipsis);
  if (ix.is_none()) return TensorIndex(at::indexing::None);
  if (ix.is_boolean()) return TensorIndex(ix.boolean());
  if (ix.is_tensor()) {
    // libtorch 1.x indexes with long (and bool/byte masks) only; int32 and friends are widened.
    const at::ScalarType dtype = ix.tensor().scalar_type();
    const bool widen = at::isIntegralType(dtype, false) && dtype != at::kLong && dtype != at::kByte;
    return TensorIndex(widen ? ix.tensor().to(at::kLong) : ix.tensor());
  }
  const Slice& s = ix.slice();
  return TensorIndex(
      at::indexing::Slice(s.start() ? c10::optional<int64_t>(*s.start()) : c10::nullopt,
                          s.stop() ? c10::optional<int64_t>(*s.stop()) : c10::nullopt, s.step()));
}

bool is_full_slice(const TensorIndex& ix) {
  if (!ix.is_slice()) return false;
  const auto& s = ix.slice();
  // INDEX_MAX is the default stop (INT64_MAX in libtorch 1.x, a smaller bound in 2.x).
  return to_int(s.start()) == 0 && to_int(s.stop()) == at::indexing::INDEX_MAX &&
         to_int(s.step()) == 1;
}

// Batch dims an index entry consumes.
int64_t consumed_dims(const TensorIndex& ix) {
  if (ix.is_none() || ix.is_ellipsis() || ix.is_boolean()) return 0;
  if (ix.is_tensor() && ix.tensor().scalar_type() == at::kBool) return ix.tensor().dim();
  return 1;
}

void check_int(int64_t i, int64_t dim, const BatchSize& batch) {
  const int64_t size = batch[static_cast<size_t>(dim)];
  if (i < -size || i >= size) {
    throw ShapeError("index: index " + std::to_string(i) + " is out of range for batch dim " +
                     std::to_string(dim) + " of size " + std::to_string(size) + " (batch_size " +
                     shape_str(batch) + ")");
  }
}

void check_entry(const TensorIndex& ix, int64_t dim, const BatchSize& batch) {
  if (ix.is_integer()) {
    check_int(to_int(ix.integer()), dim, batch);
  } else if (ix.is_tensor() && ix.tensor().scalar_type() == at::kBool) {
    const auto mask = ix.tensor().sizes();
    const auto covered = at::IntArrayRef(batch).slice(static_cast<size_t>(dim), mask.size());
    if (mask != covered) {
      throw ShapeError("index: boolean mask of shape " + shape_str(mask) +
                       " does not match the batch dims " + shape_str(covered) +
                       " it covers (batch_size " + shape_str(batch) + ")");
    }
  } else if (ix.is_tensor() && !at::isIntegralType(ix.tensor().scalar_type(), false)) {
    throw TypeError("index: index tensors must be long, int or bool, got " +
                    std::string(c10::toString(ix.tensor().scalar_type())));
  }
}

// index_select refuses negative rows, which Python's td[tensor] (tensor indexing) counts from
// the end: they are wrapped once here for every leaf (a row below -n stays negative: out of
// range). On the CPU a scan skips the kernel when none is negative; elsewhere no scan, which
// would synchronise with the device.
at::Tensor wrap_negative_rows(const at::Tensor& idx, int64_t n) {
  if (idx.device().is_cpu()) {
    const at::Tensor c = idx.contiguous();
    const int64_t* p = c.data_ptr<int64_t>();
    if (std::none_of(p, p + c.numel(), [](int64_t i) { return i < 0; })) return idx;
  }
  return at::where(idx.lt(0), idx + n, idx);
}

}  // namespace

IndexPlan plan_index(const Index& user_index, const BatchSize& batch) {
  std::vector<TensorIndex> index;
  index.reserve(user_index.size());
  for (const auto& ix : user_index) index.push_back(to_aten(ix));
  const auto nb = static_cast<int64_t>(batch.size());
  int64_t consumed = 0;
  int64_t ellipses = 0;
  for (const auto& ix : index) {
    consumed += consumed_dims(ix);
    ellipses += ix.is_ellipsis() ? 1 : 0;
  }
  if (ellipses > 1) throw TypeError("index: an index can only have a single ellipsis ('...')");
  if (consumed > nb) {
    throw ShapeError("index: too many indices for batch_size " + shape_str(batch) +
                     ": the index covers " + std::to_string(consumed) +
                     " dims (indexing past the batch dims is not allowed)");
  }
  IndexPlan plan;
  plan.expanded.reserve(index.size() + static_cast<size_t>(nb));
  int64_t dim = 0;  // batch dim the next entry consumes
  for (const auto& ix : index) {
    if (ix.is_ellipsis()) {
      for (int64_t k = 0; k < nb - consumed; ++k) plan.expanded.emplace_back(at::indexing::Slice());
      dim += nb - consumed;
      continue;
    }
    check_entry(ix, dim, batch);
    dim += consumed_dims(ix);
    plan.basic = plan.basic && (ix.is_integer() || ix.is_slice() || ix.is_none());
    plan.expanded.push_back(ix);
  }
  const auto& ex = plan.expanded;
  plan.single_long = !ex.empty() && ex[0].is_tensor() && ex[0].tensor().dim() == 1 &&
                     ex[0].tensor().scalar_type() == at::kLong &&
                     std::all_of(ex.begin() + 1, ex.end(), is_full_slice);
  if (plan.single_long)
    plan.expanded[0] = TensorIndex(wrap_negative_rows(ex[0].tensor(), batch[0]));
  return plan;
}

at::Tensor apply_index(const at::Tensor& t, const IndexPlan& plan) {
  // index_select has no meta kernel in libtorch 1.13 (tdtool ls indexes meta leaves); index has.
  if (plan.single_long && !t.is_meta()) return t.index_select(0, plan.expanded[0].tensor());
  if (!plan.basic) return t.index(plan.expanded);
  // Basic indexing as a chain of view ops (cheaper than the generic indexing path); `cur` avoids
  // copying the input handle when the first entry already makes the view.
  at::Tensor out;
  const at::Tensor* cur = &t;
  int64_t dim = 0;
  for (const auto& ix : plan.expanded) {
    if (ix.is_integer()) {
      out = cur->select(dim, to_int(ix.integer()));
    } else if (ix.is_none()) {
      out = cur->unsqueeze(dim++);
    } else if (is_full_slice(ix)) {
      ++dim;
      continue;
    } else {
      const auto& s = ix.slice();
      out = cur->slice(dim++, to_int(s.start()), to_int(s.stop()), to_int(s.step()));
    }
    cur = &out;
  }
  return cur == &t ? t : out;
}

}  // namespace detail

IndexItem::IndexItem(const at::indexing::Slice& s) {
  // ATen stores an unset stop as INDEX_MAX (and its ints as SymInts in libtorch 2.x).
  const int64_t stop = detail::to_int(s.stop());
  v_ = Slice(detail::to_int(s.start()),
             stop == at::indexing::INDEX_MAX ? std::nullopt : std::optional<int64_t>(stop),
             detail::to_int(s.step()));
}

IndexItem::IndexItem(const at::indexing::EllipsisIndexType&) : v_(EllipsisIndex{}) {}

IndexItem::IndexItem(const at::indexing::TensorIndex& ix) {
  if (ix.is_integer()) {
    v_ = detail::to_int(ix.integer());
  } else if (ix.is_slice()) {
    v_ = IndexItem(ix.slice()).v_;
  } else if (ix.is_ellipsis()) {
    v_ = EllipsisIndex{};
  } else if (ix.is_none()) {
    v_ = NoneIndex{};
  } else if (ix.is_boolean()) {
    v_ = ix.boolean();
  } else {
    v_ = ix.tensor();
  }
}

TensorDict TensorDict::index(const Index& index) const {
  if (impl_->lazy) return detail::lazy::index(*this, index);
  const detail::IndexPlan plan = detail::plan_index(index, impl_->batch_size);
  // A nested lazy stack is indexed as a lazy stack, by the index with its Ellipsis expanded over
  // this level's batch dims (Python indexes each entry so).
  const auto nested_lazy = [&plan](const TensorDict& nested) {
    return nested.index(Index(plan.expanded.begin(), plan.expanded.end()));
  };
  if (plan.single_long) {  // a batch of rows: large ones gathered in parallel
    auto gathered = detail::gather_rows_in_parallel(*this, plan.expanded[0].tensor());
    if (!gathered.empty()) {
      return detail::map_batch_infer(
          *this,
          [&](const at::Tensor& t) {
            auto it = gathered.find(t.unsafeGetTensorImpl());
            if (it == gathered.end()) return detail::apply_index(t, plan);
            at::Tensor rows = std::move(it->second);
            gathered.erase(it);  // a tensor held under two keys gets two results, as before
            return rows;
          },
          "index", detail::index_names(index), nested_lazy);
    }
  }
  return detail::map_batch_infer(
      *this, [&plan](const at::Tensor& t) { return detail::apply_index(t, plan); }, "index",
      detail::index_names(index), nested_lazy);
}

// td[i]: the common case, straight to select (no index plan, no result-shape inference).
TensorDict TensorDict::operator[](int64_t i) const {
  if (impl_->lazy) return detail::lazy::index(*this, {i});
  const auto& batch = impl_->batch_size;
  if (batch.empty()) {
    throw ShapeError(
        "index: too many indices for batch_size []: the index covers 1 dims "
        "(indexing past the batch dims is not allowed)");
  }
  detail::check_int(i, 0, batch);
  return detail::map_batch(
      *this, batch.size(), BatchSize(batch.begin() + 1, batch.end()),
      [i](const at::Tensor& t) { return t.select(0, i); }, "index",
      [i](const NonTensorStack& s) { return detail::select_items(s, 0, i); }, detail::erase_name(0),
      [i](const TensorDict& nested) { return nested[i]; });
}

namespace {
// Iteration walks the rows of batch dim 0, which must exist: their count.
int64_t rows_to_iterate(const BatchSize& batch) {
  if (batch.empty())
    throw ShapeError("iteration over a TensorDict needs a batch dim (batch_size [])");
  return batch[0];
}
}  // namespace

TensorDict::RowIterator TensorDict::begin() const {
  rows_to_iterate(impl_->batch_size);
  return {*this, 0};
}

TensorDict::RowIterator TensorDict::end() const {
  return {*this, rows_to_iterate(impl_->batch_size)};
}

}  // namespace tensordict
