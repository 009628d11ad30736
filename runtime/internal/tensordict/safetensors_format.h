#pragma once
// The safetensors file format, torch-free (runtime/src/memmap/safetensors_format.cpp): its dtypes,
// the header a reader checks and the header a writer emits. The runtime's reader and writer
// (tensordict/safetensors.h) and `tcgen import x.safetensors` share it. Not installed.
//
// The format (facts from huggingface/safetensors): an 8-byte little-endian header length N, N
// bytes of JSON (an object: per tensor {"dtype", "shape", "data_offsets": [begin, end]}, offsets
// relative to the data that follows the header, plus an optional "__metadata__" map of strings),
// padded with spaces; then the data, each tensor's bytes row-major and little-endian. The data
// of the tensors, taken in offset order, covers the rest of the file exactly.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensordict::safetensors {

/// A dtype of the format: its name in headers, the torch dtype it is (`torch_name`, "" when
/// torch has none; `scalar_type`, the c10::ScalarType enumerator, resolved by name at run time
/// because the libtorch versions supported have different sets), and bits per element.
struct Dtype {
  std::string_view name;
  std::string_view torch_name;
  std::string_view scalar_type;
  int bits;
  /// torch's element packs this many of the format's (float4_e2m1fn_x2 holds two F4 values), so
  /// the header's last dim is `packing` times the tensor's.
  int packing = 1;
};

/// Every dtype of the format, in the order of the reference implementation's enum: a writer lays
/// the tensors out by this rank, highest first (then by name), which keeps every tensor aligned.
inline constexpr std::array<Dtype, 22> kDtypes{{
    {"BOOL", "bool", "Bool", 8},
    {"F4", "float4_e2m1fn_x2", "Float4_e2m1fn_x2", 4, 2},
    {"F6_E2M3", "", "", 6},
    {"F6_E3M2", "", "", 6},
    {"U8", "uint8", "Byte", 8},
    {"I8", "int8", "Char", 8},
    {"F8_E5M2", "float8_e5m2", "Float8_e5m2", 8},
    {"F8_E4M3", "float8_e4m3fn", "Float8_e4m3fn", 8},
    {"F8_E8M0", "float8_e8m0fnu", "Float8_e8m0fnu", 8},
    {"F8_E4M3FNUZ", "float8_e4m3fnuz", "Float8_e4m3fnuz", 8},
    {"F8_E5M2FNUZ", "float8_e5m2fnuz", "Float8_e5m2fnuz", 8},
    {"I16", "int16", "Short", 16},
    {"U16", "uint16", "UInt16", 16},
    {"F16", "float16", "Half", 16},
    {"BF16", "bfloat16", "BFloat16", 16},
    {"I32", "int32", "Int", 32},
    {"U32", "uint32", "UInt32", 32},
    {"F32", "float32", "Float", 32},
    {"C64", "complex64", "ComplexFloat", 64},
    {"F64", "float64", "Double", 64},
    {"I64", "int64", "Long", 64},
    {"U64", "uint64", "UInt64", 64},
}};

/// The format's bound on the header (the reference reader refuses longer ones).
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
/// Bytes of the header length, and the alignment a writer pads the header to.
inline constexpr uint64_t kLengthBytes = 8;
/// The header's entry for the file's string map.
inline constexpr std::string_view kMetadataKey = "__metadata__";

/// The format's dtype named `name`, or null.
const Dtype* find_dtype(std::string_view name);
/// The rank of `dtype` in kDtypes.
size_t dtype_rank(const Dtype& dtype);

/// The file's string map, in header order.
using Metadata = std::vector<std::pair<std::string, std::string>>;

/// One tensor of a file.
struct TensorEntry {
  std::string name;
  const Dtype* dtype = nullptr;
  /// As the header writes it (for F4: the count of F4 values in the last dim).
  std::vector<int64_t> shape;
  /// Byte offsets relative to the data (the first byte after the header).
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// A parsed, checked header.
struct Header {
  /// In offset order.
  std::vector<TensorEntry> tensors;
  Metadata metadata;
  /// File offset of the data: kLengthBytes + the header length.
  uint64_t data_start = 0;
};

/// Parses and checks the header of a file of `size` bytes at `bytes` (`where` names it in
/// errors): the length within the format's bound and the file, the JSON an object of tensor
/// entries (dtype of the format, shape of non-negative dims, data offsets) and one metadata map
/// of strings, no name twice, and the tensors' data, in offset order, covering the rest of the
/// file exactly with the sizes their dtypes and shapes need. FormatError naming the file (and
/// the tensor) otherwise.
Header parse_header(const unsigned char* bytes, uint64_t size, const std::string& where);

/// Bytes of a file's header as the reference writer emits it (length, JSON, space padding) for
/// `tensors` in the order given (each entry's offsets already set) and `metadata` (no
/// "__metadata__" entry when empty).
std::string format_header(const std::vector<TensorEntry>& tensors, const Metadata& metadata);

}  // namespace tensordict::safetensors
