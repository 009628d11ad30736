// Element-wise math over every tensor leaf: arithmetic with a scalar, a batch-broadcast tensor or
// another TensorDict; comparisons; point-wise functions; their in-place forms.
#include <ATen/ATen.h>

#include "core/lazy_state.h"
#include "ops/fused.h"
#include "ops/util.h"
#include "tensordict/dtype.h"

namespace tensordict {
namespace {

using detail::map_leaves;

// A tensor operand viewed so that torch broadcasting aligns it with the leaf's batch dims: the
// leaf's feature dims become trailing size-1 dims.
at::Tensor batch_aligned(const at::Tensor& other, const at::Tensor& leaf, size_t batch_dims) {
  std::vector<int64_t> shape = other.sizes().vec();
  shape.resize(shape.size() + static_cast<size_t>(leaf.dim()) - batch_dims, 1);
  return other.view(shape);
}

void check_batch_operand(const at::Tensor& other, const BatchSize& batch, const char* op) {
  bool ok = other.dim() <= static_cast<int64_t>(batch.size());
  for (int64_t d = 1; ok && d <= other.dim(); ++d) {
    const int64_t size = other.size(-d);
    ok = size == 1 || size == batch[batch.size() - static_cast<size_t>(d)];
  }
  if (!ok) {
    throw ShapeError(std::string(op) + ": a tensor of shape " + shape_str(other.sizes()) +
                     " does not broadcast over the batch dims " + shape_str(batch));
  }
}

// One element-wise op, spelled for each kind of operand; the `_out` forms (the same kernels
// writing into a given tensor) let a consolidated TensorDict run it over its flat buffer.
struct Binary {
  const char* name;
  std::function<at::Tensor(const at::Tensor&, const at::Scalar&)> with_scalar;
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> with_tensor;
  std::function<void(at::Tensor&, const at::Tensor&, const at::Scalar&)> scalar_out = nullptr;
  std::function<void(at::Tensor&, const at::Tensor&, const at::Tensor&)> tensor_out = nullptr;
};

TensorDict apply_binary(const TensorDict& td, const Operand& other, const Binary& op) {
  if (const at::Scalar* s = other.scalar()) {
    if (op.scalar_out) {
      auto fused = detail::fused_map(td, [&](at::Tensor& out, const at::Tensor& a,
                                             const at::Tensor&) { op.scalar_out(out, a, *s); });
      if (fused) return *fused;
    }
    return map_leaves(
        td, [&](const at::Tensor& t) { return op.with_scalar(t, *s); }, op.name);
  }
  if (const at::Tensor* o = other.tensor()) {
    check_batch_operand(*o, td.batch_size(), op.name);
    if (td.is_lazy_stack()) {  // each element with its rows of the operand
      return detail::lazy::zip_elements(
          td, detail::lazy::rows_along_stack(td, *o),
          [&](const TensorDict& element, const at::Tensor& rows) {
            return apply_binary(element, rows, op);
          },
          op.name);
    }
    const size_t nb = td.batch_size().size();
    // Nested levels have more batch dims than this one, so align on this level's only.
    return map_leaves(
        td, [&](const at::Tensor& t) { return op.with_tensor(t, batch_aligned(*o, t, nb)); },
        op.name);
  }
  if (op.tensor_out) {
    if (auto fused = detail::fused_map(td, *other.tensordict(), op.tensor_out)) return *fused;
  }
  return detail::zip_leaves(td, *other.tensordict(), op.with_tensor, op.name);
}

// The leaves of `td`, and for a TensorDict operand the matching leaves of `other` (KeyError
// naming a key `other` lacks).
std::vector<at::Tensor> leaves(const TensorDict& td) {
  std::vector<at::Tensor> out;
  detail::for_each_leaf(td, [&](const NestedKey&, at::Tensor& t) { out.push_back(t); });
  return out;
}
std::vector<at::Tensor> partner_leaves(const TensorDict& td, const TensorDict& other,
                                       const char* op) {
  std::vector<at::Tensor> out;
  detail::for_each_leaf(td, [&](const NestedKey& key, at::Tensor&) {
    if (!other.contains(key)) {
      throw KeyError(std::string(op) + ": key " + key.repr() +
                     " is missing from the other TensorDict");
    }
    out.push_back(other.get(key));
  });
  return out;
}

// In place: `foreach_scalar` / `foreach_list` (torch's _foreach kernels) when given, else one
// in-place call per leaf.
struct InPlace {
  const char* name;
  std::function<void(at::Tensor&, const at::Scalar&)> with_scalar;
  std::function<void(at::Tensor&, const at::Tensor&)> with_tensor;
  std::function<void(std::vector<at::Tensor>&, const at::Scalar&)> foreach_scalar = nullptr;
  std::function<void(std::vector<at::Tensor>&, const std::vector<at::Tensor>&)> foreach_list =
      nullptr;
};

TensorDict& apply_in_place(TensorDict& td, const Operand& other, const InPlace& op);

// A lazy stack with a tensor or TensorDict operand: each element with its rows of the operand,
// as Python.
TensorDict& apply_in_place_by_rows(TensorDict& td, const Operand& other, const InPlace& op) {
  const at::Tensor* o = other.tensor();
  if (o) check_batch_operand(*o, td.batch_size(), op.name);
  const std::vector<at::Tensor> rows =
      o ? detail::lazy::rows_along_stack(td, *o) : std::vector<at::Tensor>();
  const std::vector<TensorDict> others =
      o ? std::vector<TensorDict>() : other.tensordict()->unbind(td.stack_dim());
  if (!o && others.size() != td.tensordicts().size()) {
    throw ShapeError(std::string(op.name) + ": the other TensorDict has " +
                     std::to_string(others.size()) +
                     " rows along the stack dim of the lazy stack, which has " +
                     std::to_string(td.tensordicts().size()) + " elements");
  }
  size_t k = 0;
  detail::lazy::for_each(td, [&](TensorDict& element) {
    apply_in_place(element, o ? Operand(rows[k]) : Operand(others[k]), op);
    ++k;
  });
  return td;
}

TensorDict& apply_in_place(TensorDict& td, const Operand& other, const InPlace& op) {
  const at::Scalar* s = other.scalar();
  if (!s && td.is_lazy_stack()) return apply_in_place_by_rows(td, other, op);
  // A tensor or TensorDict operand is matched leaf by leaf to the dense layout; the leaves of a
  // lazy stack nested in it lack its stack dim.
  if (!s) detail::dense_only_deep(td, op.name);
  std::vector<at::Tensor> mine = leaves(td);
  const at::Tensor* o = other.tensor();
  if (o) check_batch_operand(*o, td.batch_size(), op.name);
  const std::vector<at::Tensor> theirs = other.tensordict()
                                             ? partner_leaves(td, *other.tensordict(), op.name)
                                             : std::vector<at::Tensor>();
  // One kernel per run of a consolidated buffer, when its layout allows.
  const bool fused =
      (s && detail::fused_in_place(td, nullptr,
                                   [&](at::Tensor& run, const at::Tensor&, const at::Tensor&) {
                                     op.with_scalar(run, *s);
                                   })) ||
      (other.tensordict() &&
       detail::fused_in_place(td, other.tensordict(),
                              [&](at::Tensor& run, const at::Tensor&, const at::Tensor& b) {
                                op.with_tensor(run, b);
                              }));
  if (fused) return td;
  // _foreach kernels for floating-point leaves, which they cannot fail on; otherwise (bool and
  // integer leaves may refuse an op) one leaf at a time, so that an error names its key and no
  // leaf after it has been written.
  const bool floating = std::all_of(mine.begin(), mine.end(), [](const at::Tensor& t) {
    return at::isFloatingType(t.scalar_type());
  });
  if (floating && s && op.foreach_scalar) return op.foreach_scalar(mine, *s), td;
  if (floating && !theirs.empty() && op.foreach_list) return op.foreach_list(mine, theirs), td;
  size_t i = 0;
  detail::for_each_leaf(td, [&](const NestedKey& key, at::Tensor& t) {
    try {
      if (s) {
        op.with_scalar(t, *s);
      } else if (o) {
        op.with_tensor(t, batch_aligned(*o, t, td.batch_size().size()));
      } else {
        op.with_tensor(t, theirs[i]);
      }
    } catch (const c10::Error& e) {
      throw TypeError(std::string(op.name) + ": key " + key.repr() + " (" +
                      dtype_name(t.scalar_type()) + " " + shape_str(t.sizes()) +
                      "): " + detail::first_line(e.what()));
    }
    ++i;
  });
  return td;
}

// `scalar * alpha`, integral when both are (an integer leaf cannot take a float in place).
at::Scalar scaled(const at::Scalar& s, const at::Scalar& alpha) {
  if (s.isIntegral(false) && alpha.isIntegral(false)) return s.toLong() * alpha.toLong();
  return s.toDouble() * alpha.toDouble();
}

// c10::optional is its own type in libtorch 1.x (std::optional in 2.x).
c10::optional<at::Scalar> bound(const std::optional<at::Scalar>& v) {
  return v ? c10::optional<at::Scalar>(*v) : c10::nullopt;
}

// Point-wise: over the flat buffer of a consolidated TensorDict (`out`: the `_out` kernel,
// `in_place`: the in-place one), else out of place per leaf, in place through a _foreach kernel
// or per leaf.
TensorDict pointwise(const TensorDict& td, const char* name, at::Tensor (*fn)(const at::Tensor&),
                     void (*out)(at::Tensor&, const at::Tensor&)) {
  auto fused = detail::fused_map(
      td, [out](at::Tensor& dst, const at::Tensor& a, const at::Tensor&) { out(dst, a); });
  return fused ? *fused : map_leaves(td, fn, name);
}
TensorDict& pointwise_(TensorDict& td, void (*fn)(std::vector<at::Tensor>&),
                       void (*in_place)(at::Tensor&)) {
  if (detail::fused_in_place(
          td, nullptr,
          [in_place](at::Tensor& run, const at::Tensor&, const at::Tensor&) { in_place(run); })) {
    return td;
  }
  std::vector<at::Tensor> mine = leaves(td);
  fn(mine);
  return td;
}

}  // namespace

// ---- arithmetic ---------------------------------------------------------------------------------

TensorDict TensorDict::add(const Operand& other, const at::Scalar& alpha) const {
  return apply_binary(
      *this, other,
      {"add", [&](const at::Tensor& t, const at::Scalar& s) { return t.add(s, alpha); },
       [&](const at::Tensor& t, const at::Tensor& o) { return t.add(o, alpha); },
       [&](at::Tensor& out, const at::Tensor& t, const at::Scalar& s) {
         at::add_out(out, t, s, alpha);
       },
       [&](at::Tensor& out, const at::Tensor& t, const at::Tensor& o) {
         at::add_out(out, t, o, alpha);
       }});
}
TensorDict& TensorDict::add_(const Operand& other, const at::Scalar& alpha) {
  return apply_in_place(*this, other,
                        {"add_", [&](at::Tensor& t, const at::Scalar& s) { t.add_(s, alpha); },
                         [&](at::Tensor& t, const at::Tensor& o) { t.add_(o, alpha); },
                         [&](std::vector<at::Tensor>& ts, const at::Scalar& s) {
                           at::_foreach_add_(ts, scaled(s, alpha));
                         },
                         [&](std::vector<at::Tensor>& ts, const std::vector<at::Tensor>& os) {
                           at::_foreach_add_(ts, os, alpha);
                         }});
}
TensorDict TensorDict::sub(const Operand& other, const at::Scalar& alpha) const {
  return apply_binary(
      *this, other,
      {"sub", [&](const at::Tensor& t, const at::Scalar& s) { return t.sub(s, alpha); },
       [&](const at::Tensor& t, const at::Tensor& o) { return t.sub(o, alpha); },
       [&](at::Tensor& out, const at::Tensor& t, const at::Scalar& s) {
         at::sub_out(out, t, s, alpha);
       },
       [&](at::Tensor& out, const at::Tensor& t, const at::Tensor& o) {
         at::sub_out(out, t, o, alpha);
       }});
}
TensorDict& TensorDict::sub_(const Operand& other, const at::Scalar& alpha) {
  return apply_in_place(*this, other,
                        {"sub_", [&](at::Tensor& t, const at::Scalar& s) { t.sub_(s, alpha); },
                         [&](at::Tensor& t, const at::Tensor& o) { t.sub_(o, alpha); },
                         [&](std::vector<at::Tensor>& ts, const at::Scalar& s) {
                           at::_foreach_sub_(ts, scaled(s, alpha));
                         },
                         [&](std::vector<at::Tensor>& ts, const std::vector<at::Tensor>& os) {
                           at::_foreach_sub_(ts, os, alpha);
                         }});
}
TensorDict TensorDict::mul(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"mul", [](const at::Tensor& t, const at::Scalar& s) { return t.mul(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.mul(o); },
       [](at::Tensor& out, const at::Tensor& t, const at::Scalar& s) { at::mul_out(out, t, s); },
       [](at::Tensor& out, const at::Tensor& t, const at::Tensor& o) { at::mul_out(out, t, o); }});
}
TensorDict& TensorDict::mul_(const Operand& other) {
  return apply_in_place(
      *this, other,
      {"mul_", [](at::Tensor& t, const at::Scalar& s) { t.mul_(s); },
       [](at::Tensor& t, const at::Tensor& o) { t.mul_(o); },
       [](std::vector<at::Tensor>& ts, const at::Scalar& s) { at::_foreach_mul_(ts, s); },
       [](std::vector<at::Tensor>& ts, const std::vector<at::Tensor>& os) {
         at::_foreach_mul_(ts, os);
       }});
}
TensorDict TensorDict::div(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"div", [](const at::Tensor& t, const at::Scalar& s) { return t.div(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.div(o); },
       [](at::Tensor& out, const at::Tensor& t, const at::Scalar& s) { at::div_out(out, t, s); },
       [](at::Tensor& out, const at::Tensor& t, const at::Tensor& o) { at::div_out(out, t, o); }});
}
TensorDict& TensorDict::div_(const Operand& other) {
  return apply_in_place(
      *this, other,
      {"div_", [](at::Tensor& t, const at::Scalar& s) { t.div_(s); },
       [](at::Tensor& t, const at::Tensor& o) { t.div_(o); },
       [](std::vector<at::Tensor>& ts, const at::Scalar& s) { at::_foreach_div_(ts, s); },
       [](std::vector<at::Tensor>& ts, const std::vector<at::Tensor>& os) {
         at::_foreach_div_(ts, os);
       }});
}
TensorDict TensorDict::pow(const Operand& exponent) const {
  return apply_binary(
      *this, exponent,
      {"pow", [](const at::Tensor& t, const at::Scalar& s) { return t.pow(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.pow(o); },
       [](at::Tensor& out, const at::Tensor& t, const at::Scalar& s) { at::pow_out(out, t, s); },
       [](at::Tensor& out, const at::Tensor& t, const at::Tensor& o) { at::pow_out(out, t, o); }});
}
TensorDict& TensorDict::pow_(const Operand& exponent) {
  return apply_in_place(*this, exponent,
                        {"pow_", [](at::Tensor& t, const at::Scalar& s) { t.pow_(s); },
                         [](at::Tensor& t, const at::Tensor& o) { t.pow_(o); }});
}
TensorDict TensorDict::mod(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"mod", [](const at::Tensor& t, const at::Scalar& s) { return t.remainder(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.remainder(o); }});
}
TensorDict TensorDict::bitwise_and(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"bitwise_and", [](const at::Tensor& t, const at::Scalar& s) { return t.bitwise_and(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.bitwise_and(o); }});
}
TensorDict TensorDict::bitwise_or(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"bitwise_or", [](const at::Tensor& t, const at::Scalar& s) { return t.bitwise_or(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.bitwise_or(o); }});
}
TensorDict TensorDict::bitwise_xor(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"bitwise_xor", [](const at::Tensor& t, const at::Scalar& s) { return t.bitwise_xor(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return t.bitwise_xor(o); }});
}
TensorDict TensorDict::lerp(const Operand& end, const at::Scalar& weight) const {
  return apply_binary(
      *this, end,
      {"lerp",
       [&](const at::Tensor& t, const at::Scalar& s) {
         return t.lerp(at::full_like(t, s), weight);
       },
       [&](const at::Tensor& t, const at::Tensor& o) { return t.lerp(o.expand_as(t), weight); }});
}
TensorDict& TensorDict::lerp_(const Operand& end, const at::Scalar& weight) {
  return apply_in_place(
      *this, end,
      {"lerp_", [&](at::Tensor& t, const at::Scalar& s) { t.lerp_(at::full_like(t, s), weight); },
       [&](at::Tensor& t, const at::Tensor& o) { t.lerp_(o.expand_as(t), weight); }});
}

