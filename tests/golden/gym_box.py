#!/usr/bin/env python3
"""Box actions in Gymnasium itself: what seed-gym's offline frames must hold.

Usage: gym_box.py compare ENV_ID OPTIONS SEED ACTIONS FRAMES

Makes K envs of ENV_ID with gymnasium.make(ENV_ID, **OPTIONS) (OPTIONS a
JSON object; K is the width of the frames' obs), resets env k with seed
SEED + k (seed-gym's --seed SEED, actor 0), then steps them with ACTIONS:
each line K * A numbers, env by env, each read as Python's float and
rounded to float32, then converted to the action space's dtype (the values
seed-gym must pass on, unclipped).  An episode that ends is reset without
a seed in the same step, as seed-gym does.  FRAMES (seed-gym's --out, read
with Python's msgpack) must hold one step frame per line plus the first,
each with num_actions A, action_low and action_high the space's bounds as
f32 [A], and obs, reward, terminated, truncated, ep_return (the float32
rewards summed in double), ep_length and, where some env was truncated,
final_obs, equal to Gymnasium's bit for bit.  Prints "N frames equal" or
the first difference (exit status 1).

Importing this file (gymnasium.make("gym_box:BoxEcho-v0") with tests/golden
on PYTHONPATH) registers two environments for tests of seed-gym itself:
BoxEcho-v0, a Box of 3 float64 actions in [-1, 1] whose observation (float64,
sent as f32) is the action it was stepped with, exactly as it came, and
whose episodes end (terminated) when the first action is above 100;
BoxWide-v0, the same with bounds [-inf, inf], [-1e39, 5] (float32 has no
-1e39: -inf in the frames) and [0.1, 0.3]; and BoxSquare-v0, whose actions
are a Box of shape (2, 2), which seed-gym refuses.  Needs gymnasium, numpy and msgpack; never run by the build.
"""
import json
import sys

import gymnasium as gym
import numpy as np


class BoxEcho(gym.Env):
    def __init__(self, shape=(3,), low=-1.0, high=1.0):
        as_box = (lambda b: np.array(b)) if isinstance(low, list) else float
        self.action_space = gym.spaces.Box(as_box(low), as_box(high), shape, np.float64)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3), {}

    def step(self, action):
        if not isinstance(action, np.ndarray) or action.dtype != np.float64 or action.shape != (3,):
            raise TypeError("BoxEcho-v0 was stepped with %r" % (action,))
        return action.copy(), 0.5, bool(action[0] > 100), False, {}


gym.register("BoxEcho-v0", entry_point=BoxEcho)
gym.register("BoxWide-v0", entry_point=BoxEcho,
             kwargs={"low": [-np.inf, -1e39, 0.1], "high": [np.inf, 5.0, 0.3]})
gym.register("BoxSquare-v0", entry_point=BoxEcho, kwargs={"shape": (2, 2)})


def frames(path):
    import msgpack
    u = msgpack.Unpacker(raw=False)
    u.feed(open(path, "rb").read())
    return list(u)


def array(t, dtype):
    return np.frombuffer(t["data"], dtype=dtype).reshape(t["shape"])


def compare(env_id, options, seed, actions_path, frames_path):
    fs = frames(frames_path)
    k = fs[0]["obs"]["shape"][0]
    if env_id.startswith("gym_box:"):
        env_id = env_id[len("gym_box:"):]  # this file's own, registered above
    envs = [gym.make(env_id, **options) for _ in range(k)]
    space = envs[0].action_space
    a = space.shape[0]
    with np.errstate(over="ignore"):  # a bound beyond float32's range is infinite in the frames
        want = {"num_actions": a, "action_low": space.low.astype(np.float32),
                "action_high": space.high.astype(np.float32)}
    obs = np.array([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)], dtype=np.float32)
    ret, length = np.zeros(k), np.zeros(k, dtype=np.int64)
    lines = [ln.split() for ln in open(actions_path) if ln.split()]
    if len(fs) != len(lines) + 1:
        return "%d frames for %d lines of actions (one more expected)" % (len(fs), len(lines))
    expect = {"obs": obs, "reward": np.zeros(k, np.float32), "terminated": np.zeros(k, np.uint8),
              "truncated": np.zeros(k, np.uint8), "ep_return": np.zeros(k, np.float32),
              "ep_length": np.zeros(k, np.int32)}
    for n, f in enumerate(fs):
        if n > 0:
            acts = np.array([float(w) for w in lines[n - 1]], dtype=np.float32).reshape(k, a)
            final = np.zeros_like(obs)
            rew, term, trunc = (np.zeros(k, np.float32), np.zeros(k, np.uint8), np.zeros(k, np.uint8))
            for i, e in enumerate(envs):
                o, r, te, tr, _ = e.step(acts[i].astype(space.dtype))
                rew[i], term[i], trunc[i] = r, te, tr
                ret[i] += float(rew[i])
                length[i] += 1
                if te or tr:
                    final[i] = o
                    o, _ = e.reset()
                obs[i] = o
            expect = {"obs": obs, "reward": rew, "terminated": term, "truncated": trunc,
                      "ep_return": ret.astype(np.float32), "ep_length": length.astype(np.int32)}
            if trunc.any():
                expect["final_obs"] = final
            ended = (term | trunc).astype(bool)
            ret[ended] = 0
            length[ended] = 0
        if f.get("num_actions") != want["num_actions"]:
            return "frame %d: num_actions %r, Gymnasium's Box has %d" % (n, f.get("num_actions"), a)
        checks = dict(expect, action_low=want["action_low"], action_high=want["action_high"])
        if ("final_obs" in f) != ("final_obs" in checks):
            return "frame %d: final_obs %s" % (n, "sent where no env was truncated" if "final_obs" in f
                                               else "missing where an env was truncated")
        for key, v in checks.items():
            got = array(f[key], v.dtype.newbyteorder("<")) if key in f else None
            if got is None or got.shape != v.shape or got.tobytes() != v.astype(got.dtype).tobytes():
                return "frame %d: %s is %s, Gymnasium's %s" % (n, key, None if got is None else got.tolist(),
                                                              v.tolist())
    return len(fs)


def main(argv):
    if len(argv) != 6 or argv[0] != "compare":
        sys.stderr.write(__doc__)
        return 2
    r = compare(argv[1], json.loads(argv[2]), int(argv[3]), argv[4], argv[5])
    if isinstance(r, str):
        print(r)
        return 1
    print("%d frames equal" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
