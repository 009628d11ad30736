// tdtool verify: every meta.json parsed and every data file checked, all problems listed.
#include <sys/stat.h>

#include <ostream>

#include "commands.h"
#include "tensordict/archive.h"
#include "tensordict/memmap.h"

namespace tdtool {
namespace {

// Anything but a directory is read as an archive, which names a FIFO or a device as no regular
// file (and never waits on one).
bool is_archive(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

}  // namespace

tensordict::memmap::Loaded load_tree(const std::string& path, std::optional<at::Device> device) {
  return is_archive(path) ? tensordict::archive::load(path, {}, device)
                          : tensordict::memmap::load(path, device);
}

std::vector<std::string> verify_tree(const std::string& path) {
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
