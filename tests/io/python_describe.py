"""Loads memmap directories or .tdz archives with the real Python tensordict and prints one JSON
object describing each, for tests/io/test_format_version.cpp (run through TC_PYTHON_PEER).

Usage: tdpy python_describe.py PATH...   (exit 77 when tensordict cannot be imported)
Prints {"PATH": NODE, ...}: a TensorDict is {"cls", "batch_size", "names", "entries"}, a lazy
stack {"cls", "batch_size", "stack_dim", "tensordicts"}, a tensor {"dtype", "shape", "sum"},
non-tensor data {"data"}.
"""
import json
import sys

try:
    try:  # ../shared/python-peer's shims for torch 1.13, before tensordict; torch 2.x needs none
        import td_compat  # noqa: F401
    except ImportError:
        pass
    import torch
    from tensordict import LazyStackedTensorDict, TensorDict
    from tensordict.tensorclass import NonTensorData, NonTensorStack
except ImportError as error:  # no Python tensordict here: the test skips (exit 77)
    print(f"no Python tensordict: {error}", file=sys.stderr)
    sys.exit(77)


def describe(value):
    if isinstance(value, torch.Tensor):
        return {"dtype": str(value.dtype), "shape": list(value.shape),
                "sum": float(value.double().sum())}
    if isinstance(value, NonTensorData):
        return {"data": value.data}
    if isinstance(value, NonTensorStack):
        return {"data": value.tolist()}
    if isinstance(value, LazyStackedTensorDict):
        return {"cls": type(value).__name__, "batch_size": list(value.batch_size),
                "stack_dim": value.stack_dim,
                "tensordicts": [describe(td) for td in value.tensordicts]}
    return {"cls": type(value).__name__, "batch_size": list(value.batch_size),
            "names": list(value.names),
            "entries": {k: describe(v) for k, v in value._tensordict.items()}}


print(json.dumps({path: describe(TensorDict.load_memmap(path)) for path in sys.argv[1:]}))
