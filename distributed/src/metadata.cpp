// Python tensordict's consolidated metadata, written from and read into TensorDicts (see
// metadata.h). The layout of the buffer itself is consolidate()'s, which is Python's.
#include "metadata.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "pickle.h"
#include "tensordict/dtype.h"
#include "tensordict/lazy_stack.h"
#include "tensordict_impl.h"

namespace tensordict::dist::detail {
namespace {

// Python pads every leaf of a consolidated buffer to a multiple of 8 bytes.
constexpr int64_t kLeafAlignment = 8;
// Bound of an announced buffer, so that a corrupt size fails instead of allocating.
constexpr int64_t kMaxBufferBytes = int64_t{1} << 40;

std::string join_key(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// ---- writing -------------------------------------------------------------------------------

class Writer {
 public:
  Writer(const at::Tensor& flat, Pickler& p) : flat_(flat), p_(p) {}

  void tensordict(const TensorDict& td) {
    if (td.is_lazy_stack()) {
      throw TypeError("distributed: not supported on a LazyStackedTensorDict (densify() first)");
    }
    const auto& impl = td.impl();
    const DimNames names = td.names();
    p_.string("cls").string("TensorDict");
    p_.string("non_tensors").begin();
    for (size_t i = 0; i < impl.keys.size(); ++i) {
      if (!impl.values[i].is_non_tensor_data()) continue;
      p_.string(impl.keys[i]).begin().json(impl.values[i].non_tensor_data().data);
      ints(td.batch_size());
      device(td.device());
      p_.end_tuple();
    }
    p_.end_dict();
    p_.string("leaves").begin();
    for (size_t i = 0; i < impl.keys.size(); ++i) {
      if (impl.values[i].is_tensor()) leaf(impl.keys[i], impl.values[i].tensor());
    }
    p_.end_dict();
    p_.string("cls_metadata").begin();
    p_.string("device");
    device(td.device());
    p_.string("names").begin();
    for (const auto& name : names) name ? p_.string(*name) : p_.none();
    p_.end_list();
    p_.string("batch_size");
    ints(td.batch_size());
    p_.string("is_locked").boolean(td.is_locked()).end_dict();
    for (size_t i = 0; i < impl.keys.size(); ++i) {
      const Value& v = impl.values[i];
      if (v.is_tensordict()) {
        p_.string(impl.keys[i]).begin();
        tensordict(v.tensordict());
        p_.end_dict();
      } else if (v.is_non_tensor_stack()) {
        const NonTensorStack& s = v.non_tensor_stack();
        p_.string(impl.keys[i]);
        stack(s.shape(), 0, s.items().begin(), names, td.device(), td.is_locked());
      }
    }
  }

 private:
  void ints(at::IntArrayRef values) {
    p_.begin();
    for (int64_t v : values) p_.integer(v);
    p_.end_list();
  }
  void device(const std::optional<at::Device>& d) { d ? p_.string(d->str()) : p_.none(); }

  void leaf(const std::string& key, const at::Tensor& t) {
    const auto* base = static_cast<const char*>(flat_.data_ptr());
    const auto nbytes = static_cast<int64_t>(t.nbytes());
    const auto start = t.numel() == 0 ? int64_t{0} : static_cast<const char*>(t.data_ptr()) - base;
    if (!t.is_contiguous() || start < 0 || start + nbytes > flat_.numel()) {
      throw Error("distributed: leaf '" + key + "' is not a contiguous part of the buffer");
    }
    const int64_t pad = (kLeafAlignment - nbytes % kLeafAlignment) % kLeafAlignment;
    p_.string(key).begin().string("torch." + dtype_name(t.scalar_type()));
    ints(t.sizes());
    p_.integer(start).integer(start + nbytes + pad).integer(pad).end_tuple();
  }

  // A NonTensorStack as Python nests it: one NonTensorStack per dim, stacked along dim 0.
  void stack(const std::vector<int64_t>& shape, size_t level, const Json* items,
             const DimNames& names, const std::optional<at::Device>& dev, bool locked) {
    const int64_t n = shape[level];
    const bool innermost = level + 1 == shape.size();
    int64_t inner = 1;
    for (size_t d = level + 1; d < shape.size(); ++d) inner *= shape[d];
    p_.begin().string("cls").string("NonTensorStack").string("non_tensors").begin();
    for (int64_t i = 0; innermost && i < n; ++i) {
      p_.string(std::to_string(i)).begin().json(items[i]).begin().end_list();
      device(dev);
      p_.end_tuple();
    }
    p_.end_dict().string("leaves").begin().end_dict();
    p_.string("cls_metadata").begin().string("stack_dim").integer(0).string("stack_dim_name");
    level < names.size() && names[level] ? p_.string(*names[level]) : p_.none();
    p_.string("is_locked").boolean(locked).end_dict();
    for (int64_t i = 0; !innermost && i < n; ++i) {
      p_.string(std::to_string(i));
      stack(shape, level + 1, items + i * inner, names, dev, locked);
    }
    p_.end_dict();
  }

  const at::Tensor& flat_;
  Pickler& p_;
};

// ---- reading -------------------------------------------------------------------------------

// Row-major items over a shape: a NonTensorStack's content while it is assembled.
struct Items {
  std::vector<int64_t> shape;
  std::vector<Json> values;
};

bool is_level_field(const std::string& key) {
  return key == "cls" || key == "non_tensors" || key == "leaves" || key == "cls_metadata" ||
         key == "size";
}

class Reader {
 public:
  Reader(const at::Tensor& flat, const std::string& op) : flat_(flat), op_(op) {}

  TensorDict tensordict(const Json& m, const std::string& path) {
    try {
      const std::string cls = m.at("cls").get<std::string>();
      const Json& cm = m.at("cls_metadata");
      if (cls == "LazyStackedTensorDict") return lazy(m, cm, path);
      if (cls == "NonTensorStack") fail(path, "is a NonTensorStack where a TensorDict is expected");
      // Any other class is a tensorclass, whose fields C++ keeps in a TensorDict.
      std::optional<at::Device> device;
      if (!cm.at("device").is_null()) device = at::Device(cm.at("device").get<std::string>());
      TensorDict out({}, cm.at("batch_size").get<BatchSize>());
      for (const auto& [key, entry] : m.at("non_tensors").items()) {
        out.set(key, NonTensorData{entry.at(0)});
      }
      for (const auto& [key, entry] : m.at("leaves").items()) {
        out.set(key, leaf(entry, join_key(path, key)));
      }
      for (const auto& [key, entry] : m.items()) {
        if (is_level_field(key)) continue;
        if (!entry.is_object()) fail(join_key(path, key), "is neither a TensorDict nor a stack");
        if (entry.at("cls") == "NonTensorStack") {
          Items items = stack(entry, join_key(path, key));
          out.set(key, NonTensorStack(std::move(items.shape), std::move(items.values)));
        } else {
          out.set(key, tensordict(entry, join_key(path, key)));
        }
      }
      DimNames names;
      for (const Json& n : cm.at("names")) {
        names.push_back(n.is_null() ? std::nullopt : std::optional(n.get<std::string>()));
      }
      if (std::any_of(names.begin(), names.end(), [](const auto& n) { return n.has_value(); })) {
        out.set_names(names);
      }
      if (device) out.set_device(device);
      if (cm.value("is_locked", false)) out.lock_();
      return out;
    } catch (const nlohmann::json::exception& e) {
      fail(path, std::string("is malformed (") + e.what() + ")");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw FormatError(op_ + ": the metadata " + (path.empty() ? "" : "of key '" + path + "' ") +
                      why);
  }

  at::Tensor leaf(const Json& entry, const std::string& path) {
    if (entry.size() != 5) fail(path, "is a nested (jagged) tensor, which is not supported");
    const std::string dtype_text = entry.at(0).get<std::string>();
    const auto dtype = dtype_from_name(dtype_text);
    if (!dtype) fail(path, "has the unknown dtype '" + dtype_text + "'");
    const auto shape = entry.at(1).get<std::vector<int64_t>>();
    const auto start = entry.at(2).get<int64_t>();
    const auto stop = entry.at(3).get<int64_t>();
    const auto elem = static_cast<int64_t>(c10::elementSize(*dtype));
    int64_t numel = 1;
    for (int64_t d : shape) {
      if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) fail(path, "has an invalid shape");
    }
    if (start < 0 || stop < start || stop > flat_.numel() ||
        (flat_.storage_offset() + start) % elem != 0 || (stop - start) % elem != 0 ||
        numel > (stop - start) / elem) {
      fail(path, "lies outside the " + std::to_string(flat_.numel()) + "-byte buffer (bytes " +
                     std::to_string(start) + " to " + std::to_string(stop) + " for " +
                     std::to_string(numel) + " " + dtype_name(*dtype) + ")");
    }
    return flat_.narrow(0, start, stop - start).view(*dtype).narrow(0, 0, numel).view(shape);
  }

  TensorDict lazy(const Json& m, const Json& cm, const std::string& path) {
    std::vector<TensorDict> tds;
    for (size_t i = 0; m.contains(std::to_string(i)); ++i) {
      tds.push_back(tensordict(m.at(std::to_string(i)), join_key(path, std::to_string(i))));
    }
    return lazy_stack(tds, cm.at("stack_dim").get<int64_t>());
  }

  // A NonTensorStack's items: entry i (in "non_tensors" or a nested stack) is slice i along
  // stack_dim.
  Items stack(const Json& m, const std::string& path) {
    std::vector<Items> parts;
    const Json& non_tensors = m.at("non_tensors");
    for (size_t i = 0;; ++i) {
      const std::string key = std::to_string(i);
      if (non_tensors.contains(key)) {
        const Json& e = non_tensors.at(key);
        Items one{e.at(1).get<std::vector<int64_t>>(), {}};
        const NonTensorStack filled = NonTensorStack::filled(one.shape, e.at(0));
        for (const Json& v : filled.items()) one.values.push_back(v);
        parts.push_back(std::move(one));
      } else if (m.contains(key)) {
        parts.push_back(stack(m.at(key), join_key(path, key)));
      } else {
        break;
      }
      if (parts.back().shape != parts.front().shape) fail(path, "stacks items of unequal shapes");
    }
    const auto dim = m.at("cls_metadata").at("stack_dim").get<int64_t>();
    const std::vector<int64_t> part_shape = parts.empty() ? std::vector<int64_t>{} : parts[0].shape;
    if (dim < 0 || dim > static_cast<int64_t>(part_shape.size())) fail(path, "has a bad stack_dim");
    Items out{part_shape, {}};
    out.shape.insert(out.shape.begin() + dim, static_cast<int64_t>(parts.size()));
    // Output index (outer, i, inner) takes item (outer, inner) of part i.
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(dim); d < part_shape.size(); ++d) inner *= part_shape[d];
    const int64_t outer = parts.empty() ? 0 : static_cast<int64_t>(parts[0].values.size()) / inner;
    for (int64_t o = 0; o < outer; ++o) {
      for (const Items& part : parts) {
        const auto first = part.values.begin() + o * inner;
        out.values.insert(out.values.end(), first, first + inner);
      }
    }
    return out;
  }

  const at::Tensor& flat_;
  const std::string& op_;
};

}  // namespace

std::string pickle_metadata(const TensorDict& td, const at::Tensor& flat, const Extras& extras,
                            const std::string& tensorclass_type) {
  Pickler p;
  p.begin();
  Writer(flat, p).tensordict(td);
  p.string("_total_bytes").integer(flat.numel());
  for (const auto& [key, value] : extras) p.string(key).json(value);
  if (!tensorclass_type.empty()) p.string("_tensorclass_type").string(tensorclass_type);
  return p.end_dict().finish();
}

TensorDict from_metadata(const Json& meta, const at::Tensor& flat, const std::string& op) {
  TensorDict out = Reader(flat, op).tensordict(meta, "");
  out.impl().consolidated = flat;
  return out;
}

Announced read_metadata(std::string_view pickle, const std::string& op) {
  Announced out{unpickle(pickle, op + " (metadata)"), 0, 0};
  auto size = [&](const char* key) -> std::optional<int64_t> {
    if (!out.meta.is_object() || !out.meta.contains(key)) return std::nullopt;
    const Json value = std::move(out.meta[key]);
    out.meta.erase(key);
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > kMaxBufferBytes) {
      throw FormatError(op + ": the metadata's " + key + " is " + value.dump());
    }
    return value.get<int64_t>();
  };
  const auto total = size("_total_bytes");
  if (!total) {
    throw FormatError(op + ": the metadata has no _total_bytes; is the peer tensordict?");
  }
  out.total_bytes = *total;
  out.max_bytes = size("_max_bytes").value_or(*total);
  if (out.max_bytes < out.total_bytes) {
    throw FormatError(op + ": the metadata's _max_bytes is below its _total_bytes");
  }
  // Where Python keeps the buffer and which tensorclass to rebuild: C++ receives on the CPU
  // (Gloo) into a TensorDict.
  out.meta.erase("_storage_device");
  out.meta.erase("_tensorclass_type");
  return out;
}

std::string python_class_name(const char* python_type) {
  // "<class 'module.Class'>" as Python's repr of a class writes it.
  std::string_view text = python_type;
  const std::string_view open = "<class '";
  const std::string_view close = "'>";
  if (text.size() > open.size() + close.size() && text.substr(0, open.size()) == open &&
      text.substr(text.size() - close.size()) == close) {
    text = text.substr(open.size(), text.size() - open.size() - close.size());
  }
  return std::string(text);
}

}  // namespace tensordict::dist::detail
