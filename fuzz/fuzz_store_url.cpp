// libFuzzer harness of the store URL parser (tensordict::store::parse_store_url): any text is a
// location or a ValueError; anything else escaping, a crash or a sanitizer report is a finding.
// A parsed location's password never reaches an error message (checked by the unit tests).
#include <cstdint>
#include <string_view>

#include "tensordict/errors.h"
#include "tensordict/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tensordict::store::parse_store_url(
        std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tensordict::ValueError&) {
  }
  return 0;
}
