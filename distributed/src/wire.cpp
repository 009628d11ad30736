// Messages over a c10d::ProcessGroup: bounded waits with errors that name the operation,
// contiguous staging of leaves that Gloo cannot send or fill in place, collectives, and pickles
// moved as torch.distributed's object functions move them.
#include <ATen/ATen.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <limits>

#include "tensordict/internal.h"
#include "wire.h"

namespace tensordict::dist::detail {

namespace {

std::atomic<void (*)(const Site&)> g_step_hook{nullptr};

bool is_timeout(const std::string& message) {
  return message.find("imed out") != std::string::npos ||
         message.find("imeout") != std::string::npos;
}

[[noreturn]] void fail(const Site& site, const CommOptions& options, const std::string& cause) {
  const std::string line = tensordict::detail::first_line(cause.c_str());
  PeerFailure failure(site.op, site.peer, site.key, site.phase, cause);
  if (is_timeout(line)) {
    throw TimeoutError(site.describe() + ": timed out after " +
                           std::to_string(options.timeout.count()) + " ms (" + line + ")",
                       std::move(failure));
  }
  throw PeerError(site.describe() + ": " + line, std::move(failure));
}

}  // namespace

Site Site::part(std::string phase_, const char* direction_) const {
  Site out = *this;
  out.phase = std::move(phase_);
  out.key.clear();
  if (direction_ != nullptr) out.direction = direction_;
  return out;
}

Site Site::leaf(std::string key_) const {
  Site out = *this;
  out.phase.clear();
  out.key = std::move(key_);
  return out;
}

std::string Site::describe() const {
  const std::string where = key.empty() ? phase : "key '" + key + "'";
  const std::string who = peer >= 0 ? std::string(direction + 1) + " rank " + std::to_string(peer)
                                    : std::string("with one of the other ranks");
  return op + " (" + (where.empty() ? who : where + " " + who) + ")";
}

Site p2p_site(const char* op, int peer, bool sending) {
  return Site{op, peer, sending ? " to" : " from", "", ""};
}

Site collective_site(const char* op, c10d::ProcessGroup& group, int root) {
  const int me = group.getRank();
  if (root >= 0 && root < group.getSize() && root != me) return Site{op, root, " from", "", ""};
  if (group.getSize() == 2) return Site{op, 1 - me, " with", "", ""};
  return Site{op, -1, " with", "", ""};
}

void rethrow_at(const Site& site, const CommOptions& options) {
  try {
    throw;
  } catch (const Error&) {
    throw;  // the library's own errors name what they are about already
  } catch (const std::exception& e) {
    fail(site, options, e.what());
  } catch (...) {
    fail(site, options, "an exception that is not a std::exception");
  }
}

namespace {

sigset_t sigpipe_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

}  // namespace

SigpipeGuard::SigpipeGuard() {
  const sigset_t pipe = sigpipe_set();
  sigset_t old;
  sigemptyset(&old);
  // Already blocked (by the caller, or in a thread started under a guard): left as it is.
  active_ = ::pthread_sigmask(SIG_BLOCK, &pipe, &old) == 0 && sigismember(&old, SIGPIPE) == 0;
}

SigpipeGuard::~SigpipeGuard() {
  if (!active_) return;
  const sigset_t pipe = sigpipe_set();
  if (sigpipe_pending()) {
    const timespec zero{0, 0};
    ::sigtimedwait(&pipe, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_UNBLOCK, &pipe, nullptr);
}

void set_step_hook(void (*hook)(const Site& site)) { g_step_hook = hook; }

c10::intrusive_ptr<c10d::Work> post(const Site& site, const CommOptions& options,
                                    const std::function<c10::intrusive_ptr<c10d::Work>()>& fn) {
  if (auto* hook = g_step_hook.load()) hook(site);
  try {
    SigpipeGuard guard;
    return fn();
  } catch (...) {
    rethrow_at(site, options);
  }
}

void wait(const c10::intrusive_ptr<c10d::Work>& work, const CommOptions& options,
          const Site& site) {
  bool done = false;
  try {
    done = work->wait(options.timeout);
  } catch (...) {
    rethrow_at(site, options);
  }
  if (!done) fail(site, options, "the operation was aborted");
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

void send_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int tag,
                 const CommOptions& options, const Site& site) {
  std::vector<at::Tensor> tensors{t.contiguous()};
  wait(post(site, options, [&] { return group.send(tensors, site.peer, tag); }), options, site);
}

int64_t buffer_limit(const CommOptions& options) {
  static const int64_t memory = ::tensordict::detail::machine_memory();
  return options.max_buffer_bytes > 0 ? std::min(options.max_buffer_bytes, memory) : memory;
}

at::Tensor announced_buffer(int64_t bytes, const CommOptions& options, const Site& site) {
  const int64_t limit = buffer_limit(options);
  auto refuse = [&](const std::string& why) {
    const std::string cause = "announced " + std::to_string(bytes) + " bytes, " + why;
    throw PeerError(site.describe() + ": " + cause,
                    PeerFailure(site.op, site.peer, site.key, site.phase, cause));
  };
  if (bytes > limit) {
    refuse("more than the " + std::to_string(limit) + " bytes this rank accepts (" +
           (options.max_buffer_bytes > 0 && options.max_buffer_bytes <= limit
                ? "CommOptions::max_buffer_bytes"
                : "its memory") +
           ")");
  }
  try {
    return at::empty({bytes}, at::kByte);
  } catch (const std::exception& e) {  // c10::Error from the allocator, or std::bad_alloc
    refuse("which cannot be allocated here (" + tensordict::detail::first_line(e.what()) + ")");
  }
  return {};  // not reached: refuse throws
}

void recv_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int tag,
                 const CommOptions& options, const Site& site) {
  Buffers buffers;
  buffers.add(t);
  wait(post(site, options, [&] { return group.recv(buffers.at(0), site.peer, tag); }), options,
       site);
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
                                          const CommOptions& options, const Site& site) {
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < group.getSize(); ++r) out[0].push_back(at::empty_like(t));
  std::vector<at::Tensor> in{t};
  c10d::AllgatherOptions opts;
  opts.timeout = options.timeout;
  wait(post(site, options, [&] { return group.allgather(out, in, opts); }), options, site);
  return out[0];
}

