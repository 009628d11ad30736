#include "launch.h"

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dist_test {
namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("no free port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string store_spec(const std::string& kind, std::string& dir) {
  if (kind == "tcp") return "tcp:" + std::to_string(free_port());
  std::string pattern = (std::filesystem::temp_directory_path() / "tc_dist_XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir = pattern;
  return "file:" + dir + "/store";
}

}  // namespace

Outcome launch(const std::string& scenario, int size, const std::string& store, double deadline_s) {
  return launch(std::vector<std::vector<std::string>>(static_cast<size_t>(size),
                                                      {DIST_WORKER_PATH, scenario}),
                store, deadline_s);
}

Outcome launch(const std::vector<std::vector<std::string>>& commands, const std::string& store,
               double deadline_s) {
  std::string dir;
  const std::string spec = store_spec(store, dir);
  const int size = static_cast<int>(commands.size());
  std::vector<pid_t> pids;
  for (int rank = 0; rank < size; ++rank) {
    std::vector<std::string> args = commands[static_cast<size_t>(rank)];
    args.insert(args.end(), {std::to_string(rank), std::to_string(size), spec});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error("posix_spawn failed: " + args[0]);
    }
    pids.push_back(pid);
  }
  Outcome out;
  out.exit_codes.assign(static_cast<size_t>(size), -1);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(deadline_s * 1000));
  size_t running = pids.size();
  while (running > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (pids[i] == 0) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        out.exit_codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pids[i] = 0;
        --running;
      }
    }
    if (running == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      out.timed_out = true;
      for (pid_t& pid : pids) {
        if (pid == 0) continue;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        pid = 0;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!dir.empty()) std::filesystem::remove_all(dir);
  return out;
}

}  // namespace dist_test
