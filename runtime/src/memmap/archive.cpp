// `.tdz` archives over the zip layer (memmap/archive_zip.cpp): packing a memmap directory (Python's
// entry order), unpacking, saving a TensorDict through a staging directory, and loading an archive
// with every leaf a view into one mapping of the file. The loader mirrors memmap/read.cpp's
// Reader over archive entries instead of files.
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
#include "tensordict/dtype.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"

namespace tensordict::archive {
namespace fs = std::filesystem;
namespace {

std::string join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

struct Target {
  std::string path;
  std::string parent;
  std::string base;
};

// An archive's entries as a tree, for the ownership walk of memmap/owned.cpp.
class ZipView : public memmap::detail::TreeView {
 public:
  explicit ZipView(const detail::ZipReader& zip) : zip_(zip) {
    auto add = [this](const std::string& path) {
      const size_t slash = path.rfind('/');
      children_[slash == std::string::npos ? "" : path.substr(0, slash)].insert(
          slash == std::string::npos ? path : path.substr(slash + 1));
    };
    for (const Entry& e : zip.entries()) add(e.name);
    for (const std::string& d : zip.dirs()) {
      if (!d.empty()) add(d);
    }
  }

  Kind kind(const std::string& rel) const override {
    if (zip_.find(rel)) return Kind::File;
    return zip_.is_dir(rel) ? Kind::Dir : Kind::None;
  }

  std::vector<std::string> list(const std::string& rel) const override {
    auto it = children_.find(rel);
    return it == children_.end() ? std::vector<std::string>()
                                 : std::vector<std::string>(it->second.begin(), it->second.end());
  }

  std::optional<std::string> text(const std::string& rel) const override {
    const Entry* e = zip_.find(rel);
    if (!e) return std::nullopt;
    return std::string(zip_.bytes(*e));
  }

