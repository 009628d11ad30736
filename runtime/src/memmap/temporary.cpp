// Temporaries beside a target, recognised by the marker the library writes inside them (never by
// their name alone), the cleanup of those a killed writer left, and the lock that serialises the
// saves to one prefix.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <sstream>

#include "memmap/internal.h"

namespace tensordict::memmap::detail {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSignature = "tensordict temporary";
constexpr const char* kLockSignature = "tensordict save lock\n";

struct Marker {
  long pid = 0;
  dev_t work_dev = 0;
  ino_t work_ino = 0;
  std::string target;  // the base name the temporary was made for
};

// "tensordict temporary\npid <pid>\nwork <dev> <ino>\ntarget <base>" (the base last: it may hold
// any byte but '/').
std::string marker_text(const Marker& m) {
  return std::string(kSignature) + "\npid " + std::to_string(m.pid) + "\nwork " +
         std::to_string(m.work_dev) + " " + std::to_string(m.work_ino) + "\ntarget " + m.target;
}

std::optional<Marker> read_marker(const std::string& dir) {
  const std::string path = join(dir, kTemporaryMarker);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096) {
    return std::nullopt;
  }
  std::string text;
  try {
    text = read_text(path);
  } catch (const Error&) {
    return std::nullopt;
  }
  const std::string head = std::string(kSignature) + "\npid ";
  const size_t target_at = text.find("\ntarget ");
  if (text.compare(0, head.size(), head) != 0 || target_at == std::string::npos) {
    return std::nullopt;
  }
  Marker m;
  std::istringstream in(text.substr(head.size(), target_at - head.size()));
  std::string work;
  unsigned long long dev = 0, ino = 0;
  if (!(in >> m.pid >> work >> dev >> ino) || work != "work" || m.pid <= 0) return std::nullopt;
  m.work_dev = static_cast<dev_t>(dev);
  m.work_ino = static_cast<ino_t>(ino);
  m.target = text.substr(target_at + 8);
  return m;
}

bool is_real_dir(const std::string& path, struct stat& st) {
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Puts back what a killed save left in its temporary: its previous tree after the swap may still
// hold entries a user put there (moved into the new tree only after the swap). False when
// something could not be put back: the temporary is then kept.
bool restore(const std::string& dir, const Marker& m, const std::string& target) {
  struct stat st {};
  std::string tree;
  if (is_real_dir(join(dir, "old"), st)) {  // two-rename publication (no RENAME_EXCHANGE)
    struct stat target_st {};
    if (::lstat(target.c_str(), &target_st) != 0 && errno == ENOENT) {
      return ::rename(join(dir, "old").c_str(), target.c_str()) == 0;  // killed between them
    }
    tree = join(dir, "old");
  } else if (is_real_dir(join(dir, "work"), st) &&
             (st.st_dev != m.work_dev || st.st_ino != m.work_ino)) {
    tree = join(dir, "work");  // swapped: `work` is the previous tree
  } else {
    return true;  // the new tree, never published, or nothing left: only the library's files
  }
  try {
    return move_entries(tree, target, foreign_entries(*directory_view(tree)), true).empty();
  } catch (const Error&) {
    return false;
  }
}

// The temporaries of `kind` beside `parent/base` whose marker names this target and a process
// that is gone.
void remove_stale_temps(const std::string& parent, const std::string& base,
                        const std::string& kind) {
  const std::string tag = "." + base + kind;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    struct stat st {};
    const std::string path = it->path().string();
    if (name.compare(0, tag.size(), tag) != 0 || !is_real_dir(path, st)) continue;
    const auto marker = read_marker(path);
    if (!marker || marker->target != base) continue;  // not a temporary of ours for this target
    if (::kill(static_cast<pid_t>(marker->pid), 0) == 0 || errno != ESRCH) continue;  // alive
    if (restore(path, *marker, join(parent, base))) remove_temporary(path);
  }
}

// Creates the lock file with its content in one step (an O_TMPFILE linked into place), so that a
// writer killed meanwhile leaves no lock file without it. Empty Fd when the file exists already.
Fd create_lock_file(const std::string& parent, const std::string& path) {
  Fd fd(::open(parent.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666));
  if (fd) {
    write_fd(fd.get(), kLockSignature, path);
    const std::string self = "/proc/self/fd/" + std::to_string(fd.get());
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      return fd;
    }
    if (errno == EEXIST) return Fd();
  }
  // No O_TMPFILE here (or no /proc): created, then written.
  fd = Fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd && errno == EEXIST) return Fd();
  if (!fd) throw_errno("cannot create the save lock", path);
  write_fd(fd.get(), kLockSignature, path);
  return fd;
}

