// The classes tcgen --lang python writes, run by Python tensordict: Python loads the directories
// C++ writes as those classes (with equal values), C++ loads the ones Python writes, and the
// state_dicts have the same keys. Skipped where no Python tensordict runs (TC_PYTHON_PEER, as on
// CI).
#include <ATen/ATen.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include "catch2_compat.h"

#include "defaults.h"
#include "inherit.h"
#include "nested.h"
#include "python_peer.h"
#include "recursive.h"
#include "tensor_only.h"
#include "tensordict/json.h"

using namespace golden;

namespace {

const std::string kPeer = tc_test::python_peer();

void require_python() { tc_test::require_python_peer("tensordict"); }

}  // namespace

TEST_CASE("Python's generated classes load C++'s directories and C++ loads theirs",
          "[python][peer][needs-peer]") {
  require_python();
  const std::string dir =
      std::filesystem::temp_directory_path() / ("tc-python-classes-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Outer outer({Inner({at::arange(2, at::kFloat)}, {2}), std::nullopt, at::ones({2})}, {2});
  outer.memmap(dir + "/cpp_outer");
  Defaults(Defaults::Args{}).memmap(dir + "/cpp_defaults");
  tensordict::TensorDict entries({}, {2});
  entries.set("a", at::arange(4, at::kFloat).reshape({2, 2}));
  Holder({entries}, {2}).memmap(dir + "/cpp_holder");
  tensordict::TensorDict tree({}, {2});
  tree.set("item", outer);
  tree.set({"sub", "leaf"}, Inner({at::zeros({2})}, {2}));
  tensordict::TensorDict picked({}, {2});
  picked.set("pick", Inner({at::ones({2})}, {2}));
  tree.set("holder", Holder({picked}, {2}));
  tree.memmap(dir + "/cpp_tree");
  TensorDefaults(TensorDefaults::Args{}).memmap(dir + "/cpp_tensor_defaults");
  Charged({at::arange(4, at::kFloat).reshape({2, 2}), "c", 9, at::zeros({2, 2}), 0.5,
           at::full({2}, 3.0)},
          {2})
      .memmap(dir + "/cpp_charged");

  Chain(
      {Node({at::zeros({2}), Node({at::ones({2}), Node({at::full({2}, 2.0)}, {2})}, {2})}, {2}), 3},
      {2})
      .memmap(dir + "/cpp_chain");
  // Classes that hold each other: a Tree whose Forest holds two Trees; a Shape holding a Square.
  Tree({at::zeros({2}),
        Forest({Tree({at::ones({2})}, {2}), Forest({Tree({at::full({2}, 2.0)}, {2})}, {2})}, {2})},
       {2})
      .memmap(dir + "/cpp_tree_of_forests");
  Shape({at::ones({2}), Square({at::zeros({2}), std::nullopt, at::full({2}, 3.0)}, {2})}, {2})
      .memmap(dir + "/cpp_shape");

  // The golden schemas declare module `golden`: one run per schema, its module on the path.
  Tagged({at::zeros({2}), "a", "s", 3, std::nullopt, std::nullopt}, {2})
      .memmap(dir + "/cpp_tagged");

  // Each case with its module: python/<schema>, or python_typed/<schema> for "<schema>_typed".
  for (const std::string schema :
       {"nested", "defaults", "inherit", "recursive", "tensor_only", "recursive_typed"}) {
    INFO(schema);
    const bool typed = schema.size() > 6 && schema.substr(schema.size() - 6) == "_typed";
    const std::string module =
        typed ? "python_typed/" + schema.substr(0, schema.size() - 6) : "python/" + schema;
    const std::string command =
        "PYTHONDONTWRITEBYTECODE=1 PYTHONPATH='" TC_SOURCE_DIR "/tests/goldens/" + module + "' '" +
        kPeer + "' '" TC_SOURCE_DIR "/tests/tensorclass/python_classes.py' '" + dir + "' " + schema;
    REQUIRE(std::system(command.c_str()) == 0);
  }

  const Outer back = Outer::load_memmap(dir + "/py_outer");
  CHECK(back.inner().x().equal(outer.inner().x()));
  CHECK(back.y().equal(outer.y()));
  CHECK_FALSE(back.maybe().has_value());
  const Holder holder = Holder::load_memmap(dir + "/py_holder");
  CHECK(holder.entries().get<at::Tensor>("b").equal(at::ones({2, 3})));
  CHECK_FALSE(holder.spare().has_value());
  // Python's instances inside a plain TensorDict load as their classes.
  const auto python_tree = tensordict::TensorDict::load_memmap(dir + "/py_tree");
  CHECK(tensordict::class_of(python_tree.get_tensordict("item")) == &Outer::class_spec());
  CHECK(python_tree.get<Outer>("item").inner().x().equal(at::ones({2})));
  CHECK(python_tree.get<Inner>({"sub", "leaf"}).x().equal(at::full({2}, 3.0)));
  CHECK(tensordict::load_registered(dir + "/py_outer").is<Outer>());
  const Defaults defaults = Defaults::load_memmap(dir + "/py_defaults");
  CHECK(defaults.s() == "a \"quoted\" \\ text");
  CHECK(defaults.l() == std::vector<std::string>{"a", "b"});

  // Python's tensor defaults: the tensors the C++ class makes.
  const TensorDefaults python_made = TensorDefaults::load_memmap(dir + "/py_tensor_defaults");
  const TensorDefaults made(TensorDefaults::Args{});
  for (const auto& field : TensorDefaults::class_spec().fields) {
    INFO(field.name);
    const at::Tensor ours = made.get<at::Tensor>(field.name);
    const at::Tensor theirs = python_made.get<at::Tensor>(field.name);
    CHECK(ours.scalar_type() == theirs.scalar_type());
    CHECK(ours.equal(theirs));
  }

  const Charged charged = Charged::load_memmap(dir + "/py_charged");
  CHECK(charged.position().equal(at::ones({2, 2})));
  CHECK(charged.label() == "py");
  CHECK(charged._serial() == 11);
  CHECK(charged.mass() == 4.0);
  CHECK_FALSE(charged.data().has_value());

  // Python's recursive instance: each `next` a Node, the last one None.
  const Chain chain = Chain::load_memmap(dir + "/py_chain");
  CHECK(chain.length() == 2);
  CHECK(chain.head().value().equal(at::full({2}, 6.0)));
  REQUIRE(chain.head().next().has_value());
  CHECK(chain.head().next()->value().equal(at::full({2}, 7.0)));
  CHECK_FALSE(chain.head().next()->next().has_value());

  // Python's classes that hold each other.
  const Tree python_tree_of_forests = Tree::load_memmap(dir + "/py_tree_of_forests");
  REQUIRE(python_tree_of_forests.children().has_value());
  CHECK(python_tree_of_forests.children()->first().value().equal(at::full({2}, 5.0)));
  CHECK_FALSE(python_tree_of_forests.children()->rest().has_value());
  const Shape python_shape = Shape::load_memmap(dir + "/py_shape");
  REQUIRE(python_shape.inner().has_value());
  CHECK(python_shape.inner()->side().equal(at::full({2}, 4.0)));

  // Python's MetaData[str] and MetaData: C++'s MetaData.
  const Tagged python_tagged = Tagged::load_memmap(dir + "/py_tagged");
  CHECK(python_tagged.label() == "py");
  CHECK(python_tagged.source() == "from-python");
  CHECK(python_tagged.step() == 5);
  CHECK(python_tagged.get_value("source").non_tensor_data().metadata);
  CHECK(python_tagged.get_value("step").non_tensor_data().metadata);
  CHECK_FALSE(python_tagged.get_value("label").non_tensor_data().metadata);

  std::ifstream keys_file(dir + "/py_state_dict.json");
  const tensordict::Json python_keys = tensordict::Json::parse(keys_file);
  std::vector<std::string> keys;
  for (const auto& [key, tensor] : outer.state_dict().tensors) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  CHECK(tensordict::Json(keys) == python_keys);
  std::filesystem::remove_all(dir);
}
