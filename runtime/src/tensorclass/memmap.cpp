// The tensorclass directory layout (format spec §3) on top of tensordict::memmap: a meta.json with
// `_type` first and the None fields, the entries under `_tensordict/`, nested tensorclass fields
// as tensorclass directories of their own.
#include <ATen/ATen.h>

#include "core/lazy_state.h"
#include "core/tensordict_impl.h"
#include "tensorclass/evolve.h"
#include "tensordict/archive.h"
#include "tensordict/class_load_check.h"
#include "tensordict/memmap.h"
#include "tensordict/tensorclass.h"

namespace tensordict::detail::tc {
namespace {

// Presence only: reading a field of a ragged lazy stack would stack it (and fail).
memmap::ClassInfo class_info(const TensorDict& td, const ClassSpec& spec) {
  memmap::ClassInfo info{spec.python_type, Json::object(), spec.version};
  for (const FieldSpec& field : spec.fields) {
    if (!td.contains(field.name)) info.fields[field.name] = nullptr;
  }
  return info;
}

// The nested class fields below `td`, so the writer can recognise them by identity.
void nested_classes(const TensorDict& td, const ClassSpec& spec,
                    std::vector<std::pair<TensorDict, memmap::ClassInfo>>& out) {
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& field = spec.fields[i];
    if (field.kind != FieldKind::Class) continue;
    const Value* v = find(td, spec, i);
    if (!v || !v->is_tensordict()) continue;
    out.emplace_back(v->tensordict(), class_info(v->tensordict(), field.nested()));
    nested_classes(v->tensordict(), field.nested(), out);
  }
}

// Level by level, so handles to nested levels of `dst` see the mapped leaves too. `src` has the
// same keys in the same order (it was written from `dst`).
void adopt(detail::TensorDictImpl& dst, const detail::TensorDictImpl& src) {
  if (dst.lazy && src.lazy && dst.lazy->tds.size() == src.lazy->tds.size()) {  // element-wise
    for (size_t k = 0; k < src.lazy->tds.size(); ++k)
      adopt(detail::impl_of(dst.lazy->tds[k]), detail::impl_of(src.lazy->tds[k]));
  }
  for (size_t i = 0; i < src.keys.size(); ++i) {
    const int64_t slot = dst.find(src.keys[i]);
    if (slot < 0) continue;
    Value& existing = dst.values[static_cast<size_t>(slot)];
    if (existing.is_tensordict() && src.values[i].is_tensordict()) {
      adopt(detail::impl_of(existing.tensordict()), detail::impl_of(src.values[i].tensordict()));
    } else {
      existing = src.values[i];
    }
  }
  dst.locked = src.locked;
  dst.is_memmap = src.is_memmap;
  dst.saved_path = src.saved_path;
}

}  // namespace

void memmap_in_place(TensorDict& td, const ClassSpec& spec, const std::string& prefix,
                     const MemmapOptions& options) {
  TensorDict written = memmap(td, spec, prefix, options, false);
  adopt(detail::impl_of(td), detail::impl_of(written));
}

TensorDict memmap(const TensorDict& td, const ClassSpec& spec, const std::string& prefix,
                  const MemmapOptions& options, bool like) {
  std::vector<std::pair<TensorDict, memmap::ClassInfo>> nested;
  nested_classes(td, spec, nested);
  memmap::WriteOptions write;
  write.memmap = options;
  write.like = like;
  write.class_of = [&nested](const TensorDict& child) -> std::optional<memmap::ClassInfo> {
    for (const auto& [candidate, info] : nested) {
      if (candidate.is_same(child)) return info;
    }
    return std::nullopt;
  };
  if (!archive::has_archive_suffix(prefix)) {
    return memmap::save_tensorclass(td, class_info(td, spec), prefix, write);
  }
  // A ".tdz" prefix: the tensorclass directory, packed into a single-file archive (as Python).
  archive::write_with(prefix, [&](const std::string& staging) {
    memmap::save_tensorclass(td, class_info(td, spec), staging, write);
  });
  TensorDict loaded = archive::load(prefix).value.tensordict();
  loaded.lock_();
  return loaded;
}

