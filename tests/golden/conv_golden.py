#!/usr/bin/env python3
"""Golden values for tests/unit/nn/test_nn.c: strided and padded convolutions, from numpy.

Writes tests/golden/conv_golden.h: fixed weights, u8 HWC observations, and what
numpy computes for them in float64 from the float32 weights, for the net

    scale 1/255, conv2d 4 filters k3 stride 2 padding 1, relu,
    conv2d 3 filters k4 stride 3 padding "same", tanh,
    conv2d 2 filters k1 stride 2, flatten, linear 5, tanh, heads

on [13, 11, 3] observations: [13,11,3] -> [7,6,4] -> [3,2,3] -> [2,1,2].
The second layer's "same" padding is uneven (one row above, two below;
none left, one right), and the third layer's stride is larger than its
kernel (inputs skipped).  Besides the logits and values it writes the
gradient of L = sum(cl * logits) + sum(cv * values) with respect to every
parameter, by backpropagation written here with numpy (each convolution on
an explicitly zero-padded array, window by window), independently of the C
code.

"same" is TensorFlow's definition (tf.nn.conv2d, padding="SAME"), which
PyTorch's padding="same" shares at stride 1: ceil(H / S) outputs, padding
total max((OH - 1) * S + k - H, 0), the smaller half at the top (left).

Usage: python3 tests/golden/conv_golden.py > tests/golden/conv_golden.h
Needs numpy only.  Not part of the build: the header is committed.
"""
import numpy as np

