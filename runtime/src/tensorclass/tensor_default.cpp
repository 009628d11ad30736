#include "tensordict/tensor_default.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace tensordict {
namespace {

using Json = nlohmann::ordered_json;
using Form = TensorDefault::Form;

// A factory call's text, read left to right; every reader skips the blanks before its token.
class CallReader {
 public:
  explicit CallReader(std::string_view text) : text_(text) {}

  void skip_blanks() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_blanks();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  bool at_end() {
    skip_blanks();
    return at_ == text_.size();
  }
  std::string word() {
    skip_blanks();
    const size_t begin = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_' ||
            text_[at_] == '.' || text_[at_] == '-' || text_[at_] == '+')) {
      ++at_;
    }
    return std::string(text_.substr(begin, at_ - begin));
  }
  // Sizes up to `close` (already past the opening bracket): `3, 4`, `2,` or nothing.
  bool sizes(char close, std::vector<int64_t>& out, std::string& error) {
    if (take(close)) return true;
    do {
      if (!out.empty() && take(close)) return true;  // a trailing comma, as in (2,)
      const std::string size = word();
      char* end = nullptr;
      const long long value = std::strtoll(size.c_str(), &end, 10);
      if (size.empty() || *end != '\0' || value < 0) {
        error = "size '" + size + "' is not a non-negative integer";
        return false;
      }
      out.push_back(value);
    } while (take(','));
    if (take(close)) return true;
    error = std::string("expected ',' or '") + close + "'";
    return false;
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

bool read_fill(const std::string& text, TensorDefault& out, std::string& error) {
  out.fill = text;
  if (text == "true" || text == "false") return out.fill_is_bool = true;
  out.fill_is_float = text.find_first_of(".eE") != std::string::npos;
  // Digits, signs, a point, an exponent: a number both C++ and Python read (no `nan`, `0x1p3`),
  // in range (an int64, or a finite double).
  const bool plain =
      !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  if (out.fill_is_float) {
    std::strtod(text.c_str(), &end);
  } else {
    std::strtoll(text.c_str(), &end, 10);
  }
  if (!plain || *end != '\0' || errno == ERANGE) {
    error = "fill value '" + text + "' is not a number or a bool (in range)";
    return false;
  }
  return true;
}

std::optional<TensorDefault> read_call(const std::string& text, std::string& error) {
  CallReader reader(text);
  const std::string name = reader.word();
  TensorDefault out;
  bool known = false;
  for (Form form : {Form::Zeros, Form::Ones, Form::Full}) {
    if (name == factory_name(form)) out.form = form, known = true;
  }
  if (!known) {
    error = "unknown factory '" + name + "' (zeros, ones, full)";
    return std::nullopt;
  }
  if (!reader.take('(')) {
    error = "expected '(' after '" + name + "'";
    return std::nullopt;
  }
  if (out.form == Form::Full) {  // full((2, 3), 0.5): the sizes as a tuple or a list
    const bool tuple = reader.take('(');
    if (!tuple && !reader.take('[')) {
      error = "full takes its sizes first, as (2, 3)";
      return std::nullopt;
    }
    if (!reader.sizes(tuple ? ')' : ']', out.sizes, error)) return std::nullopt;
    if (!reader.take(',')) {
      error = "full takes a fill value after its sizes";
      return std::nullopt;
    }
    if (!read_fill(reader.word(), out, error)) return std::nullopt;
    if (!reader.take(')')) {
      error = "expected ')'";
      return std::nullopt;
    }
  } else if (!reader.sizes(')', out.sizes, error)) {
    return std::nullopt;
  }
  if (!reader.at_end()) {
    error = "unexpected text after the call";
    return std::nullopt;
  }
  return out;
}

// Whether `value` at `depth` has the shape `sizes` (from that depth on) and holds only numbers.
bool has_shape(const Json& value, size_t depth, const std::vector<int64_t>& sizes) {
  if (depth == sizes.size()) return value.is_number() || value.is_boolean();
  if (!value.is_array() || static_cast<int64_t>(value.size()) != sizes[depth]) return false;
  for (const auto& item : value) {
    if (!has_shape(item, depth + 1, sizes)) return false;
  }
  return true;
}

// A literal's shape, as torch.tensor reads it (along the first items); false when the literal is
// ragged or holds something else than numbers.
bool literal_shape(const Json& value, std::vector<int64_t>& sizes) {
  for (const Json* level = &value; level->is_array(); level = &level->front()) {
    sizes.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  return has_shape(value, 0, sizes);
}

}  // namespace

const char* factory_name(Form form) {
  switch (form) {
    case Form::Zeros:
      return "zeros";
    case Form::Ones:
      return "ones";
    case Form::Full:
      return "full";
    case Form::Literal:
      break;
  }
  return "tensor";
}

std::optional<TensorDefault> read_tensor_default(const Json& value, std::string& error) {
  std::optional<TensorDefault> out;
  if (value.is_string()) {
    out = read_call(value.get<std::string>(), error);
  } else if (TensorDefault literal; literal_shape(value, literal.sizes)) {
    literal.literal = value;
    out = std::move(literal);
  } else {
    error = "a literal tensor default is a number, a bool or a rectangular list of them";
  }
  if (!out) return out;
  // Made for every instance: a default is small.
  int64_t elements = 1;
  for (const int64_t size : out->sizes) {  // saturating past the limit: no overflow
    elements = size > kMaxTensorDefaultElements
                   ? kMaxTensorDefaultElements + 1
                   : std::min(elements * size, kMaxTensorDefaultElements + 1);
  }
  if (elements > kMaxTensorDefaultElements) {
    error = "it has more than " + std::to_string(kMaxTensorDefaultElements) +
            " elements (a default is made for every instance)";
    return std::nullopt;
  }
  return out;
}

}  // namespace tensordict
