// Loading memmap directories: the format is read by detail::TreeLoader (memmap/tree_loader.h)
// over files, each leaf's file mapped; a load overlapping a save is retried until it read one
// tree.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/tensordict_impl.h"
#include "memmap/internal.h"
#include "memmap/tree_loader.h"

namespace tensordict::memmap {
namespace {

// A memmap directory as the Source of detail::TreeLoader: leaves are mapped files. Nothing is
// followed through a symlink: entries and child directories must lie inside the tree.
class DirSource {
 public:
  static std::string where(const std::string& path) { return "'" + path + "'"; }
  static std::string text(const std::string& path) { return detail::read_text(path); }
  static bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
  }
  static bool is_dir(const std::string& path) { return detail::is_child_dir(path); }
  static std::string find(const std::string& dir, const std::string& key, std::string_view suffix,
                          bool directory) {
    return detail::find_entry(dir, key, suffix, directory);
  }
  static size_t byte_size(const std::string& file, at::IntArrayRef shape, at::ScalarType dtype) {
    return detail::byte_size(shape, dtype, file);
  }
  static at::Tensor leaf(const std::string& path, at::ScalarType dtype, at::IntArrayRef shape,
                         size_t /*nbytes*/) {
    return detail::load_data_file(path, dtype, shape);  // sizes and checks the file itself
  }
  // Python's saved_path (memmap_refresh_ reloads from it).
  static void loaded(TensorDict& td, const std::string& dir) {
    ::tensordict::detail::impl_of(td).saved_path = dir;
  }
};

Loaded load_tree(const std::string& root, std::optional<at::Device> device,
                 std::vector<std::string>* problems) {
  const DirSource src;
  return detail::TreeLoader<DirSource>(src, device, problems).load_dir(root);
}

// A save swaps its new tree in and then deletes the previous one, so a load that overlaps a save
// may read meta.json of one tree and data of the other, or a half-deleted tree (a shorter stack, a
// "missing" file). The root is held open for the whole load (its inode cannot be reused) and the
// load counts only if `dir` still names it at the end: a tree that left `dir` never comes back,
// so everything read came from that one tree. Otherwise the load is retried, a bounded number of
// times.
constexpr int kLoadAttempts = 100;

bool still_at(const detail::Fd& root, const std::string& dir) {
  struct stat held {};
  struct stat now {};
  return ::fstat(root.get(), &held) == 0 && ::stat(dir.c_str(), &now) == 0 &&
         held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

template <class Load>
auto load_whole(const std::string& dir, Load&& load_once) -> decltype(load_once()) {
  for (int attempt = 1;; ++attempt) {
    const detail::Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
    if (!root) return load_once();  // not a directory (or none): the load reports it
    try {
      auto loaded = load_once();
      if (still_at(root, dir)) return loaded;
    } catch (...) {
      if (still_at(root, dir)) throw;
    }
    if (attempt == kLoadAttempts) {
      throw FormatError("'" + dir + "' was replaced by another save during each of " +
                        std::to_string(kLoadAttempts) + " attempts to load it");
    }
  }
}

}  // namespace

Loaded load(const std::string& dir, std::optional<at::Device> device) {
  const std::string root = detail::normalize_prefix(dir);
  return load_whole(root, [&] {
    try {
      return load_tree(root, device, nullptr);
    } catch (const Json::exception& e) {  // a JSON value of an unexpected type somewhere
      throw FormatError("'" + dir + "': unexpected meta.json content: " + e.what());
    }
  });
}

std::vector<std::string> verify(const std::string& dir) {
  std::string root;
  try {
    root = detail::normalize_prefix(dir);
  } catch (const Error& e) {
    return {e.what()};
  }
  return load_whole(root, [&] {
    std::vector<std::string> problems;
    try {
      load_tree(root, at::Device(at::kCPU), &problems);
    } catch (const Error& e) {
      problems.push_back(e.what());
    } catch (const Json::exception& e) {
      problems.push_back("'" + dir + "': unexpected meta.json content: " + e.what());
    } catch (const c10::Error& e) {  // a problem the loader's checks do not name: listed too
      problems.push_back("'" + dir + "': " + ::tensordict::detail::first_line(e.what()));
    }
    return problems;
  });
}

}  // namespace tensordict::memmap

namespace tensordict::memmap::detail {

std::vector<int64_t> parse_shape(const Json& j, const std::string& where) {
  if (!j.is_array()) throw FormatError(where + ": \"shape\" is not a list of integers");
  std::vector<int64_t> shape;
  for (const auto& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      throw FormatError(where + ": \"shape\" " + d.dump() + " is not a non-negative integer");
    }
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

int64_t stack_ndim(const Json& data) {
  int64_t ndim = 1;
  std::vector<const Json*> level;
  for (const auto& item : data) level.push_back(&item);
  while (!level.empty()) {
    const size_t n = level.front()->is_array() ? level.front()->size() : 0;
    std::vector<const Json*> next;
    for (const Json* item : level) {
      if (!item->is_array() || item->size() != n) return ndim;
      for (const auto& child : *item) next.push_back(&child);
    }
    ++ndim;
    level = std::move(next);
  }
  return ndim;
}

}  // namespace tensordict::memmap::detail
