#!/usr/bin/env python3
"""Golden values for tests/unit/nn/test_nn.c and tests/unit/nn/test_policy.c, from numpy.

Writes tests/golden/nn_golden.h: fixed weights, inputs and the outputs numpy
computes for them (in float64 from the float32 weights), for
  - a small MLP (linear, tanh, linear, relu, heads) on f32 observations,
  - a small conv net (conv2d, relu, conv2d, tanh, flatten, linear, relu,
    heads) on u8 HWC observations, non-square, with two conv layers,
  - policy-head helpers: log-softmax, softmax, entropy of a few logit rows,
    including huge and very negative logits.
The conv reference slides windows with numpy (sliding_window_view +
einsum), independently of the C code's im2col.

Usage: python3 tests/golden/nn_golden.py > tests/golden/nn_golden.h
Needs numpy only.  Not part of the build: the header is committed.
"""
import numpy as np

rng = np.random.default_rng(20240611)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def linear_params(n_in, n_out):
    w = f32(rng.uniform(-1, 1, (n_out, n_in)) / np.sqrt(n_in))
    b = f32(rng.uniform(-0.5, 0.5, n_out))
    return w, b


def conv_params(c, f, k):
    w = f32(rng.uniform(-1, 1, (f, k, k, c)) / np.sqrt(k * k * c))
    b = f32(rng.uniform(-0.5, 0.5, f))
    return w, b


def linear(x, w, b):
    return x @ w.astype(np.float64).T + b


def conv2d(x, w, b):
    # x [B, H, W, C], w [F, k, k, C] -> [B, H-k+1, W-k+1, F]
    k = w.shape[1]
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(1, 2))
    # win [B, OH, OW, C, k, k]
    return np.einsum("byxcij,fijc->byxf", win, w.astype(np.float64)) + b


def heads(h, a):
    pw, pb = linear_params(h.shape[1], a)
    vw, vb = linear_params(h.shape[1], 1)
    params = {"policy.weight": pw, "policy.bias": pb, "value.weight": vw, "value.bias": vb}
    return params, linear(h, pw, pb), linear(h, vw, vb)[:, 0]


out = []


def emit(name, arr, ctype="float"):
    arr = np.asarray(arr).ravel()
    if ctype == "float":
        vals = ", ".join("%.9g" % float(v) for v in arr.astype(np.float32))
    else:
        vals = ", ".join("%d" % int(v) for v in arr)
    out.append("static const %s %s[%d] = {%s};" % (ctype, name, len(arr), vals))


def emit_params(prefix, params):
    names = list(params)
    for i, n in enumerate(names):
        emit("%s_p%d" % (prefix, i), params[n])
    out.append("static const golden_param %s_params[] = {" % prefix)
    for i, n in enumerate(names):
        out.append('\t{"%s", %s_p%d, %d},' % (n, prefix, i, params[n].size))
    out.append("\t{NULL, NULL, 0},")
    out.append("};")


# ---- MLP: obs [4] f32, torso linear 8, tanh, linear 6, relu; A = 3, B = 5.
B, A = 5, 3
x = f32(rng.normal(0, 1.5, (B, 4)))
w0, b0 = linear_params(4, 8)
w2, b2 = linear_params(8, 6)
h = np.tanh(linear(x.astype(np.float64), w0, b0))
h = np.maximum(linear(h, w2, b2), 0)
hp, logits, values = heads(h, A)
params = {"torso.0.weight": w0, "torso.0.bias": b0, "torso.2.weight": w2, "torso.2.bias": b2}
params.update(hp)
out.append("/* MLP */")
out.append('#define GOLDEN_MLP_JSON "{\\"torso\\":[{\\"type\\":\\"linear\\",\\"out\\":8},{\\"type\\":\\"tanh\\"},'
           '{\\"type\\":\\"linear\\",\\"out\\":6},{\\"type\\":\\"relu\\"}]}"')
