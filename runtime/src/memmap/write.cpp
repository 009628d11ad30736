// Writer of TensorDict and tensorclass directories (spec §1.4, §2, §3). The tree is built inside
// the temporary of an atomic save: directories and meta.json contents first, then the leaf files
// (in parallel with num_threads > 1), then the meta.json files. Before any of it, the same walk
// runs without writing, checking the tree against the readers' bounds (tensordict/limits.h): what
// a save writes always loads.
#include <ATen/ATen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/tensordict_impl.h"
#include "lazy/internal.h"
#include "memmap/internal.h"
#include "tensordict/dtype.h"
#include "tensordict/format_version.h"
#include "tensordict/json.h"
#include "tensordict/limits.h"

namespace tensordict::memmap {
namespace {

// One leaf file to write, and where its mapped tensor goes in the result.
struct LeafJob {
  at::Tensor src;
  std::string path;        // inside the temporary tree
  std::string final_path;  // once published
  tensordict::detail::TensorDictImpl* out;
  size_t slot;
};

Json tensor_entry(const at::Tensor& t) {
  Json e = Json::object();
  e["device"] = t.device().str();
  e["shape"] = t.sizes().vec();
  e["dtype"] = "torch." + dtype_name(t.scalar_type());
  e["is_nested"] = false;
  return e;
}

Json type_entry(const std::string& name) { return Json{{"type", name}}; }

// Version 1's entries of a saved tensordict's meta.json (class_contract.h): the version, the class
// as its parent's {"type": ...} entry names it, and the dim names when a dim has one.
void add_version_entries(Json& meta, int version, const char* cls, const DimNames& names) {
  if (version < 1) return;
  meta[kFormatVersionKey] = version;
  meta[kClassKey] = cls;
  Json list = format::names_entry(names);
  if (!list.is_null()) meta[kNamesKey] = std::move(list);
}

// The dim names of a lazy stack: none when its elements name a dim differently (each element's
// meta.json then records its own).
DimNames stack_names(const TensorDict& stack) {
  try {
    return stack.names();
  } catch (const Error&) {
    return {};
  }
}

// A leaf that already maps exactly its target file is kept (hard-linked into the new tree) instead
// of copied: re-saving a memmapped TensorDict in place costs O(keys).
// Only MAP_SHARED mappings of the file now at that path qualify: a copy-on-write mapping may hold
// values the file does not, and a path re-saved by someone else names another file.
bool maps_whole_file(const at::Tensor& t, const std::string& path) {
  return t.is_contiguous() && t.storage_offset() == 0 && t.nbytes() == t.storage().nbytes() &&
         detail::maps_file_at(t, path);
}

// Nesting of arrays and objects in `j` as the JSON reader counts it (`j` itself the first level),
// found without recursion (the value may nest deeper than the stack allows); stops past `limit`.
int json_depth(const Json& j, int limit) {
  std::vector<std::pair<const Json*, int>> todo{{&j, 1}};
  int deepest = 0;
  while (!todo.empty() && deepest <= limit) {
    const auto [node, depth] = todo.back();
    todo.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth);
    for (const Json& child : *node) todo.emplace_back(&child, depth + 1);
  }
  return deepest;
}

class TreeWriter {
 public:
  /// `check_only`: walks the tree as the save would, checking it against the readers' bounds, and
  /// writes nothing (the result is then no saved tree).
  TreeWriter(const WriteOptions& options, std::string tmp_root, std::string final_root,
             bool check_only = false)
      : opt_(options),
        tmp_(std::move(tmp_root)),
        final_(std::move(final_root)),
        check_only_(check_only) {}

