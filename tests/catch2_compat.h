// Catch2 2 (Debian 12) and Catch2 3 (Debian 13, sid) behind one include. The tests are written
// against Catch2 3's names (Catch::Matchers::ContainsSubstring and friends); on Catch2 2 this
// header supplies the one name that release lacks.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <catch2/matchers/catch_matchers_vector.hpp>
#else
#include <catch2/catch.hpp>

#include <string>

namespace Catch::Matchers {
inline StdString::ContainsMatcher ContainsSubstring(
    const std::string& text, CaseSensitive::Choice case_sensitivity = CaseSensitive::Yes) {
  return Contains(text, case_sensitivity);
}
}  // namespace Catch::Matchers
#endif
