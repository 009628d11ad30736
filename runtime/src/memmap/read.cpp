// Reader of memmap directories (spec §5). Everything is driven by meta.json: each entry's file is
// looked up by its encoded key and mapped, never read. Unlike Python, which skips missing files
// and entries it cannot parse, every problem is a FormatError naming the path: a load either
// returns exactly what was saved or fails.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/tensordict_impl.h"
#include "memmap/internal.h"
#include "tensordict/dtype.h"
#include "tensordict/lazy_stack.h"

namespace tensordict::memmap {
namespace {

// An optional field of a given JSON type: `fallback` when absent, FormatError when mistyped.
template <class T>
T field_or(const Json& obj, const char* name, T fallback, bool (Json::*is_type)() const noexcept,
           const std::string& where) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!((*it).*is_type)())
    throw FormatError(where + ": \"" + name + "\" has the wrong type: " + it->dump());
  return it->get<T>();
}

// Child directories (nested TensorDicts, `_tensordict/`, stack elements) must lie inside the
// tree: a symlink is refused, as for data files.
bool is_dir(const std::string& path) { return detail::is_child_dir(path); }

class Reader {
 public:
  /// With `problems`, an entry that fails to load is recorded there and skipped (verify mode).
  Reader(std::optional<at::Device> device, std::vector<std::string>* problems)
      : device_(device), problems_(problems) {}

  Loaded load_dir(const std::string& dir) {
    Json meta = read_meta(dir);
    const std::string where = "'" + detail::join(dir, "meta.json") + "'";
    auto type_it = meta.find("_type");
    if (type_it == meta.end() || !type_it->is_string()) {
      throw FormatError(where + ": missing \"_type\" string");
    }
    const std::string type = type_it->get<std::string>();
    Loaded out{Value(TensorDict()), type, std::nullopt, {}};
    if (type == kTensorDictType || type == kSubTensorDictType) {
      out.value = load_td(dir, meta, where, out);
    } else if (type == kNonTensorDataType || type == kMetaDataType) {
      out.value = load_non_tensor_data(meta, where);
    } else if (type == kNonTensorStackType) {
      out.value = load_non_tensor_stack(dir, meta, where);
    } else if (type == kLazyStackType) {
      out.value = load_lazy_stack(dir, meta, where, out);
    } else {
      load_tensorclass(dir, meta, where, out);
    }
    return out;
  }

 private:
  TensorDict load_td(const std::string& dir, const Json& meta, const std::string& where,
                     Loaded& acc) {
    BatchSize batch =
        meta.contains("shape") ? detail::parse_shape(meta["shape"], where) : BatchSize{};
    TensorDict td = tensordict::detail::make_tensordict(std::move(batch), td_device(meta));
    for (const auto& [key, entry] : meta.items()) {
      if (key == "shape" || key == "device" || key == "_type") continue;
      try {
        load_entry(td, dir, key, entry, where, acc);
      } catch (const FormatError& e) {
        if (!problems_) throw;
        problems_->push_back(e.what());
      }
    }
    ::tensordict::detail::impl_of(td).saved_path = dir;
    return td;
  }

  void load_entry(TensorDict& td, const std::string& dir, const std::string& key, const Json& entry,
                  const std::string& where, Loaded& acc) {
    if (!entry.is_object()) throw FormatError(where + ": entry '" + key + "' is not an object");
    Value value = entry.contains("type") ? load_child(dir, key, acc)
                                         : Value(load_leaf(dir, key, entry, where));
    try {
      td.set(key, std::move(value));
    } catch (const ShapeError& e) {
      throw FormatError(where + ": entry '" + key + "' does not fit the batch size: " + e.what());
    }
  }

