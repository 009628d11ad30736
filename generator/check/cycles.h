#pragma once
// Classes that hold each other. An instance ends only where an optional field is None, so every
// cycle of nesting needs one (Python's `next: Optional["Node"] = None`, or two classes that name
// each other). The classes of a cycle refer to each other before all are complete: C++ declares
// them first and defines what needs them complete after (one header), Python names them in
// quotes (one module).

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Reports a cycle of required nesting (fields of class type and bases: a derived class holds its
/// base's fields), and a cycle whose classes lie in more than one schema file or Python module.
void check_nesting_cycles(const ClassIndex& classes, Diagnostics& diagnostics);

}  // namespace tcgen
