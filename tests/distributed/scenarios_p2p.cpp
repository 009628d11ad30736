// Point-to-point scenarios (2 ranks): send/recv in every mode, isend/irecv both ways at once,
// init_remote of a tensorclass, structure mismatches and timeouts.
#include <chrono>
#include <thread>

#include "mydata.h"
#include "worker.h"

using namespace tensordict;
using dist_test::opts;
using dist_test::same;
using dist_test::sample;
using dist_test::with_stack;

SCENARIO_FN("send_recv") {
  auto& pg = group.pg();
  if (group.rank() == 0) {
    dist::send(sample(3), pg, 1);
    dist::send(sample(4), pg, 1, opts(100, false, false));  // Python's messages exactly
    dist::send(sample(5), pg, 1, opts(0, true, true));
    dist::send(sample(6), pg, 1, opts(0, true, true));
    dist::send(sample(7).consolidate(), pg, 1, opts(0, false, true));
    dist::CommOptions chain = opts(5, false, false);
    chain.pseudo_rand = true;
    dist::send(sample(8), pg, 1, chain);
    return;
  }
  TensorDict td = sample(0);
  td.set("a", at::zeros({3, 2}).t());  // a non-contiguous leaf is filled through a copy
  dist::recv(td, pg, 0);
  EXPECT(same(td, sample(3)));  // the note came along

  TensorDict python = sample(0);
  dist::recv(python, pg, 0, opts(100, false, false));
  EXPECT(python.get({"nest", "b"}).equal(sample(4).get({"nest", "b"})));
  EXPECT(python.get_non_tensor("note") == "seed 0");  // no structure check, no non-tensor data

  TensorDict packed = sample(0).consolidate();
  void* where = packed.get("a").data_ptr();
  dist::recv(packed, pg, 0, opts(0, true, true));
  EXPECT(same(packed, sample(5)));
  EXPECT(packed.get("a").data_ptr() == where);  // straight into the receiver's buffer

  TensorDict plain = sample(0);
  dist::recv(plain, pg, 0, opts(0, true, true));
  EXPECT(same(plain, sample(6)));

  TensorDict raw = sample(0).consolidate();
  dist::recv(raw, pg, 0, opts(0, false, true));
  EXPECT(raw.get("a").equal(sample(7).get("a")));
  EXPECT(raw.get("z_first_inserted").equal(sample(7).get("z_first_inserted")));

  // Python's pseudo-random tags (their values are checked against numpy in test_dist_wire).
  TensorDict chained = sample(0);
  dist::CommOptions chain = opts(5, false, false);
  chain.pseudo_rand = true;
  dist::recv(chained, pg, 0, chain);
  EXPECT(chained.get("a").equal(sample(8).get("a")));
}

SCENARIO_FN("isend_irecv") {
  const int me = group.rank();
  const int other = 1 - me;
  TensorDict mine = sample(me + 1);
  TensorDict theirs = sample(0);
  dist::Handle out = dist::isend(mine, group.pg(), other, opts(me * 1000, true, false));
  dist::Handle in = dist::irecv(theirs, group.pg(), other, opts(other * 1000, true, false));
  in.wait();
  out.wait();
  EXPECT(out.is_completed());
  EXPECT(same(theirs, sample(other + 1)));
}

SCENARIO_FN("tensorclass") {
  auto& pg = group.pg();
  example::MyData sent({at::arange(6, at::kFloat).reshape({2, 3}), "hello"}, {2});
  if (group.rank() == 0) {
    dist::init_remote(with_stack(8), pg, 1);
    dist::init_remote(sent, pg, 1);
    dist::send(sent, pg, 1);
    return;
  }
  TensorDict extra = dist::from_remote_init(pg, 0);
  TensorDict expected = sample(8);
  EXPECT(same(extra.exclude({"tags"}), expected));
  EXPECT(extra.get_non_tensor("tags") == Json::array({"x", "y"}));
  EXPECT(extra.is_consolidated());

  const auto built = dist::from_remote_init<example::MyData>(pg, 0);
  EXPECT(built.obs().equal(sent.obs()));
  EXPECT(built.label() == "hello");

  example::MyData into({at::zeros({2, 3}), ""}, {2});
  dist::recv(into, pg, 0);
  EXPECT(into.obs().equal(sent.obs()));
  EXPECT(into.label() == "hello");
}

