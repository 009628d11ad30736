// consolidate(filename) and from_consolidated: a consolidated buffer as a file (Python's
// consolidate(filename=...) / from_consolidated). The buffer's layout is consolidate()'s
// (ops/consolidate.cpp); the metadata at its end is memmap/consolidated_metadata.cpp's.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string_view>

#include "core/lazy_state.h"
#include "memmap/internal.h"
#include "ops/util.h"
#include "tensordict/internal.h"
#include "tensordict/json.h"

namespace tensordict {
namespace {

// Python's consolidate(filename=...) file: the buffer, the metadata as JSON, the JSON's byte
// length as a little-endian int64.
namespace fs = std::filesystem;
using memmap::detail::Fd;
using memmap::detail::throw_errno;

constexpr int64_t kLengthBytes = 8;
void read_at(int fd, char* out, size_t n, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_errno("cannot read", path);
    if (r == 0) throw FormatError("'" + path + "' shrank while it was read");
    done += static_cast<size_t>(r);
  }
}

void write_at(int fd, std::string_view bytes, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw_errno("cannot write", path);
    done += static_cast<size_t>(w);
  }
}

std::string op_on(const std::string& path) { return "from_consolidated '" + path + "'"; }

// The metadata at the end of an open file of `size` bytes, and the size of the buffer before it.
struct Tail {
  Json meta;
  int64_t buffer_bytes = 0;
};

Tail read_tail(int fd, uint64_t size, const std::string& path) {
  const std::string op = op_on(path);
  if (size < static_cast<uint64_t>(kLengthBytes)) {
    throw FormatError(op + ": the file is " + std::to_string(size) +
                      " bytes, too short for the metadata's length (its last 8 bytes)");
  }
  unsigned char raw[kLengthBytes];
  read_at(fd, reinterpret_cast<char*>(raw), sizeof raw, size - kLengthBytes, path);
  uint64_t length = 0;  // little-endian on every host, as Python writes it
  for (int i = kLengthBytes - 1; i >= 0; --i) length = length << 8 | raw[i];
  const uint64_t room = size - kLengthBytes;
  if (length > room) {
    throw FormatError(op + ": the metadata's length (" +
                      std::to_string(static_cast<int64_t>(length)) +
                      ", the last 8 bytes) exceeds the " + std::to_string(room) +
                      " bytes before it; the file is truncated or not a "
                      "consolidated TensorDict");
  }
  std::string text(static_cast<size_t>(length), '\0');
  read_at(fd, text.data(), text.size(), room - length, path);
  Tail out{parse_json(text, op + ": the metadata"), static_cast<int64_t>(room - length)};
  if (!out.meta.is_object() || !out.meta.contains("leaves") || !out.meta.contains("cls")) {
    throw FormatError(op + ": the metadata is not a TensorDict's description (a JSON " +
                      out.meta.type_name() + " without \"cls\" and \"leaves\")");
  }
  return out;
}

// Opens a consolidated file to read it: never through a symlink, never waiting on a FIFO.
Fd open_consolidated(const std::string& path, struct stat& st) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    if (errno == ELOOP) throw FormatError(op_on(path) + ": refusing to read through a symlink");
    if (errno == ENOENT) throw FormatError(op_on(path) + ": no such file");
    throw_errno("from_consolidated: cannot open", path);
  }
  if (::fstat(fd.get(), &st) != 0) throw_errno("from_consolidated: cannot stat", path);
  if (!S_ISREG(st.st_mode)) throw FormatError(op_on(path) + ": not a regular file");
  return fd;
}

// Copies the leaves' (dtype, shape, start, stop, pad) of `laid_out` into `meta`, a description of
// the same structure.
void copy_offsets(Json& meta, const Json& laid_out) {
  meta["leaves"] = laid_out.at("leaves");
  for (auto& [key, entry] : meta.items()) {
    if (!detail::is_level_field(key) && entry.is_object()) copy_offsets(entry, laid_out.at(key));
  }
}

bool is_consolidated_file(const std::string& path) {
  try {
    struct stat st {};
    const Fd fd = open_consolidated(path, st);
    read_tail(fd.get(), static_cast<uint64_t>(st.st_size), path);
    return true;
  } catch (const FormatError&) {
    return false;
  }
}

// Where consolidate(filename) publishes: a file it may replace (a previous consolidated file, not
// a directory, a symlink or any other file, which would be lost) in an existing directory.
struct Target {
  std::string parent;
  std::string base;
};

