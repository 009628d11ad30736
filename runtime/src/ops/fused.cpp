// Element-wise math and whole-TensorDict reductions on a consolidated TensorDict run over its flat
// buffer: one kernel per run of same-dtype leaves instead of one per leaf (docs/performance.md,
// "Fused math"). Every function returns "not done" when the layout does not allow it, and the
// caller takes the per-leaf path, whose results these match bit for bit.
#include "ops/fused.h"

#include <ATen/ATen.h>

namespace tensordict::detail {
namespace {

// Leaves of a consolidated buffer start at multiples of 8 bytes (consolidate.cpp): a smaller gap
// between two leaves is padding, which belongs to no leaf.
constexpr int64_t kMaxPadding = 8;

// One run of consecutive leaves (in buffer order) of one dtype: bytes [begin, end) of the buffer.
struct Run {
  at::ScalarType dtype;
  int64_t begin;
  int64_t end;
  bool dense;   // no byte between its leaves
  bool padded;  // only padding between its leaves (no other leaf's bytes)
};

struct Layout {
  at::Tensor flat;
  std::vector<Run> runs;
};

// Adds `td`'s leaves (depth first, as consolidate() lays them out) to `layout`; false when one of
// them is not a contiguous view of the buffer after the previous one (or not floating point, with
// `floating_only`). Walks the values directly: building each leaf's NestedKey would cost more
// than the kernels of small leaves.
bool add_leaves(const TensorDict& td, bool floating_only, Layout& layout, int64_t& last_end) {
  if (td.is_lazy_stack()) return false;
  const c10::StorageImpl* storage = layout.flat.storage().unsafeGetStorageImpl();
  for (const Value& value : impl_of(td).values) {
    if (value.is_tensordict()) {
      if (!add_leaves(value.tensordict(), floating_only, layout, last_end)) return false;
      continue;
    }
    if (!value.is_tensor()) continue;
    const at::Tensor& t = value.tensor();
    const at::ScalarType dtype = t.scalar_type();
    const int64_t begin = t.storage_offset() * static_cast<int64_t>(t.element_size());
    const int64_t end = begin + static_cast<int64_t>(t.nbytes());
    if (t.storage().unsafeGetStorageImpl() != storage || !t.is_contiguous() || t.is_neg() ||
        (floating_only && !at::isFloatingType(dtype)) || begin < last_end) {
      return false;
    }
    if (!layout.runs.empty() && layout.runs.back().dtype == dtype) {
      Run& run = layout.runs.back();
      run.dense = run.dense && begin == run.end;
      run.padded = run.padded && begin - run.end < kMaxPadding;
      run.end = end;
    } else {
      layout.runs.push_back(Run{dtype, begin, end, true, true});
    }
    last_end = end;
  }
  return true;
}

// The runs of `td`, when it is consolidated and its leaves are contiguous, in buffer order, do not
// overlap and (with `floating_only`) are all floating point; nullopt otherwise.
std::optional<Layout> layout_of(const TensorDict& td, bool floating_only) {
  if (td.is_lazy_stack()) return std::nullopt;
  Layout layout{impl_of(td).consolidated, {}};
  if (!layout.flat.defined() || layout.flat.storage_offset() != 0) return std::nullopt;
  int64_t last_end = 0;
  if (!add_leaves(td, floating_only, layout, last_end) || layout.runs.empty()) return std::nullopt;
  return layout;
}

// The run's bytes of `flat`'s storage as a 1-D tensor of its dtype.
at::Tensor run_view(const at::Tensor& flat, const Run& run) {
  const int64_t size = static_cast<int64_t>(c10::elementSize(run.dtype));
  return make_view(flat, run.dtype, {(run.end - run.begin) / size}, {1}, run.begin / size);
}

}  // namespace

std::optional<TensorDict> fused_map(const TensorDict& td, const RunKernel& kernel) {
  const auto layout = layout_of(td, true);
  if (!layout) return std::nullopt;
  const at::Tensor out = at::empty_like(layout->flat);
  for (const Run& run : layout->runs) {
    at::Tensor dst = run_view(out, run);
    kernel(dst, run_view(layout->flat, run), at::Tensor());
  }
  return rebuild_over(td, out, std::nullopt);
}

std::optional<TensorDict> fused_map(const TensorDict& td, const TensorDict& other,
                                    const RunKernel& kernel) {
  // The cheap test first: most TensorDicts are not consolidated, and same_layout compares keys.
  const auto layout = layout_of(td, true);
  const auto theirs = layout ? layout_of(other, true) : std::nullopt;
  if (!theirs || !same_layout(td, other)) return std::nullopt;
  const at::Tensor out = at::empty_like(layout->flat);
  for (const Run& run : layout->runs) {
    at::Tensor dst = run_view(out, run);
    kernel(dst, run_view(layout->flat, run), run_view(theirs->flat, run));
  }
  return rebuild_over(td, out, std::nullopt);
}

bool fused_in_place(TensorDict& td, const TensorDict* other, const RunKernel& kernel) {
  const auto layout = layout_of(td, true);
  const auto theirs = layout && other ? layout_of(*other, true) : std::nullopt;
  if (!layout || (other && (!theirs || !same_layout(td, *other)))) return false;
  // Writing a run writes the bytes between its leaves too: only padding may lie there.
  for (const Run& run : layout->runs) {
    if (!run.padded) return false;
  }
  for (const Run& run : layout->runs) {
    at::Tensor dst = run_view(layout->flat, run);
    kernel(dst, dst, other ? run_view(theirs->flat, run) : at::Tensor());
  }
  return true;
}

at::Tensor fused_elements(const TensorDict& td) {
  const auto layout = layout_of(td, false);
  if (!layout || layout->runs.size() != 1 || !layout->runs.front().dense) return at::Tensor();
  return run_view(layout->flat, layout->runs.front());
}

}  // namespace tensordict::detail
