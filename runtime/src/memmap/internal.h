#pragma once
// Helpers shared by the memmap_*.cpp translation units (not installed).

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memmap/fd.h"
#include "tensordict/internal.h"
#include "tensordict/memmap.h"

namespace tensordict::memmap::detail {

/// Runs `work` on a background thread (memmap_async of TensorDicts and tensorclasses).
TensorDictFuture in_background(std::function<TensorDict()> work);

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

/// The index a _SubTensorDict directory's meta.json records (Python's tagged encoding,
/// memmap/sub_index.cpp), checked against the batch size of its source; FormatError naming
/// `where` for anything else.
Index index_from_json(const Json& index, const BatchSize& source, const std::string& where);

/// `dir + "/" + name`.
std::string join(const std::string& dir, std::string_view name);
/// The names the leaf file or child directory of `key` may have in its directory, in lookup order:
/// the encoded name, then the raw key for directories written without key encoding when that is
/// safe.
std::vector<std::string> entry_names(const std::string& key, std::string_view suffix,
                                     bool directory);
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
/// fsync of every file and directory under `path`, and `path` itself.
void sync_tree(const std::string& path);
/// fsync of one directory (after a rename in it).
void sync_dir(const std::string& path);
/// Reads a whole small file (meta.json).
std::string read_text(const std::string& path);
/// Writes a whole small file, replacing it.
void write_text(const std::string& path, std::string_view text);
/// Writes all of `text` to the open file `fd` (`path` names it in errors).
void write_fd(int fd, std::string_view text, const std::string& path);

/// ValueError unless `options.format_version` is one a save writes (0 or kFormatVersion).
void check_format_version(const MemmapOptions& options);
/// ValueError when saving `td` at `prefix` would write a tree a load refuses (tensordict/limits.h:
/// directories nested too deep, a name too long, a meta.json nesting too deep). Writes nothing;
/// every save runs it before it changes anything on disk.
void check_savable(const TensorDict& td, const std::string& prefix, const WriteOptions& options);

/// Runs the fault-injection hook (set_save_step_hook, tensordict/internal.h) after a save's step.
void save_step(const char* step);

/// Runs `write(tmp)` on a fresh sibling directory of `prefix`, then publishes it as `prefix`
/// atomically (see docs/format.md, "Atomic save").
void atomic_publish(const std::string& prefix, bool durable,
                    const std::function<void(const std::string& tmp)>& write);
/// `prefix` without trailing slashes ("." for an empty prefix).
std::string normalize_prefix(const std::string& prefix);

// ---- temporaries beside a target (memmap/temporary.cpp) -----------------------------------------
/// A save's temporaries beside `parent/base` are named `.<base><kind><pid>-<n>`; `kind` tells
/// directory saves, archive writes, consolidated files and safetensors files apart.
inline constexpr const char* kSaveTemp = ".tc-";
inline constexpr const char* kArchiveTemp = ".tc-tdz-";
inline constexpr const char* kSafetensorsTemp = ".tc-st-";
inline constexpr const char* kConsolidateTemp = ".tc-cons-";

/// The lock a writer holds on a target (`<parent>/<base>`) while it writes it: an exclusive flock
/// on `<parent>/.<base>.tc-lock`, so that saves to one prefix take turns. The lock file is created
/// with its content (O_TMPFILE), says it is the library's, and records the temporary its holder is
/// creating or removing, so that a holder killed before the temporary's marker is written (or
/// after it is removed) leaves nothing the next holder does not recognise. The holder removes the
/// file when it releases the lock if the library wrote it (a user's file of that name is locked but
/// left alone); a waiter then locks the file now at that path, so no lock file outlives the saves.
class SaveLock {
 public:
  /// Blocks until this process holds the lock; then cleans up the temporaries of `kind` that a
  /// killed writer left: the one a killed holder recorded, and every one whose marker names this
  /// target and a process that is gone (a save's previous tree still holding entries a user put in
  /// it gets them moved back into the target first). A live process's temporaries are left alone.
  SaveLock(const std::string& parent, const std::string& base, const std::string& kind);
  ~SaveLock();
  SaveLock(const SaveLock&) = delete;
  SaveLock& operator=(const SaveLock&) = delete;
  const std::string& parent() const { return parent_; }
  const std::string& base() const { return base_; }
  /// Records `name` (a temporary beside the target) in the lock file.
  void record(const std::string& name);

