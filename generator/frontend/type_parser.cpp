#include "frontend/type_parser.h"

#include <cctype>
#include <map>
#include <optional>
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

// The wrappers by their schema spelling, Python's class names.
Wrapper wrapper_named(const std::string& name) {
  if (name == "MetaData") return Wrapper::MetaData;
  if (name == "NonTensorData") return Wrapper::NonTensorData;
  return Wrapper::None;
}

// Python's names of types that newcomers write, with the schema's name, or (when the schema has no
// such type) what to use instead. `str`, `int`, `float` and `bool` are spelt alike; dtypes are
// spelt as torch's without `torch.`.
struct PythonSpelling {
  std::string python;
  std::string schema;  // "" when the schema has no such type
  std::string instead;
};
constexpr const char* kNoDict =
    "the schema has no dict type; declare a class with a field per key, or use 'any'";
constexpr const char* kNoUnion =
    "the schema has no unions; write optional[T] for a T or None, else use 'any'";
const PythonSpelling kPythonSpellings[] = {
    {"Optional", "optional", ""},   {"List", "list", ""},    {"Tensor", "tensor", ""},
    {"torch.Tensor", "tensor", ""}, {"Any", "any", ""},      {"Dict", "", kNoDict},
    {"dict", "", kNoDict},          {"Union", "", kNoUnion},
};

// `name`'s row of kPythonSpellings, as written or after `typing.`, or a dtype after `torch.`;
// nullopt when it is no Python spelling.
std::optional<PythonSpelling> python_spelling(std::string name) {
  if (name.rfind("typing.", 0) == 0) name.erase(0, 7);
  static const std::string kTorch = "torch.";
  if (name.rfind(kTorch, 0) == 0 && is_dtype(name.substr(kTorch.size()))) {
    return PythonSpelling{name, name.substr(kTorch.size()), ""};
  }
  for (const auto& spelling : kPythonSpellings) {
    if (name == spelling.python) return spelling;
  }
  return std::nullopt;
}

