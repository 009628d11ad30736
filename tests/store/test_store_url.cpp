// Store URLs (no server needed).
#include "catch2_compat.h"
#include "tensordict/store.h"

using Catch::Matchers::ContainsSubstring;
using tensordict::ValueError;
using tensordict::store::parse_store_url;

TEST_CASE("a redis URL gives host port db and td_id", "[store][url]") {
  const auto where = parse_store_url("redis://alice:s%40cret@cache.local:6380/3/run-42");
  CHECK(where.connection.host == "cache.local");
  CHECK(where.connection.port == 6380);
  CHECK(where.connection.db == 3);
  CHECK(where.connection.user == "alice");
  CHECK(where.connection.password == "s@cret");
  CHECK(where.connection.unix_socket.empty());
  CHECK(where.td_id == "run-42");
  CHECK(where.prefix == "tensordict");
}

TEST_CASE("a redis URL may leave out the parts that have defaults", "[store][url]") {
  auto where = parse_store_url("redis://localhost");
  CHECK(where.connection.port == 6379);
  CHECK(where.connection.db == 0);
  CHECK(where.td_id.empty());
  CHECK(where.connection.password.empty());

  where = parse_store_url("redis://:only-password@[::1]:7000/2?prefix=ns");
  CHECK(where.connection.host == "::1");
  CHECK(where.connection.port == 7000);
  CHECK(where.connection.user.empty());
  CHECK(where.connection.password == "only-password");
  CHECK(where.connection.db == 2);
  CHECK(where.prefix == "ns");
}

TEST_CASE("a rediss URL asks for TLS and names its files", "[store][url]") {
  const auto where = parse_store_url(
      "rediss://u:pw@cache.example:6380/2/run?tls_ca_file=/etc/ca.pem&tls_cert_file=c.pem&"
      "tls_key_file=k.pem");
  CHECK(where.connection.tls);
  CHECK(where.connection.host == "cache.example");
  CHECK(where.connection.port == 6380);
  CHECK(where.connection.db == 2);
  CHECK(where.td_id == "run");
  CHECK(where.connection.tls_ca_file == "/etc/ca.pem");
  CHECK(where.connection.tls_cert_file == "c.pem");
  CHECK(where.connection.tls_key_file == "k.pem");
  CHECK_FALSE(parse_store_url("redis://host/0/run").connection.tls);
}

TEST_CASE("a unix URL gives the socket and its query", "[store][url]") {
  const auto where =
      parse_store_url("unix:///run/redis/redis%20x.sock?db=5&td_id=abc-1&user=bob&password=pw");
  CHECK(where.connection.unix_socket == "/run/redis/redis x.sock");
  CHECK(where.connection.db == 5);
  CHECK(where.td_id == "abc-1");
  CHECK(where.connection.user == "bob");
  CHECK(where.connection.password == "pw");
  CHECK(where.cache_metadata);
  CHECK_FALSE(parse_store_url("unix:///s.sock?cache_metadata=0").cache_metadata);
  CHECK(parse_store_url("redis://host/0/id?cache_metadata=1").cache_metadata);
}

TEST_CASE("bad store URLs are ValueErrors that hide the password", "[store][url]") {
  for (const char* url :
       {"http://localhost", "redis://host/0?tls_ca_file=ca.pem", "redis://", "redis://host:0",
        "redis://host:99999", "redis://host:/0", "redis://host/x", "redis://host/0/id/extra",
        "redis://host?color=red", "unix://relative.sock", "unix:///s.sock?db=-1",
        "redis://host/0/a%zz", "redis://[::1/0", "unix:///s.sock?cache_metadata=yes"}) {
    INFO(url);
    CHECK_THROWS_AS(parse_store_url(url), ValueError);
  }
  try {
    parse_store_url("redis://u:topsecret@host:bad/0?password=alsosecret");
    FAIL("no error");
  } catch (const ValueError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, ContainsSubstring("port"));
    CHECK(what.find("topsecret") == std::string::npos);
    CHECK(what.find("alsosecret") == std::string::npos);
  }
}
