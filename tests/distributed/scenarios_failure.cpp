// Failure scenarios (2 ranks): one rank dies (_exit(kDied)) at a chosen step of an operation —
// the library's step hook (wire.h) runs before each message or collective is posted — and the
// other must get a dist::PeerError naming the operation, the dying rank and the key or phase,
// well before its timeout. No sleeps: the step decides what the survivor has seen. Also a peer
// announcing a buffer larger than the receiver accepts.
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "metadata.h"
#include "wire.h"
#include "worker.h"

using namespace tensordict;
using dist_test::sample;

namespace {

// Exit code of the rank that dies at its step (test_distributed checks it: the step was reached).
constexpr int kDied = 42;
// The survivors' timeout: a PeerError must come from the closed connection, well before it.
constexpr std::chrono::milliseconds kTimeout{20000};
constexpr std::chrono::milliseconds kBound{8000};

// The dying rank's step: operation, and phase or key (empty: any).
struct Target {
  std::string op;
  std::string phase;
  std::string key;
};
Target g_target;

void die_at(const dist::detail::Site& site) {
  if (site.op == g_target.op && site.phase == g_target.phase && site.key == g_target.key) {
    ::_exit(kDied);
  }
}

// Installs the hook: this rank dies before posting the message of `op` at `phase` or `key`.
void die_before(const std::string& op, const std::string& phase, const std::string& key = "") {
  g_target = {op, phase, key};
  dist::detail::set_step_hook(&die_at);
}

// Every killed scenario starts once both ranks have joined: Gloo connects a group's pairs while
// it is built, and a rank dying while its peer still connects would fail the peer's join, not
// the step under test.
#define KILLED_SCENARIO(name) DT_KILLED_SCENARIO(name, __COUNTER__)
#define DT_KILLED_SCENARIO(name, id)                       \
  static void DT_CONCAT(killed_, id)(dist::Group & group); \
  SCENARIO_FN(name) {                                      \
    group.pg().barrier()->wait();                          \
    DT_CONCAT(killed_, id)(group);                         \
  }                                                        \
  static void DT_CONCAT(killed_, id)(dist::Group & group)

dist::CommOptions patient() {
  dist::CommOptions options;
  options.timeout = kTimeout;
  return options;
}

// `fn` must throw a PeerError (not a timeout) from `op` naming `peer`, `key` and `phase`, whose
// message starts with `prefix`, within kBound.
template <class F>
void expect_peer_error(F&& fn, const std::string& op, int peer, const std::string& key,
                       const std::string& phase, const std::string& prefix) {
  const auto start = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (const dist::PeerError& e) {
    const auto took = std::chrono::steady_clock::now() - start;
    const std::string what = e.what();
    std::cerr << "expected PeerError after "
              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
              << " ms: " << what << "\n";
    if (what.rfind(prefix, 0) != 0) dist_test::fail("wrong message: " + what, __FILE__, __LINE__);
    if (e.op() != op || e.peer() != peer || e.key() != key || e.phase() != phase) {
      dist_test::fail("wrong fields (op " + e.op() + ", peer " + std::to_string(e.peer()) +
                          ", key '" + e.key() + "', phase '" + e.phase() + "'): " + what,
                      __FILE__, __LINE__);
    }
    EXPECT(!e.cause().empty());
    EXPECT(took < kBound);
    return;
  } catch (const std::exception& e) {
    dist_test::fail("not a PeerError: " + std::string(e.what()), __FILE__, __LINE__);
  }
  dist_test::fail("no exception (expected: " + prefix + "...)", __FILE__, __LINE__);
}

// One leaf larger than the sockets' buffers: a send of it cannot complete into a dead peer.
TensorDict big() { return TensorDict({{"big", at::ones({16 << 20}, at::kFloat)}}); }

}  // namespace

// ---- the sender dies: recv, irecv, from_remote_init --------------------------------------------

KILLED_SCENARIO("killed_recv_before_metadata") {
  if (group.rank() == 0) {
    die_before("send", "metadata size");
    dist::send(sample(1), group.pg(), 1, patient());
    return;
  }
  TensorDict td = sample(0);
  expect_peer_error([&] { dist::recv(td, group.pg(), 0, patient()); }, "recv", 0, "",
                    "metadata size", "recv (metadata size from rank 0): ");
}

KILLED_SCENARIO("killed_recv_before_data") {
  // The receiver has accepted the structure; the sender dies before its first leaf ("a").
  if (group.rank() == 0) {
    die_before("send", "", "a");
    dist::send(sample(1), group.pg(), 1, patient());
    return;
  }
  TensorDict td = sample(0);
  expect_peer_error([&] { dist::recv(td, group.pg(), 0, patient()); }, "recv", 0, "a", "",
                    "recv (key 'a' from rank 0): ");
}

KILLED_SCENARIO("killed_irecv_before_data") {
  if (group.rank() == 0) {
    die_before("isend", "", "a");
    dist::isend(sample(1), group.pg(), 1, patient()).wait();
    return;
  }
  TensorDict td = sample(0);
  dist::Handle handle = dist::irecv(td, group.pg(), 0, patient());
  expect_peer_error([&] { handle.wait(); }, "irecv", 0, "a", "", "irecv (key 'a' from rank 0): ");
}

KILLED_SCENARIO("killed_from_remote_init_before_data") {
  if (group.rank() == 0) {
    die_before("init_remote", "consolidated buffer");
    dist::init_remote(sample(1), group.pg(), 1, patient());
    return;
  }
  expect_peer_error([&] { dist::from_remote_init(group.pg(), 0, patient()); }, "from_remote_init",
                    0, "", "consolidated buffer",
                    "from_remote_init (consolidated buffer from rank 0): ");
}

