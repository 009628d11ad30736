#pragma once
// The pieces every distributed operation is made of (not installed): Python's leaf orders,
// consolidated buffers, and messages and collectives over a c10d::ProcessGroup with bounded
// waits. Descriptions of TensorDicts (Python's metadata) and their checks: metadata.h.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

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

/// Waits for `work` at most options.timeout; TimeoutError or Error naming `what`.
void wait(const c10::intrusive_ptr<c10d::Work>& work, const CommOptions& options,
          const std::string& what);
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

/// The byte buffer a peer announced: an allocation that fails (a corrupt or hostile size within
/// the announced bound) is an Error naming `op`, the peer and the size, not an allocator error.
at::Tensor announced_buffer(int64_t bytes, const char* op, int peer);

void send_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int dst, int tag,
                 const CommOptions& options, const std::string& what);
void recv_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src, int tag,
                 const CommOptions& options, const std::string& what);
/// Collectives with bounded waits: every rank's copy of `t` in rank order; `t` from `src`
/// broadcast in place; `parts` (one per rank, on `src`) scattered into `out`.
std::vector<at::Tensor> all_gather_tensor(c10d::ProcessGroup& group, const at::Tensor& t,
                                          const CommOptions& options, const std::string& what);
void broadcast_tensor(c10d::ProcessGroup& group, const at::Tensor& t, int src,
                      const CommOptions& options, const std::string& what);
void scatter_tensor(c10d::ProcessGroup& group, const at::Tensor& out,
                    const std::vector<at::Tensor>& parts, int src, const CommOptions& options,
                    const std::string& what);

/// Pickles moved as torch.distributed's object functions move them (send_object_list,
/// recv_object_list, broadcast_object_list, all_gather_object, scatter_object_list, one object
/// each), so that Python ranks take part; Python's point-to-point ones use tag 0. On the root,
/// broadcast returns its own `pickle`.
void send_object(c10d::ProcessGroup& group, const std::string& pickle, int dst, int tag,
                 const CommOptions& options, const std::string& op);
std::string recv_object(c10d::ProcessGroup& group, int src, int tag, const CommOptions& options,
                        const std::string& op);
std::string broadcast_object(c10d::ProcessGroup& group, const std::string& pickle, int src,
                             const CommOptions& options, const std::string& op);
std::vector<std::string> all_gather_object(c10d::ProcessGroup& group, const std::string& pickle,
                                           const CommOptions& options, const std::string& op);
std::string scatter_object(c10d::ProcessGroup& group, const std::vector<std::string>& pickles,
                           int src, const CommOptions& options, const std::string& op);

}  // namespace tensordict::dist::detail
