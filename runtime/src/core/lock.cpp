// The lock: lock_ and unlock_ over a TensorDict and everything nested in it, with the ancestors
// each nested TensorDict records (TensorDictImpl::lock_parents), as Python's lock_/unlock_.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/lazy_state.h"
#include "core/tensordict_impl.h"

namespace tensordict::detail {

void set_locked_recursive(TensorDictImpl& impl, bool locked) {
  impl.locked = locked;
  if (!locked) impl.is_memmap = false;
  if (impl.lazy) {
    for (const auto& element : impl.lazy->tds)
      set_locked_recursive(detail::impl_of(element), locked);
  }
  for (auto& value : impl.values) {
    if (value.is_tensordict()) set_locked_recursive(detail::impl_of(value.tensordict()), locked);
  }
}

namespace {

template <class Fn>
void for_each_child(const TensorDictImpl& impl, Fn&& fn) {
  if (impl.lazy) {
    for (const auto& element : impl.lazy->tds) fn(element);
  }
  for (const auto& value : impl.values) {
    if (value.is_tensordict()) fn(value.tensordict());
  }
}

bool same_impl(const std::weak_ptr<TensorDictImpl>& a, const std::weak_ptr<TensorDictImpl>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

void lock_below(const TensorDict& td, std::vector<std::weak_ptr<TensorDictImpl>>& ancestors) {
  TensorDictImpl& impl = impl_of(td);
  for (const auto& ancestor : ancestors) {
    const bool known = std::any_of(impl.lock_parents.begin(), impl.lock_parents.end(),
                                   [&](const auto& p) { return same_impl(p, ancestor); });
    if (!known) impl.lock_parents.push_back(ancestor);
  }
  impl.locked = true;
  ancestors.push_back(Access::shared_impl(td));
  for_each_child(impl, [&](const TensorDict& child) { lock_below(child, ancestors); });
  ancestors.pop_back();
}

void unlock_below(const TensorDict& td, std::vector<TensorDictImpl*>& unlocked) {
  TensorDictImpl& impl = impl_of(td);
  impl.locked = false;
  impl.is_memmap = false;
  unlocked.push_back(&impl);
  for_each_child(impl, [&](const TensorDict& child) { unlock_below(child, unlocked); });
}

bool below_locked(const TensorDictImpl& impl) {
  return std::any_of(impl.lock_parents.begin(), impl.lock_parents.end(), [](const auto& p) {
    const auto parent = p.lock();
    return parent && parent->locked;
  });
}

}  // namespace

void lock_tree(const TensorDict& root) {
  impl_of(root).locked = true;
  std::vector<std::weak_ptr<TensorDictImpl>> ancestors{Access::shared_impl(root)};
  for_each_child(impl_of(root), [&](const TensorDict& child) { lock_below(child, ancestors); });
}

void unlock_tree(const TensorDict& root) {
  std::vector<TensorDictImpl*> unlocked;
  unlock_below(root, unlocked);
  // Parents inside the tree are unlocked by now: a locked one is outside it.
  for (TensorDictImpl* impl : unlocked) {
    if (below_locked(*impl)) {
      lock_tree(root);
      throw LockedError(
          "unlock_: the TensorDict is nested in a locked TensorDict; unlock_() the outermost "
          "locked one instead");
    }
  }
  // Python drops the consolidated state on unlock: the entries may change from now on.
  for (TensorDictImpl* impl : unlocked) {
    impl->lock_parents.clear();
    impl->consolidated = at::Tensor();
  }
}

}  // namespace tensordict::detail

namespace tensordict {

TensorDict& TensorDict::lock_() {
  if (!impl_->locked) detail::lock_tree(*this);
  return *this;
}

TensorDict& TensorDict::unlock_() {
  detail::unlock_tree(*this);
  return *this;
}

bool TensorDict::is_locked() const {
  if (impl_->locked) return true;
  // As Python: a lazy stack not locked itself is locked when every element is.
  if (!impl_->lazy || impl_->lazy->tds.empty()) return false;
  const auto& tds = impl_->lazy->tds;
  return std::all_of(tds.begin(), tds.end(), [](const TensorDict& td) { return td.is_locked(); });
}

}  // namespace tensordict
