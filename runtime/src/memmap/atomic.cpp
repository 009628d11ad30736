// Atomic save: the new tree is written into a hidden sibling of the prefix, made durable, then
// swapped in with one renameat2(RENAME_EXCHANGE) (or rename() when the prefix is new). Any crash
// leaves `prefix` naming either the complete old tree or the complete new one; leftovers are
// marked temporaries that the next save removes (memmap/temporary.cpp). Entries of the previous
// save that it did not write (a user's files) are moved into the new tree, never deleted; saves
// to one prefix take turns. docs/format.md has the full argument.
#include <fcntl.h>
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

// Puts the new tree `tmp.work()` at `prefix`; returns where the previous tree went (inside the
// temporary, for removal), empty when there was none.
std::string swap_in(Temporary& tmp, const std::string& prefix, bool prefix_exists) {
  if (!prefix_exists) {
    rename_or_throw(tmp.work(), prefix);
    return {};
  }
  if (exchange(tmp.work(), prefix)) return tmp.work();
  if (errno != EINVAL && errno != ENOSYS)
    throw_errno("cannot exchange '" + tmp.work() + "' with", prefix);
  // No RENAME_EXCHANGE on this file system: two renames; between them `prefix` is briefly absent
  // (never half-written). Documented in docs/format.md.
  const std::string old = join(tmp.dir(), "old");
  rename_or_throw(prefix, old);
  if (::rename(tmp.work().c_str(), prefix.c_str()) != 0) {
    const int error = errno;
    if (::rename(old.c_str(), prefix.c_str()) != 0) tmp.keep();  // the previous tree is in it
    errno = error;
    throw_errno("cannot rename '" + tmp.work() + "' to", prefix);
  }
  return old;
}

// A save replaces the whole directory, so only a previous save may be replaced: an empty
// directory, or one that Python tensordict or this library saved (saved_tree_problem: a user's
// meta.json with a "_type" of its own is not one). Returns the entries of the previous save that
// it did not write (a user's files), which the new tree takes over.
std::vector<std::string> entries_to_keep(const std::string& p) {
  std::error_code ec;
  if (fs::is_empty(p, ec) && !ec) return {};
  const std::string meta = join(p, "meta.json");
  if (::access(meta.c_str(), F_OK) != 0) {
    throw FormatError("refusing to replace '" + p +
                      "': it is not empty and holds no meta.json (not a memmap directory)");
  }
  const std::unique_ptr<TreeView> tree = directory_view(p);
  const std::string problem =
      saved_tree_problem(*tree, [&p](const std::string& rel) { return "'" + join(p, rel) + "'"; });
  if (!problem.empty()) {
    throw FormatError("refusing to replace '" + p +
                      "': it is not a directory that Python tensordict or this library saved (" +
                      problem + "); move it away or save elsewhere");
  }
  std::vector<std::string> keep = foreign_entries(*tree);
  struct stat root {};
  if (::stat(p.c_str(), &root) != 0) throw_errno("cannot stat", p);
  for (const std::string& rel : keep) {  // a rename cannot carry a mount point along
    struct stat st {};
    if (::lstat(join(p, rel).c_str(), &st) == 0 && st.st_dev != root.st_dev) {
      throw FormatError("refusing to replace '" + p + "': it holds '" + join(p, rel) +
                        "', which the previous save did not write and which is on another file "
                        "system (a mount point); move it away or save elsewhere");
    }
  }
  return keep;
}

// The entries kept from the previous save go to the same relative paths in the new tree (a
// directory the new tree has too is merged): refused, before anything is touched, where the new
// save writes a file in their place (or above them).
void refuse_collisions(const std::string& p, const std::string& tree, const std::string& rel) {
  for (size_t end = rel.find('/');; end = rel.find('/', end + 1)) {
    const bool last = end == std::string::npos;
    struct stat written {};
    if (::lstat(join(tree, rel.substr(0, end)).c_str(), &written) != 0) return;
    struct stat kept {};
    if (last && S_ISDIR(written.st_mode) && ::lstat(join(p, rel).c_str(), &kept) == 0 &&
        S_ISDIR(kept.st_mode)) {
      for (const std::string& name : directory_view(join(p, rel))->list("")) {
        refuse_collisions(p, tree, rel + "/" + name);
      }
      return;
    }
    if (last || !S_ISDIR(written.st_mode)) {
      throw FormatError("refusing to replace '" + p + "': it holds '" + join(p, rel) +
                        "', which the previous save did not write, and the new save writes '" +
                        join(p, rel.substr(0, end)) + "'; move it away or save elsewhere");
    }
  }
}

}  // namespace

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

  // One save at a time per prefix: each finds a whole previous save and ends with a whole one.
  SaveLock lock(parent, base, kSaveTemp);
  struct stat st {};
  const bool exists = ::lstat(p.c_str(), &st) == 0;
  if (exists && S_ISLNK(st.st_mode))
    throw FormatError("refusing to save through symlink '" + p + "'");
  if (exists && !S_ISDIR(st.st_mode))
    throw FormatError("'" + p + "' exists and is not a directory");
  const std::vector<std::string> keep = exists ? entries_to_keep(p) : std::vector<std::string>();

  Temporary tmp(lock, kSaveTemp, durable);
  write(tmp.work());
  save_step("written");
  for (const std::string& rel : keep) refuse_collisions(p, tmp.work(), rel);
  if (durable) sync_tree(tmp.work());
  save_step("synced");
  const std::string old = swap_in(tmp, p, exists);
  tmp.keep();  // it holds the previous tree: removed below, once nothing of a user's is left in it
  save_step("published");
  if (durable) sync_dir(parent);
  if (!old.empty()) {
    // The user's entries follow the save; the previous tree is then only the library's files.
    const std::vector<std::string> failed = move_entries(old, p, keep, durable);
    if (!failed.empty()) {
      throw FormatError("saved '" + p + "', but could not move " + failed.front() +
                        " (the previous save's entries that it did not write stay in '" +
                        tmp.dir() + "')");
    }
    // Marks the temporary as holding nothing of a user's, should the removal be interrupted.
    rename_or_throw(old, join(tmp.dir(), "done"));
  }
  remove_temporary(tmp.dir());
  save_step("cleaned");
}

}  // namespace tensordict::memmap::detail
