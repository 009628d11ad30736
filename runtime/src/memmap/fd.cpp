#include "memmap/fd.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tensordict/errors.h"

namespace tensordict::memmap::detail {

void throw_errno(const std::string& what, const std::string& path) {
  throw FormatError(what + " '" + path + "': " + std::strerror(errno));
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tensordict::memmap::detail
