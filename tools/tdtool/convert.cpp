// tdtool convert SRC DST: a collection copied between a memmap directory, a .tdz archive, a
// .safetensors file and a store, each chosen by its path (a store URL names a store; a regular
// file not named .safetensors is an archive on input; on output ".tdz" and ".safetensors" name
// files, anything else a directory).
#include <ostream>

#include "commands.h"
#include "store_paths.h"
#include "tensordict/archive.h"
#include "tensordict/errors.h"
#include "tensordict/memmap.h"
#include "tensordict/safetensors.h"

namespace tdtool {

int run_convert(const std::string& src, const std::string& dst, std::ostream& out) {
  namespace st = tensordict::safetensors;
  const tensordict::memmap::Loaded loaded = load_tree(src);
  if (!loaded.value.is_tensordict()) {
    throw tensordict::ValueError("'" + src + "' holds " + loaded.type +
                                 ", not a TensorDict: only TensorDicts convert");
  }
  const tensordict::TensorDict& td = loaded.value.tensordict();
  if (is_store_url(dst)) {
    save_store(td, dst);
  } else if (st::has_suffix(dst)) {
    st::SaveOptions options;
    // The metadata of a safetensors source is kept (a directory or an archive has none).
    if (st::has_suffix(src)) options.metadata = st::read_metadata(src);
    // The root's class, which a directory or archive records beside the TensorDict.
    const auto root = loaded.class_info;
    if (root) {
      options.class_of = [&td, root](const tensordict::TensorDict& t) {
        return t.is_same(td) ? root : std::nullopt;
      };
    }
    st::save(td, dst, options);
  } else {
    tensordict::memmap::WriteOptions options;
    options.memmap.existsok = true;
    const bool archive = tensordict::archive::has_archive_suffix(dst);
    if (loaded.class_info) {
      const auto write = [&](const std::string& dir) {
        tensordict::memmap::save_tensorclass(td, *loaded.class_info, dir, options);
      };
      archive ? tensordict::archive::write_with(dst, write) : write(dst);
    } else {
      archive ? (void)tensordict::archive::save(td, dst, options)
              : (void)tensordict::memmap::save_tensordict(td, dst, options);
    }
  }
  out << src << " -> " << dst << "\n";
  return 0;
}

}  // namespace tdtool
