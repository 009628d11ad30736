// Messages over a c10d::ProcessGroup: bounded waits with errors that name the operation,
// contiguous staging of leaves that Gloo cannot send or fill in place, collectives, and pickles
// moved as torch.distributed's object functions move them.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "tensordict/internal.h"
#include "wire.h"

namespace tensordict::dist::detail {

void wait(const c10::intrusive_ptr<c10d::Work>& work, const CommOptions& options,
          const std::string& what) {
  bool done = false;
  try {
    done = work->wait(options.timeout);
  } catch (const std::exception& e) {
    const std::string message = tensordict::detail::first_line(e.what());
    if (message.find("imed out") != std::string::npos ||
        message.find("imeout") != std::string::npos) {
      throw TimeoutError(what + ": timed out after " + std::to_string(options.timeout.count()) +
                         " ms (" + message + ")");
    }
    throw Error(what + ": " + message);
  }
  if (!done) throw Error(what + ": aborted");
}

void check_peer(c10d::ProcessGroup& group, int peer, const char* op) {
  if (peer < 0 || peer >= group.getSize() || peer == group.getRank()) {
    throw Error(std::string(op) + ": rank " + std::to_string(peer) +
                " is not another rank of the group (this is rank " +
                std::to_string(group.getRank()) + " of " + std::to_string(group.getSize()) + ")");
  }
}

void Buffers::add(const at::Tensor& t, bool reduce) {
  targets_.push_back(t);
  if (reduce && t.scalar_type() == at::kBool) {
    bufs_.push_back({t.to(at::kByte)});
  } else {
    bufs_.push_back({t.is_contiguous() ? t : t.contiguous()});
  }
}

void Buffers::finish() {
  for (size_t i = 0; i < targets_.size(); ++i) {
    if (!bufs_[i][0].is_same(targets_[i])) targets_[i].copy_(bufs_[i][0]);
  }
}

void send_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int dst, int tag,
                 const CommOptions& options, const std::string& what) {
  std::vector<at::Tensor> tensors{t.contiguous()};
  wait(group.send(tensors, dst, tag), options, what);
}

at::Tensor announced_buffer(int64_t bytes, const char* op, int peer) {
  try {
    return at::empty({bytes}, at::kByte);
  } catch (const std::exception& e) {  // c10::Error from the allocator, or std::bad_alloc
    throw Error(std::string(op) + ": rank " + std::to_string(peer) + " announced " +
                std::to_string(bytes) + " bytes, which cannot be allocated here (" +
                tensordict::detail::first_line(e.what()) + ")");
  }
}

void recv_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src, int tag,
                 const CommOptions& options, const std::string& what) {
  Buffers buffers;
  buffers.add(t);
  wait(group.recv(buffers.at(0), src, tag), options, what);
  buffers.finish();
}

namespace {

constexpr int64_t kMaxObjectBytes = int64_t{1} << 31;

at::Tensor length_of(int64_t n) { return at::full({1}, n, at::kLong); }

int64_t checked_length(const at::Tensor& t, const std::string& op, const std::string& from) {
  const int64_t n = t.item<int64_t>();
  if (n <= 0 || n > kMaxObjectBytes) {
    throw FormatError(op + ": " + from + " announced a " + std::to_string(n) +
                      "-byte pickle; is the peer running tensordict's protocol?");
  }
  return n;
}

at::Tensor bytes_of(const std::string& pickle, int64_t size) {
  at::Tensor out = at::zeros({size}, at::kByte);
  std::memcpy(out.data_ptr(), pickle.data(), std::min<size_t>(pickle.size(), size));
  return out;
}

std::string string_of(const at::Tensor& bytes, int64_t size) {
  return std::string(static_cast<const char*>(bytes.data_ptr()), static_cast<size_t>(size));
}

}  // namespace

std::vector<at::Tensor> all_gather_tensor(c10d::ProcessGroup& group, const at::Tensor& t,
                                          const CommOptions& options, const std::string& what) {
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < group.getSize(); ++r) out[0].push_back(at::empty_like(t));
  std::vector<at::Tensor> in{t};
  c10d::AllgatherOptions opts;
  opts.timeout = options.timeout;
  wait(group.allgather(out, in, opts), options, what);
  return out[0];
}

void broadcast_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src,
                      const CommOptions& options, const std::string& what) {
  std::vector<at::Tensor> tensors{t};
  c10d::BroadcastOptions opts;
  opts.rootRank = src;
  opts.timeout = options.timeout;
  wait(group.broadcast(tensors, opts), options, what);
}

