#pragma once
// What every emitter shares: rendering a Mustache template, and the order a file declares its
// classes in.

#include <kainjow/mustache.hpp>

#include <string>
#include <vector>

#include "emit/templates.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Renders templates with HTML escaping off; reports invalid templates at the schema. Values are
/// never rendered as templates, so user text holding `{{` is output as written (load_templates
/// checks the names a template uses).
class Renderer {
 public:
  Renderer(const Templates& templates, Diagnostics& diagnostics, std::string schema_path)
      : templates_(templates), diagnostics_(diagnostics), schema_path_(std::move(schema_path)) {}

  std::string render(const std::string& name, const kainjow::mustache::data& context);
  /// The template `name`, for a context to give another template as its partial `{{>name}}`.
  kainjow::mustache::data partial(const std::string& name) const;

 private:
  void report(const std::string& message);

  const Templates& templates_;
  Diagnostics& diagnostics_;
  std::string schema_path_;
};

/// `text` without its trailing newlines (a rendered part goes into a template's line).
std::string trim_newlines(std::string text);

/// Classes of the file, each after the classes of the same file it nests (C++ needs them
/// complete, Python bound).
std::vector<const Class*> declaration_order(const Schema& schema, const ClassIndex& classes);

/// The classes `cls` extends, its own base first (empty when it has none).
std::vector<const Class*> bases_of(const Class& cls, const ClassIndex& classes);

}  // namespace tcgen
