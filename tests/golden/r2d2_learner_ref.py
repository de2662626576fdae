#!/usr/bin/env python3
"""Golden values for tests/unit/learn/test_learner.c: one R2D2 update of a tiny model.

Independent of lib/ on purpose: the model, the R2D2 targets and loss and the
gradient are written out here in plain Python (float64; no numpy needed) from their definitions.

The model: a dueling head straight on a 4-float observation (empty torso),
parameters in slab order advantage.weight [A, 4], value.weight [1, 4],
advantage.bias [A], value.bias [1]:

  V = wv . x + bv,  Adv = Wa x + ba,  Q[a] = V + Adv[a] - mean(Adv)

The update (seed_learner(3), algorithm r2d2): sequences of T+1 steps, the
first burn_in skipped (no core), steps burn_in .. T trained on (Tt steps):

  done[t] = terminated[t] | truncated[t]
  a*_t = argmax_a Q_online[t]   (first index of the largest)
  q_boot[t] = h^-1(Q_target[t][a*_t])
  y_t = sum_{i<m} g^i prod_{k<i} (1 - done_{t+k}) r_{t+i}
        + g^m prod_{k<m} (1 - done_{t+k}) q_boot[t+m-1],   m = min(n, Tt - t)
  delta_t = h(y_{t+1}) - Q_online[t][a_t],   t = 0 .. Tt-2
  priority_b = eta max|delta| + (1 - eta) mean|delta|
  loss = mean_b(w_b * 0.5 sum_t delta_t^2)

and the gradient of that loss with respect to the online parameters, the
targets held constant.  The gradient is also checked here against central
finite differences of the loss (in float64).

Usage: python3 tests/golden/r2d2_learner_ref.py > tests/golden/r2d2_learner_golden.h
"""
import math
import struct

T, B, A, D = 4, 2, 2, 4
T1 = T + 1
BURN, N_STEP, GAMMA, EPS, ETA = 1, 2, 0.9, 1e-3, 0.9
NP = A * D + D + A + 1


def f32(x):
    """x rounded to float32 (what the C code receives)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# Inputs, batch-major [b][t] as on the wire, drawn in float32.
obs = [[[f32(math.sin(1 + 7 * b + 3 * t + k)) for k in range(D)] for t in range(T1)] for b in range(B)]
action = [[(3 * b + t) % A for t in range(T1)] for b in range(B)]
reward = [[f32(0.5 * math.cos(2 * b + t) + 0.25 * t) for t in range(T1)] for b in range(B)]
terminated = [[0] * T1 for _ in range(B)]
truncated = [[0] * T1 for _ in range(B)]
terminated[0][3] = 1
truncated[1][2] = 1
weight = [f32(0.5), f32(1.0)]
key = [11, 42]
online = [f32(0.3 * math.cos(1.3 * i + 0.2)) for i in range(NP)]
target = [f32(0.25 * math.sin(0.7 * i + 0.5)) for i in range(NP)]


def unpack(p):
    Wa = [p[a * D:(a + 1) * D] for a in range(A)]
    wv = p[A * D:A * D + D]
    ba = p[A * D + D:A * D + D + A]
    bv = p[A * D + D + A]
    return Wa, wv, ba, bv


def dot(u, v):
    return sum(x * y for x, y in zip(u, v))


def qvalues(p, x):
    Wa, wv, ba, bv = unpack(p)
    adv = [dot(Wa[a], x) + ba[a] for a in range(A)]
    mean = sum(adv) / A
    v = dot(wv, x) + bv
    return [v + adv[a] - mean for a in range(A)]


def argmax(v):
    best = 0
    for i in range(1, len(v)):
        if v[i] > v[best]:
            best = i
    return best


def h(x):
    return math.copysign(math.sqrt(abs(x) + 1) - 1, x) + EPS * x


def hinv(x):
    s = math.copysign(1.0, x)
    return s * (((math.sqrt(1 + 4 * EPS * (abs(x) + 1 + EPS)) - 1) / (2 * EPS)) ** 2 - 1)


def update(p_online, p_target):
    """Loss, priorities, deltas, dL/dq, Q and actions (time-major [t][b])."""
    Tt = T1 - BURN
    steps = range(BURN, T1)
    q = [[qvalues(p_online, obs[b][t]) for b in range(B)] for t in steps]
    qt = [[qvalues(p_target, obs[b][t]) for b in range(B)] for t in steps]
    r = [[reward[b][t] for b in range(B)] for t in steps]
    done = [[1 if terminated[b][t] or truncated[b][t] else 0 for b in range(B)] for t in steps]
    act = [[action[b][t] for b in range(B)] for t in steps]
    qboot = [[hinv(qt[t][b][argmax(q[t][b])]) for b in range(B)] for t in range(Tt)]
    y = [[0.0] * B for _ in range(Tt)]
    for t in range(Tt):
        for b in range(B):
            m = min(N_STEP, Tt - t)
            acc, disc = 0.0, 1.0
            for i in range(m):
                acc += disc * r[t + i][b]
                disc *= GAMMA * (1 - done[t + i][b])
            y[t][b] = acc + disc * qboot[t + m - 1][b]
    delta = [[h(y[t + 1][b]) - q[t][b][act[t][b]] for b in range(B)] for t in range(Tt - 1)]
    prio = []
    seq_loss = []
    for b in range(B):
        ad = [abs(delta[t][b]) for t in range(Tt - 1)]
        prio.append(ETA * max(ad) + (1 - ETA) * sum(ad) / len(ad))
        seq_loss.append(0.5 * sum(delta[t][b] ** 2 for t in range(Tt - 1)))
    loss = sum(weight[b] * seq_loss[b] for b in range(B)) / B
    dq = [[[0.0] * A for _ in range(B)] for _ in range(Tt)]
    for t in range(Tt - 1):
        for b in range(B):
            dq[t][b][act[t][b]] = -delta[t][b] * weight[b] / B
    return loss, prio, delta, dq, q, act


def grad(p_online, p_target):
    """dL/dparams by the chain rule through the dueling head."""
    dq = update(p_online, p_target)[3]
    g = [0.0] * NP
    for t, ts in enumerate(range(BURN, T1)):
        for b in range(B):
            x = obs[b][ts]
            d = dq[t][b]
            dv = sum(d)
            dadv = [d[a] - dv / A for a in range(A)]
            for a in range(A):
                for k in range(D):
                    g[a * D + k] += dadv[a] * x[k]
                g[A * D + D + a] += dadv[a]
            for k in range(D):
                g[A * D + k] += dv * x[k]
            g[A * D + D + A] += dv
    return g


def fd_grad(p_online, p_target, hstep=1e-6):
    """Central differences of the loss, the targets held at p's values."""
    _, _, delta, _, q, act = update(p_online, p_target)
    Tm = T1 - BURN - 1
    targets = [[delta[t][b] + q[t][b][act[t][b]] for b in range(B)] for t in range(Tm)]

    def loss_at(p):
        tot = 0.0
        for b in range(B):
            s = 0.0
            for t in range(Tm):
                qq = qvalues(p, obs[b][BURN + t])[act[t][b]]
                s += 0.5 * (targets[t][b] - qq) ** 2
            tot += weight[b] * s
        return tot / B

    g = []
    for i in range(NP):
        hi = list(p_online)
        lo = list(p_online)
        hi[i] += hstep
        lo[i] -= hstep
        g.append((loss_at(hi) - loss_at(lo)) / (2 * hstep))
    return g


