// Point to point: send / recv (leaf by leaf or one consolidated buffer), their asynchronous
// forms, and init_remote / from_remote_init for a receiver that does not know the structure.
#include <ATen/ATen.h>

#include <future>

#include "metadata.h"
#include "pseudo_rand.h"
#include "wire.h"

namespace tensordict::dist {
namespace {

constexpr int64_t kAccepted = 0;
constexpr int64_t kRefused = 1;

// Python's tags of `n` leaf messages: init_tag, init_tag + 1, ...; with pseudo_rand, the chain
// of Python's int_generator started at init_tag.
std::vector<int> leaf_tags(const CommOptions& options, size_t n) {
  std::vector<int> tags;
  int64_t tag = options.init_tag - 1;
  for (size_t i = 0; i < n; ++i) {
    tag = options.pseudo_rand ? detail::pseudo_rand_tag(tag + 1) : tag + 1;
    tags.push_back(static_cast<int>(tag));
  }
  return tags;
}

// The consolidated buffer goes on tag 0, as in Python (whose consolidated send and recv take no
// tag); the structure check's description and answer, which only this library sends, on
// init_tag.
constexpr int kBufferTag = 0;
int check_tag(const CommOptions& options) { return static_cast<int>(options.init_tag); }

// Every tensor leaf in Python's order, one message each, all posted before any is waited for.
void transfer_leaves(const TensorDict& td, c10d::ProcessGroup& group, const CommOptions& options,
                     const detail::Site& site, bool sending) {
  const auto leaves = detail::leaves(td, site.op.c_str());
  const auto tags = leaf_tags(options, leaves.size());
  detail::Buffers buffers;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (size_t i = 0; i < leaves.size(); ++i) {
    buffers.add(leaves[i].tensor);
    const int tag = tags[i];
    works.push_back(detail::post(site.leaf(leaves[i].path), options, [&] {
      return sending ? group.send(buffers.at(i), site.peer, tag)
                     : group.recv(buffers.at(i), site.peer, tag);
    }));
  }
  for (size_t i = 0; i < works.size(); ++i) {
    detail::wait(works[i], options, site.leaf(leaves[i].path));
  }
  if (!sending) buffers.finish();
}

// The receiver's side of the consolidated path: straight into its own buffer when the layouts
// agree (the sender's description gives its offsets), else into a scratch buffer copied leaf by
// leaf.
void recv_consolidated(const TensorDict& td, c10d::ProcessGroup& group, const CommOptions& options,
                       const detail::Site& site, const detail::Announced* sent) {
  const at::Tensor flat = detail::flat_of(td);
  const detail::Site data = site.part("consolidated buffer");
  if (sent == nullptr) {
    if (!flat.defined()) {
      throw Error(site.op +
                  ": consolidated with check = false needs a consolidated TensorDict with "
                  "the sender's layout (consolidate() it, or use check = true)");
    }
    detail::recv_tensor(group, flat, kBufferTag, options, data);
    return;
  }
  if (flat.defined() && flat.numel() == sent->total_bytes &&
      detail::same_layout(detail::describe(td, flat), sent->meta)) {
    detail::recv_tensor(group, flat, kBufferTag, options, data);
    return;
  }
  at::Tensor scratch = detail::announced_buffer(sent->total_bytes, options, data);
  detail::recv_tensor(group, scratch, kBufferTag, options, data);
  const TensorDict received = detail::from_metadata(sent->meta, scratch, site.op);
  const auto into = detail::leaves(td, site.op.c_str());
  const auto leaves = detail::leaves(received, site.op.c_str());
  for (size_t i = 0; i < leaves.size(); ++i) into[i].tensor.copy_(leaves[i].tensor);
}

// send, or isend's work (`op` names it in errors).
void send_as(const char* op, const TensorDict& td, c10d::ProcessGroup& group, int dst,
             const CommOptions& options) {
  const detail::Site site = detail::p2p_site(op, dst, true);
  detail::boundary(site, options, [&] {
    detail::check_peer(group, dst, op);
    TensorDict source = td;
    at::Tensor flat;
    if (options.consolidated) {
      detail::Packed packed = detail::pack(td, op);
      source = packed.td;
      flat = packed.flat;
    }
    if (options.check) {
      detail::send_object(group, detail::pickle_metadata(source, flat), check_tag(options), options,
                          site);
      at::Tensor answer = at::zeros({1}, at::kLong);
      detail::recv_tensor(group, answer, check_tag(options), options, site.part("answer", " from"));
      if (answer.item<int64_t>() != kAccepted) {
        throw Error(std::string(op) + ": rank " + std::to_string(dst) +
                    " refused the TensorDict: its structure differs (the receiver's error names "
                    "the key)");
      }
    }
    if (flat.defined()) {
      detail::send_tensor(group, flat, kBufferTag, options, site.part("consolidated buffer"));
    } else {
      transfer_leaves(source, group, options, site, true);
    }
  });
}

// recv, or irecv's work (`op` names it in errors).
void recv_as(const char* op, const TensorDict& td, c10d::ProcessGroup& group, int src,
             const CommOptions& options) {
  const detail::Site site = detail::p2p_site(op, src, false);
  detail::boundary(site, options, [&] {
    detail::check_peer(group, src, op);
    detail::Announced sent;
    if (options.check) {
      sent = detail::read_metadata(detail::recv_object(group, check_tag(options), options, site),
                                   op, false);
      auto answer = [&](int64_t value) {
        detail::send_tensor(group, at::full({1}, value, at::kLong), check_tag(options), options,
                            site.part("answer", " to"));
      };
      try {
        if (options.consolidated != (sent.total_bytes >= 0)) {
          throw Error(std::string(op) + ": rank " + std::to_string(src) + " sent " +
                      (options.consolidated ? "leaf by leaf" : "a consolidated buffer") +
                      " but this receiver expects " +
                      (options.consolidated ? "a consolidated buffer" : "leaf by leaf"));
        }
        detail::check_matches(sent.meta, td, op, src);
      } catch (const Error&) {
        answer(kRefused);
        throw;
      }
      answer(kAccepted);
      detail::set_non_tensor(sent.meta, td, op);
    }
    if (options.consolidated) {
      recv_consolidated(td, group, options, site, options.check ? &sent : nullptr);
    } else {
      transfer_leaves(td, group, options, site, false);
    }
  });
}

}  // namespace

void send(const TensorDict& td, c10d::ProcessGroup& group, int dst, const CommOptions& options) {
  send_as("send", td, group, dst, options);
}

void recv(const TensorDict& td, c10d::ProcessGroup& group, int src, const CommOptions& options) {
  recv_as("recv", td, group, src, options);
}

struct Handle::State {
  std::future<void> future;
};

void Handle::wait() {
  if (!state_->future.valid()) {
    throw Error("Handle::wait: this operation was already waited for (wait once per handle)");
  }
  state_->future.get();
}

bool Handle::is_completed() const {
  return !state_->future.valid() ||
         state_->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

Handle isend(const TensorDict& td, c10d::ProcessGroup& group, int dst, const CommOptions& options) {
  return detail::boundary(detail::p2p_site("isend", dst, true), options, [&] {
    detail::check_peer(group, dst, "isend");
    return Handle(std::make_shared<Handle::State>(
        Handle::State{std::async(std::launch::async, [td, &group, dst, options] {
          send_as("isend", td, group, dst, options);
        })}));
  });
}

Handle irecv(const TensorDict& td, c10d::ProcessGroup& group, int src, const CommOptions& options) {
  return detail::boundary(detail::p2p_site("irecv", src, false), options, [&] {
    detail::check_peer(group, src, "irecv");
    return Handle(std::make_shared<Handle::State>(
        Handle::State{std::async(std::launch::async, [td, &group, src, options] {
          recv_as("irecv", td, group, src, options);
        })}));
  });
}

void init_remote(const TensorDict& td, c10d::ProcessGroup& group, int dst,
                 const CommOptions& options) {
  const detail::Site site = detail::p2p_site("init_remote", dst, true);
  detail::boundary(site, options, [&] {
    detail::check_peer(group, dst, "init_remote");
    auto [packed, flat] = detail::pack(td, "init_remote");
    detail::send_object(group, detail::pickle_metadata(packed, flat, {}, options.tensorclass_type),
                        0, options, site);
    detail::send_tensor(group, flat, 0, options, site.part("consolidated buffer"));
  });
}

TensorDict from_remote_init(c10d::ProcessGroup& group, int src, const CommOptions& options) {
  const detail::Site site = detail::p2p_site("from_remote_init", src, false);
  return detail::boundary(site, options, [&] {
    detail::check_peer(group, src, "from_remote_init");
    const auto announced =
        detail::read_metadata(detail::recv_object(group, 0, options, site), "from_remote_init");
    const detail::Site data = site.part("consolidated buffer");
    at::Tensor flat = detail::announced_buffer(announced.total_bytes, options, data);
    detail::recv_tensor(group, flat, 0, options, data);
    return detail::from_metadata(announced.meta, flat, "from_remote_init");
  });
}

}  // namespace tensordict::dist
