// Python tensordict 0.14's store layout for one leaf (layout.h).
#include "layout.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "tensordict/dtype.h"
#include "tensordict/json.h"

// Leaves are stored as the host's bytes; Python's layout is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the store layout is little-endian");

namespace tensordict::store::layout {

// The dtypes a leaf can have: those whose bytes numpy and torch.frombuffer agree on (Python
// writes through numpy, so it cannot write bfloat16, but it reads it).
namespace {
constexpr std::array<at::ScalarType, 12> kStoredDtypes{
    at::kBool, at::kByte,     at::kChar,  at::kShort,  at::kInt,          at::kLong,
    at::kHalf, at::kBFloat16, at::kFloat, at::kDouble, at::kComplexFloat, at::kComplexDouble};

}  // namespace

bool stored_dtype(at::ScalarType t) {
  return std::find(kStoredDtypes.begin(), kStoredDtypes.end(), t) != kStoredDtypes.end();
}

std::string dtype_text(at::ScalarType t) { return "torch." + dtype_name(t); }

std::string shape_text(at::IntArrayRef shape) {
  // json.dumps of a list of ints, written directly (one per leaf written).
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// A key's dotted path in the store; a component holding the separator would read back as two.
std::string path_of(const NestedKey& key) {
  for (const std::string& part : key) {
    if (part.empty() || part.find('.') != std::string::npos)
      throw KeyError("key " + key.repr() +
                     ": a store key component must be non-empty and hold no '.' (the store's "
                     "path separator)");
  }
  return key.join(".");
}

NestedKey key_of(const std::string& path) { return NestedKey::split(path, "."); }

bool under(const std::string& path, const std::string& level) {
  return path.size() > level.size() && path.compare(0, level.size(), level) == 0 &&
         path[level.size()] == '.';
}

std::string repr(const std::string& path) { return key_of(path).repr(); }

namespace {
// A list in Python's own spelling ("[3, 2]", "[]": json.dumps of sizes), read without a JSON
// parser (a to_local reads one per leaf); nullopt for any other text, which the parser judges.
std::optional<std::vector<int64_t>> python_sizes(std::string_view t) {
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return std::nullopt;
  std::vector<int64_t> out;
  const size_t end = t.size() - 1;
  size_t i = 1;
  if (i == end) return out;
  for (;;) {
    const size_t start = i;
    int64_t v = 0;
    for (; i < end && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (i - start >= 18) return std::nullopt;  // no overflow: long numbers go to the parser
      v = v * 10 + (t[i] - '0');
    }
    if (i == start) return std::nullopt;
    out.push_back(v);
    if (i == end) return out;
    if (t.compare(i, 2, ", ") != 0) return std::nullopt;
    i += 2;
  }
}
}  // namespace

// A JSON list of non-negative integers (a shape or a batch size); FormatError otherwise.
std::vector<int64_t> int_list(const std::string& text, const std::string& what) {
  if (auto sizes = python_sizes(text)) return std::move(*sizes);
  const Json json = parse_json(text, what);
  if (!json.is_array()) throw FormatError(what + " is not a JSON list: " + text);
  std::vector<int64_t> out;
  for (const Json& v : json) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      throw FormatError(what + " holds " + v.dump() + ", not a size: " + text);
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// An error reply: a key of the wrong Redis type is bad store contents, anything else (NOPERM,
// OOM, ...) the server's refusal.
[[noreturn]] void throw_reply(const Reply& r, const std::string& what) {
  if (r.str.rfind("WRONGTYPE", 0) == 0) throw FormatError(what + ": " + r.str);
  throw ConnectionError(what + ": " + r.str);
}

Meta parse_meta(const std::string& path, const Reply& hash) {
  // The key as messages name it, made only for a message (a to_local parses one hash per leaf).
  const auto what = [&path] { return "store metadata of " + repr(path); };
  if (hash.type == Reply::Type::Error) throw_reply(hash, what());
  if (hash.type != Reply::Type::Array || hash.element.size() % 2 != 0)
    throw FormatError(what() + ": not a hash");
  if (hash.element.empty())
    throw FormatError(what() + ": missing (the key has data but no m: hash)");
  std::map<std::string, std::string> fields;
  Meta meta;
  for (size_t i = 0; i < hash.element.size(); i += 2) {
    fields[hash.element[i].str] = hash.element[i + 1].str;
    meta.fields.emplace_back(hash.element[i].str, hash.element[i + 1].str);
  }
  if (fields.count("is_non_tensor") && fields["is_non_tensor"] == "1") {
    meta.non_tensor = true;
    meta.encoding = fields.count("encoding") ? fields["encoding"] : "json";
    return meta;
  }
  if (!fields.count("shape") || !fields.count("dtype"))
    throw FormatError(what() + ": no 'shape' or no 'dtype' field");
  meta.shape = int_list(fields["shape"], what() + " 'shape'");
  const auto dtype = dtype_from_name(fields["dtype"]);
  if (!dtype || !stored_dtype(*dtype))
    throw FormatError(what() + ": unknown dtype '" + fields["dtype"] + "'");
  meta.dtype = *dtype;
  // The sizes, bounded so that no product overflows: a leaf never exceeds a server value.
  int64_t row = static_cast<int64_t>(c10::elementSize(meta.dtype));
  for (size_t d = 1; d < meta.shape.size(); ++d) {
    if (meta.shape[d] != 0 && row > TensorDictStore::kMaxValueBytes / meta.shape[d])
      throw FormatError(what() + ": shape " + fields["shape"] + " is larger than any store value");
    row *= meta.shape[d];
  }
  const int64_t rows = meta.shape.empty() ? 1 : meta.shape[0];
  if (rows != 0 && row > TensorDictStore::kMaxValueBytes / rows)
    throw FormatError(what() + ": shape " + fields["shape"] + " is larger than any store value");
  meta.row_bytes = row;
  meta.nbytes = row * rows;
  return meta;
}

const std::string& string_reply(const Reply& r, const std::string& what) {
  if (r.type == Reply::Type::Error) throw_reply(r, what);
  if (r.type != Reply::Type::String) throw FormatError(what + ": not a string value");
  return r.str;
}

void check_ok(const std::vector<Reply>& replies, const std::string& what) {
  for (const Reply& r : replies)
    if (r.type == Reply::Type::Error) throw_reply(r, what);
}

namespace {
// `talk()`, its connection errors and timeouts named by `what`.
template <class Talk>
auto naming(const std::string& what, Talk talk) {
  try {
    return talk();
  } catch (const TimeoutError& e) {
    throw TimeoutError(what + ": " + e.what());
  } catch (const ConnectionError& e) {
    throw ConnectionError(what + ": " + e.what());
  }
}
}  // namespace

std::vector<Reply> exchange(Connection& conn, const std::vector<Command>& commands,
                            bool transaction, const std::string& what) {
  return naming(what, [&] { return conn.pipeline(commands, transaction); });
}

std::vector<std::vector<Reply>> exchange_transactions(
    Connection& conn, const std::vector<std::vector<Connection::CommandView>>& groups,
    const std::string& what) {
  return naming(what, [&] { return conn.transactions(groups); });
}

at::Tensor from_bytes(const std::string& path, const std::string& bytes, const Meta& meta) {
  if (static_cast<int64_t>(bytes.size()) != meta.nbytes)
    throw FormatError("store leaf " + repr(path) + " holds " + std::to_string(bytes.size()) +
                      " bytes; its shape " + shape_text(meta.shape) + " and dtype " +
                      dtype_text(meta.dtype) + " need " + std::to_string(meta.nbytes));
  // Straight to the CPU allocator: at::empty's dispatch costs as much as a small leaf's copy.
  at::Tensor out(at::detail::empty_cpu(meta.shape, meta.dtype));
  if (!bytes.empty()) std::memcpy(out.data_ptr(), bytes.data(), bytes.size());
  return out;
}

at::Tensor from_bytes(const std::string& path, std::string&& bytes, const Meta& meta) {
  // A small value is copied: adopting its string costs two allocations more than the copy.
  constexpr size_t kAdoptFrom = 4096;
  if (static_cast<int64_t>(bytes.size()) != meta.nbytes || bytes.size() < kAdoptFrom)
    return from_bytes(path, static_cast<const std::string&>(bytes), meta);
  auto* owner = new std::string(std::move(bytes));  // freed with the tensor's storage
  return at::from_blob(
      owner->data(), meta.shape, [owner](void*) { delete owner; },
      at::TensorOptions().dtype(meta.dtype));
}

at::Tensor contiguous_cpu(const at::Tensor& t) {
  // The usual leaf is one already: no dispatcher round trips for it.
  if (t.device().is_cpu() && t.is_contiguous() && !t.is_conj() && !t.is_neg()) return t;
  return t.detach().to(at::kCPU).resolve_conj().resolve_neg().contiguous();
}

std::string_view bytes_of(const at::Tensor& contiguous) {
  return {static_cast<const char*>(contiguous.data_ptr()), contiguous.nbytes()};
}

std::string to_bytes(const at::Tensor& t) { return std::string(bytes_of(contiguous_cpu(t))); }

std::string uuid4() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::array<uint8_t, 16> b{};
  for (auto& x : b) x = static_cast<uint8_t>(gen());
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += hex[b[i] >> 4];
    out += hex[b[i] & 15];
  }
  return out;
}

const std::string* Meta::field(const std::string& name) const {
  for (const auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}

Meta Meta::of_tensor(at::IntArrayRef shape, at::ScalarType dtype) {
  Meta meta;
  meta.shape = shape.vec();
  meta.dtype = dtype;
  meta.row_bytes = static_cast<int64_t>(c10::elementSize(dtype));
  for (size_t d = 1; d < shape.size(); ++d) meta.row_bytes *= shape[d];
  meta.nbytes = meta.row_bytes * (shape.empty() ? 1 : shape[0]);
  return meta;
}

}  // namespace tensordict::store::layout
