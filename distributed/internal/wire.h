#pragma once
// The pieces every distributed operation is made of (not installed): Python's leaf orders,
// consolidated buffers, and messages and collectives over a c10d::ProcessGroup with bounded
// waits. Descriptions of TensorDicts (Python's metadata) and their checks: metadata.h.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <functional>
#include <string>
#include <vector>

#include "tensordict/distributed.h"

namespace tensordict::dist::detail {

/// A tensor leaf and its dotted path, for messages.
struct Leaf {
  std::string path;
  at::Tensor tensor;
};

/// The orders Python walks leaves in, nested TensorDicts depth first: keys sorted at every level
/// (send/recv), or insertion order (all_reduce, through `_fast_apply`).
enum class LeafOrder { Sorted, Insertion };

/// Tensor leaves in `order`; TypeError on a lazy stack (densify() first).
std::vector<Leaf> leaves(const TensorDict& td, const char* op, LeafOrder order = LeafOrder::Sorted);

/// TypeError naming `op` on a lazy stack, which no operation sends (densify() first).
void require_dense(const TensorDict& td, const char* op);

/// A TensorDict consolidated for sending, and its buffer.
struct Packed {
  TensorDict td;
  at::Tensor flat;
};
/// `td` consolidated (itself when it already is) and its buffer.
Packed pack(const TensorDict& td, const char* op);
/// The byte buffer of a consolidated TensorDict, or an undefined tensor.
at::Tensor flat_of(const TensorDict& td);

/// Where an operation is in its exchange with a peer: what its errors name (PeerFailure's
/// fields) and what the fault hook of the tests sees.
struct Site {
  std::string op;                   ///< the public operation ("recv", "broadcast", ...)
  int peer = -1;                    ///< the other rank; -1 when a collective cannot tell which
  const char* direction = " with";  ///< " from", " to" or " with", before "rank <peer>"
  std::string phase;                ///< "metadata size", "data", ... when no key names the step
  std::string key;                  ///< the leaf's dotted key, or empty

  /// This site at another step (and direction, when given).
  Site part(std::string phase, const char* direction = nullptr) const;
  /// This site at a leaf.
  Site leaf(std::string key) const;
  /// "recv (key 'nest.b' from rank 0)", "all_reduce (structure hashes with another rank)".
  std::string describe() const;
};

/// The site of a point-to-point operation with `peer`.
Site p2p_site(const char* op, int peer, bool sending);
/// The site of a collective: the root's rank for the others (`root` -1: no root), the other rank
/// in a group of two, else unknown (-1).
Site collective_site(const char* op, c10d::ProcessGroup& group, int root = -1);

/// Rethrows the exception being handled as the library's: a tensordict::Error unchanged, a c10d
/// or Gloo timeout as dist::TimeoutError, anything else as PeerError, naming `site`. Only inside
/// a catch block.
[[noreturn]] void rethrow_at(const Site& site, const CommOptions& options);

/// Runs a public operation: what escapes `fn` other than a tensordict::Error (what c10d, Gloo or
/// the standard library throw) becomes a PeerError naming `site`. Every public entry point of
/// the library runs its body through it.
template <class F>
auto boundary(const Site& site, const CommOptions& options, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (...) {
    rethrow_at(site, options);
  }
}

/// Fault injection for the tests: `hook(site)` runs before each message or collective is posted
/// (nullptr: none). A test's dying rank _exit()s in it at a chosen step.
void set_step_hook(void (*hook)(const Site& site));

/// While alive, SIGPIPE is blocked on this thread, and one raised meanwhile (Gloo writes with
/// writev, which raises it on a connection the peer has closed) is consumed: the write fails
/// with EPIPE and Gloo reports it, instead of the signal killing the process. Threads started
/// meanwhile (Gloo's I/O loop, the process group's workers) keep SIGPIPE blocked. Nothing is
/// done when SIGPIPE was blocked already.
class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  bool active_ = false;
};

/// Posts one message or collective (`fn` calls c10d) after the step hook: what posting throws is
/// an error naming `site` (rethrow_at); SIGPIPE is guarded (SigpipeGuard) while it writes.
c10::intrusive_ptr<c10d::Work> post(const Site& site, const CommOptions& options,
                                    const std::function<c10::intrusive_ptr<c10d::Work>()>& fn);
/// Waits for `work` at most options.timeout; TimeoutError or PeerError naming `site`.
void wait(const c10::intrusive_ptr<c10d::Work>& work, const CommOptions& options, const Site& site);
/// Throws unless `peer` is another rank of `group`.
void check_peer(c10d::ProcessGroup& group, int peer, const char* op);

/// Tensors to send (contiguous) or to receive into (contiguous; copied back by finish()).
/// `reduce`: bool leaves go as uint8 (Gloo reduces no bool), so Sum/Max are "any", Min/Product
/// "all".
class Buffers {
 public:
  void add(const at::Tensor& t, bool reduce = false);
  std::vector<at::Tensor>& at(size_t i) { return bufs_[i]; }
  size_t size() const { return bufs_.size(); }
  void finish();

 private:
  std::vector<at::Tensor> targets_;
  std::vector<std::vector<at::Tensor>> bufs_;
};

/// The largest buffer this rank allocates for a peer: options.max_buffer_bytes, or (0) this
/// machine's memory: physical memory, or the cgroup's memory limit when lower.
int64_t buffer_limit(const CommOptions& options);

/// The byte buffer `site.peer` announced: larger than buffer_limit(options), or an allocation
/// that fails, is a PeerError naming the operation, the peer and the size, not an allocator
/// error.
at::Tensor announced_buffer(int64_t bytes, const CommOptions& options, const Site& site);

/// One tensor to or from `site.peer`, waited for.
void send_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int tag,
                 const CommOptions& options, const Site& site);
void recv_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int tag,
                 const CommOptions& options, const Site& site);
/// Collectives with bounded waits: every rank's copy of `t` in rank order; `t` from `src`
/// broadcast in place; `parts` (one per rank, on `src`) scattered into `out`.
std::vector<at::Tensor> all_gather_tensor(c10d::ProcessGroup& group, const at::Tensor& t,
                                          const CommOptions& options, const Site& site);
void broadcast_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src,
                      const CommOptions& options, const Site& site);
void scatter_tensor(c10d::ProcessGroup& group, const at::Tensor& out,
                    const std::vector<at::Tensor>& parts, int src, const CommOptions& options,
                    const Site& site);

/// Pickles moved as torch.distributed's object functions move them (send_object_list,
/// recv_object_list, broadcast_object_list, all_gather_object, scatter_object_list, one object
/// each), so that Python ranks take part; Python's point-to-point ones use tag 0. On the root,
/// broadcast returns its own `pickle`. `site`: the operation's (its phase is set per message).
void send_object(c10d::ProcessGroup& group, const std::string& pickle, int tag,
                 const CommOptions& options, const Site& site);
std::string recv_object(c10d::ProcessGroup& group, int tag, const CommOptions& options,
                        const Site& site);
std::string broadcast_object(c10d::ProcessGroup& group, const std::string& pickle, int src,
                             const CommOptions& options, const Site& site);
std::vector<std::string> all_gather_object(c10d::ProcessGroup& group, const std::string& pickle,
                                           const CommOptions& options, const Site& site);
std::string scatter_object(c10d::ProcessGroup& group, const std::vector<std::string>& pickles,
                           int src, const CommOptions& options, const Site& site);

}  // namespace tensordict::dist::detail
