#!/usr/bin/env python3
"""Checks of seed-gym's Atari step frames (tests/cli/atari.bats).

Usage: atari_frames.py check FRAMES.msgpack
       atari_frames.py distinct FRAMES.msgpack
       atari_frames.py reference ID SEED ACTIONS FRAMES.msgpack

`check`: every frame's obs is a u8 [K, 84, 84, 4] tensor using more than
one grey level; the stack is the last axis, oldest frame first: where an env
did not end, the step's channels 0..2 are the previous step's channels 1..3.
Prints "N frames, K envs, values LO..HI, S shifts checked".

`distinct`: how many different trajectories the K envs' observations trace
over the file (one line, a number).

`reference`: the preprocessing done by hand, independently of gymnasium's
wrappers, on ALE's single frames (ID made with frameskip=1, sticky actions
off; one env seeded SEED; the actions of file ACTIONS, one a line): every
action is repeated on 4 frames, the last two of ALE's grey screens are
max-pooled and shrunk to 84x84 with OpenCV's area interpolation (the Nature
DQN's preprocessing as Gymnasium and Dopamine write it), and the last 4 such
images are stacked on the last axis (the reset's image repeated at the
start).  Every frame's obs must equal seed-gym's (run with --noop-max 0
--sticky 0) byte for byte; prints "N frames equal" or the first difference
and exits 1.  Needs numpy, msgpack, gymnasium, ale-py and opencv; never run
by the build.
"""
import sys

import msgpack
import numpy as np


def frames(path):
    with open(path, "rb") as f:
        return list(msgpack.Unpacker(f, raw=False))


def obs_of(f, key="obs"):
    t = f[key]
    assert t["dtype"] == "u8", t["dtype"]
    return np.frombuffer(t["data"], np.uint8).reshape(t["shape"])


def check(path):
    fr = frames(path)
    lo, hi, shifts = 255, 0, 0
    prev = None
    for n, f in enumerate(fr):
        o = obs_of(f)
        k = o.shape[0]
        if list(o.shape[1:]) != [84, 84, 4]:
            sys.exit("frame %d: obs shape %s, not [K, 84, 84, 4]" % (n, list(o.shape)))
        lo, hi = min(lo, int(o.min())), max(hi, int(o.max()))
        if prev is not None:
            ended = np.frombuffer(f["terminated"]["data"], np.uint8) | np.frombuffer(f["truncated"]["data"], np.uint8)
            for i in range(k):
                if not ended[i]:
                    if not np.array_equal(o[i, :, :, :3], prev[i, :, :, 1:]):
                        sys.exit("frame %d, env %d: channels 0..2 are not the last step's 1..3" % (n, i))
                    shifts += 1
        prev = o
    if hi <= lo:
        sys.exit("every value is %d" % lo)
    print("%d frames, %d envs, values %d..%d, %d shifts checked" % (len(fr), k, lo, hi, shifts))


def distinct(path):
    fr = frames(path)
    k = obs_of(fr[0]).shape[0]
    traj = [b"".join(obs_of(f)[i].tobytes() for f in fr) for i in range(k)]
    print(len(set(traj)))


def reference(env_id, seed, actions_path, path):
    import ale_py
    import cv2
    import gymnasium as gym
    gym.register_envs(ale_py)
    env = gym.make(env_id, frameskip=1, repeat_action_probability=0.0)
    env.reset(seed=seed)
    ale = env.unwrapped.ale

    def image(a, b):
        return cv2.resize(np.maximum(a, b), (84, 84), interpolation=cv2.INTER_AREA)

    first = image(ale.getScreenGrayscale(), np.zeros((210, 160), np.uint8))
    stack = [first] * 4
    want = [np.stack(stack, axis=-1)]
    for line in open(actions_path):
        a = int(line)
        screens = []
        for _ in range(4):
            _, _, term, trunc, _ = env.step(a)
            screens.append(ale.getScreenGrayscale())
            if term or trunc:
                sys.exit("the episode ended: use fewer actions")
        stack = stack[1:] + [image(screens[-2], screens[-1])]
        want.append(np.stack(stack, axis=-1))
    got = frames(path)
    if len(got) != len(want):
        sys.exit("%d frames, the reference has %d" % (len(got), len(want)))
    for n, (f, w) in enumerate(zip(got, want)):
        o = obs_of(f)[0]
        if not np.array_equal(o, w):
            d = np.argwhere(o != w)[0]
            sys.exit("frame %d differs first at %s: seed-gym %d, reference %d"
                     % (n, tuple(int(x) for x in d), o[tuple(d)], w[tuple(d)]))
    print("%d frames equal" % len(got))


if __name__ == "__main__":
    cmd = sys.argv[1:2]
    if cmd == ["check"] and len(sys.argv) == 3:
        check(sys.argv[2])
    elif cmd == ["distinct"] and len(sys.argv) == 3:
        distinct(sys.argv[2])
    elif cmd == ["reference"] and len(sys.argv) == 6:
        reference(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        sys.exit(__doc__)
