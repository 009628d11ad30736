// parse_input_checks (tensordict/nn/call_spec.h): what an AOTInductor wrapper's source checks of
// each input. Torch-free: it reads text only.
//
// Recent releases' wrappers (torch 2.14's; not 2.6's) have, per runner input i, a function
//   static void check_input_<i>(AtenTensorHandle* input_handles) { ... }
// whose statements spell the requirements:
//   int32_t arg6_1_expected_dtype = aoti_torch_dtype_float32();
//   if (arg6_1_size[0] < 2) { ... }       a dynamic dim's lower bound
//   if (arg6_1_size[0] > 1024) { ... }    its upper bound
//   if (5 != arg6_1_size[1]) { ... }      a static dim
// (strides and the device are checked there too; a TensorDict's tensors are taken contiguous, and
// the device from the package's metadata).
#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string>

#include "tensordict/errors.h"
#include "tensordict/nn/call_spec.h"

namespace tensordict::nn {
namespace {

constexpr std::string_view kFunction = "static void check_input_";
// The longest check function read: torch's are about 1 KB. std::regex recurses per character it
// matches, so a hostile megabyte-long token would exhaust the stack; this bound keeps it shallow.
constexpr size_t kMaxCheckBytes = 16 * 1024;

// The dim `d` of `sig`, growing its dims to hold it.
DimRange& dim(InputSignature& sig, const std::string& d) {
  const size_t index = std::stoul(d);
  if (index >= 64)
    throw FormatError("an input check reads dim " + d + ": more dims than a tensor has");
  if (sig.dims.size() <= index) sig.dims.resize(index + 1);
  return sig.dims[index];
}

InputSignature parse_one(const std::string& body) {
  static const std::regex dtype(R"((\w+)_expected_dtype = aoti_torch_dtype_(\w+)\(\))");
  static const std::regex below(R"(if \(\w+_size\[(\d+)\] < (-?\d+)\))");
  static const std::regex above(R"(if \(\w+_size\[(\d+)\] > (-?\d+)\))");
  static const std::regex fixed(R"(if \((-?\d+) != \w+_size\[(\d+)\]\))");
  InputSignature sig;
  std::smatch m;
  if (std::regex_search(body, m, dtype)) sig.dtype = m[2];
  for (std::sregex_iterator it(body.begin(), body.end(), below), end; it != end; ++it) {
    dim(sig, (*it)[1]).min = std::stoll((*it)[2]);
  }
  for (std::sregex_iterator it(body.begin(), body.end(), above), end; it != end; ++it) {
    dim(sig, (*it)[1]).max = std::stoll((*it)[2]);
  }
  for (std::sregex_iterator it(body.begin(), body.end(), fixed), end; it != end; ++it) {
    DimRange& range = dim(sig, (*it)[2]);
    range.min = range.max = std::stoll((*it)[1]);
  }
  return sig;
}

}  // namespace

std::vector<InputSignature> parse_input_checks(std::string_view source) {
  std::vector<InputSignature> inputs;
  size_t at = source.find(kFunction);
  while (at != std::string_view::npos) {
    const size_t number = at + kFunction.size();
    size_t digits = number;
    while (digits < source.size() && source[digits] >= '0' && source[digits] <= '9') ++digits;
    const std::string index(source.substr(number, digits - number));
    if (index != std::to_string(inputs.size())) {
      throw FormatError("the package's input checks are out of order: check_input_" + index +
                        " where check_input_" + std::to_string(inputs.size()) + " was expected");
    }
    const size_t next = source.find(kFunction, digits);
    // A function ends at the next one; the last, at the first function that is not a check.
    const size_t end = next != std::string_view::npos ? next : source.find("static bool", digits);
    const size_t length = (end == std::string_view::npos ? source.size() : end) - at;
    if (length > kMaxCheckBytes) {
      throw FormatError("the package's check_input_" + index + " is " + std::to_string(length) +
                        " bytes long, more than the " + std::to_string(kMaxCheckBytes) +
                        " an input check takes");
    }
    try {
      inputs.push_back(parse_one(std::string(
          source.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at))));
    } catch (const std::logic_error&) {  // std::stoll's out_of_range: a size past int64
      throw FormatError("the package's check_input_" + index + " has a size past int64");
    }
    at = next;
  }
  return inputs;
}

}  // namespace tensordict::nn
