// TensorDictStore (TensorClass::store) against raw hiredis on the same server, over TCP loopback
// (results and method in docs/performance.md, "Store (Redis)"):
//
//  BM_store_write/store/<size>     TensorDictStore::set of one float32 leaf of 1KB, 1MB or 100MB
//  BM_store_write/raw/<size>       one SET of the same bytes, straight from the tensor's memory
//  BM_store_read/store/<size>      TensorDictStore::get of that leaf (a new tensor)
//  BM_store_read/raw/<size>        one GET of the same bytes, copied into a new tensor
//  BM_store_write/socket/<size>    (the floor, no target) the same SET by hand on a plain socket:
//                                  one writev from the tensor's memory, no client-side copy
//  BM_store_read/socket/<size>     the same GET by hand, the value read straight into the tensor
//  BM_store_write/layout/<size>    (no target) the store's own commands for the same write, by
//                                  hand: MULTI MSET DEL, an HSET per leaf, SADD, EXEC, the values
//                                  sent from the tensors' memory, in one round trip
//  BM_store_write/store/1000x16    TensorDictStore::update with a TensorDict of 1,000 leaves of
//                                  16 floats (64 bytes each)
//  BM_store_write/raw/1000x16      1,000 SETs of the same bytes, pipelined (one round trip)
//  BM_store_read/store/1000x16     TensorDictStore::to_local of those 1,000 leaves
//  BM_store_read/raw/1000x16       1,000 GETs, pipelined, each copied into a new tensor
//
// Sizes are binary: 1KB = 1024 bytes, 1MB = 2^20, 100MB = 100 * 2^20. Both sides of a pair run in
// the same process on their own connection to the same server; times are wall-clock
// (UseRealTime): the server's work is part of an operation.
//
// The server: $TC_BENCH_REDIS (host:port, the host an IPv4 address) when set; otherwise the
// benchmark starts its own redis-server ($TC_REDIS_SERVER, else redis-server or valkey-server from
// PATH) on a unix socket and a free loopback port in a fresh temporary directory, without
// persistence, and stops it at exit. Measurements use the TCP port (127.0.0.1).
//
// `bench_store --commands` runs each operation once instead and prints what the server did for
// it (INFO commandstats and the read/write events of INFO stats: about one of each per round
// trip for small messages).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "local_redis.h"
#include "store_baselines.h"
#include "tensordict/store.h"
#include "tensordict/tensordict.h"

namespace store = tensordict::store;
using namespace store_bench;
using tensordict::TensorDict;