  // `as_class`: the class `td` is the inner TensorDict of (when written by write_class).
  TensorDict write_td(const TensorDict& td, const std::string& rel,
                      const ClassInfo* as_class = nullptr) {
    if (td.is_lazy_stack()) return write_lazy(td, rel, as_class);
    enter_dir(rel);
    TensorDict out = tensordict::detail::make_tensordict(td.batch_size(), at::Device(at::kCPU),
                                                         ::tensordict::detail::impl_of(td).names);
    auto& out_impl = ::tensordict::detail::impl_of(out);
    Json meta = Json::object();
    const auto& src = ::tensordict::detail::impl_of(td);
    for (size_t i = 0; i < src.keys.size(); ++i) {
      const std::string& key = src.keys[i];
      check_key(key, rel);
      meta[key] = write_entry(td, key, src.values[i], join_rel(rel, encode_key(key)), out_impl);
    }
    meta["shape"] = td.batch_size();
    meta["device"] = "cpu";
    meta["_type"] = kTensorDictType;
    add_version_entries(meta, version(), "TensorDict", td.names());
    add_meta(rel, std::move(meta), false);
    out_impl.locked = true;
    out_impl.is_memmap = true;
    out_impl.saved_path = at_final(rel);
    return out;
  }

  // Spec §4: meta.json {"_type", "stack_dim"} and one directory per element, each written by its
  // own rules (a loaded tensorclass element keeps its class). The elements of the inner lazy stack
  // of a class `as_class` that are instances of that class are its rows: plain TensorDicts on
  // disk, as Python's tensorclass over a lazy stack holds them.
  TensorDict write_lazy(const TensorDict& td, const std::string& rel, const ClassInfo* as_class) {
    enter_dir(rel);
    Json meta = Json::object();
    meta["_type"] = kLazyStackType;
    meta["stack_dim"] = td.stack_dim();
    add_version_entries(meta, version(), "LazyStackedTensorDict", stack_names(td));
    add_meta(rel, std::move(meta), false);
    std::vector<TensorDict> written;
    const auto& tds = td.tensordicts();
    for (size_t k = 0; k < tds.size(); ++k) {
      const std::string element = join_rel(rel, std::to_string(k));
      const auto info = class_of(tds[k]);
      const bool row = info && as_class && info->type == as_class->type;
      written.push_back(row ? write_td(tds[k], element, as_class) : write_any(tds[k], element));
    }
    TensorDict out = lazy_stack(written, td.stack_dim());
    ::tensordict::detail::impl_of(out).locked = true;
    ::tensordict::detail::impl_of(out).is_memmap = true;
    ::tensordict::detail::impl_of(out).saved_path = at_final(rel);
    return out;
  }

  // A TensorDict as the tensorclass it holds (given by class_of, or remembered from a load), else
  // as itself.
  TensorDict write_any(const TensorDict& td, const std::string& rel) {
    auto info = class_of(td);
    return info ? write_class(td, *info, rel) : write_td(td, rel);
  }

  std::optional<ClassInfo> class_of(const TensorDict& td) const {
    if (opt_.class_of) {
      if (auto info = opt_.class_of(td)) return info;
    }
    const auto& remembered = ::tensordict::detail::impl_of(td).class_info;
    return remembered ? std::optional<ClassInfo>(*remembered) : std::nullopt;
  }

  TensorDict write_class(const TensorDict& inner, const ClassInfo& info, const std::string& rel) {
    // A save over this one recognises it by its "<class '...'>" (memmap/owned.cpp).
    if (!detail::is_python_class(info.type)) {
      throw ValueError("cannot save '" + at_final(rel) + "' as a tensorclass of _type '" +
                       info.type + "': a _type is a class as Python writes one (\"<class " +
                       "'module.Name'>\")");
    }
    enter_dir(rel);
    Json meta = Json::object();
    meta["_type"] = info.type;
    for (const auto& [k, v] : info.fields.items()) {
      // A field remembered as None that the TensorDict holds now is saved with the entries.
      if (k != "_type" && !(v.is_null() && inner.contains(k))) meta[k] = v;
    }
    add_meta(rel, std::move(meta), false);
    if (info.schema_version > 0 && !check_only_) {
      detail::write_text(detail::join(at_tmp(rel), kSchemaVersionFile),
                         dumps_python(Json{{"version", info.schema_version}}));
    }
    TensorDict out = write_td(inner, join_rel(rel, "_tensordict"), &info);
    ::tensordict::detail::impl_of(out).class_info = std::make_shared<const ClassInfo>(info);
    return out;
  }

  void finish() {
    if (check_only_) return;
    run_jobs();
    for (const auto& m : metas_) {
      write_meta(m.dir, m.meta, m.compact);
      detail::save_step("meta");
    }
  }

 private:
  struct PendingMeta {
    std::string dir;
    Json meta;
    bool compact;
  };

