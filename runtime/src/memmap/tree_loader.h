#pragma once
// The reader of Python tensordict's memmap format (spec §5), for directories (memmap/read.cpp) and
// `.tdz` archives (memmap/archive.cpp) alike: only the storage access differs (not installed).

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tensordict_impl.h"
#include "memmap/internal.h"
#include "tensordict/dtype.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/limits.h"

namespace tensordict::memmap::detail {

/// An optional field of a given JSON type: `fallback` when absent or null, FormatError naming
/// `where` when mistyped.
template <class T>
T field_or(const Json& obj, const char* name, T fallback, bool (Json::*is_type)() const noexcept,
           const std::string& where) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!((*it).*is_type)())
    throw FormatError(where + ": \"" + name + "\" has the wrong type: " + it->dump());
  return it->get<T>();
}

/// Loads one tree of the memmap format from `Source`, its storage. Everything is driven by
/// meta.json: each entry's data is looked up by its encoded key and viewed, never read. Unlike
/// Python, which skips missing files and entries it cannot parse, every problem is a FormatError
/// naming the path: a load either returns exactly what was saved or fails.
///
/// `Source` gives, for paths in its own spelling (file paths, or archive entry names):
///   std::string where(path)                how FormatErrors name `path`
///   text(path)                             a small file's bytes (std::string or std::string_view),
///                                          FormatError when missing
///   bool exists(path)                      anything at `path`, symlinks not followed
///   bool is_dir(path)                      a directory inside the tree (FormatError: a symlink)
///   std::string find(dir, key, suffix, directory)
///                                          the entry of `key` in `dir` (the names entry_names
///                                          lists, in order), "" when there is none
///   size_t byte_size(file, shape, dtype)   detail::byte_size, naming `file`
///   at::Tensor leaf(path, dtype, shape, nbytes)
///                                          the CPU tensor of the data file found at `path`,
///                                          checked to hold the `nbytes` of `shape`
///   void loaded(TensorDict&, dir)          a TensorDict or lazy stack was loaded from `dir`
template <class Source>
class TreeLoader {
 public:
  /// With `problems`, an entry that fails to load is recorded there and skipped (verify mode).
  TreeLoader(const Source& src, std::optional<at::Device> device,
             std::vector<std::string>* problems)
      : src_(src), device_(device), problems_(problems) {}

  Loaded load_dir(const std::string& dir) {
    const Depth depth(*this, dir);
    Json meta = read_meta(dir);
    const std::string where = src_.where(join(dir, "meta.json"));
    auto type_it = meta.find("_type");
    if (type_it == meta.end() || !type_it->is_string()) {
      throw FormatError(where + ": missing \"_type\" string");
    }
    const std::string type = type_it->get<std::string>();
    Loaded out{Value(TensorDict()), type, std::nullopt, {}};
    if (type == kSubTensorDictType && meta.contains("index")) {
      out.value = load_sub_tensordict(dir, meta, where);
    } else if (type == kTensorDictType || type == kSubTensorDictType) {
      out.value = load_td(dir, meta, where, out);
    } else if (type == kNonTensorDataType || is_metadata_type(type)) {
      format_version(meta, where);
      out.value = load_non_tensor_data(meta, where, is_metadata_type(type));
    } else if (type == kNonTensorStackType) {
      format_version(meta, where);
      out.value = load_non_tensor_stack(dir, meta, where);
    } else if (type == kLazyStackType) {
      out.value = load_lazy_stack(dir, meta, where);
    } else {
      load_tensorclass(dir, meta, where, out);
    }
    return out;
  }

 private:
  // Counts the levels of the walk, also when one throws (verify mode goes on after a problem).
  struct Depth {
    TreeLoader& loader;
    Depth(TreeLoader& l, const std::string& dir) : loader(l) {
      if (++loader.depth_ > limits::kMaxTreeDepth) {  // the walk recurses once per level
        --loader.depth_;
        throw FormatError(loader.src_.where(dir) + ": directories nested too deep");
      }
    }
    ~Depth() { --loader.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
  };

  // The meta.json's format version (format_version.h): FormatError when it is malformed or newer
  // than this library reads. A tensorclass's meta.json has none: its entries are the class's.
  static int64_t format_version(const Json& meta, const std::string& where) {
    const format::Version v = format::version_of(meta);
    if (!v.problem.empty()) throw FormatError(where + ": " + v.problem);
    return v.version;
  }

