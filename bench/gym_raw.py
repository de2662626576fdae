#!/usr/bin/env python3
"""Gymnasium's raw stepping of K environments, the baseline for seed-gym.

Usage: bench/gym_raw.py ENV K STEPS

Makes K environments with gymnasium.make(ENV) (the same wrappers seed-gym
steps), resets each (seed i), then STEPS times steps every env with a
uniform random action (drawn beforehand with numpy, so the timing is
Gymnasium's stepping and resetting only), resetting an env whose episode
ended, as seed-gym does.  Prints "ENV K STEPS seconds steps/s".
"""
import sys
import time
import warnings

import gymnasium as gym
import numpy as np

warnings.filterwarnings("ignore")
env_id, k, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
envs = [gym.make(env_id) for _ in range(k)]
for i, e in enumerate(envs):
    e.reset(seed=i)
n = envs[0].action_space.n
actions = np.random.default_rng(0).integers(0, n, size=(steps, k)).tolist()
t0 = time.perf_counter()
for row in actions:
    for e, a in zip(envs, row):
        _, _, term, trunc, _ = e.step(a)
        if term or trunc:
            e.reset()
dt = time.perf_counter() - t0
print("%s %d %d %.3f %.0f" % (env_id, k, steps, dt, k * steps / dt))
