// send/recv of a 64 MB TensorDict of 100 float32 leaves between two processes on this machine
// (results and method in docs/performance.md, "Distributed"):
//
//  BM_send/raw            the 100 tensors one by one with raw c10d send / recv (tags 0..99),
//                         each waited for before the next (Python's td.send)
//  BM_send/raw_async      the same 100 raw messages all posted, then waited for (td.isend)
//  BM_send/tensordict     tensordict::dist::send / recv (structure frame, then leaf by leaf)
//  BM_send/python         the same with check = false (Python tensordict's messages exactly)
//  BM_send/consolidated   consolidated = true: frame, then one 64 MB buffer
//
// The process started by the user is rank 0 and sends; it starts itself again as rank 1
// (--peer PORT), which receives. Before each benchmark run rank 0 tells the peer the variant and
// the iteration count; after each iteration the peer answers with one small message, so that an
// iteration ends when the data has arrived. Gloo over a TCPStore on 127.0.0.1.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <cstring>
#include <memory>
#include <string>

#include "tensordict/distributed.h"

extern char** environ;

namespace dist = tensordict::dist;
using tensordict::TensorDict;

namespace {

constexpr int kLeaves = 100;
constexpr int64_t kBytes = 64 << 20;
constexpr int kControlTag = 1 << 20;
enum Variant : int64_t { kStop, kRaw, kRawAsync, kTensorDict, kPython, kConsolidated };

std::unique_ptr<dist::Group> g_group;

TensorDict make_td(bool zeros) {
  TensorDict td;
  const int64_t per_leaf = kBytes / kLeaves / 4;
  for (int i = 0; i < kLeaves; ++i) {
    const std::string key = "leaf" + std::to_string(1000 + i);  // sorted = insertion order
    td.set(key, zeros ? at::zeros({per_leaf}) : at::rand({per_leaf}));
  }
  return td;
}

std::vector<at::Tensor> leaves(const TensorDict& td) {
  std::vector<at::Tensor> out;
  for (const auto& v : td.values()) out.push_back(v.tensor());
  return out;
}

void control(int64_t variant, int64_t iterations, int peer) {
  std::vector<at::Tensor> t{at::tensor({variant, iterations}, at::kLong)};
  g_group->pg().send(t, peer, kControlTag)->wait();
}

void done_ack(bool sending, int peer) {
  std::vector<at::Tensor> t{at::zeros({1}, at::kLong)};
  auto work = sending ? g_group->pg().recv(t, peer, kControlTag + 1)
                      : g_group->pg().send(t, peer, kControlTag + 1);
  work->wait();
}

dist::CommOptions options_for(int64_t variant) {
  dist::CommOptions o;
  o.check = variant != kPython;
  o.consolidated = variant == kConsolidated;
  return o;
}

// One transfer of `td` in `variant`; `sending` on rank 0, receiving on rank 1.
void transfer(int64_t variant, const TensorDict& td, const std::vector<at::Tensor>& raw,
              bool sending, int peer) {
  auto& pg = g_group->pg();
  if (variant == kRaw || variant == kRawAsync) {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (int i = 0; i < kLeaves; ++i) {
      std::vector<at::Tensor> t{raw[i]};
      auto work = sending ? pg.send(t, peer, i) : pg.recv(t, peer, i);
      if (variant == kRaw) {
        work->wait();  // a Gloo work is waited for once
      } else {
        works.push_back(work);
      }
    }
    for (auto& work : works) work->wait();
  } else if (sending) {
    dist::send(td, pg, peer, options_for(variant));
  } else {
    dist::recv(td, pg, peer, options_for(variant));
  }
  done_ack(sending, peer);
}

void BM_send(benchmark::State& state, int64_t variant) {
  static const TensorDict td = make_td(false);
  static const TensorDict packed = td.consolidate();
  const TensorDict& source = variant == kConsolidated ? packed : td;
  const auto raw = leaves(td);
  control(variant, static_cast<int64_t>(state.max_iterations), 1);
  for (auto _ : state) transfer(variant, source, raw, true, 1);
  state.SetBytesProcessed(state.iterations() * kBytes);
}

int peer_main(int port) {
  g_group = std::make_unique<dist::Group>(dist::Group::tcp("127.0.0.1", port, 1, 2));
  const TensorDict td = make_td(true);
  const TensorDict packed = make_td(true).consolidate();
  const auto raw = leaves(td);
  while (true) {
    at::Tensor command = at::zeros({2}, at::kLong);
    std::vector<at::Tensor> t{command};
    g_group->pg().recv(t, 0, kControlTag)->wait();
    const int64_t variant = command[0].item<int64_t>();
    if (variant == kStop) return 0;
    const TensorDict& into = variant == kConsolidated ? packed : td;
    for (int64_t i = 0; i < command[1].item<int64_t>(); ++i) transfer(variant, into, raw, false, 0);
  }
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

BENCHMARK_CAPTURE(BM_send, raw, kRaw)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_send, raw_async, kRawAsync)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_send, tensordict, kTensorDict)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_send, python, kPython)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_send, consolidated, kConsolidated)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--peer") == 0) return peer_main(std::stoi(argv[2]));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const int port = free_port();
  std::string self = "/proc/self/exe";
  std::string flag = "--peer";
  std::string port_arg = std::to_string(port);
  char* peer_argv[] = {self.data(), flag.data(), port_arg.data(), nullptr};
  pid_t peer = 0;
  if (::posix_spawn(&peer, "/proc/self/exe", nullptr, nullptr, peer_argv, environ) != 0) return 1;
  g_group = std::make_unique<dist::Group>(dist::Group::tcp("127.0.0.1", port, 0, 2));
  benchmark::RunSpecifiedBenchmarks();
  control(kStop, 0, 1);
  ::waitpid(peer, nullptr, 0);
  g_group.reset();
  benchmark::Shutdown();
  return 0;
}
