#!/usr/bin/env python3
"""Golden values for tests/unit/rl/test_reward_norm.c: rewards scaled as Gymnasium's NormalizeReward.

Each environment's discounted return follows the wrapper's rule, G = G * gamma * (1 - terminated) + r,
and the running statistics are Gymnasium's own RunningMeanStd (gymnasium.wrappers.utils), fed one
batch of unrolls at a time (all the batch's returns as one array), as a learner sees them; the
rewards of the batch are then divided by sqrt(var + 1e-8) and clipped to [-clip, clip].  Unroll
step 0 belongs to the previous unroll and is left alone.

Usage: python3 tests/golden/reward_norm_ref.py   (prints the C arrays to paste)
"""
import numpy as np
from gymnasium.wrappers.utils import RunningMeanStd

GAMMA, CLIP, T1, B = 0.9, 1.2, 4, 3
# Three batches; each row names its environment (run, actor, env).
KEYS = [[(1, 0, 0), (1, 0, 1), (1, 1, 0)],
        [(1, 0, 1), (1, 0, 0), (2, 0, 0)],
        [(1, 1, 0), (2, 0, 0), (1, 0, 0)]]
rng = np.random.default_rng(7)
rewards = (rng.standard_normal((3, T1, B)) * 3).astype(np.float32)
terminated = (rng.random((3, T1, B)) < 0.2).astype(np.uint8)

rms = RunningMeanStd(shape=())
G = {}
out = rewards.copy()
for k in range(3):
    batch = []
    for b in range(B):
        g = G.get(KEYS[k][b], 0.0)
        for t in range(1, T1):
            g = g * GAMMA * (1 - terminated[k, t, b]) + float(rewards[k, t, b])
            batch.append(g)
        G[KEYS[k][b]] = g
    rms.update(np.array(batch))
    for t in range(1, T1):
        for b in range(B):
            out[k, t, b] = np.float32(np.clip(float(rewards[k, t, b]) / np.sqrt(rms.var + 1e-8), -CLIP, CLIP))


def arr(name, ctype, xs, fmt):
    print("static const %s %s[] = {%s};" % (ctype, name, ", ".join(fmt(x) for x in np.ravel(xs))))


arr("rn_rewards", "float", rewards, lambda x: "%.9gf" % x)
arr("rn_terminated", "uint8_t", terminated, lambda x: "%d" % x)
arr("rn_scaled", "float", out, lambda x: "%.9gf" % x)
print("static const double rn_stats[3] = {%.17g, %.17g, %.17g};" % (rms.count, float(rms.mean), float(rms.var)))
