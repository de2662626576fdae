#!/usr/bin/env python3
"""Golden frames for the frame codec tests, made by an implementation that is
not ours: Python's msgpack packs the frames, numpy makes the tensor bytes, and
the json module writes the JSON we expect seed_frame_to_json / seed-cat to
produce (compared by value, float32 elements through numpy's shortest repr).

Writes, relative to the top of the source tree:
  tests/golden/golden_frames.h      good frames (bytes, expected fields, expected
                             JSON) and bad frames (bytes, expected error
                             code, parts of the expected message)
  tests/golden/data/golden.frames   the good frames as one recorded stream
  tests/golden/data/golden.jsonl    their JSON, one line each
  tests/golden/data/mixed.frames    good and bad frames interleaved
  tests/golden/data/box.frames      the good frames of a Box action space, a stream
  tests/golden/data/box.jsonl       their JSON, one line each
  tests/fuzz/corpus/frame/*  seed inputs for tests/fuzz/fuzz_frame.c (good_*, bad_*)

Run from the top of the source tree:  python3 tests/golden/make_golden.py
Needs the msgpack and numpy packages; never run by the build.
"""
import json
import os
import sys

import msgpack
import numpy as np

DT = {"u8": "<u1", "i8": "<i1", "i32": "<i4", "i64": "<i8", "f32": "<f4", "f64": "<f8"}


def T(dtype, values, shape=None):
    """A tensor as the protocol lays it out: dtype, shape, little-endian bytes."""
    a = np.asarray(values, dtype=DT[dtype])
    if shape is not None:
        a = a.reshape(shape)
    return {"dtype": dtype, "shape": list(a.shape), "data": a.tobytes()}


class Pairs(list):
    """A msgpack map written pair by pair (keys may repeat, order is kept)."""


def pk(obj, **kw):
    if isinstance(obj, Pairs):
        out = msgpack.Packer(use_bin_type=True, **kw).pack_map_header(len(obj))
        for k, v in obj:
            out += pk(k, **kw) + pk(v, **kw)
        return out
    if isinstance(obj, dict) and any(isinstance(v, Pairs) for v in obj.values()):
        return pk(Pairs(obj.items()), **kw)
    return msgpack.packb(obj, use_bin_type=True, **kw)


def replace(pairs, key, value):
    return Pairs((k, value if k == key else v) for k, v in pairs)


def drop(pairs, key):
    return Pairs((k, v) for k, v in pairs if k != key)


def add(pairs, key, value):
    return Pairs(list(pairs) + [(key, value)])


# ---- good frames -------------------------------------------------------------

rng = np.random.default_rng(7)

step_obs = rng.standard_normal((3, 4)).astype("<f4")
step_obs[0, :] = [0.1, -0.0, np.float32(1e-45), np.finfo(np.float32).max]
step_final = np.zeros((3, 4), dtype="<f4")
step_final[2, :] = rng.standard_normal(4).astype("<f4")
# Keys out of the usual order, and a tensor map with its keys reordered:
# neither order may matter to the decoder.
step = Pairs([
    ("version", 1),
    ("type", "step"),
    ("run", 0xDEADBEEF),            # uint 32
    ("actor", 7),                   # fixint
    ("seq", 123456789012),          # uint 64
    ("env0", 256),                  # uint 16
    ("num_actions", 2),
    ("obs", Pairs([("shape", [3, 4]), ("data", step_obs.tobytes()), ("dtype", "f32")])),
    ("reward", T("f32", [1.0, -0.5, 0.1])),
    ("terminated", T("u8", [0, 1, 0])),
    ("truncated", T("u8", [0, 0, 1])),
    ("ep_return", T("f32", [0.0, 12.5, 500.0])),
    ("ep_length", T("i32", [10, 200, 500])),
    ("final_obs", T("f32", step_final)),
    ("note", 'h\u00e9llo "quoted"\n\ttab'),
    ("temperature", 0.5),
    ("flag", True),
    ("nothing", None),
])

unroll = Pairs([
    ("type", "unroll"),
    ("version", 1),
    ("run", 1),
    ("actor", 0),
    ("num_actions", 4),
    ("env", T("i32", [3, 4])),
    ("obs", T("u8", rng.integers(0, 256, size=(2, 3, 2, 2)))),
    ("action", T("i32", [[0, 1, 2], [3, 0, 1]])),
    ("reward", T("f32", [[0, 1, 0], [0, 0, -1]])),
    ("terminated", T("u8", [[0, 0, 1], [0, 0, 0]])),
    ("truncated", T("u8", [[0, 0, 0], [0, 1, 0]])),
    ("final_value", T("f32", [[0, 0, 0], [0, 0.75, 0]])),
    ("policy_version", T("i32", [[5, 5, 6], [2147483647, 0, 1]])),
    ("logits", T("f32", rng.standard_normal((2, 3, 4)))),
])

episode = Pairs([
    ("type", "episode"),
    ("version", 1),
    ("run", 4294967295),
    ("actor", 4294967295),
    ("env", T("i32", [0, 5, 9])),
    ("return", T("f32", [21.0, np.nan, -np.inf])),
    ("length", T("i32", [21, 7, 1])),
    ("truncated", T("u8", [0, 1, 0])),
])

# Every dtype at its extremes, rank 0 and rank 6 tensors, as extra fields.
action = Pairs([
    ("type", "action"),
    ("version", 1),
    ("run", 0),
    ("actor", 0),
    ("seq", 0),
    ("env0", 0),
    ("policy_version", 0),
    ("action", T("i32", [1, 0, -7])),
    ("x_u8", T("u8", [0, 255])),
    ("x_i8", T("i8", [-128, 127])),
    ("x_i32", T("i32", [-2147483648, 2147483647])),
    ("x_i64", T("i64", [-(2**63), 2**63 - 1, 0])),
    ("x_f64", T("f64", [0.1, -1e300, 5e-324, -np.nan, np.inf, -0.0])),
    ("x_f32", T("f32", [np.float32(1.17549435e-38), 16777216.0, 1.5e10, -np.nan])),
    ("x_scalar", T("f32", 2.5)),
    ("x_rank6", T("i8", [1, 2], shape=(1, 1, 2, 1, 1, 1))),
    ("x_empty", T("f32", np.zeros((2, 0)))),
    ("x_negative", -3),
    ("x_int64", -(2**63)),
])

# float32 scalars on the wire (use_single_float): decoded to the same value.
params = Pairs([
    ("type", "params"),
    ("version", 1),
    ("policy_version", 2**40),
    ("run", 1),
    ("params", T("f32", [0.001, -2.0, 3.5, 1e-20, 7.0])),
    ("model", '{"layers":[{"linear":[4,2]}]}'),
    ("lr", 0.001),
])

error = Pairs([
    ("type", "error"),
    ("version", 1),
    ("code", -10001),
    ("message", "step frame: field 'reward': dtype i32, expected f32"),
    ("frame", "step"),
])

