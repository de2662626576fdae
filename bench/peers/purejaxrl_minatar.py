"""Time PureJaxRL's PPO (purejaxrl/ppo.py, unmodified) on a gymnax MinAtar game.

usage: python3 purejaxrl_minatar.py PUREJAXRL_DIR GAME SEED [TOTAL_STEPS [SETTINGS]]

GAME is gymnax's name without the suffix (Breakout, Asterix, Freeway, Seaquest,
SpaceInvaders).  The settings are the ones the issue quotes for the peer: a
64-64 tanh MLP on the flattened observation, 64 envs x 128 steps, 4 epochs of
8 minibatches, lr 5e-3 annealed, clip 0.2, entropy 0.01, value 0.5, gamma 0.99,
GAE lambda 0.95, gradient norm 0.5.  The wall time counts everything from the
process start (imports and JIT compilation included), as Seed's figures count
a cold start.  Prints one JSON line: the wall time, the steps, and the mean
return of the episodes that ended in the last 1% of the updates (gymnax's
episode cap, 1000 steps by default for MinAtar, ends some of them).

SETTINGS is "gymnax" (the default: gymnax's environment as it is, its minimal
action sets and no sticky actions) or "minatar": MinAtar's own settings, all 6
actions (gymnax's use_minimal_action_set=False) and sticky actions with
probability 0.1 as MinAtar plays them (the last executed action is repeated
instead of the agent's; it is 0 after a reset).  gymnax has no sticky actions,
so gymnax.make is wrapped for this; PureJaxRL's ppo.py runs unmodified on it,
and gymnax's episode cap is kept.
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
settings = sys.argv[5] if len(sys.argv) > 5 else "gymnax"
if settings not in ("gymnax", "minatar"):
    sys.exit("purejaxrl_minatar.py: SETTINGS is gymnax or minatar, not %r" % settings)
sys.path.insert(0, os.path.join(root, "purejaxrl"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import ppo  # noqa: E402  (purejaxrl/ppo.py)

STICKY = 0.1


class StickyFullActions:
    """A gymnax environment with all 6 actions and MinAtar's sticky actions.

    The state is the wrapped environment's and the last executed action; the
    wrapped step resets by itself at the end of an episode, and the last action
    goes back to 0 then, as MinAtar's reset does.
    """

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def reset(self, key, params=None):
        obs, state = self._env.reset(key, params)
        return obs, (state, jnp.int32(0))

    def step(self, key, state, action, params=None):
        inner, last = state
        key, k_sticky = jax.random.split(key)
        a = jnp.where(jax.random.uniform(k_sticky) < STICKY, last, action).astype(jnp.int32)
        obs, inner, reward, done, info = self._env.step(key, inner, a, params)
        return obs, (inner, jnp.where(done, 0, a).astype(jnp.int32)), reward, done, info


if settings == "minatar":
    import gymnax  # noqa: E402

    make = gymnax.make

    def make_minatar(name, **kwargs):
        env, params = make(name, use_minimal_action_set=False, **kwargs)
        assert env.num_actions == 6, (name, env.num_actions)
        return StickyFullActions(env), params

    ppo.gymnax.make = make_minatar

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
    "settings": settings,
    "seed": seed,
    "steps": int(updates * config["NUM_STEPS"] * config["NUM_ENVS"]),
    "wall_s": round(time.time() - T0, 2),
    "final_return": round(float(r.mean()), 2) if r.size else None,
    "episodes": int(r.size),
}))
