// The files of a tensorclass directory as `tcgen import DIR` reads them: walked as the runtime
// loads a tree (never through a symlink, never deeper than it loads), each meta.json parsed in
// time linear in its size and within tcgen's bounds. Problems are reported, never thrown.
#include "frontend/import_files.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "frontend/import_dir.h"
#include "frontend/input_checks.h"
#include "tensordict/format_version.h"
#include "tensordict/json_builder.h"
#include "tensordict/limits.h"

namespace tcgen {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

void report(Diagnostics& diagnostics, const std::string& where, const std::string& message) {
  diagnostics.error(SourceLoc{where, 0, 0}, message);
}

// `dir/name` as a JSON object, within the bounds; nullopt (reported) otherwise.
std::optional<Json> read_json(const fs::path& dir, const std::string& display,
                              const std::string& name, Diagnostics& diagnostics) {
  const fs::path path = dir / name;
  const std::string where = display + "/" + name;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    report(diagnostics, where, "cannot be read: " + ec.message());
    return std::nullopt;
  }
  if (!fs::exists(status)) {
    report(diagnostics, where, "missing (a memmap directory holds a meta.json)");
    return std::nullopt;
  }
  if (fs::is_symlink(status)) {
    report(diagnostics, where,
           "refusing to read a file through a symlink (a memmap tree's files lie "
           "inside it)");
    return std::nullopt;
  }
  // Checked before opening: opening a FIFO would block until a writer comes.
  if (!fs::is_regular_file(status)) {
    report(diagnostics, where, "is not a regular file");
    return std::nullopt;
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxMetaBytes) {
    report(diagnostics, where,
           "is " + std::to_string(size >> 20) + " MiB, more than tcgen import reads (" +
               std::to_string(kMaxMetaBytes >> 20) + " MiB)");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    report(diagnostics, where, "cannot be opened");
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  // Linear in the file's size (each key is not searched among the object's others).
  tensordict::format::LinearJsonBuilder builder(static_cast<size_t>(kMaxNesting) + 1);
  if (builder.parse(text.str())) {
    Json meta = builder.take();
    if (meta.is_object()) return meta;
    report(diagnostics, where, "is not a JSON object");
    return std::nullopt;
  }
  switch (builder.stop()) {
    case tensordict::format::LinearJsonBuilder::Stop::TooDeep:
      report(diagnostics, where,
             "JSON nested deeper than " + std::to_string(kMaxNesting) + " levels");
      break;
    case tensordict::format::LinearJsonBuilder::Stop::DuplicateKey:
      report(diagnostics, where, "duplicate key " + Json(builder.detail()).dump());
      break;
    default:
      report(diagnostics, where, "malformed JSON: " + builder.detail());
  }
  return std::nullopt;
}

}  // namespace

// `dir/meta.json` as JSON, within the bounds; nullopt (reported) otherwise. `dir` is at `level`
// of the tree (its root the first): walked as the runtime loads a tree, never through a symlink
// and never deeper than it loads, so the walk visits each directory once, and is bounded.
std::optional<Json> read_meta(const fs::path& dir, const std::string& display, int level,
                              Diagnostics& diagnostics) {
  if (level > tensordict::limits::kMaxTreeDepth) {
    report(diagnostics, display,
           "directories nested deeper than " + std::to_string(tensordict::limits::kMaxTreeDepth) +
               " levels, which the runtime does not load");
    return std::nullopt;
  }
  std::error_code ec;
  if (level > 1 && fs::is_symlink(fs::symlink_status(dir, ec))) {
    report(diagnostics, display,
           "refusing to follow a symlink (a memmap tree's directories lie inside it)");
    return std::nullopt;
  }
  return read_json(dir, display, "meta.json", diagnostics);
}

bool entry_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// The version a versioned class's save records (tensordict::kSchemaVersionFile); 0 without one.
int64_t read_version(const fs::path& dir, const std::string& display, Diagnostics& diagnostics) {
  if (!entry_exists(dir / tensordict::kSchemaVersionFile)) return 0;
  const std::optional<Json> file =
      read_json(dir, display, tensordict::kSchemaVersionFile, diagnostics);
  const auto it = file ? file->find("version") : Json::const_iterator();
  if (file && it != file->end() && it->is_number_integer() && it->get<int64_t>() > 0) {
    return it->get<int64_t>();
  }
  if (file) {
    report(diagnostics, display + "/" + tensordict::kSchemaVersionFile,
           "expected {\"version\": <a positive integer>}");
  }
  return 0;
}

}  // namespace tcgen
