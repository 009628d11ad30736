// Atomic save: the new tree is written into a hidden sibling of the prefix, made durable, then
// swapped in with one renameat2(RENAME_EXCHANGE) (or rename() when the prefix is new). Any crash
// leaves `prefix` naming either the complete old tree or the complete new one; leftovers are
// hidden siblings that the next save removes. docs/format.md has the full argument.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "memmap/internal.h"
#include "tensordict/json.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

namespace tensordict::memmap::detail {
namespace fs = std::filesystem;
namespace {

std::atomic<void (*)(const char*)> g_step_hook{nullptr};

bool exchange(const std::string& a, const std::string& b) {
  return ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

void rename_or_throw(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) throw_errno("cannot rename '" + from + "' to", to);
}

// Puts `tmp` at `prefix`; what was at `prefix` ends up at a path that is returned for removal.
std::string swap_in(const std::string& tmp, const std::string& prefix, bool prefix_exists) {
  if (!prefix_exists) {
    rename_or_throw(tmp, prefix);
    return {};
  }
  if (exchange(tmp, prefix)) return tmp;
  if (errno != EINVAL && errno != ENOSYS) throw_errno("cannot exchange '" + tmp + "' with", prefix);
  // No RENAME_EXCHANGE on this file system: two renames; between them `prefix` is briefly absent
  // (never half-written). Documented in docs/format.md.
  const std::string old = tmp + ".old";
  rename_or_throw(prefix, old);
  rename_or_throw(tmp, prefix);
  return old;
}

// Files a save of this format writes (Python's pickles included, so a directory Python saved
// can be replaced too).
bool is_format_file(const std::string& name) {
  const std::string suffix = ".memmap";
  return name == "meta.json" || name == "other.pickle" || name == "pickle.pkl" ||
         (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0);
}

// The first entry under `dir` that a save does not write: a symlink, a special file, a file not
// named like a data file or meta.json, or a directory without a meta.json. Empty when none.
std::string foreign_entry(const std::string& dir) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    const std::string path = it->path().string();
    if (fs::is_directory(status)) {
      if (!fs::is_regular_file(fs::symlink_status(join(path, "meta.json"), ec))) return path;
    } else if (!fs::is_regular_file(status) || !is_format_file(it->path().filename().string())) {
      return path;
    }
  }
  if (ec) throw FormatError("cannot walk '" + dir + "': " + ec.message());
  return {};
}

// A save replaces the whole directory, so only a previous save may be replaced: an empty
// directory, or one whose meta.json is a memmap meta.json and which holds nothing a save does not
// write. Anything else would be deleted with it.
void check_replaceable(const std::string& p) {
  std::error_code ec;
  if (fs::is_empty(p, ec) && !ec) return;
  const std::string meta = join(p, "meta.json");
  if (::access(meta.c_str(), F_OK) != 0) {
    throw FormatError("refusing to replace '" + p +
                      "': it is not empty and holds no meta.json (not a memmap directory)");
  }
  try {
    const Json json = parse_json(read_text(meta), "'" + meta + "'");
    if (!json.is_object() || !json.contains("_type") || !json["_type"].is_string()) {
      throw FormatError("'" + meta + "' has no \"_type\"");
    }
  } catch (const FormatError& e) {
    throw FormatError("refusing to replace '" + p +
                      "': its meta.json is not a saved TensorDict's (" + e.what() + ")");
  }
  const std::string foreign = foreign_entry(p);
  if (!foreign.empty()) {
    throw FormatError("refusing to replace '" + p + "': it holds '" + foreign +
                      "', which a save does not write (only meta.json, *.memmap and child "
                      "directories with a meta.json); move it away or save elsewhere");
  }
}

}  // namespace

std::string temp_tag(const std::string& base, const std::string& kind) { return "." + base + kind; }

void remove_stale_temps(const std::string& parent, const std::string& base,
                        const std::string& kind) {
  const std::string tag = temp_tag(base, kind);
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, tag.size(), tag) != 0) continue;
    const long pid = std::strtol(name.c_str() + tag.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      remove_tree(it->path().string());
    }
  }
}

std::string new_temp_path(const std::string& parent, const std::string& base,
                          const std::string& kind) {
  static std::atomic<uint64_t> counter{0};
  return join(parent, temp_tag(base, kind) + std::to_string(::getpid()) + "-" +
                          std::to_string(counter.fetch_add(1)));
}

void set_save_step_hook(void (*hook)(const char* step)) { g_step_hook = hook; }

void save_step(const char* step) {
  if (auto* hook = g_step_hook.load(std::memory_order_relaxed)) hook(step);
}

std::string normalize_prefix(const std::string& prefix) {
  std::string p = prefix;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p.empty()) throw FormatError("memmap: the prefix is empty");
  return p;
}

void atomic_publish(const std::string& prefix, bool durable,
                    const std::function<void(const std::string& tmp)>& write) {
  const std::string p = normalize_prefix(prefix);
  const fs::path path(p);
  const std::string parent = path.has_parent_path() ? path.parent_path().string() : ".";
  const std::string base = path.filename().string();
  if (base == "." || base == ".." || base.empty()) {
    throw FormatError("memmap: prefix '" + prefix + "' must name a directory entry");
  }
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw FormatError("cannot create directory '" + parent + "': " + ec.message());

  struct stat st {};
  const bool exists = ::lstat(p.c_str(), &st) == 0;
  if (exists && S_ISLNK(st.st_mode))
    throw FormatError("refusing to save through symlink '" + p + "'");
  if (exists && !S_ISDIR(st.st_mode))
    throw FormatError("'" + p + "' exists and is not a directory");
  if (exists) check_replaceable(p);

  remove_stale_temps(parent, base, kSaveTemp);
  const std::string tmp = new_temp_path(parent, base, kSaveTemp);
  make_dir(tmp);
  try {
    write(tmp);
    save_step("written");
    if (durable) sync_tree(tmp);
    save_step("synced");
  } catch (...) {
    remove_tree(tmp);
    throw;
  }
  const std::string old = swap_in(tmp, p, exists);
  save_step("published");
  if (durable) sync_dir(parent);
  if (!old.empty()) remove_tree(old);
  save_step("cleaned");
}

}  // namespace tensordict::memmap::detail
