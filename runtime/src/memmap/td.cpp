// TensorDict's memory-mapped IO members, on top of tensordict::memmap (memmap.h).
#include <ATen/ATen.h>

#include <future>

#include "core/lazy_state.h"
#include "core/parallel.h"
#include "core/tensordict_impl.h"
#include "memmap/internal.h"
#include "tensordict/archive.h"
#include "tensordict/memmap.h"

namespace tensordict {
namespace {

memmap::WriteOptions write_options(const MemmapOptions& options, bool like) {
  memmap::WriteOptions o;
  o.memmap = options;
  o.like = like;
  return o;
}

// Moves the entries and state of `src` (a freshly written or loaded tree) into `dst`, level by
// level, so handles to `dst`'s nested TensorDicts see the new leaves too.
void adopt(detail::TensorDictImpl& dst, const detail::TensorDictImpl& src, bool keep_meta) {
  if (dst.lazy && src.lazy && dst.lazy->tds.size() == src.lazy->tds.size()) {  // element-wise
    for (size_t k = 0; k < src.lazy->tds.size(); ++k)
      adopt(::tensordict::detail::impl_of(dst.lazy->tds[k]),
            ::tensordict::detail::impl_of(src.lazy->tds[k]), keep_meta);
  }
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const Value& value = src.values[i];
    const int64_t slot = dst.find(src.keys[i]);
    if (slot < 0) {
      dst.append(src.keys[i], value);
      continue;
    }
    Value& existing = dst.values[static_cast<size_t>(slot)];
    if (existing.is_tensordict() && value.is_tensordict()) {
      adopt(::tensordict::detail::impl_of(existing.tensordict()),
            ::tensordict::detail::impl_of(value.tensordict()), keep_meta);
    } else {
      existing = value;
    }
  }
  if (!keep_meta) {
    dst.device = src.device;
    dst.locked = src.locked;
    dst.is_memmap = src.is_memmap;
  }
  dst.saved_path = src.saved_path;
}

}  // namespace

TensorDict TensorDict::memmap(const std::string& prefix, const MemmapOptions& options) const {
  // As Python 0.14: a ".tdz" prefix names a single-file archive (archive.h).
  if (archive::has_archive_suffix(prefix)) {
    return archive::save(*this, prefix, write_options(options, false));
  }
  return memmap::save_tensordict(*this, prefix, write_options(options, false));
}

struct TensorDictFuture::State {
  std::future<TensorDict> future;
};

TensorDict TensorDictFuture::get() { return state_->future.get(); }
void TensorDictFuture::wait() const { state_->future.wait(); }
bool TensorDictFuture::valid() const { return state_->future.valid(); }

TensorDictFuture memmap::detail::in_background(std::function<TensorDict()> work) {
  return TensorDictFuture(std::make_shared<TensorDictFuture::State>(
      TensorDictFuture::State{std::async(std::launch::async, std::move(work))}));
}

TensorDictFuture TensorDict::memmap_async(const std::string& prefix,
                                          const MemmapOptions& options) const {
  TensorDict self = *this;
  return memmap::detail::in_background(
      [self, prefix, options] { return self.memmap(prefix, options); });
}

TensorDict& TensorDict::memmap_(const std::string& prefix, const MemmapOptions& options) {
  TensorDict written = memmap(prefix, options);
  adopt(*impl_, ::tensordict::detail::impl_of(written), false);
  ::tensordict::detail::lock_tree(*this);  // the parents its own nested TensorDicts record
  return *this;
}

TensorDict TensorDict::memmap_like(const std::string& prefix, const MemmapOptions& options) const {
  if (archive::has_archive_suffix(prefix)) {
    return archive::save(*this, prefix, write_options(options, true));
  }
  return memmap::save_tensordict(*this, prefix, write_options(options, true));
}

namespace {

// Reads one byte per page of every mapped leaf, `num_threads` leaves at a time: the kernel reads
// the files in parallel and later reads of the leaves (a copy into a model) find them resident.
void prefetch(const TensorDict& td, int num_threads) {
  std::vector<at::Tensor> leaves;
  for (const Value& v : td.values(true, true)) {
    if (v.is_tensor() && v.tensor().device().is_cpu()) leaves.push_back(v.tensor());
  }
  ::tensordict::detail::parallel_for(leaves.size(), num_threads, [&leaves](size_t i) {
    const auto* bytes = static_cast<const volatile unsigned char*>(leaves[i].data_ptr());
    const size_t n = leaves[i].nbytes();
    unsigned char sink = 0;
    for (size_t off = 0; off < n; off += 4096) sink ^= bytes[off];
    (void)sink;
  });
}

}  // namespace

TensorDict TensorDict::load_memmap(const std::string& prefix, std::optional<at::Device> device,
                                   int num_threads) {
  memmap::Loaded loaded = archive::load_any(prefix, device);
  if (!loaded.value.is_tensordict()) {
    throw FormatError("'" + prefix + "' holds a " + loaded.value.kind_name() + " (" + loaded.type +
                      "), not a TensorDict");
  }
  if (num_threads > 1) prefetch(loaded.value.tensordict(), num_threads);
  return loaded.value.tensordict();
}

// As Python: a memmapped TensorDict is unlocked, refilled from `prefix` (batch size and device
// kept), then memmapped again at its own prefix (hard links when that is where the files are).
TensorDict& TensorDict::load_memmap_(const std::string& prefix) {
  const bool was_memmap = is_memmap();
  const auto own_prefix = saved_path();
  if (was_memmap) unlock_();
  TensorDict loaded = load_memmap(prefix, device());
  adopt(*impl_, ::tensordict::detail::impl_of(loaded), true);
  if (was_memmap && own_prefix) {
    MemmapOptions options;
    options.copy_existing = true;
    memmap_(*own_prefix, options);
  }
  return *this;
}

TensorDict& TensorDict::memmap_refresh_() {
  if (!is_memmap() || !saved_path()) {
    throw Error("memmap_refresh_: the TensorDict is not memory-mapped (call memmap_ first)");
  }
  return load_memmap_(*saved_path());
}

bool TensorDict::is_memmap() const { return impl_->is_memmap; }

std::optional<std::string> TensorDict::saved_path() const { return impl_->saved_path; }

}  // namespace tensordict
