#pragma once
// The runtime ClassSpecs of a schema's classes, built at run time from tcgen's schema model with
// the facts a generated header spells (tcgen::field_spec_facts), so that `verify --schema` loads a
// directory by the rules the generated class loads it by.

#include <string>

#include "model/model.h"
#include "tensordict/class_spec.h"

namespace tdtool {

/// The ClassSpec of every class of `classes`, for the life of the process (nested class fields
/// reach theirs through plain function pointers, as in generated code). Built once per process;
/// tensordict::Error when the schema has more classes than tdtool can give specs to.
class SchemaSpecs {
 public:
  explicit SchemaSpecs(const tcgen::ClassIndex& classes);
  /// The spec of the class named `name` (one of `classes`).
  const tensordict::ClassSpec& of(const std::string& name) const;
};

}  // namespace tdtool
