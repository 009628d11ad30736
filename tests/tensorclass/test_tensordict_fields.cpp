// Fields typed TensorDict (goldens nested.yaml `Holder`, autocast.yaml `AutoHolder`): any
// TensorDict, read as a handle on the stored one, under the class's batch dims, saved as a nested
// directory; a mapping given to one under autocast becomes a TensorDict, as in Python.
#include <ATen/ATen.h>

#include <unistd.h>

#include <filesystem>
#include "catch2_compat.h"

#include "autocast.h"
#include "nested.h"

using namespace golden;
using tensordict::Json;
using tensordict::TensorDict;

namespace {

TensorDict entries(int64_t batch) {
  TensorDict td({}, {batch});
  td.set("a", at::arange(batch * 3, at::kFloat).reshape({batch, 3}));
  return td;
}

}  // namespace

TEST_CASE("a TensorDict field holds any TensorDict and reads it back as a handle",
          "[tensorclass][tensordict-field]") {
  Holder h({entries(2)}, {2});
  CHECK(h.entries().get<at::Tensor>("a").equal(at::arange(6, at::kFloat).reshape({2, 3})));
  CHECK_FALSE(h.spare().has_value());
  // The handle writes through to the instance, as Python's attribute does.
  h.entries().set("b", at::ones({2}));
  CHECK(h.get<at::Tensor>({"entries", "b"}).equal(at::ones({2})));
  // Rows index it with the class.
  CHECK(h[1].entries().batch_size() == tensordict::BatchSize{});
  CHECK(h[1].entries().get<at::Tensor>("a").equal(at::tensor({3.0f, 4.0f, 5.0f})));
  h.set_spare(entries(2));
  REQUIRE(h.spare().has_value());
  CHECK(h.spare()->get<at::Tensor>("a").equal(h.entries().get<at::Tensor>("a")));
  h.set_spare(std::nullopt);
  CHECK_FALSE(h.spare().has_value());
  // A generated instance is a TensorDict too.
  h.set_entries(Inner({at::zeros({2})}, {2}));
  CHECK(h.entries().get<at::Tensor>("x").equal(at::zeros({2})));
}

TEST_CASE("a TensorDict field is checked against the class", "[tensorclass][tensordict-field]") {
  CHECK_THROWS_WITH(Holder({}), "Holder: missing required field 'entries'");
  CHECK_THROWS(Holder({entries(3)}, {2}));  // its batch dims start with the class's
  Holder h({entries(2)}, {2});
  h.set("entries", Json("text"));  // Python keeps what it is given; the accessor names the kind
  CHECK_THROWS_AS(h.entries(), tensordict::TypeError);
}

TEST_CASE("a TensorDict field saves as a nested directory", "[tensorclass][tensordict-field]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tc-td-field-" + std::to_string(::getpid()));
  Holder h({entries(2), entries(2)}, {2});
  h.memmap(dir.string());
  const Holder back = Holder::load_memmap(dir.string());
  CHECK(back.entries().get<at::Tensor>("a").equal(h.entries().get<at::Tensor>("a")));
  REQUIRE(back.spare().has_value());
  CHECK(back.spare()->batch_size() == tensordict::BatchSize{2});
  std::filesystem::remove_all(dir);
}

TEST_CASE("under autocast a mapping given to a TensorDict field becomes one",
          "[tensorclass][tensordict-field]") {
  AutoHolder h({TensorDict({}, {2})}, {2});
  h.set("entries", Json{{"a", {1.0, 2.0}}, {"n", {{"c", {3, 4}}}}, {"s", "text"}});
  const TensorDict td = h.entries();
  CHECK(td.batch_size() == tensordict::BatchSize{2});
  CHECK(td.get<at::Tensor>("a").equal(at::tensor({1.0f, 2.0f})));
  CHECK(td.get({"n", "c"}).equal(at::tensor({3, 4}, at::kLong)));
  CHECK(td.get<TensorDict>("n").batch_size() == tensordict::BatchSize{2});
}
