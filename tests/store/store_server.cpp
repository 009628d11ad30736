#include "store_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "skip.h"

namespace tc_test {
namespace {

std::string find_redis_server() {
  if (const char* env = std::getenv("TC_REDIS_SERVER")) return ::access(env, X_OK) == 0 ? env : "";
  std::vector<std::string> dirs{"/usr/bin", "/usr/sbin", "/usr/local/bin"};
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t start = 0, end; start <= p.size(); start = end + 1) {
      end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      dirs.insert(dirs.begin(), p.substr(start, end - start));
    }
  }
  for (const auto& d : dirs) {
    const std::string candidate = d + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

// The server may still lose a race for the port: start() then tries another.
int RedisServer::free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("no free loopback port");
  ::close(fd);
  return ntohs(addr.sin_port);
}

RedisServer& RedisServer::instance() {
  static RedisServer* server = [] {
    auto* s = new RedisServer();
    s->start();
    return s;
  }();
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
  std::unique_ptr<RedisServer> s(new RedisServer());
  s->extra_args_ = std::move(extra_args);
  s->start();
  return s;
}

void RedisServer::start() {
  const std::string binary = find_redis_server();
  if (binary.empty()) TC_SKIP("redis-server not found (apt-get install redis-server)");
  static int servers = 0;  // one folder per server of the process
  dir_ = (std::filesystem::temp_directory_path() /
          ("tc_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(servers++)))
             .string();
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  socket_ = dir_ + "/redis.sock";
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_port();
    spawn(binary);
    if (pid_ > 0) return;
  }
  throw std::runtime_error("redis-server did not start (see " + dir_ + "/redis.log)");
}

// Starts `binary` on port_ and socket_; pid_ stays -1 when it died at once (port taken) or did
// not answer in time.
void RedisServer::spawn(const std::string& binary) {
  std::vector<std::string> args{binary,
                                "--port",
                                std::to_string(port_),
                                "--bind",
                                "127.0.0.1",
                                "--unixsocket",
                                socket_,
                                "--unixsocketperm",
                                "700",
                                "--save",
                                "",
                                "--appendonly",
                                "no",
                                "--dir",
                                dir_,
                                "--logfile",
                                dir_ + "/redis.log",
                                "--daemonize",
                                "no"};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  pid_ = ::fork();
  if (pid_ == 0) {
    // The server dies with the test process, and holds none of its output pipes (CTest would
    // wait for them to close).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  // Ready once it answers PING on the socket; a quick death means the port was taken.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    try {
      tensordict::store::ConnectionOptions o;
      o.unix_socket = socket_;
      o.connect_timeout = std::chrono::milliseconds(500);
      tensordict::store::Connection probe(o);
      if (probe.command({"PING"}).str == "PONG") return;
    } catch (const tensordict::Error&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill();
}

void RedisServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // (a paused server too)
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void RedisServer::restart() {
  kill();
  std::filesystem::remove(socket_);
  spawn(find_redis_server());
  if (pid_ <= 0)
    throw std::runtime_error("redis-server did not restart (see " + dir_ + "/redis.log)");
}

void RedisServer::pause() { ::kill(pid_, SIGSTOP); }
void RedisServer::resume() { ::kill(pid_, SIGCONT); }

RedisServer::~RedisServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

tensordict::store::StoreLocation RedisServer::unix_location(const std::string& td_id,
                                                            int db) const {
  tensordict::store::StoreLocation where;
  where.connection.unix_socket = socket_;
  where.connection.db = db;
  where.td_id = td_id;
  return where;
}

tensordict::store::StoreLocation RedisServer::tcp_location(const std::string& td_id, int db) const {
  tensordict::store::StoreLocation where;
  where.connection.host = "127.0.0.1";
  where.connection.port = port_;
  where.connection.db = db;
  where.td_id = td_id;
  return where;
}

}  // namespace tc_test
