// An instance keeps its class wherever it is stored (#47 item 4): a TensorDict holding an instance
// saves it as a tensorclass directory (its `_type`, as Python writes one), TensorDict ops on the
// holder keep it, `get<C>` reads it back as the class, and the registry of generated classes
// names and loads the class a saved directory holds.
#include <ATen/ATen.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include "catch2_compat.h"

#include "inherit.h"
#include "nested.h"
#include "tensordict/class_registry.h"
#include "tensordict/memmap.h"

using namespace golden;
using tensordict::TensorDict;
namespace fs = std::filesystem;

namespace {

std::string kept_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("tc_kept_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir.string();
}

Outer sample_outer() {
  return Outer({Inner({at::arange(2, at::kFloat)}, {2}), std::nullopt, at::ones({2})}, {2});
}

// The `_type` a save wrote for the directory at `dir`.
std::string saved_type_at(const std::string& dir) {
  return tensordict::memmap::read_meta(dir).at("_type").get<std::string>();
}

}  // namespace

TEST_CASE("a TensorDict holding an instance saves it as its class", "[tensorclass][registry]") {
  const std::string dir = kept_dir("holder");
  TensorDict tree({}, {2});
  tree.set("item", sample_outer());
  tree.set({"sub", "leaf"}, Inner({at::zeros({2})}, {2}));
  tree.memmap(dir);

  CHECK(saved_type_at(dir) == "<class 'tensordict._td.TensorDict'>");
  CHECK(saved_type_at(dir + "/item") == Outer::class_spec().python_type);
  CHECK(saved_type_at(dir + "/sub/leaf") == Inner::class_spec().python_type);
  // The None field, as Python writes it; the nested class field as a class of its own.
  const auto meta = tensordict::memmap::read_meta(dir + "/item");
  CHECK(meta.at("maybe").is_null());
  CHECK_FALSE(meta.contains("inner"));
  CHECK(saved_type_at(dir + "/item/_tensordict/inner") == Inner::class_spec().python_type);

  const TensorDict back = TensorDict::load_memmap(dir);
  CHECK(tensordict::class_of(back.get_tensordict("item")) == &Outer::class_spec());
  CHECK(back.get<Outer>("item").inner().x().equal(at::arange(2, at::kFloat)));
  CHECK(back.get<Inner>({"sub", "leaf"}).x().equal(at::zeros({2})));
  fs::remove_all(dir);
}

TEST_CASE("TensorDict ops on a holder keep its instances' class", "[tensorclass][registry]") {
  TensorDict tree({}, {2});
  tree.set("item", sample_outer());
  const auto kept = [](const TensorDict& td) {
    return tensordict::class_of(td.get_tensordict("item")) == &Outer::class_spec();
  };
  CHECK(kept(tree));
  CHECK(kept(tree[0]));
  CHECK(kept(tree.clone()));
  CHECK(kept(tree.clone(false)));
  CHECK(kept(tree.to(at::kDouble)));
  CHECK(kept(tree.apply([](const at::Tensor& t) { return t * 2; })));
  CHECK(kept(tree.select({{"item", "y"}})));
  CHECK(kept(tree.exclude({{"item", "y"}})));
  CHECK(kept(tree.unsqueeze(0)));
  CHECK(kept(tensordict::stack({tree, tree}, 0)));
  CHECK(kept(tensordict::cat({tree, tree}, 0)));
  CHECK(kept(tree.sum(0)));
  // Rows of the class itself, and their ops.
  CHECK(tensordict::class_of(sample_outer()[1]) == &Outer::class_spec());
  CHECK(tensordict::class_of(Outer::stack({sample_outer(), sample_outer()})) ==
        &Outer::class_spec());
  // A plain TensorDict stays one; to_tensordict gives one.
  CHECK(tensordict::class_of(tree) == nullptr);
  CHECK(tensordict::class_of(sample_outer().to_tensordict()) == nullptr);
  // Stacking instances of different classes gives no class.
  TensorDict other = tree.clone();
  TensorDict other_item = other.get<Outer>("item").to_tensordict();
  tensordict::memmap::set_class_info(other_item, {"<class 'elsewhere.Other'>"});
  other.set("item", other_item);
  CHECK(tensordict::class_of(tensordict::stack({tree, other}, 0).get_tensordict("item")) ==
        nullptr);
}

