// TensorDict ops against the floor: the same work written by hand over a std::vector<at::Tensor>.
// Every op is registered twice, BM_<op>/tensordict/<leaves> and BM_<op>/raw/<leaves>, so that one
// JSON run gives the ratios (bench/ratios.py). Leaves are float32 [64, 16], batch [64].
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensordict/tensordict.h"

namespace {

using tensordict::NestedKey;
using tensordict::TensorDict;
using Tensors = std::vector<at::Tensor>;
constexpr int64_t kBatch = 64;
constexpr int64_t kFeatures = 16;

// A hand-written dictionary: what the raw twins of the key-bookkeeping ops use (a name -> slot
// map next to the vector, and the batch-dims check a container must make).
struct RawDict {
  std::unordered_map<std::string, size_t> index;
  Tensors values;
};

bool leading_dims_ok(const at::Tensor& t, int64_t batch) {
  return t.dim() >= 1 && t.size(0) == batch;
}

struct Data {
  int64_t n;
  std::vector<std::string> names;
  std::vector<NestedKey> keys;         // "key_i"
  std::vector<NestedKey> nested_keys;  // ("nested", "key_i")
  Tensors raw;
  TensorDict td;
  std::vector<Tensors> raws8;
  std::vector<TensorDict> tds8;
  RawDict dict;
  std::unordered_map<std::string, RawDict> nested_dict;
  TensorDict nested_td;

