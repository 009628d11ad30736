#pragma once
// Parses type expressions of the schema language:
//   tensor | tensor[DTYPE] | tensor[SHAPE] | tensor[DTYPE, SHAPE]     SHAPE = (B, T, 3)
//   str | int | float | bool | any | list[TYPE] | optional[TYPE] | ClassName

#include <string>

#include "model/diagnostics.h"
#include "model/kinds.h"
#include "model/model.h"

namespace tcgen {

/// Parses `text`, found at `loc`; reports problems (located at the offending character) to
/// `diagnostics` and returns false when the text is malformed.
bool parse_type(const std::string& text, const SourceLoc& loc, Type& out, Diagnostics& diagnostics);

}  // namespace tcgen
