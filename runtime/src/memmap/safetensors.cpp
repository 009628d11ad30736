// safetensors files as TensorDicts (tensordict/safetensors.h): the header is
// memmap/safetensors_format.cpp's; this unit maps the data as tensors, keeps a TensorDict's
// structure in the metadata, and writes files as the reference writer does.
#include "tensordict/safetensors.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "core/tensordict_impl.h"
#include "memmap/internal.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/safetensors_format.h"

namespace tensordict::safetensors {
namespace {

namespace fs = std::filesystem;
using memmap::detail::Fd;
using memmap::detail::throw_errno;

// The structure entry's version (docs/format.md, "safetensors files").
constexpr int64_t kStructureVersion = 1;

std::string file_of(const std::string& path) { return "safetensors file '" + path + "'"; }

// The format's dtypes resolved to this libtorch's scalar types (by enumerator name: the libtorch
// versions supported have different sets), Undefined where it has none.
const std::array<at::ScalarType, kDtypes.size()>& scalar_types() {
  static const auto table = [] {
    std::array<at::ScalarType, kDtypes.size()> out{};
    for (size_t i = 0; i < kDtypes.size(); ++i) {
      out[i] = at::ScalarType::Undefined;
      for (int t = 0; t < static_cast<int>(at::ScalarType::NumOptions); ++t) {
        const auto type = static_cast<at::ScalarType>(t);
        if (!kDtypes[i].scalar_type.empty() && kDtypes[i].scalar_type == c10::toString(type)) {
          out[i] = type;
        }
      }
    }
    return out;
  }();
  return table;
}

at::ScalarType scalar_type_of(const Dtype& dtype) { return scalar_types()[dtype_rank(dtype)]; }

const Dtype* format_dtype_of(at::ScalarType type) {
  for (size_t i = 0; i < kDtypes.size(); ++i) {
    if (scalar_types()[i] == type) return &kDtypes[i];
  }
  return nullptr;
}

// A file mapped copy-on-write, as one byte tensor (its storage keeps the mapping alive).
at::Tensor map_file(const std::string& path) {
  // Symlinks are followed: model caches (the Hugging Face Hub's) link to their blobs.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT) throw FormatError(file_of(path) + " does not exist");
    throw_errno("cannot open safetensors file", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat", path);
  if (!S_ISREG(st.st_mode)) throw FormatError(file_of(path) + " is not a regular file");
  const auto size = static_cast<int64_t>(st.st_size);
  if (static_cast<uint64_t>(size) < kLengthBytes) {
    parse_header(nullptr, static_cast<uint64_t>(size), path);  // throws: too short
  }
  return memmap::detail::map_fd(fd.get(), false, path, at::kByte, {size});
}

Header header_of(const at::Tensor& file, const std::string& path) {
  return parse_header(file.data_ptr<uint8_t>(), static_cast<uint64_t>(file.numel()), path);
}

// Why a leaf's bytes are unusable ("" when they are fine): bool bytes other than 0 and 1 are
// undefined behaviour to every reader.
std::string bad_bytes(const at::Tensor& t) {
  if (t.scalar_type() == at::kBool && t.numel() > 0 && t.view(at::kByte).gt(1).any().item<bool>()) {
    return "bool data holds bytes other than 0 and 1";
  }
  return {};
}

// ---- reading -----------------------------------------------------------------------------------

class Reader {
 public:
  Reader(const std::string& path, std::vector<std::string>* problems)
      : path_(path), file_(map_file(path)), header_(header_of(file_, path)), problems_(problems) {}

  Loaded load() {
    Loaded out;
    std::optional<std::string> structure;
    for (auto& [k, v] : header_.metadata) {
      if (k == kStructureKey) {
        structure = v;
      } else {
        out.metadata.emplace_back(k, v);
      }
    }
    for (const TensorEntry& e : header_.tensors) {
      leaves_.emplace(e.name, Leaf{leaf(e), false});
    }
    try {
      out.tensordict = structure ? by_structure(*structure) : by_names();
      if (!classes_.empty() && classes_.front().first.empty()) {
        out.class_info = classes_.front().second;
        classes_.erase(classes_.begin());
      }
      for (auto& [path, info] : classes_) out.nested_classes.emplace_back(NestedKey(path), info);
    } catch (const FormatError&) {
      throw;
    } catch (const Error& e) {  // a TensorDict refusing what the file describes
      throw FormatError(file_of(path_) + ": " + e.what());
    }
    return out;
  }

 private:
  struct Leaf {
    at::Tensor tensor;
    bool used;
  };

  at::Tensor leaf(const TensorEntry& e) {
    const std::string what = file_of(path_) + " tensor '" + e.name + "'";
    const at::ScalarType type = scalar_type_of(*e.dtype);
    if (type == at::ScalarType::Undefined) {
      throw FormatError(what + ": dtype " + std::string(e.dtype->name) +
                        " has no torch dtype in this libtorch (" + TORCH_VERSION + ")");
    }
    std::vector<int64_t> shape = e.shape;
    if (e.dtype->packing > 1) {  // the header counts the packed values
      if (shape.empty() || shape.back() % e.dtype->packing != 0) {
        throw FormatError(what + ": a " + std::string(e.dtype->name) + " tensor of shape " +
                          shape_str(shape) + " does not fill whole " +
                          std::string(e.dtype->torch_name) + " elements");
      }
      shape.back() /= e.dtype->packing;
    }
    const auto options = at::TensorOptions().dtype(type);
    const auto nbytes = static_cast<int64_t>(e.end - e.begin);
    if (nbytes == 0) return at::empty(shape, options);
    const auto offset = static_cast<int64_t>(header_.data_start + e.begin);
    const at::Tensor bytes = file_.narrow(0, offset, nbytes);
    at::Tensor t;
    if (offset % static_cast<int64_t>(c10::elementSize(type)) == 0) {
      t = bytes.view(type).view(shape);
    } else {  // a file from another writer, not aligned for the dtype: copied
      t = at::empty(shape, options);
      std::memcpy(t.data_ptr(), bytes.data_ptr(), static_cast<size_t>(nbytes));
    }
    const std::string why = bad_bytes(t);
    if (!why.empty()) {
      if (!problems_) throw FormatError(what + ": " + why);
      problems_->push_back(what + ": " + why);
    }
    return t;
  }

  // The tensor whose key is `prefix` (a leaf), or one below it (`below`: prefix is a TensorDict).
  std::string clash_with(const NestedKey& prefix, bool below) const {
    const std::string name = prefix.join(".");
    if (!below) return name;
    for (const TensorEntry& e : header_.tensors) {
      if (e.name.size() > name.size() && e.name.compare(0, name.size() + 1, name + ".") == 0) {
        return e.name;
      }
    }
    return name;
  }

  // No structure entry: keys are the names split on ".", batch sizes empty.
  TensorDict by_names() {
    TensorDict out;
    for (const TensorEntry& e : header_.tensors) {
      const NestedKey key = NestedKey::split(e.name);
      const std::vector<std::string> parts = key.to_vector();
      // A name that is also the prefix of another ("a" and "a.b") cannot be both a leaf and a
      // TensorDict.
      for (size_t n = 1; n <= parts.size(); ++n) {
        const NestedKey prefix(std::vector<std::string>(parts.begin(), parts.begin() + n));
        if (!out.contains(prefix)) break;
        if (n == parts.size() || !out.get_value(prefix).is_tensordict()) {
          throw FormatError(file_of(path_) + ": the tensors '" + e.name + "' and '" +
                            clash_with(prefix, n == parts.size()) +
                            "' cannot both be keys of a TensorDict");
        }
      }
      out.set(key, leaves_.at(e.name).tensor);
    }
    return out;
  }

  TensorDict by_structure(const std::string& text) {
    const std::string where = file_of(path_) + " structure entry";
    const Json s = parse_json(text, where);
    if (!s.is_object() || s.value("version", Json()) != kStructureVersion || !s.contains("tree")) {
      throw FormatError(where + ": not a structure of version " +
                        std::to_string(kStructureVersion));
    }
    try {
      TensorDict out = node(s.at("tree"), where, {});
      for (const auto& [name, leaf] : leaves_) {
        if (!leaf.used) throw FormatError(where + " does not place tensor '" + name + "'");
      }
      return out;
    } catch (const Json::exception& e) {  // an entry of the wrong JSON type, or missing
      throw FormatError(where + ": " + e.what());
    }
  }

  // A lazy stack's description: its parts, stacked lazily.
  TensorDict lazy_node(const Json& lazy, const std::string& where) {
    const Json& parts = lazy.at("parts");
    std::vector<TensorDict> tds;
    for (size_t i = 0; i < parts.size(); ++i)
      tds.push_back(node(parts[i], where + " part " + std::to_string(i), std::nullopt));
    return lazy_stack(tds, lazy.at("stack_dim").get<int64_t>());
  }

  // `path`: the keys down to `n`, empty inside a lazy stack's parts (their classes are not listed).
  TensorDict node(const Json& n, const std::string& where,
                  const std::optional<std::vector<std::string>>& path) {
    if (!n.is_object()) throw FormatError(where + ": a TensorDict is not described by an object");
    TensorDict td;
    if (const auto lazy = n.find("lazy_stack"); lazy != n.end()) {
      td = lazy_node(*lazy, where);
    } else {
      td = TensorDict({}, n.at("batch_size").get<std::vector<int64_t>>());
      for (const auto& [key, item] : n.at("entries").items()) {
        const std::string at_key = where + " key '" + key + "'";
        if (item.is_string()) {
          auto found = leaves_.find(item.get<std::string>());
          if (found == leaves_.end() || found->second.used) {
            throw FormatError(at_key + ": tensor '" + item.get<std::string>() + "' is " +
                              (found == leaves_.end() ? "not in the file" : "placed twice"));
          }
          found->second.used = true;
          td.set(key, found->second.tensor);
        } else if (item.contains("non_tensor")) {
          td.set_non_tensor(key, item.at("non_tensor"));
        } else if (item.contains("non_tensor_stack")) {
          const Json& stack = item.at("non_tensor_stack");
          td.set(key, NonTensorStack(stack.at("shape").get<std::vector<int64_t>>(),
                                     stack.at("items").get<std::vector<Json>>()));
        } else {
          std::optional<std::vector<std::string>> below = path;
          if (below) below->push_back(key);
          td.set(key, node(item, at_key, below));
        }
      }
      if (const auto names = n.find("names"); names != n.end()) {
        DimNames dims;
        for (const Json& name : *names) {
          dims.push_back(name.is_null() ? std::nullopt
                                        : std::optional<std::string>(name.get<std::string>()));
        }
        td.set_names(dims);
      }
    }
    if (const auto cls = n.find("class"); cls != n.end()) {
      memmap::ClassInfo info{cls->at("type").get<std::string>(),
                             cls->value("fields", Json::object()),
                             cls->value("schema_version", int64_t{0})};
      memmap::set_class_info(td, info);
      // Children come first, as they are made first: the root, found last, goes to the front.
      if (path) classes_.insert(path->empty() ? classes_.begin() : classes_.end(), {*path, info});
    }
    return td;
  }

  std::string path_;
  at::Tensor file_;
  Header header_;
  std::vector<std::string>* problems_;
  std::unordered_map<std::string, Leaf> leaves_;
  std::vector<std::pair<std::vector<std::string>, memmap::ClassInfo>> classes_;
};

Loaded read(const std::string& path, std::optional<at::Device> device,
            std::vector<std::string>* problems) {
  try {
    Loaded out = Reader(path, problems).load();
    if (device && !device->is_cpu()) out.tensordict = out.tensordict.to(*device);
    return out;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // libtorch's, refusing what the file describes
    throw FormatError(file_of(path) + ": " + e.what());
  }
}

// ---- writing -----------------------------------------------------------------------------------

// A tensor to write: its name in the file and the key it had.
struct Outgoing {
  TensorEntry entry;
  at::Tensor tensor;
  std::string key;
};

// Walks a TensorDict: the tensors under their joined names, and the structure entry, which is
// needed only when reading the names back would not give the same TensorDict.
class Collector {
 public:
  explicit Collector(const SaveOptions& options) : options_(options) {}

  // A lazy stack: its parts, each under its index.
  Json lazy_node(const TensorDict& td, const std::string& prefix,
                 const std::vector<std::string>& path) {
    default_ = false;
    Json parts = Json::array();
    const auto& tds = td.tensordicts();
    for (size_t i = 0; i < tds.size(); ++i) {
      std::vector<std::string> below = path;
      below.push_back(std::to_string(i));
      parts.push_back(node(tds[i], prefix + std::to_string(i) + ".", below));
    }
    return Json{{"stack_dim", td.stack_dim()}, {"parts", std::move(parts)}};
  }

  // `path`: the keys down to `td` (the name's parts, with lazy stack indices).
  Json node(const TensorDict& td, const std::string& prefix, std::vector<std::string> path) {
    Json out = Json::object();
    if (td.is_lazy_stack()) {
      out["lazy_stack"] = lazy_node(td, prefix, path);
    } else {
      out["batch_size"] = td.batch_size();
      if (!td.batch_size().empty()) default_ = false;
      const DimNames names = td.names();
      if (std::any_of(names.begin(), names.end(), [](const auto& n) { return n.has_value(); })) {
        default_ = false;
        Json list = Json::array();
        for (const auto& n : names) list.push_back(n ? Json(*n) : Json(nullptr));
        out["names"] = std::move(list);
      }
      Json entries = Json::object();
      for (const auto& [key, value] : td.items()) {
        const std::string& k = key.front();
        if (k.find('.') != std::string::npos) default_ = false;
        const std::string name = prefix + k;
        std::vector<std::string> below = path;
        below.push_back(k);
        switch (value.kind()) {
          case Value::Kind::Tensor:
            entries[k] = name;
            add(name, value.tensor(), NestedKey(below).repr());
            break;
          case Value::Kind::TensorDict: {
            const size_t before = outgoing_.size();
            entries[k] = node(value.tensordict(), name + ".", below);
            if (outgoing_.size() == before) default_ = false;  // no tensor would bring it back
            break;
          }
          case Value::Kind::NonTensorData:
            default_ = false;
            entries[k] = Json{{"non_tensor", value.non_tensor_data().data}};
            break;
          case Value::Kind::NonTensorStack: {
            default_ = false;
            const NonTensorStack& s = value.non_tensor_stack();
            entries[k] = Json{
                {"non_tensor_stack", Json{{"shape", s.shape()}, {"items", s.items().to_vector()}}}};
            break;
          }
        }
      }
      out["entries"] = std::move(entries);
    }
    if (auto info = class_of(td)) {
      default_ = false;
      out["class"] = Json{
          {"type", info->type}, {"fields", info->fields}, {"schema_version", info->schema_version}};
    }
    return out;
  }

  bool is_default() const { return default_; }
  std::vector<Outgoing>& outgoing() { return outgoing_; }

 private:
  std::optional<memmap::ClassInfo> class_of(const TensorDict& td) const {
    if (options_.class_of) {
      if (auto info = options_.class_of(td)) return info;
    }
    const auto& remembered = ::tensordict::detail::impl_of(td).class_info;
    return remembered ? std::optional<memmap::ClassInfo>(*remembered) : std::nullopt;
  }

  void add(const std::string& name, const at::Tensor& t, const std::string& key) {
    const std::string what = "to_safetensors: key " + key;
    if (t.is_nested()) throw ValueError(what + ": a nested tensor has no safetensors form");
    if (t.layout() != at::kStrided) {
      throw ValueError(what + ": a " + c10::str(t.layout()) +
                       " tensor has no safetensors form (only dense ones)");
    }
    const Dtype* dtype = format_dtype_of(t.scalar_type());
    if (!dtype) {
      throw ValueError(what + ": dtype " + dtype_name(t.scalar_type()) +
                       " has no safetensors dtype");
    }
    if (name == kMetadataKey) throw ValueError(what + ": the name is the format's own");
    std::vector<int64_t> shape = t.sizes().vec();
    if (dtype->packing > 1) {
      if (shape.empty()) throw ValueError(what + ": a 0-dim " + dtype_name(t.scalar_type()));
      shape.back() *= dtype->packing;
    }
    if (auto [it, fresh] = names_.emplace(name, key); !fresh) {
      throw ValueError("to_safetensors: keys " + it->second + " and " + key +
                       " join to one tensor name '" + name + "'");
    }
    outgoing_.push_back({TensorEntry{name, dtype, std::move(shape), 0, 0}, t, key});
  }

  const SaveOptions& options_;
  bool default_ = true;
  std::vector<Outgoing> outgoing_;
  std::unordered_map<std::string, std::string> names_;
};

// Where a save publishes: a file it may replace (a safetensors file; not a directory, a symlink
// or any other file, which would be lost).
struct Target {
  std::string parent;
  std::string base;
};

Target check_target(const std::string& path, bool existsok) {
  const fs::path p(path);
  Target t{p.has_parent_path() ? p.parent_path().string() : ".", p.filename().string()};
  if (t.base.empty() || t.base == "." || t.base == "..") {
    throw FormatError("to_safetensors: '" + path + "' must name a file");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      throw FormatError("to_safetensors: refusing to write through symlink '" + path + "'");
    }
    if (!S_ISREG(st.st_mode)) {
      throw FormatError("to_safetensors: '" + path + "' exists and is not a regular file");
    }
    if (!existsok) throw FormatError("'" + path + "' already exists (existsok is false)");
    try {
      header_of(map_file(path), path);
    } catch (const FormatError& e) {
      throw FormatError("to_safetensors: refusing to replace '" + path +
                        "': it is not a safetensors file (" + e.what() + ")");
    }
  }
  std::error_code ec;
  fs::create_directories(t.parent, ec);
  if (ec) throw FormatError("cannot create directory '" + t.parent + "': " + ec.message());
  return t;
}

}  // namespace

bool has_suffix(std::string_view path) {
  return path.size() > kSuffix.size() && path.substr(path.size() - kSuffix.size()) == kSuffix;
}

Loaded load(const std::string& path, std::optional<at::Device> device) {
  return read(path, device, nullptr);
}

Metadata read_metadata(const std::string& path) {
  Metadata out = header_of(map_file(path), path).metadata;
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const auto& entry) { return entry.first == kStructureKey; }),
            out.end());
  return out;
}