# A round of evolution strategies: four members in antithetic pairs, the
# centre of a 5-parameter model; and episodes played by its members.
generation = Pairs([
    ("type", "generation"),
    ("version", 1),
    ("run", 3),
    ("generation", 12),
    ("phase", 0),
    ("algorithm", "es"),
    ("noise_seed", 2**40 + 7),
    ("noise_size", 1000003),
    ("sigma", 0.02),
    ("rank", 0),
    ("genome", T("i64", [[17], [17], [2**62], [0]])),
    ("episodes", T("i32", [1, 1, 2, 1])),
    ("sign", T("f32", [1, -1, 1, -1])),
    ("centre", T("f32", [0.5, -0.25, 0.0, 1e-3, 3.0])),
    ("model", '{"layers":[{"linear":[4,2]}]}'),
    ("episode_cap", 500),
    ("greedy", False),
])

episode_evo = Pairs([
    ("type", "episode"),
    ("version", 1),
    ("run", 5),
    ("actor", 1),
    ("env", T("i32", [0, 3, 3])),
    ("return", T("f32", [9.0, 500.0, 12.0])),
    ("length", T("i32", [9, 500, 12])),
    ("truncated", T("u8", [0, 1, 0])),
    ("generation", T("i64", [12, 12, 11])),
    ("member", T("i32", [0, 3, -1])),
])

# A Box action space (continuous control): the bounds on a step frame (an
# infinite bound, and low == high, are allowed), the actions f32 [K, A] of an
# action frame, and an unroll of f32 actions [B, T+1, A] with the Gaussian's
# parameters f32 [B, T+1, 2A] as its logits.
step_box = Pairs([
    ("type", "step"),
    ("version", 1),
    ("run", 2),
    ("actor", 1),
    ("seq", 9),
    ("env0", 0),
    ("num_actions", 3),
    ("obs", T("f32", rng.standard_normal((2, 5)))),
    ("reward", T("f32", [0.25, -1.0])),
    ("terminated", T("u8", [0, 0])),
    ("truncated", T("u8", [0, 1])),
    ("ep_return", T("f32", [3.5, -7.0])),
    ("ep_length", T("i32", [4, 1000])),
    ("action_low", T("f32", [-1.0, -np.inf, 0.5])),
    ("action_high", T("f32", [1.0, np.inf, 0.5])),
])

action_box = Pairs([
    ("type", "action"),
    ("version", 1),
    ("run", 2),
    ("actor", 1),
    ("seq", 9),
    ("env0", 0),
    ("policy_version", 300),
    ("action", T("f32", [[0.5, -1.25, 3e-8], [-0.0, 1e30, -2.5]])),
    ("reset", T("u8", [0, 1])),
])

unroll_box = Pairs([
    ("type", "unroll"),
    ("version", 1),
    ("run", 2),
    ("actor", 1),
    ("num_actions", 2),
    ("env", T("i32", [0, 1])),
    ("obs", T("f32", rng.standard_normal((2, 3, 5)))),
    ("action", T("f32", rng.standard_normal((2, 3, 2)) * 3)),
    ("reward", T("f32", [[0, 0.5, 1], [-1, 0, 2]])),
    ("terminated", T("u8", [[0, 0, 0], [0, 1, 0]])),
    ("truncated", T("u8", [[0, 0, 1], [0, 0, 0]])),
    ("final_value", T("f32", [[0, 0, 1.5], [0, 0, 0]])),
    ("policy_version", T("i32", [[7, 7, 8], [7, 8, 8]])),
    ("logits", T("f32", rng.standard_normal((2, 3, 4)))),
])

# Evolution of Box members: a generation with the members' action noise and
# the learner's observation statistics (obs_norm), and an episode frame of a
# population server carrying the moments of the observations it acted on.
generation_box = Pairs([
    ("type", "generation"),
    ("version", 1),
    ("run", 4),
    ("generation", 30),
    ("phase", 0),
    ("algorithm", "es"),
    ("noise_seed", 5),
    ("noise_size", 1 << 20),
    ("sigma", 0.05),
    ("rank", 2),
    ("genome", T("i64", [[9], [9]])),
    ("episodes", T("i32", [1, 1])),
    ("sign", T("f32", [1, -1])),
    ("centre", T("f32", [0.125, -2.0, 0.0])),
    ("action_noise", 0.1),
    ("obs_mean", T("f32", [0.5, -3.25, 1e-3])),
    ("obs_var", T("f32", [2.0, 0.0, 1e4])),
])

episode_obs = Pairs([
    ("type", "episode"),
    ("version", 1),
    ("run", 4),
    ("actor", 0),
    ("env", T("i32", [1, 0])),
    ("return", T("f32", [-120.5, 33.0])),
    ("length", T("i32", [200, 61])),
    ("truncated", T("u8", [1, 0])),
    ("generation", T("i64", [30, 30])),
    ("member", T("i32", [0, 1])),
    ("obs_count", 261),
    ("obs_sum", T("f64", [130.5, -848.25, 0.25])),
    ("obs_sumsq", T("f64", [587.25, 2760.0625, 2.6e6])),
])

GOOD_BOX = [
    ("step_box", step_box, {}),
    ("action_box", action_box, {}),
    ("unroll_box", unroll_box, {}),
    ("generation_box", generation_box, {}),
    ("episode_obs", episode_obs, {}),
]

# The other centred algorithms: a round of separable natural evolution
# strategies (each parameter's std in sigmas; sigma their mean, for reports)
# and one of augmented random search (an es round under another name, here
# with low-rank noise).
generation_snes = Pairs([
    ("type", "generation"),
    ("version", 1),
    ("run", 6),
    ("generation", 3),
    ("phase", 0),
    ("algorithm", "snes"),
    ("noise_seed", 11),
    ("noise_size", 1 << 16),
    ("sigma", 0.0375),
    ("rank", 0),
    ("genome", T("i64", [[21], [21], [8], [8]])),
    ("episodes", T("i32", [1, 1, 1, 1])),
    ("sign", T("f32", [1, -1, 1, -1])),
    ("centre", T("f32", [0.25, -1.5, 0.0, 2.0])),
    ("sigmas", T("f32", [0.05, 0.0, 0.1, 0.0])),
    ("model", '{"torso": []}'),
])

generation_ars = Pairs([
    ("type", "generation"),
    ("version", 1),
    ("run", 6),
    ("generation", 9),
    ("phase", 0),
    ("algorithm", "ars"),
    ("noise_seed", 11),
    ("noise_size", 1 << 16),
    ("sigma", 0.03),
    ("rank", 1),
    ("genome", T("i64", [[5], [5]])),
    ("episodes", T("i32", [2, 2])),
    ("sign", T("f32", [1, -1])),
    ("centre", T("f32", [0.5, -0.75, 1e-4])),
])

