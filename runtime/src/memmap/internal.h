#pragma once
// Helpers shared by the memmap_*.cpp translation units (not installed).

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensordict/memmap.h"

namespace tensordict::memmap::detail {

/// Runs `work` on a background thread (memmap_async of TensorDicts and tensorclasses).
TensorDictFuture in_background(std::function<TensorDict()> work);

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

/// numel × itemsize of `shape`; FormatError naming `path` on negative dims or a size past
/// int64 (what a tensor's storage can hold).
size_t byte_size(at::IntArrayRef shape, at::ScalarType dtype, const std::string& path);

/// Maps the first numel × itemsize bytes of an open file as a tensor of `shape` / `dtype`. The
/// mapping remembers `record_as` (default: `path`) as its file name, made absolute.
at::Tensor map_fd(int fd, bool writable, const std::string& path, at::ScalarType dtype,
                  at::IntArrayRef shape, const std::string& record_as = {});
/// Creates (or reuses, when `existsok`) `path` sized for the tensor and returns it mapped. With
/// `src` defined its values are written in; otherwise the file keeps its (zero-filled) content.
/// `record_as`: the name the file will have once published (the writer works in a temporary).
at::Tensor write_leaf(const std::string& path, const at::Tensor& src, at::IntArrayRef shape,
                      at::ScalarType dtype, bool existsok, const std::string& record_as = {});
/// The file of `t`'s storage when it is a MAP_SHARED mapping (its values are the file's content);
/// nullopt for other tensors and for copy-on-write mappings of read-only files.
std::optional<std::string> shared_file_of(const at::Tensor& t);
/// True when `t`'s storage is a MAP_SHARED mapping of the very file (same inode) now at `path`.
bool maps_file_at(const at::Tensor& t, const std::string& path);
/// Absolute, lexically normalised spelling of `path` (files need not exist).
std::string absolute_path(const std::string& path);

/// `dir + "/" + name`.
std::string join(const std::string& dir, std::string_view name);
/// The existing path of the leaf file or child directory for `key` in `dir`: the encoded name, or
/// the raw key for directories written without key encoding when that is safe. Empty when neither
/// exists. FormatError when the entry is a symlink.
std::string find_entry(const std::string& dir, const std::string& key, std::string_view suffix,
                       bool directory);
/// True when `path` is a directory; FormatError when it is a symlink (a child directory of a
/// memmap tree must lie inside it).
bool is_child_dir(const std::string& path);
/// A leaf's data file for a load: checked to be a regular file (never a symlink or a FIFO) at
/// least as long as `shape` of `dtype` needs and less than twice that, then mapped as
/// `MemoryMappedTensor::from_filename` does.
at::Tensor load_data_file(const std::string& path, at::ScalarType dtype, at::IntArrayRef shape);
/// mkdir that fails (FormatError) when `path` exists already.
void make_dir(const std::string& path);
/// Removes a directory tree (best effort; used for temporaries).
void remove_tree(const std::string& path);
/// fsync of every file and directory under `path`, and `path` itself.
void sync_tree(const std::string& path);
/// fsync of one directory (after a rename in it).
void sync_dir(const std::string& path);
/// Reads a whole small file (meta.json).
std::string read_text(const std::string& path);
/// Writes a whole small file, replacing it.
void write_text(const std::string& path, std::string_view text);

/// Fault injection for the crash tests: `hook(step)` runs after each step of a save ("leaf",
/// "meta", "written", "synced", "published", "cleaned"). Null (the default) costs one load.
void set_save_step_hook(void (*hook)(const char* step));
void save_step(const char* step);

/// Runs `write(tmp)` on a fresh sibling directory of `prefix`, then publishes it as `prefix`
/// atomically (see docs/format.md, "Atomic save").
void atomic_publish(const std::string& prefix, bool durable,
                    const std::function<void(const std::string& tmp)>& write);
/// `prefix` without trailing slashes ("." for an empty prefix).
std::string normalize_prefix(const std::string& prefix);

/// Runs `job(i)` for i in [0, n) on min(num_threads, n) threads (inline when that is 1); the
/// first exception a job throws is rethrown once every thread has joined.
void parallel_for(size_t n, int num_threads, const std::function<void(size_t)>& job);

// ---- temporaries beside a target (memmap/atomic.cpp) -------------------------------------------
/// A save's temporaries beside `parent/base` are named `.<base><kind><pid>-<n>`; `kind` tells
/// directory saves (kSaveTemp) from archive writes apart.
inline constexpr const char* kSaveTemp = ".tc-";
std::string temp_tag(const std::string& base, const std::string& kind);
std::string new_temp_path(const std::string& parent, const std::string& base,
                          const std::string& kind);
/// Removes the temporaries of `kind` whose process is gone (killed mid-save); a live process's
/// are left alone: it may be writing to the same target now.
void remove_stale_temps(const std::string& parent, const std::string& base,
                        const std::string& kind);

// ---- reading meta.json (memmap/read.cpp), for directories and archives alike -------------------
/// A meta.json "shape": non-negative integers (FormatError naming `where` otherwise).
std::vector<int64_t> parse_shape(const Json& j, const std::string& where);
/// Python's NonTensorStack reader: a level is a stack dim when all its items are lists of one
/// length (so equal-length list elements add a dimension, as in Python).
int64_t stack_ndim(const Json& data);

}  // namespace tensordict::memmap::detail
