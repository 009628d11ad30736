// Collective scenarios (4 ranks unless said): broadcast, all_reduce (and its structure check on
// 2 ranks), all_gather of different structures, scatter.
#include "worker.h"

using namespace tensordict;
using dist_test::same;
using dist_test::sample;
using dist_test::with_stack;

SCENARIO_FN("broadcast") {
  const TensorDict td = group.rank() == 2 ? with_stack(9) : TensorDict();
  const TensorDict out = dist::broadcast(td, group.pg(), 2);
  EXPECT(same(out.exclude({"tags"}), sample(9)));
  EXPECT(out.get_non_tensor("tags") == Json::array({"x", "y"}));
  // An empty TensorDict: Python broadcasts its 0-byte buffer too.
  const TensorDict empty = dist::broadcast(TensorDict({}, {4}), group.pg(), 0);
  EXPECT(empty.is_empty() && empty.batch_size() == BatchSize{4});
}

SCENARIO_FN("all_reduce") {
  const int world = group.size();
  TensorDict td = sample(group.rank());
  td.set("t", at::arange(6, at::kFloat).reshape({3, 2}).t());  // non-contiguous
  dist::all_reduce(td, group.pg());
  const double ranks = world * (world - 1) / 2.0;  // 0 + 1 + ... + world-1
  EXPECT(td.get("a").equal(at::arange(6, at::kFloat).reshape({2, 3}) * world + ranks));
  EXPECT(td.get("z_first_inserted").equal(at::full({2}, ranks, at::kDouble)));
  EXPECT(td.get({"nest", "b"}).equal(at::arange(2, at::kLong) * world + int64_t(ranks)));
  EXPECT(td.get("t").equal(at::arange(6, at::kFloat).reshape({3, 2}).t() * world));
  EXPECT(td.get({"nest", "c"}).all().item<bool>());  // bool: Sum is "any"
  EXPECT(td.get_non_tensor("note") == "seed " + std::to_string(group.rank()));  // untouched
  TensorDict top = sample(group.rank());
  dist::all_reduce(top, group.pg(), dist::ReduceOp::Max);
  EXPECT(top.get("z_first_inserted").equal(at::full({2}, world - 1.0, at::kDouble)));
  dist::CommOptions unchecked;  // Python's collectives only: leaf by leaf, insertion order
  unchecked.check = false;
  TensorDict plain = sample(group.rank());
  dist::all_reduce(plain, group.pg(), dist::ReduceOp::Sum, unchecked);
  EXPECT(plain.get("z_first_inserted").equal(at::full({2}, ranks, at::kDouble)));
  EXPECT(plain.get({"nest", "b"}).equal(at::arange(2, at::kLong) * world + int64_t(ranks)));
}

SCENARIO_FN("all_reduce_mismatch") {
  TensorDict td = sample(1);
  if (group.rank() == 1) td.set({"nest", "extra"}, at::zeros({2}));
  if (group.rank() == 0) {
    EXPECT_THROW_MSG(KeyError, dist::all_reduce(td, group.pg()),
                     "all_reduce: key 'nest.extra' of rank 1 is not in this TensorDict");
  } else {
    EXPECT_THROW_MSG(KeyError, dist::all_reduce(td, group.pg()),
                     "all_reduce: key 'nest.extra' is not on rank 0");
  }
  TensorDict good = sample(1);  // the group still works
  dist::all_reduce(good, group.pg());
  EXPECT(good.get("z_first_inserted").equal(at::full({2}, 2.0, at::kDouble)));
}

SCENARIO_FN("all_gather") {
  const int me = group.rank();
  TensorDict td({{"x", at::full({me + 1}, me, at::kLong)}});
  td.set("who", "rank " + std::to_string(me));
  const auto all = dist::all_gather(td, group.pg());
  EXPECT(static_cast<int>(all.size()) == group.size());
  for (int r = 0; r < group.size(); ++r) {
    EXPECT(all[r].get("x").equal(at::full({r + 1}, r, at::kLong)));
    EXPECT(all[r].get_non_tensor("who") == "rank " + std::to_string(r));
  }
}

SCENARIO_FN("scatter") {
  std::vector<TensorDict> parts;
  if (group.rank() == 1) {
    for (int r = 0; r < group.size(); ++r) parts.push_back(sample(r * 10));
  }
  const TensorDict mine = dist::scatter(parts, group.pg(), 1);
  EXPECT(same(mine, sample(group.rank() * 10)));
}

SCENARIO_FN("shared_dataset") {
  // Rank 0 saves a dataset once; every rank maps the same directory at the same time and reads
  // its own rows (docs/distributed.md, "Several processes reading one memmapped dataset").
  const std::string dir = dist_test::shared_dir() + "/dataset";
  const int64_t rows = 8;
  const TensorDict dataset({{"x", at::arange(rows * 3, at::kFloat).reshape({rows, 3})},
                            {"y", at::arange(rows, at::kLong)}},
                           {rows});
  if (group.rank() == 0) dataset.memmap(dir, {2});
  dist::broadcast(TensorDict(), group.pg(), 0);  // a barrier: the directory is there
  const TensorDict data = TensorDict::load_memmap(dir, std::nullopt, 2);
  const int64_t per = rows / group.size();
  const TensorDict mine = data.index({Slice(group.rank() * per, (group.rank() + 1) * per)});
  EXPECT(mine.get("y").equal(at::arange(group.rank() * per, (group.rank() + 1) * per, at::kLong)));
  EXPECT(mine.get("x").equal(dataset.get("x").narrow(0, group.rank() * per, per)));
  dist::broadcast(TensorDict(), group.pg(), 0);  // nobody leaves while others read
}