void scatter_tensor(c10d::ProcessGroup& group, const at::Tensor& out,
                    const std::vector<at::Tensor>& parts, int src, const CommOptions& options,
                    const std::string& what) {
  std::vector<at::Tensor> outputs{out};
  std::vector<std::vector<at::Tensor>> inputs;
  if (group.getRank() == src) inputs.push_back(parts);
  c10d::ScatterOptions opts;
  opts.rootRank = src;
  opts.timeout = options.timeout;
  wait(group.scatter(outputs, inputs, opts), options, what);
}

void send_object(c10d::ProcessGroup& group, const std::string& pickle, int dst, int tag,
                 const CommOptions& options, const std::string& op) {
  const auto n = static_cast<int64_t>(pickle.size());
  const std::string to = " to rank " + std::to_string(dst) + ")";
  send_tensor(group, length_of(n), dst, tag, options, op + " (metadata size" + to);
  send_tensor(group, bytes_of(pickle, n), dst, tag, options, op + " (metadata" + to);
}

std::string recv_object(c10d::ProcessGroup& group, int src, int tag, const CommOptions& options,
                        const std::string& op) {
  const std::string from = " from rank " + std::to_string(src) + ")";
  at::Tensor size = at::zeros({1}, at::kLong);
  recv_tensor(group, size, src, tag, options, op + " (metadata size" + from);
  const int64_t n = checked_length(size, op, "rank " + std::to_string(src));
  at::Tensor bytes = at::empty({n}, at::kByte);
  recv_tensor(group, bytes, src, tag, options, op + " (metadata" + from);
  return string_of(bytes, n);
}

std::string broadcast_object(c10d::ProcessGroup& group, const std::string& pickle, int src,
                             const CommOptions& options, const std::string& op) {
  const bool root = group.getRank() == src;
  at::Tensor size = length_of(static_cast<int64_t>(pickle.size()));
  broadcast_tensor(group, size, src, options, op + " (metadata size)");
  const int64_t n = checked_length(size, op, "rank " + std::to_string(src));
  at::Tensor bytes = root ? bytes_of(pickle, n) : at::empty({n}, at::kByte);
  broadcast_tensor(group, bytes, src, options, op + " (metadata)");
  return root ? pickle : string_of(bytes, n);
}

std::vector<std::string> all_gather_object(c10d::ProcessGroup& group, const std::string& pickle,
                                           const CommOptions& options, const std::string& op) {
  const auto sizes = all_gather_tensor(group, length_of(static_cast<int64_t>(pickle.size())),
                                       options, op + " (metadata sizes)");
  int64_t longest = 0;
  for (int r = 0; r < group.getSize(); ++r) {
    longest = std::max(longest, checked_length(sizes[r], op, "rank " + std::to_string(r)));
  }
  const auto all = all_gather_tensor(group, bytes_of(pickle, longest), options, op + " (metadata)");
  std::vector<std::string> out;
  for (int r = 0; r < group.getSize(); ++r)
    out.push_back(string_of(all[r], sizes[r].item<int64_t>()));
  return out;
}

std::string scatter_object(c10d::ProcessGroup& group, const std::vector<std::string>& pickles,
                           int src, const CommOptions& options, const std::string& op) {
  const bool root = group.getRank() == src;
  int64_t longest = 0;
  for (const auto& p : pickles) longest = std::max(longest, static_cast<int64_t>(p.size()));
  at::Tensor max_size = length_of(longest);
  broadcast_tensor(group, max_size, src, options, op + " (metadata size)");
  longest = checked_length(max_size, op, "rank " + std::to_string(src));
  std::vector<at::Tensor> parts;
  std::vector<at::Tensor> lengths;
  for (size_t r = 0; root && r < pickles.size(); ++r) {
    parts.push_back(bytes_of(pickles[r], longest));
    lengths.push_back(length_of(static_cast<int64_t>(pickles[r].size())));
  }
  at::Tensor bytes = at::empty({longest}, at::kByte);
  scatter_tensor(group, bytes, parts, src, options, op + " (metadata)");
  at::Tensor size = at::zeros({1}, at::kLong);
  scatter_tensor(group, size, lengths, src, options, op + " (metadata sizes)");
  const int64_t n = checked_length(size, op, "rank " + std::to_string(src));
  if (n > longest) throw FormatError(op + ": a metadata size beyond the announced maximum");
  return string_of(bytes, n);
}

}  // namespace tensordict::dist::detail
