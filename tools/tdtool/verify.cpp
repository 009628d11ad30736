// tdtool verify: every meta.json parsed and every data file checked, all problems listed; and
// how every command reads its input (a directory, a .tdz archive, a .safetensors file).
#include <sys/stat.h>

#include <ostream>

#include "commands.h"
#include "store_paths.h"
#include "tensordict/archive.h"
#include "tensordict/memmap.h"
#include "tensordict/safetensors.h"

namespace tdtool {
namespace {

// Anything but a directory is read as an archive, which names a FIFO or a device as no regular
// file (and never waits on one).
bool is_archive(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

// A directory with no meta.json at its top is no save at all: say so, rather than name the file.
void require_save_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw tensordict::FormatError("'" + dir + "': no such file or directory");
  }
  if (::stat((dir + "/meta.json").c_str(), &st) != 0) {
    throw tensordict::FormatError("'" + dir +
                                  "' is not a tensordict save: it holds no meta.json (tdtool reads "
                                  "what memmap() or Python's TensorDict.memmap wrote, and .tdz "
                                  "archives)");
  }
}

}  // namespace

tensordict::memmap::Loaded load_tree(const std::string& path, std::optional<at::Device> device) {
  if (is_store_url(path)) return load_store(path);  // read whole; `device` concerns mapped files
  if (tensordict::safetensors::has_suffix(path)) {
    auto file = tensordict::safetensors::load(path, device);
    std::string type =
        file.class_info ? file.class_info->type : tensordict::memmap::kTensorDictType;
    return {std::move(file.tensordict), std::move(type), std::move(file.class_info),
            std::move(file.nested_classes)};
  }
  if (is_archive(path)) return tensordict::archive::load(path, {}, device);
  require_save_directory(path);
  return tensordict::memmap::load(path, device);
}

std::vector<std::string> verify_tree(const std::string& path) {
  if (is_store_url(path)) return verify_store(path);
  if (tensordict::safetensors::has_suffix(path)) return tensordict::safetensors::verify(path);
  return is_archive(path) ? tensordict::archive::verify(path) : tensordict::memmap::verify(path);
}

int run_verify(const std::string& dir, std::ostream& out) {
  const auto problems = verify_tree(dir);
  for (const auto& problem : problems) out << "problem: " << problem << "\n";
  if (problems.empty()) {
    out << dir << ": OK\n";
    return 0;
  }
  out << dir << ": " << problems.size() << " problem(s)\n";
  return 1;
}

}  // namespace tdtool
