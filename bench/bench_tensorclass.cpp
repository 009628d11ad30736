// Typed tensorclass accessors and setters against a plain struct member, construction of a
// 10-field class, and tcgen's throughput on 100 schemas.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "driver/driver.h"
#include "tensorclass_bench.h"

namespace {

struct PlainObs {
  at::Tensor obs;
  at::Tensor reward;
  const at::Tensor& get_obs() const { return obs; }
};

void field_get_tensorclass(benchmark::State& state) {
  bench::Obs o({at::ones({8}), at::zeros({8})}, {8});
  for (auto _ : state) {
    const at::Tensor& t = o.obs();
    benchmark::DoNotOptimize(&t);
  }
}

void field_get_struct(benchmark::State& state) {
  PlainObs o{at::ones({8}), at::zeros({8})};
  for (auto _ : state) {
    benchmark::DoNotOptimize(&o);
    const at::Tensor& t = o.get_obs();
    benchmark::DoNotOptimize(&t);
  }
}

// The floor for any type with reference semantics (copies alias, as a tensorclass's do): the same
// struct behind a shared handle costs one load more than the struct itself.
void field_get_handle(benchmark::State& state) {
  auto o = std::make_shared<PlainObs>(PlainObs{at::ones({8}), at::zeros({8})});
  for (auto _ : state) {
    const at::Tensor& t = o->get_obs();
    benchmark::DoNotOptimize(&t);
  }
}

void field_set_tensorclass(benchmark::State& state) {
  bench::Obs o({at::ones({8}), at::zeros({8})}, {8});
  at::Tensor value = at::full({8}, 2.0);
  for (auto _ : state) {
    o.set_obs(value);
    benchmark::ClobberMemory();
  }
}

void field_set_struct(benchmark::State& state) {
  PlainObs o{at::ones({8}), at::zeros({8})};
  at::Tensor value = at::full({8}, 2.0);
  for (auto _ : state) {
    o.obs = value;
    benchmark::ClobberMemory();
  }
}

// The checked twin of a generated setter: a struct whose setter makes the checks a tensorclass's
// must (a defined tensor, not frozen, the schema's dtype and shape when it declares them, the
// device, the batch's leading dims), taking its argument by value as the generated setter does.
// The constraints are data, as in the class spec, not constants the compiler could fold.
struct CheckedObs {
  at::Tensor obs;
  at::Tensor reward;
  std::vector<int64_t> batch_size{8};
  std::optional<at::Device> device;
  std::optional<at::ScalarType> obs_dtype;        // none declared for Obs.obs
  std::optional<std::vector<int64_t>> obs_shape;  // none declared for Obs.obs
  bool frozen = false;

  CheckedObs& set_obs(at::Tensor value) {
    if (!value.defined()) throw std::invalid_argument("obs: undefined tensor");
    if (frozen) throw std::logic_error("obs: frozen instance");
    if (obs_dtype && value.scalar_type() != *obs_dtype) throw std::invalid_argument("obs: dtype");
    if (obs_shape && !value.sizes().equals(*obs_shape)) throw std::invalid_argument("obs: shape");
    if (device && value.device() != *device) value = value.to(*device);
    const at::IntArrayRef sizes = value.sizes();
    if (sizes.size() < batch_size.size() ||
        !std::equal(batch_size.begin(), batch_size.end(), sizes.begin())) {
      throw std::invalid_argument("obs: batch dims");
    }
    obs = std::move(value);
    return *this;
  }
};

void field_set_checked_struct(benchmark::State& state) {
  CheckedObs o;
  o.obs = at::ones({8});
  o.reward = at::zeros({8});
  at::Tensor value = at::full({8}, 2.0);
  for (auto _ : state) {
    o.set_obs(value);
    benchmark::ClobberMemory();
  }
}

// Non-tensor getters against the same values in a struct (returned by value, as the accessors do).
struct PlainMeta {
  int64_t steps = 42;
  std::string name = "cartpole-v1";
  std::vector<int64_t> ids = std::vector<int64_t>(16, 7);
};

bench::Meta make_meta() {
  const PlainMeta plain;
  return bench::Meta({plain.steps, plain.name, plain.ids});
}

template <class Read>
void value_get(benchmark::State& state, Read read) {
  for (auto _ : state) {
    auto value = read();
    benchmark::DoNotOptimize(value);
  }
}

void value_get_int_tensorclass(benchmark::State& state) {
  const bench::Meta m = make_meta();
  value_get(state, [&] { return m.steps(); });
}
void value_get_int_struct(benchmark::State& state) {
  PlainMeta p;
  benchmark::DoNotOptimize(&p);
  value_get(state, [&] { return p.steps; });
}
void value_get_str_tensorclass(benchmark::State& state) {
  const bench::Meta m = make_meta();
  value_get(state, [&] { return m.name(); });
}
void value_get_str_struct(benchmark::State& state) {
  PlainMeta p;
  benchmark::DoNotOptimize(&p);
  value_get(state, [&] { return p.name; });
}
void value_get_list_tensorclass(benchmark::State& state) {
  const bench::Meta m = make_meta();
  value_get(state, [&] { return m.ids(); });
}
void value_get_list_struct(benchmark::State& state) {
  PlainMeta p;
  benchmark::DoNotOptimize(&p);
  value_get(state, [&] { return p.ids; });
}

void construct_10_fields(benchmark::State& state) {
  std::vector<at::Tensor> t;
  for (int i = 0; i < 10; ++i) t.push_back(at::full({8}, i));
  for (auto _ : state) {
    bench::Wide w({t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9]}, {8});
    benchmark::DoNotOptimize(&w);
  }
}

