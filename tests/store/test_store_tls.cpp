// rediss://: the store over TLS to a redis-server of the case's own, whose certificate (and its
// CA) the case makes with the openssl command. Built where TensorClass::store has OpenSSL.
#include <ATen/ATen.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "catch2_compat.h"
#include "skip.h"
#include "store_server.h"
#include "tensordict/store.h"

using Catch::Matchers::ContainsSubstring;
using tc_test::RedisServer;
using tensordict::store::ConnectionError;
using tensordict::store::parse_store_url;
using tensordict::store::StoreLocation;
using tensordict::store::TensorDictStore;

namespace {

// A CA and a server certificate for localhost (by name only) it signed, in `dir`.
void make_certificates(const std::string& dir) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0)
    TC_SKIP("no openssl command (apt-get install openssl)");
  std::ofstream(dir + "/san.ext") << "subjectAltName=DNS:localhost\n";
  const std::string quiet = " >/dev/null 2>&1";
  const std::string in = "cd '" + dir + "' && ";
  for (const std::string step :
       {"openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 "
        "-subj /CN=tc-test-ca",
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
        "-subj /CN=localhost",
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
        "server.crt -days 2 -extfile san.ext",
        // Another CA, which signed nothing this server holds.
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt -days 2 "
        "-subj /CN=tc-other-ca"}) {
    INFO(step);
    REQUIRE(std::system((in + step + quiet).c_str()) == 0);
  }
}

}  // namespace

TEST_CASE("a store over TLS checks the server's certificate", "[store][needs-redis]") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("tc_store_tls_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  make_certificates(dir);
  const int tls_port = RedisServer::free_port();
  auto server =
      RedisServer::dedicated({"--tls-port", std::to_string(tls_port), "--tls-cert-file",
                              dir + "/server.crt", "--tls-key-file", dir + "/server.key",
                              "--tls-ca-cert-file", dir + "/ca.crt", "--tls-auth-clients", "no"});
  const std::string base = "rediss://localhost:" + std::to_string(tls_port) + "/0/";

  const StoreLocation where = parse_store_url(base + "tls-run?tls_ca_file=" + dir + "/ca.crt");
  CHECK(where.connection.tls);
  auto store = TensorDictStore::create(where, {3});
  const at::Tensor big = at::arange(3 * (1 << 18), at::kFloat).reshape({3, 1 << 18});
  store.set("x", big);  // 3 MB: many TLS records each way
  store.set_at("y", 1, at::ones({2}));
  const TensorDictStore again = TensorDictStore::open(where);
  CHECK(at::equal(again.get("x"), big));
  CHECK(at::equal(again.get_at("y", 1), at::ones({2})));

  // A certificate no trusted CA signed, or one for another name, is refused at the handshake.
  const StoreLocation untrusted =
      parse_store_url(base + "tls-run?tls_ca_file=" + dir + "/other.crt");
  CHECK_THROWS_AS(TensorDictStore::open(untrusted), ConnectionError);
  CHECK_THROWS_WITH(TensorDictStore::open(untrusted), ContainsSubstring("certificate"));
  StoreLocation by_address = where;  // the certificate names localhost, not its address
  by_address.connection.host = "127.0.0.1";
  CHECK_THROWS_AS(TensorDictStore::open(by_address), ConnectionError);
  CHECK_THROWS_WITH(TensorDictStore::open(by_address), ContainsSubstring("mismatch"));
  // Plain text to the TLS port is no store either.
  StoreLocation plain = where;
  plain.connection.tls = false;
  plain.connection.command_timeout = std::chrono::milliseconds(1000);
  CHECK_THROWS_AS(TensorDictStore::open(plain), tensordict::Error);
  std::filesystem::remove_all(dir);
}
