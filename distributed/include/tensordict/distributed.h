#pragma once
/// \file
/// TensorDicts over PyTorch's distributed engine (c10d): point to point (send, recv, isend, irecv,
/// init_remote / from_remote_init) and collectives (broadcast, all_reduce, all_gather, scatter)
/// over any c10d::ProcessGroup, and a Group that builds a Gloo one on a TCP or file store.
/// Link TensorClass::distributed. This header only names c10d::ProcessGroup, so includers need
/// neither the c10d headers nor USE_C10D_GLOO.
///
/// \code
///   auto group = tensordict::dist::Group::tcp("127.0.0.1", 29500, rank, 2);
///   if (rank == 0) tensordict::dist::send(td, group.pg(), 1);
///   else tensordict::dist::recv(td, group.pg(), 0);  // td: same keys and shapes, filled in place
/// \endcode
///
/// Wire protocol (docs/distributed.md): Python tensordict's. Tensor leaves go one message each,
/// keys sorted at every level and walked depth first, tags counting up from `init_tag`; the
/// consolidated path sends one byte buffer; init_remote and the collectives send Python's pickled
/// metadata first. With `check` (the default) send/recv first exchange that description (keys,
/// dtypes, shapes, non-tensor data) and the receiver answers before any tensor moves, so a
/// mismatch throws on the receiver, naming the key, and on the sender; `check = false` sends
/// exactly Python's messages (no check: the peer must expect the same structure).
///
/// Errors: what the transport throws (a peer that died, a closed connection, a Gloo or c10d
/// error) never escapes as such: it is a PeerError, or a TimeoutError when a wait ran out, both
/// naming the operation, the peer, and the key or phase (PeerFailure's accessors give each).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensordict/tensordict.h"

namespace c10d {
class ProcessGroup;
}

namespace tensordict {
struct TensorClassTag;
}

namespace tensordict::dist {

/// Where an operation failed in its exchange with another rank, and why. Every failure of the
/// transport (c10d, Gloo) inside a public operation of this header reaches the caller as a
/// PeerError or a TimeoutError, both of which are PeerFailures: catch `const PeerFailure&` for
/// the details, `const tensordict::Error&` for every error of the library.
class PeerFailure {
 public:
  /// `peer` -1: a collective of more than two ranks, which cannot tell which rank failed.
  PeerFailure(std::string op, int peer, std::string key, std::string phase, std::string cause)
      : op_(std::move(op)),
        peer_(peer),
        key_(std::move(key)),
        phase_(std::move(phase)),
        cause_(std::move(cause)) {}
  /// Copyable and movable, as exceptions must be.
  ///@{
  PeerFailure(const PeerFailure&) = default;
  PeerFailure(PeerFailure&&) = default;
  PeerFailure& operator=(const PeerFailure&) = default;
  PeerFailure& operator=(PeerFailure&&) = default;
  ///@}
  /// Virtual: a PeerFailure is a base of the exceptions below.
  virtual ~PeerFailure() = default;

  /// The public operation: "send", "recv", "broadcast", "all_reduce", ...
  const std::string& op() const { return op_; }
  /// The other rank (in the group's numbering); -1 when a collective cannot tell which.
  int peer() const { return peer_; }
  /// The dotted key of the leaf being moved ("nest.b"); empty when no leaf was (metadata, a
  /// consolidated buffer).
  const std::string& key() const { return key_; }
  /// The step when no key names it: "metadata size", "metadata", "answer", "data",
  /// "structure hashes", ...; empty when a key names it or the step is not known.
  const std::string& phase() const { return phase_; }
  /// What c10d or Gloo threw (its what(), whole), or the library's own reason.
  const std::string& cause() const { return cause_; }

