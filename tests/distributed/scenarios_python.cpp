// Scenarios run beside Python tensordict ranks (python_peer.py runs the same steps with Python's
// methods; test_python_peer mixes the two): every message is Python's, so each side checks what
// the other sent. Steps are by rank, so a run with the languages swapped covers the other way.
#include "mydata.h"
#include "worker.h"

using namespace tensordict;
using dist_test::same;
using dist_test::sample;
using dist_test::with_stack;

namespace {

// Python's messages exactly: no structure check.
dist::CommOptions python(int64_t init_tag = 0, bool consolidated = false) {
  return dist_test::opts(init_tag, false, consolidated);
}

bool same_tensors(const TensorDict& got, const TensorDict& want) {
  return same(got.exclude({"note"}), want.exclude({"note"}));
}

}  // namespace

SCENARIO_FN("python_p2p") {
  auto& pg = group.pg();
  const int peer = 1 - group.rank();
  const bool first = group.rank() == 0;
  for (int step : {1, 2}) {  // leaf by leaf, each way
    if (first == (step == 1)) {
      dist::send(sample(step), pg, peer, python());
    } else {
      TensorDict td = sample(0);
      dist::recv(td, pg, peer, python());
      EXPECT(same_tensors(td, sample(step)));
    }
  }
  dist::CommOptions chain = python(10);  // isend / irecv on pseudo-random tags from 10
  chain.pseudo_rand = true;
  if (first) {
    dist::isend(sample(3), pg, peer, chain).wait();
  } else {
    TensorDict td = sample(0);
    dist::irecv(td, pg, peer, chain).wait();
    EXPECT(same_tensors(td, sample(3)));
  }
  if (first) {  // one consolidated buffer, rank 1 to rank 0
    TensorDict td = sample(0).consolidate();
    dist::recv(td, pg, peer, python(0, true));
    EXPECT(same_tensors(td, sample(4)));
  } else {
    dist::send(sample(4), pg, peer, python(0, true));
  }
  for (int step : {5, 6}) {  // init_remote, each way
    if (first == (step == 5)) {
      dist::init_remote(with_stack(step), pg, peer);
    } else {
      const TensorDict td = dist::from_remote_init(pg, peer);
      EXPECT(same(td.exclude({"tags"}), sample(step)));
      EXPECT(td.get_non_tensor("tags") == Json::array({"x", "y"}));
    }
  }
  for (int step : {7, 8}) {  // a tensorclass, each way: the receiver rebuilds the class it is told
    const std::string label = "step " + std::to_string(step);
    if (first == (step == 7)) {
      dist::init_remote(example::MyData({at::full({2, 3}, double(step)), label}, {2}), pg, peer);
    } else {
      const auto got = dist::from_remote_init<example::MyData>(pg, peer);
      EXPECT(got.obs().equal(at::full({2, 3}, double(step))));
      EXPECT(got.label() == label);
      EXPECT(!got.extra().has_value());
    }
  }
}

SCENARIO_FN("python_collectives") {
  auto& pg = group.pg();
  const int rank = group.rank();
  const int size = group.size();
  TensorDict out = dist::broadcast(rank == 0 ? with_stack(10) : TensorDict(), pg, 0);
  EXPECT(same(out.exclude({"tags"}), sample(10)));
  EXPECT(out.get_non_tensor("tags") == Json::array({"x", "y"}));
  EXPECT(same(dist::broadcast(rank == 1 ? sample(11) : TensorDict(), pg, 1), sample(11)));
  const auto all = dist::all_gather(sample(20 + rank), pg);
  for (int r = 0; r < size; ++r) EXPECT(same(all[static_cast<size_t>(r)], sample(20 + r)));
  for (int src : {0, size - 1}) {
    std::vector<TensorDict> tds;
    for (int r = 0; rank == src && r < size; ++r) tds.push_back(sample(30 + src + r));
    EXPECT(same(dist::scatter(tds, pg, src), sample(30 + src + rank)));
  }
  TensorDict td = sample(rank).exclude({{"nest", "c"}});  // torch 1.13's Gloo reduces no bool
  dist::all_reduce(td, pg, dist::ReduceOp::Sum, python());
  const double ranks = size * (size - 1) / 2.0;
  EXPECT(td.get("a").equal(at::arange(6, at::kFloat).reshape({2, 3}) * size + ranks));
  EXPECT(td.get("z_first_inserted").equal(at::full({2}, ranks, at::kDouble)));
  EXPECT(td.get({"nest", "b"}).equal(at::arange(2, at::kLong) * size + int64_t(ranks)));
}