namespace {

// load_memmap's work; with `problems`, what it refuses is collected there instead of thrown, and
// the TensorDict returned as far as they let it be made (nullopt when `prefix` holds no
// tensorclass).
std::optional<TensorDict> load_class(const ClassSpec& spec, const std::string& prefix,
                                     std::optional<at::Device> device,
                                     std::vector<ClassLoadProblem>* problems) {
  memmap::Loaded loaded = archive::load_any(prefix, device);
  // `field`: the field concerned ("" for the directory as a whole).
  auto refuse = [&](const std::string& dir, const std::string& field, const std::string& message) {
    if (!problems) throw FormatError("'" + dir + "' " + message);
    problems->push_back({dir, message, field});
  };
  if (!loaded.class_info) {
    refuse(prefix, "",
           "holds " + loaded.type + ", not a tensorclass (expected " + spec.python_type + ")");
    return std::nullopt;
  }
  auto check_type = [&](const std::string& found, const ClassSpec& expected,
                        const std::string& where, const std::string& field) {
    if (found != expected.python_type) {
      refuse(where, field,
             "holds " + found + ", not " + expected.python_type + " (" + expected.name + ")");
    }
  };
  check_type(loaded.class_info->type, spec, prefix, "");
  if (!loaded.value.is_tensordict()) {
    if (!problems) throw FormatError("'" + prefix + "/_tensordict' does not hold a TensorDict");
    problems->push_back({prefix + "/_tensordict", "does not hold a TensorDict", ""});
    return std::nullopt;
  }
  TensorDict td = loaded.value.tensordict();
  for (const auto& [key, info] : loaded.nested_classes) {
    if (key.size() != 1) continue;
    int64_t i = spec.field_index(key.front());
    if (i >= 0 && spec.fields[i].kind == FieldKind::Class) {
      check_type(info.type, spec.fields[i].nested(), prefix + "/_tensordict/" + key.front(), "");
    }
  }
  const bool locked = td.is_locked();
  if (locked) td.unlock_();
  const size_t before = problems ? problems->size() : 0;
  adopt_loaded_fields(td, loaded.class_info->fields, spec,
                      {prefix, loaded.class_info->schema_version}, problems);
  if (!problems) {
    check_fields(td, spec);
  } else if (problems->size() == before) {  // its KeyError is check_known's, reported already
    try {
      check_fields(td, spec);
    } catch (const Error& e) {
      problems->push_back({prefix, e.what(), ""});
    }
  }
  if (locked || spec.options.frozen) td.lock_();
  return td;
}

}  // namespace

TensorDict load_memmap(const ClassSpec& spec, const std::string& prefix,
                       std::optional<at::Device> device) {
  return *load_class(spec, prefix, device, nullptr);
}

}  // namespace tensordict::detail::tc

namespace tensordict::detail::tc {

void load_memmap_in_place(TensorDict& td, const ClassSpec& spec, const std::string& prefix) {
  TensorDict loaded = load_memmap(spec, prefix, td.device());
  detail::TensorDictImpl& dst = detail::impl_of(td);
  const detail::TensorDictImpl& src = detail::impl_of(loaded);
  dst.share_keys(src);
  dst.values = src.values;
  dst.batch_size = src.batch_size;
  dst.lazy = src.lazy;
  dst.class_info = src.class_info;
  dst.locked = src.locked;
  dst.is_memmap = src.is_memmap;
  dst.saved_path = src.saved_path;
}

}  // namespace tensordict::detail::tc

namespace tensordict {

ClassLoadCheck check_class_load(const ClassSpec& spec, const std::string& prefix,
                                std::optional<at::Device> device) {
  ClassLoadCheck check;
  check.loaded = detail::tc::load_class(spec, prefix, device, &check.problems);
  return check;
}

}  // namespace tensordict
