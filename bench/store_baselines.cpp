// The baselines of bench_store (store_baselines.h).
#include "store_baselines.h"

#include <ATen/ATen.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace store_bench {

Context connect_raw(const std::string& host, int port) {
  const timeval tv{2, 0};
  Context c(redisConnectWithTimeout(host.c_str(), port, tv), &redisFree);
  if (!c || c->err) return Context(nullptr, &redisFree);
  return c;
}

ReplyPtr command(redisContext* c, const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  if (!r) throw std::runtime_error(std::string("redis: ") + c->errstr);
  ReplyPtr reply(r, &freeReplyObject);
  if (r->type == REDIS_REPLY_ERROR)
    throw std::runtime_error("redis " + argv[0] + ": " +
                             std::string(r->str, static_cast<size_t>(r->len)));
  return reply;
}

// ---- the raw twins ----------------------------------------------------------------------------

void raw_set(redisContext* c, const std::string& key, const at::Tensor& t) {
  const char* argv[] = {"SET", key.data(), static_cast<const char*>(t.data_ptr())};
  const size_t lens[] = {3, key.size(), t.nbytes()};
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, 3, argv, lens));
  if (!r || r->type == REDIS_REPLY_ERROR) throw std::runtime_error("raw SET failed");
  freeReplyObject(r);
}

at::Tensor raw_get(redisContext* c, const std::string& key, int64_t floats) {
  const char* argv[] = {"GET", key.data()};
  const size_t lens[] = {3, key.size()};
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, 2, argv, lens));
  if (!r || r->type != REDIS_REPLY_STRING || static_cast<int64_t>(r->len) != floats * 4)
    throw std::runtime_error("raw GET failed");
  at::Tensor out = at::empty({floats});
  std::memcpy(out.data_ptr(), r->str, static_cast<size_t>(r->len));
  freeReplyObject(r);
  return out;
}

// All SETs appended, then all replies read: one round trip.
void raw_set_many(redisContext* c, const std::vector<std::string>& keys,
                  const std::vector<at::Tensor>& values) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const char* argv[] = {"SET", keys[i].data(), static_cast<const char*>(values[i].data_ptr())};
    const size_t lens[] = {3, keys[i].size(), values[i].nbytes()};
    if (redisAppendCommandArgv(c, 3, argv, lens) != REDIS_OK)
      throw std::runtime_error("raw SET failed");
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    void* r = nullptr;
    if (redisGetReply(c, &r) != REDIS_OK || !r ||
        static_cast<redisReply*>(r)->type == REDIS_REPLY_ERROR)
      throw std::runtime_error("raw SET failed");
    freeReplyObject(r);
  }
}

std::vector<at::Tensor> raw_get_many(redisContext* c, const std::vector<std::string>& keys,
                                     int64_t floats) {
  for (const auto& key : keys) {
    const char* argv[] = {"GET", key.data()};
    const size_t lens[] = {3, key.size()};
    if (redisAppendCommandArgv(c, 2, argv, lens) != REDIS_OK)
      throw std::runtime_error("raw GET failed");
  }
  std::vector<at::Tensor> out;
  out.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    void* p = nullptr;
    if (redisGetReply(c, &p) != REDIS_OK || !p) throw std::runtime_error("raw GET failed");
    auto* r = static_cast<redisReply*>(p);
    if (r->type != REDIS_REPLY_STRING || static_cast<int64_t>(r->len) != floats * 4) {
      freeReplyObject(r);
      throw std::runtime_error("raw GET failed");
    }
    at::Tensor t = at::empty({floats});
    std::memcpy(t.data_ptr(), r->str, static_cast<size_t>(r->len));
    out.push_back(std::move(t));
    freeReplyObject(r);
  }
  return out;
}

// ---- the socket floor ------------------------------------------------------------------------