  static std::string join_rel(const std::string& rel, const std::string& name) {
    return rel.empty() ? name : rel + "/" + name;
  }
  std::string at_tmp(const std::string& rel) const {
    return rel.empty() ? tmp_ : detail::join(tmp_, rel);
  }
  std::string at_final(const std::string& rel) const {
    return rel.empty() ? final_ : detail::join(final_, rel);
  }
  int version() const { return opt_.memmap.format_version; }

  // The directory of a TensorDict, lazy stack, element, tensorclass or non-tensor value at `rel`
  // (the root when empty): checked against the loader's depth and the bound on names, then made.
  void enter_dir(const std::string& rel) {
    if (!rel.empty()) check_name(rel, rel.substr(rel.rfind('/') + 1));
    const auto level = 1 + (rel.empty() ? 0 : 1 + std::count(rel.begin(), rel.end(), '/'));
    if (level > limits::kMaxTreeDepth) {
      throw ValueError("cannot save '" + at_final(rel) + "': it would nest directories " +
                       std::to_string(level) + " levels deep, and a load reads at most " +
                       std::to_string(limits::kMaxTreeDepth));
    }
    if (!rel.empty() && !check_only_) detail::make_dir(at_tmp(rel));
  }

  void check_name(const std::string& rel, const std::string& name) const {
    if (name.size() > limits::kMaxNameBytes) {
      throw ValueError("cannot save '" + at_final(rel) + "': the name '" + name + "' is " +
                       std::to_string(name.size()) + " bytes, and a name in a tree has at most " +
                       std::to_string(limits::kMaxNameBytes));
    }
  }

  // A meta.json to write in the directory `rel`, once the leaves are written: checked against the
  // JSON reader's bound on nesting (a NonTensorData's value, a tensorclass's fields).
  void add_meta(const std::string& rel, Json meta, bool compact) {
    if (json_depth(meta, limits::kMaxJsonDepth) > limits::kMaxJsonDepth) {
      throw ValueError("cannot save '" + detail::join(at_final(rel), "meta.json") +
                       "': its JSON would nest deeper than " +
                       std::to_string(limits::kMaxJsonDepth) + " levels, which no load reads");
    }
    if (!check_only_) metas_.push_back({at_tmp(rel), std::move(meta), compact});
  }

  // Python silently loses these keys (the root fields overwrite them); refuse instead.
  void check_key(const std::string& key, const std::string& rel) const {
    if (format::is_format_entry(key, version())) {
      throw KeyError("cannot save key '" + key + "' under '" + at_final(rel) +
                     "': the name is reserved by meta.json");
    }
  }

  Json write_entry(const TensorDict& parent, const std::string& key, const Value& value,
                   const std::string& rel, tensordict::detail::TensorDictImpl& out) {
    switch (value.kind()) {
      case Value::Kind::Tensor:
        return write_tensor(key, value.tensor(), rel, out);
      case Value::Kind::TensorDict: {
        const TensorDict& child = value.tensordict();
        if (auto info = class_of(child)) {
          out.append(key, write_class(child, *info, rel));
          return type_entry(class_short_name(info->type));
        }
        out.append(key, write_td(child, rel));
        return type_entry(child.is_lazy_stack() ? "LazyStackedTensorDict" : "TensorDict");
      }
      case Value::Kind::NonTensorData: {
        enter_dir(rel);
        Json meta = Json::object();
        const bool metadata = value.non_tensor_data().metadata;
        meta["_type"] = metadata ? kMetaDataType : kNonTensorDataType;
        meta["data"] = value.non_tensor_data().data;
        meta["_is_non_tensor"] = true;
        meta["_metadata"] = nullptr;
        add_meta(rel, std::move(meta), false);
        out.append(key, value);
        return type_entry(metadata ? "MetaData" : "NonTensorData");
      }
      case Value::Kind::NonTensorStack: {
        enter_dir(rel);
        const auto device = parent.device();
        Json meta = Json::object();
        meta["_type"] = kNonTensorStackType;
        meta["stack_dim"] = 0;
        meta["device"] = device ? Json(device->str()) : Json(nullptr);
        meta["data"] = value.non_tensor_stack().tolist();
        add_meta(rel, std::move(meta), true);
        out.append(key, value);
        return type_entry("NonTensorStack");
      }
    }
    return {};
  }

