#pragma once
/// \file
/// check_class_load: loading a tensorclass directory as a generated class's load_memmap does (the
/// same evolution of older schema versions, the same checks), with every problem collected instead
/// of the first thrown. `tdtool verify --schema` judges directories by it.

#include <optional>
#include <string>
#include <vector>

#include "tensordict/class_spec.h"

namespace tensordict {

/// One reason the class of a spec refuses a directory.
struct ClassLoadProblem {
  /// The tensorclass directory it concerns (the loaded one, or a nested class's below it).
  std::string dir;
  /// What is wrong, as load_memmap's FormatError says it (without the directory).
  std::string message;
  /// The field (or stored key) it concerns, by its name in the class; empty for the directory
  /// as a whole.
  std::string field;
};

/// What check_class_load found.
struct ClassLoadCheck {
  /// The inner TensorDict as load_memmap makes it (old field names renamed, fields added since
  /// given their default), as far as the problems let it be made; nullopt when `prefix` holds no
  /// tensorclass at all.
  std::optional<TensorDict> loaded;
  /// Every problem; empty when TensorClass::load_memmap of the class loads `prefix`.
  std::vector<ClassLoadProblem> problems;
};

/// Loads the tensorclass directory (or `.tdz` archive) `prefix` as a class of `spec`, by the rules
/// of TensorClass::load_memmap, collecting what it would refuse. Errors of the tree itself (a
/// missing data file, malformed JSON) are thrown as load_memmap throws them.
ClassLoadCheck check_class_load(const ClassSpec& spec, const std::string& prefix,
                                std::optional<at::Device> device = std::nullopt);

}  // namespace tensordict
