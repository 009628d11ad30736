#include "store_server.h"

#include <cstdlib>
#include <stdexcept>

#include "skip.h"

namespace tc_test {

RedisServer::RedisServer(std::vector<std::string> extra_args) {
  if (tensordict::store::testing::LocalRedis::binary().empty())
    TC_SKIP("redis-server not found (apt-get install redis-server)");
  server_ = std::make_unique<tensordict::store::testing::LocalRedis>(std::move(extra_args));
}

RedisServer& RedisServer::instance() {
  static RedisServer* server = new RedisServer({});
  // Stopped by an exit handler: a static object's destructor would not run on TC_SKIP's exit
  // from another case in every order.
  static const bool registered = [] {
    std::atexit([] { delete server; });
    return true;
  }();
  (void)registered;
  return *server;
}

std::unique_ptr<RedisServer> RedisServer::dedicated(std::vector<std::string> extra_args) {
  return std::unique_ptr<RedisServer>(new RedisServer(std::move(extra_args)));
}

tensordict::store::StoreLocation RedisServer::unix_location(const std::string& td_id,
                                                            int db) const {
  tensordict::store::StoreLocation where;
  where.connection.unix_socket = socket();
  where.connection.db = db;
  where.td_id = td_id;
  return where;
}

tensordict::store::StoreLocation RedisServer::tcp_location(const std::string& td_id, int db) const {
  tensordict::store::StoreLocation where;
  where.connection.host = "127.0.0.1";
  where.connection.port = port();
  where.connection.db = db;
  where.td_id = td_id;
  return where;
}

}  // namespace tc_test
