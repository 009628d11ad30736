#pragma once
// The redis-server of one test process: started on first use on a unix socket and a free
// loopback port in a temporary directory (no persistence), stopped at exit. Nothing is shared
// with a server the machine may run. A case that uses it carries [needs-redis]: it skips
// (skip.h) where redis-server is not installed.

#include <memory>
#include <string>
#include <vector>

#include "tensordict/store.h"

namespace tc_test {

class RedisServer {
 public:
  /// The process's server, started on the first call (TC_SKIP without redis-server).
  static RedisServer& instance();
  /// A server of the caller's own, for cases that stop, pause or restart it; `extra_args` go to
  /// redis-server after the usual ones (e.g. a TLS port and its certificates).
  static std::unique_ptr<RedisServer> dedicated(std::vector<std::string> extra_args = {});
  /// A loopback port nobody listens on right now.
  static int free_port();
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  const std::string& socket() const { return socket_; }
  int port() const { return port_; }
  /// A location on the unix socket, `td_id` and db as given.
  tensordict::store::StoreLocation unix_location(const std::string& td_id, int db = 0) const;
  /// The same server over TCP (127.0.0.1:port).
  tensordict::store::StoreLocation tcp_location(const std::string& td_id, int db = 0) const;

  /// Kills the server (SIGKILL: no reply, no goodbye), as a crash would.
  void kill();
  /// Starts it again on the same socket and port, empty (no persistence).
  void restart();
  /// Stops and resumes the process (SIGSTOP, SIGCONT): a server that does not answer.
  void pause();
  void resume();

 private:
  RedisServer() = default;
  void start();
  void spawn(const std::string& binary);
  std::vector<std::string> extra_args_;
  std::string dir_;
  std::string socket_;
  int port_ = 0;
  int pid_ = -1;
};

}  // namespace tc_test
