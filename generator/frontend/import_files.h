#pragma once
// Reading a tensorclass directory's files for `tcgen import DIR` (import_files.cpp).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "model/diagnostics.h"

namespace tcgen {

/// `dir/meta.json` as a JSON object; nullopt (reported) when it is missing, not a regular file,
/// a symlink, too large, malformed or past the JSON bounds. `dir` is at `level` of the tree (its
/// root the first), refused past the runtime's depth or when it is itself a symlink.
std::optional<nlohmann::ordered_json> read_meta(const std::filesystem::path& dir,
                                                const std::string& display, int level,
                                                Diagnostics& diagnostics);

/// True when `path` exists, a symlink included (not followed).
bool entry_exists(const std::filesystem::path& path);

/// The version a versioned class's save records (tensordict::kSchemaVersionFile); 0 without one
/// (a malformed file is reported).
int64_t read_version(const std::filesystem::path& dir, const std::string& display,
                     Diagnostics& diagnostics);

}  // namespace tcgen
