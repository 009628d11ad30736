// The main of every test executable, for Catch2 2 and 3. Built a second time with
// TC_EXIT_WITHOUT_STATIC_DESTRUCTORS for the executables that load libclang (tests/CMakeLists.txt
// says why): they leave with _Exit once Catch has reported, skipping static destructors.
#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int result = Catch::Session().run(argc, argv);
#ifdef TC_EXIT_WITHOUT_STATIC_DESTRUCTORS
  std::fflush(nullptr);
  std::_Exit(result);
#else
  return result;
#endif
}