  Json write_tensor(const std::string& key, const at::Tensor& t, const std::string& rel,
                    tensordict::detail::TensorDictImpl& out) {
    if (t.is_nested() || t.layout() != at::kStrided) {
      throw TypeError("cannot save key '" + key + "': only dense strided tensors are supported");
    }
    check_name(rel + ".memmap", rel.substr(rel.rfind('/') + 1) + ".memmap");
    if (check_only_) {
      out.append(key, t);
      return tensor_entry(t);
    }
    const std::string final_path = at_final(rel) + ".memmap";
    const std::string path = at_tmp(rel) + ".memmap";
    if (!opt_.memmap.existsok && ::access(final_path.c_str(), F_OK) == 0) {
      throw FormatError("'" + final_path + "' already exists (existsok is false)");
    }
    const bool own_file = !opt_.like && maps_whole_file(t, final_path);
    if (own_file && ::link(final_path.c_str(), path.c_str()) == 0) {
      out.append(key, t);
      return tensor_entry(t);
    }
    // Python's rule: a leaf mapping another file is only copied on request.
    const auto other_file = detail::shared_file_of(t);
    if (!own_file && !opt_.like && !opt_.memmap.copy_existing && other_file &&
        maps_whole_file(t, *other_file)) {
      throw Error("cannot save key '" + key + "': it already maps '" + *other_file +
                  "'; pass copy_existing=true to copy it");
    }
    out.append(key, at::Tensor());
    jobs_.push_back({t, path, final_path, &out, out.values.size() - 1});
    return tensor_entry(t);
  }

  void run_job(const LeafJob& job) {
    const at::Tensor& t = job.src;
    at::Tensor mapped = detail::write_leaf(job.path, opt_.like ? at::Tensor() : t, t.sizes(),
                                           t.scalar_type(), true, job.final_path);
    job.out->values[job.slot] = Value(std::move(mapped));
    detail::save_step("leaf");
  }

  void run_jobs() {
    ::tensordict::detail::parallel_for(jobs_.size(), opt_.memmap.num_threads,
                                       [this](size_t i) { run_job(jobs_[i]); });
  }

  const WriteOptions& opt_;
  std::string tmp_;
  std::string final_;
  bool check_only_;
  std::vector<LeafJob> jobs_;
  std::vector<PendingMeta> metas_;
};

template <class WriteFn>
TensorDict publish(const std::string& prefix, const WriteOptions& options, WriteFn&& write) {
  detail::check_format_version(options.memmap);
  const std::string final_root = detail::normalize_prefix(prefix);
  TreeWriter check(options, final_root, final_root, true);
  write(check);  // the readers' bounds, before anything on disk changes
  TensorDict out;
  detail::atomic_publish(final_root, options.durable, [&](const std::string& tmp) {
    TreeWriter writer(options, tmp, final_root);
    out = write(writer);
    writer.finish();
  });
  ::tensordict::detail::lock_tree(out);  // each level is locked; this records their parents
  return out;
}

}  // namespace

TensorDict save_tensordict(const TensorDict& td, const std::string& prefix,
                           const WriteOptions& options) {
  return publish(prefix, options, [&](TreeWriter& w) { return w.write_any(td, ""); });
}

TensorDict save_tensorclass(const TensorDict& inner, const ClassInfo& info,
                            const std::string& prefix, const WriteOptions& options) {
  return publish(prefix, options, [&](TreeWriter& w) { return w.write_class(inner, info, ""); });
}

void detail::check_savable(const TensorDict& td, const std::string& prefix,
                           const WriteOptions& options) {
  TreeWriter(options, prefix, prefix, true).write_any(td, "");
}

void detail::check_format_version(const MemmapOptions& options) {
  if (options.format_version != 0 && options.format_version != kFormatVersion) {
    throw ValueError("cannot write format version " + std::to_string(options.format_version) +
                     ": this library writes versions 0 and " + std::to_string(kFormatVersion));
  }
}

void set_class_info(const TensorDict& td, ClassInfo info) {
  ::tensordict::detail::impl_of(td).class_info = std::make_shared<const ClassInfo>(std::move(info));
}

}  // namespace tensordict::memmap
