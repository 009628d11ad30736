// td[rows] for a large batch of rows, as a batch read from a memory-mapped dataset
// does: the rows of every plain leaf copied by hand into one buffer, leaves and row ranges
// spread over threads. Against index_select per leaf (one thread, bench_memmap BM_batch_read)
// this is 0.7x on one thread and 0.5x on two: one allocation for the batch, where one per leaf
// is handed back to the system by glibc and faulted in again on every batch, and the rows of
// all leaves shared out, where ATen would parallelise inside each leaf.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <cstring>

#include "core/parallel.h"
#include "ops/util.h"

namespace tensordict::detail {
namespace {

// Below this many bytes gathered, index_select per leaf costs as little and starts no thread.
constexpr int64_t kParallelGatherBytes = int64_t{1} << 20;
// Rows per task: large enough to amortise a task, small enough to balance two leaves of
// different widths.
constexpr int64_t kRowsPerTask = 1024;

// A leaf the byte copy reproduces exactly: dense, on the CPU, no autograd history to record,
// no lazy conjugate/negative bit.
bool plain_leaf(const at::Tensor& t) {
  return t.device().is_cpu() && t.layout() == at::kStrided && t.is_contiguous() &&
         !t.is_quantized() && !t.is_conj() && !t.is_neg() &&
         !(t.requires_grad() && at::GradMode::is_enabled()) && t.dim() >= 1;
}

// Copies rows[from, to) of `src` into `dst` (both contiguous, `row_bytes` per row).
void copy_rows(const char* src, char* dst, const std::vector<int64_t>& rows, int64_t from,
               int64_t to, int64_t row_bytes) {
  // Fixed widths as single moves: a memcpy call per 4-byte row would dominate.
  switch (row_bytes) {
    case 4:
      for (int64_t r = from; r < to; ++r) std::memcpy(dst + r * 4, src + rows[r] * 4, 4);
      return;
    case 8:
      for (int64_t r = from; r < to; ++r) std::memcpy(dst + r * 8, src + rows[r] * 8, 8);
      return;
    default:
      for (int64_t r = from; r < to; ++r) {
        std::memcpy(dst + r * row_bytes, src + rows[r] * row_bytes, row_bytes);
      }
  }
}

}  // namespace

std::unordered_map<const c10::TensorImpl*, at::Tensor> gather_rows_in_parallel(
    const TensorDict& td, const at::Tensor& index) {
  std::unordered_map<const c10::TensorImpl*, at::Tensor> out;
  const int threads = std::max(1, at::get_num_threads());
  const auto& batch = impl_of(td).batch_size;
  if (batch.empty() || !index.device().is_cpu()) return out;

  const int64_t n = batch[0];
  std::vector<at::Tensor> leaves;
  int64_t row_bytes_total = 0;
  for_each_leaf(td, [&](const NestedKey&, at::Tensor& t) {
    // Rows are read unchecked below: only leaves whose dim 0 is the batch's (a lazily stacked
    // element's leaves are not) take this path.
    if (!plain_leaf(t) || t.size(0) != n || n == 0) return;
    row_bytes_total += static_cast<int64_t>(t.nbytes()) / t.size(0);
    leaves.push_back(t);
  });
  const int64_t m = index.numel();
  if (leaves.empty() || m * row_bytes_total < kParallelGatherBytes) return out;

  // One check of the index for every leaf (they share dim 0); out of range: the general path
  // raises its error.
  const at::Tensor idx = index.contiguous();
  const int64_t* data = idx.data_ptr<int64_t>();
  std::vector<int64_t> rows(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) {
    const int64_t i = data[r];
    if (i < -n || i >= n) return out;
    rows[static_cast<size_t>(r)] = i < 0 ? i + n : i;
  }

  // One buffer for every result, each leaf a 64-byte aligned view of it: one allocation of
  // the batch's size instead of one per leaf, which glibc returns to the system and faults in
  // again on every read of a batch.
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (const auto& t : leaves) {
    offsets.push_back(total);
    total += (m * (static_cast<int64_t>(t.nbytes()) / n) + 63) / 64 * 64;
  }
  const at::Tensor flat = at::empty({total}, at::TensorOptions().dtype(at::kByte));
  std::vector<at::Tensor> results;
  results.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const at::Tensor& t = leaves[i];
    auto sizes = t.sizes().vec();
    sizes[0] = m;
    std::vector<int64_t> strides(sizes.size(), 1);
    for (size_t d = sizes.size() - 1; d > 0; --d) strides[d - 1] = strides[d] * sizes[d];
    results.push_back(make_view(flat, t.scalar_type(), sizes, strides,
                                offsets[i] / static_cast<int64_t>(t.element_size())));
  }
  const int64_t chunks = (m + kRowsPerTask - 1) / kRowsPerTask;
  const auto tasks = static_cast<size_t>(chunks) * leaves.size();
  parallel_for(tasks, threads, [&](size_t task) {
    const size_t leaf = task / static_cast<size_t>(chunks);
    const int64_t from = static_cast<int64_t>(task % static_cast<size_t>(chunks)) * kRowsPerTask;
    const at::Tensor& src = leaves[leaf];
    const int64_t row_bytes = static_cast<int64_t>(src.nbytes()) / src.size(0);
    copy_rows(static_cast<const char*>(src.data_ptr()),
              static_cast<char*>(results[leaf].data_ptr()), rows, from,
              std::min(m, from + kRowsPerTask), row_bytes);
  });
  for (size_t i = 0; i < leaves.size(); ++i) {
    out.emplace(leaves[i].unsafeGetTensorImpl(), std::move(results[i]));
  }
  return out;
}

}  // namespace tensordict::detail
