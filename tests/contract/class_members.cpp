// class_members HEADER NAME class|template public|all|signatures [INCLUDE_DIR...]
// Prints the members of the class NAME defined in HEADER, one `member NAME` line each, as libclang
// reads them: public and protected ones, private ones too with `all`. Constructors are spelled by
// the class's name; destructors are left out. `signatures` also prints, for each public method,
// `signature NAME|RESULT|const|static` (RESULT as libclang spells it, `?` for a template's it
// cannot tell; the last two fields 0 or 1). Parse errors are printed as `error ...` lines, and
// the exit status is then 1.
//
// A process of its own, without libtorch: on Debian sid, libtorch 2.14 exports its own copy of
// LLVM, and libclang misparses and crashes in a process that has both loaded.
#include <clang-c/Index.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string spelling(CXCursor cursor) {
  CXString text = clang_getCursorSpelling(cursor);
  std::string out = clang_getCString(text);
  clang_disposeString(text);
  return out;
}

struct Walk {
  std::string name;
  CXCursorKind class_kind;
  bool with_private;
  bool with_signatures;
  std::set<std::string> members;
  std::vector<std::string> signatures;
};

std::string type_spelling(CXType type) {
  if (type.kind == CXType_Invalid) return "?";
  CXString text = clang_getTypeSpelling(type);
  std::string out = clang_getCString(text);
  clang_disposeString(text);
  return out;
}

// `NAME|RESULT|const|static` of a method or method template.
std::string signature(CXCursor method) {
  return spelling(method) + "|" + type_spelling(clang_getCursorResultType(method)) + "|" +
         std::to_string(clang_CXXMethod_isConst(method)) + "|" +
         std::to_string(clang_CXXMethod_isStatic(method));
}

CXChildVisitResult visit_member(CXCursor member, CXCursor, CXClientData data) {
  auto& walk = *static_cast<Walk*>(data);
  if (!walk.with_private && clang_getCXXAccessSpecifier(member) == CX_CXXPrivate) {
    return CXChildVisit_Continue;
  }
  switch (clang_getCursorKind(member)) {
    case CXCursor_CXXMethod:
    case CXCursor_FunctionTemplate:
      if (walk.with_signatures && clang_getCXXAccessSpecifier(member) == CX_CXXPublic) {
        walk.signatures.push_back(signature(member));
      }
      walk.members.insert(spelling(member));
      break;
    case CXCursor_FieldDecl:
    case CXCursor_VarDecl:
    case CXCursor_TypeAliasDecl:
    case CXCursor_TypedefDecl:
    case CXCursor_StructDecl:
    case CXCursor_ClassDecl:
      walk.members.insert(spelling(member));
      break;
    case CXCursor_Constructor:  // spelled `TensorClass<Derived>` in a template
      walk.members.insert(walk.name);
      break;
    default:
      break;
  }
  return CXChildVisit_Continue;
}

// Finds the class's definition through the namespaces, then collects its own members only.
CXChildVisitResult find_class(CXCursor cursor, CXCursor, CXClientData data) {
  auto& walk = *static_cast<Walk*>(data);
  const CXCursorKind kind = clang_getCursorKind(cursor);
  if (kind == CXCursor_Namespace) return CXChildVisit_Recurse;
  if (kind != walk.class_kind || spelling(cursor) != walk.name ||
      !clang_isCursorDefinition(cursor)) {
    return CXChildVisit_Continue;
  }
  clang_visitChildren(cursor, visit_member, data);
  return CXChildVisit_Break;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(
        stderr, "usage: class_members HEADER NAME class|template public|all|signatures [DIR...]\n");
    return 2;
  }
  const std::string header = argv[1];
  Walk walk{argv[2],
            std::string(argv[3]) == "template" ? CXCursor_ClassTemplate : CXCursor_ClassDecl,
            std::string(argv[4]) == "all",
            std::string(argv[4]) == "signatures",
            {},
            {}};

  std::vector<std::string> args = {"-x",
                                   "c++",
                                   TC_CLANG_STD,
                                   "-resource-dir",
                                   TC_CLANG_RESOURCE_DIR,
                                   "-I",
                                   TC_RUNTIME_INCLUDE_DIR,
                                   "-I",
                                   TC_RUNTIME_GENERATED_INCLUDE_DIR};
  for (int i = 5; i < argc; ++i) args.insert(args.end(), {"-I", argv[i]});
  std::istringstream torch_dirs(TC_TORCH_INCLUDE_DIRS);
  // The compiler's own /usr/include must not be re-added (it breaks libstdc++'s #include_next).
  for (std::string dir; std::getline(torch_dirs, dir, '|');) {
    if (std::filesystem::weakly_canonical(dir) != "/usr/include") {
      args.insert(args.end(), {"-isystem", dir});
    }
  }
  std::vector<const char*> clang_argv;
  for (const auto& a : args) clang_argv.push_back(a.c_str());

  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = clang_parseTranslationUnit(
      index, header.c_str(), clang_argv.data(), static_cast<int>(clang_argv.size()), nullptr, 0,
      CXTranslationUnit_SkipFunctionBodies | CXTranslationUnit_Incomplete);
  if (tu == nullptr) {
    std::printf("error cannot parse %s\n", header.c_str());
    return 1;
  }
  int status = 0;
  for (unsigned i = 0; i < clang_getNumDiagnostics(tu); ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXString text = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
      std::printf("error %s\n", clang_getCString(text));
      clang_disposeString(text);
      status = 1;
    }
    clang_disposeDiagnostic(d);
  }
  clang_visitChildren(clang_getTranslationUnitCursor(tu), find_class, &walk);
  for (const auto& member : walk.members) std::printf("member %s\n", member.c_str());
  for (const auto& line : walk.signatures) std::printf("signature %s\n", line.c_str());
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return status;
}
