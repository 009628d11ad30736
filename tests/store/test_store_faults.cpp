// The store when its server fails: killed, restarted, paused past the timeout, or the
// connection cut while a value is on its way. Each case runs its own redis-server
// (RedisServer::dedicated), so the process's shared one is never disturbed. What must hold: a
// typed error naming the key, no hang past the timeout, and never a leaf read back half written.
#include <ATen/ATen.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "catch2_compat.h"
#include "store_server.h"
#include "tensordict/store.h"

using Catch::Matchers::ContainsSubstring;
using tc_test::RedisServer;
using tensordict::store::Connection;
using tensordict::store::ConnectionError;
using tensordict::store::StoreLocation;
using tensordict::store::TensorDictStore;

namespace {

StoreLocation impatient(const RedisServer& server, const std::string& td_id) {
  StoreLocation where = server.unix_location(td_id);
  where.connection.connect_timeout = std::chrono::milliseconds(500);
  where.connection.command_timeout = std::chrono::milliseconds(500);
  return where;
}

// The seconds `f` takes.
template <class F>
double seconds_of(F f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a connection cut while a leaf is sent leaves the old leaf or the new one whole",
          "[store][needs-redis]") {
  auto server = RedisServer::dedicated();
  StoreLocation where = server->unix_location("cut");
  auto store = TensorDictStore::create(where, {4});
  const at::Tensor before = at::zeros({4, 1 << 21});  // 32 MB: long enough on the wire to be cut
  const at::Tensor after = at::ones({4, 1 << 21});
  store.set("x", before);
  for (int delay_ms : {0, 1, 3, 10}) {
    INFO("cut after " << delay_ms << " ms");
    std::thread cutter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      Connection killer(server->unix_location("").connection);
      killer.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    });
    bool written = true;
    try {
      store.set("x", after);  // the store resends once on a fresh connection
    } catch (const ConnectionError& e) {
      written = false;
      CHECK_THAT(e.what(), ContainsSubstring("'x'"));
    }
    cutter.join();
    const at::Tensor now = TensorDictStore::open(where).get("x");
    if (written)
      CHECK(at::equal(now, after));
    else
      CHECK((at::equal(now, after) || at::equal(now, before)));
    store.set("x", before);
  }
}

TEST_CASE("a killed server is a ConnectionError naming the key and a restarted one an empty store",
          "[store][needs-redis]") {
  auto server = RedisServer::dedicated();
  const StoreLocation where = impatient(*server, "killed");
  auto store = TensorDictStore::create(where, {2});
  store.set("x", at::ones({2}));
  server->kill();
  CHECK_THROWS_AS(store.set("y", at::ones({2})), ConnectionError);
  CHECK_THROWS_WITH(store.set("y", at::ones({2})), ContainsSubstring("'y'"));
  CHECK_THROWS_AS(store.get("x"), ConnectionError);
  CHECK_THROWS_WITH(store.get("x"), ContainsSubstring("'x'"));
  CHECK_THROWS_AS(TensorDictStore::open(where), ConnectionError);

  // Restarted without persistence, the server holds nothing: the handle reconnects by itself,
  // and what it wrote before is missing, not half there.
  server->restart();
  CHECK_THROWS_AS(store.get("x"), tensordict::KeyError);
  CHECK_THROWS_AS(TensorDictStore::open(where), tensordict::KeyError);
  store.set("y", at::full({2}, 3.0));
  CHECK(at::equal(store.get("y"), at::full({2}, 3.0)));
}

TEST_CASE("a server that stops answering is a TimeoutError within the timeout",
          "[store][needs-redis]") {
  auto server = RedisServer::dedicated();
  const StoreLocation where = impatient(*server, "paused");
  auto store = TensorDictStore::create(where, {2});
  store.set("x", at::ones({2}));
  server->pause();
  // 500 ms per reply; the bound only catches a hang (each call gives up well within it).
  CHECK(seconds_of([&] { CHECK_THROWS_AS(store.get_at("x", 0), tensordict::TimeoutError); }) < 10);
  CHECK(seconds_of([&] {
          CHECK_THROWS_WITH(store.set("x", at::zeros({2})), ContainsSubstring("'x'"));
        }) < 10);
  server->resume();
  // The write that timed out may have run once the server woke: the leaf is one or the other.
  const at::Tensor now = store.get("x");
  CHECK((at::equal(now, at::ones({2})) || at::equal(now, at::zeros({2}))));
}

TEST_CASE("a server killed while a leaf is on its way leaves no part of it",
          "[store][needs-redis]") {
  auto server = RedisServer::dedicated();
  const StoreLocation where = impatient(*server, "killed-mid-write");
  auto store = TensorDictStore::create(where, {4});
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    server->kill();
  });
  bool written = true;
  try {
    store.set("x", at::ones({4, 1 << 21}));  // 32 MB
  } catch (const ConnectionError& e) {
    written = false;
    CHECK_THAT(e.what(), ContainsSubstring("'x'"));
  }
  killer.join();
  server->restart();
  // No persistence: nothing survives, a whole leaf or none (never bytes without metadata).
  const tensordict::store::Reply left =
      Connection(server->unix_location("").connection).command({"KEYS", "*"});
  CHECK(left.element.empty());
  INFO("the write " << (written ? "ended before the kill" : "was cut by it"));
  CHECK_THROWS_AS(store.get("x"), tensordict::KeyError);
}

namespace {

// A unix socket answering every connection's first bytes with `reply`, then closing it: what a
// broken or hostile server (or another program on its port) sends.
class FakeServer {
 public:
  explicit FakeServer(std::string reply) : reply_(std::move(reply)) {
    path_ = std::filesystem::temp_directory_path() /
            ("tc_fake_redis_" + std::to_string(::getpid()) + "_" + std::to_string(count_++));
    ::unlink(path_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // closed by the destructor
        char buffer[4096];
        if (::recv(c, buffer, sizeof buffer, 0) > 0)
          (void)!::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~FakeServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    ::unlink(path_.c_str());
  }
  tensordict::store::ConnectionOptions options() const {
    tensordict::store::ConnectionOptions o;
    o.unix_socket = path_;
    o.command_timeout = std::chrono::milliseconds(500);
    return o;
  }

 private:
  static inline int count_ = 0;
  std::string reply_;
  std::string path_;
  int fd_ = -1;
  std::thread thread_;
};

}  // namespace

TEST_CASE("replies that are not RESP2 are ConnectionErrors and never a crash or a hang",
          "[store][needs-redis]") {
  for (const std::string& reply :
       {std::string("?what\r\n"), std::string("$99999999999\r\n"),  // a bulk past the 4 GiB cap
        std::string("$5\r\nabcXY"), std::string("$3\r\nabcXY"),     // short, not ended by CRLF
        std::string(":12a\r\n"), std::string("*99999999999\r\n"), std::string(40, '*') + "1\r\n",
        std::string("+OK"),  // nested; no CRLF at all
        std::string(70000, 'x')}) {
    INFO(reply.substr(0, 20));
    FakeServer server(reply);
    Connection connection(server.options());
    CHECK_THROWS_AS(connection.command({"PING"}), ConnectionError);
  }
}
