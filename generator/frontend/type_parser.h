#pragma once
// Parses type expressions of the schema language:
//   tensor | tensor[DTYPE] | tensor[SHAPE] | tensor[DTYPE, SHAPE]     SHAPE = (B, T, 3)
//   str | int | float | bool | any | list[TYPE] | optional[TYPE] | ClassName

#include <string>
#include <vector>

#include "model/diagnostics.h"
#include "model/kinds.h"
#include "model/model.h"

namespace tcgen {

/// Parses `text`, found at `loc`; reports problems (located at the offending character) to
/// `diagnostics` and returns false when the text is malformed. A type spelt as in Python
/// (`Optional[int]`, `torch.Tensor`) is reported with the schema's spelling, at `loc`.
bool parse_type(const std::string& text, const SourceLoc& loc, Type& out, Diagnostics& diagnostics);

/// When `text` is a type spelt as in Python (`Optional[int]`, `Dict[str, Tensor]`, `Tensor`):
/// what to write instead, as the end of a message after "type 'TEXT' "; "" otherwise.
std::string python_spelling_advice(const std::string& text);

/// The built-in type names (`tensor`, `str`, ..., `optional`), for "did you mean" hints.
std::vector<std::string> builtin_type_names();

/// Why a list cannot hold `element` (a tensor or a class), with what to use instead; "" when it
/// can.
std::string list_element_problem(const Type& element);

}  // namespace tcgen
