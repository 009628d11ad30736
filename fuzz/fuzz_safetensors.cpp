// libFuzzer harness of the safetensors reader and writer: the input becomes a file, which is
// verified and loaded (CPU and meta device); a file that loads is written back and loaded again,
// and must give the same keys and tensors. A tensordict::Error is a correct refusal; anything else
// escaping, a crash, a hang, a sanitizer report or running out of memory is a finding.
//
// Mutations of the 8-byte length rarely keep a header that parses, so an input is the header's
// JSON, a newline, then the data (the harness writes the length), or raw file bytes after
// "RAW\n". docs/reliability.md has the commands.
#include <ATen/ATen.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tensordict/errors.h"
#include "tensordict/safetensors.h"

namespace {

namespace fs = std::filesystem;

std::string scratch_dir() {
  const fs::path base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path();
  const fs::path dir = base / ("tc_fuzz_safetensors_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir.string();
}

// Same keys, and tensors of the same dtype and bytes (NaN payloads included). Keys are compared
// sorted: without a structure entry the order of a file's tensors is the writer's, not the keys'.
void require_same(const tensordict::TensorDict& a, const tensordict::TensorDict& b) {
  const auto items = a.items(true, true, /*sort=*/true);
  const auto others = b.items(true, true, /*sort=*/true);
  if (items.size() != others.size()) std::abort();
  for (size_t i = 0; i < items.size(); ++i) {
    if (!(items[i].first == others[i].first)) std::abort();
    if (!items[i].second.is_tensor()) continue;
    const at::Tensor x = items[i].second.tensor().contiguous();
    const at::Tensor y = others[i].second.tensor().contiguous();
    if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes() ||
        std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string root = scratch_dir();
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string bytes;
  if (input.rfind("RAW\n", 0) == 0) {
    bytes = input.substr(4);
  } else {
    const size_t newline = input.find('\n');
    if (newline == std::string::npos) return -1;  // not a header and data: keep it out
    bytes.assign(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((newline >> (8 * i)) & 0xFF);
    bytes += input.substr(0, newline) + input.substr(newline + 1);
  }
  const std::string file = root + "/x.safetensors";
  const std::string copy = root + "/y.safetensors";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  try {
    (void)tensordict::safetensors::verify(file);
    (void)tensordict::safetensors::load(file, at::Device(at::kMeta));
    const tensordict::safetensors::Loaded loaded = tensordict::safetensors::load(file);
    tensordict::safetensors::SaveOptions options;
    options.metadata = loaded.metadata;
    options.durable = false;
    tensordict::safetensors::save(loaded.tensordict, copy, options);
    require_same(loaded.tensordict, tensordict::safetensors::load(copy).tensordict);
  } catch (const tensordict::Error&) {
  }
  return 0;
}
