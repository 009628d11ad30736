// The one place that bridges c10d across libtorch 1.13 and 2.x:
// - the ProcessGroup/Backend split: up to 1.13 a ProcessGroupGloo *is* the c10d::ProcessGroup; from
//   2.0 on it is a c10d::Backend, which a ProcessGroup wraps and dispatches to per device type, as
//   Python's init_process_group builds it;
// - the TCP store's server: 2.x asks for the libuv one by default, which Debian's libtorch lacks;
// - how Python's init_process_group lays out the default group's store keys, and whether it ends
//   with a store barrier (read from torch 1.13's and 2.14's distributed_c10d.py).
#pragma once

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace tensordict::dist::detail {

/// The process group whose operations run on `gloo`.
inline c10::intrusive_ptr<c10d::ProcessGroup> gloo_process_group(
    const c10::intrusive_ptr<c10d::ProcessGroupGloo>& gloo,
    const c10::intrusive_ptr<c10d::Store>& store) {
#if TORCH_VERSION_MAJOR >= 2
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, gloo->getRank(), gloo->getSize());
  group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  return group;
#else
  (void)store;
  return gloo;
#endif
}

/// Store options whose server every libtorch here has built in.
inline c10d::TCPStoreOptions tcp_store_options() {
  c10d::TCPStoreOptions options;
#if TORCH_VERSION_MAJOR >= 2
  options.useLibUV = false;
#endif
  return options;
}

/// The stores of Python's default group, under its "default_pg" store: the group's own, and the one
/// its Gloo backend rendezvouses on (1.13: both "0"; 2.x: "0/", and "cpu/" under it).
struct DefaultGroupStores {
  c10::intrusive_ptr<c10d::Store> group;
  c10::intrusive_ptr<c10d::Store> backend;
};
inline DefaultGroupStores default_group_stores(const c10::intrusive_ptr<c10d::Store>& default_pg) {
#if TORCH_VERSION_MAJOR >= 2
  auto group = c10::make_intrusive<c10d::PrefixStore>("0/", default_pg);
  return {group, c10::make_intrusive<c10d::PrefixStore>("cpu/", group)};
#else
  auto group = c10::make_intrusive<c10d::PrefixStore>("0", default_pg);
  return {group, group};
#endif
}

/// Whether init_process_group ends with a store barrier and Gloo's sequence number: 1.13 does;
/// 2.x does neither (unless TORCH_DIST_INIT_BARRIER=1), and a rank waiting for them would wait on
/// Python ranks forever.
constexpr bool kBarrierAfterInit = TORCH_VERSION_MAJOR < 2;

}  // namespace tensordict::dist::detail
