// Class inheritance (`extends:`, golden inherit.yaml): a derived class holds its bases' fields,
// options and batch dims before its own, and is usable as each of its bases, sharing its data,
// as an instance of a Python subclass is one of its bases.
#include <ATen/ATen.h>

#include <unistd.h>

#include <filesystem>
#include <type_traits>
#include "catch2_compat.h"

#include "inherit.h"

using namespace golden;

static_assert(std::is_convertible_v<Particle, Point>);
static_assert(std::is_convertible_v<Charged, Particle> && std::is_convertible_v<Charged, Point>);
static_assert(!std::is_convertible_v<Point, Particle>);

namespace {

Particle particle() { return Particle({at::zeros({3, 2}), "p", 7, at::ones({3, 2}), 2.0}, {3}); }

// Takes the base class, as a user's function written for it does.
std::string label_of(const Point& point) { return point.label(); }

}  // namespace

TEST_CASE("a derived class has its base's fields first and its options", "[tensorclass][inherit]") {
  const auto& spec = Charged::class_spec();
  std::vector<std::string> names;
  for (const auto& field : spec.fields) names.push_back(field.name);
  CHECK(names ==
        std::vector<std::string>{"position", "label", "_serial", "velocity", "mass", "data"});
  CHECK(spec.options.nocast);  // from Point
  CHECK(spec.options.shadow);  // its own
  CHECK_FALSE(Particle::class_spec().options.shadow);
  const Particle p = particle();
  CHECK(p.label() == "p");
  CHECK(p._serial() == 7);  // a private field, as Python names it
  CHECK(p.mass() == 2.0);
  CHECK(p.velocity().equal(at::ones({3, 2})));
  CHECK(p.batch_size() == tensordict::BatchSize{3});
  // The base's defaults hold in the derived class too.
  Particle::Args args;
  args.position = at::zeros({1, 2});
  args.velocity = at::zeros({1, 2});
  const Particle defaults(args, {1});
  CHECK(defaults.label() == "origin");
  CHECK(defaults.mass() == 1.0);
  // The base's shape constraints as well: `position` is (B, 2).
  CHECK_THROWS(Particle({at::zeros({3, 5}), "p", 0, at::ones({3, 2})}, {3}));
}

TEST_CASE("a derived instance is usable as its base and shares its data",
          "[tensorclass][inherit]") {
  Particle p = particle();
  CHECK(label_of(p) == "p");
  Point as_point = p;
  CHECK(as_point.batch_size() == p.batch_size());
  CHECK(as_point.position().data_ptr() == p.position().data_ptr());
  // Writes through the base reach the derived instance (one TensorDict under both).
  as_point.set_label("moved");
  as_point.position().add_(1);
  CHECK(p.label() == "moved");
  CHECK(p.position().equal(at::ones({3, 2})));

  Charged c({at::zeros({2, 2}), "c", 1, at::zeros({2, 2}), 1.0, at::full({2}, 3.0)}, {2});
  CHECK(label_of(c) == "c");  // two levels up
  const Particle as_particle = c;
  CHECK(as_particle.mass() == 1.0);
  REQUIRE(c.data().has_value());
  CHECK(c.data()->equal(at::full({2}, 3.0)));
}

TEST_CASE("a derived instance saves and loads as its own class", "[tensorclass][inherit]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tc-inherit-" + std::to_string(::getpid()));
  Charged c({at::arange(4, at::kFloat).reshape({2, 2}), "c", 5, at::zeros({2, 2}), 0.5}, {2});
  c.memmap(dir.string());
  const Charged back = Charged::load_memmap(dir.string());
  CHECK(back.position().equal(c.position()));
  CHECK(back.label() == "c");
  CHECK(back._serial() == 5);
  CHECK(back.mass() == 0.5);
  CHECK_FALSE(back.data().has_value());
  std::filesystem::remove_all(dir);
}