  // The TensorDict's device: the load argument, else meta.json's (only "cpu" is kept: the leaves
  // are mapped on the CPU whatever device the writer had).
  std::optional<at::Device> td_device(const Json& meta) const {
    if (device_) return device_;
    auto it = meta.find("device");
    if (it != meta.end() && it->is_string() && *it == "cpu") return at::Device(at::kCPU);
    return std::nullopt;
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
    const auto shape = detail::parse_shape(entry["shape"], what);
    if (field_or(entry, "is_nested", false, &Json::is_boolean, what)) {
      throw FormatError(what + " is a nested (jagged) tensor, which is not supported");
    }
    const auto options = at::TensorOptions().dtype(*dtype);
    // Sized first, so that a shape past int64 bytes is a FormatError on every device.
    const size_t nbytes =
        detail::byte_size(shape, *dtype, detail::join(dir, encode_key(key) + ".memmap"));
    if (device_ && device_->is_meta()) return at::empty(shape, options.device(at::kMeta));
    const std::string path = detail::find_entry(dir, key, ".memmap", false);
    // Python writes no file for a leaf without data; one that holds bytes holds another shape.
    if (nbytes == 0 && path.empty()) return at::empty(shape, options);
    if (path.empty()) {
      throw FormatError("missing data file '" + detail::join(dir, encode_key(key) + ".memmap") +
                        "' for key '" + key + "'");
    }
    at::Tensor t = detail::load_data_file(path, *dtype, shape);
    return device_ && !device_->is_cpu() ? t.to(*device_) : t;
  }

  Value load_child(const std::string& dir, const std::string& key, Loaded& acc) {
    const std::string path = detail::find_entry(dir, key, "", true);
    if (path.empty() || !is_dir(path)) {
      throw FormatError("missing directory '" + detail::join(dir, encode_key(key)) + "' for key '" +
                        key + "'");
    }
    Loaded child = load_dir(path);
    if (child.class_info) acc.nested_classes.emplace_back(NestedKey(key), *child.class_info);
    for (auto& [sub, info] : child.nested_classes) {
      std::vector<std::string> parts{key};
      for (const auto& part : sub) parts.push_back(part);
      acc.nested_classes.emplace_back(NestedKey(parts), std::move(info));
    }
    return std::move(child.value);
  }

  // "data" is the value as Python stored it: a list stays a list (Python 0.14 loads the
  // tensordict test artifact's "data": ["a string!"] as ["a string!"]).
  static Value load_non_tensor_data(const Json& meta, const std::string& where) {
    auto it = meta.find("data");
    if (it == meta.end()) {
      throw FormatError(where + ": NonTensorData without \"data\" (pickled data is not supported)");
    }
    return NonTensorData{*it};
  }

  Value load_non_tensor_stack(const std::string& dir, const Json& meta, const std::string& where) {
    auto it = meta.find("data");
    if (it == meta.end()) return stack_of_elements(dir, where);
    if (it->is_string()) {
      throw FormatError(where + ": NonTensorStack data in '" + it->get<std::string>() +
                        "' (a Python pickle) is not supported");
    }
    if (!it->is_array()) throw FormatError(where + ": NonTensorStack \"data\" is not a list");
    return NonTensorStack::from_list(*it, detail::stack_ndim(*it));
  }

  // Numbered element directories 0/, 1/, ... until the first gap (spec §4).
  std::vector<Loaded> load_elements(const std::string& dir) {
    std::vector<Loaded> out;
    for (size_t i = 0;; ++i) {
      const std::string path = detail::join(dir, std::to_string(i));
      if (!is_dir(path)) {
        std::error_code ec;  // a file in an element's place would silently shorten the stack
        if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
          throw FormatError("'" + path + "' is not a directory (an element of the stack)");
        }
        return out;
      }
      out.push_back(load_dir(path));
    }
  }

  Value stack_of_elements(const std::string& dir, const std::string& where) {
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

  Value load_lazy_stack(const std::string& dir, const Json& meta, const std::string& where,
                        Loaded& acc) {
    const auto dim = field_or(meta, "stack_dim", int64_t{0}, &Json::is_number_integer, where);
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
      TensorDict out = lazy_stack(tds, dim);  // stays lazy: ragged elements load too
      ::tensordict::detail::impl_of(out).saved_path = dir;
      return out;
    } catch (const Error& e) {
      throw FormatError(where + ": invalid lazy stack: " + e.what());
    }
  }

  void load_tensorclass(const std::string& dir, Json meta, const std::string& where, Loaded& out) {
    const std::string inner = detail::join(dir, "_tensordict");
    if (!is_dir(inner)) {
      throw FormatError(where + ": unknown _type '" + out.type +
                        "' (not a TensorDict, and no '_tensordict/' directory of a tensorclass)");
    }
    // Fields Python could not put in JSON are pickled; loading without them would be wrong.
    if (::access(detail::join(dir, "other.pickle").c_str(), F_OK) == 0) {
      throw FormatError("'" + detail::join(dir, "other.pickle") +
                        "': pickled tensorclass fields are not supported");
    }
    Loaded child = load_dir(inner);
    meta.erase("_type");
    out.class_info = ClassInfo{out.type, std::move(meta)};
    const std::string version_file = detail::join(dir, kSchemaVersionFile);
    if (::access(version_file.c_str(), F_OK) == 0) {
      out.class_info->schema_version =
          parse_schema_version(detail::read_text(version_file), "'" + version_file + "'");
    }
    // Remembered on the TensorDict so that saving it through the plain API writes the class back.
    if (child.value.is_tensordict()) {
      ::tensordict::detail::impl_of(child.value.tensordict()).class_info =
          std::make_shared<const ClassInfo>(*out.class_info);
    }
    out.value = std::move(child.value);
    out.nested_classes = std::move(child.nested_classes);
  }

  std::optional<at::Device> device_;
  std::vector<std::string>* problems_;
};

