// Messages over a c10d::ProcessGroup: bounded waits with errors that name the operation, byte
// frames, and contiguous staging of leaves that Gloo cannot send or fill in place.
#include <ATen/ATen.h>

#include <cstring>

#include "ops_util.h"
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

void send_tensor(c10d::ProcessGroup& group, at::Tensor t, int dst, int tag,
                 const CommOptions& options, const std::string& what) {
  std::vector<at::Tensor> tensors{t.contiguous()};
  wait(group.send(tensors, dst, tag), options, what);
}

void recv_tensor(c10d::ProcessGroup& group, at::Tensor t, int src, int tag,
                 const CommOptions& options, const std::string& what) {
  Buffers buffers;
  buffers.add(t);
  wait(group.recv(buffers.at(0), src, tag), options, what);
  buffers.finish();
}

at::Tensor to_bytes(const std::string& text, int64_t size) {
  at::Tensor out = at::zeros({size}, at::kByte);
  std::memcpy(out.data_ptr(), text.data(), text.size());
  return out;
}

Json from_bytes(const at::Tensor& bytes, int64_t size, const char* op) {
  const auto* begin = static_cast<const char*>(bytes.data_ptr());
  try {
    return Json::parse(begin, begin + size);
  } catch (const std::exception& e) {
    throw FormatError(std::string(op) + ": the structure frame is not valid JSON (" + e.what() +
                      "); is the peer running the same protocol?");
  }
}

void send_frame(c10d::ProcessGroup& group, const Json& frame, int dst, int tag,
                const CommOptions& options, const char* op) {
  const std::string text = frame.dump();
  const auto size = static_cast<int64_t>(text.size());
  send_tensor(group, at::full({1}, size, at::kLong), dst, tag, options,
              std::string(op) + " (structure size to rank " + std::to_string(dst) + ")");
  send_tensor(group, to_bytes(text, size), dst, tag, options,
              std::string(op) + " (structure to rank " + std::to_string(dst) + ")");
}

Json recv_frame(c10d::ProcessGroup& group, int src, int tag, const CommOptions& options,
                const char* op) {
  at::Tensor size = at::zeros({1}, at::kLong);
  recv_tensor(group, size, src, tag, options,
              std::string(op) + " (structure size from rank " + std::to_string(src) + ")");
  const int64_t n = size.item<int64_t>();
  if (n <= 0 || n > (int64_t{1} << 31)) {
    throw FormatError(std::string(op) + ": rank " + std::to_string(src) +
                      " announced a structure frame of " + std::to_string(n) +
                      " bytes; is the peer running the same protocol (check = true)?");
  }
  at::Tensor bytes = at::empty({n}, at::kByte);
  recv_tensor(group, bytes, src, tag, options,
              std::string(op) + " (structure from rank " + std::to_string(src) + ")");
  return from_bytes(bytes, n, op);
}

}  // namespace tensordict::dist::detail
