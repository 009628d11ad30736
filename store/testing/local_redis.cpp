#include "local_redis.h"

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

#include "tensordict/store.h"

namespace tensordict::store::testing {

std::string LocalRedis::binary() {
  if (const char* env = std::getenv("TC_REDIS_SERVER")) return ::access(env, X_OK) == 0 ? env : "";
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    const std::string p = path;
    for (size_t start = 0, end; start <= p.size(); start = end + 1) {
      end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      dirs.push_back(p.substr(start, end - start));
    }
  }
  for (const char* d : {"/usr/bin", "/usr/sbin", "/usr/local/bin"}) dirs.emplace_back(d);
  for (const char* name : {"redis-server", "valkey-server"})
    for (const auto& d : dirs) {
      const std::string candidate = d + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  return "";
}

int LocalRedis::free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(addr.sin_port);
}

LocalRedis::LocalRedis(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)), binary_(binary()) {
  if (binary_.empty())
    throw std::runtime_error("no redis-server (apt-get install redis-server, or TC_REDIS_SERVER)");
  char folder[] = "/tmp/tc_redis_XXXXXX";
  if (!::mkdtemp(folder)) throw std::runtime_error("mkdtemp failed");
  dir_ = folder;
  socket_ = dir_ + "/redis.sock";
  // The port may be taken between free_port() and the server's bind: another one then.
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_port();
    if (spawn()) return;
  }
  throw std::runtime_error("redis-server did not start (see " + dir_ + "/redis.log)");
}

LocalRedis::~LocalRedis() {
  if (pid_ > 0) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

// Starts the binary on port_ and socket_ and waits until it answers PING; false when it died at
// once (the port was taken) or did not answer in time.
bool LocalRedis::spawn() {
  std::vector<std::string> args{binary_,
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
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // The server dies with this process, and holds none of its output pipes (CTest would wait
    // for them to close).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary_.c_str(), argv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    try {
      ConnectionOptions o;
      o.unix_socket = socket_;
      o.connect_timeout = std::chrono::milliseconds(500);
      if (Connection(o).command({"PING"}).str == "PONG") return true;
    } catch (const tensordict::Error&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill();
  return false;
}

void LocalRedis::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // (a paused server too)
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void LocalRedis::restart() {
  kill();
  std::filesystem::remove(socket_);
  if (!spawn())
    throw std::runtime_error("redis-server did not restart (see " + dir_ + "/redis.log)");
}

void LocalRedis::pause() { ::kill(pid_, SIGSTOP); }
void LocalRedis::resume() { ::kill(pid_, SIGCONT); }

}  // namespace tensordict::store::testing
