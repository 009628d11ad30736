// Group: a Gloo process group on a TCP or file store. The only translation unit that needs
// USE_C10D_GLOO (ProcessGroupGloo.hpp is empty without it).
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "ops_util.h"
#include "tensordict/distributed.h"

namespace tensordict::dist {

struct Group::State {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
};

namespace {

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
    state->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
  } catch (const std::exception& e) {
    throw Error("Group: rank " + std::to_string(rank) + " of " + std::to_string(size) +
                " could not join within " + std::to_string(timeout.count()) +
                " ms: " + tensordict::detail::first_line(e.what()));
  }
  return Group(std::move(state));
}

}  // namespace

Group Group::tcp(const std::string& host, int port, int rank, int size,
                 std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = rank == 0;
  opts.numWorkers = static_cast<std::size_t>(size);
  opts.waitWorkers = false;
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
  return make_group(c10::make_intrusive<c10d::FileStore>(path, size), "127.0.0.1", rank, size,
                    timeout);
}

c10d::ProcessGroup& Group::pg() const { return *state_->pg; }
int Group::rank() const { return state_->pg->getRank(); }
int Group::size() const { return state_->pg->getSize(); }

}  // namespace tensordict::dist
