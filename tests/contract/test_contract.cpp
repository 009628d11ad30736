// The contract header is the single list of facts tcgen and the runtime share; these tests hold it
// to the runtime: every member of TensorClass<Derived> is reserved, and every dtype resolves.
#include "catch2_compat.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "lazy_forms.h"
#include "skip.h"
#include "tensordict/class_contract.h"
#include "tensordict/detail/tensordict_members.h"
#include "tensordict/dtype.h"

namespace {

#ifdef TC_HAVE_LIBCLANG
// Members of the class `name` defined in `header` (a class template when `is_template`), read with
// libclang by the class_members tool (a process without libtorch; class_members.cpp says why):
// public and protected ones, private ones too with `with_private`.
std::set<std::string> members_of(const std::string& header, const std::string& name,
                                 bool is_template, bool with_private,
                                 const std::vector<std::string>& include_dirs = {}) {
  std::string command = std::string("'") + TC_CLASS_MEMBERS_EXE + "' '" + header + "' " + name +
                        (is_template ? " template" : " class") +
                        (with_private ? " all" : " public");
  for (const auto& dir : include_dirs) command += " '" + dir + "'";
  const auto result = tc_test::run_command(command + " 2>&1");
  INFO(command << "\n" << result.output);
  CHECK(result.code == 0);
  std::set<std::string> members;
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("member ", 0) == 0) members.insert(line.substr(7));
  }
  return members;
}

// The public methods of the class `name` in `header`, as class_members prints their signatures.
struct Method {
  std::string name;
  std::string result;  // without spaces and `tensordict::`
  bool is_const;
};
std::vector<Method> methods_of(const std::string& header, const std::string& name,
                               bool is_template) {
  const std::string command = std::string("'") + TC_CLASS_MEMBERS_EXE + "' '" + header + "' " +
                              name + (is_template ? " template" : " class") + " signatures";
  const auto result = tc_test::run_command(command + " 2>&1");
  INFO(command << "\n" << result.output);
  CHECK(result.code == 0);
  std::vector<Method> methods;
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("signature ", 0) != 0) continue;
    std::vector<std::string> fields;
    std::istringstream parts(line.substr(10));
    for (std::string field; std::getline(parts, field, '|');) fields.push_back(field);
    REQUIRE(fields.size() == 4);
    std::string type;
    for (char c : fields[1]) {
      if (c != ' ') type += c;
    }
    for (size_t at; (at = type.find("tensordict::")) != std::string::npos;) type.erase(at, 12);
    methods.push_back({fields[0], type, fields[2] == "1"});
  }
  return methods;
}

// How a member gives back what it makes: "class" for a TensorDict (`Derived` on a class),
// "self" for this instance after an in-place op (a non-const member's TensorDict&), "rows" for
// a vector of TensorDicts; "" otherwise.
std::string result_form(const Method& m, const std::string& self_type) {
  if (m.result == self_type) return "class";
  if (m.result == self_type + "&" && !m.is_const) return "self";
  if (m.result == "std::vector<" + self_type + ">") return "rows";
  return "";
}

// Public and protected members of tensordict::TensorClass.
std::set<std::string> tensorclass_members() {
  return members_of(std::string(TC_RUNTIME_INCLUDE_DIR) + "/tensordict/tensorclass.h",
                    "TensorClass", true, false);
}
#endif

}  // namespace

TEST_CASE("every TensorClass member is a reserved name of the contract",
          "[contract][clang][needs-libclang]") {
#ifndef TC_HAVE_LIBCLANG
  TC_SKIP("libclang is not installed");
#else
  const std::set<std::string> members = tensorclass_members();
  REQUIRE(members.size() > 40);
  const std::set<std::string> reserved(tensordict::kTensorClassMembers.begin(),
                                       tensordict::kTensorClassMembers.end());
  const std::set<std::string> inherited(tensordict::detail::kTensorDictMembers.begin(),
                                        tensordict::detail::kTensorDictMembers.end());
  for (const auto& name : members) {
    INFO("TensorClass member '" << name
                                << "' is neither TensorDict's nor listed in kTensorClassMembers");
    CHECK(reserved.count(name) + inherited.count(name) > 0);
  }
  for (const auto& name : reserved) {
    INFO("kTensorClassMembers names '" << name << "', which TensorClass does not declare");
    CHECK(members.count(name) == 1);
  }
#endif
}

