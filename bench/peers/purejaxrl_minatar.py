"""Time PureJaxRL's PPO (purejaxrl/ppo.py, unmodified) on a gymnax MinAtar game.

usage: python3 purejaxrl_minatar.py PUREJAXRL_DIR GAME SEED [TOTAL_STEPS]

GAME is gymnax's name without the suffix (Breakout, Asterix, Freeway, Seaquest,
SpaceInvaders).  The settings are the ones the issue quotes for the peer: a
64-64 tanh MLP on the flattened observation, 64 envs x 128 steps, 4 epochs of
8 minibatches, lr 5e-3 annealed, clip 0.2, entropy 0.01, value 0.5, gamma 0.99,
GAE lambda 0.95, gradient norm 0.5.  The wall time counts everything from the
process start (imports and JIT compilation included), as Seed's figures count
a cold start.  Prints one JSON line: the wall time, the steps, and the mean
return of the episodes that ended in the last 1% of the updates (gymnax's
episode cap, 1000 steps by default for MinAtar, ends some of them).
"""
import json
import os
import sys
import time

T0 = time.time()
if len(sys.argv) < 4:
    sys.exit(__doc__)
root, game, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
total = float(sys.argv[4]) if len(sys.argv) > 4 else 5e6
sys.path.insert(0, os.path.join(root, "purejaxrl"))

import jax  # noqa: E402
import numpy as np  # noqa: E402
import ppo  # noqa: E402  (purejaxrl/ppo.py)

config = {
    "LR": 5e-3,
    "NUM_ENVS": 64,
    "NUM_STEPS": 128,
    "TOTAL_TIMESTEPS": total,
    "UPDATE_EPOCHS": 4,
    "NUM_MINIBATCHES": 8,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.2,
    "ENT_COEF": 0.01,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.5,
    "ACTIVATION": "tanh",
    "ENV_NAME": game + "-MinAtar",
    "ANNEAL_LR": True,
    "DEBUG": False,
}
train = jax.jit(ppo.make_train(config))
out = jax.block_until_ready(train(jax.random.PRNGKey(seed)))
info = out["metrics"]
ret = np.asarray(info["returned_episode_returns"])  # [updates, steps, envs]
done = np.asarray(info["returned_episode"]).astype(bool)
updates = ret.shape[0]
last = max(1, updates // 100)
r = ret[-last:][done[-last:]]
print(json.dumps({
    "peer": "purejaxrl-ppo",
    "game": game,
    "seed": seed,
    "steps": int(updates * config["NUM_STEPS"] * config["NUM_ENVS"]),
    "wall_s": round(time.time() - T0, 2),
    "final_return": round(float(r.mean()), 2) if r.size else None,
    "episodes": int(r.size),
}))
