// Autograd over the tensor leaves: requires_grad_, grad, zero_grad and backward, as Python's.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "ops/util.h"

namespace tensordict {

TensorDict& TensorDict::requires_grad_(bool requires_grad) {
  detail::for_each_leaf(*this, [&](const NestedKey&, at::Tensor& t) {
    if (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()))
      t.requires_grad_(requires_grad);
  });
  return *this;
}

bool TensorDict::requires_grad() const {
  bool any = false;
  detail::for_each_leaf(*this,
                        [&](const NestedKey&, at::Tensor& t) { any = any || t.requires_grad(); });
  return any;
}

TensorDict TensorDict::grad() const {
  // An undefined gradient leaves its key out.
  return detail::locked_as(*this, apply([](const at::Tensor& t) { return t.grad(); }));
}

TensorDict& TensorDict::zero_grad(bool set_to_none) {
  detail::for_each_leaf(*this, [&](const NestedKey&, at::Tensor& t) {
    if (!t.grad().defined()) return;
    if (set_to_none) {
      t.mutable_grad() = at::Tensor();
    } else {
      t.mutable_grad().zero_();
    }
  });
  return *this;
}

namespace {

void run_backward(const TensorDict& td, const TensorDict* gradient, bool retain_graph,
                  bool create_graph) {
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> seeds;
  for (const auto& key : td.keys(/*include_nested=*/true, /*leaves_only=*/true)) {
    const Value value = td.get_value(key);
    const at::Tensor* t = value.tensor_if();
    if (t == nullptr || !t->requires_grad()) continue;
    if (gradient == nullptr) {
      if (t->numel() != 1) {
        throw ShapeError("backward: key " + key.repr() + " has shape " + shape_str(t->sizes()) +
                         "; without a gradient every leaf that requires grad must be a scalar");
      }
      seeds.push_back(at::ones_like(*t));
    } else {
      if (!gradient->contains(key)) {
        throw KeyError("backward: the gradient has no entry for key " + key.repr());
      }
      seeds.push_back(gradient->get(key));
    }
    outputs.push_back(*t);
  }
  if (outputs.empty()) throw ValueError("backward: no leaf requires grad");
  try {
    torch::autograd::backward(outputs, seeds, retain_graph || create_graph, create_graph);
  } catch (const c10::Error& e) {
    throw ValueError("backward: " + detail::first_line(e.what()));
  }
}

}  // namespace

void TensorDict::backward() const { run_backward(*this, nullptr, false, false); }
void TensorDict::backward(const TensorDict& gradient, bool retain_graph, bool create_graph) const {
  run_backward(*this, &gradient, retain_graph, create_graph);
}

}  // namespace tensordict