 private:
  std::string op_;
  int peer_;
  std::string key_;
  std::string phase_;
  std::string cause_;
};

/// An exchange with another rank failed: the connection closed (the peer died), a message could
/// not be posted or completed, or a peer announced a buffer larger than this rank accepts
/// (CommOptions::max_buffer_bytes). The message reads "recv (key 'nest.b' from rank 0): <cause>".
/// After one, take the group as broken, as after a timeout.
class PeerError : public Error, public PeerFailure {
 public:
  /// `message`: what() ("op (step with rank N): cause"); `failure`: its parts.
  PeerError(const std::string& message, PeerFailure failure)
      : Error(message), PeerFailure(std::move(failure)) {}
};

/// A wait on the group that did not end within CommOptions::timeout: the runtime's TimeoutError
/// (catch either), naming the operation, the peer and the key or phase ("recv (metadata size from
/// rank 0): timed out after 300 ms (...)").
class TimeoutError : public tensordict::TimeoutError, public PeerFailure {
 public:
  /// `message`: what() ("op (step with rank N): timed out after T ms (cause)"); `failure`: its
  /// parts.
  TimeoutError(const std::string& message, PeerFailure failure)
      : tensordict::TimeoutError(message), PeerFailure(std::move(failure)) {}
};

/// Element-wise reduction of all_reduce.
enum class ReduceOp { Sum, Product, Min, Max };

/// Options of the operations below (each reads those it names).
struct CommOptions {
  /// Bound of every wait (each message, each collective).
  std::chrono::milliseconds timeout{30000};
  /// Tag of the first tensor of send/recv/isend/irecv; the i-th leaf uses init_tag + i. A
  /// consolidated buffer always goes on tag 0, as in Python.
  int64_t init_tag = 0;
  /// Python's pseudo_rand: leaf tags follow Python's pseudo-random chain from init_tag (each the
  /// previous one + 1 through numpy's generator, modulo 10000) instead of counting up.
  bool pseudo_rand = false;
  /// send/recv, all_reduce: the structure check before the tensors (see the header comment).
  bool check = true;
  /// send/recv: the whole TensorDict as one buffer (consolidated first when it is not).
  bool consolidated = false;
  /// The largest buffer a peer may announce (a consolidated TensorDict, a pickle) that this rank
  /// allocates; 0: this machine's memory (physical memory, or the cgroup's limit when lower).
  /// A larger announcement is a PeerError naming the peer, the operation and the size, before
  /// anything is allocated.
  int64_t max_buffer_bytes = 0;
  /// init_remote, broadcast: the Python class ("module.Class") a Python receiver rebuilds
  /// (Python's `_tensorclass_type`). The tensorclass overloads below set it.
  std::string tensorclass_type;
};

/// Sends every tensor leaf of `td` to rank `dst`.
void send(const TensorDict& td, c10d::ProcessGroup& group, int dst,
          const CommOptions& options = {});
/// Receives into `td`'s tensors in place (a handle: every alias sees the data); with `check`,
/// also sets the sender's non-tensor entries. KeyError / ShapeError / TypeError naming the key
/// when the sender's structure differs (nothing is received then).
void recv(const TensorDict& td, c10d::ProcessGroup& group, int src,
          const CommOptions& options = {});

/// An operation under way (isend, irecv); wait() rethrows its error. The destructor waits.
class Handle {
 public:
  /// Waits for the operation to end and rethrows its error; once per handle.
  void wait();
  /// True when the operation has ended (or was waited for), without waiting.
  bool is_completed() const;

