// libFuzzer harness of the memmap loader: the input is a small directory tree (see
// fuzz_tree.h), written to a fresh directory and then loaded (CPU and meta device, as
// `tdtool ls` does) and verified. A tensordict::Error is a correct refusal; anything else
// escaping (c10::Error, std::exception), a crash or a sanitizer report is a finding.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "fuzz_tree.h"
#include "tensordict/errors.h"
#include "tensordict/memmap.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string root = tc_fuzz::scratch_dir();
  const std::string dir = root + "/td";
  tc_fuzz::write_tree(dir, std::string(reinterpret_cast<const char*>(data), size));
  for (const auto& device : {at::Device(at::kCPU), at::Device(at::kMeta)}) {
    try {
      auto loaded = tensordict::memmap::load(dir, device);
      if (loaded.value.is_tensordict() && device.is_cpu()) {
        (void)loaded.value.tensordict().clone();  // touch every mapped byte
      }
    } catch (const tensordict::Error&) {
    }
  }
  (void)tensordict::memmap::verify(dir);
  return 0;
}