def flat(v):
    if isinstance(v, list):
        for x in v:
            yield from flat(x)
    else:
        yield v


def carr(name, ctype, values, fmt):
    vals = ", ".join(fmt(v) for v in flat(values))
    print(f"static const {ctype} {name}[] = {{{vals}}};")


def ff(v):
    return repr(f32(v)) + "f"


def main():
    loss, prio, delta, dq, q, act = update(online, target)
    g = grad(online, target)
    g_fd = fd_grad(online, target)
    for a, b in zip(g, g_fd):
        assert abs(a - b) <= 1e-6 * abs(b) + 1e-8, (g, g_fd)
    Tt = T1 - BURN
    mean_q = sum(q[t][b][act[t][b]] for t in range(Tt) for b in range(B)) / (Tt * B)
    mean_abs_td = sum(abs(x) for x in flat(delta)) / ((Tt - 1) * B)
    print("/* tests/golden/r2d2_learner_golden.h: generated by tests/golden/r2d2_learner_ref.py; do not edit.")
    print(" * One R2D2 update of a dueling head on 4 floats (plain Python, float64). */")
    print("#include <stdint.h>\n")
    print(f"#define R2L_T {T}\n#define R2L_B {B}\n#define R2L_A {A}\n#define R2L_NP {NP}")
    print(f"#define R2L_BURN {BURN}\n#define R2L_N_STEP {N_STEP}")
    carr("r2l_obs", "float", obs, ff)
    carr("r2l_action", "int32_t", action, str)
    carr("r2l_reward", "float", reward, ff)
    carr("r2l_terminated", "uint8_t", terminated, str)
    carr("r2l_truncated", "uint8_t", truncated, str)
    carr("r2l_weight", "float", weight, ff)
    carr("r2l_key", "int64_t", key, str)
    carr("r2l_online", "float", online, ff)
    carr("r2l_target", "float", target, ff)
    carr("r2l_priority", "double", prio, repr)
    carr("r2l_grad", "double", g, repr)
    print(f"static const double r2l_loss = {loss!r};")
    print(f"static const double r2l_mean_q = {mean_q!r};")
    print(f"static const double r2l_mean_abs_td = {mean_abs_td!r};")


if __name__ == "__main__":
    main()
