// Fields typed TensorDict (goldens nested.yaml `Holder`, autocast.yaml `AutoHolder`): any
// TensorDict, read as a handle on the stored one, under the class's batch dims, saved as a nested
// directory; a mapping given to one under autocast or tensor_only becomes a TensorDict, as in
// Python. Typed `TensorDict[str, tensor[float32]]` (nested.yaml `Readings`), its entries are
// checked as the schema types them (Python keeps the annotation unchecked).
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

TEST_CASE("a TensorDict field typed with its key and value types holds tensors of its dtype",
          "[tensorclass][tensordict-field]") {
  Readings r({entries(2), std::nullopt}, {2});
  CHECK(r.sensors().get<at::Tensor>("a").equal(entries(2).get<at::Tensor>("a")));
  r.set_extra(TensorDict({{"ids", at::arange(2)}}, {2}));  // tensor: any dtype
  CHECK(r.extra()->get<at::Tensor>("ids").equal(at::arange(2)));
  CHECK(Readings::class_spec().fields[0].tensor_values);

  TensorDict wrong_dtype({{"a", at::arange(2)}}, {2});
  CHECK_THROWS_MATCHES(r.set_sensors(wrong_dtype), tensordict::TypeError,
                       Catch::Matchers::Message("field Readings.sensors: entry 'a' expects dtype "
                                                "float32, got int64"));
  TensorDict with_text({{"a", at::zeros({2})}}, {2});
  with_text.set_non_tensor("s", "text");
  CHECK_THROWS_MATCHES(r.set_extra(with_text), tensordict::TypeError,
                       Catch::Matchers::Message("field Readings.extra holds tensors, but its entry "
                                                "'s' is a NonTensorData"));
  TensorDict nested({{"n", TensorDict({{"x", at::zeros({2})}}, {2})}}, {2});
  CHECK_THROWS_WITH(r.set_extra(nested), Catch::Matchers::ContainsSubstring("'n' is a TensorDict"));
  // Nothing was written by the refused sets.
  CHECK(r.sensors().get<at::Tensor>("a").scalar_type() == at::kFloat);
  CHECK(r.extra()->keys().size() == 1);
}

TEST_CASE("under tensor_only a mapping given to a TensorDict field becomes one, checked",
          "[tensorclass][tensordict-field]") {
  Readings r({entries(2), std::nullopt}, {2});
  r.set("sensors", Json{{"a", {1.5, 2.5}}});
  CHECK(r.sensors().batch_size() == tensordict::BatchSize{2});
  CHECK(r.sensors().get<at::Tensor>("a").equal(at::tensor({1.5f, 2.5f})));
  CHECK_THROWS_WITH(r.set("sensors", Json{{"a", {1.5, 2.5}}, {"s", "text"}}),
                    Catch::Matchers::ContainsSubstring("its entry 's' is a NonTensorData"));
  // And loads back as saved.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tc-readings-" + std::to_string(::getpid()));
  r.memmap(dir.string());
  CHECK(Readings::load_memmap(dir.string())
            .sensors()
            .get<at::Tensor>("a")
            .equal(r.sensors().get<at::Tensor>("a")));
  std::filesystem::remove_all(dir);
}
