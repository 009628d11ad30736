#pragma once
// User text (docs, string defaults, file names) in generated source: which characters cannot be
// written as themselves, the one rule that C++'s and Python's spellings of text share, and
// cpp_text, C++'s spelling (here, not under emit/cpp/, because the checks quote user text with
// it; Python's, python_text, is emit/python/names.h's). Every place that writes user text into
// generated code goes through one of those two.

#include <cstddef>
#include <string>

namespace tcgen {

/// A character of UTF-8 text, or a byte that starts no valid UTF-8 sequence (`valid` false,
/// `value` the byte, `size` 1).
struct TextChar {
  char32_t value;
  size_t size;  ///< bytes it takes in the text
  bool valid;
};

/// Length of the UTF-8 sequence at text[i], 0 when it is not a valid one (overlong forms,
/// surrogates and code points past U+10FFFF included).
size_t utf8_length(const std::string& text, size_t i);

/// The character at text[i] (i < text.size()).
TextChar text_char_at(const std::string& text, size_t i);

/// U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: characters that reorder how a line
/// displays.
bool is_bidi_control(char32_t c);

/// Whether a character must be escaped wherever user text goes into generated source: a control
/// character (C0, DEL, C1: a tokenizer may end a line, a comment or the file at one; Python
/// refuses NUL), a line or paragraph separator (U+2028, U+2029: editors break the line there), a
/// bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: the source
/// would read differently from what it does, "Trojan Source"), a byte order mark (U+FEFF), or a
/// byte that is not UTF-8.
bool needs_escape(const TextChar& c);

/// Whether no character of `text` needs_escape: it can be written into source as it is.
bool is_plain_text(const std::string& text);

/// How the comments of both languages (and Python's literals) spell a character that
/// needs_escape: `\t`, `\n`, `\r`, `\xNN` for the other ASCII controls and for a byte that is not
/// UTF-8, `\uNNNN` for the others.
std::string escape_sequence(const TextChar& c);

/// Where cpp_text puts user text in a header.
enum class CppText {
  Comment,    ///< the text of one `//` comment line (a line feed in it is escaped too)
  Literal,    ///< a "..." literal holding exactly the text's bytes (up to a NUL: see text_literal)
  InLiteral,  ///< the same between the quotes a template writes (`"{{header}} was ..."`)
};
/// `text` as C++ source of `form`; every place that writes user text into a header (docs, string
/// defaults, names in literals, the schema's file name) goes through it. Characters that
/// needs_escape (source_text.h) are escaped: in a comment as `\r`, `\x00`, `\u2028`; in a literal
/// as octal escapes of their bytes (which never swallow a following digit, as `\x` would), with
/// `"`, `\` and the second '?' of a pair (a trigraph under -trigraphs) escaped too. A comment
/// line ending in a backslash would continue onto the next line: check.cpp refuses doc words
/// that end in one.
std::string cpp_text(const std::string& text, CppText form);

}  // namespace tcgen
