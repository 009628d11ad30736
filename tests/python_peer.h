// The live Python interop tests' peer: a command running Python with tensordict importable
// (tests/CMakeLists.txt). The TC_PYTHON_PEER environment variable, where set, overrides the one the
// build was configured with, so one build runs against several tensordict releases.
#pragma once

#include <cstdlib>
#include <string>

#include "catch2_compat.h"
#include "skip.h"

namespace tc_test {

inline std::string python_peer() {
  const char* from_env = std::getenv("TC_PYTHON_PEER");
  return from_env != nullptr && *from_env != '\0' ? from_env : TC_PYTHON_PEER;
}

/// Skips the test case (skip.h) for want of a Python peer; fails it instead where
/// TC_REQUIRE_PYTHON_PEER is set (.ci/run sets it on sid, where a peer is installed).
#define TC_SKIP_WITHOUT_PEER(reason)                                    \
  do {                                                                  \
    if (std::getenv("TC_REQUIRE_PYTHON_PEER") != nullptr) FAIL(reason); \
    TC_SKIP(reason);                                                    \
  } while (false)

/// Skips the test case (TC_SKIP_WITHOUT_PEER) unless the peer runs and imports `modules`
/// ("a, b"), after ../shared/python-peer's shims for torch 1.13 where it has them (as the tests'
/// scripts do).
inline void require_python_peer(const std::string& modules) {
  const std::string peer = python_peer();
  const std::string script =
      "try:\n    import td_compat\nexcept ImportError:\n    pass\nimport " + modules;
  const bool ok = !peer.empty() &&
                  std::system(("'" + peer + "' -c '" + script + "' >/dev/null 2>&1").c_str()) == 0;
  if (!ok) TC_SKIP_WITHOUT_PEER("no Python tensordict at TC_PYTHON_PEER='" << peer << "'");
}

}  // namespace tc_test
