#include "frontend/yaml_reader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "frontend/input_checks.h"
#include "frontend/text_values.h"
#include "frontend/type_parser.h"
#include "model/name_rules.h"
#include "model/schema_keys.h"

namespace tcgen {
namespace {

using Json = nlohmann::ordered_json;

// Reads one file's nodes, reporting into `diagnostics` with the file's display name.
class Reader {
 public:
  Reader(std::string display, std::string dir, Diagnostics& diagnostics)
      : display_(std::move(display)), dir_(std::move(dir)), diagnostics_(diagnostics) {}

  Schema schema(const YAML::Node& root) {
    Schema schema;
    schema.display_path = display_;
    schema.loc = loc(root);
    if (!root.IsDefined() || root.IsNull()) {
      diagnostics_.error(SourceLoc{display_, 1, 1}, "empty schema: expected a 'classes' list");
      return schema;
    }
    if (!expect_map(root, "the schema")) return schema;
    for (const auto& [key, value] : entries(root, KeyScope::Schema, "the schema")) {
      if (key == "namespace") {
        schema.cpp_namespace = scalar(value, "'namespace'");
        schema.namespace_loc = text_loc(value);
      } else if (key == "version") {
        schema.version_loc = text_loc(value);
        schema.version = read_version(scalar(value, "'version'"), schema.version_loc, diagnostics_);
      } else if (key == "include") {
        read_includes(value, schema);
      } else if (key == "classes") {
        read_classes(value, schema);
      }
    }
    if (!root["classes"]) diagnostics_.error(loc(root), "the schema has no 'classes' list");
    for (auto& cls : schema.classes) {
      cls.cpp_namespace = schema.cpp_namespace;
      cls.version = schema.version;
      cls.schema_path = display_;
    }
    return schema;
  }

 private:
  SourceLoc loc(const YAML::Node& node) const {
    YAML::Mark mark = node.Mark();
    if (mark.line < 0) return SourceLoc{display_, 0, 0};
    return SourceLoc{display_, mark.line + 1, mark.column + 1};
  }
  // Position of a scalar's first character (past an opening quote).
  SourceLoc text_loc(const YAML::Node& node) const {
    SourceLoc at = loc(node);
    if (node.Tag() == "!") at.column += 1;
    return at;
  }

  static const char* kind_name(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Scalar:
        return "a scalar";
      default:
        return "null";
    }
  }
  bool expect_kind(const YAML::Node& node, YAML::NodeType::value kind, const char* expected,
                   const std::string& what) {
    if (node.Type() == kind) return true;
    diagnostics_.error(loc(node), what + " must be " + expected + ", not " + kind_name(node));
    return false;
  }
  bool expect_map(const YAML::Node& node, const std::string& what) {
    return expect_kind(node, YAML::NodeType::Map, "a mapping", what);
  }
  bool expect_list(const YAML::Node& node, const std::string& what) {
    return expect_kind(node, YAML::NodeType::Sequence, "a list", what);
  }
  bool expect_scalar(const YAML::Node& node, const std::string& what) {
    return expect_kind(node, YAML::NodeType::Scalar, "a string", what);
  }

  // The (key, value) pairs of a mapping of `scope` (the schema, a class, a field); unknown and
  // duplicate keys are reported and skipped.
  std::vector<std::pair<std::string, YAML::Node>> entries(const YAML::Node& map, KeyScope scope,
                                                          const std::string& what) {
    const std::vector<const SchemaKey*> allowed = yaml_keys(scope);
    std::vector<std::pair<std::string, YAML::Node>> out;
    std::map<std::string, SourceLoc> seen;
    for (const auto& item : map) {
      const std::string key = item.first.Scalar();
      SourceLoc at = loc(item.first);
      if (!item.first.IsScalar() || key.empty()) {
        diagnostics_.error(at, std::string(item.first.IsScalar() ? "empty key" : "a key") + " in " +
                                   what + (item.first.IsScalar() ? "" : " is not a string") +
                                   " (allowed: " + key_names(allowed) + ")");
      } else if (!find_key(allowed, key)) {
        diagnostics_.error(
            at, "unknown key '" + key + "' in " + what + " (allowed: " + key_names(allowed) + ")");
      } else if (seen.count(key)) {
        diagnostics_.error(at, "duplicate key '" + key + "' in " + what);
        diagnostics_.note(seen[key], "previously given here");
      } else {
        seen[key] = at;
        out.emplace_back(key, item.second);
      }
    }
    return out;
  }

  std::string scalar(const YAML::Node& node, const std::string& what) {
    return expect_scalar(node, what) ? node.Scalar() : std::string();
  }