// `text` as messages quote it: hostile types can be megabytes long.
std::string clipped(const std::string& text) {
  constexpr size_t kQuoted = 60;
  return text.size() <= kQuoted ? text : text.substr(0, kQuoted) + "...";
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
    diagnostics_.error(here(), "malformed type '" + clipped(text_) + "': " + message);
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
    if (const Wrapper wrapper = wrapper_named(name); wrapper != Wrapper::None) {
      return parse_wrapped(name, wrapper, out);
    }
    auto builtin = builtin_kinds().find(name);
    if (builtin == builtin_kinds().end()) {
      out.kind = TypeKind::Class;
      out.class_name = name;
      if (!peek('[')) return true;
      const std::string close = closest_name(name, {"tensor", "list", "optional"});
      return fail("class type '" + name + "' takes no parameters" +
                  (close.empty() ? "" : "; did you mean '" + close + "'?"));
    }
    out.kind = builtin->second;
    switch (form_of(out)) {
      case KindForm::Tensor:
        return peek('[') ? parse_tensor_params(out) : true;
      case KindForm::List:
      case KindForm::Optional:
        return parse_element(name, out);
      case KindForm::Value:
        if (traits(out.kind).is_tensordict && peek('[')) return parse_entry_types(out);
        [[fallthrough]];
      case KindForm::Class:
        if (peek('[')) return fail("'" + name + "' takes no parameters");
        return true;
    }
    return false;
  }

  // `MetaData[T]` / `NonTensorData[T]` (T a value type), or the name alone for `any`.
  bool parse_wrapped(const std::string& name, Wrapper wrapper, Type& out) {
    const SourceLoc at = out.loc;
    if (peek('[')) {
      Type holder;
      if (!parse_element(name, holder)) return false;
      out = std::move(holder.args[0]);
    } else {
      out.kind = TypeKind::Any;
    }
    const KindForm form = form_of(out);
    if (out.wrapper != Wrapper::None || (form != KindForm::Value && form != KindForm::List) ||
        traits(out.kind).is_tensordict) {
      diagnostics_.error(at, "'" + name +
                                 "[...]' holds a value type (str, int, float, bool, any, " +
                                 "list[...]), not '" + type_to_string(out) + "'");
      return false;
    }
    out.wrapper = wrapper;
    out.loc = at;
    return true;
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

  // `TensorDict[str, V]`, as Python annotates one: args are the key type and the value type.
  bool parse_entry_types(Type& out) {
    if (++depth_ > kMaxNesting) {
      return fail("nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ++pos_;  // '['
    for (int i = 0; i < 2; ++i) {
      if (i == 1 && !peek(',')) {
        return fail("TensorDict takes a key and a value type: TensorDict[str, tensor]");
      }
      if (i == 1) ++pos_;
      out.args.emplace_back();
      if (!parse_type(out.args.back())) return false;
    }
    if (!expect(']')) return false;
    // Keys are str; the C++ class checks each entry's tensor and dtype.
    const Type& key = out.args[0];
    const Type& value = out.args[1];
    if (key.kind != TypeKind::Str) {
      diagnostics_.error(key.loc, "the keys of '" + type_to_string(out) + "' must be 'str', not '" +
                                      type_to_string(key) + "'");
      return false;
    }
    if (value.kind != TypeKind::Tensor || value.shape) {
      diagnostics_.error(value.loc, "the values of '" + type_to_string(out) +
                                        "' must be 'tensor' or 'tensor[dtype]' (entries may "
                                        "have any shape), not '" +
                                        type_to_string(value) + "'");
      return false;
    }
    return true;
  }

  bool parse_tensor_params(Type& out) {
    ++pos_;  // '['
    if (!peek('(')) {
      SourceLoc at = here();
      std::string dtype = identifier();
      if (dtype.empty()) return fail("expected a dtype or a shape");
      if (!is_dtype(dtype)) {
        const std::string close = closest_name(dtype, dtype_names());
        diagnostics_.error(at, "unknown dtype '" + dtype + "' (" +
                                   (close.empty() ? "expected one of " + dtype_list()
                                                  : "did you mean '" + close + "'?") +
                                   ")");
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

// The first problem of a list in `type` (list_element_problem), "" when there is none.
std::string list_problem(const Type& type) {
  for (const auto& arg : type.args) {
    std::string problem = type.kind == TypeKind::List ? list_element_problem(arg) : "";
    if (problem.empty()) problem = list_problem(arg);
    if (!problem.empty()) return problem;
  }
  return "";
}

}  // namespace

std::string python_spelling_advice(const std::string& text) {
  const auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
  };
  if (text.find('|') != std::string::npos) return std::string("uses Python's '|': ") + kNoUnion;
  std::string rewritten;  // with the schema's names for Python's
  bool python = false;
  for (size_t i = 0; i < text.size();) {
    size_t end = i;
    while (end < text.size() && name_char(text[end])) ++end;
    if (end == i) {
      rewritten += text[i++];
      continue;
    }
    const std::string name = text.substr(i, end - i);
    const std::optional<PythonSpelling> spelling = python_spelling(name);
    if (spelling && spelling->schema.empty()) {
      return "uses Python's '" + name + "': " + spelling->instead;
    }
    python = python || spelling;
    rewritten += spelling ? spelling->schema : name;
    i = end;
  }
  Diagnostics problems(0);
  Type type;
  // Text that is malformed in the schema's spelling too is reported as malformed.
  if (!python || !Parser(rewritten, SourceLoc{}, problems).parse(type)) return "";
  const std::string problem = list_problem(type);
  if (!problem.empty()) {
    return "is Python's spelling of '" + clipped(rewritten) + "', but " + problem;
  }
  return "is Python's spelling: write '" + clipped(rewritten) + "'";
}

std::vector<std::string> builtin_type_names() {
  std::vector<std::string> names{"MetaData", "NonTensorData"};
  for (const auto& [name, kind] : builtin_kinds()) names.push_back(name);
  return names;
}

std::string list_element_problem(const Type& element) {
  const KindForm form = form_of(element);
  if (form != KindForm::Tensor && form != KindForm::Class) return "";
  const std::string name = type_to_string(element);
  return "list elements must be JSON-like (str, int, float, bool, any, list), not '" + name +
         "': " +
         (form == KindForm::Tensor
              ? std::string("for several tensors, use one tensor with one more dim")
              : "for several '" + name + "', use one '" + name + "' with one more batch dim");
}

bool parse_type(const std::string& text, const SourceLoc& loc, Type& out,
                Diagnostics& diagnostics) {
  Diagnostics problems(0);
  if (Parser(text, loc, problems).parse(out)) return true;
  // A type spelt as in Python fails where Python differs ("class type 'Optional' takes no
  // parameters"); the schema's spelling tells more.
  const std::string advice = python_spelling_advice(text);
  if (!advice.empty()) {
    diagnostics.error(loc, "type '" + clipped(text) + "' " + advice);
  } else {
    for (const auto& d : problems.all()) diagnostics.error(d.loc, d.message);
  }
  // What was parsed before the problem is not a type: a class without a name, which the checker
  // knows as "already reported".
  out = Type{};
  out.kind = TypeKind::Class;
  out.loc = loc;
  return false;
}

}  // namespace tcgen
