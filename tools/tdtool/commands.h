#pragma once
// The tdtool sub-commands. Each returns the process exit code; errors are thrown as
// tensordict::Error and reported by main().

#include <ATen/core/Tensor.h>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "tensordict/memmap.h"
#include "tensordict/non_tensor.h"

namespace tdtool {

/// Tree of keys with shapes, dtypes, bytes, non-tensor values and batch sizes.
int run_ls(const std::string& dir, std::ostream& out);
/// Values as JSON; `keys` (dot-separated nested keys) restricts the output.
int run_dump(const std::string& dir, const std::vector<std::string>& keys, std::ostream& out);
/// Every file checked against meta.json: 0 when whole, 1 with one line per problem.
int run_verify(const std::string& dir, std::ostream& out);
/// Copies the TensorDict at `src` to `dst` (a directory, a `.tdz` archive or a `.safetensors`
/// file, by suffix), its classes kept; a safetensors source's metadata goes to a safetensors
/// target.
int run_convert(const std::string& src, const std::string& dst, std::ostream& out);
/// verify, then the directory against class `class_name` of the schema file `schema` (by default
/// the class of the directory's `_type`, or the schema's only class): 0 when it matches, 1 with
/// one line per mismatch, 2 when the schema has errors or names no such class.
int run_verify_schema(const std::string& dir, const std::string& schema,
                      const std::string& class_name, std::ostream& out, std::ostream& err);

/// memmap::load of a directory, safetensors::load of a `.safetensors` file, archive::load of
/// another file (a `.tdz` archive, whatever its name).
tensordict::memmap::Loaded load_tree(const std::string& path,
                                     std::optional<at::Device> device = std::nullopt);
/// memmap::verify of a directory, safetensors::verify of a `.safetensors` file, archive::verify
/// (zip structure and CRC-32s too) of another file.
std::vector<std::string> verify_tree(const std::string& path);

/// The dim names of `td` as a meta.json of format version 1 records them (`_names`): a list of one
/// string or null per batch dim; null when no dim has a name, or when the elements of a lazy stack
/// name a dim differently.
tensordict::Json names_json(const tensordict::TensorDict& td);

/// {"dtype": "float32", "shape": [...], "data": nested lists}; half/bfloat16 as numbers, bool as
/// true/false, complex as [real, imag] pairs.
tensordict::Json tensor_to_json(const at::Tensor& t);

}  // namespace tdtool