  // A plain key of `owner` (a Class or a Field) as its row says; false for a key of its own.
  template <class Owner>
  bool read_plain(KeyScope scope, const std::string& name, const YAML::Node& value, Owner& owner) {
    const SchemaKey& key = *find_key(yaml_keys(scope), name);
    if (const auto* text = std::get_if<std::string Owner::*>(&key.target)) {
      owner.*(*text) = scalar(value, "'" + name + "'");
    } else if (const auto* names = std::get_if<std::vector<std::string> Owner::*>(&key.target)) {
      owner.*(*names) = key.one_name_alone && value.IsScalar()
                            ? std::vector<std::string>{value.Scalar()}
                            : string_list(value, name);
    } else {
      return false;
    }
    return true;
  }

  std::vector<std::string> string_list(const YAML::Node& node, const std::string& what) {
    std::vector<std::string> out;
    if (!expect_list(node, "'" + what + "'")) return out;
    for (const auto& item : node) {
      if (expect_scalar(item, "an entry of '" + what + "'")) out.push_back(item.Scalar());
    }
    return out;
  }

  void read_includes(const YAML::Node& node, Schema& schema) {
    if (!expect_list(node, "'include'")) return;
    for (const auto& item : node) {
      if (!expect_scalar(item, "an entry of 'include'")) continue;
      const auto path = (std::filesystem::path(dir_) / item.Scalar()).lexically_normal();
      schema.includes.push_back(Include{path.string(), item.Scalar(), text_loc(item)});
    }
  }

  void read_classes(const YAML::Node& node, Schema& schema) {
    if (!expect_list(node, "'classes'")) return;
    for (const auto& item : node) {
      if (expect_map(item, "a class")) schema.classes.push_back(read_class(item));
    }
  }

  Class read_class(const YAML::Node& node) {
    Class cls;
    cls.loc = loc(node);
    for (const auto& [key, value] : entries(node, KeyScope::Class, "a class")) {
      if (read_plain(KeyScope::Class, key, value, cls)) continue;
      if (key == "name") {
        cls.name = scalar(value, "'name'");
        cls.loc = text_loc(value);
        if (cls.name.empty() && value.IsScalar()) diagnostics_.error(cls.loc, "empty class name");
      } else if (key == "python") {
        cls.python_name = scalar(value, "'python'");
        cls.python_loc = text_loc(value);
      } else if (key == "extends") {
        cls.base = scalar(value, "'extends'");
        cls.base_loc = text_loc(value);
      } else if (key == "options") {
        read_options(value, cls.options);
      } else if (key == "fields") {
        read_fields(value, cls);
      }
    }
    if (!node["name"]) diagnostics_.error(cls.loc, "a class needs a 'name'");
    return cls;
  }

  void read_options(const YAML::Node& node, Options& options) {
    options.loc = loc(node);
    if (!expect_list(node, "'options'")) return;
    for (const auto& item : node) {
      if (expect_scalar(item, "an option"))
        add_option(item.Scalar(), text_loc(item), options, diagnostics_);
    }
  }

  void read_fields(const YAML::Node& node, Class& cls) {
    if (!expect_list(node, "'fields'")) return;
    for (const auto& item : node) {
      if (expect_map(item, "a field")) cls.fields.push_back(read_field(item));
    }
  }

  Field read_field(const YAML::Node& node) {
    Field field;
    field.loc = loc(node);
    for (const auto& [key, value] : entries(node, KeyScope::Field, "a field")) {
      if (read_plain(KeyScope::Field, key, value, field)) continue;
      if (key == "name") {
        field.name = scalar(value, "'name'");
        field.loc = text_loc(value);
        if (field.name.empty() && value.IsScalar()) {
          diagnostics_.error(field.loc, "empty field name");
        }
      } else if (key == "type") {
        read_type(value, field.type);
      } else if (key == "default") {
        field.default_loc = text_loc(value);
        field.default_value = to_json(value);
        if (!strings_are_utf8(*field.default_value)) {
          diagnostics_.error(field.default_loc,
                             "default of field '" + field.name +
                                 "' is not valid UTF-8 (yaml-cpp turns the escapes \\N and "
                                 "\\_ into single bytes; write \\u0085 or \\u00a0)");
          field.default_value.reset();
        }
      } else if (key == "deprecated") {
        read_deprecated(value, field);
      }
    }
    if (!node["name"]) diagnostics_.error(field.loc, "a field needs a 'name'");
    if (!node["type"]) {
      diagnostics_.error(field.loc, "field '" + field.name + "' needs a 'type'");
    }
    return field;
  }

