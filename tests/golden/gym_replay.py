#!/usr/bin/env python3
"""Replay actions in Gymnasium itself: the episodes and the pictures that
seed-eval --env gym:ID --record must have made of them.

Usage: gym_replay.py ENV_ID SEED ACTIONS [PPM_DIR]

ENV_ID is made once with render_mode="rgb_array" and reset with seed=SEED
(seed-gym's env 0 with --seed SEED); then every line of ACTIONS (one action
a line: one environment) is stepped, and an episode that ends is reset
without a seed, in the same step, as seed-gym does.  Prints one JSON object:
{"size": [W, H], "episodes": [[return, length], ...], "frames": N}.

The pictures are those of a recording of every episode the actions play:
the first state, the state after each step, and where an episode ended the
state it ended in, then (when more actions follow) the next episode's first
state.  With PPM_DIR, the picture i must equal PPM_DIR/i.ppm (a binary PPM,
as tests/cli/gifinfo writes a GIF frame) byte for byte; the first difference is
said on stderr, with exit status 1.  Needs gymnasium, numpy and what the
environment draws with (pygame for classic control); never run by the build.
"""
import json
import os
import sys

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402


def read_ppm(path):
    data = open(path, "rb").read()
    parts = data.split(b"\n", 3)
    if parts[0] != b"P6" or parts[2] != b"255":
        raise ValueError("%s: not a binary PPM of 8-bit channels" % path)
    w, h = (int(v) for v in parts[1].split())
    return np.frombuffer(parts[3], dtype=np.uint8).reshape(h, w, 3)


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    env_id, seed, actions = argv[0], int(argv[1]), [int(v) for v in open(argv[2]).read().split()]
    ppm_dir = argv[3] if len(argv) == 4 else None
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=seed)
    pictures = [env.render()]
    episodes = []
    ret, length = 0.0, 0
    for i, a in enumerate(actions):
        _, r, term, trunc, _ = env.step(a)
        ret += float(np.float32(r))
        length += 1
        pictures.append(env.render())
        if term or trunc:
            episodes.append([float(np.float32(ret)), length])
            ret, length = 0.0, 0
            env.reset()
            if i + 1 < len(actions):
                pictures.append(env.render())
    h, w = pictures[0].shape[:2]
    print(json.dumps({"size": [w, h], "episodes": episodes, "frames": len(pictures)}))
    if ppm_dir is not None:
        for i, p in enumerate(pictures):
            got = read_ppm(os.path.join(ppm_dir, "%d.ppm" % i))
            if got.shape != p.shape:
                sys.stderr.write("frame %d: %s, Gymnasium drew %s\n" % (i, got.shape, p.shape))
                return 1
            diff = np.argwhere((got != p).any(axis=2))
            if len(diff):
                y, x = diff[0]
                sys.stderr.write("frame %d: %d pixels differ, first (%d, %d): %s, Gymnasium drew %s\n"
                                 % (i, len(diff), x, y, got[y, x].tolist(), p[y, x].tolist()))
                return 1
        sys.stderr.write("%d frames equal\n" % len(pictures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