// The content of the lock file `fd` (bounded: a user's file of that name may be anything).
std::string lock_content(int fd) {
  char buf[4096];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

Temporary::Temporary(SaveLock& lock, const std::string& kind, bool durable) {
  static std::atomic<uint64_t> counter{0};
  const std::string name = "." + lock.base() + kind + std::to_string(::getpid()) + "-" +
                           std::to_string(counter.fetch_add(1));
  dir_ = join(lock.parent(), name);
  work_ = join(dir_, "work");
  lock.record(name);  // before it exists: a kill before its marker is written leaves it known
  if (::mkdir(dir_.c_str(), 0777) != 0) throw_errno("cannot create a temporary directory", dir_);
  try {
    make_dir(work_);
    struct stat st {};
    if (::lstat(work_.c_str(), &st) != 0) throw_errno("cannot stat", work_);
    write_text(join(dir_, kTemporaryMarker),
               marker_text(Marker{::getpid(), st.st_dev, st.st_ino, lock.base()}));
    if (durable) sync_tree(dir_);  // a swapped-out tree is found again after a power loss too
  } catch (...) {
    remove_temporary(dir_);
    throw;
  }
}

Temporary::~Temporary() {
  if (!kept_) remove_temporary(dir_);
}

void remove_temporary(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != kTemporaryMarker) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);  // does not follow symlinks
    }
  }
  // The marker last: a temporary interrupted here is still recognised and removed next time.
  ::unlink(join(dir, kTemporaryMarker).c_str());
  ::rmdir(dir.c_str());
}

SaveLock::SaveLock(const std::string& parent, const std::string& base, const std::string& kind)
    : parent_(parent), base_(base), path_(join(parent, "." + base + ".tc-lock")) {
  const std::string signature(kLockSignature);
  bool writable = true;  // false: another user's lock file, only read
  while (true) {
    Fd fd = create_lock_file(parent_, path_);
    writable = true;
    if (!fd) {  // someone's: a holder's, one a killed holder left, or a user's file
      fd = Fd(::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
      if (!fd && (errno == EACCES || errno == EISDIR)) {
        writable = false;
        fd = Fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
      }
      if (!fd && errno == ENOENT) continue;  // removed by its holder meanwhile
      if (!fd) throw_errno("cannot open the save lock", path_);
    }
    while (::flock(fd.get(), LOCK_EX) != 0) {
      if (errno != EINTR) throw_errno("cannot lock", path_);
    }
    // A holder removes its lock file when it is done: the lock counts only on the file still at
    // the path.
    struct stat held {};
    struct stat now {};
    if (::fstat(fd.get(), &held) != 0 || ::lstat(path_.c_str(), &now) != 0 ||
        held.st_dev != now.st_dev || held.st_ino != now.st_ino) {
      continue;
    }
    fd_ = std::move(fd);
    break;
  }
  const std::string content = lock_content(fd_.get());
  ours_ = writable && content.compare(0, signature.size(), signature) == 0;
  // A holder killed while its temporary had no valid marker (being created or removed): then it
  // holds nothing but the library's files.
  const std::string left = ours_ ? content.substr(signature.size()) : std::string();
  const std::string tag = "." + base_ + ".tc-";
  struct stat st {};
  if (left.compare(0, tag.size(), tag) == 0 && left.find('/') == std::string::npos &&
      is_real_dir(join(parent_, left), st) && !read_marker(join(parent_, left))) {
    remove_temporary(join(parent_, left));
  }
  remove_stale_temps(parent_, base_, kind);
}

void SaveLock::record(const std::string& name) {
  if (!ours_) return;  // a user's file named like the lock is never written
  const std::string content = kLockSignature + name;
  if (::pwrite(fd_.get(), content.data(), content.size(), 0) !=
          static_cast<ssize_t>(content.size()) ||
      ::ftruncate(fd_.get(), static_cast<off_t>(content.size())) != 0) {
    throw_errno("cannot write the save lock", path_);
  }
}

SaveLock::~SaveLock() {
  // Removed before the unlock (waiters then lock a new file), and only when the library wrote it
  // (one a killed holder left included): a user's file of that name stays.
  if (ours_) ::unlink(path_.c_str());
}

}  // namespace tensordict::memmap::detail
