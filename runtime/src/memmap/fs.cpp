// Small POSIX file-system helpers for the memmap writer and reader.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "memmap/internal.h"

namespace tensordict::memmap::detail {
namespace fs = std::filesystem;

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0777) == 0) return;
  if (errno == EEXIST) {
    throw FormatError("cannot create directory '" + path +
                      "': the name is already taken (two keys map to the same file name?)");
  }
  throw_errno("cannot create directory", path);
}

namespace {

void sync_path(const std::string& path, int flags) {
  Fd fd(::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) throw_errno("cannot open for fsync", path);
  if (::fsync(fd.get()) != 0) throw_errno("cannot fsync", path);
}

}  // namespace

void sync_dir(const std::string& path) { sync_path(path, O_RDONLY | O_DIRECTORY); }

void sync_tree(const std::string& path) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const auto status = it->symlink_status();
    if (fs::is_directory(status)) {
      sync_dir(it->path().string());
    } else if (fs::is_regular_file(status)) {
      sync_path(it->path().string(), O_RDONLY);
    }
  }
  if (ec) throw FormatError("cannot walk '" + path + "': " + ec.message());
  sync_dir(path);
}

bool is_child_dir(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (S_ISLNK(st.st_mode)) throw FormatError("refusing to follow symlink '" + path + "'");
  return S_ISDIR(st.st_mode);
}

std::string read_text(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not regular).
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT) throw FormatError("missing '" + path + "'");
    if (errno == ELOOP) throw FormatError("refusing to read '" + path + "' through a symlink");
    throw_errno("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat", path);
  if (!S_ISREG(st.st_mode)) throw FormatError("'" + path + "' is not a regular file");
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read", path);
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

void write_text(const std::string& path, std::string_view text) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd) throw_errno("cannot create", path);
  write_fd(fd.get(), text, path);
}

void write_fd(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot write", path);
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace tensordict::memmap::detail
