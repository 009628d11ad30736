#include "frontend/annotation.h"

#include <algorithm>
#include <sstream>

#include "frontend/input_checks.h"
#include "frontend/text_values.h"
#include "frontend/type_parser.h"
#include "model/name_rules.h"
#include "model/schema_keys.h"
#include "tensordict/annotate.h"

namespace tcgen {
namespace {

constexpr char kPrefix[] = "tensorclass:";
constexpr char kSeparator = TC_DETAIL_SEP[0];  // annotate.h

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

// "a, b,c" -> {a, b, c}; empty text -> {}.
std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) out.push_back(trim(part));
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

// Entries with known keys of `scope` (TC_CLASS or TC_FIELD, named `what`), each once; the
// others are reported.
std::vector<std::pair<std::string, std::string>> checked_entries(const Annotation& annotation,
                                                                 KeyScope scope,
                                                                 const std::string& what,
                                                                 const SourceLoc& loc,
                                                                 Diagnostics& diagnostics) {
  for (const auto& entry : annotation.malformed) {
    diagnostics.error(loc, "'" + entry + "' in " + what + " is not key=value");
  }
  const std::vector<const SchemaKey*> allowed = annotation_keys(scope);
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::string> seen;
  for (const auto& [key, value] : annotation.entries) {
    if (!find_key(allowed, key)) {
      diagnostics.error(
          loc, "unknown key '" + key + "' in " + what + " (allowed: " + key_names(allowed) + ")");
    } else if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      diagnostics.error(loc, "duplicate key '" + key + "' in " + what);
    } else {
      seen.push_back(key);
      out.emplace_back(key, value);
    }
  }
  return out;
}

// A plain key of `owner` (a Class or a Field) as its row says; false for a key of its own.
template <class Owner>
bool apply_plain(KeyScope scope, const std::string& name, const std::string& value, Owner& owner) {
  const SchemaKey& key = *find_key(annotation_keys(scope), name);
  if (const auto* text = std::get_if<std::string Owner::*>(&key.target)) {
    owner.*(*text) = value;
  } else if (const auto* names = std::get_if<std::vector<std::string> Owner::*>(&key.target)) {
    owner.*(*names) = comma_list(value);
  } else {
    return false;
  }
  return true;
}

void read_options(const std::string& text, Options& options, Diagnostics& diagnostics) {
  for (const auto& name : comma_list(text)) add_option(name, options.loc, options, diagnostics);
}

// The tensor a field's dtype and shape constrain: the field's type or its optional's element.
Type* constrained_tensor(Type& type) {
  if (type.kind == TypeKind::Optional && !type.args.empty())
    return constrained_tensor(type.args[0]);
  return type.kind == TypeKind::Tensor ? &type : nullptr;
}

// dtype and shape are parsed by the schema language's own type parser (`tensor[dtype, shape]`),
// so both front ends accept and reject the same spellings; messages move to the field.
void constrain_tensor(Field& field, const std::string& dtype, const std::string& shape,
                      Diagnostics& diagnostics) {
  Type* tensor = constrained_tensor(field.type);
  if (!tensor) {
    diagnostics.error(field.loc, "field '" + field.name +
                                     "': dtype and shape apply to tensors, not " +
                                     type_to_string(field.type));
    return;
  }
  std::string params = dtype;
  if (!shape.empty()) params += (params.empty() ? "" : ", ") + shape;
  Diagnostics local;
  Type parsed;
  parse_type("tensor[" + params + "]", field.loc, parsed, local);
  for (const auto& d : local.all()) {
    if (d.severity == Diagnostic::Severity::Error) {
      diagnostics.error(field.loc, "field '" + field.name + "': " + d.message);
    }
  }
  if (local.has_errors()) return;
  tensor->dtype = parsed.dtype;
  tensor->shape = parsed.shape;
}

}  // namespace

std::optional<Annotation> parse_annotation(const std::string& text) {
  if (text.rfind(kPrefix, 0) != 0) return std::nullopt;
  Annotation out;
  std::istringstream parts(text.substr(sizeof(kPrefix) - 1));
  std::getline(parts, out.kind, kSeparator);
  for (std::string entry; std::getline(parts, entry, kSeparator);) {
    if (trim(entry).empty()) continue;  // TC_CLASS() expands to one empty entry
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      out.malformed.push_back(entry);
    } else {
      out.entries.emplace_back(trim(entry.substr(0, eq)), trim(entry.substr(eq + 1)));
    }
  }
  return out;
}

void apply_class_annotation(const Annotation& annotation, Class& cls, Diagnostics& diagnostics) {
  cls.options.loc = cls.loc;
  for (const auto& [key, value] :
       checked_entries(annotation, KeyScope::Class, "TC_CLASS", cls.loc, diagnostics)) {
    if (apply_plain(KeyScope::Class, key, value, cls)) continue;
    if (key == "options") {
      read_options(value, cls.options, diagnostics);
    } else if (key == "python") {
      cls.python_name = value;
      cls.python_loc = cls.loc;
    } else if (key == "version") {
      cls.version = read_version(value, cls.loc, diagnostics);
    }
  }
}

void apply_field_annotation(const Annotation& annotation, Field& field, Diagnostics& diagnostics) {
  std::string dtype, shape;
  for (const auto& [key, value] :
       checked_entries(annotation, KeyScope::Field, "TC_FIELD", field.loc, diagnostics)) {
    if (apply_plain(KeyScope::Field, key, value, field)) continue;
    if (key == "dtype") {
      dtype = value;
    } else if (key == "shape") {
      shape = value;
    } else if (key == "deprecated") {  // `deprecated=true`, or the reason
      if (value != "false") field.deprecated = value == "true" ? "" : value;
    } else if (key == "default") {
      // JSON, so a default reads the same in every front end: strings are quoted. Values nested
      // deeper than the YAML front end allows are dropped while parsing (a deep tree would
      // overflow the stack when written or destroyed) and reported.
      bool too_deep = false;
      auto parsed = nlohmann::ordered_json::parse(
          value,
          [&too_deep](int depth, nlohmann::ordered_json::parse_event_t, nlohmann::ordered_json&) {
            if (depth > kMaxNesting) too_deep = true;
            return depth <= kMaxNesting;
          },
          false);
      if (too_deep) {
        diagnostics.error(field.loc, "field '" + field.name + "': default nested deeper than " +
                                         std::to_string(kMaxNesting) + " levels");
      } else if (parsed.is_discarded()) {
        diagnostics.error(field.loc, "field '" + field.name + "': default '" + value +
                                         "' is not a JSON value (strings are quoted: \"text\")");
      } else {
        field.default_value = std::move(parsed);
        field.default_loc = field.loc;
      }
    }
  }
  if (!dtype.empty() || !shape.empty()) constrain_tensor(field, dtype, shape, diagnostics);
}

}  // namespace tcgen