# An environment with a frame skip (Atari's preprocessing: 4 emulator frames
# an agent step): the optional field frame_skip on a step frame, and on the
# unroll and episode frames the server makes of its steps.
step_skip = Pairs([
    ("type", "step"),
    ("version", 1),
    ("run", 77),
    ("actor", 1),
    ("seq", 40),
    ("env0", 2),
    ("num_actions", 6),
    ("obs", T("u8", rng.integers(0, 256, size=(2, 3, 3, 2)))),
    ("reward", T("f32", [0.0, -1.0])),
    ("terminated", T("u8", [0, 1])),
    ("truncated", T("u8", [0, 0])),
    ("ep_return", T("f32", [2.0, -21.0])),
    ("ep_length", T("i32", [300, 812])),
    ("frame_skip", 4),
])

unroll_skip = add(Pairs(list(unroll)), "frame_skip", 4)

episode_skip = Pairs([
    ("type", "episode"),
    ("version", 1),
    ("run", 77),
    ("actor", 1),
    ("env", T("i32", [3])),
    ("return", T("f32", [-21.0])),
    ("length", T("i32", [812])),
    ("truncated", T("u8", [0])),
    ("frame_skip", 4),
])

# Frames in golden_frames.h and the fuzzer's corpus, not in the streams.
GOOD_EVO = [
    ("generation_snes", generation_snes, {}),
    ("generation_ars", generation_ars, {}),
    ("step_skip", step_skip, {}),
    ("unroll_skip", unroll_skip, {}),
    ("episode_skip", episode_skip, {}),
]

GOOD = [
    ("step", step, {}),
    ("unroll", unroll, {}),
    ("episode", episode, {}),
    ("action", action, {}),
    ("params", params, {"use_single_float": True}),
    ("error", error, {}),
    ("generation", generation, {}),
    ("episode_evo", episode_evo, {}),
]


def json_number(x, dtype):
    """What to_json writes for one element (its value, not its text)."""
    if dtype in ("f32", "f64"):
        if np.isnan(x):
            return "-nan" if np.signbit(x) else "nan"
        if np.isinf(x):
            return "-inf" if x < 0 else "inf"
        if dtype == "f32":
            # numpy's shortest repr of the float32: the number with the
            # fewest digits that reads back to that float32.
            return float(str(np.float32(x)))
        return float(x)
    return int(x)


def json_value(v, single_float=False):
    if isinstance(v, (dict, Pairs)):
        d = dict(v)
        a = np.frombuffer(d["data"], dtype=DT[d["dtype"]]).reshape(d["shape"])
        data = np.vectorize(lambda x: json_number(x, d["dtype"]), otypes=[object])(a) if a.size else a
        # A tensor without elements is written as [] whatever its shape (the
        # shape field says the rest): nesting empty lists would cost as much
        # as the product of the leading dimensions, unbounded for [2**62, 0].
        data = (data.tolist() if a.size else []) if a.ndim else json_number(a[()], d["dtype"])
        return {"dtype": d["dtype"], "shape": d["shape"], "data": data}
    if isinstance(v, float) and single_float:
        return float(np.float32(v))
    return v


def frame_json(pairs, single_float=False):
    d = dict(pairs)
    out = {"type": d["type"], "version": d["version"]}
    for k, v in pairs:
        if k not in ("type", "version"):
            out[k] = json_value(v, single_float)
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


# ---- bad frames --------------------------------------------------------------

K = 3


def step_base():
    return Pairs([
        ("type", "step"), ("version", 1), ("run", 1), ("actor", 2), ("seq", 3), ("env0", 0),
        ("num_actions", 2),
        ("obs", T("f32", np.zeros((K, 4)))),
        ("reward", T("f32", np.zeros(K))),
        ("terminated", T("u8", np.zeros(K))),
        ("truncated", T("u8", np.zeros(K))),
        ("ep_return", T("f32", np.zeros(K))),
        ("ep_length", T("i32", np.zeros(K))),
    ])


def unroll_base(B=2, T1=3, A=4):
    z = np.zeros((B, T1))
    return Pairs([
        ("type", "unroll"), ("version", 1), ("run", 1), ("actor", 0), ("num_actions", A),
        ("env", T("i32", np.zeros(B))),
        ("obs", T("f32", np.zeros((B, T1, 4)))),
        ("action", T("i32", z)), ("reward", T("f32", z)), ("terminated", T("u8", z)),
        ("truncated", T("u8", z)), ("final_value", T("f32", z)), ("policy_version", T("i32", z)),
        ("logits", T("f32", np.zeros((B, T1, A)))),
    ])


def episode_base(N=2):
    return Pairs([
        ("type", "episode"), ("version", 1), ("run", 1), ("actor", 0),
        ("env", T("i32", np.zeros(N))), ("return", T("f32", np.zeros(N))),
        ("length", T("i32", np.zeros(N))), ("truncated", T("u8", np.zeros(N))),
    ])


def params_base():
    return Pairs([("type", "params"), ("version", 1), ("policy_version", 3), ("run", 1),
                  ("params", T("f32", np.zeros(5)))])


def error_base():
    return Pairs([("type", "error"), ("version", 1), ("code", -1), ("message", "boom")])


def generation_base(M=2, L=3):
    return Pairs([
        ("type", "generation"), ("version", 1), ("run", 1), ("generation", 0), ("phase", 0),
        ("algorithm", "ga"), ("noise_seed", 1), ("noise_size", 1000), ("sigma", 0.005), ("rank", 0),
        ("genome", T("i64", np.zeros((M, L)))), ("episodes", T("i32", np.ones(M))),
    ])


def tensor_pairs(dtype="f32", shape=(K,), data=None):
    if data is None:
        data = np.zeros(shape, dtype=DT[dtype]).tobytes()
    return Pairs([("dtype", dtype), ("shape", list(shape)), ("data", data)])


EF, ET, EV = "SEED_EFRAME", "SEED_ETYPE", "SEED_EVERSION"
s = step_base()
good_step = pk(s)
BAD = []


def bad(name, data, code, *parts):
    if not isinstance(data, bytes):
        data = pk(data)
    BAD.append((name, data, code, parts))


# msgpack level
bad("empty", b"", EF, "frame: empty")
bad("not_msgpack", b"\xc1", EF, "frame: not msgpack: byte 0xc1 at offset 0")
c1 = bytearray(pk(add(s, "x", 1)))
c1[-1] = 0xC1
bad("not_msgpack_inside", bytes(c1), EF, "frame: not msgpack: byte 0xc1 at offset %d" % (len(c1) - 1))
bad("truncated", good_step[:-5], EF, "frame: ", "past the end of the input")
bad("truncated_header", b"\xc5\x00", EF, "frame: not msgpack: the input ends inside an object")
bad("truncated_count", good_step[:1], EF, "frame: 26 entries at offset 0 cannot fit")
bad("trailing_bytes", good_step + b"\x00", EF, "frame: 1 trailing byte(s) after the frame")
bad("two_frames", good_step + good_step, EF, "trailing byte(s)")
bad("huge_count", b"\x81\xa1a\xdd\xff\xff\xff\xff", EF, "frame: ", "4294967295 entries", "cannot fit")
bad("too_many_objects", pk(add(s, "x", [None] * 4100)), EF,
    "frame: more than 4096 msgpack objects")
