#!/usr/bin/env python3
"""Golden values for tests/unit/rl/test_r2d2.c: R2D2 targets and loss from their definitions.

Independent of lib/rl/r2d2.c on purpose: plain loops over the published
formulas, in float64, on inputs drawn in float32 (what the C code receives).

  h(x)    = sign(x) (sqrt(|x| + 1) - 1) + eps x
  h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1),
            sign(x) ((|x| + 1)^2 - 1) when eps = 0            (the published forms)

  y_t = sum_{i<m} gamma^i prod_{k<i} (1 - done_{t+k}) r_{t+i}
        + gamma^m prod_{k<m} (1 - done_{t+k}) q_boot[t+m-1],    m = min(n, T - t)

  double Q: a*_t = first index of the largest q_online[t][b][.]
            q_boot[t] = h^-1(q_target[t][b][a*_t])
  delta_t = h(y_{t+1}) - q_online[t][b][actions[t][b]],   t = 0 .. T-2
  priority = eta max_t |delta_t| + (1 - eta) mean_t |delta_t|
  loss = 0.5 sum_t delta_t^2
  d(sum_b loss)/d q_online[t][b][a] = -delta_t if a == actions[t][b] and t <= T-2, else 0

Arrays are time-major: [T][B] and [T][B][A].
Usage: python3 tests/golden/r2d2_ref.py > tests/golden/r2d2_golden.h
"""
import math
import sys

import numpy as np


def h(x, eps):
    return math.copysign(1.0, x) * (math.sqrt(abs(x) + 1.0) - 1.0) + eps * x if x != 0 else 0.0


def h_inv(x, eps):
    if x == 0:
        return 0.0
    if eps == 0:
        return math.copysign(1.0, x) * ((abs(x) + 1.0) ** 2 - 1.0)
    s = (math.sqrt(1.0 + 4.0 * eps * (abs(x) + 1.0 + eps)) - 1.0) / (2.0 * eps)
    return math.copysign(1.0, x) * (s * s - 1.0)


def nstep(rewards, done, q_boot, gamma, n):
    T, B = rewards.shape
    y = np.zeros((T, B))
    for b in range(B):
        for t in range(T):
            m = min(n, T - t)
            total = 0.0
            for i in range(m):
                alive = 1.0
                for k in range(i):
                    alive *= 1.0 - float(done[t + k, b])
                total += gamma ** i * alive * float(rewards[t + i, b])
            alive = 1.0
            for k in range(m):
                alive *= 1.0 - float(done[t + k, b])
            total += gamma ** m * alive * float(q_boot[t + m - 1, b])
            y[t, b] = total
    return y


def r2d2_loss(q_online, q_target, actions, rewards, done, gamma, eps, eta, n):
    T, B, A = q_online.shape
    q_boot = np.zeros((T, B))
    for t in range(T):
        for b in range(B):
            best = 0
            for a in range(1, A):
                if q_online[t, b, a] > q_online[t, b, best]:
                    best = a
            q_boot[t, b] = h_inv(float(q_target[t, b, best]), eps)
    y = nstep(rewards, done, q_boot, gamma, n)
    prio = np.zeros(B)
    loss = np.zeros(B)
    grad = np.zeros((T, B, A))
    for b in range(B):
        deltas = []
        for t in range(T - 1):
            a = actions[t, b]
            delta = h(y[t + 1, b], eps) - float(q_online[t, b, a])
            deltas.append(delta)
            grad[t, b, a] = -delta
        absd = [abs(d) for d in deltas]
        prio[b] = eta * max(absd) + (1.0 - eta) * sum(absd) / len(absd)
        loss[b] = 0.5 * sum(d * d for d in deltas)
    return prio, loss, grad


def make_loss_case(rng, name, T, B, A, n, gamma, eps, eta, p_done=0.2):
    f32 = np.float32
    # The C code receives float parameters: compute with exactly those values.
    gamma, eps, eta = float(f32(gamma)), float(f32(eps)), float(f32(eta))
    # q_online on a coarse grid so that argmax ties are common.
    q_online = (rng.integers(-4, 5, size=(T, B, A)) * 0.25).astype(f32)
    q_target = (rng.standard_normal((T, B, A)) * 2.0).astype(f32)
    actions = rng.integers(0, A, size=(T, B)).astype(np.int32)
    rewards = rng.standard_normal((T, B)).astype(f32)
    done = (rng.random((T, B)) < p_done).astype(np.uint8)
    prio, loss, grad = r2d2_loss(q_online, q_target, actions, rewards, done, gamma, eps, eta, n)
    ties = 0
    for t in range(T):
        for b in range(B):
            row = q_online[t, b]
            ties += int(np.sum(row == row.max()) > 1)
    return dict(name=name, T=T, B=B, A=A, n=n, gamma=gamma, eps=eps, eta=eta, q_online=q_online,
                q_target=q_target, actions=actions, rewards=rewards, done=done, prio=prio, loss=loss,
                grad=grad, ties=ties)


def make_nstep_case(rng, name, T, B, n, gamma, p_done=0.25):
    f32 = np.float32
    gamma = float(f32(gamma))
    rewards = rng.standard_normal((T, B)).astype(f32)
    done = (rng.random((T, B)) < p_done).astype(np.uint8)
    q_boot = (rng.standard_normal((T, B)) * 5.0).astype(f32)
    y = nstep(rewards, done, q_boot, gamma, n)
    return dict(name=name, T=T, B=B, n=n, gamma=gamma, rewards=rewards, done=done, q_boot=q_boot, y=y)


