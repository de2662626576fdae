#!/usr/bin/env python3
"""Running observation statistics from Gymnasium, for tests/unit/nn/test_obs_norm.c.

Gymnasium's own RunningMeanStd (gymnasium.wrappers.utils; the statistics of
gymnasium.wrappers.NormalizeObservation, which CleanRL's continuous-control
agents wrap their environments in) is updated with four batches of float32
observations of D = 3 values (1, 5, 4 and 7 rows; the columns of different
scales: one around 5, one around -100 with a tiny spread, one constant in
the first batches), in float64 as seed_model_obs_norm_update computes.  Prints,
as C initialisers:
  - the batches (float32 values, exact);
  - after each update the mean, var and count (float64);
  - a probe batch of 4 rows normalised as NormalizeObservation does,
    (obs - mean) / sqrt(var + 1e-8), then clipped to [-10, 10] as CleanRL's
    TransformObservation does (np.clip), with the final statistics; the
    probe's values include ones far outside, to meet the clip, and a NaN
    would stay NaN (not printed: C has no NaN literal).
"""
import numpy as np
from gymnasium.wrappers.utils import RunningMeanStd

D = 3
rng = np.random.default_rng(33)
sizes = [1, 5, 4, 7]
batches = []
for i, n in enumerate(sizes):
    b = np.empty((n, D), dtype=np.float32)
    b[:, 0] = rng.normal(5.0, 2.0, n)
    b[:, 1] = rng.normal(-100.0, 0.01, n)
    b[:, 2] = 0.25 if i < 2 else rng.normal(0.0, 3.0, n)
    batches.append(b)

rms = RunningMeanStd(shape=(D,))  # mean 0, var 1, count 1e-4, float64
states = []
for b in batches:
    rms.update(b.astype(np.float64))
    states.append((rms.mean.copy(), rms.var.copy(), float(rms.count)))

probe = np.array(
    [[5.0, -100.0, 0.0], [40.0, -99.0, -30.0], [-1.5, -100.02, 2.5], [1e6, -1e6, 0.125]], dtype=np.float32
)
y = (probe.astype(np.float64) - rms.mean) / np.sqrt(rms.var + 1e-8)
y = np.clip(y, -10.0, 10.0)


def c_float(v):
    s = "%.9g" % v
    return (s if any(c in s for c in ".e") else s + ".0") + "f"


def floats(a):
    return ", ".join(c_float(v) for v in np.asarray(a, dtype=np.float32).ravel())


def doubles(a):
    return ", ".join("%.17g" % v for v in np.asarray(a, dtype=np.float64).ravel())


print("static const int sizes[] = {%s};" % ", ".join(str(n) for n in sizes))
print("static const float batch_obs[] = {%s};" % floats(np.concatenate(batches)))
print("static const double gold_mean[][3] = {%s};" % ", ".join("{%s}" % doubles(s[0]) for s in states))
print("static const double gold_var[][3] = {%s};" % ", ".join("{%s}" % doubles(s[1]) for s in states))
print("static const double gold_count[] = {%s};" % doubles([s[2] for s in states]))
print("static const float probe[] = {%s};" % floats(probe))
print("static const double gold_y[] = {%s};" % doubles(y))
