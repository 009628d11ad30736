#pragma once
// `tcgen import DIR`: a YAML schema inferred from a tensorclass directory that Python tensordict
// (or this library) wrote (format spec §1.4, §2, §3, §4). Reads meta.json files only, with
// nlohmann::json (no libtorch), each one bounded as the YAML front end bounds a schema: a regular
// file (a FIFO is refused before it is opened) of at most kMaxMetaBytes, nested at most
// kMaxNesting deep, parsed in time linear in its size (no key given twice). The tree is walked as
// the runtime loads it: never through a symlink (each directory is visited once) and at most
// tensordict::limits::kMaxTreeDepth levels deep.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// Largest meta.json `tcgen import` reads (the bound of a schema file).
constexpr unsigned long long kMaxMetaBytes = 16ull << 20;

struct ImportOptions {
  /// `namespace:` of the schema written (none when empty).
  std::string cpp_namespace;
  /// Packages: the name of the class of the model's inputs and outputs (default: the package's
  /// file name in PascalCase, `policy.pt2` -> `Policy`).
  std::string class_name;
  /// Packages: the keys of the positional inputs and of the outputs returned in a tuple, dotted
  /// for nested keys (`params.scale`), as TensorDictModule's in_keys and out_keys.
  std::vector<std::string> in_keys, out_keys;
};

/// Reads the tensorclass directory `dir` into a schema: the directory's class first, then the
/// classes of the tensorclass directories nested in it, each once. `display` names `dir` in
/// messages and in the schema's header comment. Errors are reported to `diagnostics`.
Schema import_directory(const std::string& dir, const std::string& display,
                        const ImportOptions& options, Diagnostics& diagnostics);

}  // namespace tcgen
