// The block forms of the shape and key ops (tensordict/scoped.h): each op with the inverse that
// Python's LAST_OP_MAPS applies on leaving the block. The source keeps its batch size during the
// block, so each inverse reads the shape it undoes from it.
#include "tensordict/scoped.h"

namespace tensordict::scoped {
namespace {

using Inverse = std::function<TensorDict(const TensorDict& result, const TensorDict& source)>;

// A shape or key op whose block writes back through `inverse` of the result: `update_` into a
// locked source (which takes no new keys), `update` otherwise, as Python.
ScopedOp writing_back(std::function<TensorDict(TensorDict&)> apply, Inverse inverse) {
  return {std::move(apply),
          [inverse = std::move(inverse)](const TensorDict& result, TensorDict& source) {
            const TensorDict back = inverse(result, source);
            if (source.is_locked()) {
              source.update_(back);
            } else {
              source.update(back);
            }
          }};
}

int64_t wrapped(int64_t dim, int64_t ndim) { return dim < 0 ? dim + ndim : dim; }

}  // namespace

ScopedOp view(std::vector<int64_t> shape) {
  return writing_back([shape = std::move(shape)](TensorDict& td) { return td.view(shape); },
                      [](const TensorDict& result, const TensorDict& source) {
                        return result.view(source.batch_size());
                      });
}

ScopedOp permute(std::vector<int64_t> dims) {
  return writing_back([dims](TensorDict& td) { return td.permute(dims); },
                      [dims](const TensorDict& result, const TensorDict&) {
                        const auto ndim = static_cast<int64_t>(dims.size());
                        std::vector<int64_t> inverse(dims.size());
                        for (int64_t i = 0; i < ndim; ++i) inverse[wrapped(dims[i], ndim)] = i;
                        return result.permute(inverse);
                      });
}

ScopedOp transpose(int64_t dim0, int64_t dim1) {
  return writing_back(
      [=](TensorDict& td) { return td.transpose(dim0, dim1); },
      [=](const TensorDict& result, const TensorDict&) { return result.transpose(dim0, dim1); });
}

ScopedOp unsqueeze(int64_t dim) {
  return writing_back([dim](TensorDict& td) { return td.unsqueeze(dim); },
                      [dim](const TensorDict& result, const TensorDict& source) {
                        return result.squeeze(wrapped(dim, source.ndim() + 1));
                      });
}

ScopedOp squeeze(int64_t dim) {
  return writing_back([dim](TensorDict& td) { return td.squeeze(dim); },
                      [dim](const TensorDict& result, const TensorDict& source) {
                        return result.unsqueeze(wrapped(dim, source.ndim()));
                      });
}

ScopedOp flatten(int64_t start_dim, int64_t end_dim) {
  return writing_back([=](TensorDict& td) { return td.flatten(start_dim, end_dim); },
                      [=](const TensorDict& result, const TensorDict& source) {
                        const BatchSize& batch = source.batch_size();
                        const auto ndim = static_cast<int64_t>(batch.size());
                        const int64_t start = wrapped(start_dim, ndim);
                        const int64_t end = wrapped(end_dim, ndim);
                        return result.unflatten(
                            start,
                            std::vector<int64_t>(batch.begin() + start, batch.begin() + end + 1));
                      });
}

ScopedOp unflatten(int64_t dim, std::vector<int64_t> sizes) {
  const auto count = static_cast<int64_t>(sizes.size());
  return writing_back(
      [dim, sizes = std::move(sizes)](TensorDict& td) { return td.unflatten(dim, sizes); },
      [dim, count](const TensorDict& result, const TensorDict& source) {
        const int64_t start = wrapped(dim, source.ndim());
        return result.flatten(start, start + count - 1);
      });
}

ScopedOp movedim(std::vector<int64_t> source, std::vector<int64_t> destination) {
  return writing_back([=](TensorDict& td) { return td.movedim(source, destination); },
                      [=](const TensorDict& result, const TensorDict&) {
                        return result.movedim(destination, source);
                      });
}

ScopedOp flatten_keys(std::string separator) {
  return writing_back([separator](TensorDict& td) { return td.flatten_keys(separator); },
                      [separator](const TensorDict& result, const TensorDict&) {
                        return result.unflatten_keys(separator);
                      });
}

ScopedOp unflatten_keys(std::string separator) {
  return writing_back([separator](TensorDict& td) { return td.unflatten_keys(separator); },
                      [separator](const TensorDict& result, const TensorDict&) {
                        return result.flatten_keys(separator);
                      });
}

ScopedOp lock() {
  return {[](TensorDict& td) { return td.lock_(); },
          [](const TensorDict&, TensorDict& source) { source.unlock_(); }};
}

ScopedOp unlock() {
  return {[](TensorDict& td) { return td.unlock_(); },
          [](const TensorDict&, TensorDict& source) { source.lock_(); }};
}

}  // namespace tensordict::scoped
