#!/usr/bin/env python3
"""Cross-check by hand: files written by Seed's C code, read by the
reference implementation (Python safetensors, numpy API).

    mkdir -p /tmp/seed-export
    SEED_EXPORT_DIR=/tmp/seed-export tests/unit/io/test_safetensors
    SEED_EXPORT_DIR=/tmp/seed-export tests/unit/io/test_checkpoint
    python3 tests/golden/checkpoint_readback.py /tmp/seed-export

The expected values are the ones the C tests put in (t_roundtrip_all_dtypes
in tests/unit/io/test_safetensors.c, the fixture of tests/unit/io/test_checkpoint.c),
recomputed here with numpy.  Needs numpy and safetensors (pip); `make check`
does not run this.
"""
import json
import os
import sys
import zlib

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def bits_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def roundtrip(path):
    t = load_file(path)
    with safe_open(path, framework="numpy") as f:
        names = list(f.keys())
        meta = f.metadata()
    want = {
        "u8": np.array([0, 1, 127, 128, 255], np.uint8),
        "layer.0/i8 ünï": np.array([-128, 0, 127], np.int8),
        "i32": np.array([[-(2**31), -1], [0, 2**31 - 1]], np.int32),
        "scalar": np.array(-(2**63), np.int64),
        "rank6": np.array([-0.0, 1e-45, 3.4028235e38, -1.5], np.float32).reshape(1, 2, 1, 1, 2, 1),
        "empty": np.zeros((4, 0, 2), np.float32),
        "f64": np.array([0.1, -1e308, 4.9e-324], np.float64),
    }
    check(sorted(names) == sorted(want), f"{path}: tensor names {names}")
    for k, v in want.items():
        check(bits_equal(t[k], v), f"{path}: {k} {t[k].dtype} {t[k].shape} bit-exact")
    check(meta == {"a": "2", "json": '{"x": [1, "\\n"]}'}, f"{path}: metadata {meta}")


def checkpoint(run):
    st = os.path.join(run, "checkpoint.safetensors")
    t = load_file(st)
    i = np.arange(12, dtype=np.float32)
    w = (i * np.float32(0.125) - np.float32(0.7)).reshape(3, 4)
    n = np.arange(16, dtype=np.float32)
    want = {
        "policy.0.weight": w,
        "policy.0.bias": np.float32(0.5) + np.arange(4, dtype=np.float32),
        "optim.adam_m": np.float32(1.0) / (n + np.float32(1)),
        "optim.adam_v": np.float32(1e-8) * n,
        "counts": np.array([1000, -1], np.int64),
    }
    check(sorted(t) == sorted(want), f"{st}: tensor names {sorted(t)}")
    for k, v in want.items():
        check(bits_equal(t[k], v), f"{st}: {k} bit-exact")
    with safe_open(st, framework="numpy") as f:
        emb = json.loads(f.metadata()["seed.checkpoint"])
    with open(os.path.join(run, "checkpoint.json")) as f:
        meta = json.load(f)
    check(meta.pop("file") == os.readlink(st), "checkpoint.json names the linked file")
    check(meta == emb, "checkpoint.json equals the embedded seed.checkpoint metadata")
    check(meta["step"] == 1000 and meta["frames"] == 1000 * 1280 + 3, "step and frames")
    check(meta["agent_steps"] == 1000 * 320 + 1, "agent_steps")
    check(meta["policy_version"] == 1001 and meta["optim_step"] == 1000, "policy_version, optim_step")
    check(meta["wall_time"] == 1234.5678901234567, "wall_time exact")
    check(meta["rng"][3] == "ffffffffffffffff" and all(len(x) == 16 for x in meta["rng"]), "rng words")
    check(meta["env"] == {"name": "cartpole", "options": {"max_steps": 500}}, "env")
    check(meta["model"] == {"kind": "mlp", "hidden": [64, 64], "actions": 2}, "model")
    crc = {k: f"{zlib.crc32(v.tobytes()):08x}" for k, v in want.items()}
    check(meta["crc32"] == crc, "crc32 of every tensor, as zlib computes it")
    check(meta["config"]["note"] == 'üñï "quoted"\n' and meta["config"]["lr"] == 6e-4, "config")


def main():
    d = sys.argv[1]
    roundtrip(os.path.join(d, "roundtrip.safetensors"))
    checkpoint(d)
    print("all ok")


if __name__ == "__main__":
    main()
