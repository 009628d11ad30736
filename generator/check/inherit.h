#pragma once
// Class inheritance (`extends:`): a derived class holds its base's fields, options and batch dims
// before its own, as a Python tensorclass subclass does. Resolved once, after reading and before
// the checks, so that every later stage sees each class whole.

#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Gives every class with a base the base's fields (first, `inherited_fields` of them), options
/// and batch dims. Reports an unknown base, a class that extends itself (directly or through
/// others) and a field declared again under a name its base already has.
void resolve_bases(std::vector<Schema>& schemas, Diagnostics& diagnostics);

}  // namespace tcgen
