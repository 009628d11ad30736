#pragma once
// The three TensorDicts the port of Python tensordict's own tests (v0.14.0,
// test/tensordict/test_methods.py, test_generic.py, test_errors.py) runs each test on: the
// fixtures `td`, `nested_td` and `stacked_td` of Python's TestTensorDictsBase
// (test/_utils_internal.py), with the same keys, shapes and dtypes (random values, as there).
#include <ATen/ATen.h>
#include <c10/util/intrusive_ptr.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "catch2_compat.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/tensordict.h"

namespace parity {

using namespace tensordict;

/// Whether `keys` (a keys() result) holds `key`.
inline bool has_key(const std::vector<NestedKey>& keys, const NestedKey& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// `keys` as a set, for comparisons that ignore order.
inline std::set<NestedKey> key_set(const std::vector<NestedKey>& keys) {
  return {keys.begin(), keys.end()};
}

/// Python's `td`: batch [4, 3, 2, 1]; "a" float [.., 5], "b" float [.., 10], "c" long [.., 3].
inline TensorDict make_td() {
  return TensorDict({{"a", at::randn({4, 3, 2, 1, 5})},
                     {"b", at::randn({4, 3, 2, 1, 10})},
                     {"c", at::randint(10, {4, 3, 2, 1, 3})}},
                    {4, 3, 2, 1}, at::Device(at::kCPU));
}

/// Python's `nested_td`: `td` with "my_nested_td", a TensorDict (batch [4, 3, 2, 1]) holding
/// "inner", float [.., 2].
inline TensorDict make_nested_td() {
  return TensorDict(
      {{"a", at::randn({4, 3, 2, 1, 5})},
       {"b", at::randn({4, 3, 2, 1, 10})},
       {"c", at::randint(10, {4, 3, 2, 1, 3})},
       {"my_nested_td", TensorDict({{"inner", at::randn({4, 3, 2, 1, 2})}}, {4, 3, 2, 1})}},
      {4, 3, 2, 1}, at::Device(at::kCPU));
}

/// Python's `stacked_td`: a LazyStackedTensorDict of two TensorDicts of batch [4, 3, 1] ("a",
/// "b", "c" as in `td`) stacked along dim 2: batch [4, 3, 2, 1].
inline TensorDict make_stacked_td() {
  auto element = [] {
    return TensorDict({{"a", at::randn({4, 3, 1, 5})},
                       {"b", at::randn({4, 3, 1, 10})},
                       {"c", at::randint(10, {4, 3, 1, 3})}},
                      {4, 3, 1}, at::Device(at::kCPU));
  };
  return lazy_stack({element(), element()}, 2);
}

/// The fixture named `name` ("td", "nested_td" or "stacked_td").
inline TensorDict make(const std::string& name) {
  if (name == "td") return make_td();
  if (name == "nested_td") return make_nested_td();
  if (name == "stacked_td") return make_stacked_td();
  throw std::invalid_argument("no fixture " + name);
}

/// Python's to_tensordict(): a dense copy of the data (lazy stacks stacked).
inline TensorDict to_tensordict(const TensorDict& td) { return td.densify().clone(); }

/// Python's assert_allclose_td for these fixtures: same keys, batch size and close values.
inline bool allclose_td(const TensorDict& a, const TensorDict& b) {
  if (a.batch_size() != b.batch_size()) return false;
  const auto keys = a.keys(true, true, true);
  if (keys != b.keys(true, true, true)) return false;
  for (const auto& key : keys) {
    const at::Tensor x = a.get(key), y = b.get(key);
    if (x.sizes() != y.sizes() || !at::allclose(x.to(at::kDouble), y.to(at::kDouble))) return false;
  }
  return true;
}

/// Python's TestGeneric._build_nested_td(batch_size=(3, 4), feat=(5,)).
inline TensorDict build_nested_td() {
  return TensorDict(
      {{"a", at::arange(3 * 4 * 5).view({3, 4, 5}).to(at::kFloat)},
       {"nested",
        TensorDict({{"b", at::arange(3 * 4 * 2).view({3, 4, 2}).to(at::kFloat)}}, {3, 4})}},
      {3, 4});
}

/// A weak reference to `t`'s storage: expired once no tensor uses that memory any more (Python's
/// weakref.ref(tensor)() is None once the leaf is gone).
inline c10::weak_intrusive_ptr<c10::StorageImpl> weak_storage(const at::Tensor& t) {
  return c10::weak_intrusive_ptr<c10::StorageImpl>(
      c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(t.storage().unsafeGetStorageImpl()));
}

/// Product of a shape (Python's prod).
inline int64_t prod(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

}  // namespace parity

/// Runs the rest of the test case once per fixture: `td` is a fresh fixture, `td_name` its
/// Python name (reported by every failing check).
#define PARITY_FIXTURE()                                                                    \
  const std::string td_name = GENERATE(as<std::string>{}, "td", "nested_td", "stacked_td"); \
  INFO("fixture " << td_name);                                                              \
  at::manual_seed(1);                                                                       \
  ::tensordict::TensorDict td = ::parity::make(td_name)