  /// The library's own state of the operation.
  struct State;
  /// Made by isend and irecv.
  explicit Handle(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

/// send / recv returning at once. Operations under way at the same time with the same peer need
/// disjoint tag ranges (as in Python).
///@{
Handle isend(const TensorDict& td, c10d::ProcessGroup& group, int dst,
             const CommOptions& options = {});
Handle irecv(const TensorDict& td, c10d::ProcessGroup& group, int src,
             const CommOptions& options = {});
///@}

/// Sends structure and content to `dst`, which does not know the structure yet and calls
/// from_remote_init (the result is consolidated, non-tensor data included).
void init_remote(const TensorDict& td, c10d::ProcessGroup& group, int dst,
                 const CommOptions& options = {});
/// Receives what `src`'s init_remote sends: a new TensorDict with the sender's structure and
/// content.
TensorDict from_remote_init(c10d::ProcessGroup& group, int src, const CommOptions& options = {});

/// Every rank calls it; returns `src`'s TensorDict on every rank (`td` is read on `src` only).
TensorDict broadcast(const TensorDict& td, c10d::ProcessGroup& group, int src,
                     const CommOptions& options = {});
/// Reduces every tensor leaf across ranks in place, leaf by leaf in insertion order (Python's).
/// With `check`, the ranks' structures are compared first: a mismatch throws on every rank,
/// naming the key; `check = false` runs exactly Python's collectives.
void all_reduce(const TensorDict& td, c10d::ProcessGroup& group, ReduceOp op = ReduceOp::Sum,
                const CommOptions& options = {});
/// Every rank's TensorDict, in rank order (structures may differ).
std::vector<TensorDict> all_gather(const TensorDict& td, c10d::ProcessGroup& group,
                                   const CommOptions& options = {});
/// `tds[i]` (one per rank, read on `src` only) to rank i; returns this rank's.
TensorDict scatter(const std::vector<TensorDict>& tds, c10d::ProcessGroup& group, int src,
                   const CommOptions& options = {});

// ---- tensorclasses -------------------------------------------------------------------------
// A generated class travels as its fields' TensorDict. init_remote and broadcast also send its
// Python class, as Python's tensorclass methods do, so that a Python receiver rebuilds it (the
// class must be importable there).

namespace detail {
template <class C>
using IfTensorClass = std::enable_if_t<std::is_base_of_v<TensorClassTag, C>, int>;
/// "module.Class" from a ClassSpec's python_type ("<class 'module.Class'>").
std::string python_class_name(const char* python_type);
}  // namespace detail

/// send of a tensorclass instance's fields.
template <class C, detail::IfTensorClass<C> = 0>
void send(const C& obj, c10d::ProcessGroup& group, int dst, const CommOptions& options = {}) {
  send(obj._tensordict(), group, dst, options);
}
/// Receives into `obj`'s fields in place.
template <class C, detail::IfTensorClass<C> = 0>
void recv(const C& obj, c10d::ProcessGroup& group, int src, const CommOptions& options = {}) {
  recv(obj._tensordict(), group, src, options);
}
/// init_remote of a tensorclass instance, with its Python class for a Python receiver.
template <class C, detail::IfTensorClass<C> = 0>
void init_remote(const C& obj, c10d::ProcessGroup& group, int dst, CommOptions options = {}) {
  options.tensorclass_type = detail::python_class_name(C::class_spec().python_type);
  init_remote(obj._tensordict(), group, dst, options);
}
/// from_remote_init<C>: the received TensorDict as a C (from_tensordict: fields are checked).
template <class C, detail::IfTensorClass<C> = 0>
C from_remote_init(c10d::ProcessGroup& group, int src, const CommOptions& options = {}) {
  return C::from_tensordict(from_remote_init(group, src, options));
}
/// broadcast of a tensorclass instance, with its Python class for Python ranks; returns `src`'s
/// instance as a C on every rank.
template <class C, detail::IfTensorClass<C> = 0>
C broadcast(const C& obj, c10d::ProcessGroup& group, int src, CommOptions options = {}) {
  options.tensorclass_type = detail::python_class_name(C::class_spec().python_type);
  return C::from_tensordict(broadcast(obj._tensordict(), group, src, options));
}

/// A Gloo process group with its store, on 127.0.0.1-style hosts. Building it waits (up to
/// `timeout`) for every rank; the timeout also bounds each collective inside Gloo.
class Group {
 public:
  /// TCPStore served by rank 0 at host:port.
  static Group tcp(const std::string& host, int port, int rank, int size,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(30000));
  /// FileStore at `path` (a file every rank can reach; one fresh path per group).
  static Group file(const std::string& path, int rank, int size,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(30000));

  /// The process group, for the operations above; valid while a copy of this Group lives.
  c10d::ProcessGroup& pg() const;
  /// This process's rank.
  int rank() const;
  /// The number of ranks.
  int size() const;

  /// The library's own state: the store and the process group.
  struct State;
  /// Made by tcp() and file().
  explicit Group(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace tensordict::dist
