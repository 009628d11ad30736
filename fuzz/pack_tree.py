#!/usr/bin/env python3
"""Packs memmap directories into the loader fuzzer's input format (fuzz/fuzz_tree.h), one corpus
file per directory: python3 fuzz/pack_tree.py OUT_DIR DIR...  (data files are cut to 64 bytes)."""
import os
import sys


def pack(root):
    entries = []
    for dirpath, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel.count(os.sep) > 2 or os.path.islink(path):
                continue
            with open(path, "rb") as f:
                data = f.read(4096 if name == "meta.json" else 64)
            entries.append(b"--- " + rel.encode() + b"\n" + data)
    return b"\n".join(entries)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for i, root in enumerate(sys.argv[2:]):
        with open(os.path.join(out_dir, "seed_%03d" % i), "wb") as f:
            f.write(pack(root))


if __name__ == "__main__":
    main()
