#include "frontend/type_parser.h"

#include <cctype>
#include <map>
#include <stdexcept>

#include "frontend/input_checks.h"
#include "model/kinds.h"
#include "model/name_rules.h"

namespace tcgen {
namespace {

// The contract's field kinds by their schema spelling (a class is named by its own name), and
// optional[...].
const std::map<std::string, TypeKind>& builtin_kinds() {
  static const std::map<std::string, TypeKind> kinds = [] {
    std::map<std::string, TypeKind> out;
    for (size_t i = 0; i <= static_cast<size_t>(TypeKind::Optional); ++i) {
      const auto kind = static_cast<TypeKind>(i);
      if (traits(kind).form != KindForm::Class) out.emplace(schema_spelling(kind), kind);
    }
    return out;
  }();
  return kinds;
}

// Recursive descent over one type expression; the first problem stops it (one message per type).
class Parser {
 public:
  Parser(const std::string& text, const SourceLoc& loc, Diagnostics& diagnostics)
      : text_(text), loc_(loc), diagnostics_(diagnostics) {}

  bool parse(Type& out) {
    if (!parse_type(out)) return false;
    skip_spaces();
    if (pos_ != text_.size()) return fail("unexpected '" + text_.substr(pos_, 60) + "' after type");
    return true;
  }

 private:
  SourceLoc here() const {
    SourceLoc loc = loc_;
    loc.column += static_cast<int>(pos_);
    return loc;
  }
  bool fail(const std::string& message) {
    constexpr size_t kQuoted = 60;  // hostile types can be megabytes long
    const std::string quoted = text_.size() <= kQuoted ? text_ : text_.substr(0, kQuoted) + "...";
    diagnostics_.error(here(), "malformed type '" + quoted + "': " + message);
    return false;
  }
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool peek(char c) {
    skip_spaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool expect(char c) {
    if (!peek(c)) return fail(std::string("expected '") + c + "'");
    ++pos_;
    return true;
  }
  std::string identifier() {
    skip_spaces();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  // `Name` or `ns::Name`: a class of another namespace may be named with its namespace.
  std::string qualified_identifier() {
    std::string name = identifier();
    while (!name.empty() && text_.compare(pos_, 2, "::") == 0) {
      pos_ += 2;
      const std::string part = identifier();
      if (part.empty()) return "";
      name += "::" + part;
    }
    return name;
  }

  bool parse_type(Type& out) {
    skip_spaces();
    out.loc = here();
    std::string name = qualified_identifier();
    if (name.empty()) return fail("expected a type name");
    auto builtin = builtin_kinds().find(name);
    if (builtin == builtin_kinds().end()) {
      out.kind = TypeKind::Class;
      out.class_name = name;
      if (peek('[')) return fail("class type '" + name + "' takes no parameters");
      return true;
    }
    out.kind = builtin->second;
    switch (form_of(out)) {
      case KindForm::Tensor:
        return peek('[') ? parse_tensor_params(out) : true;
      case KindForm::List:
      case KindForm::Optional:
        return parse_element(name, out);
      case KindForm::Value:
      case KindForm::Class:
        if (peek('[')) return fail("'" + name + "' takes no parameters");
        return true;
    }
    return false;
  }

  bool parse_element(const std::string& name, Type& out) {
    if (!peek('[')) return fail("'" + name + "' needs an element type: " + name + "[T]");
    if (++depth_ > kMaxNesting) {
      return fail("nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ++pos_;
    out.args.emplace_back();
    return parse_type(out.args.back()) && expect(']');
  }

  bool parse_tensor_params(Type& out) {
    ++pos_;  // '['
    if (!peek('(')) {
      SourceLoc at = here();
      std::string dtype = identifier();
      if (dtype.empty()) return fail("expected a dtype or a shape");
      if (!is_dtype(dtype)) {
        diagnostics_.error(at,
                           "unknown dtype '" + dtype + "' (expected one of " + dtype_list() + ")");
        return false;
      }
      out.dtype = dtype;
      if (peek(',')) {
        ++pos_;
        if (!peek('(')) return fail("expected a shape like (B, 3)");
      }
    }
    if (peek('(') && !parse_shape(out)) return false;
    return expect(']');
  }

  bool parse_shape(Type& out) {
    ++pos_;  // '('
    out.shape.emplace();
    if (peek(')')) return ++pos_, true;
    do {
      if (!out.shape->empty()) ++pos_;  // ','
      if (!parse_dim(*out.shape)) return false;
    } while (peek(','));
    return expect(')');
  }

  bool parse_dim(std::vector<Dim>& dims) {
    std::string token = identifier();
    if (token.empty()) return fail("expected a dim size or name");
    Dim dim;
    if (std::isdigit(static_cast<unsigned char>(token[0]))) {
      for (char c : token) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return fail("bad dim '" + token + "'");
      }
      try {
        dim.size = std::stoll(token);
      } catch (const std::out_of_range&) {
        return fail("dim " + token + " is too large");
      }
    } else {
      dim.name = token;
    }
    dims.push_back(dim);
    return true;
  }

  const std::string& text_;
  SourceLoc loc_;
  Diagnostics& diagnostics_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

bool parse_type(const std::string& text, const SourceLoc& loc, Type& out,
                Diagnostics& diagnostics) {
  if (Parser(text, loc, diagnostics).parse(out)) return true;
  // What was parsed before the problem is not a type: a class without a name, which the checker
  // knows as "already reported".
  out = Type{};
  out.kind = TypeKind::Class;
  out.loc = loc;
  return false;
}

}  // namespace tcgen
