#!/usr/bin/env python3
"""Python tensordict's TensorDictStore doing what bench_store's BM_store_* do, for the ratios of
docs/performance.md ("Store (Redis)"). Run by bench/store_vs_python.sh against the server it
gives bench_store; by hand, in the chroot where tensordict and python3-redis are installed:

    scripts/on-debian.sh sid /opt/peer-v0.14.0/tdpy bench/store_python.py --port PORT

Each operation is timed alone (time.perf_counter) after one untimed warm-up; the median of the
repetitions is reported. Prints one JSON object on its last line of output:
{"context": {...}, "benchmarks": [{"name", "median_ms", "min_ms", "max_ms", "repetitions"}]}.
Names follow bench_store's: BM_store_<write|read>/<variant>/<size>, variants:

  python          a handle made once (metadata caching on, Python's default): td["leaf"] = t,
                  td["leaf"], td.update(td_1000) over the leaves already stored (Python's update
                  reads each existing leaf before writing it), td.to_tensordict()
  python_fresh    1000x16 write only: update() into a new, empty store (what from_tensordict
                  does after connecting), the handle made and deleted untimed
  python_nocache  cache_metadata=False: every read asks the server for the key registry and the
                  leaf's metadata, as the C++ store does

Standard library apart from torch, tensordict and redis-py.
"""
import argparse
import json
import statistics
import sys
import time
import uuid

import torch
import tensordict
from tensordict import TensorDict
from tensordict.store import TensorDictStore

KB = 1024
MB = 1024 * 1024
SIZES = [("1KB", KB), ("1MB", MB), ("100MB", 100 * MB)]
SMALL_LEAVES = 1000
SMALL_FLOATS = 16


def repetitions(nbytes, scale):
    """How many timed repetitions of one operation on `nbytes`."""
    if nbytes >= 100 * MB:
        n = 5
    elif nbytes >= MB:
        n = 50
    else:
        n = 200
    return max(3, int(n * scale))


def timed(fn, reps, setup=None, teardown=None):
    """Milliseconds of each of `reps` calls of fn (one untimed call first)."""
    out = []
    for i in range(reps + 1):
        state = setup() if setup else None
        start = time.perf_counter()
        fn(state)
        elapsed = time.perf_counter() - start
        if teardown:
            teardown(state)
        if i > 0:
            out.append(elapsed * 1e3)
    return out


def summary(name, times):
    return {
        "name": name,
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "max_ms": max(times),
        "repetitions": len(times),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the repetitions")
    parser.add_argument("--filter", default="", help="only names containing this text")
    args = parser.parse_args()
    torch.set_num_threads(1)
    conn = {"host": args.host, "port": args.port}
    results = []
    stores = []

    def new_store(**kwargs):
        s = TensorDictStore(batch_size=[], td_id="bench-py-" + str(uuid.uuid4()), **conn, **kwargs)
        stores.append(s)
        return s

    def wanted(name):
        return args.filter in name

    for label, nbytes in SIZES:
        t = torch.rand(nbytes // 4)
        reps = repetitions(nbytes, args.scale)
        name = "BM_store_write/python/" + label
        if wanted(name):
            s = new_store()

            def write(_, s=s, t=t):
                s["leaf"] = t

            results.append(summary(name, timed(write, reps)))
        for variant, kwargs in (("python", {}), ("python_nocache", {"cache_metadata": False})):
            name = "BM_store_read/%s/%s" % (variant, label)
            if not wanted(name):
                continue
            s = new_store(**kwargs)
            s["leaf"] = t

            def read(_, s=s, n=nbytes // 4):
                got = s["leaf"]
                assert got.numel() == n

            results.append(summary(name, timed(read, reps)))
        del t

    small = TensorDict(
        {"leaf%04d" % i: torch.rand(SMALL_FLOATS) for i in range(SMALL_LEAVES)}, batch_size=[]
    )
    reps = max(3, int(10 * args.scale))
    name = "BM_store_write/python/1000x16"
    if wanted(name):
        s = new_store()
        s.update(small)
        results.append(summary(name, timed(lambda _: s.update(small), reps)))

    name = "BM_store_write/python_fresh/1000x16"
    if wanted(name):

        def fresh():
            return TensorDictStore(batch_size=[], td_id="bench-py-" + str(uuid.uuid4()), **conn)

        def drop(s):
            s.clear_redis()
            s.close()

        results.append(summary(name, timed(lambda s: s.update(small), reps, fresh, drop)))

    for variant, kwargs in (("python", {}), ("python_nocache", {"cache_metadata": False})):
        name = "BM_store_read/%s/1000x16" % variant
        if not wanted(name):
            continue
        s = new_store(**kwargs)
        s.update(small)

        def read_all(_, s=s):
            local = s.to_tensordict()
            assert len(local.keys()) == SMALL_LEAVES

        results.append(summary(name, timed(read_all, reps)))

    for s in stores:
        s.clear_redis()
        s.close()

    import redis

    context = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "tensordict": getattr(tensordict, "__version__", "?"),
        "redis-py": redis.__version__,
        "torch_threads": torch.get_num_threads(),
    }
    print(json.dumps({"context": context, "benchmarks": results}))


if __name__ == "__main__":
    main()
