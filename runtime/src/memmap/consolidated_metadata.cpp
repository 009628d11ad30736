// Python tensordict's consolidated metadata, written from and read into TensorDicts (see
// tensordict/internal.h). The layout of the buffer itself is consolidate()'s, which is Python's.
#include "tensordict/internal.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "lazy/internal.h"
#include "ops/util.h"
#include "tensordict/dtype.h"
#include "tensordict/lazy_stack.h"

namespace tensordict::detail {
namespace {

// One level of a TensorDict unlocked for as long as it lives, then locked again as it was: for
// the entries Python writes with ignore_lock=True.
class LockLifted {
 public:
  explicit LockLifted(const TensorDict& td)
      : impl_(::tensordict::detail::impl_of(td)), locked_(impl_.locked) {
    impl_.locked = false;
  }
  LockLifted(const LockLifted&) = delete;
  LockLifted& operator=(const LockLifted&) = delete;
  ~LockLifted() { impl_.locked = locked_; }

 private:
  ::tensordict::detail::TensorDictImpl& impl_;
  bool locked_;
};

// Python pads every leaf of a consolidated buffer to a multiple of 8 bytes.
constexpr int64_t kLeafAlignment = 8;
// Bound of the items of a NonTensorStack read from a description.
constexpr int64_t kMaxStackItems = int64_t{1} << 22;

// ---- writing -------------------------------------------------------------------------------

class Writer {
 public:
  Writer(const at::Tensor& flat, const char* op) : flat_(flat), op_(op) {}

  Json tensordict(const TensorDict& td) const {
    dense_only(td, op_);
    const auto& impl = ::tensordict::detail::impl_of(td);
    const DimNames names = td.names();
    const Json device = device_of(td);
    Json non_tensors = Json::object();
    Json leaves = Json::object();
    for (size_t i = 0; i < impl.keys.size(); ++i) {
      const Value& v = impl.values[i];
      if (v.is_non_tensor_data()) {
        non_tensors[impl.keys[i]] =
            Json::array({v.non_tensor_data().data, td.batch_size(), device});
      }
      if (v.is_tensor()) leaves[impl.keys[i]] = leaf(impl.keys[i], v.tensor());
    }
    Json name_list = Json::array();
    for (const auto& name : names) name_list.push_back(name ? Json(*name) : Json(nullptr));
    Json out = Json::object();
    out["cls"] = "TensorDict";
    out["non_tensors"] = std::move(non_tensors);
    out["leaves"] = std::move(leaves);
    out["cls_metadata"] = Json::object();
    out["cls_metadata"]["device"] = device;
    out["cls_metadata"]["names"] = std::move(name_list);
    out["cls_metadata"]["batch_size"] = td.batch_size();
    out["cls_metadata"]["is_locked"] = td.is_locked();
    for (size_t i = 0; i < impl.keys.size(); ++i) {
      const Value& v = impl.values[i];
      if (v.is_tensordict()) out[impl.keys[i]] = tensordict(v.tensordict());
      if (v.is_non_tensor_stack()) {
        const NonTensorStack& s = v.non_tensor_stack();
        out[impl.keys[i]] = stack(s.shape(), 0, s.items().begin(), names, device, td.is_locked());
      }
    }
    return out;
  }

 private:
  static Json device_of(const TensorDict& td) {
    return td.device() ? Json(td.device()->str()) : Json(nullptr);
  }

  // (dtype, shape, start, stop, pad): byte offsets into the consolidated buffer (0 without one).
  Json leaf(const std::string& key, const at::Tensor& t) const {
    const auto nbytes = static_cast<int64_t>(t.nbytes());
    const int64_t pad = (kLeafAlignment - nbytes % kLeafAlignment) % kLeafAlignment;
    int64_t start = 0;
    int64_t stop = 0;
    if (flat_.defined()) {
      // Through the storage offset where the leaf views flat's storage: an empty leaf then sits
      // at the running offset, as in Python's metadata (its data pointer may be null).
      if (t.storage().unsafeGetStorageImpl() == flat_.storage().unsafeGetStorageImpl()) {
        start =
            t.storage_offset() * static_cast<int64_t>(t.element_size()) - flat_.storage_offset();
      } else if (t.numel() > 0) {
        start = static_cast<const char*>(t.data_ptr()) - static_cast<const char*>(flat_.data_ptr());
      }
      if (!t.is_contiguous() || start < 0 || start + nbytes > flat_.numel()) {
        throw Error(std::string(op_) + ": leaf '" + key +
                    "' is not a contiguous part of the buffer");
      }
      stop = start + nbytes + pad;
    }
    return Json::array({"torch." + dtype_name(t.scalar_type()), t.sizes().vec(), start, stop,
                        flat_.defined() ? pad : 0});
  }

