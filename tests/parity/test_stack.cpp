// Ports of Python tensordict v0.14.0's tests of stacking onto an existing TensorDict
// (test_methods.py: test_stack_onto, test_stack_subclasses_on_td, test_stack_tds_on_subclass,
// where Python's `lazy_stack(..., out=td)` and `torch.stack(..., out=td)` are stack_out) and of
// dense_stack_tds (test_generic.py).
#include <ATen/ATen.h>

#include <set>

#include "parity_fixtures.h"

using namespace tensordict;

namespace {

// Every tensor leaf, lazy stacks' elements included (Python's decompose).
std::vector<at::Tensor> leaves(const TensorDict& td) {
  std::vector<at::Tensor> out;
  auto add = [&out](const std::vector<at::Tensor>& more) {
    out.insert(out.end(), more.begin(), more.end());
  };
  if (td.is_lazy_stack()) {
    for (const auto& element : td.tensordicts()) add(leaves(element));
    return out;
  }
  for (const auto& key : td.keys()) {
    const Value value = td.get_value(key);
    if (value.is_tensordict()) add(leaves(value.tensordict()));
    if (const at::Tensor* t = value.tensor_if()) out.push_back(*t);
  }
  return out;
}

// Python's {val.data_ptr() for val in decompose(td)}.
std::multiset<const void*> data_ptrs(const TensorDict& td) {
  std::multiset<const void*> out;
  for (const auto& t : leaves(td)) out.insert(t.data_ptr());
  return out;
}

// Same batch size, the same lazy structure, and equal leaves in the same order.
bool same_content(const TensorDict& a, const TensorDict& b) {
  if (a.batch_size() != b.batch_size() || a.is_lazy_stack() != b.is_lazy_stack()) return false;
  const auto la = leaves(a), lb = leaves(b);
  if (la.size() != lb.size()) return false;
  for (size_t i = 0; i < la.size(); ++i)
    if (!at::equal(la[i], lb[i])) return false;
  return true;
}

BatchSize with_dim(BatchSize batch, size_t at, int64_t size) {
  batch.insert(batch.begin() + static_cast<std::ptrdiff_t>(at), size);
  return batch;
}

}  // namespace

TEST_CASE("test_methods: test_stack_onto", "[parity][methods]") {
  PARITY_FIXTURE();
  TensorDict td0 = td.clone();
  td0.apply_([](const at::Tensor& x) { return x.zero_(); });
  TensorDict td1 = td.clone();
  td1.apply_([](const at::Tensor& x) { return x.zero_() + 1; });
  TensorDict td_out = td.unsqueeze(1).expand(with_dim(td.batch_size(), 1, 2)).clone();
  const auto before = data_ptrs(td_out);
  const TensorDict td_stack = stack_out(td_out, {td0.detach(), td1.detach()}, 1);
  CHECK(data_ptrs(td_out) == before);
  CHECK((td_stack == td_out).all());
  CHECK((td_out.index({Slice(), 0}) == 0).all());
  CHECK((td_out.index({Slice(), 1}) == 1).all());
}

TEST_CASE("test_methods: test_stack_subclasses_on_td", "[parity][methods]") {
  PARITY_FIXTURE();
  td = td.expand(with_dim(td.batch_size(), 0, 3)).clone().zero_();
  std::vector<TensorDict> tds_list;
  for (int i = 0; i < 3; ++i) tds_list.push_back(parity::make(td_name));
  const auto before = data_ptrs(td);
  const TensorDict& stacked_td = stack_out(td, tds_list, 0);
  CHECK(data_ptrs(td) == before);
  CHECK(stacked_td.batch_size() == td.batch_size());
  const TensorDict expected = stack(tds_list, 0);
  for (const char* key : {"a", "b", "c"}) {
    INFO(key);
    CHECK((stacked_td[key] == td[key]).all().item<bool>());
    CHECK(at::equal(stacked_td[key], expected[key]));
  }
}

TEST_CASE("test_methods: test_stack_tds_on_subclass", "[parity][methods]") {
  PARITY_FIXTURE();
  const int64_t tds_count = td.batch_size()[0];
  const BatchSize tds_batch_size(td.batch_size().begin() + 1, td.batch_size().end());
  auto shape = [&](int64_t feature) {
    return with_dim(tds_batch_size, tds_batch_size.size(), feature);
  };
  std::vector<TensorDict> tds_list;
  for (int64_t i = 0; i < tds_count; ++i) {
    tds_list.push_back(TensorDict({{"a", at::ones(shape(5))},
                                   {"b", at::ones(shape(10))},
                                   {"c", at::ones(shape(3), at::kLong)}},
                                  tds_batch_size, at::Device(at::kCPU)));
  }
  const auto before = data_ptrs(td);
  const TensorDict& stacked_td = stack_out(td, tds_list, 0);
  CHECK(data_ptrs(td) == before);
  CHECK(stacked_td.batch_size() == td.batch_size());
  CHECK(stacked_td.is_same(td));
  for (const char* key : {"a", "b", "c"}) {
    INFO(key);
    CHECK((stacked_td[key] == 1).all().item<bool>());
  }
}

TEST_CASE("test_generic: test_dense_stack_tds", "[parity][generic]") {
  const int64_t stack_dim = GENERATE(0, 1, 2, 3);
  const int64_t nested_stack_dim = GENERATE(0, 1, 2);
  INFO("stack_dim " << stack_dim << " nested_stack_dim " << nested_stack_dim);
  const BatchSize batch_size{5, 6};
  const TensorDict td0({{"a", at::zeros({5, 6, 3})}}, batch_size);
  const TensorDict td1({{"a", at::zeros({5, 6, 4})}, {"b", at::zeros({5, 6, 2})}}, batch_size);
  const TensorDict td_lazy = lazy_stack({td0, td1}, nested_stack_dim);
  const TensorDict td_container({{"lazy", td_lazy}}, td_lazy.batch_size());
  TensorDict td_container_clone = td_container.clone();
  td_container_clone.apply_([](const at::Tensor& x) { return x + 1; });

  CHECK(td_lazy.stack_dim() == nested_stack_dim);
  const TensorDict td_stack = lazy_stack({td_container, td_container_clone}, stack_dim);
  CHECK(td_stack.stack_dim() == stack_dim);
  CHECK(td_stack.is_lazy_stack());
  const TensorDict dense_td_stack = dense_stack_tds(td_stack);
  CHECK_FALSE(dense_td_stack.is_lazy_stack());  // the outer layer is dense
  const TensorDict inner = dense_td_stack.get_tensordict("lazy");
  REQUIRE(inner.is_lazy_stack());  // while the inner layer is still lazy
  CHECK_FALSE(inner.tensordicts()[0].contains("b"));
  CHECK(inner.tensordicts()[1].contains("b"));

  // The same from a list as from a lazy stack.
  CHECK(
      same_content(dense_td_stack, dense_stack_tds({td_container, td_container_clone}, stack_dim)));
  for (int64_t i = 0; i < 2; ++i) {
    INFO("index " << i);
    Index index(static_cast<size_t>(stack_dim), Slice());
    index.emplace_back(i);
    for (const auto& leaf : leaves(dense_td_stack.index(index)))
      CHECK((leaf == i).all().item<bool>());
  }
  CHECK(inner.stack_dim() ==
        (stack_dim > nested_stack_dim ? nested_stack_dim : nested_stack_dim + 1));
}
