// libFuzzer harness of what a distributed peer sends before a consolidated buffer: the input is
// the pickle (Python's metadata, as init_remote / broadcast / all_gather / scatter and the
// structure check receive it). It is unpickled, rebuilt over a 4 KiB buffer, checked against a
// fixed TensorDict and, when that check passes, its non-tensor data is set into a copy, as recv
// does. A tensordict::Error is a correct refusal; anything else escaping, a crash, a hang or a
// sanitizer report is a finding.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "metadata.h"
#include "tensordict/errors.h"

namespace {

tensordict::TensorDict reference() {
  using tensordict::TensorDict;
  TensorDict td({{"a", at::arange(6, at::kFloat).reshape({2, 3})},
                 {"nest", TensorDict({{"b", at::arange(2, at::kLong)}}, {2})}},
                {2});
  td.set("note", "text");
  return td;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const at::Tensor flat = at::arange(4096, at::kInt).to(at::kByte);
  static const tensordict::TensorDict here = reference();
  namespace detail = tensordict::dist::detail;
  try {
    const auto announced = detail::read_metadata(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", false);
    try {
      const auto td = detail::from_metadata(announced.meta, flat, "fuzz");
      (void)td.clone();  // touch every view of the buffer
    } catch (const tensordict::Error&) {
    }
    detail::check_matches(announced.meta, here, "fuzz", 1);
    detail::set_non_tensor(announced.meta, here.clone(), "fuzz");
  } catch (const tensordict::Error&) {
  }
  return 0;
}
