#pragma once
// A redis-server child of this process, for the store's tests and benchmarks (not installed):
// on a unix socket and a free loopback port in a temporary folder of its own, no persistence;
// it dies with the process. The binary: $TC_REDIS_SERVER, else redis-server, else
// valkey-server (sid), on PATH or in /usr/bin, /usr/sbin, /usr/local/bin.

#include <string>
#include <vector>

namespace tensordict::store::testing {

class LocalRedis {
 public:
  /// The binary a server would run, "" when there is none.
  static std::string binary();
  /// A loopback port nobody listens on right now.
  static int free_port();

  /// Starts a server (`extra_args` after the usual ones: a TLS port, its certificates) and waits
  /// until it answers; std::runtime_error when there is no binary or it does not start.
  explicit LocalRedis(std::vector<std::string> extra_args = {});
  /// Stops it (SIGTERM, then SIGKILL) and removes its folder.
  ~LocalRedis();
  LocalRedis(const LocalRedis&) = delete;
  LocalRedis& operator=(const LocalRedis&) = delete;

  const std::string& socket() const { return socket_; }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

  /// Kills the server (SIGKILL: no reply, no goodbye), as a crash would.
  void kill();
  /// Starts it again on the same socket and port, empty.
  void restart();
  /// Stops and resumes the process (SIGSTOP, SIGCONT): a server that does not answer.
  void pause();
  void resume();

 private:
  bool spawn();
  std::vector<std::string> extra_args_;
  std::string binary_;
  std::string dir_;
  std::string socket_;
  int port_ = 0;
  int pid_ = -1;
};

}  // namespace tensordict::store::testing
