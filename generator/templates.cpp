#include "templates.h"

#include <kainjow/mustache.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tcgen {

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
    }
  }
  return templates;
}

}  // namespace tcgen
