#pragma once
/// \file
/// ValuesIndices: what TensorDict's max and min with indices, cummax and cummin return.
// Complete only after TensorDict, which it holds by value: tensordict.h includes this header after
// its class, and this header includes tensordict.h first, so that either may be included alone.
#include "tensordict/tensordict.h"

namespace tensordict {

/// Values and their indices along a dim (Python's torch.return_types of max, min, cummax, cummin).
struct ValuesIndices {
  TensorDict values;   ///< the values
  TensorDict indices;  ///< their indices along the dim (int64 leaves)
};

}  // namespace tensordict
