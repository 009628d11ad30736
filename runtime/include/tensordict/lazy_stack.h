#pragma once
/// \file
/// LazyStackedTensorDict: a stack of TensorDicts that is never materialised (Python tensordict's
/// lazy_stack / LazyStackedTensorDict). It keeps ragged data: elements whose shapes differ along
/// some dim (the batch size shows -1 there) or whose key sets differ.
///
/// A lazy stack is a TensorDict handle (TensorDict::is_lazy_stack()); its elements are aliased:
/// td[i] along the stack dim is element i itself, and writes through the stack reach the elements.
/// get() of a key stacks the elements' tensors (ShapeError naming the key and the differing shapes
/// when they are ragged; get_padded() pads them instead); densify() gives a dense TensorDict.
/// On disk (spec §4): meta.json {"_type": "<class 'tensordict._lazy.LazyStackedTensorDict'>",
/// "stack_dim": d} and one directory per element, 0/, 1/, ...

#include <vector>

#include "tensordict/tensordict.h"

namespace tensordict {

/// A lazy stack of `tds` along the new batch dim `dim` (in [-ndim-1, ndim]). The elements must
/// have the same number of batch dims; dims where their sizes differ become -1 in the batch size.
/// ShapeError when `tds` is empty or the ndims differ.
TensorDict lazy_stack(const std::vector<TensorDict>& tds, int64_t dim = 0);

/// Python's maybe_dense_stack: stack(tds, dim) where the TensorDicts share their batch size and
/// keys and each key's entries one shape (a tensor's sizes, a TensorDict's batch size), and a lazy
/// stack where they do not, at every level (ragged leaves make their level lazy, the levels above
/// stay dense). Lazy stacks along one stack dim,
/// with as many elements, stack element by element and stay lazy (their stack dim moves up by
/// one when `dim` is not after it).
TensorDict maybe_dense_stack(const std::vector<TensorDict>& tds, int64_t dim = 0);
/// Python's dense_stack_tds: maybe_dense_stack of `tds` along `dim`, or of a lazy stack's
/// elements along its stack dim (a dense TensorDict is returned as it is). The outer level is
/// dense where the elements share their keys; nested lazy stacks stay lazy.
///@{
TensorDict dense_stack_tds(const std::vector<TensorDict>& tds, int64_t dim);
TensorDict dense_stack_tds(const TensorDict& td);
///@}

}  // namespace tensordict
