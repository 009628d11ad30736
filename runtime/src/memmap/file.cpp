// File-backed tensors: one MAP_SHARED mapping per leaf file, released with the storage.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "memmap/internal.h"
#include "tensordict/dtype.h"

namespace tensordict {
namespace memmap::detail {
namespace {

// Context of a mapping's DataPtr. Building the storage ourselves (instead of at::from_blob with a
// lambda) keeps the deleter a plain function, so a tensor's file can be recognised later: the
// writer reuses a leaf that already maps its target file instead of copying it.
struct Mapping {
  void* addr;
  size_t length;
  std::string path;
  bool shared;  // MAP_SHARED: the tensor's values are the file's
  dev_t device;
  ino_t inode;  // a path can name another file later (a re-save elsewhere); the inode cannot
};

void release_mapping(void* ctx) {
  auto* m = static_cast<Mapping*>(ctx);
  ::munmap(m->addr, m->length);
  delete m;
}

const Mapping* mapping_of(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return nullptr;
  const c10::DataPtr& ptr = t.storage().data_ptr();
  if (ptr.get_deleter() != &release_mapping) return nullptr;
  return static_cast<const Mapping*>(ptr.get_context());
}

void write_all(int fd, const char* data, size_t n, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::pwrite(fd, data + done, n - done, static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw_errno("cannot write", path);
    done += static_cast<size_t>(w);
  }
}

// A plain CPU buffer in logical order can be written with pwrite, which costs one copy into the
// page cache; everything else (views, other devices, conj/neg bits) is copied through the mapping.
bool writable_as_bytes(const at::Tensor& t) {
  return t.device().is_cpu() && t.is_contiguous() && !t.is_conj() && !t.is_neg() &&
         t.layout() == at::kStrided;
}

// The data file's stat, after checking it is a regular file that holds `n` bytes. `strict`
// (loads) also refuses a file twice as long or longer: Python leaves stale tails when it
// rewrites a file in place, and the mmap_example artifact has 1 and 2 junk bytes, but a file that
// long holds another dtype or shape (float64 values read as float32 ones); for no data (n == 0),
// any byte is too many.
struct stat check_size(int fd, const std::string& path, at::ScalarType dtype, at::IntArrayRef shape,
                       size_t n, bool strict) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno("cannot stat", path);
  if (!S_ISREG(st.st_mode)) throw FormatError("'" + path + "' is not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < n || (strict && (n == 0 ? size > 0 : size / 2 >= n))) {
    throw FormatError("'" + path + "' is " + (size < n ? "truncated" : "too long") + ": " +
                      std::to_string(size) + " bytes, shape " + shape_str(shape) + " of " +
                      dtype_name(dtype) + " needs " + std::to_string(n));
  }
  return st;
}

// Opens a data file for mapping: read-write when allowed, else read-only (mapped copy-on-write).
// Never through a symlink, and never waiting on a FIFO.
Fd open_data_file(const std::string& filename, bool& writable) {
  constexpr int kFlags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  writable = true;
  Fd fd(::open(filename.c_str(), O_RDWR | kFlags));
  if (!fd && (errno == EACCES || errno == EROFS)) {
    writable = false;
    fd = Fd(::open(filename.c_str(), O_RDONLY | kFlags));
  }
  if (!fd) {
    if (errno == ELOOP) throw FormatError("refusing to read '" + filename + "' through a symlink");
    if (errno == ENOENT) throw FormatError("missing data file '" + filename + "'");
    if (errno == EISDIR) throw FormatError("'" + filename + "' is not a regular file");
    throw_errno("cannot open", filename);
  }
  return fd;
}

}  // namespace

at::Tensor load_data_file(const std::string& path, at::ScalarType dtype, at::IntArrayRef shape) {
  bool writable = false;
  const Fd fd = open_data_file(path, writable);
  const size_t n = byte_size(shape, dtype, path);
  check_size(fd.get(), path, dtype, shape, n, true);
  if (n == 0) return at::empty(shape, at::TensorOptions().dtype(dtype));  // nothing to map
  at::Tensor t = map_fd(fd.get(), writable, path, dtype, shape);
  // A bool byte other than 0 or 1 is undefined behaviour to every reader: refuse it.
  if (dtype == at::kBool && t.numel() > 0 && t.view(at::kByte).gt(1).any().item<bool>()) {
    throw FormatError("bool data file '" + path + "' holds bytes other than 0 and 1");
  }
  return t;
}

std::optional<std::string> shared_file_of(const at::Tensor& t) {
  const Mapping* m = mapping_of(t);
  if (!m || !m->shared) return std::nullopt;
  return m->path;
}

bool maps_file_at(const at::Tensor& t, const std::string& path) {
  const Mapping* m = mapping_of(t);
  struct stat st {};
  return m && m->shared && m->path == absolute_path(path) && ::stat(path.c_str(), &st) == 0 &&
         st.st_dev == m->device && st.st_ino == m->inode;
}

size_t byte_size(at::IntArrayRef shape, at::ScalarType dtype, const std::string& path) {
  constexpr auto kMax = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  size_t n = c10::elementSize(dtype);
  bool too_large = false;  // checked after the loop: a 0 dim anywhere makes the size 0
  for (int64_t d : shape) {
    if (d < 0) throw FormatError("'" + path + "': negative dimension in shape " + shape_str(shape));
    if (d == 0) return 0;
    too_large = too_large || n > kMax / static_cast<size_t>(d);
    if (!too_large) n *= static_cast<size_t>(d);
  }
  if (too_large) {
    throw FormatError("'" + path + "': shape " + shape_str(shape) + " of " + dtype_name(dtype) +
                      " is too large (more than 2^63 bytes)");
  }
  return n;
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return (ec ? std::filesystem::path(path) : abs).lexically_normal().string();
}

at::Tensor map_fd(int fd, bool writable, const std::string& path, at::ScalarType dtype,
                  at::IntArrayRef shape, const std::string& record_as) {
  const size_t n = byte_size(shape, dtype, path);
  if (n == 0) return at::empty(shape, at::TensorOptions().dtype(dtype));
  const struct stat st = check_size(fd, path, dtype, shape, n, false);
  // Read-only files are mapped copy-on-write so the tensor stays writable in memory.
  void* addr =
      ::mmap(nullptr, n, PROT_READ | PROT_WRITE, writable ? MAP_SHARED : MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) throw_errno("cannot map", path);
  auto ctx = std::make_unique<Mapping>(Mapping{addr, n,
                                               absolute_path(record_as.empty() ? path : record_as),
                                               writable, st.st_dev, st.st_ino});
  c10::DataPtr ptr(addr, ctx.get(), &release_mapping, at::Device(at::kCPU));
  ctx.release();
  c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<int64_t>(n), std::move(ptr),
                       nullptr, false);
  return at::empty({0}, at::TensorOptions().dtype(dtype)).set_(storage, 0, shape);
}