rng = np.random.default_rng(20261202)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def pads(h, k, s, padding):
    """(output size, padding before, padding after) along one axis."""
    if padding == "same":
        o = -(-h // s)
        total = max((o - 1) * s + k - h, 0)
        return o, total // 2, total - total // 2
    o = (h + 2 * padding - k) // s + 1
    return o, padding, padding


class Conv:
    def __init__(self, c, f, k, s, padding):
        self.k, self.s, self.padding = k, s, padding
        self.w = f32(rng.uniform(-1, 1, (f, k, k, c)) / np.sqrt(k * k * c))
        self.b = f32(rng.uniform(-0.5, 0.5, f))

    def forward(self, x):
        B, H, W, C = x.shape
        k, s = self.k, self.s
        oh, pt, pb = pads(H, k, s, self.padding)
        ow, pl, pr = pads(W, k, s, self.padding)
        # Enough zeros below and right for every window (the last ones may
        # also stop short of the array's end: those inputs are not read).
        xp = np.zeros((B, pt + H + max(pb, 0) + k, pl + W + max(pr, 0) + k, C))
        xp[:, pt:pt + H, pl:pl + W, :] = x
        y = np.zeros((B, oh, ow, self.w.shape[0]))
        w = self.w.astype(np.float64)
        for oy in range(oh):
            for ox in range(ow):
                win = xp[:, oy * s:oy * s + k, ox * s:ox * s + k, :]
                y[:, oy, ox, :] = np.einsum("bijc,fijc->bf", win, w) + self.b
        self.cache = (x.shape, xp, pt, pl, oh, ow)
        return y

    def backward(self, dy):
        (B, H, W, C), xp, pt, pl, oh, ow = self.cache
        k, s = self.k, self.s
        w = self.w.astype(np.float64)
        dw = np.zeros(w.shape)
        dxp = np.zeros(xp.shape)
        for oy in range(oh):
            for ox in range(ow):
                win = xp[:, oy * s:oy * s + k, ox * s:ox * s + k, :]
                g = dy[:, oy, ox, :]
                dw += np.einsum("bijc,bf->fijc", win, g)
                dxp[:, oy * s:oy * s + k, ox * s:ox * s + k, :] += np.einsum("bf,fijc->bijc", g, w)
        self.dw, self.db = dw, dy.sum(axis=(0, 1, 2))
        return dxp[:, pt:pt + H, pl:pl + W, :]


class Linear:
    def __init__(self, n_in, n_out):
        self.w = f32(rng.uniform(-1, 1, (n_out, n_in)) / np.sqrt(n_in))
        self.b = f32(rng.uniform(-0.5, 0.5, n_out))

    def forward(self, x):
        self.x = x
        return x @ self.w.astype(np.float64).T + self.b

    def backward(self, dy):
        self.dw, self.db = dy.T @ self.x, dy.sum(axis=0)
        return dy @ self.w.astype(np.float64)


B, A, H, W, C = 3, 4, 13, 11, 3
obs = rng.integers(0, 256, (B, H, W, C)).astype(np.uint8)
c1 = Conv(C, 4, 3, 2, 1)
c3 = Conv(4, 3, 4, 3, "same")
c5 = Conv(3, 2, 1, 2, 0)
l7 = Linear(4, 5)
pol = Linear(5, A)
val = Linear(5, 1)
cl = f32(rng.normal(0, 1, (B, A))).astype(np.float64)
cv = f32(rng.normal(0, 1, B)).astype(np.float64)

# Forward.
x0 = obs.astype(np.float64) * np.float64(np.float32(1 / 255))  # the scale layer's f32 factor
a1 = np.maximum(c1.forward(x0), 0)             # [B, 7, 6, 4]
a3 = np.tanh(c3.forward(a1))                   # [B, 3, 2, 3]
y5 = c5.forward(a3)                            # [B, 2, 1, 2]
assert a1.shape == (B, 7, 6, 4) and a3.shape == (B, 3, 2, 3) and y5.shape == (B, 2, 1, 2)
h = np.tanh(l7.forward(y5.reshape(B, -1)))
logits = pol.forward(h)
values = val.forward(h)[:, 0]

# Backward of L = sum(cl * logits) + sum(cv * values).
dh = pol.backward(cl) + val.backward(cv[:, None])
dh = dh * (1 - h * h)
d5 = l7.backward(dh).reshape(y5.shape)
d3 = c5.backward(d5) * (1 - a3 * a3)
d1 = c3.backward(d3) * (a1 > 0)
c1.backward(d1)

params = {"torso.1.weight": c1, "torso.3.weight": c3, "torso.5.weight": c5, "torso.7.weight": l7}
out = []


def emit(name, arr, ctype="float"):
    arr = np.asarray(arr).ravel()
    if ctype == "float":
        vals = ", ".join("%.9g" % float(v) for v in arr.astype(np.float32))
    else:
        vals = ", ".join("%d" % int(v) for v in arr)
    out.append("static const %s %s[%d] = {%s};" % (ctype, name, len(arr), vals))


tensors = []  # (name, value, gradient), in any order: the test finds them by name
for name, layer in params.items():
    stem = name[:-len(".weight")]
    tensors.append((stem + ".weight", layer.w, layer.dw))
    tensors.append((stem + ".bias", layer.b, layer.db))
tensors.append(("policy.weight", pol.w, pol.dw))
tensors.append(("policy.bias", pol.b, pol.db))
tensors.append(("value.weight", val.w, val.dw))
tensors.append(("value.bias", val.b, val.db))

out.append('#define GOLDEN_SCONV_JSON "{\\"torso\\":['
           '{\\"type\\":\\"scale\\",\\"by\\":0.00392156862745098},'
           '{\\"type\\":\\"conv2d\\",\\"filters\\":4,\\"kernel\\":3,\\"stride\\":2,\\"padding\\":1},'
           '{\\"type\\":\\"relu\\"},'
           '{\\"type\\":\\"conv2d\\",\\"filters\\":3,\\"kernel\\":4,\\"stride\\":3,\\"padding\\":\\"same\\"},'
           '{\\"type\\":\\"tanh\\"},'
           '{\\"type\\":\\"conv2d\\",\\"filters\\":2,\\"kernel\\":1,\\"stride\\":2},'
           '{\\"type\\":\\"flatten\\"},{\\"type\\":\\"linear\\",\\"out\\":5},{\\"type\\":\\"tanh\\"}]}"')
for n, v in (("B", B), ("A", A), ("H", H), ("W", W), ("C", C)):
    out.append("#define GOLDEN_SCONV_%s %d" % (n, v))
emit("golden_sconv_obs", obs, "unsigned char")
emit("golden_sconv_cl", cl)
emit("golden_sconv_cv", cv)
for i, (name, value, grad) in enumerate(tensors):
    emit("golden_sconv_p%d" % i, value)
    emit("golden_sconv_g%d" % i, grad)
out.append("static const struct { const char *name; const float *data, *grad; int numel; } "
           "golden_sconv_params[] = {")
for i, (name, value, grad) in enumerate(tensors):
    out.append('\t{"%s", golden_sconv_p%d, golden_sconv_g%d, %d},' % (name, i, i, value.size))
out.append("\t{NULL, NULL, NULL, 0},")
out.append("};")
emit("golden_sconv_logits", logits)
emit("golden_sconv_values", values)

print("/* tests/golden/conv_golden.h: generated by tests/golden/conv_golden.py (numpy %s); do not edit. */" % np.__version__)
print("#ifndef SEED_TESTS_CONV_GOLDEN_H")
print("#define SEED_TESTS_CONV_GOLDEN_H")
print("#include <stddef.h>")
print("\n".join(out))
print("#endif")
