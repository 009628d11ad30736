// The structure frame: how a TensorDict is described on the wire, compared with the receiver's
// and rebuilt over a received byte buffer.
#include <ATen/ATen.h>

#include <algorithm>

#include "ops_util.h"
#include "tensordict/dtype.h"
#include "tensordict_impl.h"
#include "wire.h"

namespace tensordict::dist::detail {
namespace {

std::string join_key(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// Top-level keys of `td` in sorted order, with their entries.
std::vector<std::pair<std::string, const Value*>> entries(const TensorDict& td, const char* op,
                                                          LeafOrder order) {
  if (td.is_lazy_stack()) {
    throw TypeError(std::string(op) +
                    ": not supported on a LazyStackedTensorDict (call densify() first)");
  }
  const auto& impl = td.impl();
  std::vector<std::pair<std::string, const Value*>> out;
  out.reserve(impl.keys.size());
  for (size_t i = 0; i < impl.keys.size(); ++i) out.emplace_back(impl.keys[i], &impl.values[i]);
  if (order == LeafOrder::Sorted) {
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return out;
}

void collect(const TensorDict& td, const std::string& prefix, const char* op, LeafOrder order,
             std::vector<Leaf>& out) {
  for (const auto& [key, value] : entries(td, op, order)) {
    if (value->is_tensor()) out.push_back({join_key(prefix, key), value->tensor()});
    if (value->is_tensordict()) {
      collect(value->tensordict(), join_key(prefix, key), op, order, out);
    }
  }
}

Json describe_entry(const Value& value, const at::Tensor& flat) {
  Json e;
  e["kind"] = value.kind_name();
  if (value.is_tensor()) {
    const at::Tensor& t = value.tensor();
    e["dtype"] = dtype_name(t.scalar_type());
    e["shape"] = t.sizes().vec();
    if (flat.defined()) {
      e["strides"] = t.strides().vec();
      e["offset"] =
          t.storage_offset() * static_cast<int64_t>(t.element_size()) - flat.storage_offset();
    }
  } else if (value.is_tensordict()) {
    e = describe(value.tensordict(), flat);
  } else if (value.is_non_tensor_data()) {
    e["data"] = value.non_tensor_data().data;
  } else {
    e["shape"] = value.non_tensor_stack().shape();
    e["list"] = value.non_tensor_stack().tolist();
  }
  return e;
}

std::string describe_shape(const Json& shape) {
  return shape_str(shape.get<std::vector<int64_t>>());
}

// The frame's entries (insertion order on the wire, so that a rebuilt TensorDict keeps the
// sender's order) sorted by key, to walk beside sorted_entries().
std::vector<const Json*> sorted_items(const Json& desc) {
  std::vector<const Json*> out;
  for (const Json& item : desc.at("entries")) out.push_back(&item);
  std::sort(out.begin(), out.end(), [](const Json* a, const Json* b) {
    return a->at(0).get_ref<const std::string&>() < b->at(0).get_ref<const std::string&>();
  });
  return out;
}

void compare(const Json& sent, const TensorDict& here, const std::string& prefix,
             const std::string& op, int peer) {
  const std::string on_peer = " on rank " + std::to_string(peer);
  const auto mine = entries(here, op.c_str(), LeafOrder::Sorted);
  size_t j = 0;
  for (const Json* item : sorted_items(sent)) {
    const std::string key = item->at(0).get<std::string>();
    const std::string path = join_key(prefix, key);
    if (j < mine.size() && mine[j].first < key) {
      throw KeyError(op + ": key '" + join_key(prefix, mine[j].first) + "' is not on rank " +
                     std::to_string(peer));
    }
    if (j == mine.size() || mine[j].first != key) {
      throw KeyError(op + ": key '" + path + "' of rank " + std::to_string(peer) +
                     " is not in this TensorDict");
    }
    const Json& e = item->at(1);
    const Value& v = *mine[j++].second;
    const std::string kind = e.at("kind").get<std::string>();
    if (kind != v.kind_name()) {
      throw TypeError(op + ": key '" + path + "' is a " + kind + on_peer + " but a " +
                      v.kind_name() + " here");
    }
    if (v.is_tensordict()) compare(e, v.tensordict(), path, op, peer);
    if (!v.is_tensor()) continue;
    const std::string dtype = dtype_name(v.tensor().scalar_type());
    if (e.at("dtype").get<std::string>() != dtype) {
      throw TypeError(op + ": key '" + path + "' has dtype " + e.at("dtype").get<std::string>() +
                      on_peer + " but " + dtype + " here");
    }
    if (e.at("shape").get<std::vector<int64_t>>() != v.tensor().sizes().vec()) {
      throw ShapeError(op + ": key '" + path + "' has shape " + describe_shape(e.at("shape")) +
                       on_peer + " but " + shape_str(v.tensor().sizes()) + " here");
    }
  }
  if (j < mine.size()) {
    throw KeyError(op + ": key '" + join_key(prefix, mine[j].first) + "' is not on rank " +
                   std::to_string(peer));
  }
}

at::ScalarType parse_dtype(const Json& e) {
  const std::string name = e.at("dtype").get<std::string>();
  auto dtype = dtype_from_name(name);
  if (!dtype) throw FormatError("distributed: unknown dtype '" + name + "' in a structure frame");
  return *dtype;
}

TensorDict build_level(const Json& desc, const at::Tensor& flat) {
  TensorDict out({}, desc.at("batch_size").get<BatchSize>());
  for (const Json& item : desc.at("entries")) {
    const std::string key = item.at(0).get<std::string>();
    const Json& e = item.at(1);
    const std::string kind = e.at("kind").get<std::string>();
    if (kind == "Tensor") {
      const at::ScalarType dtype = parse_dtype(e);
      const int64_t elem = static_cast<int64_t>(c10::elementSize(dtype));
      const auto shape = e.at("shape").get<std::vector<int64_t>>();
      const auto strides = e.at("strides").get<std::vector<int64_t>>();
      const int64_t offset = e.at("offset").get<int64_t>();
      // The typed view of the whole buffer needs a whole number of elements (offsets are
      // aligned by consolidate()).
      const int64_t usable = flat.numel() / elem * elem;
      at::Tensor typed = flat.narrow(0, 0, usable).view(dtype);
      out.set(key, typed.as_strided(shape, strides, offset / elem));
    } else if (kind == "TensorDict") {
      out.set(key, build_level(e, flat));
    } else if (kind == "NonTensorData") {
      out.set(key, NonTensorData{e.at("data")});
    } else if (kind == "NonTensorStack") {
      const auto shape = e.at("shape").get<std::vector<int64_t>>();
      out.set(key, NonTensorStack::from_list(e.at("list"), static_cast<int64_t>(shape.size())));
    } else {
      throw FormatError("distributed: unknown entry kind '" + kind + "' in a structure frame");
    }
  }
  return out;
}

void set_level(const Json& sent, const TensorDict& here) {
  TensorDict target = here;
  for (const Json& item : sent.at("entries")) {
    const std::string key = item.at(0).get<std::string>();
    const Json& e = item.at(1);
    const std::string kind = e.at("kind").get<std::string>();
    if (kind == "TensorDict") set_level(e, here.get_tensordict(key));
    if (kind == "NonTensorData") target.set(key, NonTensorData{e.at("data")});
    if (kind == "NonTensorStack") {
      const auto ndim = static_cast<int64_t>(e.at("shape").size());
      target.set(key, NonTensorStack::from_list(e.at("list"), ndim));
    }
  }
}

}  // namespace

std::vector<Leaf> leaves(const TensorDict& td, const char* op, LeafOrder order) {
  std::vector<Leaf> out;
  collect(td, "", op, order, out);
  return out;
}

Json describe(const TensorDict& td, const at::Tensor& flat) {
  Json out;
  out["kind"] = "TensorDict";
  out["batch_size"] = td.batch_size();
  if (td.is_lazy_stack()) {
    throw TypeError("distributed: not supported on a LazyStackedTensorDict (call densify() first)");
  }
  Json entries = Json::array();
  const auto& impl = td.impl();
  for (size_t i = 0; i < impl.keys.size(); ++i) {
    entries.push_back(Json::array({impl.keys[i], describe_entry(impl.values[i], flat)}));
  }
  out["entries"] = std::move(entries);
  return out;
}

void check_matches(const Json& sent, const TensorDict& here, const std::string& op, int peer) {
  compare(sent, here, "", op, peer);
}

void set_non_tensor(const Json& sent, const TensorDict& here) { set_level(sent, here); }

TensorDict build(const Json& desc, const at::Tensor& flat) {
  TensorDict out = build_level(desc, flat);
  out.impl().consolidated = flat;
  return out;
}

at::Tensor flat_of(const TensorDict& td) { return tensordict::detail::consolidated_buffer(td); }

std::pair<TensorDict, at::Tensor> pack(const TensorDict& td, const char* op) {
  if (td.is_lazy_stack()) {
    throw TypeError(std::string(op) +
                    ": not supported on a LazyStackedTensorDict (call densify() first)");
  }
  TensorDict packed = td.consolidate();
  at::Tensor flat = flat_of(packed);
  if (!flat.device().is_cpu()) {
    throw TypeError(std::string(op) + ": Gloo moves CPU tensors; the TensorDict is on " +
                    flat.device().str());
  }
  return {packed, flat};
}

}  // namespace tensordict::dist::detail