deep = 1
for _ in range(40):
    deep = [deep]
bad("nested_too_deep", add(s, "x", deep), EF, "frame: ", "nested too deeply")
bad("not_a_map", [1, 2], EF, "frame: not a map but array")
bad("not_a_map_int", 5, EF, "frame: not a map but int")
bad("key_not_str", add(s, 1, 2), EF, "frame: key 13 is int, expected str")
# type and version
bad("type_missing", drop(s, "type"), EF, "frame: field 'type': missing")
bad("type_not_str", replace(s, "type", 1), EF, "frame: field 'type': int, expected str")
bad("type_bin", replace(s, "type", b"step"), EF, "frame: field 'type': bin, expected str")
bad("type_twice", add(s, "type", "step"), EF, "frame: field 'type': appears twice")
bad("type_unknown", replace(s, "type", "stepp"), ET, "frame: field 'type': unknown frame type 'stepp'")
bad("type_unknown_binary", replace(s, "type", "st\x01p"), ET, "frame: field 'type': unknown frame type 'st?p'")
bad("version_missing", drop(s, "version"), EF, "step frame: field 'version': missing")
bad("version_not_int", replace(s, "version", "1"), EF, "step frame: field 'version': str, expected int")
bad("version_float", replace(s, "version", 1.0), EF, "step frame: field 'version': float, expected int")
bad("version_twice", add(s, "version", 1), EF, "frame: field 'version': appears twice")
bad("version_2", replace(s, "version", 2), EV,
    "step frame: field 'version': version 2 not supported (this build speaks version 1)")
bad("version_0", replace(s, "version", 0), EV, "step frame: field 'version': version 0 not supported")
bad("version_negative", replace(s, "version", -1), EV, "step frame: field 'version': version -1 not supported")
bad("version_before_type", replace(replace(s, "version", 9), "type", "hello"), EV,
    "frame: field 'version': version 9 not supported")
# fields
bad("field_twice", add(s, "reward", T("f32", np.zeros(K))), EF, "step frame: field 'reward': appears twice")
bad("too_many_fields_33", Pairs(list(s) + [("x%d" % i, i) for i in range(22)]), EF,
    "step frame: 33 fields, at most 32 besides type and version")
bad("field_missing", drop(s, "reward"), EF, "step frame: field 'reward': missing")
bad("field_missing_int", drop(s, "seq"), EF, "step frame: field 'seq': missing")
bad("int_as_str", replace(s, "run", "1"), EF, "step frame: field 'run': str, expected int")
bad("int_as_float", replace(s, "run", 1.0), EF, "step frame: field 'run': float, expected int")
bad("int_as_bool", replace(s, "actor", True), EF, "step frame: field 'actor': bool, expected int")
bad("int_as_nil", replace(s, "actor", None), EF, "step frame: field 'actor': nil, expected int")
bad("int_as_tensor", replace(s, "run", T("i32", [1])), EF, "step frame: field 'run': tensor, expected int")
bad("run_too_big", replace(s, "run", 2**32), EF, "step frame: field 'run': 4294967296 out of range [0, 4294967295]")
bad("run_negative", replace(s, "run", -1), EF, "step frame: field 'run': -1 out of range [0, 4294967295]")
bad("actor_too_big", replace(s, "actor", 2**32), EF, "step frame: field 'actor': 4294967296 out of range")
bad("env0_negative", replace(s, "env0", -5), EF, "step frame: field 'env0': -5 out of range [0, 2147483647]")
bad("env0_too_big", replace(s, "env0", 2**31), EF, "step frame: field 'env0': 2147483648 out of range")
bad("seq_uint64", replace(s, "seq", 2**64 - 1), EF, "step frame: field 'seq': integer 18446744073709551615 out of range")
bad("seq_negative", replace(s, "seq", -2), EF, "step frame: field 'seq': -2 out of range")
bad("num_actions_zero", replace(s, "num_actions", 0), EF, "step frame: field 'num_actions': 0 out of range [1, 2147483647]")
bad("array_value", add(s, "x", [1, 2]), EF, "step frame: field 'x': array values are not allowed")
bad("bin_value", add(s, "x", b"\x00"), EF, "step frame: field 'x': bin values are not allowed")
bad("ext_value", add(s, "x", msgpack.ExtType(1, b"ab")), EF, "step frame: field 'x': ext values are not allowed")
bad("tensor_as_int", replace(s, "reward", 5), EF, "step frame: field 'reward': int, expected tensor")
bad("tensor_as_str", replace(s, "obs", "pixels"), EF, "step frame: field 'obs': str, expected tensor")
# tensors
bad("dtype_unknown", replace(s, "obs", tensor_pairs("f16", (K, 4), b"\x00" * 24)), EF,
    "step frame: field 'obs': dtype 'f16' unknown")
bad("dtype_not_str", replace(s, "obs", Pairs([("dtype", 4), ("shape", [K]), ("data", b"")])), EF,
    "step frame: field 'obs': dtype is int, expected str")
bad("dtype_wrong", replace(s, "reward", T("i32", np.zeros(K))), EF,
    "step frame: field 'reward': dtype i32, expected f32")
bad("dtype_wrong_u8", replace(s, "terminated", T("i8", np.zeros(K))), EF,
    "step frame: field 'terminated': dtype i8, expected u8")
bad("dtype_wrong_i32", replace(s, "ep_length", T("i64", np.zeros(K))), EF,
    "step frame: field 'ep_length': dtype i64, expected i32")
bad("shape_not_array", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", 3), ("data", b"\0" * 12)])), EF,
    "step frame: field 'reward': shape is int, expected an array of ints")
bad("shape_negative", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", [-3]), ("data", b"")])), EF,
    "step frame: field 'reward': dimension 0 is negative (-3)")
bad("shape_float", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", [3.0]), ("data", b"\0" * 12)])), EF,
    "step frame: field 'reward': dimension 0 is float, expected int")
bad("shape_str", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", ["3"]), ("data", b"\0" * 12)])), EF,
    "step frame: field 'reward': dimension 0 is str, expected int")
bad("shape_huge_dim", add(s, "x", Pairs([("dtype", "u8"), ("shape", [2**64 - 1]), ("data", b"")])), EF,
    "step frame: field 'x': dimension 0 is too large (18446744073709551615)")
bad("rank_too_big", add(s, "x", tensor_pairs("u8", (1,) * 7)), EF, "step frame: field 'x': shape of rank 7, at most 6")
bad("numel_overflow", add(s, "x", Pairs([("dtype", "f32"), ("shape", [2**62, 2**62]), ("data", b"")])), EF,
    "step frame: field 'x': shape [4611686018427387904,4611686018427387904] f32 is too large")
bad("bytes_overflow", add(s, "x", Pairs([("dtype", "f64"), ("shape", [2**61]), ("data", b"")])), EF,
    "step frame: field 'x': shape [2305843009213693952] f64 is too large")
