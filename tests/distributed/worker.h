#pragma once
// The worker side of the multi-process tests: scenarios register by name and run on every rank
// with a Gloo group; a failed expectation throws, and the worker exits 1 with the message.
#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "tensordict/distributed.h"

namespace dist_test {

using Scenario = std::function<void(tensordict::dist::Group&)>;
std::map<std::string, Scenario>& scenarios();

struct Register {
  Register(const std::string& name, Scenario fn) { scenarios()[name] = std::move(fn); }
};

[[noreturn]] void fail(const std::string& what, const char* file, int line);

/// Runs `fn`, which must throw E with exactly `message`.
template <class E, class F>
void expect_throw(F&& fn, const std::string& message, const char* file, int line) {
  try {
    fn();
  } catch (const E& e) {
    if (e.what() != message) fail("wrong message: " + std::string(e.what()), file, line);
    return;
  }
  fail("no exception (expected: " + message + ")", file, line);
}

/// A directory every rank of a file-store run shares (the store's), removed by the launcher.
const std::string& shared_dir();

/// A nested TensorDict with non-tensor data, values made from `seed`.
tensordict::TensorDict sample(double seed);
/// CommOptions with these fields (the others default).
tensordict::dist::CommOptions opts(int64_t init_tag, bool check, bool consolidated);
/// sample(seed) with a NonTensorStack "tags" of ["x", "y"].
tensordict::TensorDict with_stack(double seed);
bool same(const tensordict::TensorDict& a, const tensordict::TensorDict& b);

}  // namespace dist_test

#define DT_CONCAT2(a, b) a##b
#define DT_CONCAT(a, b) DT_CONCAT2(a, b)
// One function and its registration per scenario, named by __COUNTER__ (unique in a unity build,
// where __LINE__ repeats across files).
#define SCENARIO_FN(name) DT_SCENARIO_FN(name, __COUNTER__)
#define DT_SCENARIO_FN(name, id)                                                        \
  static void DT_CONCAT(scenario_, id)(tensordict::dist::Group&);                       \
  static const dist_test::Register DT_CONCAT(reg_, id)(name, DT_CONCAT(scenario_, id)); \
  static void DT_CONCAT(scenario_, id)(tensordict::dist::Group & group)
#define EXPECT(cond) ((cond) ? void() : dist_test::fail("expected: " #cond, __FILE__, __LINE__))
#define EXPECT_THROW_MSG(E, expr, msg) \
  dist_test::expect_throw<E>([&] { expr; }, msg, __FILE__, __LINE__)
