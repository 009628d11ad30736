#include "frontend/clang_reader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "frontend/annotation.h"
#include "frontend/type_parser.h"
#include "model/name_rules.h"

#ifdef TC_HAVE_LIBCLANG
#include <clang-c/Index.h>

#include "frontend/clang_args.h"
#endif

namespace tcgen {

bool is_cpp_header(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".h" || ext == ".hh" || ext == ".hpp" || ext == ".hxx";
}

#ifndef TC_HAVE_LIBCLANG

bool have_libclang() { return false; }

std::vector<Schema> read_header_schemas(const std::string& path, const ClangOptions&,
                                        Diagnostics& diagnostics) {
  diagnostics.error(SourceLoc{display_path(path), 0, 0},
                    "cannot read C++ headers: tcgen was built without libclang (write the schema "
                    "in YAML, or rebuild tcgen with libclang-dev installed)");
  return {};
}

#else

bool have_libclang() { return true; }

namespace {

namespace fs = std::filesystem;

std::string spelling(CXCursor cursor) { return take(clang_getCursorSpelling(cursor)); }

// Where a declaration is written, with the file as tcgen displays it (macros resolve to their
// expansion, which is where the user wrote them).
SourceLoc location(CXSourceLocation where) {
  CXFile file = nullptr;
  unsigned line = 0, column = 0;
  clang_getExpansionLocation(where, &file, &line, &column, nullptr);
  if (!file) return SourceLoc{};
  return SourceLoc{display_path(take(clang_getFileName(file))), static_cast<int>(line),
                   static_cast<int>(column)};
}

std::string file_of(CXCursor cursor) {
  CXFile file = nullptr;
  clang_getExpansionLocation(clang_getCursorLocation(cursor), &file, nullptr, nullptr, nullptr);
  return file ? fs::weakly_canonical(take(clang_getFileName(file))).string() : "";
}

// The tcgen annotation of `kind` on `cursor`, if any.
std::optional<Annotation> annotation_of(CXCursor cursor, const std::string& kind) {
  struct Found {
    std::string kind;
    std::optional<Annotation> annotation;
  } found{kind, std::nullopt};
  clang_visitChildren(
      cursor,
      [](CXCursor child, CXCursor, CXClientData data) {
        auto& f = *static_cast<Found*>(data);
        if (clang_getCursorKind(child) != CXCursor_AnnotateAttr) return CXChildVisit_Continue;
        auto annotation = parse_annotation(spelling(child));
        if (annotation && annotation->kind == f.kind) f.annotation = std::move(annotation);
        return CXChildVisit_Continue;
      },
      &found);
  return found.annotation;
}

// "a::b" of a declaration's enclosing namespaces, inline ones (std::__cxx11) left out; nullopt
// when a class or function encloses it.
std::optional<std::string> enclosing_namespace(CXCursor cursor) {
  std::string out;
  for (CXCursor p = clang_getCursorSemanticParent(cursor);
       clang_getCursorKind(p) != CXCursor_TranslationUnit; p = clang_getCursorSemanticParent(p)) {
    if (clang_getCursorKind(p) != CXCursor_Namespace) return std::nullopt;
    if (!clang_Cursor_isInlineNamespace(p)) out = spelling(p) + (out.empty() ? "" : "::") + out;
  }
  return out;
}

std::string qualified_name(CXCursor cursor) {
  const std::string ns = enclosing_namespace(cursor).value_or("?");
  return (ns.empty() ? "" : ns + "::") + spelling(cursor);
}

// A doc comment without its markers (///, //!, /** */, leading *), lines joined by '\n'.
std::string doc_of(CXCursor cursor) {
  std::istringstream raw(take(clang_Cursor_getRawCommentText(cursor)));
  std::string out;
  for (std::string line; std::getline(raw, line);) {
    size_t at = line.find_first_not_of(" \t");
    line = at == std::string::npos ? "" : line.substr(at);
    for (const char* marker : {"/**<", "///<", "/**", "/*!", "///", "//!", "//", "*/", "*"}) {
      if (line.rfind(marker, 0) == 0) {
        line = line.substr(std::string(marker).size());
        break;
      }
    }
    if (line.size() >= 2 && line.compare(line.size() - 2, 2, "*/") == 0)
      line.resize(line.size() - 2);
    at = line.find_first_not_of(" \t");
    line = at == std::string::npos ? "" : line.substr(at, line.find_last_not_of(" \t") - at + 1);
    if (!line.empty() || !out.empty()) out += (out.empty() ? "" : "\n") + line;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class HeaderReader {
 public:
  HeaderReader(CXTranslationUnit tu, std::string main_file, Diagnostics& diagnostics)
      : tu_(tu), main_file_(std::move(main_file)), diagnostics_(diagnostics) {}

  // Every annotated struct at namespace scope, in declaration order, grouped by file.
  void visit(CXCursor root) {
    clang_visitChildren(
        root,
        [](CXCursor cursor, CXCursor, CXClientData data) {
          auto& self = *static_cast<HeaderReader*>(data);
          switch (clang_getCursorKind(cursor)) {
            case CXCursor_Namespace:
            case CXCursor_LinkageSpec:
              return CXChildVisit_Recurse;
            case CXCursor_StructDecl:
            case CXCursor_ClassDecl:
              // Into records too, so that an annotated struct nested in one is reported.
              if (clang_isCursorDefinition(cursor)) self.add_class(cursor);
              return CXChildVisit_Recurse;
            default:
              return CXChildVisit_Continue;
          }
        },
        this);
  }

  std::vector<Schema> schemas() {
    std::vector<Schema> out;
    if (!by_file_.count(main_file_)) {
      Schema& empty = by_file_[main_file_];
      empty.path = main_file_;
      empty.display_path = display_path(main_file_);
      empty.loc = SourceLoc{empty.display_path, 1, 1};
      diagnostics_.error(empty.loc, "no struct of this header is annotated with TC_CLASS");
    }
    out.push_back(std::move(by_file_[main_file_]));
    for (auto& [file, schema] : by_file_) {
      if (file != main_file_) out.push_back(std::move(schema));
    }
    for (auto& schema : out) {
      if (!schema.path.empty()) link_includes(schema);
    }
    return out;
  }

 private:
  void add_class(CXCursor cursor) {
    auto annotation = annotation_of(cursor, "class");
    if (!annotation) return;
    const std::string file = file_of(cursor);
    Schema& schema = by_file_[file];
    current_file_ = file;
    Class cls;
    cls.name = spelling(cursor);
    cls.loc = location(clang_getCursorLocation(cursor));
    cls.doc = doc_of(cursor);
    cls.schema_path = display_path(file);
    const auto ns = enclosing_namespace(cursor);
    if (!ns) {
      diagnostics_.error(cls.loc,
                         "tensorclass '" + cls.name + "' must be declared at namespace scope");
    }
    cls.cpp_namespace = ns.value_or("");
    if (schema.classes.empty()) {
      schema.path = file;
      schema.display_path = cls.schema_path;
      schema.cpp_namespace = cls.cpp_namespace;
      schema.namespace_loc = cls.loc;
      schema.loc = SourceLoc{cls.schema_path, 1, 1};
    } else if (schema.cpp_namespace != cls.cpp_namespace) {
      diagnostics_.error(cls.loc, "tensorclass '" + cls.name + "' is in namespace '" +
                                      cls.cpp_namespace + "', but '" + schema.classes[0].name +
                                      "' of the same header is in '" + schema.cpp_namespace +
                                      "' (one namespace per header)");
    }
    read_base(cursor, cls);
    apply_class_annotation(*annotation, cls, diagnostics_);
    // A header is one schema: one version, as in a YAML file.
    if (schema.classes.empty()) {
      schema.version = cls.version;
      schema.version_loc = cls.loc;
    } else if (schema.version != cls.version) {
      diagnostics_.error(cls.loc, "tensorclass '" + cls.name + "' has version " +
                                      std::to_string(cls.version) + ", but '" +
                                      schema.classes[0].name + "' of the same header has " +
                                      std::to_string(schema.version) + " (one version per header)");
    }
    read_fields(cursor, cls);
    schema.classes.push_back(std::move(cls));
  }

  // `struct Derived : Base` is YAML's `extends: Base`: one public base, itself a tensorclass.
  void read_base(CXCursor record, Class& cls) {
    std::vector<CXCursor> bases;
    clang_visitChildren(
        record,
        [](CXCursor cursor, CXCursor, CXClientData data) {
          if (clang_getCursorKind(cursor) == CXCursor_CXXBaseSpecifier)
            static_cast<std::vector<CXCursor>*>(data)->push_back(cursor);
          return CXChildVisit_Continue;
        },
        &bases);
    if (bases.empty()) return;
    const SourceLoc at = location(clang_getCursorLocation(bases[0]));
    const CXCursor base = clang_getTypeDeclaration(clang_getCursorType(bases[0]));
    const std::string name = qualified_name(base);
    if (bases.size() > 1) {
      diagnostics_.error(at, "tensorclass '" + cls.name + "' has " + std::to_string(bases.size()) +
                                 " base classes; it can extend one tensorclass");
    } else if (clang_getCXXAccessSpecifier(bases[0]) != CX_CXXPublic) {
      diagnostics_.error(at, "tensorclass '" + cls.name + "' extends '" + name +
                                 "' privately; a derived tensorclass is usable as its base");
    } else if (!annotation_of(base, "class")) {
      diagnostics_.error(at, "tensorclass '" + cls.name + "' extends '" + name +
                                 "', which is not a tensorclass (TC_CLASS): its members would be "
                                 "fields the schema does not show");
    } else {
      const std::string ns = enclosing_namespace(base).value_or("");
      cls.base = ns == cls.cpp_namespace ? spelling(base) : name;
      cls.base_loc = at;
    }
  }

  void read_fields(CXCursor record, Class& cls) {
    struct Walk {
      HeaderReader* self;
      Class* cls;
    } walk{this, &cls};
    clang_visitChildren(
        record,
        [](CXCursor cursor, CXCursor, CXClientData data) {
          auto& w = *static_cast<Walk*>(data);
          const CXCursorKind kind = clang_getCursorKind(cursor);
          if (kind == CXCursor_FieldDecl) w.self->add_field(cursor, *w.cls);
          if (kind == CXCursor_CXXMethod) w.self->add_method(cursor, *w.cls);
          return CXChildVisit_Continue;
        },
        &walk);
  }

  // A member function declared in the struct is a hand-written member (YAML's `methods:`): its
  // declaration, as written, on one line.
  void add_method(CXCursor cursor, Class& cls) {
    const CXSourceRange extent = clang_getCursorExtent(cursor);
    CXFile file = nullptr;
    unsigned begin = 0, end = 0;
    clang_getSpellingLocation(clang_getRangeStart(extent), &file, nullptr, nullptr, &begin);
    clang_getSpellingLocation(clang_getRangeEnd(extent), nullptr, nullptr, nullptr, &end);
    size_t size = 0;
    const char* text = file ? clang_getFileContents(tu_, file, &size) : nullptr;
    if (!text || end > size || begin >= end) return;
    std::string declaration;
    for (unsigned i = begin; i < end; ++i) {
      const bool space = std::isspace(static_cast<unsigned char>(text[i]));
      if (!space) {
        declaration += text[i];
      } else if (!declaration.empty() && declaration.back() != ' ') {
        declaration += ' ';
      }
    }
    // Bodies are skipped while parsing, so a definition is neither seen as one nor part of the
    // extent: what follows the declarator tells.
    size_t next = end;
    while (next < size && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
    if (next < size && text[next] == '{') {
      diagnostics_.error(location(clang_getCursorLocation(cursor)),
                         "method '" + spelling(cursor) +
                             "' has a body; declare hand-written members only and define them in "
                             "a .cpp that includes the generated header");
      return;
    }
    cls.methods.push_back(declaration + ";");
  }

  void add_field(CXCursor cursor, Class& cls) {
    Field field;
    field.name = spelling(cursor);
    field.loc = location(clang_getCursorLocation(cursor));
    field.doc = doc_of(cursor);
    const CXType type = clang_getCursorType(cursor);
    field.type.loc = field.loc;
    if (!map_type(type, cls.cpp_namespace, field.type)) {
      diagnostics_.error(
          field.loc, "field '" + field.name + "': C++ type '" + take(clang_getTypeSpelling(type)) +
                         "' has no schema type (use at::Tensor, std::string, int64_t, int, "
                         "double, float, bool, std::optional<T>, std::vector<T>, "
                         "tensordict::Json, tensordict::TensorDict or a TC_CLASS struct)");
    }
    if (auto annotation = annotation_of(cursor, "field")) {
      apply_field_annotation(*annotation, field, diagnostics_);
    }
    // A default written as C++ would be lost without a word; the schema's default is the
    // annotation's, a JSON value, as in YAML.
    if (has_initializer(cursor)) {
      diagnostics_.error(field.loc, "field '" + field.name +
                                        "': default member initializers are not read; write the "
                                        "default as TC_FIELD(\"default=...\")");
    }
    cls.fields.push_back(std::move(field));
  }

  static bool has_initializer(CXCursor field) {
    bool found = false;
    clang_visitChildren(
        field,
        [](CXCursor child, CXCursor, CXClientData data) {
          if (clang_isExpression(clang_getCursorKind(child))) *static_cast<bool*>(data) = true;
          return CXChildVisit_Continue;
        },
        &found);
    return found;
  }

  // C++ type -> schema type, through the canonical type (aliases such as torch::Tensor and
  // int64_t resolve); false when it has no schema counterpart.
  bool map_type(CXType type, const std::string& current_namespace, Type& out) {
    const CXType canonical = clang_getCanonicalType(type);
    switch (canonical.kind) {
      case CXType_Bool:
        out.kind = TypeKind::Bool;
        return true;
      case CXType_Int:
      case CXType_Long:
      case CXType_LongLong:
        out.kind = TypeKind::Int;
        return true;
      case CXType_Float:
      case CXType_Double:
        out.kind = TypeKind::Float;
        return true;
      case CXType_Record:
        return map_record(canonical, current_namespace, out);
      default:
        return false;
    }
  }

  bool map_record(CXType type, const std::string& current_namespace, Type& out) {
    const CXCursor decl = clang_getTypeDeclaration(type);
    const std::string name = qualified_name(decl);
    const int arity = clang_Type_getNumTemplateArguments(type);
    if (name == "at::Tensor") {
      out.kind = TypeKind::Tensor;
    } else if (name == "std::basic_string") {
      out.kind = TypeKind::Str;
      return clang_getCanonicalType(clang_Type_getTemplateArgumentAsType(type, 0)).kind ==
             CXType_Char_S;
    } else if (name == "nlohmann::basic_json") {
      out.kind = TypeKind::Any;
    } else if (name == "tensordict::TensorDict") {
      out.kind = TypeKind::TensorDict;
    } else if ((name == "std::optional" || name == "std::vector") && arity >= 1) {
      out.kind = name == "std::optional" ? TypeKind::Optional : TypeKind::List;
      Type element;
      element.loc = out.loc;
      if (!map_type(clang_Type_getTemplateArgumentAsType(type, 0), current_namespace, element)) {
        return false;
      }
      out.args.push_back(std::move(element));
    } else if (annotation_of(decl, "class")) {
      out.kind = TypeKind::Class;
      const std::string ns = enclosing_namespace(decl).value_or("");
      out.class_name = ns == current_namespace ? spelling(decl) : name;
      const std::string file = file_of(decl);
      if (file != current_file_) uses_[current_file_].insert(file);
    } else {
      return false;
    }
    return true;
  }

  // Classes of other headers are named through `includes` (as written relative to this header),
  // so `tcgen import` writes the matching `include:` entries.
  void link_includes(Schema& schema) {
    const fs::path dir = fs::path(schema.path).parent_path();
    for (const auto& file : uses_[schema.path]) {
      schema.includes.push_back(
          Include{file, fs::path(file).lexically_relative(dir).generic_string(), schema.loc});
    }
  }

  CXTranslationUnit tu_;
  std::string main_file_;
  Diagnostics& diagnostics_;
  std::map<std::string, Schema> by_file_;
  std::string current_file_;  ///< of the class being read
  std::map<std::string, std::set<std::string> >
      uses_;  ///< file -> other files whose classes it names
};

void report_clang_errors(CXTranslationUnit tu, Diagnostics& diagnostics) {
  for (unsigned i = 0; i < clang_getNumDiagnostics(tu); ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      diagnostics.error(location(clang_getDiagnosticLocation(d)),
                        take(clang_getDiagnosticSpelling(d)));
    }
    clang_disposeDiagnostic(d);
  }
}

}  // namespace

std::vector<Schema> read_header_schemas(const std::string& path, const ClangOptions& options,
                                        Diagnostics& diagnostics) {
  if (!fs::is_regular_file(path)) {
    diagnostics.error(SourceLoc{display_path(path), 0, 0}, "cannot open schema file");
    return {};
  }
  const std::vector<std::string> args = clang_arguments(options, diagnostics);
  const std::string file = fs::weakly_canonical(path).string();
  // libclang opens what the header includes without a bound of its own (a FIFO blocks it, a
  // device is read until memory runs out): refused before it runs.
  if (!check_includes(file, args, diagnostics)) return {};
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());

  // Only declarations matter: skipping function bodies and end-of-file template instantiation
  // (Incomplete) is what keeps a header that includes libtorch quick to read. KeepGoing: past a
  // fatal error (a missing include), so every problem is reported in one run.
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = clang_parseTranslationUnit(
      index, file.c_str(), argv.data(), static_cast<int>(argv.size()), nullptr, 0,
      CXTranslationUnit_SkipFunctionBodies | CXTranslationUnit_Incomplete |
          CXTranslationUnit_KeepGoing);
  std::vector<Schema> out;
  if (!tu) {
    diagnostics.error(SourceLoc{display_path(path), 0, 0}, "libclang cannot parse this header");
  } else {
    report_clang_errors(tu, diagnostics);
    HeaderReader reader(tu, file, diagnostics);
    reader.visit(clang_getTranslationUnitCursor(tu));
    out = reader.schemas();
    out.front().path = path;
    clang_disposeTranslationUnit(tu);
  }
  clang_disposeIndex(index);
  return out;
}

#endif  // TC_HAVE_LIBCLANG

}  // namespace tcgen
