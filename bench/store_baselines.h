#pragma once
// What bench_store measures TensorDictStore against, on the same server (docs/performance.md,
// "Store (Redis)"): raw hiredis SET/GET of the same bytes (the targets' baseline), the same by
// hand on a plain socket (the floor: no client library), and the store's own commands sent by
// hand through hiredis (what Python's layout costs the server, without the store's client work).
#include <ATen/core/Tensor.h>
#include <hiredis/hiredis.h>
#include <sys/uio.h>

#include <memory>
#include <string>
#include <vector>

namespace store_bench {

using Context = std::unique_ptr<redisContext, decltype(&redisFree)>;
/// A hiredis connection to host:port, or null when it cannot be made.
Context connect_raw(const std::string& host, int port);

using ReplyPtr = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;
/// One command (binary-safe arguments); throws on a lost connection or an error reply.
ReplyPtr command(redisContext* c, const std::vector<std::string>& argv);

// ---- raw hiredis
/// One SET of the tensor's bytes, from its memory.
void raw_set(redisContext* c, const std::string& key, const at::Tensor& t);
/// One GET, copied into a new float tensor of `floats` elements.
at::Tensor raw_get(redisContext* c, const std::string& key, int64_t floats);
/// Every SET appended, then every reply read: one round trip.
void raw_set_many(redisContext* c, const std::vector<std::string>& keys,
                  const std::vector<at::Tensor>& values);
/// Every GET appended, then every reply read, each copied into a new tensor.
std::vector<at::Tensor> raw_get_many(redisContext* c, const std::vector<std::string>& keys,
                                     int64_t floats);

// ---- the socket floor: RESP by hand on a plain TCP socket. SET sends the command's header and
// the tensor's own memory with one writev (no copy in user space); GET reads the bulk header,
// then the value straight into the new tensor: what a client that never buffers a value could
// reach (no hiredis output buffer, no 16 KB read chunks).
class Socket {
 public:
  Socket(const std::string& host, int port);
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  /// Sends every byte of the buffers, in as few writev calls as the kernel allows.
  void send(std::vector<iovec> parts);
  /// Reads exactly `n` bytes into `out`: first what line() read ahead, then the socket.
  void read_exact(char* out, size_t n);
  /// One reply line, without its CRLF.
  std::string line();

 private:
  int fd_;
  std::string pending_;
};
void socket_set(Socket& s, const std::string& key, const at::Tensor& t);
at::Tensor socket_get(Socket& s, const std::string& key, int64_t floats);

// ---- the layout by hand
/// The store's write of `values` at `paths` by hand: one transaction of every leaf's bytes
/// (MSET), their hashes (DEL, then an HSET each) and registry entries (SADD), the values sent from
/// the tensors' memory, in one round trip.
void layout_set_many(redisContext* c, const std::vector<std::string>& paths,
                     const std::vector<at::Tensor>& values);

}  // namespace store_bench
