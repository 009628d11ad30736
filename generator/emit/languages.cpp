#include "emit/languages.h"

#include <stdexcept>

#include "emit/cpp/headers.h"

namespace tcgen {
namespace {

std::vector<Output> cpp_headers(const EmitRequest& request, Diagnostics& diagnostics) {
  return emit_headers(request.schemas, request.emitted, request.classes, request.templates,
                      diagnostics);
}

std::vector<Output> python_modules(const EmitRequest& request, Diagnostics& diagnostics) {
  return emit_python_modules(request.emitted, request.classes, request.templates, diagnostics,
                             request.options.python_base);
}

}  // namespace

const std::vector<OutputLanguage>& output_languages() {
  static const std::vector<OutputLanguage> languages{
      {"cpp", "headers, the default", cpp_headers},
      {"python", "a module per Python module the classes name, a/b/c.py for a.b.c", python_modules},
  };
  return languages;
}

const OutputLanguage& output_language(const std::string& name) {
  for (const auto& language : output_languages()) {
    if (name == language.name) return language;
  }
  throw std::invalid_argument("no output language '" + name + "'");
}

}  // namespace tcgen
