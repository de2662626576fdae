#!/usr/bin/env python3
"""Golden episode traces: the original MinAtar driven by Seed's random stream.

The statistical test (minatar_ref.py) can only compare distributions, because
numpy's stream cannot be reproduced in C.  This script removes that obstacle
the other way round: it replaces the RandomState of the original `minatar`
package (version 1.0.15) by a Python copy of Seed's generator (xoshiro256**
seeded by splitmix64, lib/core/rng.c), answering rand() and randint() with the
same numbers Seed's games draw (seed_rng_double, seed_rng_below).  With the
draws made in the same order (the sticky draw first, then the game's), the
Python games and the C port must then play identical episodes.

For each game and option set it plays episodes with actions drawn from a
second stream, one Environment for all of them (as a Seed instance), and
records per episode the length, the return and a 64-bit digest of every
observation, reward and end flag.  tests/unit/envs/test_minatar_traces.c replays the
same streams through the C classes and must match exactly.

Usage: python3 tests/golden/minatar_traces.py > tests/golden/minatar_traces.h
"""
import importlib.metadata
import sys

import numpy as np
from minatar import Environment

M64 = (1 << 64) - 1


def splitmix64(x):
    """One splitmix64 step: returns (new state, output)."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class SeedRng:
    """seed_rng (lib/core/rng.c), with the two numpy RandomState methods MinAtar
    calls, answered the way the C games draw: rand() as seed_rng_double,
    randint(n) / randint(lo, hi) as lo + seed_rng_below(hi - lo)."""

    def __init__(self, seed, stream):
        x, y = splitmix64(seed & M64)
        y ^= (stream * 0xD1342543DE82EF95 + 0x2545F4914F6CDD1D) & M64
        self.s = []
        for _ in range(4):
            y, out = splitmix64(y)
            self.s.append(out)

    def u64(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def double(self):
        return (self.u64() >> 11) * 2.0**-53

    def below(self, n):
        m = (self.u64() >> 32) * n
        lo = m & 0xFFFFFFFF
        if lo < n:
            threshold = ((1 << 32) - n) % n
            while lo < threshold:
                m = (self.u64() >> 32) * n
                lo = m & 0xFFFFFFFF
        return m >> 32

    # numpy.random.RandomState's interface, as far as MinAtar uses it.
    def rand(self, size=None):
        if size is None:
            return self.double()
        return np.array([self.double() for _ in range(size)])

    def randint(self, low, high=None, size=None):
        if high is None:
            low, high = 0, low
        if size is None:
            return low + self.below(high - low)
        return np.array([low + self.below(high - low) for _ in range(size)])


# Observation digest: sum of obs[i] * K[i] (mod 2^64), K from splitmix64(0).
K = []
_x = 0
for _ in range(1000):
    _x, _k = splitmix64(_x)
    K.append(_k)
K = np.array(K, dtype=np.uint64)
P = 0x100000001B3


def digest(obs):
    flat = obs.astype(np.uint64).reshape(-1)
    with np.errstate(over="ignore"):
        return int(np.sum(flat * K[: flat.size], dtype=np.uint64))


def fold(h, v):
    return (h * P + v) & M64


def cells(obs, c):
    """(y, x) of the cells where channel c is set, in row-major order."""
    return [(y, x) for y in range(10) for x in range(10) if obs[y, x, c]]


def seaquest_threat(obs, y, x):
    """An enemy bullet, fish or sub in row y (1..8) within 3 columns of x."""
    if y < 1 or y > 8:
        return False
    return any(obs[y, xx, c] for xx in range(max(0, x - 3), min(9, x + 3) + 1) for c in (4, 5, 6))


def heuristic(game, obs, u, a):
    """A policy that plays further into the game than a random one (brick
    refills, crossings, cleared waves, surfacing), from the observation and
    two draws: u (a double) and a (a uniform full action).  The same policy
    is written in C in tests/unit/envs/test_minatar_traces.c."""
    if game == "breakout":  # meet the ball where it will reach row 8
        if u < 0.1:
            return a
        (by, bx), (ty, tx) = cells(obs, 1)[0], cells(obs, 2)[0]
        paddle = cells(obs, 0)[0][1]
        d = 1 if bx > tx else -1 if bx < tx else 0
        x = bx
        if by > ty:
            for _ in range(8 - by):
                x += d
                if x < 0 or x > 9:
                    x, d = min(9, max(0, x)), -d
        return 1 if x < paddle else 3 if x > paddle else 0
    if game == "freeway":  # mostly up
        return 2 if u < 0.8 else a
    if game == "space_invaders":  # dodge, then aim (leading the last aliens) and fire
        if u < 0.1:
            return a
        pos = cells(obs, 0)[0][1]
        danger = [any(obs[y, x, 5] for y in range(4, 9)) for x in range(10)]
        if danger[pos]:
            if pos > 0 and not danger[pos - 1]:
                return 1
            if pos < 9 and not danger[pos + 1]:
                return 3
            return 1 if pos > 0 else 3
        aliens = cells(obs, 1)
        target = min((abs(x - pos), x) for _, x in aliens)[1]
        if len(aliens) <= 4:
            low = aliens[0]  # the first alien of the lowest row
            for cell in aliens:
                if cell[0] > low[0]:
                    low = cell
            d = -1 if cells(obs, 2) else 1
            target = min(9, max(0, low[1] + d * ((9 - low[0]) // len(aliens))))
        step = -1 if target < pos else 1 if target > pos else 0
        if step and danger[pos + step]:
            return 0
        return 1 if step < 0 else 3 if step > 0 else 5
    if game == "seaquest":  # surface in time, avoid enemies, fetch divers
        sy, sx = cells(obs, 0)[0]
        divers, oxygen = len(cells(obs, 8)), len(cells(obs, 7))
        if sy > 0 and ((divers >= 1 and oxygen <= 4) or divers == 6):
            return 2 if u < 0.9 else a
        if u < 0.2:
            b = a
        elif seaquest_threat(obs, sy, sx):
            if sy < 8 and not seaquest_threat(obs, sy + 1, sx):
                b = 4
            elif sy > 1 and not seaquest_threat(obs, sy - 1, sx):
                b = 2
            else:
                b = 5
        elif cells(obs, 9):
            dy, dx = cells(obs, 9)[0]
            b = (4 if dy > sy else 2) if dy != sy else (3 if dx > sx else 1)
        elif sy <= 1:
            b = 4
        else:
            b = a
        return 0 if b == 2 and sy == 1 and divers == 0 else b  # never surface empty
    return a


GAMES = [  # (upstream module, Seed class, episodes per policy)
    ("breakout", "minatar-breakout", (300, 300, 30)),
    ("asterix", "minatar-asterix", (100, 100, 50)),
    ("freeway", "minatar-freeway", (3, 3, 3)),
    ("seaquest", "minatar-seaquest", (300, 300, 200)),
    ("space_invaders", "minatar-space-invaders", (100, 100, 30)),
]
OPTION_SETS = [  # (Seed options as JSON, sticky, ramping, minimal action set, heuristic policy)
    ("{}", 0.1, True, False, False),
    ('{"sticky_action_prob": 0.3, "difficulty_ramping": false, "minimal_action_set": true}', 0.3, False, True,
     False),
    ("{}", 0.1, True, False, True),
]
SEED = 4242


def play(game, episodes, seed, sticky, ramping, minimal, smart):
    env = Environment(game, sticky_action_prob=sticky, difficulty_ramping=ramping)
    env.random = env.env.random = SeedRng(seed, 0)  # what Environment.seed() does
    policy = SeedRng(seed, 1)
    actions = env.minimal_action_set() if minimal else list(range(env.num_actions()))
    rows = []
    for _ in range(episodes):
        env.reset()
        obs = env.state()
        h = fold(0, digest(obs))
        ret, length, done = 0, 0, False
        while not done:
            if smart:
                u = policy.double()
                action = heuristic(game, obs, u, policy.below(6))
            else:
                action = actions[policy.below(len(actions))]
            r, done = env.act(action)
            obs = env.state()
            h = fold(h, digest(obs))
            h = fold(h, int(r) * 1000003 + int(done))
            ret += r
            length += 1
        rows.append((length, ret, h))
    return rows


def main():
    out = sys.stdout
    out.write("/* tests/golden/minatar_traces.h: episodes of the original MinAtar (Python package\n")
    out.write(" * minatar %s) driven by Seed's random generator; per episode its length,\n"
              % importlib.metadata.version("minatar"))
    out.write(" * return and a digest of its observations, rewards and end flags.\n")
    out.write(" * Generated by tests/golden/minatar_traces.py; do not edit. */\n")
    out.write("#ifndef SEED_TESTS_MINATAR_TRACES_H\n#define SEED_TESTS_MINATAR_TRACES_H\n\n")
    out.write("#include <stdint.h>\n\n")
    out.write("struct minatar_trace_episode {\n\tint length;\n\tint ret;\n\tuint64_t digest;\n};\n\n")
    out.write("struct minatar_trace {\n\tconst char *env;\n\tconst char *options;\n")
    out.write("\tint heuristic; /* the policy: 0 uniform, 1 heuristic() */\n\tuint64_t seed;\n")
    out.write("\tint episodes;\n\tconst struct minatar_trace_episode *episode;\n};\n\n")
    index = []
    n = 0
    for game, name, episode_counts in GAMES:
        for (options, sticky, ramping, minimal, smart), episodes in zip(OPTION_SETS, episode_counts):
            seed = SEED + n
            rows = play(game, episodes, seed, sticky, ramping, minimal, smart)
            var = "minatar_trace_%d" % n
            out.write("static const struct minatar_trace_episode %s[] = {\n" % var)
            for length, ret, h in rows:
                out.write("\t{%d, %d, 0x%016xu},\n" % (length, ret, h))
            out.write("};\n\n")
            index.append((name, options, int(smart), seed, episodes, var))
            sys.stderr.write("%s %s%s: %d episodes, %d steps, return %d\n"
                             % (name, options, " heuristic" if smart else "", episodes,
                                sum(r[0] for r in rows), sum(r[1] for r in rows)))
            n += 1
    out.write("static const struct minatar_trace minatar_traces[] = {\n")
    for name, options, smart, seed, episodes, var in index:
        out.write("\t{\"%s\", \"%s\", %d, %d, %d, %s},\n"
                  % (name, options.replace('"', '\\"'), smart, seed, episodes, var))
    out.write("};\n\n#endif\n")


if __name__ == "__main__":
    main()
