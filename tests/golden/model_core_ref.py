#!/usr/bin/env python3
"""Golden values for tests/unit/nn/test_model_core.c: a model with an LSTM core, from its equations.

Independent of lib/nn on purpose: float64, plain loops over t.  The model is

    y_t   = tanh(obs_t W0^T + b0)                          torso: linear, tanh
    x_t   = [y_t, clip(prev_reward_t, -1, 1), onehot(prev_action_t, A)]
    z     = x_t K + h_{t-1} R + bias                        Keras LSTMCell, gates i, f, c, o
    i, f, g, o = sig(z_i), sig(z_f), tanh(z_g), sig(z_o)
    c_t   = f c_{t-1} + i g,   h_t = o tanh(c_t)            (h, c zeroed for row b when reset[t][b])
    heads: logits_t = h_t Wp^T + bp, value_t = h_t Wv^T + bv           (actor-critic)
           Q_t = V + Adv - mean(Adv), Adv = h_t Wa^T + ba, V = h_t Wv^T + bv   (dueling)

with the state (h, c) before step 0 given per row, the one-hot all zeros for an
action outside 0..A-1 (tf.one_hot), the reward clipped as SEED's DMLab agent does.
Parameters are drawn in float32 (what the C code receives) and written by name.
Usage: python3 tests/golden/model_core_ref.py > tests/golden/model_core_golden.h
"""
import sys

import numpy as np


def sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def carr(name, a, ctype="float"):
    flat = np.asarray(a).reshape(-1)
    if ctype == "float":
        body = ", ".join("%.9ef" % v for v in flat)
    else:
        body = ", ".join("%d" % v for v in flat)
    return "static const %s %s[%d] = {%s};\n" % (ctype, name, len(flat), body)


def case(out, name, head, T, B, O, D, H, A, prev_reward, prev_action, resets, seed):
    rng = np.random.default_rng(seed)
    f32 = lambda *s: rng.uniform(-1, 1, size=s).astype(np.float32)
    I = D + (1 if prev_reward else 0) + (A if prev_action else 0)
    params = [("torso.0.weight", f32(D, O)), ("torso.0.bias", f32(D) * 0.5),
              ("core.kernel", f32(I, 4 * H) * 0.8), ("core.recurrent_kernel", f32(H, 4 * H) * 0.8),
              ("core.bias", f32(4 * H) * 0.5)]
    stream = "advantage" if head == "dueling" else "policy"
    params += [(stream + ".weight", f32(A, H)), ("value.weight", f32(1, H)),
               (stream + ".bias", f32(A) * 0.5), ("value.bias", f32(1) * 0.5)]
    P = {k: v.astype(np.float64) for k, v in params}
    obs = f32(T, B, O) * 2
    # Rewards beyond the clip and actions outside 0..A-1 on purpose.
    reward = (rng.uniform(-3, 3, size=(T, B))).astype(np.float32)
    action = rng.integers(-1, A + 1, size=(T, B)).astype(np.int32)
    action[0, 0], action[1, B - 1] = -1, A  # both give an all-zero one-hot
    state0 = f32(B, 2 * H)
    reset = np.zeros((T, B), dtype=np.uint8)
    for (t, r) in resets:
        reset[t, r] = 1

    h = state0[:, :H].astype(np.float64)
    c = state0[:, H:].astype(np.float64)
    outs, vals = [], []
    for t in range(T):
        y = np.tanh(obs[t].astype(np.float64) @ P["torso.0.weight"].T + P["torso.0.bias"])
        parts = [y]
        if prev_reward:
            parts.append(np.clip(reward[t].astype(np.float64), -1, 1)[:, None])
        if prev_action:
            oh = np.zeros((B, A))
            for b in range(B):
                if 0 <= action[t, b] < A:
                    oh[b, action[t, b]] = 1
            parts.append(oh)
        x = np.concatenate(parts, axis=1)
        keep = (reset[t] == 0).astype(np.float64)[:, None]
        h, c = h * keep, c * keep
        z = x @ P["core.kernel"] + h @ P["core.recurrent_kernel"] + P["core.bias"]
        i, f = sig(z[:, :H]), sig(z[:, H:2 * H])
        g, o = np.tanh(z[:, 2 * H:3 * H]), sig(z[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        a = h @ P[stream + ".weight"].T + P[stream + ".bias"]
        v = (h @ P["value.weight"].T + P["value.bias"])[:, 0]
        if head == "dueling":
            outs.append(v[:, None] + a - a.mean(axis=1, keepdims=True))
        else:
            outs.append(a)
            vals.append(v)
    state_out = np.concatenate([h, c], axis=1)

    core = {"type": "lstm", "units": H}
    if prev_reward:
        core["prev_reward"] = True
    if prev_action:
        core["prev_action"] = True
    import json
    desc = json.dumps({"torso": [{"type": "linear", "out": D}, {"type": "tanh"}], "core": core,
                       "head": head})
    out.write("/* %s: %s head, T=%d B=%d obs f32[%d] -> linear(%d) tanh -> lstm(%d)%s%s, A=%d,"
              " resets %s */\n" % (name, head, T, B, O, D, H, " +reward" if prev_reward else "",
                                   " +action" if prev_action else "", A, resets or "none"))
    out.write("static const char %s_json[] = %s;\n" % (name, json.dumps(desc)))
    for k, v in params:
        out.write(carr("%s_%s" % (name, k.replace(".", "_")), v))
    out.write("static const core_golden_param %s_params[] = {%s, {NULL, NULL, 0}};\n" % (
        name, ", ".join('{"%s", %s_%s, %d}' % (k, name, k.replace(".", "_"), v.size) for k, v in params)))
    out.write(carr("%s_obs" % name, obs))
    out.write(carr("%s_reward" % name, reward))
    out.write(carr("%s_action" % name, action, "int32_t"))
    out.write(carr("%s_reset" % name, reset, "uint8_t"))
    out.write(carr("%s_state0" % name, state0))
    out.write(carr("%s_out" % name, np.stack(outs)))
    out.write(carr("%s_values" % name, np.stack(vals) if vals else np.zeros(1)))
    out.write(carr("%s_state_out" % name, state_out))
    return name, T, B, O, A, H, 1 if head == "dueling" else 0


def main():
    out = sys.stdout
    out.write("/* tests/golden/model_core_golden.h: generated by tests/golden/model_core_ref.py; do not edit. */\n")
    out.write("#include <stddef.h>\n#include <stdint.h>\n")
    out.write("typedef struct core_golden_param {\n\tconst char *name;\n\tconst float *data;\n"
              "\tsize_t numel;\n} core_golden_param;\n")
    cases = [case(out, "ac", "actor-critic", 4, 2, 3, 4, 3, 3, True, True, [(2, 1)], 11),
             case(out, "dq", "dueling", 3, 3, 2, 5, 4, 2, False, True, [(1, 0), (2, 2)], 12)]
    out.write("#define CORE_GOLDEN_CASE(n, T, B, O, A, H, dueling) \\\n"
              "\t{#n, T, B, O, A, H, dueling, n##_json, n##_params, n##_obs, n##_reward, \\\n"
              "\t n##_action, n##_reset, n##_state0, n##_out, n##_values, n##_state_out}\n")
    out.write("#define CORE_GOLDEN_CASES \\\n")
    out.write(", \\\n".join("\tCORE_GOLDEN_CASE(%s, %d, %d, %d, %d, %d, %d)" % c for c in cases))
    out.write("\n")


if __name__ == "__main__":
    main()
