// libFuzzer harness of what tcgen and TensorClass::nn read from an AOTInductor package without
// loading it: the input is the wrapper source (its call spec, in_spec_ / out_spec_, and its
// check_input_N functions), read as read_package_signature reads the package's .cpp entry, then
// mapped onto keys. A tensordict::Error is a correct refusal; anything else escaping, a crash, a
// hang or a sanitizer report is a finding. Torch-free, as tcgen is.
#include <cstdint>
#include <string>
#include <string_view>

#include "tensordict/errors.h"
#include "tensordict/nn/call_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    const auto signature = tensordict::nn::parse_wrapper_source(source, "fuzz");
    (void)signature.call_spec.input_keys({});
    (void)signature.call_spec.output_keys({});
  } catch (const tensordict::Error&) {
  }
  return 0;
}
