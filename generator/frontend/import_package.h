#pragma once
// `tcgen import x.pt2`: the YAML schema of an AOTInductor package's inputs and outputs, read from
// the call spec and input checks its wrapper source records (TensorClass::nn's own reader,
// tensordict/nn/call_spec.h; the package is never loaded, so tcgen needs no libtorch).
//
// One class holds what the model reads, and what it writes as optional fields (absent until the
// model ran, as TensorDictModule writes them into the same instance); a nested dict becomes a
// nested class named after its key. Where the package records its input checks (torch 2.14's
// do), each input is `tensor[dtype, (batch dims, sizes)]`, with the leading dims that are
// dynamic in every input as batch dims; outputs, which the package does not describe, are
// `tensor`.

#include <string>

#include "frontend/import_dir.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// True when `path` names an AOTInductor package (a `.pt2` file) for `tcgen import`.
bool is_package_argument(const std::string& path);

/// Reads the package at `path` into a schema; `display` names it in messages and in the
/// schema's header comment. Errors (a package that cannot be read, in_keys or out_keys that do
/// not fit its call spec) are reported to `diagnostics`.
Schema import_package(const std::string& path, const std::string& display,
                      const ImportOptions& options, Diagnostics& diagnostics);

}  // namespace tcgen