bad("over_max_bytes", add(s, "x", Pairs([("dtype", "u8"), ("shape", [2**30 + 1]), ("data", b"")])), EF,
    "step frame: field 'x':", "is too large (more than 1073741824 bytes)")
bad("data_short", replace(s, "reward", tensor_pairs("f32", (K,), b"\0" * 8)), EF,
    "step frame: field 'reward': shape [3] f32 needs 12 bytes of data, got 8")
bad("data_long", replace(s, "obs", tensor_pairs("f32", (K, 4), b"\0" * 49)), EF,
    "step frame: field 'obs': shape [3,4] f32 needs 48 bytes of data, got 49")
bad("data_not_bin", replace(s, "reward", tensor_pairs("f32", (K,), "\0" * 12)), EF,
    "step frame: field 'reward': data is str, expected bin")
bad("data_array", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", [K]), ("data", [0.0] * K)])), EF,
    "step frame: field 'reward': data is array, expected bin")
bad("tensor_two_keys", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", [K])])), EF,
    "step frame: field 'reward': a tensor is a map of dtype, shape and data; this map has 2 keys")
bad("tensor_four_keys", replace(s, "reward", Pairs(list(tensor_pairs()) + [("strides", [4])])), EF,
    "step frame: field 'reward': a tensor is a map of dtype, shape and data; this map has 4 keys")
bad("tensor_unknown_key", replace(s, "reward", Pairs([("dtype", "f32"), ("shape", [K]), ("bytes", b"\0" * 12)])),
    EF, "step frame: field 'reward': unknown tensor key 'bytes'")
bad("tensor_key_twice", replace(s, "reward", Pairs([("dtype", "f32"), ("dtype", "f32"), ("data", b"\0" * 12)])),
    EF, "step frame: field 'reward': tensor key 'dtype' appears twice")
bad("tensor_key_int", replace(s, "reward", Pairs([(1, "f32"), ("shape", [K]), ("data", b"\0" * 12)])),
    EF, "step frame: field 'reward': tensor key of kind int")
# schema: ranks and dimensions
bad("rank_wrong", replace(s, "reward", T("f32", np.zeros((K, 1)))), EF,
    "step frame: field 'reward': shape [3,1], expected [K]")
bad("obs_scalar", replace(s, "obs", T("f32", 0.0)), EF, "step frame: field 'obs': shape [], expected [K,...]")
bad("K_mismatch", replace(s, "reward", T("f32", np.zeros(K - 1))), EF,
    "step frame: field 'reward': shape [2], expected [K]: dimension 0 is 2, but K = 3 (from 'obs')")
bad("K_mismatch_last", replace(s, "ep_length", T("i32", np.zeros(K + 1))), EF,
    "step frame: field 'ep_length':", "but K = 3 (from 'obs')")
bad("zero_dim", replace(s, "obs", T("f32", np.zeros((K, 0)))), EF,
    "step frame: field 'obs': shape [3,0]: dimension 1 is 0, expected at least 1")
bad("zero_K", Pairs((k, T(dict(v)["dtype"], np.zeros((0,) + tuple(dict(v)["shape"][1:])))
                      if isinstance(v, dict) else v) for k, v in s), EF,
    "step frame: field 'obs': shape [0,4]: dimension 0 is 0, expected at least 1")
bad("final_obs_dtype", add(s, "final_obs", T("u8", np.zeros((K, 4)))), EF,
    "step frame: field 'final_obs': dtype u8, expected f32 (as 'obs')")
bad("final_obs_shape", add(s, "final_obs", T("f32", np.zeros((K, 5)))), EF,
    "step frame: field 'final_obs': shape [3,5], expected [3,4] (as 'obs')")
bad("final_obs_int", add(s, "final_obs", 0), EF, "step frame: field 'final_obs': int, expected tensor")
u = unroll_base()
bad("unroll_B_mismatch", replace(u, "obs", T("f32", np.zeros((3, 3, 4)))), EF,
    "unroll frame: field 'obs': shape [3,3,4], expected [B,T+1,...]: dimension 0 is 3, but B = 2 (from 'env')")
bad("unroll_T_mismatch", replace(u, "reward", T("f32", np.zeros((2, 4)))), EF,
    "unroll frame: field 'reward': shape [2,4], expected [B,T+1]: dimension 1 is 4, but T+1 = 3 (from 'obs')")
bad("unroll_obs_rank", replace(u, "obs", T("f32", np.zeros(2))), EF,
    "unroll frame: field 'obs': shape [2], expected [B,T+1,...]")
bad("unroll_logits_A", replace(u, "logits", T("f32", np.zeros((2, 3, 5)))), EF,
    "unroll frame: field 'logits': shape [2,3,5], expected [B,T+1,A]: dimension 2 is 5, but A = 4 (from 'num_actions')")
bad("unroll_logits_rank", replace(u, "logits", T("f32", np.zeros((2, 3)))), EF,
    "unroll frame: field 'logits': shape [2,3], expected [B,T+1,A]")
bad("unroll_policy_version_dtype", replace(u, "policy_version", T("i64", np.zeros((2, 3)))), EF,
    "unroll frame: field 'policy_version': dtype i64, expected i32")
bad("unroll_env_missing", drop(u, "env"), EF, "unroll frame: field 'env': missing")
bad("unroll_final_value_missing", drop(u, "final_value"), EF, "unroll frame: field 'final_value': missing")
e = episode_base()
bad("episode_N_mismatch", replace(e, "length", T("i32", np.zeros(3))), EF,
    "episode frame: field 'length': shape [3], expected [N]: dimension 0 is 3, but N = 2 (from 'env')")
bad("episode_return_dtype", replace(e, "return", T("f64", np.zeros(2))), EF,
    "episode frame: field 'return': dtype f64, expected f32")
p = params_base()
bad("params_missing", drop(p, "params"), EF, "params frame: field 'params': missing")
bad("params_dtype", replace(p, "params", T("f64", np.zeros(5))), EF, "params frame: field 'params': dtype f64, expected f32")
bad("params_rank", replace(p, "params", T("f32", np.zeros((5, 1)))), EF, "params frame: field 'params': shape [5,1], expected [P]")
bad("params_policy_version", drop(p, "policy_version"), EF, "params frame: field 'policy_version': missing")
bad("params_model_int", add(p, "model", 3), EF, "params frame: field 'model': int, expected str")
e = add(add(episode_base(), "generation", T("i64", [1, 1])), "member", T("i32", [0, 1]))
bad("episode_generation_alone", drop(e, "member"), EF,
    "episode frame: field 'generation': present without 'member' (they come together or not at all)")
bad("episode_member_alone", drop(e, "generation"), EF,
    "episode frame: field 'member': present without 'generation'")
bad("episode_member_dtype", replace(e, "member", T("i64", [0, 1])), EF,
    "episode frame: field 'member': dtype i64, expected i32")
bad("episode_generation_N", replace(e, "generation", T("i64", [1, 1, 1])), EF,
    "episode frame: field 'generation': shape [3], expected [N]: dimension 0 is 3, but N = 2 (from 'env')")
