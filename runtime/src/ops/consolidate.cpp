// consolidate(): every tensor leaf becomes a view of one flat byte buffer, so copies (clone, to,
// update_ between equal layouts, zero_) move one buffer instead of one per leaf. With a filename,
// the buffer is a file (Python's consolidate(filename=...) / from_consolidated).
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "lazy/internal.h"
#include "memmap/internal.h"
#include "ops/util.h"
#include "tensordict/internal.h"
#include "tensordict/json.h"

namespace tensordict {

namespace detail {
namespace {

// Python's layout: leaves in insertion order (depth first), each padded to a multiple of 8 bytes,
// so that a consolidated buffer sent to or received from Python lines up leaf by leaf.
constexpr int64_t kPad = 8;

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

bool views(const at::Tensor& t, const at::Tensor& flat) {
  return t.storage().unsafeGetStorageImpl() == flat.storage().unsafeGetStorageImpl();
}

bool all_leaves_view(const TensorDict& td, const at::Tensor& flat) {
  for (const auto& value : detail::impl_of(td).values) {
    if (value.is_tensor() && !views(value.tensor(), flat)) return false;
    if (value.is_tensordict() && !all_leaves_view(value.tensordict(), flat)) return false;
  }
  return true;
}

}  // namespace

// Built directly on a TensorImpl: going through ATen ops (empty + set_) costs two dispatches per
// leaf, which is what consolidated copies must avoid.
at::Tensor make_view(const at::Tensor& flat, at::ScalarType dtype, at::IntArrayRef sizes,
                     at::IntArrayRef strides, int64_t storage_offset) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::Storage(flat.storage()), flat.key_set(),
                                                   c10::scalarTypeToTypeMeta(dtype));
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(storage_offset);
  return at::Tensor(std::move(impl));
}

// ATen's generic copy kernel moves uint8 buffers well below memcpy speed; host buffers are
// plain bytes, so memcpy them (other devices go through copy_).
void copy_flat(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.device().is_cpu() && src.device().is_cpu() && dst.nbytes() == src.nbytes()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), src.nbytes());
  } else {
    dst.copy_(src);
  }
}

at::Tensor clone_flat(const at::Tensor& flat) {
  at::Tensor out = at::empty_like(flat);
  copy_flat(out, flat);
  return out;
}

at::Tensor view_in(const at::Tensor& flat, const at::Tensor& like) {
  return make_view(flat, like.scalar_type(), like.sizes(), like.strides(), like.storage_offset());
}

at::Tensor consolidated_buffer(const TensorDict& td) {
  const at::Tensor& flat = detail::impl_of(td).consolidated;
  return flat.defined() && all_leaves_view(td, flat) ? flat : at::Tensor();
}

TensorDict rebuild_over(const TensorDict& td, const at::Tensor& flat,
                        std::optional<at::Device> device) {
  TensorDict out = map_leaves(
      td, [&flat](const at::Tensor& t) { return view_in(flat, t); }, "consolidate", device);
  detail::impl_of(out).consolidated = flat;
  return out;
}

void inherit_consolidated(const TensorDict& src, TensorDict& out) {
  const at::Tensor flat = consolidated_buffer(src);
  if (flat.defined() && all_leaves_view(out, flat)) detail::impl_of(out).consolidated = flat;
}

bool same_layout(const TensorDict& a, const TensorDict& b) {
  const auto& x = detail::impl_of(a);
  const auto& y = detail::impl_of(b);
  if (x.keys != y.keys) return false;
  for (size_t i = 0; i < x.values.size(); ++i) {
    const Value& u = x.values[i];
    const Value& v = y.values[i];
    if (u.kind() != v.kind()) return false;
    if (u.is_tensordict() && !same_layout(u.tensordict(), v.tensordict())) return false;
    if (!u.is_tensor()) continue;
    const at::Tensor& s = u.tensor();
    const at::Tensor& t = v.tensor();
    if (s.scalar_type() != t.scalar_type() || s.sizes() != t.sizes() ||
        s.strides() != t.strides() || s.storage_offset() != t.storage_offset()) {
      return false;
    }
  }
  return true;
}

}  // namespace detail

namespace {

struct Leaf {
  std::string key;
  at::Tensor tensor;
  int64_t offset = 0;  // bytes
};

void collect(const TensorDict& td, const std::string& prefix, std::vector<Leaf>& out) {
  const auto& impl = detail::impl_of(td);
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    const std::string key = prefix.empty() ? impl.keys[i] : prefix + "." + impl.keys[i];
    const Value& value = impl.values[i];
    if (value.is_tensor()) out.push_back({key, value.tensor()});
    if (value.is_tensordict()) collect(value.tensordict(), key, out);
  }
}

// Sets every leaf's offset in Python's layout and returns the buffer's size in bytes.
int64_t lay_out(std::vector<Leaf>& leaves) {
  int64_t total = 0;
  for (auto& leaf : leaves) {
    // A leaf starts where the previous one's padding ends; only an element wider than the padding
    // (complex128) needs more, which Python cannot view either.
    leaf.offset =
        detail::round_up(total, std::max<int64_t>(detail::kPad, leaf.tensor.element_size()));
    total =
        leaf.offset + detail::round_up(static_cast<int64_t>(leaf.tensor.nbytes()), detail::kPad);
  }
  return total;
}

// `td`'s structure over `flat`, every leaf copied to its offset (`leaves`, from lay_out).
TensorDict pack(const TensorDict& td, const std::vector<Leaf>& leaves, const at::Tensor& flat,
                std::optional<at::Device> device) {
  size_t next = 0;
  TensorDict out = detail::map_leaves(
      td,
      [&](const at::Tensor& t) {
        const Leaf& leaf = leaves[next++];
        at::Tensor view =
            detail::make_view(flat, t.scalar_type(), t.sizes(), c10::contiguous_strides(t.sizes()),
                              leaf.offset / static_cast<int64_t>(t.element_size()));
        view.copy_(t);
        return view;
      },
      "consolidate", device);
  detail::impl_of(out).consolidated = flat;
  return out;
}

// ---- consolidated files ------------------------------------------------------------------------
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

TensorDict TensorDict::consolidate() const {
  detail::dense_only(*this, "consolidate");
  if (is_consolidated()) return *this;
  std::vector<Leaf> leaves;
  collect(*this, "", leaves);
  const at::Device device = leaves.empty() ? at::Device(at::kCPU) : leaves[0].tensor.device();
  for (const auto& leaf : leaves) {
    if (leaf.tensor.device() != device) {
      throw TypeError("consolidate: key '" + leaf.key + "' is on " + leaf.tensor.device().str() +
                      " but key '" + leaves[0].key + "' is on " + device.str() +
                      "; all leaves must share one device");
    }
  }
  const int64_t total = lay_out(leaves);
  const at::Tensor flat = at::empty({total}, at::TensorOptions().dtype(at::kByte).device(device));
  return pack(*this, leaves, flat, std::nullopt);
}

TensorDict TensorDict::consolidate(const std::string& filename) const {
  constexpr const char* op = "consolidate";
  detail::dense_only(*this, op);
  // Unlike Python, which ignores `filename` when already consolidated, the file is always written.
  const Target target = check_target(filename);
  std::vector<Leaf> leaves;
  collect(*this, "", leaves);
  const int64_t total = lay_out(leaves);
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
  TensorDict out = pack(*this, leaves, flat, at::Device(at::kCPU));
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

bool TensorDict::is_consolidated() const { return detail::consolidated_buffer(*this).defined(); }

}  // namespace tensordict
