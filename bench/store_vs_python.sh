#!/usr/bin/env bash
# The table of docs/performance.md, "Store (Redis)": one redis-server on a free loopback port,
# bench_store (C++ TensorDictStore vs raw hiredis) and then bench/store_python.py (Python
# tensordict's TensorDictStore, run in the sid chroot of scripts/python-peer.sh) against it, and
# the ratios of their medians (bench_store starts no server of its own then). Run from anywhere in the checkout:
#
#   bench/store_vs_python.sh [bench_store arguments...]
#
# Environment: TC_BUILD_DIR (default build), TC_REDIS_SERVER (default redis-server), TC_PYTHON_PEER
# (the chroot's tdpy, default /opt/peer-v0.14.0/tdpy; "none" skips Python), TC_BENCH_RUNS (runs of
# both sides, default 3), TC_BENCH_OUT (where cppN.json and pythonN.json go; default a new
# temporary directory), TC_BENCH_PY_SCALE (multiplies the Python repetitions). Needs root for the
# chroot (scripts/on-debian.sh).
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
cd "$checkout"
bench=${TC_BUILD_DIR:-build}/bench/bench_store
[ -x "$bench" ] || { echo "store_vs_python.sh: $bench not built (ninja -C ${TC_BUILD_DIR:-build} bench_store)" >&2; exit 1; }
server=${TC_REDIS_SERVER:-redis-server}
peer=${TC_PYTHON_PEER:-/opt/peer-v0.14.0/tdpy}
out=${TC_BENCH_OUT:-$(mktemp -d /tmp/tc_store_vs_python_XXXXXX)}
mkdir -p "$out"

# The server: a free port, no persistence, its files in $out/redis.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$out/redis"
"$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$out/redis" \
  --logfile "$out/redis/redis.log" --daemonize no &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
ping() { exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'PING\r\n' >&3 && read -r -t 2 reply <&3 && exec 3>&- && [[ $reply == +PONG* ]]; }
for _ in $(seq 100); do ping 2>/dev/null && break; sleep 0.1; done
ping || { echo "store_vs_python.sh: $server did not start (see $out/redis/redis.log)" >&2; exit 1; }
echo "server: $("$server" --version | head -1), 127.0.0.1:$port; results in $out" >&2

# TC_BENCH_RUNS runs (default 3) of both sides in turn; each ratio is taken within a run (from its
# medians), and the table shows the median over the runs and the range.
runs=${TC_BENCH_RUNS:-3}
for run in $(seq "$runs"); do
  echo "run $run/$runs: bench_store ..." >&2
  TC_BENCH_REDIS=127.0.0.1:$port "$bench" --benchmark_repetitions=5 \
    --benchmark_min_time=0.5 --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true \
    --benchmark_format=json "$@" >"$out/cpp$run.json"
  if [ "$peer" != none ]; then
    echo "run $run/$runs: store_python.py (Python tensordict, $peer in the sid chroot) ..." >&2
    # The chroot shares the host's network; the script's last line of output is the JSON.
    "$checkout/scripts/on-debian.sh" sid "$peer" bench/store_python.py --host 127.0.0.1 \
      --port "$port" --scale "${TC_BENCH_PY_SCALE:-1}" | tail -1 >"$out/python$run.json"
  fi
done

PYTHONPATH="$checkout/bench" python3 - "$out" "$runs" <<'EOF'
import json, os, statistics, sys

from ratios import median_times

out, runs = sys.argv[1], int(sys.argv[2])


def load_cpp(path):
    """{BM_store_<op>/<variant>/<size>: median ms} of one bench_store run, and its context."""
    context, medians = median_times(path, "real_time")
    # Without the /iterations:N and /real_time suffixes.
    times = {"/".join(name.split("/")[:3]): ns / 1e6 for name, ns in medians.items()}
    return times, context


cpp, py = [], []
for run in range(1, runs + 1):
    times, ctx = load_cpp(f"{out}/cpp{run}.json")
    cpp.append(times)
    print(f"C++ run {run}: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, "
          f"{ctx.get('date', '?')}, load averages "
          f"{', '.join(f'{x:.1f}' for x in ctx.get('load_avg', []))}")
    path = f"{out}/python{run}.json"
    if os.path.exists(path) and os.path.getsize(path):
        with open(path) as f:
            report = json.load(f)
        py.append({b["name"]: b["median_ms"] for b in report["benchmarks"]})
        if run == 1:
            print("python:", ", ".join(f"{k} {v}" for k, v in report["context"].items()))


def ms(x):
    if x is None:
        return ""
    return f"{x:.3f} ms" if x < 1 else f"{x:.2f} ms" if x < 100 else f"{x:.0f} ms"


def over_runs(values):
    """Median over the runs of one time, or None where a run lacks it."""
    return statistics.median(values) if values and None not in values else None


def ratio(nums, dens, target, at_most):
    """Median of the per-run ratios, its range, and whether the median meets the target."""
    rs = [n / d for n, d in zip(nums, dens) if n is not None and d is not None]
    if not rs:
        return ""
    r = statistics.median(rs)
    met = r <= target if at_most else r >= target
    spread = f" ({min(rs):.2f}–{max(rs):.2f})" if len(rs) > 1 else ""
    return f"**{r:.2f}**{spread} {'met' if met else 'MISSED'}"


def times(runs_, name):
    return [t.get(name) for t in runs_]


print()
print("| op | size | socket floor | raw hiredis | layout by hand | C++ store | store / raw (≤ 1.1) "
      "| Python store | Python / C++ (≥ 2) |")
print("|---|---|---|---|---|---|---|---|---|")
for op in ("write", "read"):
    for size in ("1KB", "1MB", "100MB", "1000x16"):
        name = lambda variant: f"BM_store_{op}/{variant}/{size}"
        ours = times(cpp, name("store"))
        raw = times(cpp, name("raw"))
        if over_runs(ours) is None or over_runs(raw) is None:
            continue
        cells = [op, size] + [ms(over_runs(times(cpp, name(v))))
                              for v in ("socket", "raw", "layout", "store")]
        cells.append(ratio(ours, raw, 1.1, True))
        p = times(py, name("python"))
        cells += [ms(over_runs(p)), ratio(p, ours, 2.0, False)] if py else ["", ""]
        print("| " + " | ".join(cells) + " |")
others = sorted({n for t in py for n in t if n.split("/")[1] != "python"})
if others:
    print()
    print("| Python variant | median | Python / C++ store |")
    print("|---|---|---|")
    for n in others:
        op, variant, size = n.split("/")
        p = times(py, n)
        print(f"| `{n}` | {ms(over_runs(p))} | "
              f"{ratio(p, times(cpp, f'{op}/store/{size}'), 2.0, False)} |")
EOF
