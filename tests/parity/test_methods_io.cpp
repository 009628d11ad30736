// Port of Python tensordict v0.14.0 test/tensordict/test_methods.py, class TestTensorDicts: the
// memory-mapped IO tests (test_memmap_* and test_save_load_memmap), on the fixtures td, nested_td
// and stacked_td.
#include <ATen/ATen.h>

#include <filesystem>

#include "io_test_util.h"
#include "parity_fixtures.h"
#include "tensordict/archive.h"

using namespace tensordict;

TEST_CASE("test_methods: test_memmap_", "[parity][methods]") {
  // use_dir=False (a temporary prefix chosen by tensordict) is not applicable: memmap_ takes a
  // prefix.
  PARITY_FIXTURE();
  const int num_threads = GENERATE(0, 2);
  INFO("num_threads " << num_threads);
  tc_test::TempDir dir;
  MemmapOptions options;
  options.num_threads = num_threads;
  options.copy_existing = true;
  td.memmap_(dir.path(), options);
  CHECK(td.is_memmap());
  std::filesystem::create_directory(dir / "some_other_path");
  CHECK(parity::allclose_td(TensorDict::load_memmap(dir.path()), td));
}

TEST_CASE("test_methods: test_memmap_existing", "[parity][methods]") {
  // Python's memmap_() without a prefix (a no-op on a memory-mapped TensorDict) is not
  // applicable: memmap_ takes a prefix.
  PARITY_FIXTURE();
  const bool copy_existing = GENERATE(false, true);
  INFO("copy_existing " << copy_existing);
  tc_test::TempDir dir;
  td.memmap_(dir / "tensordict");
  if (copy_existing) {
    MemmapOptions options;
    options.copy_existing = true;
    TensorDict td3 = td.memmap_(dir / "tensordict2", options);
    CHECK((td == td3).all());
  } else {
    CHECK_THROWS(td.memmap_(dir / "tensordict2"));
  }
}

TEST_CASE("test_methods: test_memmap_like", "[parity][methods]") {
  PARITY_FIXTURE();
  const int num_threads = GENERATE(0, 2);
  INFO("num_threads " << num_threads);
  tc_test::TempDir dir;
  MemmapOptions options;
  options.num_threads = num_threads;
  options.copy_existing = true;
  const TensorDict tdmemmap = td.memmap_like(dir.path(), options);
  CHECK_FALSE(tdmemmap.is_same(td));
  for (const auto& key : td.keys(true)) {
    INFO(key);
    const Value v1 = td.get_value(key), v2 = tdmemmap.get_value(key);
    if (v1.is_tensor()) {
      CHECK_FALSE(v1.tensor().is_same(v2.tensor()));
      CHECK(v1.tensor().storage().data() != v2.tensor().storage().data());
    } else if (v1.is_tensordict()) {
      CHECK_FALSE(v1.tensordict().is_same(v2.tensordict()));
    }
  }
  CHECK(tdmemmap.is_memmap());
}

TEST_CASE("test_methods: test_memmap_prefix", "[parity][methods]") {
  PARITY_FIXTURE();
  tc_test::TempDir dir;
  td.memmap_(dir / "tensordict");
  const bool stacked = td_name == "stacked_td";
  const std::string jsonpath =
      stacked ? dir / "tensordict/0/meta.json" : dir / "tensordict/meta.json";
  REQUIRE(std::filesystem::exists(jsonpath));
  const Json metadata = Json::parse(tc_test::read_file(jsonpath));
  const BatchSize expected = stacked ? td.tensordicts()[0].batch_size() : td.batch_size();
  CHECK(metadata["shape"].get<std::vector<int64_t>>() == expected);
  const TensorDict td2 = TensorDict::load_memmap(dir / "tensordict", at::Device(at::kCPU));
  CHECK((td == td2).all());
}

TEST_CASE("test_methods: test_memmap_archive", "[parity][methods]") {
  PARITY_FIXTURE();
  tc_test::TempDir dir;
  const std::string archive = dir / "saved.tdz";
  MemmapOptions options;
  options.copy_existing = true;
  td.save(archive, options);
  CHECK(std::filesystem::is_regular_file(archive));
  CHECK(archive::is_memmap_archive(archive));
  const TensorDict loaded = TensorDict::load_memmap(archive, at::Device(at::kCPU));
  CHECK((td == loaded).all());
  archive::unpack_memmap(archive, dir / "unpacked");
  const TensorDict loaded_dir = TensorDict::load_memmap(dir / "unpacked", at::Device(at::kCPU));
  CHECK((td == loaded_dir).all());
}

TEST_CASE("test_methods: test_memmap_threads", "[parity][methods]") {
  PARITY_FIXTURE();
  tc_test::TempDir dir;
  MemmapOptions options;
  options.num_threads = 2;
  options.copy_existing = true;
  const TensorDict tdmmap = td.memmap(dir.path(), options);
  CHECK(parity::allclose_td(td.detach(), tdmmap));
  TensorDictFuture future = td.memmap_async(dir.path(), options);
  CHECK(parity::allclose_td(td.detach(), future.get()));
}

TEST_CASE("test_methods: test_save_load_memmap", "[parity][methods]") {
  PARITY_FIXTURE();
  tc_test::TempDir dir;
  MemmapOptions options;
  options.copy_existing = true;
  td.save(dir.path(), options);
  const TensorDict td_load = TensorDict::load_memmap(dir.path());
  td.apply(
      [](const at::Tensor& v0, const at::Tensor& v1) {
        CHECK(v0.sizes() == v1.sizes());
        return v0;
      },
      td_load);
  CHECK(td.batch_size() == td_load.batch_size());
  CHECK((td == td_load).all());
}
