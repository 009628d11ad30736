// The safetensors header, read and written (tensordict/safetensors_format.h). Torch-free: tcgen
// compiles it too.
#include "tensordict/safetensors_format.h"

#include <algorithm>
#include <limits>

#include "tensordict/errors.h"
#include "tensordict/json.h"

namespace tensordict::safetensors {
namespace {

constexpr auto kMaxDim = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// A non-negative JSON integer, or nullopt.
bool read_uint(const Json& v, uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

TensorEntry parse_entry(const std::string& name, const Json& v, const std::string& file) {
  const std::string what = file + " tensor '" + name + "'";
  if (!v.is_object()) throw FormatError(what + ": its header entry is not an object");
  TensorEntry e;
  e.name = name;
  const auto dtype = v.find("dtype");
  if (dtype == v.end() || !dtype->is_string()) throw FormatError(what + ": no dtype string");
  e.dtype = find_dtype(dtype->get_ref<const std::string&>());
  if (!e.dtype) {
    throw FormatError(what + ": unknown dtype '" + dtype->get<std::string>() + "'");
  }
  const auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array()) throw FormatError(what + ": no shape list");
  for (const Json& d : *shape) {
    uint64_t dim = 0;
    if (!read_uint(d, dim) || dim > kMaxDim) {
      throw FormatError(what + ": shape " + shape->dump() + " holds " + d.dump() +
                        ", not a dimension");
    }
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto offsets = v.find("data_offsets");
  if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 ||
      !read_uint((*offsets)[0], e.begin) || !read_uint((*offsets)[1], e.end)) {
    throw FormatError(what + ": data_offsets is not a pair of byte offsets");
  }
  return e;
}

// The bytes `e`'s dtype and shape need; FormatError when they overflow or end inside a byte.
uint64_t needed_bytes(const TensorEntry& e, const std::string& file) {
  uint64_t bits = static_cast<uint64_t>(e.dtype->bits);
  bool overflow = false;
  for (int64_t d : e.shape) {
    overflow = overflow || __builtin_mul_overflow(bits, static_cast<uint64_t>(d), &bits);
  }
  bool empty = std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end();
  if (empty) return 0;
  if (overflow) {
    throw FormatError(file + " tensor '" + e.name + "': its shape is too large to address");
  }
  if (bits % 8 != 0) {
    throw FormatError(file + " tensor '" + e.name + "': " + std::to_string(bits) + " bits of " +
                      std::string(e.dtype->name) + " do not fill whole bytes");
  }
  return bits / 8;
}

}  // namespace

const Dtype* find_dtype(std::string_view name) {
  for (const Dtype& d : kDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

size_t dtype_rank(const Dtype& dtype) { return static_cast<size_t>(&dtype - kDtypes.data()); }

Header parse_header(const unsigned char* bytes, uint64_t size, const std::string& where) {
  const std::string file = "safetensors file '" + where + "'";
  if (size < kLengthBytes) {
    throw FormatError(file + " is too short (" + std::to_string(size) +
                      " bytes) to hold a header length");
  }
  uint64_t n = 0;
  for (uint64_t i = 0; i < kLengthBytes; ++i) n |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (n > kMaxHeaderBytes) {
    throw FormatError(file + ": a header of " + std::to_string(n) +
                      " bytes is past the format's bound of " + std::to_string(kMaxHeaderBytes));
  }
  if (n > size - kLengthBytes) {
    throw FormatError(file + ": the header length " + std::to_string(n) +
                      " runs past the end of the file (" + std::to_string(size) + " bytes)");
  }
  const Json json = parse_json(
      std::string_view(reinterpret_cast<const char*>(bytes) + kLengthBytes, n), file + " header");
  if (!json.is_object()) throw FormatError(file + ": the header is not a JSON object");
  Header h;
  h.data_start = kLengthBytes + n;
  for (const auto& [key, value] : json.items()) {
    if (key != kMetadataKey) {
      h.tensors.push_back(parse_entry(key, value, file));
      continue;
    }
    if (!value.is_object()) throw FormatError(file + ": __metadata__ is not a map of strings");
    for (const auto& [k, v] : value.items()) {
      if (!v.is_string()) {
        throw FormatError(file + ": __metadata__ entry '" + k + "' is not a string");
      }
      h.metadata.emplace_back(k, v.get<std::string>());
    }
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  // Each tensor starts where the previous one ended: no overlap, no gap, no byte unaccounted for.
  uint64_t at = 0;
  for (const TensorEntry& e : h.tensors) {
    const std::string what = file + " tensor '" + e.name + "'";
    if (e.begin != at) {
      throw FormatError(what + ": its data starts at " + std::to_string(e.begin) + ", " +
                        (e.begin < at ? "inside the previous tensor's" : "after a gap") +
                        " (expected " + std::to_string(at) + ")");
    }
    if (e.end < e.begin) throw FormatError(what + ": its data ends before it starts");
    const uint64_t needed = needed_bytes(e, file);
    if (e.end - e.begin != needed) {
      throw FormatError(what + ": " + std::to_string(e.end - e.begin) + " bytes of data, its " +
                        std::string(e.dtype->name) + " shape needs " + std::to_string(needed));
    }
    at = e.end;
  }
  if (at != size - h.data_start) {
    throw FormatError(file + ": the tensors' data takes " + std::to_string(at) +
                      " bytes, the file holds " + std::to_string(size - h.data_start) +
                      " after the header");
  }
  return h;
}

std::string format_header(const std::vector<TensorEntry>& tensors, const Metadata& metadata) {
  Json json = Json::object();
  if (!metadata.empty()) {
    Json& map = json[std::string(kMetadataKey)] = Json::object();
    for (const auto& [k, v] : metadata) map[k] = v;
  }
  for (const TensorEntry& e : tensors) {
    Json entry = Json::object();
    entry["dtype"] = e.dtype->name;
    entry["shape"] = e.shape;
    entry["data_offsets"] = Json::array({e.begin, e.end});
    json[e.name] = std::move(entry);
  }
  // The reference writer's JSON is compact and leaves non-ASCII text unescaped, as Python's
  // json.dumps(..., separators=(",", ":"), ensure_ascii=False) does.
  std::string text = dumps_python(json, JsonStyle{false, true});
  text.append((kLengthBytes - text.size() % kLengthBytes) % kLengthBytes, ' ');
  std::string out(kLengthBytes, '\0');
  const uint64_t n = text.size();
  for (uint64_t i = 0; i < kLengthBytes; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + text;
}

}  // namespace tensordict::safetensors
