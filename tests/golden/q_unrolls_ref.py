#!/usr/bin/env python3
"""Check a Q model's unroll frames from seed-infer against plain Python.

    q_unrolls_ref.py CHECKPOINT.safetensors UNROLLS.jsonl BURN_IN N_STEP
                     DISCOUNT RESCALE_EPS ETA GREEDY_LO GREEDY_HI

UNROLLS.jsonl holds unroll frames as seed-cat prints them, one a line.
The model (read from the safetensors file and its "seed.checkpoint"
metadata) must be a torso of flatten, linear and relu layers and a dueling
head.  For every frame:

  * logits [B, L, A] are the model's Q values of obs, recomputed here from
    the definitions (Q = V + Adv - mean Adv; linear weights [out, in]);
  * priority [B] is each row's first priority, recomputed here from the
    frame's logits, actions, rewards and flags over steps BURN_IN .. L-1:
    double Q (argmax of the online Q, which is also the target), n-step
    targets under the rescaling h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x,
    TD errors delta_t = h(y_{t+1}) - Q_t[a_t], priority = eta max|delta| +
    (1 - eta) mean|delta| (R2D2; SEED RL's convention: reward[t] and
    done[t] = terminated[t] | truncated[t] come with obs t);
  * the fraction of actions that are the greedy one (first largest Q) is
    within [GREEDY_LO, GREEDY_HI] over all frames.

No numpy: only the standard library, so that it runs wherever python3 does.
Exit status 1 with a message on the first mismatch.
"""
import json
import math
import struct
import sys


def fail(msg):
    sys.exit(f"q_unrolls_ref: {msg}")


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    data = blob[8 + n :]
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            fail(f"{name}: dtype {t['dtype']}, expected F32")
        a, b = t["data_offsets"]
        vals = list(struct.unpack(f"<{(b - a) // 4}f", data[a:b]))
        tensors[name] = (t["shape"], vals)
    return tensors, json.loads(meta["seed.checkpoint"])


def linear(w, b, x):
    (out, inp), wv = w
    bv = b[1]
    return [bv[o] + sum(wv[o * inp + i] * x[i] for i in range(inp)) for o in range(out)]


def q_values(tensors, model, x):
    for i, layer in enumerate(model["torso"]):
        kind = layer["type"]
        if kind == "flatten":
            continue
        if kind == "linear":
            x = linear(tensors[f"torso.{i}.weight"], tensors[f"torso.{i}.bias"], x)
        elif kind == "relu":
            x = [max(v, 0.0) for v in x]
        else:
            fail(f"torso layer {i}: {kind} is not handled here")
    adv = linear(tensors["advantage.weight"], tensors["advantage.bias"], x)
    v = linear(tensors["value.weight"], tensors["value.bias"], x)[0]
    mean = sum(adv) / len(adv)
    return [v + a - mean for a in adv]


def h(x, eps):
    return math.copysign(math.sqrt(abs(x) + 1) - 1, x) + eps * x


def h_inv(x, eps):
    if eps == 0:
        return math.copysign((abs(x) + 1) ** 2 - 1, x)
    return math.copysign(
        ((math.sqrt(1 + 4 * eps * (abs(x) + 1 + eps)) - 1) / (2 * eps)) ** 2 - 1, x
    )


def flat(x):
    """seed-cat prints a tensor's data nested by its shape."""
    if isinstance(x, list):
        return [v for e in x for v in flat(e)]
    return [x]


def argmax(row):
    best = 0
    for i, v in enumerate(row):
        if v > row[best]:
            best = i
    return best


def priority(q, actions, rewards, done, n, gamma, eps, eta):
    """One row's priority over a sequence of T steps (lists indexed by t)."""
    T = len(q)
    boot = [h_inv(q[t][argmax(q[t])], eps) for t in range(T)]

    def target(t):
        m = min(n, T - t)
        y, live = 0.0, 1.0
        for i in range(m):
            y += gamma**i * live * rewards[t + i]
            live *= 1 - done[t + i]
        return y + gamma**m * live * boot[t + m - 1]

    deltas = [abs(h(target(t + 1), eps) - q[t][actions[t]]) for t in range(T - 1)]
    return eta * max(deltas) + (1 - eta) * sum(deltas) / len(deltas)


def main():
    if len(sys.argv) != 10:
        fail("usage: CHECKPOINT UNROLLS BURN_IN N_STEP DISCOUNT RESCALE_EPS ETA GREEDY_LO GREEDY_HI")
    tensors, meta = read_safetensors(sys.argv[1])
    model = meta["model"]
    burn_in, n = int(sys.argv[3]), int(sys.argv[4])
    gamma, eps, eta = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
    lo, hi = float(sys.argv[8]), float(sys.argv[9])
    frames = greedy = steps = 0
    worst_q = worst_p = 0.0
    with open(sys.argv[2]) as f:
        for line in f:
            u = json.loads(line)
            if u["type"] != "unroll":
                continue
            frames += 1
            for k, v in u.items():
                if isinstance(v, dict) and "data" in v:
                    v["data"] = flat(v["data"])
            B, L, A = u["logits"]["shape"]
            obs = u["obs"]["data"]
            width = len(obs) // (B * L)
            lg = u["logits"]["data"]
            if "priority" not in u or u["priority"]["shape"] != [B]:
                fail(f"frame {frames}: no priority f32 [{B}]")
            for b in range(B):
                q = [lg[(b * L + t) * A : (b * L + t + 1) * A] for t in range(L)]
                for t in range(L):
                    k = b * L + t
                    want = q_values(tensors, model, obs[k * width : (k + 1) * width])
                    for a in range(A):
                        worst_q = max(worst_q, abs(q[t][a] - want[a]) / (1 + abs(want[a])))
                    greedy += u["action"]["data"][k] == argmax(q[t])
                    steps += 1
                sl = slice(b * L + burn_in, (b + 1) * L)
                done = [
                    1 if (te or tr) else 0
                    for te, tr in zip(u["terminated"]["data"][sl], u["truncated"]["data"][sl])
                ]
                p = priority(
                    q[burn_in:], u["action"]["data"][sl], u["reward"]["data"][sl], done, n, gamma, eps, eta
                )
                got = u["priority"]["data"][b]
                if got < 0:
                    fail(f"frame {frames} row {b}: priority {got} < 0")
                worst_p = max(worst_p, abs(got - p) / (1 + abs(p)))
    if frames == 0:
        fail("no unroll frames")
    if worst_q > 1e-4:
        fail(f"logits differ from the Q values by up to {worst_q:g} (relative)")
    if worst_p > 1e-4:
        fail(f"priorities differ from the reference by up to {worst_p:g} (relative)")
    frac = greedy / steps
    if not lo <= frac <= hi:
        fail(f"{frac:.3f} of {steps} actions are greedy, expected [{lo}, {hi}]")
    print(f"ok: {frames} unroll frames, {steps} steps, {frac:.3f} greedy, "
          f"Q within {worst_q:.2g}, priorities within {worst_p:.2g}")


main()
