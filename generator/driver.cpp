#include "driver.h"

#include <filesystem>
#include <set>
#include <sstream>

#include "names.h"
#include "type_parser.h"
#include "yaml_reader.h"

namespace tcgen {
namespace {

void check_and_emit(Compilation& c, const Templates& templates) {
  c.classes = check_schemas(c.schemas, c.diagnostics);
  if (c.diagnostics.has_errors()) return;
  for (size_t i = 0; i < c.requested; ++i) {
    c.outputs.push_back(emit_schema(c.schemas[i], c.classes, templates, c.diagnostics));
  }
  // Two requested schemas with the same base name would write the same header.
  std::map<std::string, const Schema*> seen;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    auto [it, inserted] = seen.emplace(c.outputs[i].file_name, &c.schemas[i]);
    if (!inserted) {
      c.diagnostics.error(c.schemas[i].loc, "output '" + c.outputs[i].file_name +
                                                "' is also generated from " +
                                                it->second->display_path);
    }
  }
  if (c.diagnostics.has_errors()) c.outputs.clear();
}

// Reads included files (transitively) after the requested ones; each file once.
void read_includes(Compilation& c) {
  std::set<std::string> read;
  for (const auto& s : c.schemas) read.insert(std::filesystem::weakly_canonical(s.path).string());
  for (size_t i = 0; i < c.schemas.size(); ++i) {
    const std::vector<Include> includes = c.schemas[i].includes;
    for (const auto& include : includes) {
      if (!read.insert(std::filesystem::weakly_canonical(include.path).string()).second) continue;
      if (!std::filesystem::is_regular_file(include.path)) {
        c.diagnostics.error(include.loc, "included schema '" + include.path + "' not found");
        continue;
      }
      c.schemas.push_back(
          read_yaml_schema(include.path, display_path(include.path), c.diagnostics));
      c.dependencies.push_back(include.path);
    }
  }
}

}  // namespace

Compilation compile(const std::vector<std::string>& schema_paths, const Templates& templates) {
  Compilation c;
  for (const auto& path : schema_paths) {
    c.schemas.push_back(read_yaml_schema(path, display_path(path), c.diagnostics));
    c.dependencies.push_back(path);
  }
  c.requested = c.schemas.size();
  read_includes(c);
  check_and_emit(c, templates);
  return c;
}

Compilation compile_text(const std::string& text, const std::string& display,
                         const Templates& templates) {
  Compilation c;
  c.schemas.push_back(read_yaml_text(text, display, c.diagnostics));
  c.requested = 1;
  check_and_emit(c, templates);
  return c;
}

std::string dump_model(const std::vector<Schema>& schemas) {
  std::ostringstream os;
  for (const auto& schema : schemas) {
    os << "schema " << schema.display_path << " namespace=" << schema.cpp_namespace << "\n";
    for (const auto& cls : schema.classes) {
      const Options& o = cls.options;
      os << "  class " << cls.name << " python=" << python_type_string(cls) << " options=["
         << (o.frozen ? " frozen" : "") << (o.autocast ? " autocast" : "")
         << (o.nocast ? " nocast" : "") << (o.tensor_only ? " tensor_only" : "")
         << (o.shadow ? " shadow" : "") << " ] batch_dims=[";
      for (const auto& d : cls.batch_dims) os << " " << d;
      os << " ]\n";
      for (const auto& m : cls.methods) os << "    method " << m << "\n";
      for (const auto& f : cls.fields) {
        os << "    field " << f.name << ": " << type_to_string(f.type);
        if (f.default_value) os << " = " << f.default_value->dump();
        os << "\n";
      }
    }
  }
  return os.str();
}

}  // namespace tcgen
