#pragma once
/// \file
/// JSON text as Python writes and reads it. Python tensordict writes meta.json with the stdlib json
/// module, whose spelling differs from nlohmann's (", " separators, `\uXXXX` escapes, float repr,
/// NaN/Infinity tokens); byte-compatible files need that spelling.

#include <string>
#include <string_view>

#include "tensordict/limits.h"
#include "tensordict/non_tensor.h"

namespace tensordict {

/// The json.dumps arguments dumps_python takes.
struct JsonStyle {
  bool ensure_ascii = true;  ///< escape every non-ASCII character as `\uXXXX` (surrogate pairs)
  bool compact = false;      ///< "," and ":" separators instead of ", " and ": "
};

/// Python's json.dumps(value, ensure_ascii=..., separators=...) byte for byte: floats as Python's
/// repr (0.1, 1e-05, 1e+16, 1.0), NaN/Infinity/-Infinity tokens, object keys in insertion order.
std::string dumps_python(const Json& value, JsonStyle style = {});

/// Deepest nesting of arrays and objects parse_json accepts: the bound of the limits table
/// (Python's json module stops near its recursion limit of 1000 too).
using limits::kMaxJsonDepth;

/// Parses JSON text, also accepting Python's NaN, Infinity and -Infinity tokens. Throws
/// FormatError (with `what` naming the source, e.g. a file path) on malformed text, on nesting
/// deeper than kMaxJsonDepth and on an object with a duplicate key.
Json parse_json(std::string_view text, const std::string& what = "JSON text");

/// Python's repr (= str() for containers) of a JSON-like value: 'text', True, None, [1, 'a'],
/// {'k': 1}.
std::string python_repr(const Json& value);

/// Python's repr of a float (shortest round-trip digits; "1.0", "1e-05", "inf", "nan").
std::string python_float_repr(double value);

}  // namespace tensordict
