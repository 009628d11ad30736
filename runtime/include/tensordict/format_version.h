#pragma once
/// \file
/// Reading the format version of a meta.json and the entries version 1 adds (class_contract.h
/// names them; docs/format.md, "Format versions"): the one reading shared by the runtime's loader
/// (directories and archives), its save-over checks and `tcgen import`. Torch-free and
/// header-only, so tcgen, which does not link libtorch, includes it too. Nothing here throws:
/// each check returns a problem (empty when there is none) that the caller reports, naming the
/// file, in its own way.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tensordict/class_contract.h"

namespace tensordict::format {

/// A meta.json object as parsed (tensordict::Json and tcgen's JSON are this type).
using MetaJson = nlohmann::ordered_json;
/// One optional name per batch dim (tensordict::DimNames, spelled without the runtime).
using Names = std::vector<std::optional<std::string>>;

/// The dotted path of the class a `_type` string names: "<class 'pkg.mod.Name'>" gives
/// "pkg.mod.Name" (what Python's store records in `__tensorclass__`); other text is kept.
inline std::string class_path(std::string_view type) {
  constexpr std::string_view kOpen = "<class '";
  constexpr std::string_view kClose = "'>";
  if (type.substr(0, kOpen.size()) == kOpen && type.size() >= kOpen.size() + kClose.size() &&
      type.substr(type.size() - kClose.size()) == kClose) {
    type = type.substr(kOpen.size(), type.size() - kOpen.size() - kClose.size());
  }
  return std::string(type);
}

/// The class a `_type` (or `_class`) string names, without its module: "<class 'pkg.mod.Name'>",
/// "pkg.mod.Name" and "Name" all give "Name".
inline std::string class_name(std::string_view type) {
  const std::string path = class_path(type);
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

/// The format version a meta.json records, or why it cannot be read.
struct Version {
  /// kFormatVersionKey's value; 0 when the meta.json has none (version 0).
  int64_t version = 0;
  /// Empty when `version` can be read; else what is wrong: the entry is not a non-negative
  /// integer, or names a version newer than kFormatVersion.
  std::string problem;
};

/// The format version of the meta.json object `meta`.
inline Version version_of(const MetaJson& meta) {
  const auto it = meta.find(kFormatVersionKey);
  if (it == meta.end()) return {};
  const std::string entry = std::string("\"") + kFormatVersionKey + "\" ";
  // Unsigned first: a count past int64 is still a (much too new) version, not a negative one.
  if (it->is_number_unsigned()) {
    const auto version = it->get<uint64_t>();
    if (version <= static_cast<uint64_t>(kFormatVersion))
      return {static_cast<int64_t>(version), {}};
    return {0, "format version " + std::to_string(version) +
                   " is newer than the newest this library reads (" +
                   std::to_string(kFormatVersion) + ")"};
  }
  if (it->is_number_integer()) return {0, entry + it->dump() + " is negative"};
  return {0, entry + it->dump() + " is not an integer (a format version)"};
}

/// Whether `key` of a TensorDict's meta.json of format `version` is one of the format's own
/// entries rather than a key of the TensorDict: "shape", "device" and "_type", and from version 1
/// on kFormatVersionKey, kClassKey and kNamesKey. (A save refuses keys with these names.)
inline bool is_format_entry(std::string_view key, int64_t version) {
  if (key == "shape" || key == "device" || key == "_type") return true;
  return version >= 1 && (key == kFormatVersionKey || key == kClassKey || key == kNamesKey);
}

/// The dim names kNamesKey records, or why they cannot be read.
struct NamesEntry {
  /// The names, one per batch dim; nullopt when the meta.json records none or names no dim.
  std::optional<Names> names;
  /// Empty when `names` can be read; else what is wrong with the entry.
  std::string problem;
};

/// The dim names of a tensordict with `batch_dims` batch dims, from its meta.json `meta` of
/// format `version`: kNamesKey must be a list of one string or null per batch dim, no name given
/// twice. Version 0 has no such entry (a key of that name is an ordinary key there).
inline NamesEntry names_of(const MetaJson& meta, int64_t version, size_t batch_dims) {
  const auto it = meta.find(kNamesKey);
  if (version < 1 || it == meta.end()) return {};
  const std::string entry = std::string("\"") + kNamesKey + "\" ";
  if (!it->is_array()) return {std::nullopt, entry + it->dump() + " is not a list of dim names"};
  if (it->size() != batch_dims) {
    return {std::nullopt, entry + it->dump() + " has " + std::to_string(it->size()) +
                              " names for " + std::to_string(batch_dims) + " batch dims"};
  }
  Names names;
  std::set<std::string> seen;
  bool any = false;
  for (const auto& name : *it) {
    if (name.is_null()) {
      names.emplace_back();
      continue;
    }
    if (!name.is_string()) {
      return {std::nullopt, entry + it->dump() + ": " + name.dump() + " is not a string or null"};
    }
    if (!seen.insert(name.get<std::string>()).second) {
      return {std::nullopt, entry + it->dump() + " names two dims " + name.dump()};
    }
    names.push_back(name.get<std::string>());
    any = true;
  }
  return {any ? std::optional<Names>(std::move(names)) : std::nullopt, {}};
}

/// kNamesKey's value for `names`: one string or null per dim; null when no dim has a name (a save
/// then writes no entry).
inline MetaJson names_entry(const Names& names) {
  MetaJson list = MetaJson::array();
  bool named = false;
  for (const auto& name : names) {
    list.push_back(name ? MetaJson(*name) : MetaJson(nullptr));
    named = named || name.has_value();
  }
  return named ? list : MetaJson(nullptr);
}

/// What is wrong with kClassKey in the meta.json `meta` of format `version` whose `_type` is
/// `type`: the entry is not a string, or it names TensorDict for a lazy stack's directory or
/// LazyStackedTensorDict for a TensorDict's (the two classes whose layouts differ). Empty when
/// nothing is; a missing entry, and any other class (a subclass, MetaData, ...), are accepted:
/// `_type` gives the layout, as in version 0.
inline std::string class_problem(const MetaJson& meta, int64_t version, std::string_view type) {
  const auto it = meta.find(kClassKey);
  if (version < 1 || it == meta.end()) return {};
  const std::string entry = std::string("\"") + kClassKey + "\" ";
  if (!it->is_string()) return entry + it->dump() + " is not a string (a class name)";
  const std::string named = class_name(it->get<std::string>());
  const std::string held = class_name(type);
  const auto layout = [](const std::string& name) {
    return name == "TensorDict" || name == "LazyStackedTensorDict";
  };
  if (layout(named) && layout(held) && named != held) {
    return entry + it->dump() + " does not match _type " + std::string(type);
  }
  return {};
}

}  // namespace tensordict::format
