"""Writes _SubTensorDict directories as Python tensordict saves a view (td[index] kept as a view),
one per kind of index, each beside the dense TensorDict the same index gives (<name>_expected).

    make_sub_tensordicts.py OUT_DIR
"""
import sys

try:
    import td_compat  # noqa: F401  (../shared/python-peer's shims for old torch)
except ImportError:
    pass

import torch
from tensordict import TensorDict
from tensordict._td import _SubTensorDict

out = sys.argv[1]
td = TensorDict(
    {
        "a": torch.arange(24, dtype=torch.float32).reshape(4, 3, 2),
        "n": {"b": torch.arange(12).reshape(4, 3)},
        "s": "hello",
    },
    batch_size=[4, 3],
)
indices = {
    "slice": slice(0, 2),
    "int": 1,
    "mask": torch.tensor([True, False, True, False]),
    "tuple": (slice(1, 3), 2),
    "positions": torch.tensor([3, 0]),
    "ellipsis": (Ellipsis, 1),
    "mask2d": torch.arange(12).reshape(4, 3) % 4 == 0,
}
for name, index in indices.items():
    _SubTensorDict(td, index).memmap(f"{out}/{name}")
    td[index].memmap(f"{out}/{name}_expected")
