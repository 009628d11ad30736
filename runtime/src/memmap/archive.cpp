// `.tdz` archives over the zip layer (memmap/zip_reader.cpp, zip_writer.cpp): packing a memmap
// directory (Python's entry order), unpacking, saving a TensorDict through a staging directory, and
// loading an archive with every leaf a view into one mapping of the file (the format itself is read
// by memmap/tree_loader.h, as for directories).
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "core/tensordict_impl.h"
#include "memmap/archive_internal.h"
#include "memmap/internal.h"
#include "memmap/tree_loader.h"
#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict/limits.h"

namespace tensordict::archive {
namespace fs = std::filesystem;
namespace {

using memmap::detail::join;

struct Target {
  std::string path;
  std::string parent;
  std::string base;
};

// An archive's entries as a tree, for the ownership walk of memmap/owned.cpp (over the reader's
// index: nothing is copied).
class ZipView : public memmap::detail::TreeView {
 public:
  explicit ZipView(const detail::ZipReader& zip) : zip_(zip) {}

  Kind kind(const std::string& rel) const override {
    if (zip_.find(rel)) return Kind::File;
    return zip_.is_dir(rel) ? Kind::Dir : Kind::None;
  }

  std::vector<std::string> list(const std::string& rel) const override {
    return zip_.children(rel);
  }

  std::optional<std::string> text(const std::string& rel) const override {
    const Entry* e = zip_.find(rel);
    if (!e) return std::nullopt;
    return std::string(zip_.bytes(*e));
  }