 private:
  const detail::ZipReader& zip_;
  std::map<std::string, std::set<std::string>> children_;
};

// A write replaces `archive` only when a save wrote it: a zip whose top-level meta.json is a saved
// TensorDict's (it has a "_type") and whose every entry is a file of that save (meta.json files
// and the entries they name, as the ownership walk of directory saves finds them). A directory, a
// symlink, any other file, or an archive someone added a file to would be lost with it.
void check_replaceable(const std::string& archive) {
  const std::string refusing = "refusing to replace '" + archive + "': ";
  std::optional<detail::ZipReader> zip;
  try {
    zip.emplace(archive);
  } catch (const FormatError& e) {
    throw FormatError(refusing + "it is not a memmap archive (" + e.what() + ")");
  }
  const Entry* meta = zip->find("meta.json");
  bool saved = false;
  if (meta) {
    try {
      const Json json = parse_json(zip->bytes(*meta), zip->where("meta.json"));
      saved = json.is_object() && json.contains("_type") && json["_type"].is_string();
    } catch (const FormatError&) {
    }
  }
  if (!saved) {
    throw FormatError(refusing +
                      "it is not a memmap archive (a zip file whose top-level meta.json has a "
                      "\"_type\")");
  }
  const std::vector<std::string> foreign = memmap::detail::foreign_entries(ZipView(*zip));
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
// each child directory recursively. Symlinks are refused (the loaders never follow them either).
void collect(const std::string& dir, const std::string& rel, std::vector<FileItem>& out) {
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
    const std::string path = memmap::detail::join(dir, name);
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
    out.push_back({join(rel, name), memmap::detail::join(dir, name)});
  }
  for (const auto& name : dirs) collect(memmap::detail::join(dir, name), join(rel, name), out);
}

// Writes the archive of `dir` into the temporary `tmp` beside `target`, then renames it into
// place.
void pack_into(const std::string& dir, const Target& target, const PackOptions& options,
               const memmap::detail::Temporary& tmp) {
  std::vector<FileItem> items;
  collect(dir, "", items);
  const std::string packed = memmap::detail::join(tmp.work(), "packed.tdz");
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

class Loader {
 public:
  Loader(const detail::ZipReader& zip, std::optional<at::Device> device,
         std::vector<std::string>* problems)
      : zip_(zip), device_(device), problems_(problems) {}

  memmap::Loaded load_dir(const std::string& dir) {
    if (++depth_ > 256) throw FormatError(zip_.where(dir) + ": directories nested too deep");
    Json meta = read_meta(dir);
    const std::string where = zip_.where(join(dir, "meta.json"));
    auto type_it = meta.find("_type");
    if (type_it == meta.end() || !type_it->is_string()) {
      throw FormatError(where + ": missing \"_type\" string");
    }
    const std::string type = type_it->get<std::string>();
    memmap::Loaded out{Value(TensorDict()), type, std::nullopt, {}};
    if (type == memmap::kTensorDictType || type == memmap::kSubTensorDictType) {
      out.value = load_td(dir, meta, where, out);
    } else if (type == memmap::kNonTensorDataType || type == memmap::kMetaDataType) {
      auto it = meta.find("data");
      if (it == meta.end()) {
        throw FormatError(where +
                          ": NonTensorData without \"data\" (pickled data is not supported)");
      }
      out.value = NonTensorData{*it};
    } else if (type == memmap::kNonTensorStackType) {
      out.value = load_non_tensor_stack(dir, meta, where);
    } else if (type == memmap::kLazyStackType) {
      out.value = load_lazy_stack(dir, meta, where);
    } else {
      load_tensorclass(dir, meta, where, out);
    }
    --depth_;
    return out;
  }

 private:
  Json read_meta(const std::string& dir) {
    const std::string name = join(dir, "meta.json");
    const Entry* e = zip_.find(name);
    if (!e) throw FormatError(zip_.where(name) + " is missing");
    zip_.check_crc(*e);  // small, and read whole anyway
    Json meta = parse_json(zip_.bytes(*e), zip_.where(name));
    if (!meta.is_object()) throw FormatError(zip_.where(name) + " is not a JSON object");
    return meta;
  }

  // The entry (file or directory) for `key` in `dir`: its encoded name, else the raw key for
  // trees written without key encoding. Empty when neither exists.
  std::string find_child(const std::string& dir, const std::string& key, std::string_view suffix,
                         bool directory) const {
    auto exists = [&](const std::string& name) {
      return directory ? zip_.is_dir(name) : zip_.find(name) != nullptr;
    };
    const std::string encoded = join(dir, memmap::encode_key(key) + std::string(suffix));
    if (exists(encoded)) return encoded;
    if (!key.empty() && key != "." && key != ".." && key.find('/') == std::string::npos) {
      const std::string raw = join(dir, key + std::string(suffix));
      if (exists(raw)) return raw;
    }
    return {};
  }

  TensorDict load_td(const std::string& dir, const Json& meta, const std::string& where,
                     memmap::Loaded& acc) {
    BatchSize batch =
        meta.contains("shape") ? memmap::detail::parse_shape(meta["shape"], where) : BatchSize{};
    std::optional<at::Device> device = device_;
    auto dev = meta.find("device");
    if (!device && dev != meta.end() && dev->is_string() && *dev == "cpu") device = at::kCPU;
    TensorDict td = ::tensordict::detail::make_tensordict(std::move(batch), device);
    for (const auto& [key, entry] : meta.items()) {
      if (key == "shape" || key == "device" || key == "_type") continue;
      try {
        if (!entry.is_object()) throw FormatError(where + ": entry '" + key + "' is not an object");
        Value value = entry.contains("type") ? load_child(dir, key, acc)
                                             : Value(load_leaf(dir, key, entry, where));
        try {
          td.set(key, std::move(value));
        } catch (const ShapeError& e) {
          throw FormatError(where + ": entry '" + key +
                            "' does not fit the batch size: " + e.what());
        }
      } catch (const FormatError& e) {
        if (!problems_) throw;
        problems_->push_back(e.what());
      }
    }
    return td;
  }

  at::Tensor load_leaf(const std::string& dir, const std::string& key, const Json& entry,
                       const std::string& where) {
    const std::string what = where + ": entry '" + key + "'";
    auto dtype_it = entry.find("dtype");
    if (dtype_it == entry.end() || !dtype_it->is_string())
      throw FormatError(what + " has no \"dtype\"");
    const auto dtype = dtype_from_name(dtype_it->get<std::string>());
    if (!dtype)
      throw FormatError(what + " has unknown dtype '" + dtype_it->get<std::string>() + "'");
    if (!entry.contains("shape")) throw FormatError(what + " has no \"shape\"");
    const auto shape = memmap::detail::parse_shape(entry["shape"], what);
    auto nested = entry.find("is_nested");
    if (nested != entry.end() && nested->is_boolean() && nested->get<bool>()) {
      throw FormatError(what + " is a nested (jagged) tensor, which is not supported");
    }
    const auto options = at::TensorOptions().dtype(*dtype);
    const std::string file = join(dir, memmap::encode_key(key) + ".memmap");
    const size_t nbytes = memmap::detail::byte_size(shape, *dtype, zip_.where(file));
    if (device_ && device_->is_meta()) return at::empty(shape, options.device(at::kMeta));
    if (nbytes == 0) return at::empty(shape, options);  // Python writes no file for these
    const std::string name = find_child(dir, key, ".memmap", false);
    if (name.empty()) throw FormatError(zip_.where(file) + " is missing (key '" + key + "')");
    const Entry& e = *zip_.find(name);
    if (e.size < nbytes || e.size / 2 >= nbytes) {
      throw FormatError(zip_.where(name) + " holds " + std::to_string(e.size) + " bytes, " +
                        std::to_string(nbytes) + " expected for shape " + entry["shape"].dump() +
                        " of " + dtype_it->get<std::string>());
    }
    at::Tensor t;
    if (e.offset % c10::elementSize(*dtype) != 0) {
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
    return device_ && !device_->is_cpu() ? t.to(*device_) : t;
  }

  Value load_child(const std::string& dir, const std::string& key, memmap::Loaded& acc) {
    const std::string path = find_child(dir, key, "", true);
    if (path.empty()) {
      throw FormatError(zip_.where(join(dir, memmap::encode_key(key))) +
                        ": missing directory for key '" + key + "'");
    }
    memmap::Loaded child = load_dir(path);
    if (child.class_info) acc.nested_classes.emplace_back(NestedKey(key), *child.class_info);
    for (auto& [sub, info] : child.nested_classes) {
      std::vector<std::string> parts{key};
      for (const auto& part : sub) parts.push_back(part);
      acc.nested_classes.emplace_back(NestedKey(parts), std::move(info));
    }
    return std::move(child.value);
  }

  Value load_non_tensor_stack(const std::string& dir, const Json& meta, const std::string& where) {
    auto it = meta.find("data");
    if (it == meta.end()) {
      std::vector<Json> items;
      for (auto& element : load_elements(dir)) {
        if (!element.value.is_non_tensor_data()) {
          throw FormatError(where + ": NonTensorStack element is a " +
                            std::string(element.value.kind_name()));
        }
        items.push_back(element.value.non_tensor_data().data);
      }
      const auto n = static_cast<int64_t>(items.size());
      return NonTensorStack({n}, std::move(items));
    }
    if (it->is_string()) {
      throw FormatError(where + ": NonTensorStack data in '" + it->get<std::string>() +
                        "' (a Python pickle) is not supported");
    }
    if (!it->is_array()) throw FormatError(where + ": NonTensorStack \"data\" is not a list");
    return NonTensorStack::from_list(*it, memmap::detail::stack_ndim(*it));
  }

  // Numbered element directories 0/, 1/, ... until the first gap.
  std::vector<memmap::Loaded> load_elements(const std::string& dir) {
    std::vector<memmap::Loaded> out;
    for (size_t i = 0;; ++i) {
      const std::string path = join(dir, std::to_string(i));
      if (!zip_.is_dir(path)) return out;
      out.push_back(load_dir(path));
    }
  }

  Value load_lazy_stack(const std::string& dir, const Json& meta, const std::string& where) {
    int64_t dim = 0;
    auto it = meta.find("stack_dim");
    if (it != meta.end() && !it->is_null()) {
      if (!it->is_number_integer()) throw FormatError(where + ": \"stack_dim\" is not an integer");
      dim = it->get<int64_t>();
    }
    std::vector<TensorDict> tds;
    for (auto& element : load_elements(dir)) {
      if (!element.value.is_tensordict()) {
        throw FormatError(where + ": lazy stack element is a " +
                          std::string(element.value.kind_name()));
      }
      tds.push_back(element.value.tensordict());
    }
    if (tds.empty()) throw FormatError(where + ": lazy stack without elements (no '0/' directory)");
    try {
      return lazy_stack(tds, dim);
    } catch (const Error& e) {
      throw FormatError(where + ": invalid lazy stack: " + e.what());
    }
  }

  void load_tensorclass(const std::string& dir, Json meta, const std::string& where,
                        memmap::Loaded& out) {
    const std::string inner = join(dir, "_tensordict");
    if (!zip_.is_dir(inner)) {
      throw FormatError(where + ": unknown _type '" + out.type +
                        "' (not a TensorDict, and no '_tensordict/' directory of a tensorclass)");
    }
    if (zip_.find(join(dir, "other.pickle"))) {
      throw FormatError(zip_.where(join(dir, "other.pickle")) +
                        ": pickled tensorclass fields are not supported");
    }
    memmap::Loaded child = load_dir(inner);
    meta.erase("_type");
    out.class_info = memmap::ClassInfo{out.type, std::move(meta)};
    const std::string version_file = join(dir, kSchemaVersionFile);
    if (const Entry* e = zip_.find(version_file)) {
      zip_.check_crc(*e);
      out.class_info->schema_version =
          memmap::parse_schema_version(std::string(zip_.bytes(*e)), zip_.where(version_file));
    }
    if (child.value.is_tensordict()) {
      ::tensordict::detail::impl_of(child.value.tensordict()).class_info =
          std::make_shared<const memmap::ClassInfo>(*out.class_info);
    }
    out.value = std::move(child.value);
    out.nested_classes = std::move(child.nested_classes);
  }

  const detail::ZipReader& zip_;
  std::optional<at::Device> device_;
  std::vector<std::string>* problems_;
  int depth_ = 0;
};

void require_memmap_archive(const detail::ZipReader& zip) {
  if (!zip.find("meta.json")) {
    throw FormatError(zip.where() + " is not a memmap archive (no top-level meta.json entry)");
  }
}

memmap::Loaded load_parts(const std::string& archive, const std::vector<std::string>& parts,
                          std::optional<at::Device> device) {
  const detail::ZipReader zip(archive);
  require_memmap_archive(zip);
  std::string dir;
  for (const auto& part : parts) {
    const std::string encoded = join(dir, memmap::encode_key(part));
    dir = zip.is_dir(encoded) ? encoded : join(dir, part);
    if (!zip.is_dir(dir)) throw FormatError(zip.where(encoded) + ": no such sub-tensordict");
  }
  try {
    return Loader(zip, device, nullptr).load_dir(dir);
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
  const std::string meta = memmap::detail::join(dir, "meta.json");
  if (::stat(meta.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw FormatError("'" + dir + "' does not look like a memmap directory (no meta.json)");
  }
  publish_archive(archive, options, [&dir](const std::string&) { return dir; });
}

void unpack_memmap(const std::string& archive, const std::string& dir, bool durable) {
  const detail::ZipReader zip(archive);
  require_memmap_archive(zip);
  memmap::detail::atomic_publish(dir, durable, [&zip](const std::string& tmp) {
    std::vector<std::string> dirs(zip.dirs().begin(), zip.dirs().end());
    std::sort(dirs.begin(), dirs.end());  // parents before children
    for (const auto& d : dirs) {
      if (!d.empty()) memmap::detail::make_dir(memmap::detail::join(tmp, d));
    }
    for (const Entry& e : zip.entries()) {
      zip.check_crc(e);
      const std::string path = memmap::detail::join(tmp, e.name);
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
    const std::string dir = memmap::detail::join(work, "td");
    write_dir(dir);
    return dir;
  });
}

TensorDict save(const TensorDict& td, const std::string& archive,
                const memmap::WriteOptions& options, const PackOptions& pack) {
  check_target(archive, options.memmap.existsok);  // before any data is staged
  memmap::WriteOptions staged = options;
  staged.durable = false;  // the archive itself is synced
  // Leaves mapping other files are copied: the staging directory is a private temporary (Python
  // packs a memmapped TensorDict's own directory, which holds the same bytes).
  staged.memmap.copy_existing = true;
  write_with(
      archive, [&](const std::string& dir) { memmap::save_tensordict(td, dir, staged); }, pack);
  TensorDict out = load_memmap(archive);
  ::tensordict::detail::set_locked_recursive(::tensordict::detail::impl_of(out),
                                             true);  // as memmap() returns
  return out;
}

memmap::Loaded load_any(const std::string& path, std::optional<at::Device> device) {
  struct stat st {};
  const bool is_file = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return is_file ? load(path, {}, device) : memmap::load(path, device);
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
      Loader(zip, at::Device(at::kCPU), &problems).load_dir("");
    } catch (const Json::exception& e) {
      problems.push_back(zip.where() + ": unexpected meta.json content: " + e.what());
    }
  } catch (const Error& e) {
    problems.push_back(e.what());
  }
  return problems;
}

}  // namespace tensordict::archive
