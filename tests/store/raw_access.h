#pragma once
// The store tests' view of the server from outside the store: fresh store ids on this process's
// redis-server, and a raw connection that reads (or, as a hostile writer, writes) its keys.

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "store_server.h"
#include "tensordict/store.h"

namespace tc_test::raw_access {

using tensordict::NestedKey;
using tensordict::store::Connection;
using tensordict::store::Reply;
using tensordict::store::StoreLocation;
using tensordict::store::TensorDictStore;

// A td_id no other case of this process uses.
inline std::string fresh_id(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(counter++);
}

inline StoreLocation here(const std::string& stem, int db = 0) {
  return RedisServer::instance().unix_location(fresh_id(stem), db);
}

// A second, raw connection to the test server: what Python (or a hostile writer) would see.
inline Connection& raw(int db = 0) {
  static std::map<int, std::unique_ptr<Connection>> conns;
  auto& c = conns[db];
  if (!c)
    c = std::make_unique<Connection>(RedisServer::instance().unix_location("", db).connection);
  return *c;
}

inline std::string get_raw(const TensorDictStore& s, const std::string& suffix) {
  const Reply r = raw().command({"GET", s.redis_key(suffix)});
  REQUIRE(r.type == Reply::Type::String);
  return r.str;
}

inline std::map<std::string, std::string> hash_raw(const TensorDictStore& s,
                                                   const std::string& suffix) {
  const Reply r = raw().command({"HGETALL", s.redis_key(suffix)});
  std::map<std::string, std::string> out;
  for (size_t i = 0; i + 1 < r.element.size(); i += 2) out[r.element[i].str] = r.element[i + 1].str;
  return out;
}

inline std::vector<std::string> set_raw(const TensorDictStore& s, const std::string& suffix) {
  const Reply r = raw().command({"SMEMBERS", s.redis_key(suffix)});
  std::vector<std::string> out;
  for (const auto& e : r.element) out.push_back(e.str);
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<std::string> paths(const std::vector<NestedKey>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.join("."));
  return out;
}

}  // namespace tc_test::raw_access
