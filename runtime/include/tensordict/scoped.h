#pragma once
/// \file
/// Python's context-manager form of the shape and key ops: `with td.view(-1) as flat: ...` runs
/// the block on the op's result and, when the block ends, writes what it holds back into `td` by
/// the op's inverse (`update`, or `update_` into a locked TensorDict), as Python's `__exit__`
/// does. A block that throws writes nothing back, as in Python.
///
/// \code
///   tensordict::with(data, tensordict::scoped::view({-1}), [](MyData& flat) {
///     flat.set_X(at::zeros({12, 5}));  // data.X() is now zeros of data's batch shape
///   });
///   tensordict::with(td, tensordict::scoped::lock(), [](TensorDict& locked) { ... });
/// \endcode

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensordict/tensordict.h"

namespace tensordict {

/// An op with a block form: what it makes of the source, and what leaving the block does.
struct ScopedOp {
  /// The op applied to the source (the block's argument).
  std::function<TensorDict(TensorDict& source)> apply;
  /// Run when the block returns: writes the result back into the source (or, for lock / unlock,
  /// restores the source's state).
  std::function<void(const TensorDict& result, TensorDict& source)> exit;
};

/// The ops whose Python forms are context managers (tensordict's LAST_OP_MAPS).
namespace scoped {
ScopedOp view(std::vector<int64_t> shape);                      ///< view(*shape)
ScopedOp permute(std::vector<int64_t> dims);                    ///< permute(*dims)
ScopedOp transpose(int64_t dim0, int64_t dim1);                 ///< transpose(dim0, dim1)
ScopedOp unsqueeze(int64_t dim);                                ///< unsqueeze(dim)
ScopedOp squeeze(int64_t dim);                                  ///< squeeze(dim)
ScopedOp flatten(int64_t start_dim = 0, int64_t end_dim = -1);  ///< flatten(start, end)
ScopedOp unflatten(int64_t dim, std::vector<int64_t> sizes);    ///< unflatten(dim, sizes)
ScopedOp movedim(std::vector<int64_t> source, std::vector<int64_t> destination);  ///< movedim
ScopedOp flatten_keys(std::string separator = ".");    ///< flatten_keys(sep)
ScopedOp unflatten_keys(std::string separator = ".");  ///< unflatten_keys(sep)
ScopedOp lock();                                       ///< lock_(): unlocked after
ScopedOp unlock();                                     ///< unlock_(): locked after
}  // namespace scoped

/// Python's `with source.OP as result: block(result)`: `block` gets the op's result, as a `T`
/// (a TensorDict, or the generated class `source` is); when it returns, `op.exit` writes it back.
template <class T, class Block>
void with(T& source, const ScopedOp& op, Block&& block) {
  static_assert(std::is_base_of_v<TensorDict, T>, "with() takes a TensorDict or a generated class");
  TensorDict& base = source;
  TensorDict result = op.apply(base);
  if constexpr (std::is_same_v<T, TensorDict>) {
    std::forward<Block>(block)(result);
  } else {
    T typed = T::from_tensordict(result, {}, /*safe=*/false);
    std::forward<Block>(block)(typed);
  }
  op.exit(result, base);
}

}  // namespace tensordict