Socket::Socket(const std::string& host, int port)
    : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (fd_ < 0 || ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("socket floor: cannot connect to " + host);
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as hiredis does
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

void Socket::send(std::vector<iovec> parts) {
  size_t first = 0;
  while (first < parts.size()) {
    const ssize_t n = ::writev(fd_, parts.data() + first, static_cast<int>(parts.size() - first));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("socket floor: write failed");
    }
    size_t left = static_cast<size_t>(n);
    while (first < parts.size() && left >= parts[first].iov_len) left -= parts[first++].iov_len;
    if (first < parts.size()) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
}
void Socket::read_exact(char* out, size_t n) {
  const size_t have = std::min(n, pending_.size());
  std::memcpy(out, pending_.data(), have);
  pending_.erase(0, have);
  for (size_t done = have; done < n;) {
    const ssize_t r = ::read(fd_, out + done, n - done);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      throw std::runtime_error("socket floor: read failed");
    }
    done += static_cast<size_t>(r);
  }
}
std::string Socket::line() {
  size_t end;
  while ((end = pending_.find("\r\n")) == std::string::npos) {
    char buf[4096];
    const ssize_t r = ::read(fd_, buf, sizeof buf);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      throw std::runtime_error("socket floor: read failed");
    }
    pending_.append(buf, static_cast<size_t>(r));
  }
  std::string out = pending_.substr(0, end);
  pending_.erase(0, end + 2);
  return out;
}


void socket_set(Socket& s, const std::string& key, const at::Tensor& t) {
  const std::string head = "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key +
                           "\r\n$" + std::to_string(t.nbytes()) + "\r\n";
  static const char crlf[] = "\r\n";
  s.send({{const_cast<char*>(head.data()), head.size()},
          {t.data_ptr(), t.nbytes()},
          {const_cast<char*>(crlf), 2}});
  if (s.line() != "+OK") throw std::runtime_error("socket floor: SET failed");
}

at::Tensor socket_get(Socket& s, const std::string& key, int64_t floats) {
  const std::string cmd =
      "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
  s.send({{const_cast<char*>(cmd.data()), cmd.size()}});
  const std::string head = s.line();
  if (head != "$" + std::to_string(floats * 4))
    throw std::runtime_error("socket floor: GET failed");
  at::Tensor out = at::empty({floats});
  s.read_exact(static_cast<char*>(out.data_ptr()), static_cast<size_t>(floats) * 4);
  char crlf[2];
  s.read_exact(crlf, 2);
  return out;
}

void layout_set_many(redisContext* c, const std::vector<std::string>& paths,
                     const std::vector<at::Tensor>& values) {
  const std::string base = "bench:layout:{x}:";
  const std::string registry = base + "__keys__";
  std::vector<std::string> shapes, data, meta;
  for (size_t i = 0; i < paths.size(); ++i) {
    shapes.push_back("[" + std::to_string(values[i].numel()) + "]");
    data.push_back(base + "d:" + paths[i]);
    meta.push_back(base + "m:" + paths[i]);
  }
  auto append = [c](std::vector<const char*> argv, std::vector<size_t> lens) {
    if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK)
      throw std::runtime_error("layout write failed");
  };
  std::vector<const char*> mset{"MSET"}, del{"DEL"}, sadd{"SADD", registry.data()};
  std::vector<size_t> mset_lens{4}, del_lens{3}, sadd_lens{4, registry.size()};
  for (size_t i = 0; i < paths.size(); ++i) {
    mset.insert(mset.end(), {data[i].data(), static_cast<const char*>(values[i].data_ptr())});
    mset_lens.insert(mset_lens.end(), {data[i].size(), values[i].nbytes()});
    del.push_back(meta[i].data());
    del_lens.push_back(meta[i].size());
    sadd.push_back(paths[i].data());
    sadd_lens.push_back(paths[i].size());
  }
  append({"MULTI"}, {5});
  append(mset, mset_lens);
  append(del, del_lens);
  for (size_t i = 0; i < paths.size(); ++i)
    append({"HSET", meta[i].data(), "shape", shapes[i].data(), "dtype", "torch.float32"},
           {4, meta[i].size(), 5, shapes[i].size(), 5, 13});
  append(sadd, sadd_lens);
  append({"EXEC"}, {4});
  for (size_t i = 0; i < paths.size() + 5; ++i) {
    void* r = nullptr;
    if (redisGetReply(c, &r) != REDIS_OK || !r ||
        static_cast<redisReply*>(r)->type == REDIS_REPLY_ERROR)
      throw std::runtime_error("layout write failed");
    freeReplyObject(r);
  }
}

}  // namespace store_bench