void broadcast_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src,
                      const CommOptions& options, const Site& site) {
  std::vector<at::Tensor> tensors{t};
  c10d::BroadcastOptions opts;
  opts.rootRank = src;
  opts.timeout = options.timeout;
  wait(post(site, options, [&] { return group.broadcast(tensors, opts); }), options, site);
}

void scatter_tensor(c10d::ProcessGroup& group, const at::Tensor& out,
                    const std::vector<at::Tensor>& parts, int src, const CommOptions& options,
                    const Site& site) {
  std::vector<at::Tensor> outputs{out};
  std::vector<std::vector<at::Tensor>> inputs;
  if (group.getRank() == src) inputs.push_back(parts);
  c10d::ScatterOptions opts;
  opts.rootRank = src;
  opts.timeout = options.timeout;
  wait(post(site, options, [&] { return group.scatter(outputs, inputs, opts); }), options, site);
}

void send_object(c10d::ProcessGroup& group, const std::string& pickle, int tag,
                 const CommOptions& options, const Site& site) {
  const auto n = static_cast<int64_t>(pickle.size());
  send_tensor(group, length_of(n), tag, options, site.part("metadata size"));
  send_tensor(group, bytes_of(pickle, n), tag, options, site.part("metadata"));
}

std::string recv_object(c10d::ProcessGroup& group, int tag, const CommOptions& options,
                        const Site& site) {
  at::Tensor size = at::zeros({1}, at::kLong);
  recv_tensor(group, size, tag, options, site.part("metadata size"));
  const int64_t n = checked_length(size, site.op, "rank " + std::to_string(site.peer));
  at::Tensor bytes = announced_buffer(n, options, site.part("metadata"));
  recv_tensor(group, bytes, tag, options, site.part("metadata"));
  return string_of(bytes, n);
}

std::string broadcast_object(c10d::ProcessGroup& group, const std::string& pickle, int src,
                             const CommOptions& options, const Site& site) {
  const bool root = group.getRank() == src;
  at::Tensor size = length_of(static_cast<int64_t>(pickle.size()));
  broadcast_tensor(group, size, src, options, site.part("metadata size"));
  const int64_t n = checked_length(size, site.op, "rank " + std::to_string(src));
  at::Tensor bytes =
      root ? bytes_of(pickle, n) : announced_buffer(n, options, site.part("metadata"));
  broadcast_tensor(group, bytes, src, options, site.part("metadata"));
  return root ? pickle : string_of(bytes, n);
}

std::vector<std::string> all_gather_object(c10d::ProcessGroup& group, const std::string& pickle,
                                           const CommOptions& options, const Site& site) {
  const auto sizes = all_gather_tensor(group, length_of(static_cast<int64_t>(pickle.size())),
                                       options, site.part("metadata sizes"));
  int64_t longest = 0;
  int longest_rank = group.getRank();
  for (int r = 0; r < group.getSize(); ++r) {
    const int64_t n = checked_length(sizes[r], site.op, "rank " + std::to_string(r));
    if (n > longest) {
      longest = n;
      longest_rank = r;
    }
  }
  Site announcer = site.part("metadata", " from");
  announcer.peer = longest_rank;
  at::Tensor mine = announced_buffer(longest, options, announcer);
  mine.zero_();
  std::memcpy(mine.data_ptr(), pickle.data(), pickle.size());
  const auto all = all_gather_tensor(group, mine, options, site.part("metadata"));
  std::vector<std::string> out;
  for (int r = 0; r < group.getSize(); ++r)
    out.push_back(string_of(all[r], sizes[r].item<int64_t>()));
  return out;
}

std::string scatter_object(c10d::ProcessGroup& group, const std::vector<std::string>& pickles,
                           int src, const CommOptions& options, const Site& site) {
  const bool root = group.getRank() == src;
  int64_t longest = 0;
  for (const auto& p : pickles) longest = std::max(longest, static_cast<int64_t>(p.size()));
  at::Tensor max_size = length_of(longest);
  broadcast_tensor(group, max_size, src, options, site.part("metadata size"));
  longest = checked_length(max_size, site.op, "rank " + std::to_string(src));
  std::vector<at::Tensor> parts;
  std::vector<at::Tensor> lengths;
  for (size_t r = 0; root && r < pickles.size(); ++r) {
    parts.push_back(bytes_of(pickles[r], longest));
    lengths.push_back(length_of(static_cast<int64_t>(pickles[r].size())));
  }
  at::Tensor bytes = announced_buffer(longest, options, site.part("metadata"));
  scatter_tensor(group, bytes, parts, src, options, site.part("metadata"));
  at::Tensor size = at::zeros({1}, at::kLong);
  scatter_tensor(group, size, lengths, src, options, site.part("metadata sizes"));
  const int64_t n = checked_length(size, site.op, "rank " + std::to_string(src));
  if (n > longest) throw FormatError(site.op + ": a metadata size beyond the announced maximum");
  return string_of(bytes, n);
}

}  // namespace tensordict::dist::detail
