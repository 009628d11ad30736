#pragma once
// What an emitter gives back: the files of a run.

#include <string>

namespace tcgen {

/// One generated file.
struct Output {
  std::string file_name;  ///< relative to the output directory
  std::string content;
};

}  // namespace tcgen
