// The contract header is the single list of facts tcgen and the runtime share; these tests hold it
// to the runtime: every member of TensorClass<Derived> is reserved, and every dtype resolves.
#include "catch2_compat.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lazy_forms.h"
#include "skip.h"
#include "tensordict/class_contract.h"
#include "tensordict/dtype.h"

#ifdef TC_HAVE_LIBCLANG
#include <clang-c/Index.h>
#endif

namespace {

#ifdef TC_HAVE_LIBCLANG
std::string spelling(CXCursor cursor) {
  CXString text = clang_getCursorSpelling(cursor);
  std::string out = clang_getCString(text);
  clang_disposeString(text);
  return out;
}

// Members of the class `name` defined in `header` (a class template when `is_template`), read with
// libclang: public and protected ones, private ones too with `with_private`. Constructors are
// spelled by the class's name; destructors are left out.
std::set<std::string> members_of(const std::string& header, const std::string& name,
                                 bool is_template, bool with_private,
                                 const std::vector<std::string>& include_dirs = {}) {
  std::vector<std::string> args = {"-x",
                                   "c++",
                                   TC_CLANG_STD,
                                   "-resource-dir",
                                   TC_CLANG_RESOURCE_DIR,
                                   "-I",
                                   TC_RUNTIME_INCLUDE_DIR};
  for (const auto& dir : include_dirs) args.insert(args.end(), {"-I", dir});
  std::istringstream torch_dirs(TC_TORCH_INCLUDE_DIRS);
  // The compiler's own /usr/include must not be re-added (it breaks libstdc++'s #include_next).
  for (std::string dir; std::getline(torch_dirs, dir, '|');) {
    if (std::filesystem::weakly_canonical(dir) != "/usr/include") {
      args.insert(args.end(), {"-isystem", dir});
    }
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = clang_parseTranslationUnit(
      index, header.c_str(), argv.data(), static_cast<int>(argv.size()), nullptr, 0,
      CXTranslationUnit_SkipFunctionBodies | CXTranslationUnit_Incomplete);
  REQUIRE(tu != nullptr);
  for (unsigned i = 0; i < clang_getNumDiagnostics(tu); ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXString text = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
    INFO(clang_getCString(text));
    CHECK(clang_getDiagnosticSeverity(d) < CXDiagnostic_Error);
    clang_disposeString(text);
    clang_disposeDiagnostic(d);
  }
  struct Walk {
    std::string name;
    CXCursorKind class_kind;
    bool with_private;
    std::set<std::string> members;
  } walk{name, is_template ? CXCursor_ClassTemplate : CXCursor_ClassDecl, with_private, {}};
  // Finds the class's definition through the namespaces, then collects its own members only.
  clang_visitChildren(
      clang_getTranslationUnitCursor(tu),
      [](CXCursor cursor, CXCursor, CXClientData data) {
        auto& w = *static_cast<Walk*>(data);
        const CXCursorKind kind = clang_getCursorKind(cursor);
        if (kind == CXCursor_Namespace) return CXChildVisit_Recurse;
        if (kind != w.class_kind || spelling(cursor) != w.name || !clang_isCursorDefinition(cursor))
          return CXChildVisit_Continue;
        clang_visitChildren(
            cursor,
            [](CXCursor member_cursor, CXCursor, CXClientData member_data) {
              auto& m = *static_cast<Walk*>(member_data);
              if (!m.with_private && clang_getCXXAccessSpecifier(member_cursor) == CX_CXXPrivate) {
                return CXChildVisit_Continue;
              }
              switch (clang_getCursorKind(member_cursor)) {
                case CXCursor_CXXMethod:
                case CXCursor_FunctionTemplate:
                case CXCursor_FieldDecl:
                case CXCursor_VarDecl:
                case CXCursor_TypeAliasDecl:
                case CXCursor_TypedefDecl:
                case CXCursor_StructDecl:
                case CXCursor_ClassDecl:
                  m.members.insert(spelling(member_cursor));
                  break;
                case CXCursor_Constructor:  // spelled `TensorClass<Derived>` in the template
                  m.members.insert(m.name);
                  break;
                default:
                  break;
              }
              return CXChildVisit_Continue;
            },
            data);
        return CXChildVisit_Break;
      },
      &walk);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return walk.members;
}

// Public and protected members of tensordict::TensorClass.
std::set<std::string> tensorclass_members() {
  return members_of(std::string(TC_RUNTIME_INCLUDE_DIR) + "/tensordict/tensorclass.h",
                    "TensorClass", true, false);
}
#endif

}  // namespace

TEST_CASE("every TensorClass member is a reserved name of the contract", "[contract][clang]") {
#ifndef TC_HAVE_LIBCLANG
  TC_SKIP("libclang is not installed");
#else
  const std::set<std::string> members = tensorclass_members();
  REQUIRE(members.size() > 40);
  const std::set<std::string> reserved(tensordict::kTensorClassMembers.begin(),
                                       tensordict::kTensorClassMembers.end());
  for (const auto& name : members) {
    INFO("TensorClass member '" << name << "' is missing from kTensorClassMembers");
    CHECK(reserved.count(name) == 1);
  }
  for (const auto& name : reserved) {
    INFO("kTensorClassMembers names '" << name << "', which TensorClass does not declare");
    CHECK(members.count(name) == 1);
  }
#endif
}

TEST_CASE("every public TensorDict member has its lazy form in tests/lazy/lazy_forms.cpp",
          "[contract][clang][lazy]") {
#ifndef TC_HAVE_LIBCLANG
  TC_SKIP("libclang is not installed");
#else
  const std::set<std::string> members = members_of(
      std::string(TC_RUNTIME_INCLUDE_DIR) + "/tensordict/tensordict.h", "TensorDict", false, false);
  REQUIRE(members.size() > 100);
  std::set<std::string> listed;
  for (const auto& entry : lazy_forms::entries()) listed.insert(entry.member);
  for (const auto& name : members) {
    INFO("TensorDict::" << name << " has no entry in lazy_forms::entries(): give it its lazy form");
    CHECK(listed.count(name) == 1);
  }
  for (const auto& name : listed) {
    INFO("lazy_forms::entries() lists '" << name << "', which TensorDict does not declare");
    CHECK(members.count(name) == 1);
  }
#endif
}

TEST_CASE("kGeneratedMembers are the members every generated class declares", "[contract][clang]") {
#if !defined(TC_HAVE_LIBCLANG) || !defined(TC_EMPTY_CLASS_HEADER)
  TC_SKIP("libclang is not installed, or tcgen is not built");
#else
  // A class without fields or methods: what remains is what the template itself declares.
  std::set<std::string> members =
      members_of(TC_EMPTY_CLASS_HEADER, "Empty", false, true, {TC_GENERATED_DIR});
  members.erase("Empty");      // constructors
  members.erase("operator=");  // copy and move assignment
  const std::set<std::string> contract(tensordict::kGeneratedMembers.begin(),
                                       tensordict::kGeneratedMembers.end());
  CHECK(members == contract);
#endif
}

TEST_CASE("every dtype of the contract is a torch dtype with that name", "[contract]") {
  for (const auto& dtype : tensordict::kDtypes) {
    INFO(dtype.name);
    const auto parsed = tensordict::dtype_from_name(std::string(dtype.name));
    REQUIRE(parsed.has_value());
    CHECK(tensordict::dtype_name(*parsed) == dtype.name);
    CHECK(c10::toString(*parsed) == dtype.scalar_type);
  }
}

TEST_CASE("class options: names in enumerator order, with() sets exactly one", "[contract]") {
  using tensordict::ClassOption;
  const auto options =
      tensordict::ClassOptions().with(ClassOption::nocast).with(ClassOption::frozen);
  CHECK(options.frozen);
  CHECK(options.nocast);
  CHECK_FALSE(options.autocast);
  CHECK_FALSE(options.tensor_only);
  CHECK_FALSE(options.shadow);
  CHECK(tensordict::kClassOptionNames[static_cast<size_t>(ClassOption::tensor_only)] ==
        "tensor_only");
  static_assert(tensordict::ClassOptions().with(ClassOption::shadow).has(ClassOption::shadow));
}
