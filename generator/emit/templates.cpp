#include "emit/templates.h"

#include <kainjow/mustache.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tcgen {

std::set<std::string> template_names(const std::string& text) {
  std::set<std::string> names;
  for (size_t open = text.find("{{"); open != std::string::npos; open = text.find("{{", open)) {
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;  // a syntax error, reported by the parser
    std::string tag = text.substr(open + 2, close - open - 2);
    open = close + 2;
    if (!tag.empty() && tag.front() == '{') tag.erase(0, 1);  // {{{x}}}
    if (!tag.empty() && (tag.front() == '!' || tag.front() == '/')) continue;
    if (!tag.empty() && (tag.front() == '#' || tag.front() == '^' || tag.front() == '&'))
      tag.erase(0, 1);
    const size_t first = tag.find_first_not_of(" \t");
    const size_t last = tag.find_last_not_of(" \t");
    if (first != std::string::npos) names.insert(tag.substr(first, last - first + 1));
  }
  return names;
}

Templates load_templates(const std::string& dir, Diagnostics& diagnostics) {
  Templates templates = builtin_templates();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    diagnostics.error(SourceLoc{dir, 0, 0}, "template directory not found");
    return templates;
  }
  for (auto& [name, text] : templates) {
    if (dir.empty()) break;
    const auto path = std::filesystem::path(dir) / (name + ".mustache");
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream content;
    content << in.rdbuf();
    text = content.str();
    kainjow::mustache::mustache parsed(text);
    if (!parsed.is_valid()) {
      diagnostics.error(SourceLoc{path.generic_string(), 0, 0},
                        "invalid template: " + parsed.error_message());
      continue;
    }
    // What the emitter provides for a template is what the built-in one uses.
    const std::set<std::string> provided = template_names(builtin_templates().at(name));
    for (const auto& used : template_names(text)) {
      if (provided.count(used)) continue;
      std::string list;
      for (const auto& p : provided) list += (list.empty() ? "" : ", ") + p;
      diagnostics.error(SourceLoc{path.generic_string(), 0, 0},
                        "template uses '" + used + "', which tcgen does not provide for '" + name +
                            "' (it provides: " + list + ")");
    }
  }
  return templates;
}

}  // namespace tcgen
