// libFuzzer harness of tcgen's C++ front end: the input is an annotated header, read through
// libclang, checked and emitted in process, as `tcgen schema.h` does. A crash, a sanitizer report,
// a hang or an "internal error" (an exception the driver had to catch) is a finding. Each input
// costs a libclang parse, so the rate is far below fuzz_tcgen's; the seeds are the C++ schema
// tests' headers, whose prelude.h is replaced by fuzz/header_prelude/prelude.h (no standard
// headers to parse).
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "driver/driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  static const tcgen::Templates templates = tcgen::builtin_templates();
  static const std::string path = [] {
    const fs::path base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path();
    const fs::path dir = base / ("tc_fuzz_header_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return (dir / "fuzz.h").string();
  }();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  tcgen::CompileOptions options;
  // tensordict/annotate.h; the seeds' prelude.h, its stand-in first; no standard library.
  options.clang.args = {"-nostdinc++", "-nostdlibinc", "-I" TC_PRELUDE_DIR,
                        "-I" TC_RUNTIME_INCLUDE_DIR, "-I" TC_SEED_INCLUDE_DIR};
  const tcgen::Compilation c = tcgen::compile({path}, templates, options);
  for (const auto& d : c.diagnostics.all()) {
    if (d.message.rfind("internal error: ", 0) == 0) std::abort();
  }
  return 0;
}