  explicit Data(int64_t leaves) : n(leaves), td({}, {kBatch}) {
    for (int64_t i = 0; i < n; ++i) {
      names.push_back("key_" + std::to_string(i));
      keys.emplace_back(names.back());
      nested_keys.push_back(NestedKey{"nested", names.back()});
      raw.push_back(at::randn({kBatch, kFeatures}));
      td.set(keys.back(), raw.back());
      dict.index.emplace(names.back(), static_cast<size_t>(i));
      dict.values.push_back(raw.back());
    }
    nested_dict.emplace("nested", dict);
    nested_td = TensorDict({}, {kBatch});
    nested_td.set("nested", td.clone(false));
    for (int k = 0; k < 8; ++k) {
      tds8.push_back(td.clone());
      Tensors copy;
      for (const auto& key : keys) copy.push_back(tds8.back().get(key));
      raws8.push_back(std::move(copy));
    }
  }
};

Data& data(int64_t leaves) {
  static Data ten(10);
  static Data hundred(100);
  return leaves == 10 ? ten : hundred;
}

// Raw twins of the per-leaf ops: map every tensor into a new vector.
template <class F>
void raw_map(benchmark::State& state, const Data& d, F&& f) {
  for (auto _ : state) {
    Tensors out;
    out.reserve(d.raw.size());
    for (const auto& t : d.raw) out.push_back(f(t));
    benchmark::DoNotOptimize(out.data());
  }
}

template <class F>
void td_run(benchmark::State& state, F&& f) {
  for (auto _ : state) {
    auto out = f();
    benchmark::DoNotOptimize(out);
  }
}

// Concatenation-like raw twins: per leaf, an op over the 8 inputs' tensors.
template <class F>
void raw_combine(benchmark::State& state, const Data& d, F&& f) {
  std::vector<at::Tensor> parts(8);
  for (auto _ : state) {
    Tensors out;
    out.reserve(d.raw.size());
    for (size_t i = 0; i < d.raw.size(); ++i) {
      for (size_t k = 0; k < 8; ++k) parts[k] = d.raws8[k][i];
      out.push_back(f(parts));
    }
    benchmark::DoNotOptimize(out.data());
  }
}

using Bench = std::function<void(benchmark::State&, Data&)>;

struct Op {
  const char* name;
  Bench tensordict;
  Bench raw;
};

const at::Tensor& index16() {
  static const at::Tensor idx = at::randint(kBatch, {16}, at::kLong);
  return idx;
}

std::vector<Op> ops() {
  using tensordict::Slice;
  return {
      {"index_int", [](auto& s, Data& d) { td_run(s, [&] { return d.td[3]; }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t[3]; }); }},
      {"slice", [](auto& s, Data& d) { td_run(s, [&] { return d.td.index({Slice(0, 32)}); }); },
       [](auto& s, Data& d) {
         raw_map(s, d, [](const at::Tensor& t) { return t.slice(0, 0, 32); });
       }},
      {"index_tensor", [](auto& s, Data& d) { td_run(s, [&] { return d.td.index({index16()}); }); },
       [](auto& s, Data& d) {
         raw_map(s, d, [](const at::Tensor& t) { return t.index_select(0, index16()); });
       }},
      // Math: TensorDict arithmetic and reductions against the per-leaf loop.
      {"mul_scalar", [](auto& s, Data& d) { td_run(s, [&] { return d.td * 2; }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t * 2; }); }},
      {"add_td", [](auto& s, Data& d) { td_run(s, [&] { return d.td + d.tds8[1]; }); },
       [](auto& s, Data& d) {
         for (auto _ : s) {
           Tensors out;
           out.reserve(d.raw.size());
           for (size_t i = 0; i < d.raw.size(); ++i) out.push_back(d.raw[i] + d.raws8[1][i]);
           benchmark::DoNotOptimize(out.data());
         }
       }},
      {"sum", [](auto& s, Data& d) { td_run(s, [&] { return d.td.sum(); }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t.sum(); }); }},
      {"mul_scalar_", [](auto& s, Data& d) { td_run(s, [&] { return &d.td.mul_(1.0); }); },
       [](auto& s, Data& d) {
         for (auto _ : s) {
           for (auto& t : d.raw) t.mul_(1.0);
           benchmark::ClobberMemory();
         }
       }},
      {"exp", [](auto& s, Data& d) { td_run(s, [&] { return d.td.exp(); }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t.exp(); }); }},
      {"neg", [](auto& s, Data& d) { td_run(s, [&] { return d.td.neg(); }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t.neg(); }); }},
      // One norm over every leaf: the raw loop takes each leaf's norm, then the norm of those.
      {"norm",
       [](auto& s, Data& d) { td_run(s, [&] { return d.td.norm(tensordict::reduce_all); }); },
       [](auto& s, Data& d) {
         for (auto _ : s) {
           Tensors norms;
           norms.reserve(d.raw.size());
           for (const auto& t : d.raw) norms.push_back(t.norm());
           benchmark::DoNotOptimize(at::stack(norms).norm());
         }
       }},
      {"stack8", [](auto& s, Data& d) { td_run(s, [&] { return tensordict::stack(d.tds8, 0); }); },
       [](auto& s, Data& d) {
         raw_combine(s, d, [](at::TensorList ts) { return at::stack(ts, 0); });
       }},
      {"cat8", [](auto& s, Data& d) { td_run(s, [&] { return tensordict::cat(d.tds8, 0); }); },
       [](auto& s, Data& d) {
         raw_combine(s, d, [](at::TensorList ts) { return at::cat(ts, 0); });
       }},
      {"clone", [](auto& s, Data& d) { td_run(s, [&] { return d.td.clone(); }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t.clone(); }); }},
      {"apply",
       [](auto& s, Data& d) {
         td_run(s, [&] { return d.td.apply([](const at::Tensor& t) { return t + 1; }); });
       },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t + 1; }); }},
      {"reshape", [](auto& s, Data& d) { td_run(s, [&] {
                                           return d.td.reshape({8, 8});
                                         }); },
       [](auto& s, Data& d) {
         raw_map(s, d, [](const at::Tensor& t) { return t.reshape({8, 8, kFeatures}); });
       }},
      {"unsqueeze", [](auto& s, Data& d) { td_run(s, [&] { return d.td.unsqueeze(0); }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t.unsqueeze(0); }); }},
      {"to_double", [](auto& s, Data& d) { td_run(s, [&] { return d.td.to(at::kDouble); }); },
       [](auto& s, Data& d) {
         raw_map(s, d, [](const at::Tensor& t) { return t.to(at::kDouble); });
       }},
      {"update",
       [](auto& s, Data& d) {
         TensorDict dst = d.td.clone(false);
         for (auto _ : s) benchmark::DoNotOptimize(&dst.update(d.tds8[0]));
       },
       [](auto& s, Data& d) {
         RawDict dst = d.dict;
         for (auto _ : s) {
           for (size_t i = 0; i < d.names.size(); ++i) {  // by name, as update does
             const at::Tensor& t = d.raws8[0][i];
             if (!leading_dims_ok(t, kBatch)) throw std::runtime_error("bad shape");
             dst.values[dst.index.at(d.names[i])] = t;
           }
           benchmark::DoNotOptimize(dst.values.data());
         }
       }},
      {"get_nested",
       [](auto& s, Data& d) {
         for (auto _ : s)
           for (const auto& key : d.nested_keys) benchmark::DoNotOptimize(d.nested_td.get(key));
       },
       [](auto& s, Data& d) {
         for (auto _ : s) {
           for (const auto& name : d.names) {
             const RawDict& inner = d.nested_dict.at("nested");
             benchmark::DoNotOptimize(at::Tensor(inner.values[inner.index.at(name)]));
           }
         }
       }},
      {"set",
       [](auto& s, Data& d) {
         TensorDict dst = d.td.clone(false);
         for (auto _ : s)
           for (size_t i = 0; i < d.keys.size(); ++i)
             benchmark::DoNotOptimize(&dst.set(d.keys[i], d.raws8[1][i]));
       },
       [](auto& s, Data& d) {
         RawDict dst = d.dict;
         for (auto _ : s) {
           for (size_t i = 0; i < d.names.size(); ++i) {
             const at::Tensor& t = d.raws8[1][i];
             if (!leading_dims_ok(t, kBatch)) throw std::runtime_error("bad shape");
             dst.values[dst.index.at(d.names[i])] = t;
           }
           benchmark::DoNotOptimize(dst.values.data());
         }
       }},
      {"get",
       [](auto& s, Data& d) {
         for (auto _ : s)
           for (const auto& key : d.keys) benchmark::DoNotOptimize(d.td.get(key));
       },
       [](auto& s, Data& d) {
         for (auto _ : s)
           for (const auto& name : d.names)
             benchmark::DoNotOptimize(at::Tensor(d.dict.values[d.dict.index.at(name)]));
       }},
      {"keys", [](auto& s, Data& d) { td_run(s, [&] { return d.td.keys(); }); },
       [](auto& s, Data& d) {
         for (auto _ : s) {
           std::vector<std::string> out(d.names.begin(), d.names.end());
           benchmark::DoNotOptimize(out.data());
         }
       }},
      // The container's own cost: a new TensorDict sharing every tensor (no tensor op at all).
      {"structure", [](auto& s, Data& d) { td_run(s, [&] { return d.td.clone(false); }); },
       [](auto& s, Data& d) { raw_map(s, d, [](const at::Tensor& t) { return t; }); }},
      // Copy into an existing TensorDict of the same layout (update_), leaf by leaf.
      {"copy",
       [](auto& s, Data& d) {
         TensorDict dst = d.td.clone();
         for (auto _ : s) benchmark::DoNotOptimize(&dst.update_(d.tds8[2]));
       },
       [](auto& s, Data& d) {
         Tensors dst;
         for (const auto& t : d.raw) dst.push_back(t.clone());
         for (auto _ : s) {
           for (size_t i = 0; i < dst.size(); ++i) dst[i].copy_(d.raws8[2][i]);
           benchmark::DoNotOptimize(dst.data());
         }
       }},
  };
}