at::Tensor write_leaf(const std::string& path, const at::Tensor& src, at::IntArrayRef shape,
                      at::ScalarType dtype, bool existsok, const std::string& record_as) {
  const size_t n = byte_size(shape, dtype, path);
  if (n == 0) {  // as Python: no file for an empty tensor
    if (!existsok && ::access(path.c_str(), F_OK) == 0) {
      throw FormatError("'" + path + "' already exists (existsok is false)");
    }
    return at::empty(shape, at::TensorOptions().dtype(dtype));
  }
  const int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (existsok ? 0 : O_EXCL);
  Fd fd(::open(path.c_str(), flags, 0666));
  if (!fd) {
    if (errno == EEXIST) throw FormatError("'" + path + "' already exists (existsok is false)");
    if (errno == ELOOP) throw FormatError("refusing to write '" + path + "' through a symlink");
    throw_errno("cannot create", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat", path);
  // A longer existing file keeps its tail, as Python does; a shorter one is extended (zeros).
  if (static_cast<uint64_t>(st.st_size) < n && ::ftruncate(fd.get(), static_cast<off_t>(n)) != 0) {
    throw_errno("cannot size", path);
  }
  if (src.defined() && writable_as_bytes(src)) {
    write_all(fd.get(), static_cast<const char*>(src.data_ptr()), n, path);
    return map_fd(fd.get(), true, path, dtype, shape, record_as);
  }
  at::Tensor mapped = map_fd(fd.get(), true, path, dtype, shape, record_as);
  if (src.defined()) mapped.copy_(src.detach());
  return mapped;
}

}  // namespace memmap::detail

using memmap::detail::Fd;

at::Tensor MemoryMappedTensor::from_tensor(const at::Tensor& src, const std::string& filename,
                                           bool existsok) {
  return memmap::detail::write_leaf(filename, src, src.sizes(), src.scalar_type(), existsok);
}

at::Tensor MemoryMappedTensor::empty(at::IntArrayRef shape, at::ScalarType dtype,
                                     const std::string& filename, bool existsok) {
  return memmap::detail::write_leaf(filename, at::Tensor(), shape, dtype, existsok);
}

at::Tensor MemoryMappedTensor::zeros(at::IntArrayRef shape, at::ScalarType dtype,
                                     const std::string& filename, bool existsok) {
  return empty(shape, dtype, filename, existsok).zero_();
}

at::Tensor MemoryMappedTensor::ones(at::IntArrayRef shape, at::ScalarType dtype,
                                    const std::string& filename, bool existsok) {
  return full(shape, 1, dtype, filename, existsok);
}

at::Tensor MemoryMappedTensor::full(at::IntArrayRef shape, const at::Scalar& value,
                                    at::ScalarType dtype, const std::string& filename,
                                    bool existsok) {
  return empty(shape, dtype, filename, existsok).fill_(value);
}

at::Tensor MemoryMappedTensor::from_filename(const std::string& filename, at::ScalarType dtype,
                                             at::IntArrayRef shape) {
  bool writable = true;
  const Fd fd = memmap::detail::open_data_file(filename, writable);
  return memmap::detail::map_fd(fd.get(), writable, filename, dtype, shape);
}

bool MemoryMappedTensor::is_memory_mapped(const at::Tensor& t) {
  return memmap::detail::mapping_of(t) != nullptr;
}

std::optional<std::string> MemoryMappedTensor::filename(const at::Tensor& t) {
  const auto* m = memmap::detail::mapping_of(t);
  if (!m) return std::nullopt;
  return m->path;
}

}  // namespace tensordict
