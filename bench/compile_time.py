#!/usr/bin/env python3
"""Compile cost of the headers users include, as CPU seconds of one translation unit each
(median of --runs), and the ratio to a TU that includes <ATen/ATen.h> alone.

usage: compile_time.py --cxx g++ --runs 3 -- <compiler flags...>
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

UNITS = {
    "ATen/ATen.h alone": "#include <ATen/ATen.h>\nint main() {}\n",
    "tensordict/tensordict.h": '#include "tensordict/tensordict.h"\nint main() {}\n',
    "generated reward.h": '#include "reward.h"\nint main() {}\n',
    # Tensors come in from elsewhere (no ATen factory functions): the cost of the class itself.
    "generated reward.h + use": """#include "reward.h"
#include <iostream>
int use(const at::Tensor& ids, const at::Tensor& mask) {
  torchrl::llm::RewardData r({ids, mask}, {ids.size(0)});
  r.set_rewards(mask.to(at::kFloat));
  auto rows = torchrl::llm::RewardData::stack({r[0], r[1]});
  auto part = r.index({tensordict::Slice(1, 3)});
  torchrl::llm::PairwiseDataset pair({r, r.clone()}, {ids.size(0)});
  std::cout << rows << part.batch_size().size() << pair.chosen_data().input_ids().sizes() << "\\n";
  return r.memmap("/tmp/unused").is_memmap() ? 0 : 1;
}
""",
}


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    flags = [f for f in args.flags if f != "--"]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in UNITS.items():
            source = os.path.join(tmp, "unit.cpp")
            with open(source, "w") as f:
                f.write(text)
            cmd = [args.cxx, *flags, "-c", source, "-o", os.path.join(tmp, "unit.o")]
            results[name] = statistics.median(cpu_seconds(cmd) for _ in range(args.runs))
    base = results["ATen/ATen.h alone"]
    print(f"{'translation unit':<28} {'CPU s':>7} {'ratio':>6}")
    for name, seconds in results.items():
        print(f"{name:<28} {seconds:7.2f} {seconds / base:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
