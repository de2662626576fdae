#!/usr/bin/env python3
"""The fewest steps in which a CartPole-v1 episode can terminate, for tests/cli/multihost.bats.

Usage: python3 tests/golden/cartpole_min_steps.py

CartPole-v1's dynamics and termination written out from Gymnasium's
gymnasium/envs/classic_control/cartpole.py (Euler integration, tau 0.02, force
10, the pole's angle beyond 12 degrees or the cart beyond 2.4 ends the episode),
in plain Python.  Every sequence of the first 8 actions (256) is tried from
every point of a grid of 7 values per state variable over the reset range
[-0.05, 0.05]^4, which includes its corners: no episode ends before its 8th
step.  So an episode cut at 7 steps or fewer by a time limit always has
return equal to that limit, which is how the test tells whose episodes
reach the learner.  Prints the minimum; never run by the build.
"""
import itertools
import math

GRAVITY, MASSCART, MASSPOLE, LENGTH, FORCE, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL = MASSCART + MASSPOLE
POLEMASS_LENGTH = MASSPOLE * LENGTH
THETA_LIMIT = 12 * 2 * math.pi / 360
X_LIMIT = 2.4
HORIZON = 8


def steps_to_end(state, actions):
    """The step at which the episode terminates (1-based), or None."""
    x, x_dot, theta, theta_dot = state
    for n, a in enumerate(actions, 1):
        force = FORCE if a == 1 else -FORCE
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + POLEMASS_LENGTH * theta_dot**2 * sin) / TOTAL
        theta_acc = (GRAVITY * sin - cos * temp) / (LENGTH * (4.0 / 3.0 - MASSPOLE * cos**2 / TOTAL))
        x_acc = temp - POLEMASS_LENGTH * theta_acc * cos / TOTAL
        x, x_dot = x + TAU * x_dot, x_dot + TAU * x_acc
        theta, theta_dot = theta + TAU * theta_dot, theta_dot + TAU * theta_acc
        if x < -X_LIMIT or x > X_LIMIT or theta < -THETA_LIMIT or theta > THETA_LIMIT:
            return n
    return None


def main():
    grid = [-0.05 + 0.1 * i / 6 for i in range(7)]
    best = None
    for state in itertools.product(grid, repeat=4):
        for actions in itertools.product((0, 1), repeat=HORIZON):
            n = steps_to_end(state, actions)
            if n is not None and (best is None or n < best):
                best = n
    print(f"fewest steps to termination from the reset range: {best if best else f'more than {HORIZON}'}")


if __name__ == "__main__":
    main()
