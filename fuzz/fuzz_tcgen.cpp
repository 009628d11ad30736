// libFuzzer harness of tcgen's front end: read (YAML) + check + emit, in process, on one schema
// text. Any crash, sanitizer report or "internal error" (an exception the driver had to catch)
// is a finding. docs/reliability.md has the command.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "driver/driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tcgen::Templates templates = tcgen::builtin_templates();
  const std::string text(reinterpret_cast<const char*>(data), size);
  tcgen::Compilation c = tcgen::compile_text(text, "fuzz.yaml", templates);
  for (const auto& d : c.diagnostics.all()) {
    if (d.message.rfind("internal error: ", 0) == 0) std::abort();
  }
  if (!c.diagnostics.has_errors()) (void)tcgen::dump_model(c.schemas);
  return 0;
}
