#include "emit/render.h"

#include <algorithm>
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

std::vector<const Class*> declaration_order(const Schema& schema, const ClassIndex& classes) {
  std::vector<const Class*> order;
  std::set<std::string> placed, placing;
  const auto same_file = [&](const Class& cls) { return cls.schema_path == schema.display_path; };
  // A class whose base is still being placed waits for it: a base always comes first, a nested
  // class only when no cycle runs back (then its holder refers to it before it is complete).
  const auto waits = [&](const Class& cls) {
    const auto chain = bases_of(cls, classes);
    return std::any_of(chain.begin(), chain.end(),
                       [&](const Class* base) { return placing.count(base->name) > 0; });
  };
  std::function<void(const Class&)> place = [&](const Class& cls) {
    if (placed.count(cls.name) || !placing.insert(cls.name).second) return;
    for (const Class* base : bases_of(cls, classes)) {
      if (same_file(*base)) place(*base);
    }
    for (const auto& field : cls.fields) {
      const std::string nested = nested_class_name(field.type);
      if (nested.empty()) continue;
      const Class& other = *classes.at(nested);
      if (same_file(other) && !waits(other)) place(other);
    }
    placing.erase(cls.name);
    placed.insert(cls.name);
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