g = generation_base()
bad("generation_algorithm", replace(g, "algorithm", "cma"), EF,
    "generation frame: field 'algorithm': 'cma', expected one of 'es', 'ga', 'rs', 'snes', 'ars'")
bad("generation_algorithm_int", replace(g, "algorithm", 1), EF,
    "generation frame: field 'algorithm': int, expected str")
bad("generation_genome_missing", drop(g, "genome"), EF, "generation frame: field 'genome': missing")
bad("generation_genome_rank", replace(g, "genome", T("i64", np.zeros(2))), EF,
    "generation frame: field 'genome': shape [2], expected [M,L]")
bad("generation_genome_dtype", replace(g, "genome", T("i32", np.zeros((2, 3)))), EF,
    "generation frame: field 'genome': dtype i32, expected i64")
bad("generation_M_mismatch", replace(g, "episodes", T("i32", np.ones(3))), EF,
    "generation frame: field 'episodes': shape [3], expected [M]: dimension 0 is 3, but M = 2 (from 'genome')")
bad("generation_sign_M", add(g, "sign", T("f32", np.ones(4))), EF,
    "generation frame: field 'sign': shape [4], expected [M]: dimension 0 is 4, but M = 2 (from 'genome')")
bad("generation_centre_dtype", add(g, "centre", T("f64", np.ones(4))), EF,
    "generation frame: field 'centre': dtype f64, expected f32")
bad("generation_sigmas_P", replace(generation_snes, "sigmas", T("f32", [0.05, 0.0, 0.1])), EF,
    "generation frame: field 'sigmas': shape [3], expected [P]: dimension 0 is 3, but P = 4 (from 'centre')")
bad("generation_sigmas_dtype", add(g, "sigmas", T("f64", np.ones(4))), EF,
    "generation frame: field 'sigmas': dtype f64, expected f32")
bad("generation_sigma_negative", replace(g, "sigma", -0.5), EF,
    "generation frame: field 'sigma': -0.5, expected a finite value >= 0")
bad("generation_sigma_nan", replace(g, "sigma", float("nan")), EF,
    "generation frame: field 'sigma': nan, expected a finite value >= 0")
bad("generation_sigma_str", replace(g, "sigma", "0.1"), EF, "generation frame: field 'sigma': str, expected float")
bad("generation_phase", replace(g, "phase", 2), EF, "generation frame: field 'phase': 2 out of range [0, 1]")
bad("generation_noise_size", replace(g, "noise_size", 0), EF,
    "generation frame: field 'noise_size': 0 out of range [1, 2147483647]")
bad("generation_negative", replace(g, "generation", -1), EF, "generation frame: field 'generation': -1 out of range")
bad("generation_cap_negative", add(g, "episode_cap", -5), EF, "generation frame: field 'episode_cap': -5 out of range")
bad("generation_greedy_int", add(g, "greedy", 1), EF, "generation frame: field 'greedy': int, expected bool")
go = add(add(g, "obs_mean", T("f32", [0, 1, 2])), "obs_var", T("f32", [1, 1, 1]))
bad("generation_obs_mean_alone", drop(go, "obs_var"), EF,
    "generation frame: field 'obs_mean': present without 'obs_var' (they come together or not at all)")
bad("generation_obs_var_alone", drop(go, "obs_mean"), EF,
    "generation frame: field 'obs_var': present without 'obs_mean'")
bad("generation_obs_D", replace(go, "obs_var", T("f32", [1, 1])), EF,
    "generation frame: field 'obs_var': shape [2], expected [D]: dimension 0 is 2, but D = 3 (from 'obs_mean')")
bad("generation_obs_mean_dtype", replace(go, "obs_mean", T("f64", [0, 1, 2])), EF,
    "generation frame: field 'obs_mean': dtype f64, expected f32")
bad("generation_action_noise_negative", add(g, "action_noise", -0.25), EF,
    "generation frame: field 'action_noise': -0.25, expected a finite value >= 0")
bad("generation_action_noise_str", add(g, "action_noise", "0.1"), EF,
    "generation frame: field 'action_noise': str, expected float")
eo = add(add(add(episode_base(), "obs_count", 7), "obs_sum", T("f64", [1.5, -2])), "obs_sumsq", T("f64", [4, 9]))
bad("episode_obs_count_alone", drop(drop(eo, "obs_sum"), "obs_sumsq"), EF,
    "episode frame: field 'obs_count': present without 'obs_sum' (they come together or not at all)")
bad("episode_obs_sum_alone", drop(eo, "obs_sumsq"), EF,
    "episode frame: field 'obs_sum': present without 'obs_sumsq'")
bad("episode_obs_no_count", drop(eo, "obs_count"), EF,
    "episode frame: field 'obs_sumsq': present without 'obs_count'")
bad("episode_obs_D", replace(eo, "obs_sumsq", T("f64", [4, 9, 1])), EF,
    "episode frame: field 'obs_sumsq': shape [3], expected [D]: dimension 0 is 3, but D = 2 (from 'obs_sum')")
bad("episode_obs_sum_dtype", replace(eo, "obs_sum", T("f32", [1.5, -2])), EF,
    "episode frame: field 'obs_sum': dtype f32, expected f64")
bad("episode_obs_count_negative", replace(eo, "obs_count", -1), EF,
    "episode frame: field 'obs_count': -1 out of range")
# The frame skip: an int >= 1 wherever it appears.
bad("step_frame_skip_zero", replace(step_skip, "frame_skip", 0), EF,
    "step frame: field 'frame_skip': 0 out of range [1, 2147483647]")
bad("unroll_frame_skip_negative", replace(unroll_skip, "frame_skip", -4), EF,
    "unroll frame: field 'frame_skip': -4 out of range [1, 2147483647]")
bad("episode_frame_skip_float", replace(episode_skip, "frame_skip", 4.0), EF,
    "episode frame: field 'frame_skip': float, expected int")
bad("step_frame_skip_str", replace(step_skip, "frame_skip", "4"), EF,
    "step frame: field 'frame_skip': str, expected int")
bad("episode_obs_sum_nan", replace(eo, "obs_sum", T("f64", [1.5, np.nan])), EF,
    "episode frame: field 'obs_sum': element 1 is nan, expected finite")
bad("episode_obs_sumsq_negative", replace(eo, "obs_sumsq", T("f64", [-4, 9])), EF,
    "episode frame: field 'obs_sumsq': element 0 is -4, expected a finite value >= 0")
r = error_base()
bad("error_message_int", replace(r, "message", 3), EF, "error frame: field 'message': int, expected str")
bad("error_code_missing", drop(r, "code"), EF, "error frame: field 'code': missing")
bad("error_frame_int", add(r, "frame", 1), EF, "error frame: field 'frame': int, expected str")
a = Pairs([("type", "action"), ("version", 1), ("run", 1), ("actor", 2), ("seq", 3), ("env0", 4),
           ("policy_version", 5), ("action", T("i32", [0, 1]))])
