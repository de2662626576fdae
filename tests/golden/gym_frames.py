#!/usr/bin/env python3
"""Actions for CartPole-v1, and two recorded streams compared byte for byte.

Usage: gym_frames.py actions X X_DOT THETA THETA_DOT LINES > actions.txt
       gym_frames.py compare A.msgpack B.msgpack

`actions` writes LINES lines of three actions, one column per environment:
uniform random (numpy, seeded), always right (the pole falls within a few
dozen steps), and a feedback policy that pushes the way the pole leans
(action 1 when theta + theta_dot / 2 > 0), computed here on Gymnasium's own
CartPole-v1 state, which keeps the pole up until v1's time limit truncates
the episode at 500 steps.  Every episode starts from the given state (as
seed-actor's cartpole "init_state" option and seed-gym's --init-state do).

`compare`: each stream's frames are found with Python's msgpack (an Unpacker over the
file, which says where each frame ends); every frame's "run" (a random number
per process start, so never equal across two processes) must be one value
throughout its stream.  The run's encoding (the key "run" and its msgpack
integer, which packs shortest-first as seed_frame_encode does) is replaced by
that of run 0 in each frame, and the frames must then be equal byte for byte.
Prints "N frames equal" or the first difference, and exits 1 on a difference.
Needs msgpack; never run by the build.
"""
import sys

import msgpack


def frames(path):
    data = open(path, "rb").read()
    u = msgpack.Unpacker(raw=False)
    u.feed(data)
    out, start = [], 0
    for f in u:
        end = u.tell()
        out.append((f, data[start:end]))
        start = end
    if start != len(data):
        sys.exit("%s: %d bytes after the last frame" % (path, len(data) - start))
    return out


def normalized(path):
    fs = frames(path)
    runs = {f["run"] for f, _ in fs}
    if len(runs) != 1:
        sys.exit("%s: %d different runs in one stream" % (path, len(runs)))
    run = runs.pop()
    key = msgpack.packb("run") + msgpack.packb(run)
    zero = msgpack.packb("run") + msgpack.packb(0)
    res = []
    for i, (f, raw) in enumerate(fs):
        if raw.count(key) != 1:
            sys.exit("%s: frame %d: the run's encoding is not found exactly once" % (path, i))
        res.append((f, raw.replace(key, zero)))
    return res


def actions(init, lines):
    import gymnasium as gym
    import numpy as np

    rng = np.random.default_rng(7)
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.unwrapped.state = np.array(init, dtype=np.float64)
    for _ in range(lines):
        theta, theta_dot = env.unwrapped.state[2], env.unwrapped.state[3]
        lean = 1 if theta + theta_dot / 2 > 0 else 0
        print(int(rng.integers(0, 2)), 1, lean)
        _, _, term, trunc, _ = env.step(lean)
        if term or trunc:
            env.reset()
            env.unwrapped.state = np.array(init, dtype=np.float64)


if sys.argv[1] == "actions":
    actions([float(v) for v in sys.argv[2:6]], int(sys.argv[6]))
    sys.exit(0)
a, b = normalized(sys.argv[2]), normalized(sys.argv[3])
if len(a) != len(b):
    sys.exit("%d frames in %s, %d in %s" % (len(a), sys.argv[2], len(b), sys.argv[3]))
for i, ((fa, ra), (fb, rb)) in enumerate(zip(a, b)):
    if ra != rb:
        diff = [k for k in set(fa) | set(fb) if k != "run" and fa.get(k) != fb.get(k)]
        print("frame %d differs (%d and %d bytes); fields: %s" % (i, len(ra), len(rb), sorted(diff)))
        for k in sorted(diff):
            print("  %s: %r\n  %s: %r" % (sys.argv[2], fa.get(k), sys.argv[3], fb.get(k)))
        sys.exit(1)
print("%d frames equal" % len(a))
