"""A Python tensordict rank for the interop tests (test_python_peer runs it beside dist_worker).

python_peer.py <scenario> <rank> <size> tcp:<port>

Runs the scenarios of scenarios_python.cpp step for step with Python tensordict's own methods,
over a group made by torch.distributed.init_process_group, and checks what the C++ ranks sent.
Exits 0 on success, 1 with the reason on stderr.
"""

import datetime
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_stubs"))

try:  # ../shared/python-peer's shims for torch 1.13, before tensordict; torch 2.x needs none
    import td_compat  # noqa: F401
except ImportError:
    pass
import torch
import torch.distributed as dist
from example import MyData
from tensordict import NonTensorStack, TensorDict


def polyfill_object_p2p():
    """torch 1.13 lacks send/recv_object_list (added in torch 2.x); this is their protocol: the
    pickle's length as int64, then its bytes, both on tag 0."""
    if hasattr(dist, "send_object_list"):
        return
    from torch.distributed.distributed_c10d import _object_to_tensor, _tensor_to_object

    def send_object_list(objects, dst, group=None, device=None):
        tensors, sizes = zip(*[_object_to_tensor(o, "cpu") for o in objects])
        dist.send(torch.cat(sizes), dst=dst, group=group)
        dist.send(torch.cat(tensors), dst=dst, group=group)

    def recv_object_list(objects, src, group=None, device=None):
        sizes = torch.empty(len(objects), dtype=torch.long)
        dist.recv(sizes, src=src, group=group)
        data = torch.empty(int(sizes.sum()), dtype=torch.uint8)
        dist.recv(data, src=src, group=group)
        offset = 0
        for i, size in enumerate(sizes.tolist()):
            objects[i] = _tensor_to_object(data[offset : offset + size], size)
            offset += size

    dist.send_object_list = send_object_list
    dist.recv_object_list = recv_object_list


def sample(seed):
    """dist_test::sample(seed), entries inserted in the same order."""
    td = TensorDict(
        {
            "a": torch.arange(6, dtype=torch.float32).reshape(2, 3) + seed,
            "nest": TensorDict(
                {"b": torch.arange(2) + int(seed), "c": torch.ones(2, 4, dtype=torch.bool)}, [2]
            ),
            "z_first_inserted": torch.full((2,), float(seed), dtype=torch.float64),
        },
        [2],
    )
    td["note"] = f"seed {int(seed)}"
    return td


def with_stack(seed):
    td = sample(seed)
    td["tags"] = NonTensorStack("x", "y")
    return td


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_tensors(got, want, what, keys=None):
    for key in keys or want.keys(True, True):
        expect(torch.equal(got[key], want[key]), f"{what}: {key} is {got[key]}, not {want[key]}")


def expect_same(got, want, what):
    expect_tensors(got, want, what)
    expect(got["note"] == want["note"], f"{what}: note is {got['note']!r}")


def p2p(rank):
    peer = 1 - rank
    first = rank == 0
    # 1, 2: leaf by leaf, each way.
    for step, sender in ((1, True), (2, False)):
        if first == sender:
            sample(step).send(peer)
        else:
            td = sample(0)
            td.recv(peer)
            expect_tensors(td, sample(step), f"recv {step}")
    # 3: isend / irecv on pseudo-random tags from 10.
    if first:
        sample(3).isend(peer, init_tag=10, pseudo_rand=True)
    else:
        td = sample(0)
        for future in td.irecv(peer, init_tag=10, pseudo_rand=True, return_premature=True):
            future.wait()
        expect_tensors(td, sample(3), "irecv 3")
    # 4: one consolidated buffer, rank 1 to rank 0.
    if first:
        td = sample(0).consolidate(metadata=True)
        td.recv(peer, consolidated=True)
        expect_tensors(td, sample(4), "consolidated recv 4")
    else:
        sample(4).send(peer, consolidated=True)
    # 5, 6: init_remote each way.
    for step, sender in ((5, True), (6, False)):
        if first == sender:
            with_stack(step).init_remote(dst=peer)
        else:
            td = TensorDict.from_remote_init(src=peer)
            expect_same(td, sample(step), f"from_remote_init {step}")
            expect(list(td["tags"]) == ["x", "y"], f"tags: {list(td['tags'])}")
    # 7, 8: a tensorclass, each way: the receiver rebuilds the class it is told.
    for step, sender in ((7, True), (8, False)):
        if first == sender:
            MyData(obs=torch.full((2, 3), float(step)), label=f"step {step}", batch_size=[2]).init_remote(
                dst=peer
            )
        else:
            got = TensorDict.from_remote_init(src=peer)
            expect(type(got) is MyData, f"from_remote_init {step}: a {type(got).__name__}")
            expect(torch.equal(got.obs, torch.full((2, 3), float(step))), f"obs {step}: {got.obs}")
            expect(got.label == f"step {step}", f"label {step}: {got.label!r}")


def collectives(rank, size):
    out = with_stack(10).broadcast(src=0) if rank == 0 else TensorDict().broadcast(src=0)
    expect_same(out, sample(10), "broadcast from 0")
    expect(list(out["tags"]) == ["x", "y"], "broadcast tags")
    out = sample(11).broadcast(src=1) if rank == 1 else TensorDict().broadcast(src=1)
    expect_same(out, sample(11), "broadcast from 1")
    for r, td in enumerate(sample(20 + rank).all_gather()):
        expect_same(td, sample(20 + r), f"all_gather from {r}")
    for src in (0, size - 1):
        tds = [sample(30 + src + r) for r in range(size)] if rank == src else None
        expect_same(TensorDict().scatter(src, tds), sample(30 + src + rank), f"scatter from {src}")
    td = sample(rank).exclude(("nest", "c"))  # torch 1.13's Gloo reduces no bool tensors
    td.all_reduce()
    ranks = size * (size - 1) / 2
    want = sample(0).exclude(("nest", "c")).apply(lambda t: t * size)
    want["a"] += ranks
    want["z_first_inserted"] += ranks
    want["nest", "b"] += int(ranks)
    expect_tensors(td, want, "all_reduce")


def main():
    scenario, rank, size, store = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    port = int(store.split(":")[1])
    # torch 2.x's TCP store asks for libuv, which Debian's torch is built without; the C++ ranks
    # use the classic store too (distributed/src/c10d_bridge.h). torch 1.13 ignores this.
    os.environ.setdefault("USE_LIBUV", "0")
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=size,
        timeout=datetime.timedelta(seconds=20),
    )
    polyfill_object_p2p()
    if scenario == "python_p2p":
        p2p(rank)
    elif scenario == "python_collectives":
        collectives(rank, size)
    else:
        raise ValueError(f"unknown scenario {scenario}")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001  (the launcher reads the reason)
        print(f"python_peer {' '.join(sys.argv[1:3])}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
    # Every check passed. torch 1.13's Gloo group can abort the interpreter's teardown now and then
    # ("terminate called without an active exception"), so leave without it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