namespace {

// ---- the server -------------------------------------------------------------------------------

// Where the benchmarks' server listens: the bench's own (start_server) or $TC_BENCH_REDIS.
struct Server {
  std::string host = "127.0.0.1";
  int port = 0;
};

Server g_server;

// The bench's own server (local_redis.h), stopped at exit.
std::unique_ptr<tensordict::store::testing::LocalRedis> g_local;

void start_server() {
  g_local = std::make_unique<tensordict::store::testing::LocalRedis>();
  std::atexit([] { g_local.reset(); });
  g_server.host = "127.0.0.1";
  g_server.port = g_local->port();
}

void choose_server() {
  if (const char* env = std::getenv("TC_BENCH_REDIS")) {
    const std::string s = env;
    const size_t colon = s.rfind(':');
    if (colon == std::string::npos) throw std::runtime_error("TC_BENCH_REDIS: expected host:port");
    g_server.host = s.substr(0, colon);
    g_server.port = std::stoi(s.substr(colon + 1));
    if (!connect_raw(g_server.host, g_server.port))
      throw std::runtime_error("TC_BENCH_REDIS: cannot connect to " + s);
    return;
  }
  start_server();
}

store::StoreLocation location(const std::string& td_id) {
  store::StoreLocation where;
  where.connection.host = g_server.host;
  where.connection.port = g_server.port;
  where.td_id = td_id;
  return where;
}

// ---- the data ---------------------------------------------------------------------------------

constexpr int64_t kKB = 1024;
constexpr int64_t kMB = 1024 * 1024;
constexpr int kSmallLeaves = 1000;
constexpr int64_t kSmallFloats = 16;

struct Size {
  const char* name;
  int64_t bytes;
};
const Size kSizes[] = {{"1KB", kKB}, {"1MB", kMB}, {"100MB", 100 * kMB}};

at::Tensor leaf(int64_t bytes) { return at::rand({bytes / 4}); }

// 1,000 leaves of 16 floats, keys leaf0000..leaf0999.
const TensorDict& small_td() {
  static const TensorDict td = [] {
    TensorDict out;
    for (int i = 0; i < kSmallLeaves; ++i) {
      std::string key = std::to_string(i);
      key = "leaf" + std::string(4 - key.size(), '0') + key;
      out.set(key, at::rand({kSmallFloats}));
    }
    return out;
  }();
  return td;
}

// The raw side's keys: its own namespace on the same server.
std::string raw_key(const std::string& what) { return "bench:raw:" + what; }

std::vector<std::string> small_raw_keys() {
  std::vector<std::string> keys;
  for (const auto& k : small_td().keys()) keys.push_back(raw_key("small:" + k.front()));
  return keys;
}

std::vector<at::Tensor> small_values() {
  std::vector<at::Tensor> values;
  for (const auto& v : small_td().values()) values.push_back(v.tensor());
  return values;
}

// ---- the benchmarks ---------------------------------------------------------------------------

// Runs `body` in the benchmark loop, reporting an exception as the benchmark's error.
template <typename Body>
void guarded(benchmark::State& state, int64_t bytes, Body&& body) {
  try {
    for (auto _ : state) body();
    state.SetBytesProcessed(state.iterations() * bytes);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void BM_write_store(benchmark::State& state, Size size) {
  const at::Tensor t = leaf(size.bytes);
  auto s = store::TensorDictStore::create(location(std::string("bench-") + size.name));
  guarded(state, size.bytes, [&] { s.set("leaf", t); });
}

void BM_write_raw(benchmark::State& state, Size size) {
  const at::Tensor t = leaf(size.bytes);
  Context c = connect_raw(g_server.host, g_server.port);
  const std::string key = raw_key(size.name);
  guarded(state, size.bytes, [&] { raw_set(c.get(), key, t); });
}

void BM_read_store(benchmark::State& state, Size size) {
  auto s = store::TensorDictStore::create(location(std::string("bench-") + size.name));
  s.set("leaf", leaf(size.bytes));
  guarded(state, size.bytes, [&] { benchmark::DoNotOptimize(s.get("leaf")); });
}

void BM_read_raw(benchmark::State& state, Size size) {
  Context c = connect_raw(g_server.host, g_server.port);
  const std::string key = raw_key(size.name);
  raw_set(c.get(), key, leaf(size.bytes));
  guarded(state, size.bytes,
          [&] { benchmark::DoNotOptimize(raw_get(c.get(), key, size.bytes / 4)); });
}

void BM_write_socket(benchmark::State& state, Size size) {
  const at::Tensor t = leaf(size.bytes);
  Socket s(g_server.host, g_server.port);
  const std::string key = raw_key(size.name);
  guarded(state, size.bytes, [&] { socket_set(s, key, t); });
}

void BM_read_socket(benchmark::State& state, Size size) {
  Socket s(g_server.host, g_server.port);
  const std::string key = raw_key(size.name);
  socket_set(s, key, leaf(size.bytes));
  guarded(state, size.bytes, [&] { benchmark::DoNotOptimize(socket_get(s, key, size.bytes / 4)); });
}

constexpr int64_t kSmallBytes = kSmallLeaves * kSmallFloats * 4;

void BM_write_store_small(benchmark::State& state) {
  auto s = store::TensorDictStore::create(location("bench-1000x16"));
  guarded(state, kSmallBytes, [&] { s.update(small_td()); });
}

void BM_write_layout(benchmark::State& state, Size size) {
  const std::vector<at::Tensor> values{leaf(size.bytes)};
  Context c = connect_raw(g_server.host, g_server.port);
  guarded(state, size.bytes, [&] { layout_set_many(c.get(), {"leaf"}, values); });
}

void BM_write_layout_small(benchmark::State& state) {
  Context c = connect_raw(g_server.host, g_server.port);
  std::vector<std::string> paths;
  for (const auto& k : small_td().keys()) paths.push_back(k.front());
  const auto values = small_values();
  guarded(state, kSmallBytes, [&] { layout_set_many(c.get(), paths, values); });
}

void BM_write_raw_small(benchmark::State& state) {
  Context c = connect_raw(g_server.host, g_server.port);
  const auto keys = small_raw_keys();
  const auto values = small_values();
  guarded(state, kSmallBytes, [&] { raw_set_many(c.get(), keys, values); });
}

void BM_read_store_small(benchmark::State& state) {
  auto s = store::TensorDictStore::create(location("bench-1000x16"));
  s.update(small_td());
  guarded(state, kSmallBytes, [&] { benchmark::DoNotOptimize(s.to_local()); });
}

void BM_read_raw_small(benchmark::State& state) {
  Context c = connect_raw(g_server.host, g_server.port);
  const auto keys = small_raw_keys();
  raw_set_many(c.get(), keys, small_values());
  guarded(state, kSmallBytes,
          [&] { benchmark::DoNotOptimize(raw_get_many(c.get(), keys, kSmallFloats)); });
}

void register_benchmarks() {
  for (const Size& size : kSizes) {
    const std::string n = size.name;
    std::vector<benchmark::internal::Benchmark*> group{
        benchmark::RegisterBenchmark(("BM_store_write/store/" + n).c_str(), BM_write_store, size),
        benchmark::RegisterBenchmark(("BM_store_write/raw/" + n).c_str(), BM_write_raw, size),
        benchmark::RegisterBenchmark(("BM_store_read/store/" + n).c_str(), BM_read_store, size),
        benchmark::RegisterBenchmark(("BM_store_read/raw/" + n).c_str(), BM_read_raw, size),
        benchmark::RegisterBenchmark(("BM_store_write/socket/" + n).c_str(), BM_write_socket, size),
        benchmark::RegisterBenchmark(("BM_store_write/layout/" + n).c_str(), BM_write_layout, size),
        benchmark::RegisterBenchmark(("BM_store_read/socket/" + n).c_str(), BM_read_socket, size)};
    for (auto* b : group) {
      b->UseRealTime()->Unit(benchmark::kMillisecond);
      // A 100MB operation takes a good fraction of a second here: a fixed count keeps a run of
      // 5 repetitions within about a minute.
      if (size.bytes >= 100 * kMB) b->Iterations(3);
    }
  }
  for (auto* b :
       {benchmark::RegisterBenchmark("BM_store_write/store/1000x16", BM_write_store_small),
        benchmark::RegisterBenchmark("BM_store_write/raw/1000x16", BM_write_raw_small),
        benchmark::RegisterBenchmark("BM_store_write/layout/1000x16", BM_write_layout_small),
        benchmark::RegisterBenchmark("BM_store_read/store/1000x16", BM_read_store_small),
        benchmark::RegisterBenchmark("BM_store_read/raw/1000x16", BM_read_raw_small)})
    b->UseRealTime()->Unit(benchmark::kMillisecond);
}

// ---- --commands: what the server does per operation
// ----------------------------------------------

// INFO <section> as name -> value.
std::map<std::string, std::string> info(redisContext* c, const std::string& section) {
  ReplyPtr r = command(c, {"INFO", section});
  std::map<std::string, std::string> out;
  std::istringstream lines(std::string(r->str, static_cast<size_t>(r->len)));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

int64_t stat(const std::map<std::string, std::string>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : std::stoll(it->second);
}

// Runs `op` once and prints the commands the server ran for it, and its read and write events.
void count(redisContext* admin, const std::string& name, const std::function<void()>& op) {
  command(admin, {"CONFIG", "RESETSTAT"});
  const auto before = info(admin, "stats");
  op();
  const auto after = info(admin, "stats");
  const auto cmds = info(admin, "commandstats");
  std::cout << name << ": server read events "
            << stat(after, "total_reads_processed") - stat(before, "total_reads_processed") - 1
            << ", write events "
            << stat(after, "total_writes_processed") - stat(before, "total_writes_processed") - 1
            << "; commands:";
  for (const auto& [key, value] : cmds) {
    std::string cmd = key.substr(std::strlen("cmdstat_"));
    if (cmd == "info" || cmd.rfind("config", 0) == 0) continue;
    const size_t calls = value.find("calls=");
    std::cout << " " << cmd << " " << value.substr(calls + 6, value.find(',', calls) - calls - 6);
  }
  std::cout << "\n";
}

void print_commands() {
  Context admin = connect_raw(g_server.host, g_server.port);
  Context c = connect_raw(g_server.host, g_server.port);
  if (!admin || !c) throw std::runtime_error("cannot connect to the server");
  const at::Tensor t = leaf(kKB);
  auto s = store::TensorDictStore::create(location("bench-commands"));
  s.set("leaf", t);
  auto many = store::TensorDictStore::create(location("bench-commands-1000x16"));
  many.update(small_td());
  const auto keys = small_raw_keys();
  const auto values = small_values();
  raw_set_many(c.get(), keys, values);
  // INFO's own request is one read and one write event: count() subtracts it.
  count(admin.get(), "store set (one leaf)", [&] { s.set("leaf", t); });
  count(admin.get(), "raw SET", [&] { raw_set(c.get(), raw_key("commands"), t); });
  count(admin.get(), "store get (one leaf)", [&] { s.get("leaf"); });
  count(admin.get(), "raw GET", [&] { raw_get(c.get(), raw_key("commands"), kKB / 4); });
  count(admin.get(), "store update (1000 leaves)", [&] { many.update(small_td()); });
  count(admin.get(), "raw pipelined SETs (1000)", [&] { raw_set_many(c.get(), keys, values); });
  count(admin.get(), "store to_local (1000 leaves)", [&] { many.to_local(); });
  count(admin.get(), "raw pipelined GETs (1000)",
        [&] { raw_get_many(c.get(), keys, kSmallFloats); });
  s.clear_redis();
  many.clear_redis();
}

// Deletes what the benchmarks stored (a server given by $TC_BENCH_REDIS outlives us).
void remove_bench_keys() {
  for (const char* id : {"bench-1KB", "bench-1MB", "bench-100MB", "bench-1000x16"}) {
    try {
      store::TensorDictStore::open(location(id)).clear_redis();
    } catch (const tensordict::KeyError&) {  // not written (filtered out)
    }
  }
  Context c = connect_raw(g_server.host, g_server.port);
  if (!c) return;
  std::vector<std::string> del{"DEL", raw_key("commands")};
  for (const Size& size : kSizes) del.push_back(raw_key(size.name));
  for (const auto& k : small_raw_keys()) del.push_back(k);
  const std::string layout = "bench:layout:{x}:";
  del.push_back(layout + "__keys__");
  for (const auto& k : small_td().keys())
    for (const char* kind : {"d:", "m:"}) del.push_back(layout + kind + k.front());
  for (const char* kind : {"d:", "m:"}) del.push_back(layout + kind + "leaf");
  command(c.get(), del);
}

}  // namespace

int main(int argc, char** argv) {
  bool commands = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--commands") == 0)
      commands = true;
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  at::set_num_threads(1);
  // glibc's default mmap threshold moves with the sizes freed so far, so whether a 1MB buffer is
  // fresh pages (faulted in on first touch) or reused heap would depend on which benchmarks ran
  // before (a 1MB raw SET measured 0.4 or 1.2 ms by that alone). Fixed as in bench_ops: buffers
  // up to 64MB come from the heap, which keeps what is freed; 100MB ones are always fresh pages,
  // for both sides of a pair alike.
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  try {
    choose_server();
    if (commands) {
      print_commands();
    } else {
      register_benchmarks();
      benchmark::RunSpecifiedBenchmarks();
    }
    remove_bench_keys();
  } catch (const std::exception& e) {
    std::cerr << "bench_store: " << e.what() << "\n";
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
