// share_memory_(): CPU leaves move to anonymous shared mappings, which child processes created by
// fork() see and write through. Leaves are switched in place (set_), so existing handles follow.
// Also the properties read off every leaf: is_shared, dtype, bytes, param_count and data_ptr.
#include <ATen/ATen.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "core/lazy_state.h"
#include "ops/util.h"

namespace tensordict {
namespace {

// The mappings share_memory_ made, by base address: a leaf is shared when its storage is one of
// them (is_shared). Never destroyed: a mapping may be released during static destruction.
struct Mappings {
  std::mutex mutex;
  std::unordered_set<const void*> bases;
};
Mappings& mappings() {
  static auto* all = new Mappings();  // NOLINT(cppcoreguidelines-owning-memory): see above
  return *all;
}

at::Tensor shared_bytes(int64_t nbytes) {
  if (nbytes == 0) return at::empty({0}, at::kByte);
  const auto n = static_cast<size_t>(nbytes);
  void* ptr = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ptr == MAP_FAILED) {
    throw Error("share_memory_: cannot map " + std::to_string(nbytes) +
                " bytes of shared memory: " + std::strerror(errno));
  }
  {
    std::lock_guard<std::mutex> lock(mappings().mutex);
    mappings().bases.insert(ptr);
  }
  return at::from_blob(
      ptr, {nbytes},
      [n](void* p) {
        {
          std::lock_guard<std::mutex> lock(mappings().mutex);
          mappings().bases.erase(p);
        }
        munmap(p, n);
      },
      at::TensorOptions().dtype(at::kByte));
}

bool in_shared_memory(const at::Tensor& t) {
  if (!t.device().is_cpu()) return true;  // device memory is shareable as it is
  std::lock_guard<std::mutex> lock(mappings().mutex);
  return mappings().bases.count(t.storage().data_ptr().get()) > 0;
}

// Moves `t` onto a fresh shared buffer (same dtype and shape, contiguous).
void share(at::Tensor& t) {
  if (!t.device().is_cpu()) return;  // device memory is already shareable
  const at::Tensor flat = shared_bytes(static_cast<int64_t>(t.nbytes()));
  at::Tensor dst = at::empty({0}, t.options())
                       .set_(flat.storage(), 0, t.sizes(), c10::contiguous_strides(t.sizes()));
  dst.copy_(t);
  t.set_(dst);
}

}  // namespace

TensorDict& TensorDict::share_memory_() {
  // As Python's: the TensorDict is locked afterwards (its leaves can no longer be replaced
  // without leaving the shared memory).
  if (impl_->lazy) {
    detail::lazy::for_each(*this, [](TensorDict& e) { e.share_memory_(); });
    return lock_();
  }
  const at::Tensor flat = detail::consolidated_buffer(*this);
  if (flat.defined() && flat.device().is_cpu()) {  // one mapping, leaves keep their offsets
    const at::Tensor shared = shared_bytes(flat.numel());
    shared.copy_(flat);
    detail::for_each_leaf(*this, [&](const NestedKey&, at::Tensor& t) {
      const auto sizes = t.sizes().vec();  // copies: set_ rewrites what t.sizes() points to
      const auto strides = t.strides().vec();
      t.set_(shared.storage(), t.storage_offset(), sizes, strides);
    });
    impl_->consolidated = shared;
    return lock_();
  }
  detail::for_each_leaf(*this, [](const NestedKey&, at::Tensor& t) { share(t); });
  return lock_();
}

bool TensorDict::is_shared() const {
  bool any = false;
  bool all = true;
  detail::for_each_leaf(*this, [&](const NestedKey&, at::Tensor& t) {
    any = true;
    all = all && in_shared_memory(t);
  });
  return any && all;
}

std::optional<at::ScalarType> TensorDict::dtype() const {
  std::optional<at::ScalarType> shared;
  bool mixed = false;
  detail::for_each_leaf(*this, [&](const NestedKey&, at::Tensor& t) {
    if (!shared) shared = t.scalar_type();
    mixed = mixed || *shared != t.scalar_type();
  });
  return mixed ? std::nullopt : shared;
}

namespace {

// The sum of `count(leaf)` over the tensor leaves, each tensor once unless `count_duplicates`.
int64_t sum_over_leaves(const TensorDict& td, bool count_duplicates,
                        const std::function<int64_t(const at::Tensor&)>& count) {
  std::unordered_set<const c10::TensorImpl*> seen;
  int64_t total = 0;
  detail::for_each_leaf(td, [&](const NestedKey&, at::Tensor& t) {
    if (count_duplicates || seen.insert(t.unsafeGetTensorImpl()).second) total += count(t);
  });
  return total;
}

}  // namespace

int64_t TensorDict::bytes(bool count_duplicates) const {
  return sum_over_leaves(*this, count_duplicates, [](const at::Tensor& t) {
    const at::Tensor& grad = t.grad();
    return static_cast<int64_t>(t.nbytes() + (grad.defined() ? grad.nbytes() : 0));
  });
}

int64_t TensorDict::param_count(bool count_duplicates) const {
  return sum_over_leaves(*this, count_duplicates, [](const at::Tensor& t) { return t.numel(); });
}

TensorDict TensorDict::data_ptr(bool storage) const {
  TensorDict out;
  for (const auto& key : keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    const Value value = get_value(key);
    const at::Tensor* t = value.tensor_if();
    if (t == nullptr) continue;
    const void* p = storage ? t->storage().data_ptr().get() : t->data_ptr();
    out.set(key,
            at::scalar_tensor(static_cast<int64_t>(reinterpret_cast<std::intptr_t>(p)), at::kLong));
  }
  return out;
}

}  // namespace tensordict
