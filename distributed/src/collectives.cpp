// Collectives: broadcast, all_reduce, all_gather and scatter. Structures travel as frames
// (lengths first, so that every rank can size its buffers), data as one consolidated buffer, or
// leaf by leaf for all_reduce.
#include <ATen/ATen.h>

#include <algorithm>
#include <functional>

#include "wire.h"

namespace tensordict::dist {
namespace {

std::vector<at::Tensor> gather_all(c10d::ProcessGroup& group, const at::Tensor& t,
                                   const CommOptions& options, const std::string& what) {
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < group.getSize(); ++r) out[0].push_back(at::empty_like(t));
  std::vector<at::Tensor> in{t};
  c10d::AllgatherOptions opts;
  opts.timeout = options.timeout;
  detail::wait(group.allgather(out, in, opts), options, what);
  return out[0];
}

void broadcast_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src,
                      const CommOptions& options, const std::string& what) {
  if (t.numel() == 0) return;
  std::vector<at::Tensor> tensors{t};
  c10d::BroadcastOptions opts;
  opts.rootRank = src;
  opts.timeout = options.timeout;
  detail::wait(group.broadcast(tensors, opts), options, what);
}

at::Tensor padded(const at::Tensor& flat, int64_t size) {
  at::Tensor out = at::zeros({std::max<int64_t>(size, 1)}, at::kByte);
  if (flat.numel() > 0) out.narrow(0, 0, flat.numel()).copy_(flat);
  return out;
}

void check_root(c10d::ProcessGroup& group, int src, const char* op) {
  if (src < 0 || src >= group.getSize()) {
    throw Error(std::string(op) + ": rank " + std::to_string(src) + " is not in the group of " +
                std::to_string(group.getSize()));
  }
}

// The ranks' leaf structures (path, dtype, shape) must agree before leaf-wise collectives, which
// would otherwise hang or mix up buffers. A hash is compared first; on a difference the full
// frames go round so that each rank can name the key.
void agree(const TensorDict& td, c10d::ProcessGroup& group, const CommOptions& options,
           const char* op) {
  std::string signature;
  for (const auto& leaf : detail::leaves(td, op)) {
    signature += leaf.path + '\0' + c10::toString(leaf.tensor.scalar_type()) + '\0' +
                 shape_str(leaf.tensor.sizes()) + '\n';
  }
  const auto hash = static_cast<int64_t>(std::hash<std::string>{}(signature));
  const std::string text = detail::describe(td).dump();
  at::Tensor mine = at::tensor({hash, static_cast<int64_t>(text.size())}, at::kLong);
  const auto all = gather_all(group, mine, options, std::string(op) + " (structure hashes)");
  int64_t longest = 0;
  bool same = true;
  for (const auto& t : all) {
    same = same && t[0].item<int64_t>() == hash;
    longest = std::max(longest, t[1].item<int64_t>());
  }
  if (same) return;
  const auto frames = gather_all(group, detail::to_bytes(text, longest), options,
                                 std::string(op) + " (structures)");
  for (int r = 0; r < group.getSize(); ++r) {
    if (r == group.getRank() || all[r][0].item<int64_t>() == hash) continue;
    detail::check_matches(detail::from_bytes(frames[r], all[r][1].item<int64_t>(), op), td, op, r);
  }
  throw Error(std::string(op) + ": the ranks' structures differ (see the other ranks' errors)");
}

c10d::ReduceOp to_c10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return c10d::ReduceOp::SUM;
    case ReduceOp::Product:
      return c10d::ReduceOp::PRODUCT;
    case ReduceOp::Min:
      return c10d::ReduceOp::MIN;
    case ReduceOp::Max:
      return c10d::ReduceOp::MAX;
  }
  return c10d::ReduceOp::SUM;
}

// A frame and buffer sent as one: the frame's text and the buffer's size, for the length round.
struct Packed {
  TensorDict td;
  at::Tensor flat;
  std::string text;
};

Packed pack_frame(const TensorDict& td, const char* op) {
  auto [packed, flat] = detail::pack(td, op);
  Json frame = detail::describe(packed, flat);
  return {packed, flat, frame.dump()};
}

TensorDict unpack(const at::Tensor& frame, int64_t frame_size, const at::Tensor& data,
                  int64_t data_size, const char* op) {
  return detail::build(detail::from_bytes(frame, frame_size, op), data.narrow(0, 0, data_size));
}

}  // namespace

