#pragma once
// The output languages, one row each: `tcgen --lang NAME` writes the checked schemas through the
// row's emitter. A language is a folder of emit/ (its spelling rules and its emitter, which also
// reports what that language cannot say) and its row in languages.cpp (docs/architecture.md,
// "An output language").

#include <string>
#include <vector>

#include "emit/output.h"
#include "emit/python/modules.h"
#include "emit/templates.h"
#include "model/diagnostics.h"
#include "model/model.h"

namespace tcgen {

/// The options of the languages that take some (the command line's).
struct LanguageOptions {
  PythonBase python_base = PythonBase::TensorClass;  ///< python: what the classes derive from
};

/// What a run asks of an emitter.
struct EmitRequest {
  const std::vector<Schema>& schemas;         ///< every schema read, included ones too
  const std::vector<const Schema*>& emitted;  ///< those to write (pointers into `schemas`)
  const ClassIndex& classes;                  ///< the checked classes
  const Templates& templates;
  const LanguageOptions& options;
};

/// An output language of tcgen.
struct OutputLanguage {
  const char* name;         ///< --lang's value
  const char* description;  ///< what it writes, for --lang's help
  /// The files of `request.emitted`; problems go to `diagnostics` (the run then writes nothing).
  std::vector<Output> (*emit)(const EmitRequest& request, Diagnostics& diagnostics);
};

/// The languages, the default first.
const std::vector<OutputLanguage>& output_languages();
/// The language named `name`; std::invalid_argument when there is none.
const OutputLanguage& output_language(const std::string& name);

}  // namespace tcgen
