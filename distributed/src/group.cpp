// Group: a Gloo process group on a TCP or file store. The only translation unit that needs
// USE_C10D_GLOO (ProcessGroupGloo.hpp is empty without it).
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <thread>

#include "c10d_bridge.h"
#include "tensordict/distributed.h"
#include "tensordict/internal.h"
#include "wire.h"

namespace tensordict::dist {

struct Group::State {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
};

namespace {

[[noreturn]] void join_failed(int rank, int size, std::chrono::milliseconds timeout,
                              const std::string& why) {
  throw Error("Group: rank " + std::to_string(rank) + " of " + std::to_string(size) +
              " could not join within " + std::to_string(timeout.count()) + " ms: " + why);
}

// Python's init_process_group waits until every rank has added itself to this counter.
void store_barrier(c10d::Store& store, int rank, int size, std::chrono::milliseconds timeout) {
  const std::string key = "store_based_barrier_key:1";
  store.add(key, 1);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int64_t joined = store.add(key, 0); joined < size; joined = store.add(key, 0)) {
    if (std::chrono::steady_clock::now() > deadline) {
      join_failed(rank, size, timeout, std::to_string(joined) + " ranks reached the barrier");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Joins the group the way init_process_group("gloo", init_method=...) of the same torch builds its
// default group (c10d_bridge.h: its store keys; on 1.13, then a store barrier and the sequence
// number), so that Python processes can be ranks of the same group.
Group make_group(c10::intrusive_ptr<c10d::Store> store, const std::string& host, int rank, int size,
                 std::chrono::milliseconds timeout) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw Error("Group: rank " + std::to_string(rank) + " is not in a group of " +
                std::to_string(size));
  }
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(host));
  auto state = std::make_shared<Group::State>();
  state->store = store;
  try {
    store->setTimeout(timeout);
    auto default_pg = c10::make_intrusive<c10d::PrefixStore>("default_pg", store);
    const auto stores = detail::default_group_stores(default_pg);
    auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(stores.backend, rank, size, options);
    state->pg = detail::gloo_process_group(gloo, stores.group);
    if (detail::kBarrierAfterInit) {
      store_barrier(*default_pg, rank, size, timeout);
      gloo->setSequenceNumberForGroup();
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    join_failed(rank, size, timeout, tensordict::detail::first_line(e.what()));
  }
  return Group(std::move(state));
}

}  // namespace

// Both: the threads the store, Gloo's device and the process group start inherit a blocked
// SIGPIPE (detail::SigpipeGuard), so that a write into a dead peer's connection is an error Gloo
// reports, not a signal that kills the process.
Group Group::tcp(const std::string& host, int port, int rank, int size,
                 std::chrono::milliseconds timeout) {
  const detail::SigpipeGuard guard;
  c10d::TCPStoreOptions opts = detail::tcp_store_options();
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = rank == 0;
  opts.numWorkers = static_cast<std::size_t>(size);
  opts.waitWorkers = true;  // clients count themselves in, as Python's store server expects
  opts.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(host, opts);
  } catch (const std::exception& e) {
    throw Error("Group: no TCP store at " + host + ":" + std::to_string(port) + " within " +
                std::to_string(timeout.count()) +
                " ms: " + tensordict::detail::first_line(e.what()));
  }
  return make_group(store, host, rank, size, timeout);
}

Group Group::file(const std::string& path, int rank, int size, std::chrono::milliseconds timeout) {
  const detail::SigpipeGuard guard;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::FileStore>(path, size);
  } catch (const std::exception& e) {
    throw Error("Group: no file store at '" + path +
                "': " + tensordict::detail::first_line(e.what()));
  }
  return make_group(store, "127.0.0.1", rank, size, timeout);
}

c10d::ProcessGroup& Group::pg() const { return *state_->pg; }
int Group::rank() const { return state_->pg->getRank(); }
int Group::size() const { return state_->pg->getSize(); }

}  // namespace tensordict::dist
