#!/usr/bin/env python3
"""Turns `bench_ops --benchmark_format=json` output into the ratio table of docs/performance.md.

Usage: python3 bench/ratios.py run1.json [run2.json ...]

Names are BM_<op>/<variant>/<leaves> with variant tensordict, raw, consolidated or kernel (one
kernel over a tensor holding every leaf's elements: the floor of fused math); each ratio is
the variant's time over raw's for the same op and leaf count, taken within one run (with
--benchmark_repetitions, from the medians). Given several runs, the table shows the median ratio
and its range over the runs: on a shared machine one run can be off by 20 % either way.
Standard library only.
"""
import json
import statistics
import sys

TARGETS = {"tensordict": 1.15, "consolidated": 0.5}
# Fused math on consolidated TensorDicts: tighter targets at 100 leaves.
FUSED_OPS = {"mul_scalar", "add_td", "mul_scalar_", "exp", "neg"}
VARIANTS = ("tensordict", "consolidated", "kernel")


def target(op, variant, leaves):
    """The ratio target of a row, or None for information rows."""
    if op in INFO_OPS or variant == "kernel":
        return None
    if variant == "consolidated" and leaves == 100:
        if op in FUSED_OPS:
            return 0.25
        if op == "norm":
            return 0.3
    return TARGETS[variant]

KEY_OPS = {"get", "get_nested", "set", "update", "keys"}  # per-key cost is reported for these
INFO_OPS = {"structure"}  # no target: shows the container's own cost
# Table order: the ops of the issue, then the extra ones.
ORDER = ["index_int", "slice", "index_tensor", "stack8", "cat8", "clone", "apply", "reshape",
         "unsqueeze", "to_double", "update", "get_nested", "set", "get", "keys", "copy",
         "structure"]
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def median_times(path, field="cpu_time"):
    """(context, {run name: ns}) of one --benchmark_format=json report: each benchmark's median
    aggregate, or its single run where it has none; `field` is cpu_time or real_time. Also used by
    store_vs_python.sh."""
    with open(path) as f:
        report = json.load(f)
    times = {}
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        # A median aggregate overrides single iterations of the same run.
        if b.get("run_type") == "aggregate" or name not in times:
            times[name] = b[field] * UNIT_NS[b["time_unit"]]
    return report.get("context", {}), times


def load_times(path):
    """(context, {(op, variant, leaves): cpu ns}) of one run."""
    context, medians = median_times(path)
    times = {}
    for name, ns in medians.items():
        parts = name.split("/")
        if len(parts) == 3 and parts[0].startswith("BM_"):
            times[(parts[0][3:], parts[1], int(parts[2]))] = ns
    return context, times


def fmt_time(ns):
    return f"{ns / 1e3:.2f} µs" if ns >= 1e3 else f"{ns:.0f} ns"


def ordered_ops(runs):
    present = {op for times in runs for op, _, _ in times}
    return [op for op in ORDER if op in present] + sorted(present - set(ORDER))


def rows(runs):
    for op in ordered_ops(runs):
        for leaves in sorted({k[2] for times in runs for k in times if k[0] == op}):
            for variant in VARIANTS:
                pairs = [(t[(op, variant, leaves)], t[(op, "raw", leaves)]) for t in runs
                         if (op, variant, leaves) in t and (op, "raw", leaves) in t]
                if not pairs:
                    continue
                ratios = [v / r for v, r in pairs]
                ratio = statistics.median(ratios)
                raw = statistics.median(r for _, r in pairs)
                t = statistics.median(v for v, _ in pairs)
                spread = f"{min(ratios):.2f}–{max(ratios):.2f}" if len(ratios) > 1 else ""
                goal_ratio = target(op, variant, leaves)
                verdict = "met" if goal_ratio and round(ratio, 2) <= goal_ratio else "MISSED"
                goal = "(info)" if goal_ratio is None else f"≤ {goal_ratio} {verdict}"
                per_key = f"{t / leaves:.0f} ns/key" if op in KEY_OPS else ""
                yield (op, variant, leaves, fmt_time(raw), fmt_time(t), f"{ratio:.2f}", spread,
                       goal, per_key)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    loaded = [load_times(path) for path in argv[1:]]
    context = loaded[0][0]
    loads = "; ".join(", ".join(f"{x:.1f}" for x in c.get("load_avg", [])) for c, _ in loaded)
    print(f"Machine: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs @ "
          f"{context.get('mhz_per_cpu', '?')} MHz; {len(loaded)} run(s) from "
          f"{context.get('date', '?')}; load averages {loads or '?'}")
    print()
    print("| op | variant | leaves | raw | variant time | ratio | range over runs | target "
          "| per key |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows([times for _, times in loaded]):
        print("| " + " | ".join(str(c) for c in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
