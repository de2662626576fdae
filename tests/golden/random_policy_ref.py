#!/usr/bin/env python3
"""Reference returns of a uniformly random policy, for tests/cli/seed-eval.bats.

Usage: python3 tests/golden/random_policy_ref.py [EPISODES]

CartPole-v1: plays EPISODES (default 200000) episodes of Gymnasium's
CartPole-v1 with uniform random actions and prints the mean and population
standard deviation of the return (= length).

Catch (bsuite, 10 x 5): the paddle's column after 9 steps is independent of
the ball's column, which is uniform over 5 columns, so P(catch) = 1/5
whatever the paddle does: mean return 2/5 - 1 = -0.6, standard deviation
sqrt(1 - 0.36) = 0.8, length always 9.  If bsuite is importable (pip install
bsuite, or its source on PYTHONPATH, with dm_env), its Catch is played too as
a check.  Never run by the build.
"""
import sys
import warnings

import gymnasium as gym
import numpy as np

warnings.filterwarnings("ignore")


def cartpole(episodes, seed=12345):
    env = gym.make("CartPole-v1")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = np.empty(episodes)
    for k in range(episodes):
        env.reset()
        total, done = 0.0, False
        while not done:
            _, r, term, trunc, _ = env.step(int(rng.integers(0, 2)))
            total += r
            done = term or trunc
        returns[k] = total
    return returns


def bsuite_catch(episodes, seed=12345):
    from bsuite.environments import catch
    env = catch.Catch(seed=seed)
    rng = np.random.default_rng(seed)
    returns = np.empty(episodes)
    lengths = np.empty(episodes)
    for k in range(episodes):
        ts = env.reset()
        total, n = 0.0, 0
        while not ts.last():
            ts = env.step(int(rng.integers(0, 3)))
            total += ts.reward
            n += 1
        returns[k] = total
        lengths[k] = n
    return returns, lengths


def main():
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    r = cartpole(episodes)
    print("cartpole random: episodes %d mean %.4f std %.4f (standard error %.4f) median %g min %g max %g"
          % (episodes, r.mean(), r.std(), r.std() / np.sqrt(episodes), np.median(r), r.min(), r.max()))
    print("catch random (analytic): mean -0.6 std 0.8 length 9")
    try:
        r, n = bsuite_catch(min(episodes, 100000))
    except ImportError as e:
        print("catch random (bsuite): not run: %s" % e)
        return
    print("catch random (bsuite): episodes %d mean %.4f std %.4f (standard error %.4f) lengths %g..%g"
          % (len(r), r.mean(), r.std(), r.std() / np.sqrt(len(r)), n.min(), n.max()))


if __name__ == "__main__":
    main()
