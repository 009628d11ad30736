// Element-wise comparison of TensorDicts and the all()/any() reductions.
#include <ATen/ATen.h>

#include "core/lazy_state.h"
#include "core/tensordict_impl.h"

namespace tensordict {
namespace {

at::Tensor full_bool(const BatchSize& batch, bool value) {
  return at::full(batch, value, at::TensorOptions().dtype(at::kBool));
}

// A bool tensor of the stack's shape: item-wise equality.
at::Tensor compare_stacks(const NonTensorStack& a, const NonTensorStack& b) {
  if (a.shape() != b.shape()) {
    throw ShapeError("cannot compare NonTensorStacks of shapes " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  }
  auto out = at::empty({a.numel()}, at::TensorOptions().dtype(at::kBool));
  auto* data = out.data_ptr<bool>();
  for (int64_t i = 0; i < a.numel(); ++i)
    data[i] = a.items()[static_cast<size_t>(i)] == b.items()[static_cast<size_t>(i)];
  return out.view(a.shape());
}

Value compare_entries(const std::string& key, const Value& a, const Value& b,
                      const BatchSize& batch) {
  if (a.is_tensor() && b.is_tensor()) return a.tensor() == b.tensor();
  if (a.is_tensordict() && b.is_tensordict()) return a.tensordict() == b.tensordict();
  if (a.is_non_tensor_data() && b.is_non_tensor_data()) {
    return full_bool(batch, a.non_tensor_data() == b.non_tensor_data());
  }
  if (a.is_non_tensor() && b.is_non_tensor()) {
    auto as_stack = [&](const Value& v) {
      return v.is_non_tensor_stack() ? v.non_tensor_stack()
                                     : NonTensorStack::filled(batch, v.non_tensor_data().data);
    };
    return compare_stacks(as_stack(a), as_stack(b));
  }
  throw TypeError("cannot compare key '" + key + "': a " + a.kind_name() + " with a " +
                  b.kind_name());
}

bool reduce(const TensorDict& td, bool want_all) {
  for (const auto& value : td.values(true, true)) {
    if (!value.is_tensor()) continue;
    const bool r = want_all ? value.tensor().all().item<bool>() : value.tensor().any().item<bool>();
    if (r != want_all) return r;
  }
  return want_all;
}

}  // namespace

TensorDict TensorDict::operator==(const TensorDict& other) const {
  if (impl_->lazy) {  // element by element, as Python
    return detail::lazy::zip_elements(
        *this, other.unbind(stack_dim()),
        [](const TensorDict& element, const TensorDict& row) { return element == row; },
        "operator==");
  }
  if (other.is_lazy_stack()) return *this == other.densify();
  TensorDict out = detail::empty_result_of(*this);
  for (size_t i = 0; i < impl_->keys.size(); ++i) {
    const std::string& key = impl_->keys[i];
    const int64_t slot = other.impl_->find(key);
    if (slot < 0)
      throw KeyError("cannot compare TensorDicts: key '" + key + "' missing on the right");
    detail::impl_of(out).append(
        key, compare_entries(key, impl_->values[i], other.impl_->values[static_cast<size_t>(slot)],
                             impl_->batch_size));
  }
  if (other.size() != size()) {
    for (const auto& key : other.impl_->keys) {
      if (impl_->find(key) < 0) {
        throw KeyError("cannot compare TensorDicts: key '" + key + "' missing on the left");
      }
    }
  }
  return out;
}

TensorDict TensorDict::operator!=(const TensorDict& other) const {
  return detail::map_entries(
      *this == other, [](const BatchSize& b) { return b; },
      [](const at::Tensor& t) { return t.logical_not(); }, {});
}

TensorDict TensorDict::operator==(const at::Scalar& other) const {
  return detail::map_entries(
      *this, [](const BatchSize& b) { return b; }, [&](const at::Tensor& t) { return t == other; },
      {});
}

bool TensorDict::all() const { return reduce(*this, true); }
bool TensorDict::any() const { return reduce(*this, false); }

}  // namespace tensordict
