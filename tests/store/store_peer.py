"""The Python side of tests/store/test_store_python.cpp: real tensordict's TensorDictStore (with
redis-py) on the test's redis-server. Exit 77 without redis-py.

  store_peer.py write SOCKET TD_ID   stores the shared sample TensorDict under TD_ID, then writes
                                     rows: float32 row 1 (set_at_), int64 row 2 (store[2] = ...)
  store_peer.py read SOCKET TD_ID    prints the store under TD_ID as JSON: batch size, per tensor
                                     leaf path its dtype, shape and values (as doubles; complex as
                                     (real, imag) pairs), and the non-tensor values
  store_peer.py write_class SOCKET TD_ID  stores golden.Outer (tests/goldens/python/nested)
  store_peer.py read_class SOCKET TD_ID   exits 0 when the store under TD_ID opens as the
                                     golden.Outer C++ stored
  store_peer.py write_lazy SOCKET    stores the shared ragged lazy stack as a
                                     LazyStackedTensorDictStore, printing its td_id
  store_peer.py read_lazy SOCKET TD_ID  exits 0 when the LazyStackedTensorDictStore under TD_ID
                                     holds the shared ragged lazy stack (1, printing why, if not)
"""
import json
import sys

try:
    import redis  # noqa: F401
except ImportError:
    sys.exit(77)
import torch
from tensordict import (
    LazyStackedTensorDictStore,
    NonTensorData,
    NonTensorStack,
    TensorDict,
    TensorDictStore,
    lazy_stack,
)

# Every dtype both languages write (C++ adds bfloat16, which numpy cannot carry).
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def leaf(dtype):
    # The same values as peer_leaf() in test_store_python.cpp.
    base = (torch.arange(6, dtype=torch.float64).reshape(3, 2) - 3) * 1.5
    if dtype == torch.bool:
        return base > 0
    if dtype == torch.uint8:
        return (base * 10 + 128).to(dtype)
    if dtype.is_complex:
        return torch.complex(base, -base).to(dtype)
    return base.to(dtype)


def sample():
    # The same entries as sample_td() in test_store_python.cpp.
    td = TensorDict({str(d).split(".")[1]: leaf(d) for d in DTYPES}, batch_size=[3])
    td["next", "obs"] = torch.arange(3, dtype=torch.float64) * 1.25
    td.set_non_tensor("label", "a text")
    td.set_non_tensor("cfg", {"lr": 0.1, "n": [1, 2]})
    td.set("tags", NonTensorStack(*[NonTensorData(t) for t in ("a", "b", "c")]))
    return td


def outer():
    # The same instance as sample_outer() in test_store_classes.cpp.
    from golden import Inner, Outer

    return Outer(inner=Inner(x=torch.arange(4.0).reshape(2, 2), batch_size=[2]),
                 y=torch.full((2,), 0.5), batch_size=[2])


def values(t):
    if t.is_complex():
        t = torch.view_as_real(t)
    return t.double().flatten().tolist()


def ragged():
    # The same values as ragged_td() in test_store_python.cpp: "x" homogeneous, "n.r" ragged.
    return lazy_stack(
        [
            TensorDict(
                x=torch.arange(6, dtype=torch.float32).reshape(3, 2),
                n={"r": torch.arange(6).reshape(3, 2)},
                batch_size=[3],
            ),
            TensorDict(
                x=torch.arange(6, 12, dtype=torch.float32).reshape(3, 2),
                n={"r": torch.arange(12).reshape(3, 4) + 100},
                batch_size=[3],
            ),
        ]
    )


def main():
    mode, socket = sys.argv[1:3]
    if mode == "write_lazy":
        store = LazyStackedTensorDictStore.from_lazy_stack(ragged(), unix_socket_path=socket)
        print(store._td_id)
        return
    td_id = sys.argv[3]
    if mode == "read_lazy":
        store = LazyStackedTensorDictStore.from_store(unix_socket_path=socket, td_id=td_id)
        expected = ragged()
        assert store.batch_size == expected.batch_size, store.batch_size
        for k, want in enumerate(expected.tensordicts):
            got = store[k]
            for key in want.keys(include_nested=True, leaves_only=True):
                assert got[key].dtype == want[key].dtype, (k, key, got[key].dtype)
                assert torch.equal(got[key], want[key]), (k, key, got[key], want[key])
        return
    if mode == "write":
        store = TensorDictStore.from_tensordict(sample(), unix_socket_path=socket, td_id=td_id)
        store.set_at_("float32", torch.full((2,), 7.0), 1)
        store[2] = TensorDict({"int64": torch.full((2,), 42)}, [])
        return
    if mode == "write_class":
        TensorDictStore.from_tensordict(outer(), unix_socket_path=socket, td_id=td_id)
        return
    store = TensorDictStore.from_store(unix_socket_path=socket, td_id=td_id)
    if mode == "read_class":
        want = outer()
        assert type(store) is type(want), type(store)
        # Python wraps the root in its class; the nested field stays a store (v0.14.0).
        assert torch.equal(store.inner["x"], want.inner.x), store.inner
        assert torch.equal(store.y, want.y), store.y
        assert store.maybe is None, store.maybe
        return
    # read: entry by entry (to_tensordict cannot take dict-valued non-tensor data in v0.14.0)
    leaves, non_tensor = {}, {}
    for key in store.keys(include_nested=True, leaves_only=True):
        path = ".".join(key) if isinstance(key, tuple) else key
        value = store.get(key)
        if isinstance(value, torch.Tensor):
            leaves[path] = {"dtype": str(value.dtype), "shape": list(value.shape),
                            "values": values(value)}
        else:
            non_tensor[path] = value.tolist() if hasattr(value, "tolist") else value
    print(json.dumps({"batch_size": list(store.batch_size), "leaves": leaves,
                      "non_tensor": non_tensor}))


if __name__ == "__main__":
    main()
