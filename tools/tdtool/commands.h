#pragma once
// The tdtool sub-commands. Each returns the process exit code; errors are thrown as
// tensordict::Error and reported by main().

#include <ATen/core/Tensor.h>

#include <iosfwd>
#include <string>
#include <vector>

#include "tensordict/non_tensor.h"

namespace tdtool {

/// Tree of keys with shapes, dtypes, bytes, non-tensor values and batch sizes.
int run_ls(const std::string& dir, std::ostream& out);
/// Values as JSON; `keys` (dot-separated nested keys) restricts the output.
int run_dump(const std::string& dir, const std::vector<std::string>& keys, std::ostream& out);
/// Every file checked against meta.json: 0 when whole, 1 with one line per problem.
int run_verify(const std::string& dir, std::ostream& out);

/// {"dtype": "float32", "shape": [...], "data": nested lists}; half/bfloat16 as numbers, bool as
/// true/false, complex as [real, imag] pairs.
tensordict::Json tensor_to_json(const at::Tensor& t);

}  // namespace tdtool
