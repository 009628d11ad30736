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
//
// Read by a scanner in one pass over the text, linear in its length whatever it holds (a regex
// here was quadratic in a long identifier).
#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string>

#include "tensordict/errors.h"
#include "tensordict/nn/call_spec.h"

namespace tensordict::nn {
namespace {

constexpr std::string_view kFunction = "static void check_input_";

// The dim `d` of `sig`, growing its dims to hold it.
DimRange& dim(InputSignature& sig, std::string_view d) {
  const size_t index = std::stoul(std::string(d));
  if (index >= 64) {
    throw FormatError("an input check reads dim " + std::string(d) +
                      ": more dims than a tensor has");
  }
  if (sig.dims.size() <= index) sig.dims.resize(index + 1);
  return sig.dims[index];
}

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A position in the text that reads the pieces of one statement; each read advances past what
// it matched, or fails.
struct Scanner {
  std::string_view text;
  size_t at;

  bool literal(std::string_view piece) {
    if (text.substr(at, piece.size()) != piece) return false;
    at += piece.size();
    return true;
  }
  std::string_view word() {
    const size_t begin = at;
    while (at < text.size() && is_word(text[at])) ++at;
    return text.substr(begin, at - begin);
  }
  std::optional<std::string_view> integer(bool signed_) {
    const size_t begin = at;
    if (signed_ && at < text.size() && text[at] == '-') ++at;
    const size_t digits = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) != 0) ++at;
    if (at == digits) return std::nullopt;
    return text.substr(begin, at - begin);
  }
  // `<name>_size[<dim>]`, the dim read into `d`.
  bool size_of(std::string_view& d) {
    const std::string_view name = word();
    if (name.size() <= 5 || name.substr(name.size() - 5) != "_size" || !literal("[")) return false;
    const auto digits = integer(false);
    if (!digits || !literal("]")) return false;
    d = *digits;
    return true;
  }
};

// `<x>_expected_dtype = aoti_torch_dtype_<dtype>()`: the first such statement's dtype.
std::string dtype_of(std::string_view body) {
  constexpr std::string_view kDtype = "_expected_dtype = aoti_torch_dtype_";
  for (size_t at = body.find(kDtype); at != std::string_view::npos;
       at = body.find(kDtype, at + 1)) {
    if (at == 0 || !is_word(body[at - 1])) continue;
    Scanner s{body, at + kDtype.size()};
    const std::string_view dtype = s.word();
    if (!dtype.empty() && s.literal("()")) return std::string(dtype);
  }
  return "";
}

// The statements `if (<x>_size[d] < n)`, `if (<x>_size[d] > n)` and `if (n != <x>_size[d])`.
InputSignature parse_one(std::string_view body) {
  InputSignature sig;
  sig.dtype = dtype_of(body);
  for (size_t at = body.find("if ("); at != std::string_view::npos;
       at = body.find("if (", at + 1)) {
    Scanner bound{body, at + 4};
    std::string_view d;
    if (bound.size_of(d)) {
      const bool below = bound.literal(" < ");
      if (below || bound.literal(" > ")) {
        if (const auto n = bound.integer(true); n && bound.literal(")")) {
          DimRange& range = dim(sig, d);
          (below ? range.min : range.max) = std::stoll(std::string(*n));
        }
      }
      continue;
    }
    Scanner fixed{body, at + 4};
    if (const auto n = fixed.integer(true);
        n && fixed.literal(" != ") && fixed.size_of(d) && fixed.literal(")")) {
      DimRange& range = dim(sig, d);
      range.min = range.max = std::stoll(std::string(*n));
    }
  }
  return sig;
}

}  // namespace

std::vector<InputSignature> parse_input_checks(std::string_view source, size_t max_inputs) {
  std::vector<InputSignature> inputs;
  size_t at = source.find(kFunction);
  while (at != std::string_view::npos) {
    const size_t number = at + kFunction.size();
    size_t digits = number;
    while (digits < source.size() && source[digits] >= '0' && source[digits] <= '9') ++digits;
    const std::string index(source.substr(number, std::min<size_t>(digits - number, 20)));
    if (index != std::to_string(inputs.size())) {
      throw FormatError("the package's input checks are out of order: check_input_" + index +
                        " where check_input_" + std::to_string(inputs.size()) + " was expected");
    }
    if (inputs.size() == max_inputs) {
      throw FormatError("the package has a check_input_" + index + ", more input checks than " +
                        "its " + std::to_string(max_inputs) + " inputs");
    }
    const size_t next = source.find(kFunction, digits);
    // A function ends at the next one; the last, at the first function that is not a check.
    const size_t end = next != std::string_view::npos ? next : source.find("static bool", digits);
    try {
      inputs.push_back(parse_one(
          source.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at)));
    } catch (const std::logic_error&) {  // std::stoll's out_of_range: a size past int64
      throw FormatError("the package's check_input_" + index + " has a size past int64");
    }
    at = next;
  }
  return inputs;
}

}  // namespace tensordict::nn