bad("action_dtype", replace(a, "action", T("i64", [0, 1])), EF, "action frame: field 'action': dtype i64, expected i32")
bad("action_policy_version_negative", replace(a, "policy_version", -1), EF,
    "action frame: field 'policy_version': -1 out of range")
bad("action_reset_dtype", add(a, "reset", T("i32", [0, 1])), EF, "action frame: field 'reset': dtype i32, expected u8")
bad("action_reset_K", add(a, "reset", T("u8", [0, 1, 1])), EF,
    "action frame: field 'reset': shape [3], expected [K]: dimension 0 is 3, but K = 2 (from 'action')")
bad("action_dtype_either", replace(a, "action", T("u8", [0, 1])), EF,
    "action frame: field 'action': dtype u8, expected i32 (discrete actions) or f32 (Box actions)")
# Box action spaces
sb = add(add(s, "action_low", T("f32", [-1, -2])), "action_high", T("f32", [1, 2]))
bad("step_low_alone", drop(sb, "action_high"), EF,
    "step frame: field 'action_low': present without 'action_high' (they come together or not at all)")
bad("step_high_alone", drop(sb, "action_low"), EF,
    "step frame: field 'action_high': present without 'action_low'")
bad("step_bounds_A", replace(replace(sb, "action_low", T("f32", [0, 0, 0])), "action_high", T("f32", [1, 1, 1])),
    EF, "step frame: field 'action_low': shape [3], expected [A]: dimension 0 is 3, but A = 2 (from 'num_actions')")
bad("step_high_A", replace(sb, "action_high", T("f32", [1])), EF,
    "step frame: field 'action_high': shape [1], expected [A]: dimension 0 is 1, but A = 2 (from 'num_actions')")
bad("step_bounds_dtype", replace(sb, "action_low", T("f64", [-1, -2])), EF,
    "step frame: field 'action_low': dtype f64, expected f32")
bad("step_bounds_rank", replace(sb, "action_high", T("f32", [[1, 2]])), EF,
    "step frame: field 'action_high': shape [1,2], expected [A]")
bad("step_low_nan", replace(sb, "action_low", T("f32", [np.nan, -2])), EF,
    "step frame: field 'action_low': element 0 is NaN")
bad("step_high_nan", replace(sb, "action_high", T("f32", [1, -np.nan])), EF,
    "step frame: field 'action_high': element 1 is NaN")
bad("step_low_above_high", replace(sb, "action_low", T("f32", [-1, 2.5])), EF,
    "step frame: field 'action_low': element 1 is 2.5, above action_high's 2")
bad("step_low_inf_above", replace(sb, "action_low", T("f32", [np.inf, -2])), EF,
    "step frame: field 'action_low': element 0 is inf, above action_high's 1")
ab = replace(a, "action", T("f32", np.zeros((2, 3))))
nan7 = np.zeros((3, 3), dtype="<f4")
nan7.flat[7] = np.nan
bad("action_box_nan", replace(add(ab, "reset", T("u8", [0, 1, 0])), "action", T("f32", nan7)), EF,
    "action frame: field 'action': element 7 is not finite")
bad("action_box_inf", replace(ab, "action", T("f32", [[0, 0, 0], [0, 0, -np.inf]])), EF,
    "action frame: field 'action': element 5 is not finite")
bad("action_box_rank", replace(ab, "action", T("f32", [0.5, 1])), EF,
    "action frame: field 'action': shape [2], expected [K,A] (a Box frame: 'action' is f32)")
bad("action_box_reset_K", add(ab, "reset", T("u8", [1])), EF,
    "action frame: field 'reset': shape [1], expected [K]: dimension 0 is 1, but K = 2 (from 'action')")
ub = replace(replace(unroll_base(A=2), "action", T("f32", np.zeros((2, 3, 2)))), "logits", T("f32", np.zeros((2, 3, 4))))
bad("unroll_box_logits_2A", replace(ub, "logits", T("f32", np.zeros((2, 3, 2)))), EF,
    "unroll frame: field 'logits': shape [2,3,2], expected [B,T+1,2A]: dimension 2 is 2, but 2A = 4 (from 'num_actions')")
bad("unroll_box_action_A", replace(ub, "action", T("f32", np.zeros((2, 3, 3)))), EF,
    "unroll frame: field 'action': shape [2,3,3], expected [B,T+1,A]: dimension 2 is 3, but A = 2 (from 'num_actions')")
bad("unroll_box_action_rank", replace(ub, "action", T("f32", np.zeros((2, 3)))), EF,
    "unroll frame: field 'action': shape [2,3], expected [B,T+1,A] (a Box frame: 'action' is f32)")
bad("unroll_box_prev_action_i32", add(add(ub, "state", T("f32", np.zeros((2, 1)))), "prev_action", T("i32", [-1, 0])),
    EF, "unroll frame: field 'prev_action': dtype i32, expected f32 (a Box frame: 'action' is f32)")
bad("unroll_prev_action_f32", add(unroll_base(), "prev_action", T("f32", [0, 1])), EF,
    "unroll frame: field 'prev_action': dtype f32, expected i32 (discrete actions: 'action' is i32)")
bad("unroll_action_u8", replace(unroll_base(), "action", T("u8", np.zeros((2, 3)))), EF,
    "unroll frame: field 'action': dtype u8, expected i32 (discrete actions) or f32 (Box actions)")
sq = Pairs([(k, v) for k, v in replace(unroll_base(A=2), "type", "sequences") if k not in ("run", "actor")] + [
    ("run", T("i32", [1, 1])), ("actor", T("i32", [0, 0])), ("key", T("i64", [5, 6])), ("weight", T("f32", [1, 1]))])
bad("sequences_box", replace(replace(sq, "action", T("f32", np.zeros((2, 3, 2)))), "logits", T("f32", np.zeros((2, 3, 4)))),
    EF, "sequences frame: field 'action': dtype f32, expected i32")


# ---- output ------------------------------------------------------------------

def c_bytes(name, data):
    return "static const unsigned char %s[] = {\n%s\n};\n" % (name, ",\n".join(
        ",".join("0x%02x" % b for b in data[i:i + 16]) for i in range(0, len(data), 16)) or "0")


def c_str(s):
    if isinstance(s, str):
        s = s.encode()
    out = []
    for b in s:
        c = chr(b)
        if c in '"\\' or b < 0x20 or b >= 0x7f or c == "?":
            out.append("\\%03o" % b)
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def c_double(x):
    return float(x).hex()