def cfloat(x):
    s = "%.9g" % float(x)
    if not any(ch in s for ch in ".e"):
        s += ".0"
    return s + "f"


def carray(ctype, name, xs, fmt):
    xs = np.asarray(xs).ravel()
    body = ",\n\t".join(", ".join(fmt(x) for x in xs[i:i + 6]) for i in range(0, len(xs), 6))
    return "static const %s %s[] = {\n\t%s,\n};\n" % (ctype, name, body)


def dbl(x):
    return "%.17g" % x


def main():
    rng = np.random.default_rng(20190927)  # R2D2's ICLR 2019 submission date
    nsteps = [
        make_nstep_case(rng, "nstep_n1", 4, 3, 1, 0.9),
        make_nstep_case(rng, "nstep_n3", 10, 2, 3, 0.99),
        make_nstep_case(rng, "nstep_n5", 10, 3, 5, 0.997),
        make_nstep_case(rng, "nstep_n_beyond_T", 3, 2, 5, 0.8),
        make_nstep_case(rng, "nstep_gamma1", 6, 2, 3, 1.0),
        make_nstep_case(rng, "nstep_gamma0", 5, 2, 3, 0.0),
    ]
    losses = [
        make_loss_case(rng, "loss_T2_n1", 2, 1, 2, 1, 0.9, 1e-3, 0.9),
        make_loss_case(rng, "loss_T5_n3", 5, 3, 4, 3, 0.99, 1e-3, 0.9),
        make_loss_case(rng, "loss_T10_n5", 10, 4, 3, 5, 0.997, 1e-3, 0.9),
        make_loss_case(rng, "loss_T10_n1_eps0", 10, 2, 5, 1, 0.95, 0.0, 0.5),
        make_loss_case(rng, "loss_T3_n5_eta0", 3, 2, 3, 5, 0.9, 1e-2, 0.0),
        make_loss_case(rng, "loss_T10_n3_eta1_gamma1", 10, 3, 4, 3, 1.0, 1e-3, 1.0, p_done=0.3),
        make_loss_case(rng, "loss_T12_n5_A1", 12, 2, 1, 5, 0.99, 1e-3, 0.9),
    ]
    out = sys.stdout
    out.write("/* tests/golden/r2d2_golden.h: generated by tests/golden/r2d2_ref.py; do not edit.\n"
              " * R2D2 n-step targets and loss from their definitions (plain loops, float64). */\n")
    out.write("#include <stdint.h>\n\n")
    for k, c in enumerate(nsteps):
        for key in ("rewards", "q_boot"):
            out.write(carray("float", "ns%d_%s" % (k, key), c[key], cfloat))
        out.write(carray("uint8_t", "ns%d_done" % k, c["done"], lambda x: "%d" % x))
        out.write(carray("double", "ns%d_y" % k, c["y"], dbl))
        out.write("\n")
    out.write("struct nstep_golden {\n\tconst char *name;\n\tint T, B, n;\n\tfloat gamma;\n"
              "\tconst float *rewards;\n\tconst uint8_t *done;\n\tconst float *q_boot;\n"
              "\tconst double *y;\n};\n\n")
    out.write("static const struct nstep_golden nstep_golden[] = {\n")
    for k, c in enumerate(nsteps):
        out.write('\t{"%s", %d, %d, %d, %s, ns%d_rewards, ns%d_done, ns%d_q_boot, ns%d_y},\n'
                  % (c["name"], c["T"], c["B"], c["n"], cfloat(c["gamma"]), k, k, k, k))
    out.write("};\n\n")
    for k, c in enumerate(losses):
        for key in ("q_online", "q_target", "rewards"):
            out.write(carray("float", "rl%d_%s" % (k, key), c[key], cfloat))
        out.write(carray("int32_t", "rl%d_actions" % k, c["actions"], lambda x: "%d" % x))
        out.write(carray("uint8_t", "rl%d_done" % k, c["done"], lambda x: "%d" % x))
        for key in ("prio", "loss", "grad"):
            out.write(carray("double", "rl%d_%s" % (k, key), c[key], dbl))
        out.write("\n")
    out.write("struct r2d2_golden {\n\tconst char *name;\n\tint T, B, A, n;\n"
              "\tfloat gamma, eps, eta;\n\tint ties; /* rows of q_online whose max is tied */\n"
              "\tconst float *q_online, *q_target;\n\tconst int32_t *actions;\n"
              "\tconst float *rewards;\n\tconst uint8_t *done;\n"
              "\tconst double *priorities, *loss, *grad;\n};\n\n")
    out.write("static const struct r2d2_golden r2d2_golden[] = {\n")
    for k, c in enumerate(losses):
        out.write('\t{"%s", %d, %d, %d, %d, %s, %s, %s, %d, rl%d_q_online, rl%d_q_target,\n'
                  '\t rl%d_actions, rl%d_rewards, rl%d_done, rl%d_prio, rl%d_loss, rl%d_grad},\n'
                  % (c["name"], c["T"], c["B"], c["A"], c["n"], cfloat(c["gamma"]), cfloat(c["eps"]),
                     cfloat(c["eta"]), c["ties"], k, k, k, k, k, k, k, k))
    out.write("};\n")


if __name__ == "__main__":
    main()
