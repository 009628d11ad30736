#!/usr/bin/env bash
# The table of docs/performance.md, "Store (Redis)": one redis-server on a free loopback port,
# bench_store (C++ TensorDictStore vs raw hiredis) and then bench/store_python.py (Python
# tensordict's TensorDictStore, run in the sid chroot of scripts/python-peer.sh) against it, and
# the ratios of their medians. Run from anywhere in the checkout:
#
#   bench/store_vs_python.sh [bench_store arguments...]
#
# Environment: TC_BUILD_DIR (default build), TC_REDIS_SERVER (default redis-server), TC_PYTHON_PEER
# (the chroot's tdpy, default /opt/peer-v0.14.0/tdpy; "none" skips Python), TC_BENCH_OUT (where
# cpp.json and python.json go; default a new temporary directory), TC_BENCH_PY_SCALE (multiplies
# the Python repetitions). Needs root for the chroot (scripts/on-debian.sh).
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

echo "bench_store ..." >&2
TC_BENCH_REDIS=127.0.0.1:$port "$bench" --benchmark_repetitions=5 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_format=json "$@" >"$out/cpp.json"

if [ "$peer" != none ]; then
  echo "store_python.py (Python tensordict, $peer in the sid chroot) ..." >&2
  # The chroot shares the host's network; its output's last line is the JSON.
  "$checkout/scripts/on-debian.sh" sid "$peer" bench/store_python.py --host 127.0.0.1 \
    --port "$port" --scale "${TC_BENCH_PY_SCALE:-1}" | tail -1 >"$out/python.json"
fi

python3 - "$out/cpp.json" "$out/python.json" <<'EOF'
import json, os, sys

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
cpp = {}
with open(sys.argv[1]) as f:
    report = json.load(f)
for b in report["benchmarks"]:
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
        continue
    # BM_store_<op>/<variant>/<size>, without the /iterations:N and /real_time suffixes.
    name = "/".join(b.get("run_name", b["name"]).split("/")[:3])
    if b.get("run_type") == "aggregate" or name not in cpp:
        cpp[name] = b["real_time"] * UNIT_MS[b["time_unit"]]
py = {}
if os.path.exists(sys.argv[2]) and os.path.getsize(sys.argv[2]):
    with open(sys.argv[2]) as f:
        pyreport = json.load(f)
    py = {b["name"]: b["median_ms"] for b in pyreport["benchmarks"]}
    print("python:", ", ".join(f"{k} {v}" for k, v in pyreport["context"].items()))
ctx = report.get("context", {})
print(f"C++: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, {ctx.get('date', '?')}, "
      f"load averages {', '.join(f'{x:.1f}' for x in ctx.get('load_avg', []))}")


def ms(x):
    if x is None:
        return ""
    return f"{x:.3f} ms" if x < 1 else f"{x:.2f} ms" if x < 100 else f"{x:.0f} ms"


print()
print("| op | size | socket floor | raw hiredis | C++ store | store / raw (≤ 1.1) | Python store | Python / C++ (≥ 2) |")
print("|---|---|---|---|---|---|---|---|")
for op in ("write", "read"):
    for size in ("1KB", "1MB", "100MB", "1000x16"):
        raw = cpp.get(f"BM_store_{op}/raw/{size}")
        ours = cpp.get(f"BM_store_{op}/store/{size}")
        if raw is None or ours is None:
            continue
        r = ours / raw
        cells = [op, size, ms(cpp.get(f"BM_store_{op}/socket/{size}")), ms(raw), ms(ours),
                 f"**{r:.2f}** {'met' if r <= 1.1 else 'MISSED'}"]
        p = py.get(f"BM_store_{op}/python/{size}")
        cells += [ms(p), f"**{p / ours:.2f}×** {'met' if p / ours >= 2 else 'MISSED'}" if p else ""]
        print("| " + " | ".join(cells) + " |")
others = [(n, t) for n, t in py.items() if n.split("/")[1] != "python"]
if others:
    print()
    print("| Python variant | median | Python / C++ store |")
    print("|---|---|---|")
    for n, t in others:
        op, variant, size = n.split("/")
        ours = cpp.get(f"{op}/store/{size}")
        print(f"| `{n}` | {ms(t)} | {t / ours:.2f}× |" if ours else f"| `{n}` | {ms(t)} | |")
EOF
