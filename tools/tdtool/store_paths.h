#pragma once
// tdtool's paths that name a TensorDictStore (store_paths.cpp).

#include <string>
#include <vector>

#include "tensordict/memmap.h"

namespace tdtool {

/// Whether `path` is a store URL (redis://, rediss:// or unix://) rather than a file or folder.
bool is_store_url(const std::string& path);
/// The store at `url`, read whole (a lazy stack store as a lazy stack). ValueError without the
/// store library.
tensordict::memmap::Loaded load_store(const std::string& url);
/// The problems of reading the store at `url` (its FormatErrors); empty when it reads whole.
std::vector<std::string> verify_store(const std::string& url);
/// Uploads `td` as a new store at `url` (its td_id, prefix and server), as from_tensordict does.
void save_store(const tensordict::TensorDict& td, const std::string& url);

}  // namespace tdtool
