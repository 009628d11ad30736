#include "emit/render.h"

#include <functional>
#include <set>

namespace tcgen {

std::string Renderer::render(const std::string& name, const kainjow::mustache::data& context) {
  kainjow::mustache::mustache tmpl(templates_.at(name));
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  if (!tmpl.is_valid()) {
    report("template '" + name + "' is invalid: " + tmpl.error_message());
    return "";
  }
  std::string text = tmpl.render(context);
  if (!tmpl.is_valid()) report("template '" + name + "': " + tmpl.error_message());
  return text;
}

kainjow::mustache::data Renderer::partial(const std::string& name) const {
  return kainjow::mustache::partial([text = templates_.at(name)] { return text; });
}

void Renderer::report(const std::string& message) {
  diagnostics_.error(SourceLoc{schema_path_, 0, 0}, message);
}

std::string trim_newlines(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string nested_class_name(const Type& type) {
  const Type& element = element_type(type);
  return element.kind == TypeKind::Class ? element.class_name : "";
}

std::vector<const Class*> declaration_order(const Schema& schema, const ClassIndex& classes) {
  std::vector<const Class*> order;
  std::set<std::string> placed;
  std::function<void(const Class&)> place = [&](const Class& cls) {
    if (!placed.insert(cls.name).second) return;
    for (const Class* base : bases_of(cls, classes)) {
      if (base->schema_path == cls.schema_path) place(*base);
    }
    for (const auto& field : cls.fields) {
      for (const auto& other : schema.classes) {
        const std::string nested = nested_class_name(field.type);
        if (!nested.empty() && classes.at(nested) == &other) place(other);
      }
    }
    order.push_back(&cls);
  };
  for (const auto& cls : schema.classes) place(cls);
  return order;
}

std::vector<const Class*> bases_of(const Class& cls, const ClassIndex& classes) {
  std::vector<const Class*> out;
  for (const Class* at = &cls; !at->base.empty();) {
    at = classes.at(at->base);
    out.push_back(at);
  }
  return out;
}

}  // namespace tcgen
