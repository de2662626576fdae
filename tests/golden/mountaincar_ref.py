#!/usr/bin/env python3
"""MountainCar-v0 in Gymnasium, the reference for examples/plugin/mountaincar.c.

Usage:
  mountaincar_ref.py actions POSITION VELOCITY LINES > actions.txt
  mountaincar_ref.py check POSITION VELOCITY actions.txt < steps.jsonl

`actions` writes LINES lines of five actions, one column per environment:
always left (0), no push (1), always right (2), uniform random (numpy,
seeded), and a feedback policy that pushes the way the car moves (the one
that reaches the flag), computed here on Gymnasium's own state and recorded
so that Seed replays it open loop.  Every episode starts from the state
(POSITION, VELOCITY), as the plugin's "init_state" option does; an episode
that ends (terminated at the flag, truncated by v0's TimeLimit at 200 steps)
starts again from it.

`check` reads seed-actor's step frames (seed-cat's JSON lines: frame 0 the
first observations, frame n after line n of the actions) and steps one
gym.make("MountainCar-v0") per column with the same actions, resetting it to
the state after each end as Seed's vector does; every observation must be
the same float32 value, every reward, terminated, truncated and episode
length the same.  It prints a summary line, or the first difference and
exits 1.  Needs gymnasium 1.x and numpy; never run by the build.
"""
import json
import sys
import warnings

import gymnasium as gym
import numpy as np

warnings.filterwarnings("ignore")
COLUMNS = 5


def make(init):
    env = gym.make("MountainCar-v0")
    return env, start(env, init)


def start(env, init):
    env.reset(seed=0)
    env.unwrapped.state = np.array(init, dtype=np.float64)
    return np.array(env.unwrapped.state, dtype=np.float32)


def actions(init, lines):
    rng = np.random.default_rng(int(abs(init[0]) * 1000) + 7)
    env, _ = make(init)
    rows = []
    for _ in range(lines):
        _, velocity = env.unwrapped.state
        pump = 2 if velocity >= 0 else 0
        rows.append([0, 1, 2, int(rng.integers(0, 3)), pump])
        _, _, term, trunc, _ = env.step(pump)
        if term or trunc:
            start(env, init)
    for r in rows:
        print(" ".join(str(a) for a in r))


def check(init, actions_file, frames):
    with open(actions_file) as f:
        acts = [[int(x) for x in line.split()] for line in f if line.strip()]
    envs = []
    for _ in range(COLUMNS):
        envs.append(make(init))
    expected = [obs for _, obs in envs]
    lengths = [0] * COLUMNS
    ends = {"terminated": 0, "truncated": 0}
    steps = 0
    if len(frames) != len(acts) + 1:
        sys.exit(f"{len(frames)} frames for {len(acts)} lines of actions")
    for n, fr in enumerate(frames):
        obs = fr["obs"]["data"]
        for c in range(COLUMNS):
            if n > 0:
                env = envs[c][0]
                o, r, term, trunc, _ = env.step(acts[n - 1][c])
                lengths[c] += 1
                want = (float(r), int(term), int(trunc), lengths[c])
                got = (fr["reward"]["data"][c], fr["terminated"]["data"][c], fr["truncated"]["data"][c],
                       fr["ep_length"]["data"][c])
                if want != got:
                    sys.exit(f"step {n}, env {c}: (reward, terminated, truncated, length) {got}, "
                             f"Gymnasium's {want}")
                steps += 1
                if term or trunc:
                    ends["terminated"] += int(term)
                    ends["truncated"] += int(trunc)
                    o = start(env, init)
                    lengths[c] = 0
                expected[c] = o
            got = np.array(obs[c], dtype=np.float32)
            if got.tobytes() != expected[c].astype(np.float32).tobytes():
                sys.exit(f"step {n}, env {c}: observation {got.tolist()}, Gymnasium's {expected[c].tolist()}")
    print(f"ok: {steps} steps of {COLUMNS} envs from {init}, {ends['terminated']} terminated, "
          f"{ends['truncated']} truncated")


def main():
    mode, p, v = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    if mode == "actions":
        actions([p, v], int(sys.argv[4]))
    elif mode == "check":
        check([p, v], sys.argv[4], [json.loads(line) for line in sys.stdin if line.strip()])
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