// A save swaps its new tree in and then deletes the previous one, so a load that overlaps a save
// may read meta.json of one tree and data of the other, or a half-deleted tree (a shorter stack, a
// "missing" file). The root is held open for the whole load (its inode cannot be reused) and the
// load counts only if `dir` still names it at the end: a tree that left `dir` never comes back,
// so everything read came from that one tree. Otherwise the load is retried, a bounded number of
// times.
constexpr int kLoadAttempts = 100;

bool still_at(const detail::Fd& root, const std::string& dir) {
  struct stat held {};
  struct stat now {};
  return ::fstat(root.get(), &held) == 0 && ::stat(dir.c_str(), &now) == 0 &&
         held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

template <class Load>
auto load_whole(const std::string& dir, Load&& load_once) -> decltype(load_once()) {
  for (int attempt = 1;; ++attempt) {
    const detail::Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
    if (!root) return load_once();  // not a directory (or none): the load reports it
    try {
      auto loaded = load_once();
      if (still_at(root, dir)) return loaded;
    } catch (...) {
      if (still_at(root, dir)) throw;
    }
    if (attempt == kLoadAttempts) {
      throw FormatError("'" + dir + "' was replaced by another save during each of " +
                        std::to_string(kLoadAttempts) + " attempts to load it");
    }
  }
}

}  // namespace

Loaded load(const std::string& dir, std::optional<at::Device> device) {
  const std::string root = detail::normalize_prefix(dir);
  return load_whole(root, [&] {
    try {
      return Reader(device, nullptr).load_dir(root);
    } catch (const Json::exception& e) {  // a JSON value of an unexpected type somewhere
      throw FormatError("'" + dir + "': unexpected meta.json content: " + e.what());
    }
  });
}

std::vector<std::string> verify(const std::string& dir) {
  std::string root;
  try {
    root = detail::normalize_prefix(dir);
  } catch (const Error& e) {
    return {e.what()};
  }
  return load_whole(root, [&] {
    std::vector<std::string> problems;
    try {
      Reader(at::Device(at::kCPU), &problems).load_dir(root);
    } catch (const Error& e) {
      problems.push_back(e.what());
    } catch (const Json::exception& e) {
      problems.push_back("'" + dir + "': unexpected meta.json content: " + e.what());
    }
    return problems;
  });
}

}  // namespace tensordict::memmap

namespace tensordict::memmap::detail {

std::vector<int64_t> parse_shape(const Json& j, const std::string& where) {
  if (!j.is_array()) throw FormatError(where + ": \"shape\" is not a list of integers");
  std::vector<int64_t> shape;
  for (const auto& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      throw FormatError(where + ": \"shape\" " + d.dump() + " is not a non-negative integer");
    }
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

int64_t stack_ndim(const Json& data) {
  int64_t ndim = 1;
  std::vector<const Json*> level;
  for (const auto& item : data) level.push_back(&item);
  while (!level.empty()) {
    const size_t n = level.front()->is_array() ? level.front()->size() : 0;
    std::vector<const Json*> next;
    for (const Json* item : level) {
      if (!item->is_array() || item->size() != n) return ndim;
      for (const auto& child : *item) next.push_back(&child);
    }
    ++ndim;
    level = std::move(next);
  }
  return ndim;
}

}  // namespace tensordict::memmap::detail