  // The dim names a meta.json of version 1 records for `batch_dims` dims (none in version 0).
  static std::optional<DimNames> dim_names(const Json& meta, int64_t version, size_t batch_dims,
                                           const std::string& where) {
    format::NamesEntry entry = format::names_of(meta, version, batch_dims);
    if (!entry.problem.empty()) throw FormatError(where + ": " + entry.problem);
    return std::move(entry.names);
  }

  static void check_class(const Json& meta, int64_t version, const std::string& type,
                          const std::string& where) {
    const std::string problem = format::class_problem(meta, version, type);
    if (!problem.empty()) throw FormatError(where + ": " + problem);
  }

  Json read_meta(const std::string& dir) {
    const std::string path = join(dir, "meta.json");
    Json meta = parse_json(src_.text(path), src_.where(path));
    if (!meta.is_object()) throw FormatError(src_.where(path) + " is not a JSON object");
    return meta;
  }

  // Python's td[index] saved as a view: the source under _source/, indexed as Python does on
  // load (a slice or an int views the source's leaves; a mask or positions copy them).
  TensorDict load_sub_tensordict(const std::string& dir, const Json& meta,
                                 const std::string& where) {
    format_version(meta, where);  // a version this reader knows, like every other level
    // Inside the tree like every child directory: is_dir refuses a symlink.
    const std::string source_dir = join(dir, "_source");
    if (!src_.is_dir(source_dir)) throw FormatError(where + ": its _source is not a directory");
    const Loaded source = load_dir(source_dir);
    if (!source.value.is_tensordict()) {
      throw FormatError(where + ": its _source holds a " + source.value.kind_name() +
                        ", not a TensorDict");
    }
    const Index index =
        index_from_json(meta["index"], source.value.tensordict().batch_size(), where);
    try {
      return source.value.tensordict().index(index);
    } catch (const Error& e) {
      throw FormatError(where + ": its index does not fit its _source: " + e.what());
    } catch (const c10::Error& e) {
      throw FormatError(where + ": its index does not fit its _source: " +
                        ::tensordict::detail::first_line(e.what()));
    }
  }

  TensorDict load_td(const std::string& dir, const Json& meta, const std::string& where,
                     Loaded& acc) {
    const int64_t version = format_version(meta, where);
    check_class(meta, version, acc.type, where);
    BatchSize batch = meta.contains("shape") ? parse_shape(meta["shape"], where) : BatchSize{};
    std::optional<DimNames> names = dim_names(meta, version, batch.size(), where);
    TensorDict td =
        ::tensordict::detail::make_tensordict(std::move(batch), td_device(meta), std::move(names));
    for (const auto& [key, entry] : meta.items()) {
      if (format::is_format_entry(key, version)) continue;
      try {
        load_entry(td, dir, key, entry, where, acc);
      } catch (const FormatError& e) {
        if (!problems_) throw;
        problems_->push_back(e.what());
      }
    }
    src_.loaded(td, dir);
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
    } catch (const Error& e) {  // dim names that disagree with the parent's
      throw FormatError(where + ": entry '" + key + "' does not fit: " + e.what());
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
    const auto shape = parse_shape(entry["shape"], what);
    if (field_or(entry, "is_nested", false, &Json::is_boolean, what)) {
      throw FormatError(what + " is a nested (jagged) tensor, which is not supported");
    }
    const auto options = at::TensorOptions().dtype(*dtype);
    // Sized first, so that a shape past int64 bytes is a FormatError on every device.
    const std::string file = join(dir, encode_key(key) + ".memmap");
    const size_t nbytes = src_.byte_size(file, shape, *dtype);
    if (device_ && device_->is_meta()) return at::empty(shape, options.device(at::kMeta));
    const std::string path = src_.find(dir, key, ".memmap", false);
    // Python writes no file for a leaf without data; one that holds bytes holds another shape.
    if (nbytes == 0 && path.empty()) return at::empty(shape, options);
    if (path.empty()) {
      throw FormatError("missing data file " + src_.where(file) + " for key '" + key + "'");
    }
    at::Tensor t = src_.leaf(path, *dtype, shape, nbytes);
    return device_ && !device_->is_cpu() ? t.to(*device_) : t;
  }