Target check_target(const std::string& filename) {
  const fs::path p(filename);
  Target t{p.has_parent_path() ? p.parent_path().string() : ".", p.filename().string()};
  if (t.base.empty() || t.base == "." || t.base == "..") {
    throw FormatError("consolidate: '" + filename + "' must name a file");
  }
  struct stat st {};
  if (::lstat(filename.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      throw FormatError("consolidate: refusing to write through symlink '" + filename + "'");
    }
    if (!S_ISREG(st.st_mode)) {
      throw FormatError("consolidate: '" + filename + "' exists and is not a regular file");
    }
    if (!is_consolidated_file(filename)) {
      throw FormatError("consolidate: refusing to replace '" + filename +
                        "': it is not a consolidated TensorDict file (no metadata at its end)");
    }
  }
  return t;
}

}  // namespace

TensorDict TensorDict::consolidate(const std::string& filename) const {
  constexpr const char* op = "consolidate";
  detail::dense_only(*this, op);
  // Unlike Python, which ignores `filename` when already consolidated, the file is always written.
  const Target target = check_target(filename);
  const detail::ConsolidatedLayout layout = detail::consolidated_layout(*this);
  const int64_t total = layout.bytes;
  // Written in a marked temporary beside the target (memmap/temporary.cpp), then renamed over it.
  memmap::detail::SaveLock lock(target.parent, target.base, memmap::detail::kConsolidateTemp);
  const memmap::detail::Temporary temporary(lock, memmap::detail::kConsolidateTemp, false);
  const std::string tmp = memmap::detail::join(temporary.work(), "consolidated");
  Fd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd) throw_errno("consolidate: cannot create a temporary beside", filename);
  if (::ftruncate(fd.get(), static_cast<off_t>(total)) != 0) throw_errno("cannot size", tmp);
  // Mapped before the copies so that the leaves are copied once, straight into the file
  // (zero-filled by ftruncate: the padding is Python's zeros). Recorded under its final name.
  const at::Tensor flat = memmap::detail::map_fd(fd.get(), true, tmp, at::kByte, {total}, filename);
  // Python's result is on the CPU (the metadata keeps the source's device).
  TensorDict out = detail::pack_consolidated(*this, layout, flat, at::Device(at::kCPU));
  Json meta = detail::describe(*this, at::Tensor(), op);
  {
    // The offsets are the packed leaves'; the rest of the description is this TensorDict's
    // (its device and lock state, as Python describes the source before locking the result).
    const Json laid_out = detail::describe(out, flat, op);
    copy_offsets(meta, laid_out);
  }
  std::string tail = dumps_python(meta);
  const auto length = static_cast<uint64_t>(tail.size());
  for (int i = 0; i < kLengthBytes; ++i) tail.push_back(static_cast<char>(length >> (8 * i)));
  write_at(fd.get(), tail, static_cast<uint64_t>(total), tmp);
  if (::fsync(fd.get()) != 0) throw_errno("cannot sync", tmp);
  if (::rename(tmp.c_str(), filename.c_str()) != 0) {
    throw_errno("consolidate: cannot rename '" + tmp + "' to", filename);
  }
  memmap::detail::sync_dir(target.parent);
  out.lock_();
  return out;
}

TensorDict TensorDict::from_consolidated(const std::string& filename) {
  struct stat st {};
  const Fd fd = open_consolidated(filename, st);
  const Tail tail = read_tail(fd.get(), static_cast<uint64_t>(st.st_size), filename);
  // Copy-on-write, as Python's torch.from_file(shared=False): writes to the leaves stay in memory.
  const at::Tensor flat =
      memmap::detail::map_fd(fd.get(), false, filename, at::kByte, {tail.buffer_bytes});
  const std::string op = op_on(filename);
  TensorDict out = detail::from_metadata(tail.meta, flat, op);
  // A bool byte other than 0 or 1 is undefined behaviour to every reader (as memmap loads check).
  detail::for_each_leaf(out, [&](const NestedKey& key, at::Tensor& t) {
    if (t.scalar_type() == at::kBool && t.numel() > 0 &&
        t.view(at::kByte).gt(1).any().item<bool>()) {
      throw FormatError(op + ": bool leaf '" + key.join(".") + "' holds bytes other than 0 and 1");
    }
  });
  return out;
}

}  // namespace tensordict
