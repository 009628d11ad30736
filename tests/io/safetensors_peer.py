"""The Python side of the safetensors interop tests (tests/io/test_safetensors_python.cpp,
tests/nn/test_safetensors_model.cpp), with the real `safetensors` package:

  write DIR          DIR/all.safetensors: a tensor of every dtype torch and this safetensors
                     both have, written by safetensors.torch.save_file; DIR/expected.json: each
                     tensor's shape and raw bytes (hex), and the dtypes covered
  check FILE JSON    loads FILE with safetensors and compares it with expected.json's tensors
  keys FILE          prints {"keys": [...], "metadata": {...}} of FILE as safetensors reads it
  model DIR          DIR/model.safetensors: the state_dict of a seeded MLP (Linear 4-8, ReLU,
                     Linear 8-2); DIR/io.safetensors: an input "x" and the model's output "y"

Exits 77 when safetensors (or torch) cannot be imported.
"""
import json
import os
import sys

try:
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file, save, save_file
except ImportError:
    sys.exit(77)


def candidates():
    """(name, tensor) for every dtype of interest that this torch has."""
    out = []

    def add(dtype_name, make):
        dtype = getattr(torch, dtype_name, None)
        try:
            out.append((dtype_name, make(dtype)))
        except Exception:  # a dtype this torch lacks, or cannot convert to
            pass

    raw = torch.tensor([[0, 1, 2, 63], [64, 120, 127, 56]], dtype=torch.uint8)
    add("bool", lambda d: torch.tensor([True, False, True]))
    add("uint8", lambda d: raw.clone())
    add("int8", lambda d: torch.tensor([-128, -1, 0, 127], dtype=d))
    add("int16", lambda d: torch.tensor([-32768, 7, 32767], dtype=d))
    add("uint16", lambda d: torch.tensor([0, 1, 65535], dtype=torch.int64).to(d))
    add("int32", lambda d: torch.arange(-3, 3, dtype=d).reshape(2, 3))
    add("uint32", lambda d: torch.tensor([0, 4294967295], dtype=torch.int64).to(d))
    add("int64", lambda d: torch.tensor([-(2**63), 2**63 - 1, 5], dtype=d))
    add("uint64", lambda d: torch.tensor([0, 2**62], dtype=torch.int64).to(d))
    add("float16", lambda d: torch.tensor([0.5, -65504.0, float("inf")], dtype=d))
    add("bfloat16", lambda d: torch.tensor([1.0, -2.5, 3.0e38], dtype=d))
    add("float32", lambda d: torch.tensor([[1.0, float("nan")], [-0.0, 1e-40]], dtype=d))
    add("float64", lambda d: torch.tensor([3.141592653589793, -1e308], dtype=d))
    add("complex64", lambda d: torch.tensor([1 + 2j, -3.5j], dtype=d))
    for name in ("float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e8m0fnu", "float4_e2m1fn_x2"):
        add(name, lambda d: raw.clone().view(d))
    add("int64", lambda d: torch.tensor(42, dtype=d))  # a 0-dim tensor
    return out


def raw_hex(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes().hex()


def write(directory):
    tensors, expected, covered = {}, {}, []
    for i, (dtype_name, t) in enumerate(candidates()):
        try:
            save({"t": t})  # this safetensors may not know the dtype
        except Exception:
            continue
        name = f"group{i % 3}.{dtype_name}.{i}"
        tensors[name] = t
        expected[name] = {"shape": list(t.shape), "hex": raw_hex(t)}
        covered.append(dtype_name)
    save_file(tensors, os.path.join(directory, "all.safetensors"))
    with open(os.path.join(directory, "expected.json"), "w") as f:
        json.dump({"tensors": expected, "dtypes": sorted(set(covered))}, f)


def check(path, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)["tensors"]
    got = load_file(path)
    if sorted(got) != sorted(expected):
        sys.exit(f"names differ: {sorted(got)} vs {sorted(expected)}")
    for name, e in expected.items():
        if list(got[name].shape) != e["shape"] or raw_hex(got[name]) != e["hex"]:
            sys.exit(f"tensor {name} differs")


def keys(path):
    with safe_open(path, framework="pt") as f:
        print(json.dumps({"keys": sorted(f.keys()), "metadata": f.metadata() or {}}))


def model(directory):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    save_file(net.state_dict(), os.path.join(directory, "model.safetensors"))
    x = torch.randn(5, 4)
    with torch.no_grad():
        y = net(x)
    save_file({"x": x, "y": y}, os.path.join(directory, "io.safetensors"))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"write": write, "check": check, "keys": keys, "model": model}[mode](*args)