  Value load_child(const std::string& dir, const std::string& key, Loaded& acc) {
    const std::string path = src_.find(dir, key, "", true);
    if (path.empty() || !src_.is_dir(path)) {
      throw FormatError("missing directory " + src_.where(join(dir, encode_key(key))) +
                        " for key '" + key + "'");
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
  static Value load_non_tensor_data(const Json& meta, const std::string& where, bool metadata) {
    auto it = meta.find("data");
    if (it == meta.end()) {
      throw FormatError(where + ": NonTensorData without \"data\" (pickled data is not supported)");
    }
    return NonTensorData{*it, metadata};
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
    return NonTensorStack::from_list(*it, stack_ndim(*it));
  }

  // Numbered element directories 0/, 1/, ... until the first gap (spec §4).
  std::vector<Loaded> load_elements(const std::string& dir) {
    std::vector<Loaded> out;
    for (size_t i = 0;; ++i) {
      const std::string path = join(dir, std::to_string(i));
      if (!src_.is_dir(path)) {
        // A file in an element's place would silently shorten the stack.
        if (src_.exists(path)) {
          throw FormatError(src_.where(path) + " is not a directory (an element of the stack)");
        }
        return out;
      }
      out.push_back(load_dir(path));
    }
  }

  Value load_lazy_stack(const std::string& dir, const Json& meta, const std::string& where) {
    const int64_t version = format_version(meta, where);
    check_class(meta, version, kLazyStackType, where);
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
      name_stack(out, dim_names(meta, version, static_cast<size_t>(out.batch_dims()), where),
                 where);
      src_.loaded(out, dir);
      return out;
    } catch (const FormatError&) {
      throw;
    } catch (const Error& e) {
      throw FormatError(where + ": invalid lazy stack: " + e.what());
    }
  }

  // A lazy stack's names (its meta.json's, version 1): the stack dim's, and those of the other
  // dims, which its elements name too (where both name a dim, the names must agree).
  static void name_stack(TensorDict& stack, std::optional<DimNames> names,
                         const std::string& where) {
    if (!names) return;
    DimNames merged = stack.names();
    for (size_t d = 0; d < merged.size(); ++d) {
      const auto& name = (*names)[d];
      if (!name || merged[d] == name) continue;
      if (merged[d] && d != static_cast<size_t>(stack.stack_dim())) {
        throw FormatError(where + ": \"" + kNamesKey + "\" names dim " + std::to_string(d) + " '" +
                          *name + "', its elements '" + *merged[d] + "'");
      }
      merged[d] = name;
    }
    stack.set_names(std::move(merged));
  }

  void load_tensorclass(const std::string& dir, Json meta, const std::string& where, Loaded& out) {
    const std::string inner = join(dir, "_tensordict");
    if (!src_.is_dir(inner)) {
      throw FormatError(where + ": unknown _type '" + out.type +
                        "' (not a TensorDict, and no '_tensordict/' directory of a tensorclass)");
    }
    // Fields Python could not put in JSON are pickled; loading without them would be wrong.
    const std::string pickle = join(dir, "other.pickle");
    if (src_.exists(pickle)) {
      throw FormatError(src_.where(pickle) + ": pickled tensorclass fields are not supported");
    }
    Loaded child = load_dir(inner);
    meta.erase("_type");
    out.class_info = ClassInfo{out.type, std::move(meta)};
    const std::string version_file = join(dir, kSchemaVersionFile);
    if (src_.exists(version_file)) {
      out.class_info->schema_version =
          parse_schema_version(std::string(src_.text(version_file)), src_.where(version_file));
    }
    // Remembered on the TensorDict so that saving it through the plain API writes the class back.
    if (child.value.is_tensordict()) {
      ::tensordict::detail::impl_of(child.value.tensordict()).class_info =
          std::make_shared<const ClassInfo>(*out.class_info);
    }
    out.value = std::move(child.value);
    out.nested_classes = std::move(child.nested_classes);
  }

  const Source& src_;
  std::optional<at::Device> device_;
  std::vector<std::string>* problems_;
  int depth_ = 0;
};

}  // namespace tensordict::memmap::detail
