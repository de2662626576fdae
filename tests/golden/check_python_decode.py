#!/usr/bin/env python3
"""Check by hand that Python's msgpack + numpy read frames as we write them.

    seed-cat --encode tests/golden/data/golden.jsonl >ours.frames
    seed-cat ours.frames >ours.jsonl
    python3 tests/golden/check_python_decode.py ours.frames ours.jsonl

Reads FRAMES with msgpack.Unpacker (the way seed-frames(7) shows), turns
tensors into numpy arrays, and compares every field with the JSON line of
the same frame: ints exactly, floats bit for bit (NaN by sign), tensors'
dtype, shape and every element.  Prints one line per frame; exits 1 on the
first difference.  Needs msgpack and numpy; not part of the build.
"""
import json
import sys

import msgpack
import numpy as np

DT = {"u8": "u1", "i8": "i1", "i32": "<i4", "i64": "<i8", "f32": "<f4", "f64": "<f8"}
SPECIAL = {"nan": np.nan, "-nan": -np.nan, "inf": np.inf, "-inf": -np.inf}


def same_float(a, b, dtype):
    a, b = np.array(a, dtype), np.array(b, dtype)
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b) and np.signbit(a) == np.signbit(b))
    return a.tobytes() == b.tobytes()


def check(frame, js, n):
    assert isinstance(frame, dict), "frame %d: not a map" % n
    assert list(frame) == list(js), "frame %d: keys %s vs %s" % (n, list(frame), list(js))
    for k, v in frame.items():
        w = js[k]
        if isinstance(v, dict):
            assert set(v) == {"dtype", "shape", "data"}, (n, k)
            assert isinstance(v["data"], bytes), "frame %d: %s: data is not bin" % (n, k)
            a = np.frombuffer(v["data"], DT[v["dtype"]]).reshape(v["shape"])
            assert v["dtype"] == w["dtype"] and list(a.shape) == w["shape"], (n, k)
            want = np.array(w["data"], dtype=object).reshape(-1) if a.size else []
            for i, (x, y) in enumerate(zip(a.reshape(-1), want)):
                if v["dtype"] in ("f32", "f64"):
                    y = SPECIAL.get(y, y) if isinstance(y, str) else y
                    assert same_float(x, y, DT[v["dtype"]]), "frame %d: %s[%d]: %r vs %r" % (n, k, i, x, y)
                else:
                    assert int(x) == y, "frame %d: %s[%d]: %r vs %r" % (n, k, i, x, y)
        elif isinstance(v, float):
            assert isinstance(w, float) and same_float(v, w, "<f8"), (n, k, v, w)
        else:
            assert type(v) is type(w) and v == w, (n, k, v, w)


def main():
    frames_path, json_path = sys.argv[1:3]
    with open(json_path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    n = 0
    with open(frames_path, "rb") as f:
        for n, frame in enumerate(msgpack.Unpacker(f, raw=False), 1):
            check(frame, lines[n - 1], n)
            print("frame %d (%s): %d fields match" % (n, frame["type"], len(frame)))
    if n != len(lines):
        sys.exit("%d frames, %d JSON lines" % (n, len(lines)))


if __name__ == "__main__":
    main()