TEST_CASE("get<C> reads an instance stored at a key, checked", "[tensorclass][registry]") {
  TensorDict tree({}, {2});
  tree.set("item", sample_outer());
  tree.set("loose", TensorDict({{"x", at::ones({2})}}, {2}));
  tree.set("bad", TensorDict({{"z", at::ones({2})}}, {2}));

  const Outer item = tree.get<Outer>("item");
  CHECK(item.y().equal(at::ones({2})));
  CHECK(item.is_same(tree.get_tensordict("item")));  // aliasing, not a copy
  // A plain TensorDict whose keys are the fields is taken as the class, and marked as it.
  CHECK(tree.get<Inner>("loose").x().equal(at::ones({2})));
  CHECK(tensordict::class_of(tree.get_tensordict("loose")) == &Inner::class_spec());
  // An instance of another class, or keys that are not the fields: errors naming the key.
  CHECK_THROWS_AS(tree.get<Inner>("item"), tensordict::TypeError);
  CHECK_THROWS_WITH(tree.get<Inner>("item"), "get<T>: key 'item' holds an instance of " +
                                                 std::string(Outer::class_spec().python_type) +
                                                 ", not of " + Inner::class_spec().python_type);
  CHECK_THROWS_AS(tree.get<Inner>("bad"), tensordict::KeyError);
}

TEST_CASE("an instance viewed as its base is still saved as its own class",
          "[tensorclass][registry]") {
  const std::string dir = kept_dir("base_view");
  const Charged charged({at::zeros({2, 2}), "c", 3, at::ones({2, 2}), 0.5, at::ones({2})}, {2});
  const Point point = charged;
  TensorDict tree({}, {2});
  tree.set("p", point);
  tree.memmap(dir);
  CHECK(saved_type_at(dir + "/p") == Charged::class_spec().python_type);
  CHECK(TensorDict::load_memmap(dir).get<Charged>("p").mass() == 0.5);
  fs::remove_all(dir);
}

TEST_CASE("a field set after a load is saved with the entries, not as None",
          "[tensorclass][registry]") {
  const std::string first = kept_dir("none_first");
  const std::string second = kept_dir("none_second");
  sample_outer().memmap(first);
  TensorDict tree({}, {2});
  Outer loaded = Outer::load_memmap(first).clone();
  loaded.set_maybe(Inner({at::full({2}, 5.0)}, {2}));
  tree.set("item", loaded);
  tree.memmap(second);
  CHECK_FALSE(tensordict::memmap::read_meta(second + "/item").contains("maybe"));
  CHECK(TensorDict::load_memmap(second).get<Outer>("item").maybe()->x().equal(at::full({2}, 5.0)));
  fs::remove_all(first);
  fs::remove_all(second);
}

TEST_CASE("the registry names and loads the class a directory holds", "[tensorclass][registry]") {
  const std::string type = Outer::class_spec().python_type;
  CHECK(tensordict::find_class(type) == &Outer::class_spec());
  CHECK(tensordict::find_class("<class 'nowhere.Gone'>") == nullptr);
  const auto all = tensordict::registered_classes();
  CHECK(std::count(all.begin(), all.end(), &Inner::class_spec()) == 1);
  CHECK(std::count(all.begin(), all.end(), &Charged::class_spec()) == 1);

  const std::string dir = kept_dir("registry");
  sample_outer().memmap(dir);
  CHECK(tensordict::saved_type(dir) == type);
  const tensordict::LoadedClass loaded = tensordict::load_registered(dir);
  CHECK(loaded.is<Outer>());
  CHECK_FALSE(loaded.is<Inner>());
  CHECK(loaded.as<Outer>().inner().x().equal(at::arange(2, at::kFloat)));
  CHECK_THROWS_AS(loaded.as<Inner>(), tensordict::TypeError);
  CHECK_THROWS_WITH(
      loaded.as<Inner>(),
      Catch::Matchers::ContainsSubstring("is of class Outer (<class 'golden.Outer'>), not Inner"));

  // A plain TensorDict holds no class; an unregistered `_type` is named.
  const std::string plain = kept_dir("registry_plain");
  TensorDict({{"x", at::ones({2})}}, {2}).memmap(plain);
  CHECK_FALSE(tensordict::saved_type(plain).has_value());
  CHECK_THROWS_AS(tensordict::load_registered(plain), tensordict::FormatError);
  const std::string gone = kept_dir("registry_gone");
  TensorDict inner({{"x", at::ones({2})}}, {2});
  tensordict::memmap::save_tensorclass(inner, {"<class 'nowhere.Gone'>"}, gone);
  CHECK(tensordict::saved_type(gone) == "<class 'nowhere.Gone'>");
  CHECK_THROWS_AS(tensordict::load_registered(gone), tensordict::KeyError);
  CHECK_THROWS_WITH(tensordict::load_registered(gone),
                    Catch::Matchers::ContainsSubstring("<class 'nowhere.Gone'>, which no"));
  for (const auto& d : {dir, plain, gone}) fs::remove_all(d);
}