// The twin of construct_10_fields: the same TensorDict (ten tensors, batch [8]) built by hand.
void construct_10_fields_tensordict(benchmark::State& state) {
  std::vector<at::Tensor> t;
  for (int i = 0; i < 10; ++i) t.push_back(at::full({8}, i));
  for (auto _ : state) {
    tensordict::TensorDict td({{"f0", t[0]},
                               {"f1", t[1]},
                               {"f2", t[2]},
                               {"f3", t[3]},
                               {"f4", t[4]},
                               {"f5", t[5]},
                               {"f6", t[6]},
                               {"f7", t[7]},
                               {"f8", t[8]},
                               {"f9", t[9]}},
                              {8});
    benchmark::DoNotOptimize(&td);
  }
}

// 100 schema files of three classes each, compiled in one run (read, check, emit; no writing).
void tcgen_100_schemas(benchmark::State& state) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "bench_tcgen_schemas";
  fs::create_directories(dir);
  std::vector<std::string> paths;
  for (int i = 0; i < 100; ++i) {
    const fs::path path = dir / ("s" + std::to_string(i) + ".yaml");
    std::ofstream(path) << "namespace: gen" << i << "\nclasses:\n"
                        << "  - name: A" << i << "\n    options: [nocast]\n    fields:\n"
                        << "      - {name: x, type: 'tensor[float32]'}\n"
                        << "      - {name: s, type: str, default: hi}\n"
                        << "  - name: B" << i << "\n    fields:\n"
                        << "      - {name: a, type: A" << i << "}\n"
                        << "      - {name: l, type: 'list[int]', default: [1, 2]}\n"
                        << "  - name: C" << i << "\n    options: [frozen]\n    fields:\n"
                        << "      - {name: b, type: 'optional[B" << i << "]'}\n";
    paths.push_back(path.string());
  }
  for (auto _ : state) {
    tcgen::Compilation c = tcgen::compile(paths, tcgen::builtin_templates());
    if (c.outputs.size() != paths.size()) state.SkipWithError("tcgen failed");
    benchmark::DoNotOptimize(c.outputs.data());
  }
  fs::remove_all(dir);
}

}  // namespace

BENCHMARK(field_get_tensorclass)->Name("BM_field_get/tensorclass");
BENCHMARK(field_get_struct)->Name("BM_field_get/struct");
BENCHMARK(field_get_handle)->Name("BM_field_get/struct_behind_shared_ptr");
BENCHMARK(field_set_tensorclass)->Name("BM_field_set/tensorclass");
BENCHMARK(field_set_struct)->Name("BM_field_set/struct");
BENCHMARK(field_set_checked_struct)->Name("BM_field_set/checked_struct");
BENCHMARK(value_get_int_tensorclass)->Name("BM_value_get_int/tensorclass");
BENCHMARK(value_get_int_struct)->Name("BM_value_get_int/struct");
BENCHMARK(value_get_str_tensorclass)->Name("BM_value_get_str/tensorclass");
BENCHMARK(value_get_str_struct)->Name("BM_value_get_str/struct");
BENCHMARK(value_get_list_tensorclass)->Name("BM_value_get_list/tensorclass");
BENCHMARK(value_get_list_struct)->Name("BM_value_get_list/struct");
BENCHMARK(construct_10_fields)->Name("BM_construct/tensorclass_10_fields");
BENCHMARK(construct_10_fields_tensordict)->Name("BM_construct/tensordict_10_fields");
BENCHMARK(tcgen_100_schemas)->Name("BM_tcgen/100_schemas")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
