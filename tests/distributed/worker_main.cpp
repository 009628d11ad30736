// dist_worker <scenario> <rank> <size> <file:PATH | tcp:PORT>: joins a Gloo group and runs the
// scenario; exit 0 on success, 1 with the reason on stderr.
#include <algorithm>
#include <iostream>

#include "worker.h"

namespace dist_test {

std::map<std::string, Scenario>& scenarios() {
  static std::map<std::string, Scenario> all;
  return all;
}

namespace {
std::string g_shared_dir;
}

const std::string& shared_dir() {
  if (g_shared_dir.empty()) throw std::runtime_error("this scenario needs a file store");
  return g_shared_dir;
}

void fail(const std::string& what, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what);
}

tensordict::TensorDict sample(double seed) {
  using tensordict::TensorDict;
  TensorDict td({{"a", at::arange(6, at::kFloat).reshape({2, 3}) + seed},
                 {"nest", TensorDict({{"b", at::arange(2, at::kLong) + int64_t(seed)},
                                      {"c", at::ones({2, 4}, at::kBool)}},
                                     {2})},
                 {"z_first_inserted", at::full({2}, seed, at::kDouble)}},
                {2});
  td.set("note", "seed " + std::to_string(static_cast<int>(seed)));
  return td;
}

tensordict::dist::CommOptions opts(int64_t init_tag, bool check, bool consolidated) {
  tensordict::dist::CommOptions o;
  o.init_tag = init_tag;
  o.check = check;
  o.consolidated = consolidated;
  return o;
}

tensordict::TensorDict with_stack(double seed) {
  tensordict::TensorDict td = sample(seed);
  td.set("tags", tensordict::NonTensorStack::from_list(tensordict::Json::array({"x", "y"}), 1));
  return td;
}

bool same(const tensordict::TensorDict& a, const tensordict::TensorDict& b) {
  // Key order aside: Python's metadata lists non-tensor data, then tensors, then nested
  // TensorDicts, and a TensorDict rebuilt from it keeps that order.
  auto ka = a.keys(true, true);
  auto kb = b.keys(true, true);
  std::sort(ka.begin(), ka.end());
  std::sort(kb.begin(), kb.end());
  if (ka != kb) return false;
  for (const auto& key : ka) {
    const auto va = a.get_value(key);
    const auto vb = b.get_value(key);
    if (va.kind() != vb.kind()) return false;
    if (va.is_tensor() && !(va.tensor().sizes() == vb.tensor().sizes() &&
                            va.tensor().scalar_type() == vb.tensor().scalar_type() &&
                            va.tensor().equal(vb.tensor()))) {
      return false;
    }
    if (va.is_non_tensor_data() && !(va.non_tensor_data() == vb.non_tensor_data())) return false;
  }
  return a.batch_size() == b.batch_size();
}

}  // namespace dist_test

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: dist_worker <scenario> <rank> <size> <file:PATH|tcp:PORT>\n";
    return 2;
  }
  const std::string name = argv[1];
  const int rank = std::stoi(argv[2]);
  const int size = std::stoi(argv[3]);
  const std::string store = argv[4];
  try {
    auto it = dist_test::scenarios().find(name);
    if (it == dist_test::scenarios().end()) throw std::runtime_error("unknown scenario " + name);
    // A Python rank (scenarios python_*) takes seconds to import torch before it joins.
    const auto timeout = std::chrono::milliseconds(name.rfind("python_", 0) == 0 ? 30000 : 10000);
    if (store.rfind("file:", 0) == 0) {
      dist_test::g_shared_dir = store.substr(5, store.rfind('/') - 5);
    }
    auto group = store.rfind("tcp:", 0) == 0
                     ? tensordict::dist::Group::tcp("127.0.0.1", std::stoi(store.substr(4)), rank,
                                                    size, timeout)
                     : tensordict::dist::Group::file(store.substr(5), rank, size, timeout);
    it->second(group);
  } catch (const std::exception& e) {
    std::cerr << "dist_worker " << name << " rank " << rank << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