out.append("#define GOLDEN_MLP_B %d" % B)
out.append("#define GOLDEN_MLP_A %d" % A)
emit("golden_mlp_obs", x)
emit_params("golden_mlp", params)
emit("golden_mlp_logits", logits)
emit("golden_mlp_values", values)

# ---- conv net: obs [6, 5, 3] u8, torso conv 4 k3, relu, conv 2 k2, tanh,
# flatten, linear 5, relu; A = 4, B = 3.
B, A, H, W, C = 3, 4, 6, 5, 3
xo = rng.integers(0, 4, (B, H, W, C)).astype(np.uint8)
c0w, c0b = conv_params(C, 4, 3)
c2w, c2b = conv_params(4, 2, 2)
l5w, l5b = linear_params(3 * 2 * 2, 5)
h = np.maximum(conv2d(xo.astype(np.float64), c0w, c0b), 0)   # [B, 4, 3, 4]
h = np.tanh(conv2d(h, c2w, c2b))                           # [B, 3, 2, 2]
h = h.reshape(B, -1)                                       # HWC order
h = np.maximum(linear(h, l5w, l5b), 0)
hp, logits, values = heads(h, A)
params = {"torso.0.weight": c0w, "torso.0.bias": c0b, "torso.2.weight": c2w, "torso.2.bias": c2b,
          "torso.5.weight": l5w, "torso.5.bias": l5b}
params.update(hp)
out.append("/* conv net */")
out.append('#define GOLDEN_CONV_JSON "{\\"torso\\":[{\\"type\\":\\"conv2d\\",\\"filters\\":4,\\"kernel\\":3},'
           '{\\"type\\":\\"relu\\"},{\\"type\\":\\"conv2d\\",\\"filters\\":2,\\"kernel\\":2},{\\"type\\":\\"tanh\\"},'
           '{\\"type\\":\\"flatten\\"},{\\"type\\":\\"linear\\",\\"out\\":5},{\\"type\\":\\"relu\\"}]}"')
out.append("#define GOLDEN_CONV_B %d" % B)
out.append("#define GOLDEN_CONV_A %d" % A)
out.append("#define GOLDEN_CONV_H %d" % H)
out.append("#define GOLDEN_CONV_W %d" % W)
out.append("#define GOLDEN_CONV_C %d" % C)
emit("golden_conv_obs", xo, "unsigned char")
emit_params("golden_conv", params)
emit("golden_conv_logits", logits)
emit("golden_conv_values", values)

# ---- policy helpers: rows of 5 logits.
z = f32([[0.5, -1.0, 2.0, 0.0, 0.25],
         [1000.0, 1001.0, 1002.0, 999.0, 1000.5],
         [-1e30, 3.0, -1e30, 2.0, 1.0],
         [0.0, 0.0, 0.0, 0.0, 0.0],
         [-50.0, 40.0, -30.0, 12.5, 39.0]])
zd = z.astype(np.float64)
lse = zd.max(axis=1, keepdims=True)
lse = lse + np.log(np.exp(zd - lse).sum(axis=1, keepdims=True))
logp = zd - lse
p = np.exp(logp)
ent = -(np.where(p > 0, p * logp, 0.0)).sum(axis=1)
out.append("/* policy helpers */")
out.append("#define GOLDEN_POL_B %d" % z.shape[0])
out.append("#define GOLDEN_POL_A %d" % z.shape[1])
emit("golden_pol_logits", z)
emit("golden_pol_logp", logp)
emit("golden_pol_probs", p)
emit("golden_pol_entropy", ent)

print("/* tests/golden/nn_golden.h: generated by tests/golden/nn_golden.py (numpy %s); do not edit. */" % np.__version__)
print("#ifndef SEED_TESTS_NN_GOLDEN_H")
print("#define SEED_TESTS_NN_GOLDEN_H")
print("#include <stddef.h>")
print("typedef struct golden_param { const char *name; const float *data; int numel; } golden_param;")
print("\n".join(out))
print("#endif")
