#include "tensordict/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tensordict/errors.h"
#include "tensordict/json_builder.h"

namespace tensordict {
namespace {

// Shortest "%.{p}e" spelling that parses back to `value`: its digits and decimal exponent.
void shortest_digits(double value, std::string& digits, int& exponent) {
  char buf[64];
  for (int precision = 0; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  const std::string s(buf);
  const size_t e = s.find('e');
  exponent = std::atoi(s.c_str() + e + 1);
  for (size_t i = 0; i < e; ++i) {
    if (s[i] >= '0' && s[i] <= '9') digits += s[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

void append_utf16_escape(std::string& out, unsigned code) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", code);
  out += buf;
}

// Decodes one UTF-8 code point starting at s[i]; advances i. Invalid bytes map to U+FFFD.
unsigned next_code_point(std::string_view s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = byte(i);
  const int extra = c < 0x80           ? 0
                    : (c >> 5) == 0x6  ? 1
                    : (c >> 4) == 0xE  ? 2
                    : (c >> 3) == 0x1E ? 3
                                       : -1;
  if (extra < 0 || i + static_cast<size_t>(extra) >= s.size() + (extra == 0 ? 1 : 0)) {
    ++i;
    return 0xFFFD;
  }
  unsigned code = extra == 0 ? c : c & (0x3Fu >> extra);
  for (int k = 1; k <= extra; ++k) code = (code << 6) | (byte(i + static_cast<size_t>(k)) & 0x3F);
  i += static_cast<size_t>(extra) + 1;
  return code;
}

void dump_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20 || (ensure_ascii && c == 0x7F)) {
      append_utf16_escape(out, c);
      ++i;
    } else if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const unsigned code = next_code_point(s, i);
      if (code >= 0x10000) {
        append_utf16_escape(out, 0xD800 + ((code - 0x10000) >> 10));
        append_utf16_escape(out, 0xDC00 + ((code - 0x10000) & 0x3FF));
      } else {
        append_utf16_escape(out, code);
      }
    }
  }
  out += '"';
}

void dump(std::string& out, const Json& value, const JsonStyle& style) {
  const char* item_sep = style.compact ? "," : ", ";
  const char* key_sep = style.compact ? ":" : ": ";
  switch (value.type()) {
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      out += std::to_string(value.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      out += std::to_string(value.get<uint64_t>());
      return;
    case Json::value_t::number_float: {
      const double d = value.get<double>();
      out += std::isnan(d)   ? "NaN"
             : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity")
                             : python_float_repr(d);
      return;
    }
    case Json::value_t::string:
      dump_string(out, value.get_ref<const std::string&>(), style.ensure_ascii);
      return;
    case Json::value_t::array: {
      out += '[';
      for (size_t i = 0; i < value.size(); ++i) {
        if (i) out += item_sep;
        dump(out, value[i], style);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += item_sep;
        first = false;
        dump_string(out, key, style.ensure_ascii);
        out += key_sep;
        dump(out, item, style);
      }
      out += '}';
      return;
    }
    default:
      throw TypeError("cannot write a binary JSON value as text");
  }
}

// Sentinel strings standing for Python's non-finite tokens while nlohmann parses the text.
constexpr std::string_view kNonFinite[] = {"NaN", "Infinity", "-Infinity"};
const std::string kSentinel("\x01py-nonfinite:", 14);

std::string replace_non_finite_tokens(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (auto token : kNonFinite) {
      if (text.substr(i, token.size()) == token) {
        out += "\"\\u0001py-nonfinite:" + std::string(token) + '"';  // parses to kSentinel
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

void restore_non_finite(Json& value) {
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (s.compare(0, kSentinel.size(), kSentinel) != 0) return;
    const std::string token = s.substr(kSentinel.size());
    value = token == "NaN" ? std::nan("") : token == "Infinity" ? HUGE_VAL : -HUGE_VAL;
  } else if (value.is_structured()) {
    for (auto& item : value) restore_non_finite(item);
  }
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  std::string digits;
  int exponent = 0;
  shortest_digits(std::fabs(value), digits, exponent);
  std::string out = value < 0 ? "-" : "";
  if (exponent < -4 || exponent >= 16) {  // Python switches to scientific notation here
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char buf[16];
    std::snprintf(buf, sizeof buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + buf;
  }
  if (exponent < 0)
    return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  const auto int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len)
    return out + digits + std::string(int_len - digits.size(), '0') + ".0";
  return out + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

std::string python_repr(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      const bool has_single = s.find('\'') != std::string::npos;
      const bool has_double = s.find('"') != std::string::npos;
      const char quote = has_single && !has_double ? '"' : '\'';
      std::string out(1, quote);
      for (char c : s) {
        if (c == quote || c == '\\') out += '\\';
        if (c == '\n') {
          out += "\\n";
          continue;
        }
        out += c;
      }
      return out + quote;
    }
    case Json::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case Json::value_t::null:
      return "None";
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_repr(value[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : value.items()) {
        out += (first ? "'" : ", '") + k + "': " + python_repr(v);
        first = false;
      }
      return out + "}";
    }
    case Json::value_t::number_float:
      return python_float_repr(value.get<double>());
    default:
      return value.dump();
  }
}

std::string dumps_python(const Json& value, JsonStyle style) {
  std::string out;
  dump(out, value, style);
  return out;
}

namespace {

// The value of a JSON text as nlohmann's parser would build it, in time linear in its size
// (format::LinearJsonBuilder); a duplicate key is refused, where nlohmann keeps the last one.
Json parse_linear(std::string_view text, const std::string& what) {
  format::LinearJsonBuilder builder(static_cast<size_t>(kMaxJsonDepth));
  if (builder.parse(text)) return builder.take();
  switch (builder.stop()) {
    case format::LinearJsonBuilder::Stop::DuplicateKey:
      throw FormatError(what + ": duplicate key \"" + builder.detail() + "\"");
    case format::LinearJsonBuilder::Stop::TooDeep:
      throw FormatError(what + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels");
    default:
      throw FormatError(what + ": malformed JSON (" + builder.detail() + ")");
  }
}

}  // namespace

Json parse_json(std::string_view text, const std::string& what) {
  const bool maybe_non_finite =
      text.find("NaN") != std::string_view::npos || text.find("Infinity") != std::string_view::npos;
  if (!maybe_non_finite) return parse_linear(text, what);
  Json value = parse_linear(replace_non_finite_tokens(text), what);
  restore_non_finite(value);
  return value;
}

}  // namespace tensordict