// Consolidated variants: one flat buffer moved, or one kernel run over it (fused math), instead
// of one per leaf.
std::vector<std::pair<const char*, Bench>> consolidated_ops() {
  return {
      {"mul_scalar",
       [](auto& s, Data& d) {
         const TensorDict c = d.td.consolidate();
         td_run(s, [&] { return c * 2; });
       }},
      {"add_td",
       [](auto& s, Data& d) {
         const TensorDict a = d.td.consolidate();
         const TensorDict b = d.tds8[1].consolidate();
         td_run(s, [&] { return a + b; });
       }},
      {"mul_scalar_",
       [](auto& s, Data& d) {
         TensorDict c = d.td.consolidate();
         td_run(s, [&] { return &c.mul_(1.0); });
       }},
      {"exp",
       [](auto& s, Data& d) {
         const TensorDict c = d.td.consolidate();
         td_run(s, [&] { return c.exp(); });
       }},
      {"neg",
       [](auto& s, Data& d) {
         const TensorDict c = d.td.consolidate();
         td_run(s, [&] { return c.neg(); });
       }},
      {"norm",
       [](auto& s, Data& d) {
         const TensorDict c = d.td.consolidate();
         td_run(s, [&] { return c.norm(tensordict::reduce_all); });
       }},
      {"clone",
       [](auto& s, Data& d) {
         const TensorDict c = d.td.consolidate();
         td_run(s, [&] { return c.clone(); });
       }},
      {"copy",
       [](auto& s, Data& d) {
         TensorDict dst = d.td.consolidate();
         const TensorDict src = d.tds8[2].consolidate();
         for (auto _ : s) benchmark::DoNotOptimize(&dst.update_(src));
       }},
  };
}

