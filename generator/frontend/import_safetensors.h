#pragma once
// `tcgen import x.safetensors`: the YAML schema of a safetensors file's tensors, read from its
// header alone (runtime/src/memmap/safetensors_format.cpp, torch-free). Names split on "." give
// nested classes named after their prefix, as TensorDict::from_safetensors nests the tensors;
// each field is `tensor[dtype, (sizes)]` with no batch dims (a file of weights has none).

#include <string>

#include "frontend/import_dir.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// True when `path` names a safetensors file (".safetensors") for `tcgen import`.
bool is_safetensors_argument(const std::string& path);

/// Reads the header of the file at `path` into a schema; `display` names it in messages and in
/// the schema's header comment. A file the format refuses is an error in `diagnostics`.
Schema import_safetensors(const std::string& path, const std::string& display,
                          const ImportOptions& options, Diagnostics& diagnostics);

}  // namespace tcgen
