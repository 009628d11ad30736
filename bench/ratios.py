#!/usr/bin/env python3
"""Turns `bench_ops --benchmark_format=json` output into the ratio table of docs/performance.md.

Usage: bench_ops --benchmark_format=json > ops.json && python3 bench/ratios.py ops.json

Names are BM_<op>/<variant>/<leaves> with variant tensordict, raw or consolidated; each ratio is
the variant's time over raw's for the same op and leaf count. With --benchmark_repetitions the
median aggregate is used. Standard library only.
"""
import json
import sys

TARGETS = {"tensordict": 1.15, "consolidated": 0.5}
KEY_OPS = {"get", "get_nested", "set", "update", "keys"}  # per-key cost is reported for these
INFO_OPS = {"structure"}  # no target: shows the container's own cost
# Table order: the ops of the issue, then the extra ones.
ORDER = ["index_int", "slice", "index_tensor", "stack8", "cat8", "clone", "apply", "reshape",
         "unsqueeze", "to_double", "update", "get_nested", "set", "get", "keys", "copy", "structure"]


def load_times(path):
    with open(path) as f:
        report = json.load(f)
    times = {}
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        parts = name.split("/")
        if len(parts) != 3 or not parts[0].startswith("BM_"):
            continue
        op, variant, leaves = parts[0][3:], parts[1], int(parts[2])
        # A median aggregate overrides single iterations of the same run.
        if b.get("run_type") == "aggregate" or (op, variant, leaves) not in times:
            times[(op, variant, leaves)] = b["cpu_time"] * unit_ns(b["time_unit"])
    return report.get("context", {}), times


def unit_ns(unit):
    return {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def fmt_time(ns):
    return f"{ns / 1e3:.2f} µs" if ns >= 1e3 else f"{ns:.0f} ns"


def rows(times):
    present = {op for op, _, _ in times}
    order = [op for op in ORDER if op in present] + sorted(present - set(ORDER))
    for op in order:
        for leaves in sorted({k[2] for k in times if k[0] == op}):
            raw = times.get((op, "raw", leaves))
            for variant in ("tensordict", "consolidated"):
                t = times.get((op, variant, leaves))
                if t is None or raw is None:
                    continue
                ratio = t / raw
                target = TARGETS[variant]
                per_key = f"{t / leaves:.0f} ns/key" if op in KEY_OPS else ""
                verdict = "met" if ratio <= target else "MISSED"
                goal = "(info)" if op in INFO_OPS else f"≤ {target} {verdict}"
                yield (f"{op}", variant, leaves, fmt_time(raw), fmt_time(t), f"{ratio:.2f}",
                       goal, per_key)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    context, times = load_times(argv[1])
    load = ", ".join(f"{x:.1f}" for x in context.get("load_avg", []))
    print(f"Machine: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs @ "
          f"{context.get('mhz_per_cpu', '?')} MHz, load average {load or '?'}, "
          f"run {context.get('date', '?')}")
    print()
    print("| op | variant | leaves | raw | variant time | ratio | target | per key |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows(times):
        print("| " + " | ".join(str(c) for c in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
