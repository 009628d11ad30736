#pragma once
/// \file
/// Annotations that turn a plain C++ struct into a tensorclass schema, read by `tcgen` through
/// libclang (docs/schema.md, "Schemas written in C++"). Torch-free and without effect on the
/// compiled program:
///
/// \code
///   struct TC_CLASS("options=frozen", "python=mypkg.sim.Particles", "batch_dims=N") Particles {
///     /// Positions.
///     TC_FIELD("dtype=float32", "shape=(N, 3)") at::Tensor pos;
///     TC_FIELD("default=\"unnamed\"") std::string label;
///   };
/// \endcode
///
/// Each argument is one `key=value` string. Under clang they become one
/// `[[clang::annotate("tensorclass:class\a" "key=value" ...)]]` (entries separated by BEL, which no
/// value contains); other compilers see nothing, since GCC warns (-Wattributes) on attributes of
/// scopes it does not know, which would break users' -Werror builds.

// The separator is a simple escape: an attribute's string is an unevaluated string literal, in
// which clang 21 refuses numeric escapes such as \x1f.
#define TC_DETAIL_SEP "\a"
#define TC_DETAIL_J1(a) TC_DETAIL_SEP a
#define TC_DETAIL_J2(a, ...) TC_DETAIL_SEP a TC_DETAIL_J1(__VA_ARGS__)
#define TC_DETAIL_J3(a, ...) TC_DETAIL_SEP a TC_DETAIL_J2(__VA_ARGS__)
#define TC_DETAIL_J4(a, ...) TC_DETAIL_SEP a TC_DETAIL_J3(__VA_ARGS__)
#define TC_DETAIL_J5(a, ...) TC_DETAIL_SEP a TC_DETAIL_J4(__VA_ARGS__)
#define TC_DETAIL_J6(a, ...) TC_DETAIL_SEP a TC_DETAIL_J5(__VA_ARGS__)
// Picks J<n> for n arguments; `TC_CLASS()` counts as one empty entry, which tcgen skips. The
// trailing `0` keeps `...` non-empty, which C++17 requires.
#define TC_DETAIL_PICK(_1, _2, _3, _4, _5, _6, name, ...) name
#define TC_DETAIL_JOIN(...)                                                           \
  TC_DETAIL_PICK(__VA_ARGS__, TC_DETAIL_J6, TC_DETAIL_J5, TC_DETAIL_J4, TC_DETAIL_J3, \
                 TC_DETAIL_J2, TC_DETAIL_J1, 0)                                       \
  (__VA_ARGS__)

#if defined(__clang__)
#define TC_DETAIL_ANNOTATE(kind, ...) \
  [[clang::annotate("tensorclass:" kind TC_DETAIL_JOIN(__VA_ARGS__))]]
#else
#define TC_DETAIL_ANNOTATE(kind, ...)
#endif

/// On a struct, between `struct` and its name: a tensorclass. Its keys are the schema's
/// (docs/schema.md, "Schemas written in C++"; tcgen's table of them is
/// generator/model/schema_keys.cpp), lists comma-separated: `options=frozen,nocast` (the names of
/// `tensordict::kClassOptions`), `python=` (dotted Python name), `batch_dims=N,T`, ... At most six
/// entries.
#define TC_CLASS(...) TC_DETAIL_ANNOTATE("class", __VA_ARGS__)
/// On a data member, before its type (optional), keys as TC_CLASS's: `dtype=`, `shape=` (full
/// shape, batch dims first: `(N, 3)`), `default=` (a JSON value: `null`, `1.5`, `"text"`,
/// `[1, 2]`), `doc=`, ...
#define TC_FIELD(...) TC_DETAIL_ANNOTATE("field", __VA_ARGS__)