  // `deprecated: true` (or false), or the reason as a string.
  void read_deprecated(const YAML::Node& node, Field& field) {
    if (!expect_scalar(node, "'deprecated'")) return;
    const std::string& text = node.Scalar();
    if (node.Tag() != "!" && (text == "true" || text == "false")) {
      if (text == "true") field.deprecated = "";
    } else {
      field.deprecated = text;
    }
  }

  void read_type(const YAML::Node& node, Type& type) {
    if (!expect_scalar(node, "a type")) return;
    parse_type(node.Scalar(), text_loc(node), type, diagnostics_);
  }

  // The text checks cover the file, but yaml-cpp unescapes \N and \_ into raw bytes.
  static bool strings_are_utf8(const Json& value) {
    if (value.is_string()) return is_utf8(value.get_ref<const std::string&>());
    if (value.is_object()) {
      for (const auto& [key, item] : value.items()) {
        if (!is_utf8(key) || !strings_are_utf8(item)) return false;
      }
    }
    return !value.is_array() || std::all_of(value.begin(), value.end(), strings_are_utf8);
  }

  // Defaults: plain scalars are typed as YAML 1.2's core schema; quoted scalars are strings.
  static Json to_json(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Sequence: {
        Json list = Json::array();
        for (const auto& item : node) list.push_back(to_json(item));
        return list;
      }
      case YAML::NodeType::Map: {
        Json object = Json::object();
        for (const auto& item : node) object[item.first.Scalar()] = to_json(item.second);
        return object;
      }
      case YAML::NodeType::Scalar:
        return scalar_json(node);
      default:
        return nullptr;
    }
  }

  static Json scalar_json(const YAML::Node& node) {
    const std::string& text = node.Scalar();
    if (node.Tag() == "!") return text;
    if (text == "null" || text == "~" || text.empty()) return nullptr;
    if (text == "true") return true;
    if (text == "false") return false;
    int64_t i = 0;
    if (YAML::convert<int64_t>::decode(node, i) && text.find_first_of(".eE") == std::string::npos) {
      return i;
    }
    double d = 0;
    if (YAML::convert<double>::decode(node, d)) return d;
    return text;
  }

  std::string display_;
  std::string dir_;
  Diagnostics& diagnostics_;
};

Schema read_node(const std::string& text, const std::string& display, const std::string& dir,
                 Diagnostics& diagnostics) {
  Schema empty;
  empty.display_path = display;
  if (!check_text(text, display, diagnostics)) return empty;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    diagnostics.error(SourceLoc{display, e.mark.line + 1, e.mark.column + 1},
                      "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    return empty;
  } catch (const YAML::Exception& e) {
    if (!explain_tab_indent(text, e.mark, display, diagnostics) &&
        !explain_flow_types(text, e.mark, display, diagnostics)) {
      SourceLoc at{display, e.mark.line + 1, e.mark.column + 1};
      diagnostics.error(at, "YAML syntax error: " + e.msg);
    }
    return empty;
  }
  if (!check_size(root, display, diagnostics)) return empty;
  return Reader(display, dir, diagnostics).schema(root);
}

}  // namespace

std::string schema_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return "cannot be read: " + ec.message();
  if (!fs::exists(status)) return "not found";
  if (fs::is_directory(status)) return "is a directory";
  if (!fs::is_regular_file(status)) return "is not a regular file";
  // A schema is text of a few KB; a huge file is a mistake and would be read whole.
  constexpr std::uintmax_t kMaxSchemaBytes = std::uintmax_t{16} << 20;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxSchemaBytes) {
    return "is " + std::to_string(size >> 20) + " MiB, more than a schema may be (16 MiB)";
  }
  return "";
}

Schema read_yaml_schema(const std::string& path, const std::string& display,
                        Diagnostics& diagnostics) {
  Schema empty;
  empty.display_path = display;
  // Checked before opening: opening a FIFO would block until a writer comes.
  const std::string problem = schema_file_problem(path);
  if (!problem.empty()) {
    diagnostics.error(SourceLoc{display, 0, 0}, "schema file " + problem);
    return empty;
  }
  std::ifstream in(path);
  if (!in) {
    diagnostics.error(SourceLoc{display, 0, 0}, "cannot open schema file");
    return empty;
  }
  std::stringstream text;
  text << in.rdbuf();
  Schema schema = read_node(text.str(), display, std::filesystem::path(path).parent_path().string(),
                            diagnostics);
  schema.path = path;
  return schema;
}

Schema read_yaml_text(const std::string& text, const std::string& display,
                      Diagnostics& diagnostics) {
  return read_node(text, display, ".", diagnostics);
}

}  // namespace tcgen
