#!/usr/bin/env python3
"""Pendulum-v1 steps worked in float64 with numpy, for tests/unit/env/test_env_box.c.

The step is Gymnasium's PendulumEnv.step written out (g = 10, m = l = 1,
dt = 0.05, torque clipped to [-2, 2], speed to [-8, 8]); the torques are
float32 values, as an actor sends them.  Prints reward, cos, sin, theta_dot
per step as float32.
"""
import numpy as np

g, m, l, dt = 10.0, 1.0, 1.0, 0.05


def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


th, thdot = 1.0, 0.5
for a in [0.5, 3.0, -2.5, 0.0]:
    u = float(np.clip(np.float32(a), -2.0, 2.0))
    cost = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2
    newthdot = np.clip(thdot + (3 * g / (2 * l) * np.sin(th) + 3.0 / (m * l**2) * u) * dt, -8, 8)
    th, thdot = th + newthdot * dt, newthdot
    obs = np.array([np.cos(th), np.sin(th), thdot], dtype=np.float32)
    print("{%sf, %sf, %sf, %sf}," % (np.float32(-cost), *obs))
