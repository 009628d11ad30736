// Skipping a test case whose prerequisite is missing (Python's fixtures, CUDA, libclang, a
// permission the user lacks): the case exits with TC_SKIP_EXIT_CODE, which tc_add_test registers
// as CTest's SKIP_RETURN_CODE, so CTest reports it as skipped instead of passed.
#pragma once

#include <cstdlib>
#include <iostream>

#define TC_SKIP(reason)                         \
  do {                                          \
    std::cerr << "SKIPPED: " << reason << "\n"; \
    std::exit(TC_SKIP_EXIT_CODE);               \
  } while (false)