// ---- the receiver dies: send -------------------------------------------------------------------

KILLED_SCENARIO("killed_send_before_metadata") {
  if (group.rank() == 1) {
    die_before("recv", "metadata size");
    TensorDict td = big();
    dist::recv(td, group.pg(), 0, patient());
    return;
  }
  // The small description may still fit into the socket: the sender fails at the description or
  // at the answer it then waits for.
  const auto start = std::chrono::steady_clock::now();
  try {
    dist::send(big(), group.pg(), 1, patient());
    dist_test::fail("no exception", __FILE__, __LINE__);
  } catch (const dist::PeerError& e) {
    std::cerr << "expected PeerError: " << e.what() << "\n";
    EXPECT(e.op() == "send" && e.peer() == 1 && e.key().empty());
    EXPECT(e.phase() == "metadata size" || e.phase() == "metadata" || e.phase() == "answer");
    EXPECT(std::string(e.what()).rfind("send (" + e.phase(), 0) == 0);
    EXPECT(std::string(e.what()).find(" rank 1): ") != std::string::npos);
    EXPECT(std::chrono::steady_clock::now() - start < kBound);
  }
}

KILLED_SCENARIO("killed_send_before_data") {
  // The receiver accepts the structure, then dies before receiving the 64 MiB leaf.
  if (group.rank() == 1) {
    die_before("recv", "", "big");
    TensorDict td = big();
    dist::recv(td, group.pg(), 0, patient());
    return;
  }
  expect_peer_error([&] { dist::send(big(), group.pg(), 1, patient()); }, "send", 1, "big", "",
                    "send (key 'big' to rank 1): ");
}

// ---- collectives -------------------------------------------------------------------------------

KILLED_SCENARIO("killed_broadcast_before_metadata") {
  if (group.rank() == 0) {
    die_before("broadcast", "metadata size");
    dist::broadcast(sample(1), group.pg(), 0, patient());
    return;
  }
  expect_peer_error([&] { dist::broadcast(TensorDict(), group.pg(), 0, patient()); }, "broadcast",
                    0, "", "metadata size", "broadcast (metadata size from rank 0): ");
}

KILLED_SCENARIO("killed_broadcast_before_data") {
  if (group.rank() == 0) {
    die_before("broadcast", "data");
    dist::broadcast(sample(1), group.pg(), 0, patient());
    return;
  }
  expect_peer_error([&] { dist::broadcast(TensorDict(), group.pg(), 0, patient()); }, "broadcast",
                    0, "", "data", "broadcast (data from rank 0): ");
}

KILLED_SCENARIO("killed_all_reduce_before_metadata") {
  if (group.rank() == 1) {
    die_before("all_reduce", "structure hashes");
    dist::all_reduce(sample(1), group.pg(), dist::ReduceOp::Sum, patient());
    return;
  }
  expect_peer_error(
      [&] { dist::all_reduce(sample(0), group.pg(), dist::ReduceOp::Sum, patient()); },
      "all_reduce", 1, "", "structure hashes", "all_reduce (structure hashes with rank 1): ");
}

KILLED_SCENARIO("killed_all_reduce_before_data") {
  // The structures agreed; rank 1 dies before its first leaf (insertion order: "a").
  if (group.rank() == 1) {
    die_before("all_reduce", "", "a");
    dist::all_reduce(sample(1), group.pg(), dist::ReduceOp::Sum, patient());
    return;
  }
  expect_peer_error(
      [&] { dist::all_reduce(sample(0), group.pg(), dist::ReduceOp::Sum, patient()); },
      "all_reduce", 1, "a", "", "all_reduce (key 'a' with rank 1): ");
}

KILLED_SCENARIO("killed_all_gather_before_data") {
  if (group.rank() == 1) {
    die_before("all_gather", "data");
    dist::all_gather(sample(1), group.pg(), patient());
    return;
  }
  expect_peer_error([&] { dist::all_gather(sample(0), group.pg(), patient()); }, "all_gather", 1,
                    "", "data", "all_gather (data with rank 1): ");
}

KILLED_SCENARIO("killed_scatter_before_data") {
  if (group.rank() == 0) {
    die_before("scatter", "data");
    dist::scatter({sample(1), sample(2)}, group.pg(), 0, patient());
    return;
  }
  expect_peer_error([&] { dist::scatter({}, group.pg(), 0, patient()); }, "scatter", 0, "", "data",
                    "scatter (data from rank 0): ");
}

// ---- a peer announcing more than the receiver accepts ------------------------------------------

SCENARIO_FN("announced_too_large") {
  // Rank 0 announces 2^40 bytes (within the format's bound) before a consolidated buffer; the
  // receiver refuses before allocating, naming the peer, the operation and the size.
  auto& pg = group.pg();
  const dist::CommOptions options = patient();
  dist::CommOptions done = options;  // a last exchange so that rank 0 outlives rank 1's reads
  done.init_tag = 50;
  if (group.rank() == 0) {
    const auto packed = dist::detail::pack(sample(1), "test");
    dist::detail::send_object(
        pg,
        dist::detail::pickle_metadata(packed.td, packed.flat, {{"_total_bytes", int64_t{1} << 40}}),
        0, options, dist::detail::p2p_site("init_remote", 1, true));
    TensorDict nothing;
    dist::recv(nothing, pg, 1, done);
    return;
  }
  expect_peer_error([&] { dist::from_remote_init(pg, 0, options); }, "from_remote_init", 0, "",
                    "consolidated buffer",
                    "from_remote_init (consolidated buffer from rank 0): announced 1099511627776 "
                    "bytes, more than the ");
  dist::send(TensorDict(), pg, 0, done);
}
