// libFuzzer harness of TensorDict::load_state_dict: the input is a JSON object
//   {"tensors": [[key, [sizes...]], ...], "metadata": {...}, "strict": b, "assign": b}
// (what Python's state_dict holds: dotted keys, and per level metadata of batch sizes, devices,
// classes and non-tensor values), loaded into a fixed TensorDict with a nested level, a lazy
// stack and non-tensor data. A tensordict::Error is a correct refusal, and must leave the
// TensorDict as it was; a load must leave one whose leaves fit its batch sizes (it is cloned and
// its state_dict taken again). Anything else escaping, a crash, a hang or a sanitizer report is a
// finding.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "tensordict/errors.h"
#include "tensordict/json.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/state_dict.h"

namespace {

using tensordict::Json;
using tensordict::TensorDict;

TensorDict reference() {
  TensorDict td({{"a", at::arange(6, at::kFloat).reshape({2, 3})},
                 {"nest", TensorDict({{"b", at::arange(2, at::kLong)}}, {2})}},
                {2});
  td.set("note", "text");
  td.set("stack", tensordict::lazy_stack({TensorDict({{"c", at::zeros({2})}}, {}),
                                          TensorDict({{"c", at::ones({2})}}, {})}));
  return td;
}

// The input's tensors: at most 16, of at most 4 dims and 4096 elements each.
tensordict::StateDict state_of(const Json& input) {
  tensordict::StateDict state;
  const Json tensors = input.value("tensors", Json::array());
  for (size_t i = 0; tensors.is_array() && i < tensors.size() && i < 16; ++i) {
    const Json& entry = tensors[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_array() ||
        entry[1].size() > 4) {
      continue;
    }
    std::vector<int64_t> sizes;
    int64_t numel = 1;
    for (const Json& size : entry[1]) {
      if (!size.is_number_integer() || size.get<int64_t>() < 0 || size.get<int64_t>() > 4096) {
        return state;
      }
      sizes.push_back(size.get<int64_t>());
      numel *= std::max<int64_t>(sizes.back(), 1);
    }
    if (numel > 4096) continue;
    state.tensors.emplace_back(entry[0].get<std::string>(), at::ones(sizes));
  }
  state.metadata = input.value("metadata", Json::object());
  return state;
}

// Same leaves (keys, values) and the same metadata, batch sizes and non-tensor values included.
bool same(const TensorDict& a, const TensorDict& b) {
  const auto x = a.state_dict(), y = b.state_dict();
  if (x.tensors.size() != y.tensors.size() || x.metadata != y.metadata) return false;
  for (size_t i = 0; i < x.tensors.size(); ++i) {
    if (x.tensors[i].first != y.tensors[i].first ||
        !x.tensors[i].second.equal(y.tensors[i].second)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Json input;
  try {
    input = tensordict::parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tensordict::Error&) {
    return 0;
  }
  if (!input.is_object()) return 0;
  const tensordict::StateDict state = state_of(input);
  const auto flag = [&](const char* name) {
    const auto it = input.find(name);
    return it != input.end() && it->is_boolean() && it->get<bool>();
  };
  const bool strict = flag("strict");
  const bool assign = flag("assign");
  static const TensorDict before = reference();
  TensorDict td = reference();
  try {
    td.load_state_dict(state, strict, assign);
  } catch (const tensordict::Error&) {
    if (!same(td, before)) __builtin_trap();  // a refused load changed the TensorDict
    return 0;
  }
  (void)td.clone();
  (void)td.state_dict();
  return 0;
}
