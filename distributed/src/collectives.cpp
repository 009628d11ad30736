// Collectives: broadcast, all_reduce, all_gather and scatter, as Python tensordict runs them:
// Python's metadata pickled through torch.distributed's object collectives, then one
// consolidated buffer; all_reduce leaf by leaf.
#include <ATen/ATen.h>

#include <algorithm>
#include <functional>

#include "metadata.h"
#include "wire.h"

namespace tensordict::dist {
namespace {

// `flat` zero-padded to the size of `out`, as Python pads the buffers of all_gather and scatter.
at::Tensor padded_into(at::Tensor out, const at::Tensor& flat) {
  out.zero_();
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
// descriptions go round so that each rank can name the key.
void agree(const TensorDict& td, c10d::ProcessGroup& group, const CommOptions& options,
           const detail::Site& site) {
  const char* op = site.op.c_str();
  std::string signature;
  for (const auto& leaf : detail::leaves(td, op)) {
    signature += leaf.path + '\0' + c10::toString(leaf.tensor.scalar_type()) + '\0' +
                 shape_str(leaf.tensor.sizes()) + '\n';
  }
  const auto hash = static_cast<int64_t>(std::hash<std::string>{}(signature));
  const auto hashes = detail::all_gather_tensor(group, at::full({1}, hash, at::kLong), options,
                                                site.part("structure hashes"));
  if (std::all_of(hashes.begin(), hashes.end(),
                  [&](const at::Tensor& h) { return h.item<int64_t>() == hash; })) {
    return;
  }
  const auto all =
      detail::all_gather_object(group, detail::pickle_metadata(td, at::Tensor()), options, site);
  for (int r = 0; r < group.getSize(); ++r) {
    if (r == group.getRank() || hashes[r].item<int64_t>() == hash) continue;
    detail::check_matches(detail::read_metadata(all[r], op, false).meta, td, op, r);
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

}  // namespace

TensorDict broadcast(const TensorDict& td, c10d::ProcessGroup& group, int src,
                     const CommOptions& options) {
  const detail::Site site = detail::collective_site("broadcast", group, src);
  return detail::boundary(site, options, [&] {
    check_root(group, src, "broadcast");
    const bool root = group.getRank() == src;
    detail::Packed p;
    if (root) p = detail::pack(td, "broadcast");
    const std::string meta = detail::broadcast_object(
        group,
        root ? detail::pickle_metadata(p.td, p.flat, {{"_storage_device", "cpu"}},
                                       options.tensorclass_type)
             : std::string(),
        src, options, site);
    const detail::Site data = site.part("data");
    if (root) {
      detail::broadcast_tensor(group, p.flat, src, options, data);
      return p.td;
    }
    const auto announced = detail::read_metadata(meta, "broadcast");
    at::Tensor buffer = detail::announced_buffer(announced.total_bytes, options, data);
    detail::broadcast_tensor(group, buffer, src, options, data);
    return detail::from_metadata(announced.meta, buffer, "broadcast");
  });
}

void all_reduce(const TensorDict& td, c10d::ProcessGroup& group, ReduceOp op,
                const CommOptions& options) {
  const detail::Site site = detail::collective_site("all_reduce", group);
  detail::boundary(site, options, [&] {
    if (options.check) agree(td, group, options, site);
    // Python's order (insertion, depth first), so that a Python rank's collectives pair with
    // ours.
    const auto leaves = detail::leaves(td, "all_reduce", detail::LeafOrder::Insertion);
    detail::Buffers buffers;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    c10d::AllreduceOptions opts;
    opts.reduceOp = to_c10d(op);
    opts.timeout = options.timeout;
    for (size_t i = 0; i < leaves.size(); ++i) {
      buffers.add(leaves[i].tensor, true);
      works.push_back(detail::post(site.leaf(leaves[i].path), options,
                                   [&] { return group.allreduce(buffers.at(i), opts); }));
    }
    for (size_t i = 0; i < works.size(); ++i) {
      detail::wait(works[i], options, site.leaf(leaves[i].path));
    }
    buffers.finish();
  });
}

std::vector<TensorDict> all_gather(const TensorDict& td, c10d::ProcessGroup& group,
                                   const CommOptions& options) {
  const detail::Site site = detail::collective_site("all_gather", group);
  return detail::boundary(site, options, [&] {
    const detail::Packed p = detail::pack(td, "all_gather");
    std::vector<detail::Announced> announced;
    int64_t longest = 0;
    int longest_rank = group.getRank();
    for (const auto& meta :
         detail::all_gather_object(group, detail::pickle_metadata(p.td, p.flat), options, site)) {
      announced.push_back(detail::read_metadata(meta, "all_gather"));
      if (announced.back().total_bytes > longest) {
        longest = announced.back().total_bytes;
        longest_rank = static_cast<int>(announced.size()) - 1;
      }
    }
    // Every rank's buffer is padded to the longest one announced: allocated as a peer's buffer.
    detail::Site announcer = site.part("data", " from");
    announcer.peer = longest_rank;
    const auto data = detail::all_gather_tensor(
        group, padded_into(detail::announced_buffer(longest, options, announcer), p.flat), options,
        site.part("data"));
    std::vector<TensorDict> out;
    for (int r = 0; r < group.getSize(); ++r) {
      out.push_back(r == group.getRank()
                        ? p.td
                        : detail::from_metadata(announced[r].meta,
                                                data[r].narrow(0, 0, announced[r].total_bytes),
                                                "all_gather"));
    }
    return out;
  });
}

TensorDict scatter(const std::vector<TensorDict>& tds, c10d::ProcessGroup& group, int src,
                   const CommOptions& options) {
  const detail::Site site = detail::collective_site("scatter", group, src);
  return detail::boundary(site, options, [&] {
    check_root(group, src, "scatter");
    const int world = group.getSize();
    std::vector<std::string> metas;
    std::vector<at::Tensor> parts;
    if (group.getRank() == src) {
      if (static_cast<int>(tds.size()) != world) {
        throw Error("scatter: " + std::to_string(tds.size()) + " TensorDicts for a group of " +
                    std::to_string(world) + " ranks");
      }
      std::vector<detail::Packed> packed;
      int64_t longest = 0;
      for (const auto& td : tds) {
        packed.push_back(detail::pack(td, "scatter"));
        longest = std::max(longest, packed.back().flat.numel());
      }
      for (const auto& p : packed) {
        metas.push_back(detail::pickle_metadata(
            p.td, p.flat, {{"_max_bytes", longest}, {"_storage_device", "cpu"}}));
        parts.push_back(padded_into(at::empty({longest}, at::kByte), p.flat));
      }
    }
    const auto announced =
        detail::read_metadata(detail::scatter_object(group, metas, src, options, site), "scatter");
    const detail::Site data = site.part("data");
    at::Tensor buffer = detail::announced_buffer(announced.max_bytes, options, data);
    detail::scatter_tensor(group, buffer, parts, src, options, data);
    return detail::from_metadata(announced.meta, buffer.narrow(0, 0, announced.total_bytes),
                                 "scatter");
  });
}

}  // namespace tensordict::dist
