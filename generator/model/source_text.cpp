#include "model/source_text.h"

#include <cstdio>

namespace tcgen {

size_t utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF   ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  const unsigned second = byte(i + 1);
  if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second > 0x9F) ||
      (c == 0xF0 && second < 0x90) || (c == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return n;
}

TextChar text_char_at(const std::string& text, size_t i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const size_t n = utf8_length(text, i);
  if (n == 0) return TextChar{byte, 1, false};
  if (n == 1) return TextChar{byte, 1, true};
  // The lead byte keeps 7 - n bits, each continuation byte 6.
  char32_t value = byte & (0x7F >> n);
  for (size_t k = 1; k < n; ++k)
    value = (value << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return TextChar{value, n, true};
}

bool is_bidi_control(char32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

bool needs_escape(const TextChar& c) {
  if (!c.valid) return true;
  const char32_t v = c.value;
  const bool control = v < 0x20 || (v >= 0x7F && v <= 0x9F);
  const bool separator = v == 0x2028 || v == 0x2029;
  return control || separator || is_bidi_control(v) || v == 0xFEFF;
}

bool is_plain_text(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const TextChar c = text_char_at(text, i);
    if (needs_escape(c)) return false;
    i += c.size;
  }
  return true;
}

std::string escape_sequence(const TextChar& c) {
  if (c.valid && c.value == '\t') return "\\t";
  if (c.valid && c.value == '\n') return "\\n";
  if (c.valid && c.value == '\r') return "\\r";
  char text[16];
  if (!c.valid || c.value < 0x80) {
    std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(c.value));
  } else {
    std::snprintf(text, sizeof text, "\\u%04x", static_cast<unsigned>(c.value));
  }
  return text;
}

namespace {

// Octal escapes of a character's bytes: `\015`, `\342\200\250`.
std::string octal_escapes(const std::string& text, size_t at, size_t size) {
  std::string out;
  for (size_t i = at; i < at + size; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const char octal[] = {'\\', static_cast<char>('0' + (byte >> 6)),
                          static_cast<char>('0' + ((byte >> 3) & 7)),
                          static_cast<char>('0' + (byte & 7)), '\0'};
    out += octal;
  }
  return out;
}

}  // namespace

std::string cpp_text(const std::string& text, CppText form) {
  const bool literal = form != CppText::Comment;
  const std::string quote = form == CppText::Literal ? "\"" : "";
  std::string out = quote;
  for (size_t i = 0; i < text.size();) {
    const TextChar c = text_char_at(text, i);
    const bool trigraph = c.value == '?' && i > 0 && text[i - 1] == '?';
    if (literal && (c.value == '"' || c.value == '\\' || trigraph)) {
      out += '\\';
      out += static_cast<char>(c.value);
    } else if (!needs_escape(c)) {
      out.append(text, i, c.size);
    } else if (literal && c.value == '\n') {
      out += "\\n";
    } else {
      out += literal ? octal_escapes(text, i, c.size) : escape_sequence(c);
    }
    i += c.size;
  }
  return out + quote;
}

}  // namespace tcgen
