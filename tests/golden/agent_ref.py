#!/usr/bin/env python3
"""Golden values for tests/unit/serve/test_agent.c, from plain Python (no Seed code).

The model: observations of 3 values, a torso of linear(2) + relu, a policy
head of 3 logits and a value head.  Its parameters are binary fractions, so
every logit and value is exact in f32 and the C test compares them exactly.
Prints the logits, values and greedy actions (the first largest logit) of the
test's observation rows, and the softmax probabilities of the rows the test
samples from.
"""
import math

W0 = [[1.0, -0.5, 0.25], [0.5, 1.0, -1.0]]
B0 = [0.5, -0.25]
WP = [[1.0, 0.0], [0.0, 1.0], [-1.0, 2.0]]
WV = [0.5, -0.5]
BP = [0.0, 0.5, -0.25]
BV = 1.0

OBS = [[1, 2, 4], [0, 0, 0], [2, 1, 3], [0, 3, 1], [0, 1, 0]]


def forward(x):
    h = [max(0.0, sum(w * v for w, v in zip(row, x)) + b) for row, b in zip(W0, B0)]
    logits = [sum(w * v for w, v in zip(row, h)) + b for row, b in zip(WP, BP)]
    value = sum(w * v for w, v in zip(WV, h)) + BV
    return logits, value


def softmax(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


for x in OBS:
    logits, value = forward(x)
    greedy = logits.index(max(logits))
    print("obs", x, "logits", logits, "value", value, "greedy", greedy)
for x in OBS[3:4]:
    print("probs", x, ["%.12f" % p for p in softmax(forward(x)[0])])
