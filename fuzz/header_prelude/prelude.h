// fuzz_header's stand-in for tests/schemas/clang/prelude.h, found first on its include path: the
// same names with no standard header behind them, so that a parse takes milliseconds rather than
// the standard library's hundreds. The C++ front end maps types by their qualified names, which
// these declarations spell as the real ones do.
#pragma once

#include "tensordict/annotate.h"

using int64_t = long;
namespace std {
using ::int64_t;
template <class C>
class basic_string {};
using string = basic_string<char>;
template <class T>
class vector {};
template <class T>
class optional {};
template <class K, class V>
class map {};
}  // namespace std

#include "stand_ins.h"  // tests/schemas/clang/, on the harness's include path
