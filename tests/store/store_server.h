#pragma once
// The redis-server of one test process (tensordict::store::testing::LocalRedis): started on first
// use, stopped at exit. Nothing is shared with a server the machine may run. A case that uses it
// carries [needs-redis]: it skips (skip.h) where redis-server is not installed.

#include <memory>
#include <string>
#include <vector>

#include "local_redis.h"
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
  static int free_port() { return tensordict::store::testing::LocalRedis::free_port(); }

  const std::string& socket() const { return server_->socket(); }
  int port() const { return server_->port(); }
  /// A location on the unix socket, `td_id` and db as given.
  tensordict::store::StoreLocation unix_location(const std::string& td_id, int db = 0) const;
  /// The same server over TCP (127.0.0.1:port).
  tensordict::store::StoreLocation tcp_location(const std::string& td_id, int db = 0) const;

  /// Kills the server (SIGKILL), restarts it empty, pauses and resumes it (LocalRedis).
  void kill() { server_->kill(); }
  void restart() { server_->restart(); }
  void pause() { server_->pause(); }
  void resume() { server_->resume(); }

 private:
  explicit RedisServer(std::vector<std::string> extra_args);
  std::unique_ptr<tensordict::store::testing::LocalRedis> server_;
};

}  // namespace tc_test
