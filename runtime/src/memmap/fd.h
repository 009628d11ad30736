#pragma once
// File descriptors and errno messages for the memmap layer's files (not installed). Torch-free:
// the zip reader (zip_reader.cpp) uses it in tcgen too.

#include <string>
#include <utility>

namespace tensordict::memmap::detail {

/// FormatError "<what> '<path>': <strerror(errno)>".
[[noreturn]] void throw_errno(const std::string& what, const std::string& path);

/// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace tensordict::memmap::detail
