#pragma once
// The model back to a YAML schema (`tcgen import`): what the YAML front end reads into the same
// model, so a schema started as an annotated C++ header can be kept as YAML.

#include <string>

#include "model/model.h"

namespace tcgen {

/// The YAML schema file name for a schema read from `path`: `particles.h` -> `particles.yaml`.
std::string yaml_file_name(const std::string& path);
/// YAML text of `schema`; `include:` entries name the YAML files of the included schemas by
/// yaml_file_name, as `tcgen import` writes every schema into one directory.
std::string write_yaml_schema(const Schema& schema);

}  // namespace tcgen
