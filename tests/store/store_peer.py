"""The Python side of tests/store/test_store_python.cpp: real tensordict's TensorDictStore (with
redis-py) on the test's redis-server. Exit 77 without redis-py.

  store_peer.py write SOCKET TD_ID   stores the shared sample TensorDict under TD_ID
  store_peer.py read SOCKET TD_ID    prints the store under TD_ID as JSON: batch size, and per
                                     leaf path its dtype, shape and values (as doubles)
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
from tensordict import LazyStackedTensorDictStore, TensorDict, TensorDictStore, lazy_stack


def sample():
    # The same values as sample_td() in test_store_python.cpp.
    return TensorDict(
        {
            "f32": torch.arange(6, dtype=torch.float32).reshape(3, 2) * 0.5 - 1,
            "i64": torch.arange(3, dtype=torch.int64) - 1,
            "u8": torch.arange(12, dtype=torch.uint8).reshape(3, 4),
            "b": torch.tensor([True, False, True]),
            "next": {"obs": torch.arange(3, dtype=torch.float64) * 1.25},
        },
        batch_size=[3],
    )


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
        TensorDictStore.from_tensordict(sample(), unix_socket_path=socket, td_id=td_id)
        return
    store = TensorDictStore.from_store(unix_socket_path=socket, td_id=td_id)
    td = store.to_tensordict()
    leaves = {}
    for key in td.keys(include_nested=True, leaves_only=True):
        value = td.get(key)
        path = ".".join(key) if isinstance(key, tuple) else key
        leaves[path] = {
            "dtype": str(value.dtype),
            "shape": list(value.shape),
            "values": value.double().flatten().tolist(),
        }
    print(json.dumps({"batch_size": list(td.batch_size), "leaves": leaves}))


if __name__ == "__main__":
    main()