  // A NonTensorStack as Python nests it: one NonTensorStack per dim, stacked along dim 0.
  static Json stack(const std::vector<int64_t>& shape, size_t level, const Json* items,
                    const DimNames& names, const Json& device, bool locked) {
    const int64_t n = shape[level];
    const bool innermost = level + 1 == shape.size();
    int64_t inner = 1;
    for (size_t d = level + 1; d < shape.size(); ++d) inner *= shape[d];
    Json non_tensors = Json::object();
    for (int64_t i = 0; innermost && i < n; ++i) {
      non_tensors[std::to_string(i)] = Json::array({items[i], Json::array(), device});
    }
    Json out = Json::object();
    out["cls"] = "NonTensorStack";
    out["non_tensors"] = std::move(non_tensors);
    out["leaves"] = Json::object();
    out["cls_metadata"] = Json::object();
    out["cls_metadata"]["stack_dim"] = 0;
    out["cls_metadata"]["stack_dim_name"] =
        level < names.size() && names[level] ? Json(*names[level]) : Json(nullptr);
    out["cls_metadata"]["is_locked"] = locked;
    for (int64_t i = 0; !innermost && i < n; ++i) {
      out[std::to_string(i)] = stack(shape, level + 1, items + i * inner, names, device, locked);
    }
    return out;
  }

  const at::Tensor& flat_;
  const char* op_;
};

// ---- reading -------------------------------------------------------------------------------

// Row-major items over a shape: a NonTensorStack's content while it is assembled.
struct Items {
  std::vector<int64_t> shape;
  std::vector<Json> values;
};

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
      if (!cm.at("device").is_null()) device = parse_device(cm.at("device"), path);
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
    } catch (const c10::Error& e) {  // e.g. a device this build of torch cannot place data on
      fail(path, "cannot be rebuilt (" + first_line(e.what()) + ")");
    } catch (const FormatError&) {
      throw;  // a nested level's, naming its key already
    } catch (const Error& e) {
      // A description at odds with itself (a leaf outside its level's batch size, a repeated dim
      // name): malformed input, not a misuse of the API.
      fail(path, std::string("cannot be rebuilt (") + e.what() + ")");
    }
  }

  // Sets the non-tensor entries `m` describes into `here`, whose structure matches it.
  // The receiving TensorDict may be locked: these are written as Python writes them, with
  // ignore_lock=True.
  void set_non_tensor(const Json& m, const TensorDict& here, const std::string& path) {
    try {
      TensorDict target = here;
      const LockLifted lifted(target);
      for (const auto& [key, entry] : m.at("non_tensors").items()) {
        target.set(key, NonTensorData{entry.at(0)});
      }
      for (const auto& [key, entry] : m.items()) {
        if (is_level_field(key) || !entry.is_object()) continue;
        if (entry.at("cls") == "NonTensorStack") {
          Items items = stack(entry, join_key(path, key));
          target.set(key, NonTensorStack(std::move(items.shape), std::move(items.values)));
        } else {
          set_non_tensor(entry, here.get_tensordict(key), join_key(path, key));
        }
      }
    } catch (const nlohmann::json::exception& e) {
      fail(path, std::string("is malformed (") + e.what() + ")");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw FormatError(op_ + ": the metadata " + (path.empty() ? "" : "of key '" + path + "' ") +
                      why);
  }

  at::Device parse_device(const Json& text, const std::string& path) const {
    try {
      return at::Device(text.get<std::string>());
    } catch (const c10::Error&) {
      fail(path, "has the unknown device " + text.dump());
    }
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
  // Elements of a stack of `shape`; FormatError on a negative dim or more than kMaxStackItems
  // (a description may announce any shape, the items are made here).
  int64_t stack_numel(const std::vector<int64_t>& shape, const std::string& path) const {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxStackItems) {
        fail(path, "has a stack of shape " + shape_str(shape) + " (at most " +
                       std::to_string(kMaxStackItems) + " items are read)");
      }
    }
    return n;
  }

  Items stack(const Json& m, const std::string& path) {
    std::vector<Items> parts;
    const Json& non_tensors = m.at("non_tensors");
    for (size_t i = 0;; ++i) {
      const std::string key = std::to_string(i);
      if (non_tensors.contains(key)) {
        const Json& e = non_tensors.at(key);
        Items one{e.at(1).get<std::vector<int64_t>>(), {}};
        one.values.assign(static_cast<size_t>(stack_numel(one.shape, path)), e.at(0));
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
    stack_numel(out.shape, path);
    // Output index (outer, i, inner) takes item (outer, inner) of part i.
    const auto split = part_shape.begin() + dim;
    const int64_t outer = stack_numel(std::vector<int64_t>(part_shape.begin(), split), path);
    const int64_t inner = stack_numel(std::vector<int64_t>(split, part_shape.end()), path);
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

bool is_level_field(const std::string& key) {
  return key == "cls" || key == "non_tensors" || key == "leaves" || key == "cls_metadata" ||
         key == "size";
}

Json describe(const TensorDict& td, const at::Tensor& flat, const char* op) {
  return Writer(flat, op).tensordict(td);
}

TensorDict from_metadata(const Json& meta, const at::Tensor& flat, const std::string& op) {
  TensorDict out = Reader(flat, op).tensordict(meta, "");
  ::tensordict::detail::impl_of(out).consolidated = flat;
  return out;
}

void set_non_tensor(const Json& meta, const TensorDict& here, const std::string& op) {
  Reader(at::Tensor(), op).set_non_tensor(meta, here, "");
}

}  // namespace tensordict::detail