TensorDict TensorDict::clamp(std::optional<at::Scalar> min, std::optional<at::Scalar> max) const {
  return map_leaves(
      *this, [&](const at::Tensor& t) { return t.clamp(bound(min), bound(max)); }, "clamp");
}
TensorDict& TensorDict::clamp_(std::optional<at::Scalar> min, std::optional<at::Scalar> max) {
  for (auto& t : leaves(*this)) t.clamp_(bound(min), bound(max));
  return *this;
}
TensorDict TensorDict::clamp_min(const at::Scalar& min) const { return clamp(min, std::nullopt); }
TensorDict& TensorDict::clamp_min_(const at::Scalar& min) { return clamp_(min, std::nullopt); }
TensorDict TensorDict::clamp_max(const at::Scalar& max) const { return clamp(std::nullopt, max); }
TensorDict& TensorDict::clamp_max_(const at::Scalar& max) { return clamp_(std::nullopt, max); }

TensorDict TensorDict::maximum(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"maximum", [](const at::Tensor& t, const at::Scalar& s) { return t.clamp_min(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return at::maximum(t, o); }});
}
TensorDict& TensorDict::maximum_(const Operand& other) {
  return apply_in_place(*this, other,
                        {"maximum_", [](at::Tensor& t, const at::Scalar& s) { t.clamp_min_(s); },
                         [](at::Tensor& t, const at::Tensor& o) { at::maximum_out(t, t, o); }});
}
TensorDict TensorDict::minimum(const Operand& other) const {
  return apply_binary(
      *this, other,
      {"minimum", [](const at::Tensor& t, const at::Scalar& s) { return t.clamp_max(s); },
       [](const at::Tensor& t, const at::Tensor& o) { return at::minimum(t, o); }});
}
TensorDict& TensorDict::minimum_(const Operand& other) {
  return apply_in_place(*this, other,
                        {"minimum_", [](at::Tensor& t, const at::Scalar& s) { t.clamp_max_(s); },
                         [](at::Tensor& t, const at::Tensor& o) { at::minimum_out(t, t, o); }});
}

