#pragma once
// `tcgen compat OLD NEW`: every change between two versions of a schema, each judged safe or
// breaking for the data on disk, for the generated C++ API and for the generated Python classes,
// as `buf breaking` and `flatc --conform` judge protobuf and FlatBuffers schemas.

#include <array>
#include <string>
#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// What a schema change may break.
enum class Audience { Data, Cpp, Python };
inline constexpr std::array<const char*, 3> kAudienceNames{"data", "C++", "Python"};

/// One change from the old schema to the new one.
struct SchemaChange {
  SourceLoc loc;  ///< in the new schema; in the old one for what was removed
  std::string message;
  std::array<bool, 3> breaks{};  ///< by Audience
  std::string hint;              ///< how the change may have been meant, when tcgen can tell
};

/// Every change from `old_schemas` to `new_schemas` (each: a schema and the ones it includes),
/// classes matched by name, fields by name or `renamed_from:`. Checked models (no errors) only.
std::vector<SchemaChange> compare_schemas(const std::vector<Schema>& old_schemas,
                                          const std::vector<Schema>& new_schemas);

/// The changes as diagnostics: an error for each change breaking one of `audiences`, a note for
/// the others ("safe"), each followed by its hint, and a warning when the new schema changes but
/// keeps its version.
std::vector<Diagnostic> compat_report(const std::vector<SchemaChange>& changes,
                                      const std::vector<Audience>& audiences,
                                      const std::vector<Schema>& old_schemas,
                                      const std::vector<Schema>& new_schemas);

}  // namespace tcgen
