// A class with an optional field of its own type, and classes that hold each other
// (tests/goldens/recursive.yaml): built, read, indexed, stacked, saved and loaded like any class,
// each level its own instance of its class.
// Python's classes load what C++ saves and the reverse: test_python_classes.cpp.
#include <ATen/ATen.h>

#include <unistd.h>

#include <filesystem>
#include "catch2_compat.h"

#include "bare.h"
#include "recursive.h"

using golden::Chain;
using golden::Forest;
using golden::Node;
using golden::Shape;
using golden::Square;
using golden::Tree;
using tensordict::BatchSize;

namespace {

// A list of `n` nodes of batch [2] whose values are 0, 1, ..., n - 1.
Node list_of(int n) {
  std::optional<Node> rest;
  for (int i = n - 1; i >= 0; --i) rest = Node({at::full({2}, double(i)), rest}, {2});
  return *rest;
}

std::vector<double> values_of(const Node& head) {
  std::vector<double> out;
  for (std::optional<Node> at = head; at; at = at->next())
    out.push_back(at->value()[0].item<double>());
  return out;
}

}  // namespace

TEST_CASE("a recursive class nests itself through its optional field", "[tensorclass][recursive]") {
  const Node head = list_of(3);
  CHECK(values_of(head) == std::vector<double>{0, 1, 2});
  CHECK(head.contains({"next", "next", "value"}));
  CHECK_FALSE(head.next()->next()->next().has_value());
  CHECK(tensordict::class_of(head.get_tensordict("next")) == &Node::class_spec());

  // Row 1 of every level, and two lists stacked: the structure is kept at each level.
  const Node row = head.index({1});
  CHECK(row.batch_size() == BatchSize{});
  CHECK(row.next()->next()->value().item<double>() == 2.0);
  const Node both = Node::stack({head, list_of(3)});
  CHECK(both.batch_size() == BatchSize{2, 2});
  CHECK(both.next()->value().sizes() == at::IntArrayRef{2, 2});

  // Setting the field of a level, and cutting the list.
  Node edited = head.clone();
  edited.set_next(Node({at::full({2}, 9.0)}, {2}));
  CHECK(values_of(edited) == std::vector<double>{0, 9});
  edited.set_next(std::nullopt);
  CHECK(values_of(edited) == std::vector<double>{0});
  CHECK(values_of(head) == std::vector<double>{0, 1, 2});
}

TEST_CASE("a recursive class saves and loads every level", "[tensorclass][recursive]") {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("tc-recursive-" + std::to_string(::getpid()));
  const Chain chain({list_of(4), 4}, {2});
  chain.memmap(dir);
  const Chain back = Chain::load_memmap(dir);
  CHECK(back.length() == 4);
  CHECK(values_of(back.head()) == std::vector<double>{0, 1, 2, 3});
  const auto any = tensordict::load_registered(dir);
  CHECK(any.is<Chain>());
  std::filesystem::remove_all(dir);
}

TEST_CASE("classes that hold each other nest in turn", "[tensorclass][recursive]") {
  // A tree of depth 3: each Tree's children a Forest whose trees are Trees again.
  const Tree leaf({at::full({2}, 2.0)}, {2});
  const Forest leaves({leaf, Forest({Tree({at::full({2}, 3.0)}, {2})}, {2})}, {2});
  const Tree root({at::zeros({2}), Forest({Tree({at::ones({2}), leaves}, {2})}, {2})}, {2});
  CHECK(root.children()->first().children()->first().value().equal(at::full({2}, 2.0)));
  CHECK(root.children()->first().children()->rest()->first().value().equal(at::full({2}, 3.0)));
  CHECK_FALSE(root.children()->rest().has_value());
  CHECK(tensordict::class_of(root.get_tensordict({"children", "first"})) == &Tree::class_spec());
  CHECK(&Forest::class_spec().fields.at(0).nested() == &Tree::class_spec());
  CHECK(root.index({0}).children()->first().value().item<double>() == 1.0);

  // A Forest's first tree is required: it must be given, and its setter replaces it.
  CHECK_THROWS_AS(Forest(Forest::Args{}, {2}), tensordict::KeyError);
  Forest forest = leaves.clone();
  forest.set_first(Tree({at::full({2}, 5.0)}, {2}));
  CHECK(forest.first().value().equal(at::full({2}, 5.0)));
  CHECK(leaves.first().value().equal(at::full({2}, 2.0)));

  const std::string dir =
      std::filesystem::temp_directory_path() / ("tc-mutual-" + std::to_string(::getpid()));
  root.memmap(dir);
  const Tree back = Tree::load_memmap(dir);
  CHECK(back.children()->first().children()->rest()->first().value().equal(at::full({2}, 3.0)));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a base class's field holds one of its subclasses", "[tensorclass][recursive]") {
  const Square inner({at::ones({2}), std::nullopt, at::full({2}, 2.0)}, {2});
  const Shape shape({at::full({2}, 4.0), inner}, {2});
  REQUIRE(shape.inner().has_value());
  CHECK(shape.inner()->side().equal(at::full({2}, 2.0)));
  CHECK(tensordict::class_of(shape.get_tensordict("inner")) == &Square::class_spec());
  // A Square is a Shape: its inherited field holds a Square too, and it converts to its base.
  const Square outer({at::zeros({2}), inner, at::ones({2})}, {2});
  const Shape as_base = outer;
  CHECK(as_base.inner()->side().equal(at::full({2}, 2.0)));
  CHECK_FALSE(as_base.inner()->inner().has_value());
}

TEST_CASE("classes outside any namespace hold each other", "[tensorclass][recursive]") {
  // tests/goldens/bare.yaml: Yo comes first in the header, Hop is declared ahead.
  const Yo inner({std::nullopt, Yo({}, {2})}, {2});
  const Hop hop({at::ones({2}), inner}, {2});
  const Yo outer({hop, std::nullopt}, {2});
  REQUIRE(outer.hop().has_value());
  CHECK(outer.hop()->x().equal(at::ones({2})));
  CHECK(outer.hop()->yo()->yo().has_value());
  CHECK_FALSE(outer.hop()->yo()->hop().has_value());
  CHECK(tensordict::class_of(outer.get_tensordict({"hop", "yo"})) == &Yo::class_spec());
}