std::vector<std::string> verify(const std::string& path) {
  std::vector<std::string> problems;
  try {
    read(path, std::nullopt, &problems);
  } catch (const Error& e) {
    problems.emplace_back(e.what());
  }
  return problems;
}

void save(const TensorDict& td, const std::string& path, const SaveOptions& options) {
  Metadata metadata;
  for (const auto& [k, v] : options.metadata) {
    if (k == kStructureKey) {
      throw ValueError("to_safetensors: the metadata entry '" + std::string(kStructureKey) +
                       "' is the library's (it holds the TensorDict's structure)");
    }
  }
  Collector collect(options);
  const Json tree = collect.node(td, "", {});
  if (!collect.is_default()) {
    metadata.emplace_back(
        kStructureKey,
        dumps_python(Json{{"version", kStructureVersion}, {"tree", tree}}, JsonStyle{false, true}));
  }
  metadata.insert(metadata.end(), options.metadata.begin(), options.metadata.end());

  // The reference writer's layout: by dtype rank, highest first, then by name.
  std::vector<Outgoing>& out = collect.outgoing();
  std::stable_sort(out.begin(), out.end(), [](const Outgoing& a, const Outgoing& b) {
    const size_t ra = dtype_rank(*a.entry.dtype);
    const size_t rb = dtype_rank(*b.entry.dtype);
    return ra != rb ? ra > rb : a.entry.name < b.entry.name;
  });
  std::vector<TensorEntry> entries;
  uint64_t offset = 0;
  for (Outgoing& o : out) {
    o.entry.begin = offset;
    offset += static_cast<uint64_t>(o.tensor.numel()) * o.tensor.element_size();
    o.entry.end = offset;
    entries.push_back(o.entry);
  }
  const std::string header = format_header(entries, metadata);
  if (header.size() - kLengthBytes > kMaxHeaderBytes) {
    throw ValueError("to_safetensors: the header would take " +
                     std::to_string(header.size() - kLengthBytes) +
                     " bytes, past the format's bound of " + std::to_string(kMaxHeaderBytes));
  }

  const Target target = check_target(path, options.existsok);
  memmap::detail::SaveLock lock(target.parent, target.base, memmap::detail::kSafetensorsTemp);
  const memmap::detail::Temporary temporary(lock, memmap::detail::kSafetensorsTemp, false);
  const std::string tmp = memmap::detail::join(temporary.work(), target.base);
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666));
  if (!fd) throw_errno("to_safetensors: cannot create a temporary beside", path);
  memmap::detail::write_fd(fd.get(), header, tmp);
  for (const Outgoing& o : out) {
    const at::Tensor t = o.tensor.detach().to(at::kCPU).resolve_conj().resolve_neg().contiguous();
    memmap::detail::write_fd(
        fd.get(), std::string_view(static_cast<const char*>(t.data_ptr()), t.nbytes()), tmp);
  }
  if (options.durable && ::fsync(fd.get()) != 0) throw_errno("cannot sync", tmp);
  fd = Fd();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw_errno("to_safetensors: cannot rename '" + tmp + "' to", path);
  }
  if (options.durable) memmap::detail::sync_dir(target.parent);
}

}  // namespace tensordict::safetensors

namespace tensordict {

TensorDict TensorDict::from_safetensors(const std::string& path, std::optional<at::Device> device) {
  return safetensors::load(path, device).tensordict;
}

void TensorDict::to_safetensors(const std::string& path) const { safetensors::save(*this, path); }

}  // namespace tensordict
