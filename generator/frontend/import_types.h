#pragma once
// What the importers (`tcgen import` of directories and of AOTInductor packages) share: how they
// build types and name batch dims.

#include <string>
#include <vector>

#include "model/model.h"

namespace tcgen {

/// Names of `rank` batch dims: N; B, N; B0, B1, B2, ...
std::vector<std::string> batch_dim_names(size_t rank);

/// A type of `kind` with nothing else set.
Type make_type(TypeKind kind);
/// `kind[element]`: optional[...] or list[...].
Type wrap(TypeKind kind, Type element);

}  // namespace tcgen
