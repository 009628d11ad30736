#pragma once
// What the importers (`tcgen import` of directories and of AOTInductor packages) share: how they
// build, merge and name types and batch dims.

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

/// True when `a` and `b` spell the same schema type.
bool same_type(const Type& a, const Type& b);
/// The type covering both (a class met twice, an element of a lazy stack): tensors keep the
/// dtype and shape they agree on, anything else that differs is `any`.
Type merge_types(const Type& a, const Type& b);

}  // namespace tcgen