 private:
  const detail::ZipReader& zip_;
};

// A write replaces `archive` only when a save wrote it: a zip holding a save as Python tensordict
// or this library writes one (memmap::detail::saved_tree_problem) and whose every entry is a file
// of that save (meta.json files and the entries they name, as the ownership walk of directory
// saves finds them). A directory, a symlink, any other file, or an archive someone added a file to
// would be lost with it.
void check_replaceable(const std::string& archive) {
  const std::string refusing = "refusing to replace '" + archive + "': ";
  std::optional<detail::ZipReader> zip;
  try {
    zip.emplace(archive);
  } catch (const FormatError& e) {
    throw FormatError(refusing + "it is not a memmap archive (" + e.what() + ")");
  }
  const ZipView view(*zip);
  const std::string why = memmap::detail::saved_tree_problem(
      view, [&zip](const std::string& rel) { return zip->where(rel); });
  if (!why.empty()) {
    throw FormatError(refusing +
                      "it is not a memmap archive this library may replace (one holding a save of "
                      "Python tensordict or of this library, of a format version it reads: " +
                      why + ")");
  }
  const std::vector<std::string> foreign = memmap::detail::foreign_entries(view);
  if (!foreign.empty()) {
    throw FormatError(refusing + "it holds the entry '" + foreign.front() +
                      "', which a save does not write; move the archive away or save elsewhere");
  }
}

Target check_target(const std::string& archive, bool existsok) {
  const fs::path p(archive);
  Target t{archive, p.has_parent_path() ? p.parent_path().string() : ".", p.filename().string()};
  if (t.base.empty() || t.base == "." || t.base == "..") {
    throw FormatError("archive path '" + archive + "' must name a file");
  }
  struct stat st {};
  if (::lstat(archive.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw FormatError("refusing to save through symlink '" + archive + "'");
    if (S_ISDIR(st.st_mode)) {
      throw FormatError("cannot write an archive at '" + archive +
                        "': it is an existing directory");
    }
    if (!existsok) {
      throw FormatError("'" + archive + "' already exists (existsok is false)");
    }
    check_replaceable(archive);
  }
  std::error_code ec;
  fs::create_directories(t.parent, ec);
  if (ec) throw FormatError("cannot create directory '" + t.parent + "': " + ec.message());
  return t;
}

// ---- packing -----------------------------------------------------------------------------------

struct FileItem {
  std::string arcname;
  std::string source;
};

// Python's _iter_memmap_dir: per level, sorted by name, meta.json first, the other files, then
// each child directory recursively. Symlinks are refused (the loaders never follow them either),
// and so is a tree deeper than a load reads, before anything is written. `level` is `dir`'s, the
// root's being 1.
void collect(const std::string& dir, const std::string& rel, std::vector<FileItem>& out,
             int level = 1) {
  if (level > limits::kMaxTreeDepth) {
    throw ValueError("cannot archive '" + dir + "': it nests directories " + std::to_string(level) +
                     " levels deep, and a load reads at most " +
                     std::to_string(limits::kMaxTreeDepth));
  }
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) throw FormatError("cannot list '" + dir + "': " + ec.message());
  std::sort(names.begin(), names.end());  // UTF-8 byte order is Python's code-point order
  std::vector<std::string> files;
  std::vector<std::string> dirs;
  for (const auto& name : names) {
    const std::string path = join(dir, name);
    const fs::file_status st = fs::symlink_status(path, ec);
    if (ec) throw FormatError("cannot stat '" + path + "': " + ec.message());
    if (fs::is_symlink(st)) throw FormatError("refusing to archive symlink '" + path + "'");
    if (fs::is_regular_file(st)) {
      if (name == "meta.json") {
        files.insert(files.begin(), name);
      } else {
        files.push_back(name);
      }
    } else if (fs::is_directory(st)) {
      dirs.push_back(name);
    }
  }
  for (const auto& name : files) {
    out.push_back({join(rel, name), join(dir, name)});
  }
  for (const auto& name : dirs) collect(join(dir, name), join(rel, name), out, level + 1);
}

// Writes the archive of `dir` into the temporary `tmp` beside `target`, then renames it into
// place.
void pack_into(const std::string& dir, const Target& target, const PackOptions& options,
               const memmap::detail::Temporary& tmp) {
  std::vector<FileItem> items;
  collect(dir, "", items);
  const std::string packed = join(tmp.work(), "packed.tdz");
  memmap::detail::Fd fd(::open(packed.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (!fd) memmap::detail::throw_errno("cannot create", packed);
  detail::ZipWriter zip(fd.get(), target.path, options.timestamp.value_or(detail::now()));
  for (const auto& item : items) {
    zip.add_file(item.arcname, item.source, detail::has_memmap_suffix(item.arcname));
  }
  zip.finish();
  if (options.durable && ::fsync(fd.get()) != 0) memmap::detail::throw_errno("cannot sync", packed);
  fd = memmap::detail::Fd();
  if (::rename(packed.c_str(), target.path.c_str()) != 0) {
    memmap::detail::throw_errno("cannot rename '" + packed + "' to", target.path);
  }
  if (options.durable) memmap::detail::sync_dir(target.parent);
}

// Packs the directory `stage(work)` returns (`work`: a fresh temporary beside the archive, removed
// on every path) into `archive`.
void publish_archive(const std::string& archive, const PackOptions& options,
                     const std::function<std::string(const std::string& work)>& stage) {
  const Target target = check_target(archive, true);
  memmap::detail::SaveLock lock(target.parent, target.base, memmap::detail::kArchiveTemp);
  const memmap::detail::Temporary tmp(lock, memmap::detail::kArchiveTemp, false);
  pack_into(stage(tmp.work()), target, options, tmp);
}

// ---- loading -----------------------------------------------------------------------------------

void release_view(void* ctx) { delete static_cast<std::shared_ptr<detail::Mapping>*>(ctx); }

// An archive as the Source of memmap::detail::TreeLoader: paths are entry names, and every leaf
// is a view into the archive's one mapping.
class ZipSource {
 public:
  explicit ZipSource(const detail::ZipReader& zip) : zip_(zip) {}

  std::string where(const std::string& path) const { return zip_.where(path); }
  std::string_view text(const std::string& path) const {
    const Entry* e = zip_.find(path);
    if (!e) throw FormatError(zip_.where(path) + " is missing");
    zip_.check_crc(*e);  // small, and read whole anyway
    return zip_.bytes(*e);
  }
  bool exists(const std::string& path) const { return zip_.find(path) || zip_.is_dir(path); }
  bool is_dir(const std::string& path) const { return zip_.is_dir(path); }
  std::string find(const std::string& dir, const std::string& key, std::string_view suffix,
                   bool directory) const {
    for (const std::string& name : memmap::detail::entry_names(key, suffix, directory)) {
      std::string path = join(dir, name);
      if (directory ? zip_.is_dir(path) : zip_.find(path) != nullptr) return path;
    }
    return {};
  }
  size_t byte_size(const std::string& file, at::IntArrayRef shape, at::ScalarType dtype) const {
    return memmap::detail::byte_size(shape, dtype, zip_.where(file));
  }
  // Checked as memmap/file.cpp checks a data file: as long as the data needs and less than twice
  // that (nothing at all for no data), bool bytes 0 or 1.
  at::Tensor leaf(const std::string& path, at::ScalarType dtype, at::IntArrayRef shape,
                  size_t nbytes) const {
    const Entry& e = *zip_.find(path);
    if (e.size < nbytes || (nbytes == 0 ? e.size > 0 : e.size / 2 >= nbytes)) {
      throw FormatError(zip_.where(path) + " holds " + std::to_string(e.size) + " bytes, " +
                        std::to_string(nbytes) + " expected for shape " + shape_str(shape) +
                        " of " + dtype_name(dtype));
    }
    const auto options = at::TensorOptions().dtype(dtype);
    if (nbytes == 0) return at::empty(shape, options);
    at::Tensor t;
    if (e.offset % c10::elementSize(dtype) != 0) {
      // An unaligned payload (an archive from another zip tool) cannot be viewed: copied.
      t = at::empty(shape, options);
      std::memcpy(t.data_ptr(), zip_.mapping()->addr + e.offset, nbytes);
    } else {
      // One storage per leaf, each holding the archive's mapping alive.
      auto* ctx = new std::shared_ptr<detail::Mapping>(zip_.mapping());
      c10::DataPtr ptr(zip_.mapping()->addr + e.offset, ctx, &release_view, at::Device(at::kCPU));
      c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<int64_t>(nbytes),
                           std::move(ptr), nullptr, false);
      t = at::empty({0}, options).set_(storage, 0, shape);
    }
    if (dtype == at::kBool && t.view(at::kByte).gt(1).any().item<bool>()) {
      throw FormatError(zip_.where(path) + " holds bytes other than 0 and 1 (bool data)");
    }
    return t;
  }
  static void loaded(TensorDict&, const std::string&) {}  // no saved_path: not a directory

 private:
  const detail::ZipReader& zip_;
};

memmap::Loaded load_tree(const ZipSource& src, const std::string& dir,
                         std::optional<at::Device> device, std::vector<std::string>* problems) {
  return memmap::detail::TreeLoader<ZipSource>(src, device, problems).load_dir(dir);
}

void require_memmap_archive(const detail::ZipReader& zip) {
  if (!zip.find("meta.json")) {
    throw FormatError(zip.where() + " is not a memmap archive (no top-level meta.json entry)");
  }
}

memmap::Loaded load_parts(const std::string& archive, const std::vector<std::string>& parts,
                          std::optional<at::Device> device) {
  const detail::ZipReader zip(archive);
  require_memmap_archive(zip);
  const ZipSource src(zip);
  std::string dir;
  for (const auto& part : parts) {
    std::string next = src.find(dir, part, "", true);
    if (next.empty()) {
      throw FormatError(zip.where(join(dir, memmap::encode_key(part))) +
                        ": no such sub-tensordict");
    }
    dir = std::move(next);
  }
  try {
    return load_tree(src, dir, device, nullptr);
  } catch (const Json::exception& e) {
    throw FormatError(zip.where() + ": unexpected meta.json content: " + e.what());
  }
}

}  // namespace

bool has_archive_suffix(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  return dot != std::string_view::npos && dot > 0 && name.substr(dot) == kSuffix;
}

bool is_memmap_archive(const std::string& path) {
  try {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    return detail::ZipReader(path).find("meta.json") != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

void pack_memmap(const std::string& dir, const std::string& archive, const PackOptions& options) {
  struct stat st {};
  const std::string meta = join(dir, "meta.json");
  if (::stat(meta.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw FormatError("'" + dir + "' does not look like a memmap directory (no meta.json)");
  }
  publish_archive(archive, options, [&dir](const std::string&) { return dir; });
}

void unpack_memmap(const std::string& archive, const std::string& dir, bool durable) {
  const detail::ZipReader zip(archive);
  require_memmap_archive(zip);
  memmap::detail::atomic_publish(dir, durable, [&zip](const std::string& tmp) {
    for (const std::string_view d : zip.directories()) {  // parents before children
      memmap::detail::make_dir(join(tmp, d));
    }
    for (const Entry& e : zip.entries()) {
      zip.check_crc(e);
      const std::string path = join(tmp, e.name);
      memmap::detail::Fd fd(
          ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
      if (!fd) memmap::detail::throw_errno("cannot create", path);
      const std::string_view bytes = zip.bytes(e);
      size_t done = 0;
      while (done < bytes.size()) {
        const ssize_t w = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) memmap::detail::throw_errno("cannot write", path);
        done += static_cast<size_t>(w);
      }
    }
  });
}

void write_with(const std::string& archive,
                const std::function<void(const std::string&)>& write_dir,
                const PackOptions& options) {
  publish_archive(archive, options, [&write_dir](const std::string& work) {
    const std::string dir = join(work, "td");
    write_dir(dir);
    return dir;
  });
}

TensorDict save(const TensorDict& td, const std::string& archive,
                const memmap::WriteOptions& options, const PackOptions& pack) {
  memmap::detail::check_format_version(options.memmap);  // before anything is touched
  // Bounded as the reader is before anything changes: a deeper tree would be packed, replace the
  // archive, and then fail to load.
  memmap::detail::check_savable(td, archive, options);
  check_target(archive, options.memmap.existsok);  // before any data is staged
  memmap::WriteOptions staged = options;
  staged.durable = false;  // the archive itself is synced
  // Leaves mapping other files are copied: the staging directory is a private temporary (Python
  // packs a memmapped TensorDict's own directory, which holds the same bytes).
  staged.memmap.copy_existing = true;
  write_with(
      archive, [&](const std::string& dir) { memmap::save_tensordict(td, dir, staged); }, pack);
  TensorDict out = load_memmap(archive);
  ::tensordict::detail::lock_tree(out);  // as memmap() returns
  return out;
}

memmap::Loaded load_any(const std::string& path, std::optional<at::Device> device) {
  // Anything but a directory is read as an archive, which refuses what is no regular file (a
  // FIFO would block a reader forever).
  struct stat st {};
  const bool archive = ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  return archive ? load(path, {}, device) : memmap::load(path, device);
}

memmap::Loaded load(const std::string& archive, const std::string& subpath,
                    std::optional<at::Device> device) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= subpath.size()) {
    const size_t end = std::min(subpath.find('/', start), subpath.size());
    if (end > start) parts.push_back(subpath.substr(start, end - start));
    start = end + 1;
  }
  return load_parts(archive, parts, device);
}

memmap::Loaded load_key(const std::string& archive, const NestedKey& key,
                        std::optional<at::Device> device) {
  return load_parts(archive, key.to_vector(), device);
}

TensorDict load_memmap(const std::string& archive, const std::string& subpath,
                       std::optional<at::Device> device) {
  memmap::Loaded loaded = load(archive, subpath, device);
  if (!loaded.value.is_tensordict()) {
    throw FormatError("archive '" + archive + "'" +
                      (subpath.empty() ? std::string() : " subpath '" + subpath + "'") +
                      " holds a " + loaded.value.kind_name() + " (" + loaded.type +
                      "), not a TensorDict");
  }
  return loaded.value.tensordict();
}

std::vector<Entry> list(const std::string& archive) { return detail::ZipReader(archive).entries(); }

std::vector<std::string> verify(const std::string& archive) {
  std::vector<std::string> problems;
  try {
    const detail::ZipReader zip(archive);
    require_memmap_archive(zip);
    for (const Entry& e : zip.entries()) {
      try {
        zip.check_crc(e);
      } catch (const FormatError& err) {
        problems.push_back(err.what());
      }
    }
    try {
      load_tree(ZipSource(zip), "", at::Device(at::kCPU), &problems);
    } catch (const Json::exception& e) {
      problems.push_back(zip.where() + ": unexpected meta.json content: " + e.what());
    }
  } catch (const Error& e) {
    problems.push_back(e.what());
  }
  return problems;
}

}  // namespace tensordict::archive
