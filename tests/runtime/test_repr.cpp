// operator<< prints Python tensordict's repr layout.
#include <ATen/ATen.h>

#include "catch2_compat.h"
#include <sstream>

#include "tensordict/tensordict.h"

using namespace tensordict;

namespace {
std::string repr(const TensorDict& td) {
  std::ostringstream os;
  os << td;
  return os.str();
}
}  // namespace

TEST_CASE("repr of an empty TensorDict", "[repr]") {
  CHECK(repr(TensorDict()) ==
        "TensorDict(\n"
        "    fields={\n"
        "    },\n"
        "    batch_size=torch.Size([]),\n"
        "    device=None,\n"
        "    is_shared=False)");
}

TEST_CASE("repr sorts fields and indents nested TensorDicts", "[repr]") {
  TensorDict td({{"obs", at::zeros({3, 4})}, {"done", at::zeros({3}, at::kBool)}}, {3},
                at::Device("cpu"));
  td.set({"next", "reward"}, at::zeros({3}, at::kDouble));
  td.set("note", "hi");
  td.set("names", NonTensorStack({3}, {Json("a"), Json("b's"), Json(nullptr)}));
  CHECK(repr(td) ==
        "TensorDict(\n"
        "    fields={\n"
        "        done: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.bool, "
        "is_shared=False),\n"
        "        names: NonTensorStack(\n"
        "            ['a', \"b's\", None],\n"
        "            batch_size=torch.Size([3]),\n"
        "            device=cpu),\n"
        "        next: TensorDict(\n"
        "            fields={\n"
        "                reward: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float64, "
        "is_shared=False)},\n"
        "            batch_size=torch.Size([3]),\n"
        "            device=cpu,\n"
        "            is_shared=False),\n"
        "        note: NonTensorData(data=hi, batch_size=torch.Size([3]), device=cpu),\n"
        "        obs: Tensor(shape=torch.Size([3, 4]), device=cpu, dtype=torch.float32, "
        "is_shared=False)},\n"
        "    batch_size=torch.Size([3]),\n"
        "    device=cpu,\n"
        "    is_shared=False)");
}
