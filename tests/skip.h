// Skipping a test case whose prerequisite is missing (Python's fixtures, CUDA, libclang, a Python
// peer, a permission the user lacks): the case exits with TC_SKIP_EXIT_CODE, which CTest reads as a
// skip. The exit ends the process, so such a case carries its prerequisite's tag, and tc_add_test
// (tests/CMakeLists.txt) runs the cases of each tag in a CTest entry of their own:
//   [needs-fixtures]      Python-written directories and archives in TC_FIXTURES_DIR
//   [needs-peer]          a live Python tensordict (TC_PYTHON_PEER)
//   [needs-libclang]      tcgen built with libclang
//   [needs-cuda]          a CUDA device
//   [needs-aoti]          a libtorch that loads AOTInductor packages (2.6 and newer)
//   [needs-old-libtorch]  a libtorch that does not (1.13)
//   [needs-non-root]      a user for whom file permissions hold
//   [needs-redis]         a redis-server (or valkey-server) to start (tests/store/)
#pragma once

#include <cstdlib>
#include <iostream>

#define TC_SKIP(reason)                         \
  do {                                          \
    std::cerr << "SKIPPED: " << reason << "\n"; \
    std::exit(TC_SKIP_EXIT_CODE);               \
  } while (false)
