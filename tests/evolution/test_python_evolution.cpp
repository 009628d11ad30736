// The Python class `tcgen --lang python` writes for a newer schema version loads what the older
// version's C++ class wrote, a field renamed since (`renamed_from`) and fields added since with a
// default included, as the C++ class does. Skipped where no Python tensordict runs
// (TC_PYTHON_PEER).
#include <ATen/ATen.h>

#include <cstdlib>
#include <string>
#include "catch2_compat.h"

#include "io_test_util.h"
#include "python_peer.h"
#include "tensordict/lazy_stack.h"
#include "tensordict/memmap.h"
#include "v1.h"

namespace {

// Loads each directory as v2's evo.Step (`act` of v1 is its `action`) and checks the values.
constexpr const char* kLoadAsVersionTwo = R"(import sys

try:  # ../shared/python-peer's shims for torch 1.13, before tensordict
    import td_compat  # noqa: F401
except ImportError:
    pass
import torch
from tensordict import TensorDict

import evo

for name in ("one", "stack"):
    step = TensorDict.load_memmap(sys.argv[1] + "/" + name)
    assert type(step) is evo.Step, type(step)
    assert torch.equal(step.action, torch.tensor([4, 5])), step.action
    assert torch.equal(step.obs, torch.arange(6.0).reshape(2, 3)), step.obs
    assert "act" not in step.to_tensordict().keys(), step
    # Added since: `source` takes its default, `reward` (default None) stays None; `note` was
    # saved, its default is not used.
    assert step.reward is None, step.reward
    source = step.source if name == "one" else list(step.source)
    assert source == ("simulator" if name == "one" else ["simulator", "simulator"]), source
    note = step.note if name == "one" else list(step.note)
    assert note == ("n" if name == "one" else ["n", "n"]), note

# A field that meta.json lists as None, under the name it had then, keeps None.
step = TensorDict.load_memmap(sys.argv[1] + "/none")
assert step.source == "simulator", step.source
assert step.note is None, step.note
)";

}  // namespace

TEST_CASE("v2's Python class loads v1's directories: renamed and added fields as in C++",
          "[evolution][python][peer][needs-peer]") {
  tc_test::require_python_peer("tensordict");
  tc_test::TempDir tmp;
  const evo::v1::Step step({at::arange(6, at::kFloat).reshape({2, 3}), at::tensor({4L, 5L}), "n"},
                           {2});
  step.memmap(tmp / "one");
  evo::v1::Step::lazy_stack({step[0], step[1]}).memmap(tmp / "stack");
  // v1's directory with `note` None (Python's TensorClass takes None for any field).
  tensordict::TensorDict inner = step._tensordict().clone();
  inner.del_("note");
  tensordict::memmap::save_tensorclass(
      inner,
      tensordict::memmap::ClassInfo{"<class 'evo.Step'>", tensordict::Json{{"note", nullptr}}, 1},
      tmp / "none");
  const std::string generate = std::string("cd '" TC_SOURCE_DIR "/tests/evolution' && '") +
                               TCGEN_EXE + "' --lang python v2.yaml -o '" + tmp / "py" + "'";
  REQUIRE(std::system(generate.c_str()) == 0);
  tc_test::write_file(tmp / "load.py", kLoadAsVersionTwo);
  const std::string load = "PYTHONPATH='" + tmp / "py" + "' '" + tc_test::python_peer() + "' '" +
                           tmp / "load.py" + "' '" + tmp.path() + "'";
  CHECK(std::system(load.c_str()) == 0);
}
