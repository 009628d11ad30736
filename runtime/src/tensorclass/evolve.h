#pragma once
// Loading a tensorclass directory written by any version of the class's schema (evolve.cpp).

#include <cstdint>
#include <string>
#include <vector>

#include "tensordict/class_load_check.h"
#include "tensordict/detail/tensorclass_support.h"

namespace tensordict::detail::tc {

/// Where loaded data came from, for messages.
struct LoadOrigin {
  std::string dir;              ///< the tensorclass directory
  int64_t written_version = 0;  ///< the schema version that wrote it (0: none)
  bool in_lazy_stack = false;   ///< its TensorDict is an element of a lazy stack
};

/// Makes `td`, loaded from `from.dir` with the None fields `meta_fields` of its meta.json, an
/// instance of `spec`: old field names renamed, meta.json's fields applied, fields added since
/// given their default; FormatError (naming the field, the directory and both versions) for a key
/// that is no field, a missing field without default, a tensor breaking a dtype or shape. With
/// `problems`, each is appended there instead (check_class_load) and the rest still done.
void adopt_loaded_fields(TensorDict& td, Json meta_fields, const ClassSpec& spec,
                         const LoadOrigin& from, std::vector<ClassLoadProblem>* problems = nullptr);

}  // namespace tensordict::detail::tc
