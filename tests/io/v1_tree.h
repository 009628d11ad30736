// A memmap tree written by hand as the spec describes format version 1 (docs/format.md, "Format
// versions"), shared by the format-version tests of the runtime and of the tools.
#pragma once

#include <string>

#include "tensordict/tensordict.h"

namespace tc_test {

/// `"_type": ...` of a TensorDict's and of a lazy stack's meta.json.
extern const std::string kTd;
extern const std::string kLazy;

/// A leaf's meta.json entry: {"device": "cpu", "shape": SHAPE, "dtype": "torch.DTYPE", ...}.
std::string leaf(const std::string& dtype, const std::string& shape);

/// Writes the tree at `dir`: a TensorDict of batch [2] with dim names ["batch"] holding a float32
/// leaf `obs` (arange(6) as [2, 3]), a nested TensorDict `next` (["batch", "agent"], float64
/// `reward` of ones [2, 1]), a lazy stack `steps` of two ragged elements (["batch", "time"], int64
/// `x` = arange(3) and arange(5) + 10), a NonTensorData `text` ("hello") and a NonTensorStack
/// `tags` (["a", "b"]); non-tensor data has no version entries, as tensorclasses. `root_extra`
/// replaces the root's version entries.
void write_v1_tree(const std::string& dir,
                   const std::string& root_extra =
                       R"("_format_version": 1, "_class": "TensorDict", "_names": ["batch"])");

/// `td.names()` as Python prints them: "['batch', None]".
std::string names_of(const tensordict::TensorDict& td);

/// Checks that `td` holds what write_v1_tree wrote (with the root's default entries).
void check_v1_tree(const tensordict::TensorDict& td);

}  // namespace tc_test
