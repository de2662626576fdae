#!/usr/bin/env python3
"""Golden values for tests/unit/nn/test_gaussian.c (seed/gaussian.h).

Independent of Seed's code: the Gaussian's log-density and entropy come from
scipy.stats.norm, the tanh squash's Jacobian from log(1 - tanh(u)^2) written
as -2 log cosh(u) (numpy, float64), and the KL divergence by numerical
integration (scipy.integrate.quad) of p log(p / q) per dimension.

Run: python3 tests/ref/gaussian_ref.py   (numpy, scipy) and paste the output
into the test.
"""
import numpy as np
from scipy import integrate
from scipy.stats import norm

B, A = 3, 3
mean = np.array([[0.5, -1.25, 2.0], [0.0, 0.3, -0.7], [-3.0, 1.5, 0.25]])
log_std = np.array([[0.0, -0.5, 0.7], [-2.0, 0.1, 0.0], [1.2, -1.0, -0.3]])
u = np.array([[0.1, -1.0, 3.5], [0.05, 12.0, -0.9], [-6.0, 1.4, -9.5]])
low = np.array([-1.0, -2.0, 0.0])
high = np.array([1.0, 3.0, 0.5])
q_mean = np.array([[0.4, -1.0, 1.5], [0.2, 0.0, -0.5], [-2.0, 1.0, 0.0]])
q_log_std = np.array([[0.3, -0.2, 0.5], [-1.5, 0.4, -0.2], [1.0, -0.5, 0.1]])

std = np.exp(log_std)
gauss = norm.logpdf(u, loc=mean, scale=std).sum(axis=1)
log_cosh = np.abs(u) + np.log1p(np.exp(-2 * np.abs(u))) - np.log(2.0)
log_jac = (-2 * log_cosh).sum(axis=1)  # sum log(1 - tanh^2)
tanh_lp = gauss - log_jac - np.log((high - low) / 2).sum()
entropy = norm.entropy(loc=mean, scale=std).sum(axis=1)
env_clip = np.clip(u, low, high)
env_tanh = low + (np.tanh(u) + 1) * (high - low) / 2


def kl1(mp, sp, mq, sq):
    f = lambda x: norm.pdf(x, mp, sp) * (norm.logpdf(x, mp, sp) - norm.logpdf(x, mq, sq))
    v, _ = integrate.quad(f, mp - 40 * sp, mp + 40 * sp, epsabs=1e-13, epsrel=1e-12, limit=200)
    return v


kl = np.array([sum(kl1(mean[b, i], std[b, i], q_mean[b, i], np.exp(q_log_std[b, i])) for i in range(A))
               for b in range(B)])


def arr(name, x):
    vals = ", ".join("%.17g" % v for v in np.asarray(x).ravel())
    print("static const double %s[] = {%s};" % (name, vals))


arr("ref_params", np.concatenate([mean, log_std], axis=1))
arr("ref_q", np.concatenate([q_mean, q_log_std], axis=1))
arr("ref_u", u)
arr("ref_low", low)
arr("ref_high", high)
arr("ref_logp_clip", gauss)
arr("ref_logp_tanh", tanh_lp)
arr("ref_entropy", entropy)
arr("ref_env_clip", env_clip)
arr("ref_env_tanh", env_tanh)
arr("ref_kl", kl)