 private:
  std::string parent_;
  std::string base_;
  std::string path_;
  Fd fd_;
  bool ours_ = false;  // the library wrote the file: it may be rewritten and removed
};

/// A temporary beside a target: the directory `<parent>/.<base><kind><pid>-<n>/` holding the
/// marker file kTemporaryMarker (the library's signature, the writer's pid, the target and the
/// identity of `work/`) and `work/`, which the writer fills. Only a directory holding a valid
/// marker (or the one a killed holder's lock file records) is ever taken for a temporary: a user's
/// file or directory with such a name is never touched. Removed (marker last) when destroyed,
/// unless keep() was called.
class Temporary {
 public:
  /// Creates the directory, the marker (fsynced when `durable`) and `work/`, beside the target of
  /// `lock`.
  Temporary(SaveLock& lock, const std::string& kind, bool durable);
  ~Temporary();
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  const std::string& dir() const { return dir_; }
  const std::string& work() const { return work_; }
  /// Leaves the temporary in place (it holds what could not be put back).
  void keep() { kept_ = true; }

 private:
  std::string dir_;
  std::string work_;
  bool kept_ = false;
};
inline constexpr const char* kTemporaryMarker = ".tc-temporary";
/// Removes a temporary's content, then its marker, then the directory (best effort).
void remove_temporary(const std::string& dir);

// ---- what a save owns (memmap/owned.cpp) --------------------------------------------------------
/// A read-only view of a saved tree, a directory or an archive's entries. Paths are relative to
/// the root ("" is the root itself).
class TreeView {
 public:
  enum class Kind { None, File, Dir, Other };
  virtual ~TreeView() = default;
  /// What `rel` is, symlinks not followed (a symlink or a special file is Other).
  virtual Kind kind(const std::string& rel) const = 0;
  /// The names directly inside the directory `rel`, sorted.
  virtual std::vector<std::string> list(const std::string& rel) const = 0;
  /// The content of the file `rel` (a meta.json); nullopt when it cannot be read.
  virtual std::optional<std::string> text(const std::string& rel) const = 0;
};
/// True for a `_type` as Python writes a class: "<class 'module.Name'>", dotted identifiers (or
/// `<locals>`) between the quotes.
bool is_python_class(std::string_view type);
/// Why `tree` is not a save that a save may replace, "" when it is one. A save is recognised only
/// by what Python tensordict or this library writes: a top-level meta.json object whose `_type` is
/// a class as Python spells it, of a format version this library reads, whose entries are the
/// format's (a TensorDict's batch size, leaves with a dtype and a shape, children with a type),
/// with the data files, child directories, `_tensordict/` or first stack element it names
/// beside it. `where(rel)` names a path of the tree in the message.
std::string saved_tree_problem(const TreeView& tree,
                               const std::function<std::string(const std::string&)>& where);
/// A directory on disk as a TreeView (listing errors are FormatErrors naming the directory).
std::unique_ptr<TreeView> directory_view(const std::string& root);
/// The top-most entries of a saved tree that its save did not write (a level's own, sorted, then
/// those of its directories): at each level, everything but meta.json and the files and directories
/// its meta.json names (a TensorDict's keys, a tensorclass's `_tensordict/` and `other.pickle`, a
/// stack's elements `0/`, `1/`, ... up to the first gap, a NonTensorStack's `pickle.pkl`). A level
/// whose meta.json is not one a save writes (saved_tree_problem's rules for one meta.json) owns
/// nothing, not even that meta.json.
std::vector<std::string> foreign_entries(const TreeView& tree);
/// Moves the entries `rels` of the tree `from` to the same relative paths in `to`, creating the
/// directories above them, never replacing anything: a directory that `to` has too is merged
/// entry by entry. Returns the entries it could not move, each with the reason.
std::vector<std::string> move_entries(const std::string& from, const std::string& to,
                                      const std::vector<std::string>& rels, bool durable);

// ---- reading meta.json (memmap/read.cpp), for directories and archives alike -------------------
/// A meta.json "shape": non-negative integers (FormatError naming `where` otherwise).
std::vector<int64_t> parse_shape(const Json& j, const std::string& where);
/// Python's NonTensorStack reader: a level is a stack dim when all its items are lists of one
/// length (so equal-length list elements add a dimension, as in Python).
int64_t stack_ndim(const Json& data);

}  // namespace tensordict::memmap::detail