// Python's tensorclass gives back the class wherever its TensorDict gives back a TensorDict (an
// in-place op: this instance; a tuple: one instance each). Every such member of TensorDict must do
// so on TensorClass, every overload of it (none may be hidden), but for the names kept as
// TensorDict (class_contract.h) and the members a class gives its own meaning (below).
TEST_CASE("every TensorDict member giving back a TensorDict gives back the class",
          "[contract][clang][needs-libclang]") {
#ifndef TC_HAVE_LIBCLANG
  TC_SKIP("libclang is not installed");
#else
  const std::string include(TC_RUNTIME_INCLUDE_DIR);
  const auto td = methods_of(include + "/tensordict/tensordict.h", "TensorDict", false);
  const auto tc = methods_of(include + "/tensordict/tensorclass.h", "TensorClass", true);
  REQUIRE(td.size() > 200);
  // Names whose class member reads or writes through the class's fields, with other overloads
  // than TensorDict's (docs/runtime.md, "The class is a TensorDict").
  const std::set<std::string> own_meaning = {"get"};
  std::set<std::string> kept;
  for (const auto& row : tensordict::kMembersKeptAsTensorDict) kept.emplace(row.name);

  std::map<std::string, std::vector<const Method*> > by_name_td, by_name_tc;
  for (const auto& m : td) by_name_td[m.name].push_back(&m);
  for (const auto& m : tc) by_name_tc[m.name].push_back(&m);
  size_t checked = 0;
  for (const auto& [name, overloads] : by_name_td) {
    std::map<std::string, int> wanted;
    for (const Method* m : overloads) {
      const std::string form = result_form(*m, "TensorDict");
      if (!form.empty()) ++wanted[form];
    }
    if (wanted.empty() || name == "operator=") continue;  // assignment rebinds the handle
    const auto found = by_name_tc.find(name);
    INFO("TensorDict::" << name);
    if (kept.count(name)) {
      INFO("kept as TensorDict (kMembersKeptAsTensorDict), yet TensorClass declares it");
      CHECK(found == by_name_tc.end());
      continue;
    }
    ++checked;
    REQUIRE(found != by_name_tc.end());
    std::map<std::string, int> given;
    for (const Method* m : found->second) {
      const std::string form = result_form(*m, "Derived");
      if (!form.empty()) ++given[form];
    }
    for (const auto& [form, count] : wanted) {
      INFO("overloads giving back a TensorDict as '" << form << "' on the class");
      CHECK(given[form] >= count);
    }
    if (!own_meaning.count(name)) {
      INFO("an overload of TensorDict's is hidden on the class");
      CHECK(found->second.size() >= overloads.size());
    }
  }
  CHECK(checked > 150);
#endif
}

TEST_CASE("every public TensorDict member has its lazy form in tests/lazy/lazy_forms.cpp",
          "[contract][clang][lazy][needs-libclang]") {
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

TEST_CASE("kGeneratedMembers are the members every generated class declares",
          "[contract][clang][needs-libclang]") {
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

TEST_CASE("class options: rows in enumerator order, with() sets exactly one", "[contract]") {
  using tensordict::ClassOption;
  const auto options =
      tensordict::ClassOptions().with(ClassOption::nocast).with(ClassOption::frozen);
  CHECK(options.frozen);
  CHECK(options.nocast);
  CHECK_FALSE(options.autocast);
  CHECK_FALSE(options.tensor_only);
  CHECK_FALSE(options.shadow);
  CHECK(tensordict::option_row(ClassOption::tensor_only).name == "tensor_only");
  for (const auto& row : tensordict::kClassOptions) {
    INFO(row.name);
    const auto one = tensordict::ClassOptions().with(row.option);
    CHECK(one.*row.flag);
    for (const auto& other : tensordict::kClassOptions)
      CHECK(one.has(other.option) == (&other == &row));
  }
  static_assert(tensordict::ClassOptions().with(ClassOption::shadow).has(ClassOption::shadow));
}