SCENARIO_FN("mismatch") {
  auto& pg = group.pg();
  const std::string refused =
      "send: rank 1 refused the TensorDict: its structure differs (the receiver's error names "
      "the key)";
  if (group.rank() == 0) {
    for (int i = 0; i < 5; ++i) EXPECT_THROW_MSG(Error, dist::send(sample(1), pg, 1), refused);
    dist::send(sample(2), pg, 1);  // the channel is still in step
    EXPECT_THROW_MSG(Error, dist::send(sample(1), pg, 0),
                     "send: rank 0 is not another rank of the group (this is rank 0 of 2)");
    return;
  }
  TensorDict shape = sample(0);
  shape.set({"nest", "b"}, at::zeros({2, 5}, at::kLong));
  EXPECT_THROW_MSG(ShapeError, dist::recv(shape, pg, 0),
                   "recv: key 'nest.b' has shape [2] on rank 0 but [2, 5] here");
  TensorDict missing = sample(0);
  missing.del_("z_first_inserted");
  EXPECT_THROW_MSG(KeyError, dist::recv(missing, pg, 0),
                   "recv: key 'z_first_inserted' of rank 0 is not in this TensorDict");
  TensorDict extra = sample(0);
  extra.set({"nest", "d"}, at::zeros({2}));
  EXPECT_THROW_MSG(KeyError, dist::recv(extra, pg, 0), "recv: key 'nest.d' is not on rank 0");
  TensorDict dtype = sample(0);
  dtype.set("a", at::zeros({2, 3}, at::kDouble));
  EXPECT_THROW_MSG(TypeError, dist::recv(dtype, pg, 0),
                   "recv: key 'a' has dtype float32 on rank 0 but float64 here");
  TensorDict kind = sample(0);
  kind.set("a", TensorDict({}, {2}));
  EXPECT_THROW_MSG(TypeError, dist::recv(kind, pg, 0),
                   "recv: key 'a' is a Tensor on rank 0 but a TensorDict here");
  TensorDict untouched = sample(0);
  untouched.set({"nest", "b"}, at::zeros({2, 5}, at::kLong));
  EXPECT(same(shape, untouched));  // a refused recv writes nothing
  TensorDict good = sample(0);
  dist::recv(good, pg, 0);
  EXPECT(same(good, sample(2)));
}

SCENARIO_FN("timeout") {
  if (group.rank() == 0) {
    // Sends nothing; stays alive past the peer's timeouts so that they are timeouts.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return;
  }
  dist::CommOptions quick;
  quick.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  // A dist::TimeoutError is the runtime's TimeoutError and a PeerFailure naming op, peer, phase.
  auto expect_timeout = [&](const std::function<void()>& fn, const std::string& prefix,
                            const std::string& op, const std::string& phase) {
    try {
      fn();
    } catch (const dist::TimeoutError& e) {
      EXPECT(std::string(e.what()).rfind(prefix, 0) == 0);
      EXPECT(e.op() == op && e.peer() == 0 && e.phase() == phase && e.key().empty());
      EXPECT(!e.cause().empty());
      const tensordict::TimeoutError& runtime = e;
      EXPECT(std::string(runtime.what()) == e.what());
      return;
    }
    dist_test::fail("no TimeoutError for " + prefix, __FILE__, __LINE__);
  };
  TensorDict td = sample(0);
  expect_timeout([&] { dist::recv(td, group.pg(), 0, quick); },
                 "recv (metadata size from rank 0): timed out after 300 ms (", "recv",
                 "metadata size");
  expect_timeout([&] { dist::all_reduce(td, group.pg(), dist::ReduceOp::Sum, quick); },
                 "all_reduce (structure hashes with rank 0): timed out after 300 ms (",
                 "all_reduce", "structure hashes");
  EXPECT(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1400));
}