TensorDict broadcast(const TensorDict& td, c10d::ProcessGroup& group, int src,
                     const CommOptions& options) {
  check_root(group, src, "broadcast");
  const bool root = group.getRank() == src;
  Packed p;
  if (root) p = pack_frame(td, "broadcast");
  at::Tensor sizes =
      root ? at::tensor({static_cast<int64_t>(p.text.size()), p.flat.numel()}, at::kLong)
           : at::zeros({2}, at::kLong);
  broadcast_tensor(group, sizes, src, options, "broadcast (sizes)");
  const int64_t frame_size = sizes[0].item<int64_t>();
  const int64_t data_size = sizes[1].item<int64_t>();
  at::Tensor frame =
      root ? detail::to_bytes(p.text, frame_size) : at::empty({frame_size}, at::kByte);
  broadcast_tensor(group, frame, src, options, "broadcast (structure)");
  if (root) {
    broadcast_tensor(group, p.flat, src, options, "broadcast (data)");
    return p.td;
  }
  at::Tensor data = at::empty({data_size}, at::kByte);
  broadcast_tensor(group, data, src, options, "broadcast (data)");
  return unpack(frame, frame_size, data, data_size, "broadcast");
}

void all_reduce(const TensorDict& td, c10d::ProcessGroup& group, ReduceOp op,
                const CommOptions& options) {
  if (options.check) agree(td, group, options, "all_reduce");
  // Python's order (insertion, depth first), so that a Python rank's collectives pair with ours.
  const auto leaves = detail::leaves(td, "all_reduce", detail::LeafOrder::Insertion);
  detail::Buffers buffers;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  c10d::AllreduceOptions opts;
  opts.reduceOp = to_c10d(op);
  opts.timeout = options.timeout;
  for (size_t i = 0; i < leaves.size(); ++i) {
    buffers.add(leaves[i].tensor, true);
    works.push_back(group.allreduce(buffers.at(i), opts));
  }
  for (size_t i = 0; i < works.size(); ++i) {
    detail::wait(works[i], options, "all_reduce: key '" + leaves[i].path + "'");
  }
  buffers.finish();
}

std::vector<TensorDict> all_gather(const TensorDict& td, c10d::ProcessGroup& group,
                                   const CommOptions& options) {
  const Packed p = pack_frame(td, "all_gather");
  at::Tensor mine = at::tensor({static_cast<int64_t>(p.text.size()), p.flat.numel()}, at::kLong);
  const auto sizes = gather_all(group, mine, options, "all_gather (sizes)");
  int64_t frame_max = 0;
  int64_t data_max = 0;
  for (const auto& s : sizes) {
    frame_max = std::max(frame_max, s[0].item<int64_t>());
    data_max = std::max(data_max, s[1].item<int64_t>());
  }
  const auto frames =
      gather_all(group, detail::to_bytes(p.text, frame_max), options, "all_gather (structures)");
  const auto data = gather_all(group, padded(p.flat, data_max), options, "all_gather (data)");
  std::vector<TensorDict> out;
  for (int r = 0; r < group.getSize(); ++r) {
    out.push_back(r == group.getRank() ? p.td
                                       : unpack(frames[r], sizes[r][0].item<int64_t>(), data[r],
                                                sizes[r][1].item<int64_t>(), "all_gather"));
  }
  return out;
}

TensorDict scatter(const std::vector<TensorDict>& tds, c10d::ProcessGroup& group, int src,
                   const CommOptions& options) {
  check_root(group, src, "scatter");
  const int world = group.getSize();
  const bool root = group.getRank() == src;
  std::vector<Packed> packed;
  at::Tensor sizes = at::zeros({world, 2}, at::kLong);
  if (root) {
    if (static_cast<int>(tds.size()) != world) {
      throw Error("scatter: " + std::to_string(tds.size()) + " TensorDicts for a group of " +
                  std::to_string(world) + " ranks");
    }
    for (int r = 0; r < world; ++r) {
      packed.push_back(pack_frame(tds[r], "scatter"));
      sizes[r][0] = static_cast<int64_t>(packed.back().text.size());
      sizes[r][1] = packed.back().flat.numel();
    }
  }
  broadcast_tensor(group, sizes, src, options, "scatter (sizes)");
  const int64_t frame_max = sizes.select(1, 0).max().item<int64_t>();
  const int64_t data_max = std::max<int64_t>(sizes.select(1, 1).max().item<int64_t>(), 1);
  c10d::ScatterOptions opts;
  opts.rootRank = src;
  opts.timeout = options.timeout;
  auto scatter_one = [&](const std::function<at::Tensor(const Packed&)>& part, int64_t size,
                         const char* what) {
    std::vector<at::Tensor> out{at::empty({size}, at::kByte)};
    std::vector<std::vector<at::Tensor>> in;
    if (root) {
      in.emplace_back();
      for (const auto& p : packed) in[0].push_back(part(p));
    }
    detail::wait(group.scatter(out, in, opts), options, what);
    return out[0];
  };
  const at::Tensor frame =
      scatter_one([&](const Packed& p) { return detail::to_bytes(p.text, frame_max); }, frame_max,
                  "scatter (structures)");
  const at::Tensor data = scatter_one([&](const Packed& p) { return padded(p.flat, data_max); },
                                      data_max, "scatter (data)");
  const int me = group.getRank();
  return unpack(frame, sizes[me][0].item<int64_t>(), data, sizes[me][1].item<int64_t>(), "scatter");
}

}  // namespace tensordict::dist
