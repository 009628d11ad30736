// The contract header is the single list of facts tcgen and the runtime share; these tests hold it
// to the runtime: every member of TensorClass<Derived> is reserved, and every dtype resolves.
#include "catch2_compat.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "lazy_forms.h"
#include "skip.h"
#include "tensordict/class_contract.h"
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
