#!/usr/bin/env python3
"""tcgen reading an annotated header that includes <ATen/core/Tensor.h>, against the compiler
compiling a translation unit that includes the same header: CPU seconds (median of --runs) and
the ratio tcgen / compiler.

usage: clang_reader_time.py --tcgen build/bin/tcgen --cxx g++ --runs 5 -- <compiler flags...>
The flags (-I, -isystem, -std) are given to the compiler and, as --clang-arg, to tcgen.
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile

HEADER = """#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "tensordict/annotate.h"

namespace bench {

/// A batch of particles.
struct TC_CLASS("options=frozen", "batch_dims=N") Particles {
  /// Positions.
  TC_FIELD("dtype=float32", "shape=(N, 3)") at::Tensor pos;
  TC_FIELD("default=null") std::optional<at::Tensor> mass;
  TC_FIELD("default=\\"unnamed\\"") std::string label;
  std::vector<int64_t> ids;
  double scale;
};

}  // namespace bench
"""


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tcgen", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    flags = [f for f in args.flags if f != "--"]
    with tempfile.TemporaryDirectory() as tmp:
        header = os.path.join(tmp, "particles.h")
        with open(header, "w") as f:
            f.write(HEADER)
        source = os.path.join(tmp, "unit.cpp")
        with open(source, "w") as f:
            f.write('#include "particles.h"\n')
        commands = {
            "tcgen --dump-model": [args.tcgen, header, "--dump-model"]
            + ["--clang-arg=" + f for f in flags],
            "tcgen (generate)": [args.tcgen, header, "-o", os.path.join(tmp, "out")] + ["--clang-arg=" + f for f in flags],
            f"{args.cxx} -fsyntax-only": [args.cxx, *flags, "-fsyntax-only", source],
            f"{args.cxx} -O2 -c": [args.cxx, *flags, "-O2", "-c", source, "-o", source + ".o"],
        }
        results = {
            name: statistics.median(cpu_seconds(cmd) for _ in range(args.runs))
            for name, cmd in commands.items()
        }
    base = results[f"{args.cxx} -O2 -c"]
    print(f"{'command':<28} {'CPU s':>7} {'ratio':>6}")
    for name, seconds in results.items():
        print(f"{name:<28} {seconds:7.2f} {seconds / base:6.2f}")


if __name__ == "__main__":
    main()