def main():
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    h = ["/* tests/golden/golden_frames.h: generated by tests/golden/make_golden.py (Python msgpack",
         " * and numpy); do not edit.  Frames packed by an implementation other than ours,",
         " * with the fields and JSON they must decode to, and bad frames with the error",
         " * they must get. */",
         "#include <stddef.h>",
         "",
         "struct golden_field {",
         "\tconst char *name;",
         "\tint kind;            /* SEED_VALUE_* */",
         "\tlong long i;         /* INT, BOOL */",
         "\tdouble f;            /* FLOAT */",
         "\tconst char *s;       /* STR */",
         "\tsize_t slen;",
         "\tconst char *dtype;   /* TENSOR */",
         "\tint rank;",
         "\tlong long shape[6];",
         "\tconst unsigned char *data;",
         "\tsize_t nbytes;",
         "};",
         "",
         "struct golden_frame {",
         "\tconst char *name;",
         "\tconst char *type;",
         "\tconst unsigned char *bytes;",
         "\tsize_t len;",
         "\tconst char *json;    /* what to_json must print, compared by value */",
         "\tint nfields;",
         "\tstruct golden_field fields[20];",
         "};",
         "",
         "struct golden_bad {",
         "\tconst char *name;",
         "\tconst unsigned char *bytes;",
         "\tsize_t len;",
         "\tint code;            /* the negative error code */",
         "\tconst char *parts[4]; /* the message must contain each */",
         "};",
         ""]
    frames_bin = b""
    jsonl = []
    entries = []
    corpus = {}
    box_bin = b""
    box_jsonl = []
    for name, pairs, kw in GOOD + GOOD_BOX + GOOD_EVO:
        data = pk(pairs, **kw)
        js = frame_json(pairs, single_float=kw.get("use_single_float", False))
        if (name, pairs, kw) in GOOD_BOX:
            box_bin += data
            box_jsonl.append(js)
        elif (name, pairs, kw) in GOOD:
            frames_bin += data
            jsonl.append(js)
        corpus["good_" + name] = data
        h.append(c_bytes("g_%s_bytes" % name, data))
        fields = []
        for k, v in pairs:
            if k in ("type", "version"):
                continue
            if isinstance(v, (dict, Pairs)):
                d = dict(v)
                arr = "g_%s_%s_data" % (name, k)
                h.append(c_bytes(arr, d["data"]))
                shape = list(d["shape"]) + [0] * (6 - len(d["shape"]))
                fields.append('{.name = %s, .kind = SEED_VALUE_TENSOR, .dtype = "%s", .rank = %d, .shape = {%s}, '
                              '.data = %s, .nbytes = %d}' % (
                    c_str(k), d["dtype"], len(d["shape"]), ",".join("%dLL" % x for x in shape), arr,
                    len(d["data"])))
            elif v is None:
                fields.append("{.name = %s, .kind = SEED_VALUE_NIL}" % c_str(k))
            elif isinstance(v, bool):
                fields.append("{.name = %s, .kind = SEED_VALUE_BOOL, .i = %d}" % (c_str(k), int(v)))
            elif isinstance(v, int):
                fields.append("{.name = %s, .kind = SEED_VALUE_INT, .i = %s}" % (
                    c_str(k), "(-9223372036854775807LL - 1)" if v == -(2**63) else "%dLL" % v))
            elif isinstance(v, float):
                val = float(np.float32(v)) if kw.get("use_single_float") else v
                fields.append("{.name = %s, .kind = SEED_VALUE_FLOAT, .f = %s}" % (c_str(k), c_double(val)))
            elif isinstance(v, str):
                fields.append("{.name = %s, .kind = SEED_VALUE_STR, .s = %s, .slen = %d}" % (
                    c_str(k), c_str(v), len(v.encode())))
            else:
                raise TypeError(k)
        entries.append('\t{"%s", "%s", g_%s_bytes, sizeof g_%s_bytes, %s, %d, {\n\t\t%s\n\t}},' % (
            name, dict(pairs)["type"], name, name, c_str(js), len(fields), ",\n\t\t".join(fields)))
    h.append("static const struct golden_frame golden_frames[] = {")
    h.extend(entries)
    h.append("};")
    h.append("")
    bads = []
    for name, data, code, parts in BAD:
        h.append(c_bytes("b_%s" % name, data))
        bads.append('\t{"%s", b_%s, %d, -%s, {%s}},' % (name, name, len(data), code,
                                                          ", ".join(c_str(x) for x in parts)))
        if len(data) < 4096:
            corpus["bad_" + name] = data
    h.append("static const struct golden_bad golden_bad[] = {")
    h.extend(bads)
    h.append("};")
    with open(os.path.join(top, "tests/golden/golden_frames.h"), "w") as f:
        f.write("\n".join(h) + "\n")

    os.makedirs(os.path.join(top, "tests/golden/data"), exist_ok=True)
    with open(os.path.join(top, "tests/golden/data/golden.frames"), "wb") as f:
        f.write(frames_bin)
    with open(os.path.join(top, "tests/golden/data/golden.jsonl"), "w") as f:
        f.write("\n".join(jsonl) + "\n")
    with open(os.path.join(top, "tests/golden/data/box.frames"), "wb") as f:
        f.write(box_bin)
    with open(os.path.join(top, "tests/golden/data/box.jsonl"), "w") as f:
        f.write("\n".join(box_jsonl) + "\n")
    # good, bad, good, bad, good, bad: seed-cat must print the three good
    # ones and report frames 2, 4 and 6.
    bad_by_name = {n: d for n, d, _, _ in BAD}
    mixed = (pk(GOOD[0][1]) + bad_by_name["dtype_wrong"] + pk(GOOD[1][1]) + bad_by_name["type_unknown"] +
             pk(GOOD[2][1]) + bad_by_name["not_a_map_int"])
    with open(os.path.join(top, "tests/golden/data/mixed.frames"), "wb") as f:
        f.write(mixed)

    # The frame fuzzer's corpus: ours are good_* and bad_*; the other files
    # there are inputs libFuzzer found, kept.
    cdir = os.path.join(top, "tests/fuzz/corpus/frame")
    os.makedirs(cdir, exist_ok=True)
    for old in os.listdir(cdir):
        if old.startswith(("good_", "bad_")):
            os.unlink(os.path.join(cdir, old))
    keep = [n for n in corpus if n.startswith("good_")] + [
        "bad_" + n for n in ("truncated", "trailing_bytes", "dtype_wrong", "K_mismatch", "unroll_logits_A",
                             "final_obs_shape", "tensor_key_twice", "version_2", "type_unknown", "numel_overflow",
                             "data_short", "huge_count", "generation_M_mismatch", "generation_algorithm",
                             "episode_generation_alone", "step_low_alone", "step_bounds_A", "step_low_nan",
                             "step_low_above_high", "action_box_nan", "action_box_rank", "unroll_box_logits_2A",
                             "unroll_box_action_A", "sequences_box", "generation_obs_mean_alone", "generation_obs_D",
                             "episode_obs_sum_alone", "episode_obs_D", "episode_obs_sum_nan",
                             "generation_sigmas_P")]
    for n in keep:
        with open(os.path.join(cdir, n), "wb") as f:
            f.write(corpus[n])
    print("%d good frames, %d bad frames, %d corpus files" % (len(GOOD) + len(GOOD_BOX) + len(GOOD_EVO), len(BAD),
                                                             len(keep)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