// The floor of fused math: one kernel over a tensor of every leaf's elements (no TensorDict).
std::vector<std::pair<const char*, Bench>> kernel_floors() {
  auto flat = [](const Data& d) {
    Tensors parts;
    for (const auto& t : d.raw) parts.push_back(t.reshape({-1}));
    return at::cat(parts);
  };
  return {
      {"exp",
       [flat](auto& s, Data& d) {
         const at::Tensor all = flat(d);
         td_run(s, [&] { return all.exp(); });
       }},
      {"neg",
       [flat](auto& s, Data& d) {
         const at::Tensor all = flat(d);
         td_run(s, [&] { return all.neg(); });
       }},
      {"add_td",
       [flat](auto& s, Data& d) {
         const at::Tensor a = flat(d), b = flat(d);
         td_run(s, [&] { return a + b; });
       }},
  };
}

void register_all() {
  for (int64_t leaves : {10, 100}) {
    const std::string suffix = "/" + std::to_string(leaves);
    for (const Op& op : ops()) {
      const std::string base = std::string("BM_") + op.name;
      benchmark::RegisterBenchmark(
          (base + "/tensordict" + suffix).c_str(),
          [op, leaves](benchmark::State& s) { op.tensordict(s, data(leaves)); });
      benchmark::RegisterBenchmark((base + "/raw" + suffix).c_str(),
                                   [op, leaves](benchmark::State& s) { op.raw(s, data(leaves)); });
    }
    for (const auto& [variant, benches] :
         {std::pair{"/consolidated", consolidated_ops()}, std::pair{"/kernel", kernel_floors()}}) {
      for (const auto& [name, fn] : benches) {
        const std::string label = std::string("BM_") + name + variant + suffix;
        benchmark::RegisterBenchmark(
            label.c_str(), [fn = fn, leaves](benchmark::State& s) { fn(s, data(leaves)); });
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // tiny leaves; keeps both sides on one core of a shared machine
  // glibc returns the heap top to the kernel when a large enough block is freed; depending on the
  // order of frees, one side of a pair would then page-fault its outputs back in every iteration
  // (cat8/100 measured 7x slower that way). Keep freed memory for both sides alike.
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
