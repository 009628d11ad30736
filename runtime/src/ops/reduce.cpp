// Reductions over every tensor leaf (Python tensordict's sum/mean/std/... with dim, keepdim and
// reduce=True).
#include <ATen/ATen.h>

#include <algorithm>

#include "ops/fused.h"
#include "ops/util.h"
#include "tensordict/dtype.h"

namespace tensordict {
namespace {

enum class Reduction {
  Sum,
  Mean,
  Std,
  Var,
  Prod,
  Max,
  Min,
  Norm,
  All,
  Any,
  Quantile,
  NanSum,
  NanMean,
  LogSumExp,
  ArgMax,
  ArgMin
};

const char* name_of(Reduction r) {
  static const char* const kNames[] = {
      "sum", "mean", "std",      "var",    "prod",    "max",       "min",    "norm",
      "all", "any",  "quantile", "nansum", "nanmean", "logsumexp", "argmax", "argmin"};
  return kNames[static_cast<int>(r)];
}

// What one call reduces: the checked, non-negative batch dims (when given), and the quantile's
// parameters.
struct Plan {
  Reduction reduction;
  const ReduceDims& dims;
  bool keepdim;
  std::vector<int64_t> batch_dims;  // wrapped
  double q = 0;
  std::string interpolation;
};

// Every element of `t`.
at::Tensor reduce_elements(const at::Tensor& t, const Plan& plan) {
  switch (plan.reduction) {
    case Reduction::LogSumExp:
      return t.reshape({-1}).logsumexp(0);
    case Reduction::ArgMax:
      return t.argmax();
    case Reduction::ArgMin:
      return t.argmin();
    case Reduction::Quantile:
      return at::quantile(t.reshape({-1}), plan.q, c10::nullopt, false, plan.interpolation);
    case Reduction::Sum:
      return t.sum();
    case Reduction::Mean:
      return t.mean();
    case Reduction::NanSum:
      return t.nansum();
    case Reduction::NanMean:
      return t.nanmean();
    case Reduction::Std:
      return t.std();
    case Reduction::Var:
      return t.var();
    case Reduction::Prod:
      return t.prod();
    case Reduction::Max:
      return t.max();
    case Reduction::Min:
      return t.min();
    case Reduction::Norm:
      return t.norm();
    case Reduction::All:
      return t.all();
    case Reduction::Any:
      break;
  }
  return t.any();
}

// Ops torch reduces one dim at a time: highest dim first, so lower indices stay valid.
template <class F>
at::Tensor one_dim_at_a_time(at::Tensor t, std::vector<int64_t> dims, bool keepdim, F f) {
  std::sort(dims.rbegin(), dims.rend());
  for (int64_t d : dims) t = f(t, d, keepdim);
  return t;
}

// The non-negative dims `dims` of `t` (one dim for a quantile, checked by make_plan).
at::Tensor reduce_dims(const at::Tensor& t, const Plan& plan, const std::vector<int64_t>& dims,
                       bool keepdim) {
  switch (plan.reduction) {
    case Reduction::LogSumExp:
      return t.logsumexp(dims, keepdim);
    case Reduction::ArgMax:
      return t.argmax(dims.front(), keepdim);
    case Reduction::ArgMin:
      return t.argmin(dims.front(), keepdim);
    case Reduction::Quantile:
      return at::quantile(t, plan.q, dims.front(), keepdim, plan.interpolation);
    case Reduction::Sum:
      return t.sum(dims, keepdim);
    case Reduction::Mean:
      return t.mean(dims, keepdim);
    case Reduction::NanSum:
      return t.nansum(dims, keepdim);
    case Reduction::NanMean:
      return t.nanmean(dims, keepdim);
    case Reduction::Std:
      return t.std(dims, /*unbiased=*/true, keepdim);
    case Reduction::Var:
      return t.var(dims, /*unbiased=*/true, keepdim);
    case Reduction::Max:
      return t.amax(dims, keepdim);
    case Reduction::Min:
      return t.amin(dims, keepdim);
    case Reduction::Norm:
      return t.norm(2, dims, keepdim);
    case Reduction::Prod:
      return one_dim_at_a_time(t, dims, keepdim,
                               [](const at::Tensor& x, int64_t d, bool k) { return x.prod(d, k); });
    case Reduction::All:
      return one_dim_at_a_time(t, dims, keepdim,
                               [](const at::Tensor& x, int64_t d, bool k) { return x.all(d, k); });
    case Reduction::Any:
      break;
  }
  return one_dim_at_a_time(t, dims, keepdim,
                           [](const at::Tensor& x, int64_t d, bool k) { return x.any(d, k); });
}

// A leaf with its feature dims flattened into one trailing dim (a size-1 dim when it has none).
at::Tensor features_flat(const at::Tensor& t, int64_t batch_dims) {
  return t.dim() > batch_dims ? t.flatten(batch_dims, -1) : t.unsqueeze(-1);
}

Plan make_plan(const TensorDict& td, Reduction r, const ReduceDims& dims, bool keepdim) {
  if (dims.is_feature() && keepdim) {
    throw TypeError(std::string(name_of(r)) + ": dims=feature() excludes keepdim=true");
  }
  Plan plan{r, dims, keepdim, {}, 0, ""};
  const bool one_dim = r == Reduction::Quantile || r == Reduction::ArgMax || r == Reduction::ArgMin;
  if (one_dim && dims.dims().size() > 1) {
    throw ShapeError(std::string(name_of(r)) + ": reduces one batch dim at a time, got " +
                     shape_str(dims.dims()) + " (as torch's)");
  }
  for (int64_t d : dims.dims()) {
    const int64_t wrapped = detail::wrap_dim(d, td.ndim(), name_of(r), td.batch_size());
    if (std::find(plan.batch_dims.begin(), plan.batch_dims.end(), wrapped) !=
        plan.batch_dims.end()) {
      throw ShapeError(std::string(name_of(r)) + ": batch dim " + std::to_string(d) +
                       " is given twice");
    }
    plan.batch_dims.push_back(wrapped);
  }
  return plan;
}

BatchSize reduced_batch(const BatchSize& batch, const Plan& plan) {
  if (plan.dims.is_all()) return {};
  if (plan.dims.is_feature()) return batch;
  BatchSize out;
  for (size_t d = 0; d < batch.size(); ++d) {
    const bool reduced = std::find(plan.batch_dims.begin(), plan.batch_dims.end(),
                                   static_cast<int64_t>(d)) != plan.batch_dims.end();
    if (!reduced) {
      out.push_back(batch[d]);
    } else if (plan.keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

// The names of reduced_batch's dims, as Python 0.14 gives them: the dims left keep theirs (a dim
// kept by keepdim too), a reduction over every element has none.
std::optional<DimNames> reduced_names(const std::optional<DimNames>& names, const Plan& plan) {
  if (!names || plan.dims.is_all()) return std::nullopt;
  if (plan.dims.is_feature() || plan.keepdim) return names;
  DimNames out;
  bool any = false;
  for (size_t d = 0; d < names->size(); ++d) {
    if (std::find(plan.batch_dims.begin(), plan.batch_dims.end(), static_cast<int64_t>(d)) ==
        plan.batch_dims.end()) {
      out.push_back((*names)[d]);
      any = any || (*names)[d].has_value();
    }
  }
  if (!any) return std::nullopt;
  return out;
}

at::Tensor reduce_leaf(const at::Tensor& t, const Plan& plan, int64_t batch_dims) {
  if (plan.dims.is_all()) return reduce_elements(t, plan);
  if (plan.dims.is_feature()) {
    const at::Tensor flat = features_flat(t, batch_dims);
    return reduce_dims(flat, plan, {flat.dim() - 1}, false);
  }
  return reduce_dims(t, plan, plan.batch_dims, plan.keepdim);
}

// Per leaf, keeping the structure; non-tensor entries are left out. The key index is shared with
// `td` when nothing is left out (set_values).
TensorDict reduce_tensordict(const TensorDict& td, const Plan& plan, const std::string& prefix) {
  const auto& src = detail::impl_of(td);
  TensorDict out = detail::make_tensordict(reduced_batch(src.batch_size, plan), src.device,
                                           reduced_names(src.names, plan));
  detail::impl_of(out).class_info = src.class_info;
  std::vector<Value> values;
  values.reserve(src.keys.size());
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const Value& value = src.values[i];
    if (value.is_tensordict()) {
      const std::string key = prefix.empty() ? src.keys[i] : prefix + "." + src.keys[i];
      values.emplace_back(reduce_tensordict(value.tensordict(), plan, key));
    } else if (!value.is_tensor()) {
      values.emplace_back(at::Tensor());  // dropped
    } else {
      try {
        values.emplace_back(
            reduce_leaf(value.tensor(), plan, static_cast<int64_t>(src.batch_size.size())));
      } catch (const c10::Error& e) {
        const std::string key = prefix.empty() ? src.keys[i] : prefix + "." + src.keys[i];
        throw TypeError(std::string(name_of(plan.reduction)) + ": key '" + key + "' (" +
                        dtype_name(value.tensor().scalar_type()) + " " +
                        shape_str(value.tensor().sizes()) + "): " + detail::first_line(e.what()));
      }
    }
  }
  detail::set_values(detail::impl_of(out), src, std::move(values));
  return out;
}

// One tensor over every leaf (Python's reduce=True): the leaves concatenated, then reduced.
at::Tensor reduce_to_tensor(const TensorDict& td, const Plan& plan) {
  // A consolidated TensorDict whose leaves lie end to end: their concatenation is its buffer.
  const at::Tensor elements = plan.dims.is_all() ? detail::fused_elements(td) : at::Tensor();
  std::vector<at::Tensor> parts;
  const int64_t nb = td.ndim();
  if (!elements.defined()) {
    detail::for_each_leaf(td, [&](const NestedKey&, at::Tensor& t) {
      if (plan.dims.is_all()) {
        parts.push_back(t.reshape({-1}));
      } else if (plan.dims.is_feature()) {
        parts.push_back(features_flat(t, nb));
      } else {
        parts.push_back(t);
      }
    });
    if (parts.empty())
      throw KeyError(std::string(name_of(plan.reduction)) + ": no tensor to reduce");
  }
  try {
    if (plan.dims.is_all())
      return reduce_elements(elements.defined() ? elements : at::cat(parts), plan);
    if (plan.dims.is_feature()) return reduce_dims(at::cat(parts, -1), plan, {nb}, false);
    return reduce_dims(at::cat(parts, plan.batch_dims.front()), plan, plan.batch_dims,
                       plan.keepdim);
  } catch (const c10::Error& e) {
    throw ShapeError(std::string(name_of(plan.reduction)) +
                     " over every leaf: " + detail::first_line(e.what()));
  }
}

}  // namespace

// Lazy stacks (at any level) reduce as their dense form, densify() (itself when there are none):
// the elements' leaves do not carry the stack dim the reduction may run over.
#define TC_REDUCTION(NAME, KIND)                                                           \
  TensorDict TensorDict::NAME(const ReduceDims& dims, bool keepdim) const {                \
    const TensorDict dense = densify();                                                    \
    return reduce_tensordict(dense, make_plan(dense, Reduction::KIND, dims, keepdim), ""); \
  }                                                                                        \
  at::Tensor TensorDict::NAME(ReduceAll, const ReduceDims& dims, bool keepdim) const {     \
    const TensorDict dense = densify();                                                    \
    return reduce_to_tensor(dense, make_plan(dense, Reduction::KIND, dims, keepdim));      \
  }
TC_REDUCTION(sum, Sum)
TC_REDUCTION(mean, Mean)
TC_REDUCTION(std, Std)
TC_REDUCTION(var, Var)
TC_REDUCTION(prod, Prod)
TC_REDUCTION(max, Max)
TC_REDUCTION(min, Min)
TC_REDUCTION(norm, Norm)
TC_REDUCTION(nansum, NanSum)
TC_REDUCTION(nanmean, NanMean)
TC_REDUCTION(logsumexp, LogSumExp)
#undef TC_REDUCTION

TensorDict& TensorDict::logsumexp_out(TensorDict& out, const ReduceDims& dims, bool keepdim) const {
  return detail::write_into(out, logsumexp(dims, keepdim));
}

TensorDict TensorDict::amax(const ReduceDims& dims, bool keepdim) const {
  return max(dims, keepdim);
}
TensorDict TensorDict::amin(const ReduceDims& dims, bool keepdim) const {
  return min(dims, keepdim);
}

namespace {

ValuesIndices with_indices(const TensorDict& td, Reduction values, Reduction indices, int64_t dim,
                           bool keepdim) {
  const TensorDict dense = td.densify();
  return {reduce_tensordict(dense, make_plan(dense, values, dim, keepdim), ""),
          reduce_tensordict(dense, make_plan(dense, indices, dim, keepdim), "")};
}

// cummax / cummin: the running values and their indices along batch dim `dim`, batch kept.
template <class Op>
ValuesIndices running(const TensorDict& td, int64_t dim, const char* name, Op op) {
  const TensorDict dense = td.densify();
  const int64_t d = detail::wrap_dim(dim, dense.ndim(), name, dense.batch_size());
  return {detail::map_leaves(
              dense, [&](const at::Tensor& t) { return std::get<0>(op(t, d)); }, name),
          detail::map_leaves(
              dense, [&](const at::Tensor& t) { return std::get<1>(op(t, d)); }, name)};
}

}  // namespace

ValuesIndices TensorDict::max_with_indices(int64_t dim, bool keepdim) const {
  return with_indices(*this, Reduction::Max, Reduction::ArgMax, dim, keepdim);
}
ValuesIndices TensorDict::min_with_indices(int64_t dim, bool keepdim) const {
  return with_indices(*this, Reduction::Min, Reduction::ArgMin, dim, keepdim);
}
ValuesIndices TensorDict::cummax(int64_t dim) const {
  return running(*this, dim, "cummax",
                 [](const at::Tensor& t, int64_t d) { return at::cummax(t, d); });
}
ValuesIndices TensorDict::cummin(int64_t dim) const {
  return running(*this, dim, "cummin",
                 [](const at::Tensor& t, int64_t d) { return at::cummin(t, d); });
}

TensorDict TensorDict::quantile(double q, const ReduceDims& dims, bool keepdim,
                                const std::string& interpolation) const {
  const TensorDict dense = densify();
  Plan plan = make_plan(dense, Reduction::Quantile, dims, keepdim);
  plan.q = q;
  plan.interpolation = interpolation;
  return reduce_tensordict(dense, plan, "");
}
at::Tensor TensorDict::quantile(ReduceAll, double q, const ReduceDims& dims, bool keepdim,
                                const std::string& interpolation) const {
  const TensorDict dense = densify();
  Plan plan = make_plan(dense, Reduction::Quantile, dims, keepdim);
  plan.q = q;
  plan.interpolation = interpolation;
  return reduce_to_tensor(dense, plan);
}

TensorDict TensorDict::all(const ReduceDims& dims, bool keepdim) const {
  const TensorDict dense = densify();
  return reduce_tensordict(dense, make_plan(dense, Reduction::All, dims, keepdim), "");
}
TensorDict TensorDict::any(const ReduceDims& dims, bool keepdim) const {
  const TensorDict dense = densify();
  return reduce_tensordict(dense, make_plan(dense, Reduction::Any, dims, keepdim), "");
}

}  // namespace tensordict
