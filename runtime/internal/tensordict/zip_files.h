#pragma once
// The files of a zip archive (runtime/src/memmap/zip_reader.cpp), for zips that are not memmap
// archives: the sources of an AOTInductor package, which TensorClass::nn and tcgen read. Not
// installed. Torch-free: tcgen compiles the reader too.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensordict::archive::detail {

/// The files of the zip archive at `path` whose names end with `suffix`, as (name, bytes), in
/// central-directory order and CRC-checked. FormatError for a zip the archive reader refuses.
std::vector<std::pair<std::string, std::string>> read_files(const std::string& path,
                                                            std::string_view suffix);

}  // namespace tensordict::archive::detail
