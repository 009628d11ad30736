// Structures: Python's leaf orders, the check of a received description (metadata.h) against the
// receiver's TensorDict, and consolidated buffers to send.
#include <ATen/ATen.h>

#include <algorithm>

#include "metadata.h"
#include "tensordict/dtype.h"
#include "tensordict/internal.h"
#include "wire.h"

namespace tensordict::dist::detail {
namespace {

// Top-level keys of `td` in sorted order, with their entries.
std::vector<std::pair<std::string, const Value*>> entries(const TensorDict& td, const char* op,
                                                          LeafOrder order) {
  require_dense(td, op);
  std::vector<std::pair<std::string, const Value*>> out;
  out.reserve(td.size());
  for (size_t i = 0; i < td.size(); ++i) out.emplace_back(td.key_at(i), &td.value_at(i));
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

// The entries a description lists at one level, as (key, kind, entry), sorted by key to walk
// beside entries(here, Sorted).
struct Described {
  std::string key;
  std::string kind;
  const Json* entry;
};

std::vector<Described> described(const Json& level) {
  std::vector<Described> out;
  for (const auto& [key, e] : level.at("non_tensors").items())
    out.push_back({key, "NonTensorData", &e});
  for (const auto& [key, e] : level.at("leaves").items()) out.push_back({key, "Tensor", &e});
  for (const auto& [key, e] : level.items()) {
    if (is_level_field(key) || !e.is_object()) continue;
    out.push_back({key, e.at("cls") == "NonTensorStack" ? "NonTensorStack" : "TensorDict", &e});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

void compare(const Json& sent, const TensorDict& here, const std::string& prefix,
             const std::string& op, int peer) {
  const std::string on_peer = " on rank " + std::to_string(peer);
  const auto mine = entries(here, op.c_str(), LeafOrder::Sorted);
  size_t j = 0;
  for (const Described& d : described(sent)) {
    const std::string path = join_key(prefix, d.key);
    if (j < mine.size() && mine[j].first < d.key) {
      throw KeyError(op + ": key '" + join_key(prefix, mine[j].first) + "' is not on rank " +
                     std::to_string(peer));
    }
    if (j == mine.size() || mine[j].first != d.key) {
      throw KeyError(op + ": key '" + path + "' of rank " + std::to_string(peer) +
                     " is not in this TensorDict");
    }
    const Value& v = *mine[j++].second;
    if (d.kind != v.kind_name()) {
      throw TypeError(op + ": key '" + path + "' is a " + d.kind + on_peer + " but a " +
                      v.kind_name() + " here");
    }
    if (v.is_tensordict()) compare(*d.entry, v.tensordict(), path, op, peer);
    if (!v.is_tensor()) continue;
    // (dtype "torch.<name>", shape, start, stop, pad)
    std::string dtype = d.entry->at(0).get<std::string>();
    if (dtype.rfind("torch.", 0) == 0) dtype = dtype.substr(6);
    if (dtype != dtype_name(v.tensor().scalar_type())) {
      throw TypeError(op + ": key '" + path + "' has dtype " + dtype + on_peer + " but " +
                      dtype_name(v.tensor().scalar_type()) + " here");
    }
    const auto shape = d.entry->at(1).get<std::vector<int64_t>>();
    if (shape != v.tensor().sizes().vec()) {
      throw ShapeError(op + ": key '" + path + "' has shape " + shape_str(shape) + on_peer +
                       " but " + shape_str(v.tensor().sizes()) + " here");
    }
  }
  if (j < mine.size()) {
    throw KeyError(op + ": key '" + join_key(prefix, mine[j].first) + "' is not on rank " +
                   std::to_string(peer));
  }
}

}  // namespace

std::vector<Leaf> leaves(const TensorDict& td, const char* op, LeafOrder order) {
  std::vector<Leaf> out;
  collect(td, "", op, order, out);
  return out;
}

void check_matches(const Json& sent, const TensorDict& here, const std::string& op, int peer) {
  try {
    compare(sent, here, "", op, peer);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(op + ": the description from rank " + std::to_string(peer) +
                      " is malformed (" + e.what() + ")");
  }
}

bool same_layout(const Json& a, const Json& b) {
  const auto da = described(a);
  const auto db = described(b);
  if (da.size() != db.size()) return false;
  for (size_t i = 0; i < da.size(); ++i) {
    if (da[i].key != db[i].key || da[i].kind != db[i].kind) return false;
    if (da[i].kind == "Tensor" && *da[i].entry != *db[i].entry) return false;
    if (da[i].kind == "TensorDict" && !same_layout(*da[i].entry, *db[i].entry)) return false;
  }
  return true;
}

void require_dense(const TensorDict& td, const char* op) {
  if (td.is_lazy_stack()) {
    throw TypeError(std::string(op) +
                    ": not supported on a LazyStackedTensorDict (call densify() first)");
  }
}

at::Tensor flat_of(const TensorDict& td) { return tensordict::detail::consolidated_buffer(td); }

Packed pack(const TensorDict& td, const char* op) {
  require_dense(td, op);
  TensorDict packed = td.consolidate();
  at::Tensor flat = flat_of(packed);
  if (!flat.device().is_cpu()) {
    throw TypeError(std::string(op) + ": Gloo moves CPU tensors; the TensorDict is on " +
                    flat.device().str());
  }
  return {packed, flat};
}

}  // namespace tensordict::dist::detail