TensorDict TensorDict::softmax(int64_t dim) const {
  const int64_t d = detail::wrap_dim(dim, ndim(), "softmax", batch_size());
  // A lazy stack's elements lack its stack dim: the dense stack's leaves carry every batch dim.
  return map_leaves(
      densify(), [d](const at::Tensor& t) { return t.softmax(d); }, "softmax");
}

// ---- comparisons --------------------------------------------------------------------------------

#define TC_COMPARISON(NAME)                                                         \
  TensorDict TensorDict::NAME(const Operand& other) const {                         \
    return apply_binary(                                                            \
        *this, other,                                                               \
        {#NAME, [](const at::Tensor& t, const at::Scalar& s) { return t.NAME(s); }, \
         [](const at::Tensor& t, const at::Tensor& o) { return t.NAME(o); }});      \
  }
TC_COMPARISON(lt)
TC_COMPARISON(le)
TC_COMPARISON(gt)
TC_COMPARISON(ge)
TC_COMPARISON(eq)
TC_COMPARISON(ne)
#undef TC_COMPARISON

#define TC_PREDICATE(NAME)                                              \
  TensorDict TensorDict::NAME() const {                                 \
    return map_leaves(                                                  \
        *this, [](const at::Tensor& t) { return at::NAME(t); }, #NAME); \
  }
TC_PREDICATE(isfinite)
TC_PREDICATE(isnan)
TC_PREDICATE(isreal)
TC_PREDICATE(isposinf)
TC_PREDICATE(isneginf)
#undef TC_PREDICATE

// ---- point-wise functions -----------------------------------------------------------------------
// FOREACH: torch has a _foreach kernel for the in-place form; PER_LEAF: it does not (1.13).

#define TC_POINTWISE(NAME, FOREACH)                                            \
  TensorDict TensorDict::NAME() const {                                        \
    return pointwise(                                                          \
        *this, #NAME, [](const at::Tensor& t) { return t.NAME(); },            \
        [](at::Tensor& out, const at::Tensor& t) { at::NAME##_out(out, t); }); \
  }                                                                            \
  TensorDict& TensorDict::NAME##_() {                                          \
    return pointwise_(*this, FOREACH, [](at::Tensor& t) { t.NAME##_(); });     \
  }
#define TC_POINTWISE_FOREACH(NAME) \
  TC_POINTWISE(NAME, [](std::vector<at::Tensor>& ts) { at::_foreach_##NAME##_(ts); })
#define TC_POINTWISE_PER_LEAF(NAME)                    \
  TC_POINTWISE(NAME, [](std::vector<at::Tensor>& ts) { \
    for (auto& t : ts) t.NAME##_();                    \
  })
TC_POINTWISE_FOREACH(abs)
TC_POINTWISE_FOREACH(exp)
TC_POINTWISE_FOREACH(log)
TC_POINTWISE_FOREACH(sqrt)
TC_POINTWISE_FOREACH(sigmoid)
TC_POINTWISE_FOREACH(tanh)
TC_POINTWISE_FOREACH(floor)
TC_POINTWISE_FOREACH(ceil)
TC_POINTWISE_FOREACH(round)
TC_POINTWISE_FOREACH(neg)
TC_POINTWISE_FOREACH(reciprocal)
TC_POINTWISE_PER_LEAF(sign)
#undef TC_POINTWISE_FOREACH
#undef TC_POINTWISE_PER_LEAF
#undef TC_POINTWISE

}  // namespace tensordict
