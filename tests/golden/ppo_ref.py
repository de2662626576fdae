#!/usr/bin/env python3
"""Golden values for tests/unit/rl/test_ppo.c: GAE and the PPO clipped surrogate loss in numpy.

GAE is computed here by its explicit sum, not by the backward recursion the C code runs:

    A_t = sum_{k >= t} (prod_{i=t}^{k-1} lambda d_i) delta_k,
    delta_k = r_k + d_k V(x_{k+1}) - V(x_k),  V(x_T) = bootstrap,  R_t = A_t + V(x_t)

The loss follows CleanRL's ppo.py line by line (mean over the minibatch):

    ratio = exp(logp(a) - logmu(a))
    adv   = (A - A.mean()) / (A.std(ddof=1) + 1e-8)        when normalised
    pg    = max(-adv ratio, -adv clip(ratio, 1-c, 1+c)).mean()
    v     = 0.5 max((v - R)^2, (v_old + clip(v - v_old, -vc, vc) - R)^2).mean()   (clip_value;
            else 0.5 (v - R)^2 .mean())
    total = pg + value_cost v - entropy_cost H.mean()

The expected gradients are central finite differences of that float64 loss with A, R and v_old
constant: no derivative is written here.  Each case is checked to keep every ratio and value
away from the kinks of the clips, where a finite difference would straddle two branches.

The Gaussian cases (a policy over A real numbers: 2A parameters per row, A means then A log
standard deviations, and the raw samples u the actor drew) take log pi(u) and the entropy from
scipy.stats.norm (logpdf and entropy), not from a formula written here.

Usage: python3 tests/golden/ppo_ref.py > tests/golden/ppo_golden.h
"""
import os
import sys

import numpy as np
from scipy.stats import norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtrace_ref import carray, cfloat  # noqa: E402


def log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def gae_explicit(rewards, discounts, values, bootstrap, lam):
    T, B = rewards.shape
    r = rewards.astype(np.float64)
    d = discounts.astype(np.float64)
    v = values.astype(np.float64)
    nxt = np.concatenate([v[1:], bootstrap.astype(np.float64)[None]], axis=0)
    delta = r + d * nxt - v
    adv = np.zeros((T, B))
    for t in range(T):
        for b in range(B):
            acc, coef = 0.0, 1.0
            for k in range(t, T):
                acc += coef * delta[k, b]
                coef *= lam * d[k, b]
            adv[t, b] = acc
    return adv, adv + v


def loss_terms(cfg, logits, blogits, actions, adv_raw, returns, old_values, values):
    logp = log_softmax(logits)
    logmu = log_softmax(blogits)
    lp = np.take_along_axis(logp, actions[:, None], axis=1)[:, 0]
    lm = np.take_along_axis(logmu, actions[:, None], axis=1)[:, 0]
    logratio = lp - lm
    ratio = np.exp(logratio)
    adv = adv_raw.copy()
    if cfg["normalize_advantages"]:
        adv = (adv - adv.mean()) / (adv.std(ddof=1) + 1e-8) if len(adv) > 1 else np.zeros_like(adv)
    c = cfg["clip"]
    pg = np.maximum(-adv * ratio, -adv * np.clip(ratio, 1 - c, 1 + c)).mean()
    u = (values - returns) ** 2
    if cfg["clip_value"]:
        vc = cfg["value_clip"]
        w = (old_values + np.clip(values - old_values, -vc, vc) - returns) ** 2
        vl = 0.5 * np.maximum(u, w).mean()
    else:
        vl = 0.5 * u.mean()
    p = np.exp(logp)
    ent = -(p * logp).sum(axis=1)
    value_loss = cfg["value_cost"] * vl
    entropy_loss = -cfg["entropy_cost"] * ent.mean()
    return dict(total=pg + value_loss + entropy_loss, pg_loss=pg, value_loss=value_loss,
                entropy_loss=entropy_loss, entropy=ent.mean(),
                approx_kl=((ratio - 1) - logratio).mean(),
                clip_fraction=(np.abs(ratio - 1) > c).mean(), mean_ratio=ratio.mean(),
                mean_value=values.mean(), mean_return=returns.mean(), mean_advantage=adv_raw.mean())


def gauss_terms(cfg, params, bparams, u, adv_raw, returns, old_values, values):
    """loss_terms for a diagonal Gaussian policy, log-probabilities by scipy."""
    A = u.shape[1]
    lp = norm.logpdf(u, loc=params[:, :A], scale=np.exp(params[:, A:])).sum(axis=1)
    lm = norm.logpdf(u, loc=bparams[:, :A], scale=np.exp(bparams[:, A:])).sum(axis=1)
    ent = norm.entropy(loc=params[:, :A], scale=np.exp(params[:, A:])).sum(axis=1)
    return policy_terms(cfg, lp, lm, ent, adv_raw, returns, old_values, values)


def policy_terms(cfg, lp, lm, ent, adv_raw, returns, old_values, values):
    logratio = lp - lm
    ratio = np.exp(logratio)
    adv = adv_raw.copy()
    if cfg["normalize_advantages"]:
        adv = (adv - adv.mean()) / (adv.std(ddof=1) + 1e-8) if len(adv) > 1 else np.zeros_like(adv)
    c = cfg["clip"]
    pg = np.maximum(-adv * ratio, -adv * np.clip(ratio, 1 - c, 1 + c)).mean()
    u = (values - returns) ** 2
    if cfg["clip_value"]:
        vc = cfg["value_clip"]
        w = (old_values + np.clip(values - old_values, -vc, vc) - returns) ** 2
        vl = 0.5 * np.maximum(u, w).mean()
    else:
        vl = 0.5 * u.mean()
    value_loss = cfg["value_cost"] * vl
    entropy_loss = -cfg["entropy_cost"] * ent.mean()
    return dict(total=pg + value_loss + entropy_loss, pg_loss=pg, value_loss=value_loss,
                entropy_loss=entropy_loss, entropy=ent.mean(),
                approx_kl=((ratio - 1) - logratio).mean(),
                clip_fraction=(np.abs(ratio - 1) > c).mean(), mean_ratio=ratio.mean(),
                mean_value=values.mean(), mean_return=returns.mean(), mean_advantage=adv_raw.mean(),
                ratio=ratio)


def make_gauss_case(rng, name, N, A, cfg):
    """N transitions of a Gaussian policy over A numbers, as the learner's minibatch."""
    f32 = np.float32
    bparams = np.concatenate([rng.standard_normal((N, A)), rng.uniform(-1.0, 0.3, (N, A))], axis=1)
    bparams = bparams.astype(f32)
    params = (bparams + rng.standard_normal((N, 2 * A)) * 0.06).astype(f32)
    # Raw samples from the behaviour policy, some far out (as a clipped action's sample can be).
    u = (bparams[:, :A] + np.exp(bparams[:, A:]) * rng.standard_normal((N, A)) * 1.5).astype(f32)
    adv = rng.standard_normal(N).astype(f32)
    ret = rng.standard_normal(N).astype(f32)
    old = rng.standard_normal(N).astype(f32)
    values = (old + rng.standard_normal(N) * 0.3).astype(f32)
    P, Pb, U = params.astype(np.float64), bparams.astype(np.float64), u.astype(np.float64)
    A64, R64, O64, V = (x.astype(np.float64) for x in (adv, ret, old, values))
    terms = gauss_terms(cfg, P, Pb, U, A64, R64, O64, V)
    c, vc = cfg["clip"], cfg["value_clip"]
    ratio = terms.pop("ratio")
    assert np.all(np.abs(ratio - (1 - c)) > 1e-3) and np.all(np.abs(ratio - (1 + c)) > 1e-3), name
    if cfg["clip_value"]:
        assert np.all(np.abs(np.abs(V - O64) - vc) > 1e-3), name
    h = 1e-6
    dparams = np.empty_like(P)
    for idx in np.ndindex(P.shape):
        up, dn = P.copy(), P.copy()
        up[idx] += h
        dn[idx] -= h
        dparams[idx] = (gauss_terms(cfg, up, Pb, U, A64, R64, O64, V)["total"]
                        - gauss_terms(cfg, dn, Pb, U, A64, R64, O64, V)["total"]) / (2 * h)
    dvalues = np.empty_like(V)
    for idx in np.ndindex(V.shape):
        up, dn = V.copy(), V.copy()
        up[idx] += h
        dn[idx] -= h
        dvalues[idx] = (gauss_terms(cfg, P, Pb, U, A64, R64, O64, up)["total"]
                        - gauss_terms(cfg, P, Pb, U, A64, R64, O64, dn)["total"]) / (2 * h)
    sys.stderr.write("%s: %d of %d ratios outside the clip range\n"
                     % (name, int(np.sum(np.abs(ratio - 1) > c)), N))
    return dict(name=name, N=N, A=A, cfg=cfg, params=params, bparams=bparams, u=u, adv=adv, ret=ret,
                old=old, values=values, terms=terms, dparams=dparams, dvalues=dvalues)


def make_case(rng, name, T, B, A, cfg, spread=0.6, vspread=0.3, gamma=0.99, p_end=0.2):
    f32 = np.float32
    rewards = rng.standard_normal((T, B)).astype(f32)
    discounts = np.where(rng.random((T, B)) < p_end, 0.0, gamma).astype(f32)
    old_values = rng.standard_normal((T, B)).astype(f32)
    bootstrap = rng.standard_normal(B).astype(f32)
    adv, ret = gae_explicit(rewards, discounts, old_values, bootstrap, cfg["lambda"])
    N = T * B
    # The minibatch is the whole batch, rows flattened time-major (t*B + b).
    blogits = (rng.standard_normal((N, A)) * 1.5).astype(f32)
    logits = (blogits + rng.standard_normal((N, A)) * spread).astype(f32)
    actions = rng.integers(0, A, size=N).astype(np.int32)
    values = (old_values.ravel() + rng.standard_normal(N) * vspread).astype(f32)
    adv32 = adv.astype(f32).ravel()
    ret32 = ret.astype(f32).ravel()
    ov = old_values.ravel()

    L = logits.astype(np.float64)
    Lb = blogits.astype(np.float64)
    V = values.astype(np.float64)
    A64, R64, O64 = adv32.astype(np.float64), ret32.astype(np.float64), ov.astype(np.float64)
    terms = loss_terms(cfg, L, Lb, actions, A64, R64, O64, V)

    # Stay away from the kinks (1e-3 is a thousand finite-difference steps).
    lp = np.take_along_axis(log_softmax(L), actions[:, None], axis=1)[:, 0]
    lm = np.take_along_axis(log_softmax(Lb), actions[:, None], axis=1)[:, 0]
    ratio = np.exp(lp - lm)
    c, vc = cfg["clip"], cfg["value_clip"]
    assert np.all(np.abs(ratio - (1 - c)) > 1e-3) and np.all(np.abs(ratio - (1 + c)) > 1e-3), name
    if cfg["clip_value"]:
        dv = V - O64
        assert np.all(np.abs(np.abs(dv) - vc) > 1e-3), name
        u = (V - R64) ** 2
        w = (O64 + np.clip(dv, -vc, vc) - R64) ** 2
        assert np.all((np.abs(dv) < vc) | (np.abs(u - w) > 1e-6)), name

    h = 1e-6
    dlogits = np.empty_like(L)
    for idx in np.ndindex(L.shape):
        up, dn = L.copy(), L.copy()
        up[idx] += h
        dn[idx] -= h
        dlogits[idx] = (loss_terms(cfg, up, Lb, actions, A64, R64, O64, V)["total"]
                        - loss_terms(cfg, dn, Lb, actions, A64, R64, O64, V)["total"]) / (2 * h)
    dvalues = np.empty_like(V)
    for idx in np.ndindex(V.shape):
        up, dn = V.copy(), V.copy()
        up[idx] += h
        dn[idx] -= h
        dvalues[idx] = (loss_terms(cfg, L, Lb, actions, A64, R64, O64, up)["total"]
                        - loss_terms(cfg, L, Lb, actions, A64, R64, O64, dn)["total"]) / (2 * h)
    # How many rows take the clipped branches (reported on stderr: a case where none does tests
    # less than it seems to).
    a = A64
    if cfg["normalize_advantages"] and N > 1:
        a = (a - a.mean()) / (a.std(ddof=1) + 1e-8)
    pg_cut = int(np.sum(-a * np.clip(ratio, 1 - c, 1 + c) > -a * ratio))
    v_cut = 0
    if cfg["clip_value"]:
        v_cut = int(np.sum((O64 + np.clip(V - O64, -vc, vc) - R64) ** 2 > (V - R64) ** 2))
    sys.stderr.write("%s: %d of %d rows with the ratio's clipped branch, %d with the value's\n"
                     % (name, pg_cut, N, v_cut))
    return dict(name=name, T=T, B=B, A=A, cfg=cfg, rewards=rewards, discounts=discounts,
                old_values=old_values, bootstrap=bootstrap, adv=adv, ret=ret, logits=logits,
                blogits=blogits, actions=actions, values=values, terms=terms, dlogits=dlogits,
                dvalues=dvalues)


STATS = ("total", "pg_loss", "value_loss", "entropy_loss", "entropy", "approx_kl", "clip_fraction",
         "mean_ratio", "mean_value", "mean_return", "mean_advantage")
CFG = ("clip", "value_clip", "value_cost", "entropy_cost", "lambda")


def main():
    rng = np.random.default_rng(20170720)  # the PPO paper's arXiv date
    cleanrl = dict(clip=0.2, value_clip=0.2, value_cost=0.5, entropy_cost=0.01, normalize_advantages=1,
                   clip_value=1)
    cleanrl["lambda"] = 0.95
    plain = dict(clip=0.3, value_clip=0.5, value_cost=1.0, entropy_cost=0.05, normalize_advantages=0,
                 clip_value=0)
    plain["lambda"] = 1.0
    tight = dict(cleanrl, clip=0.1, value_clip=0.1, entropy_cost=0.2)
    tight["lambda"] = 0.0
    cases = [
        make_case(rng, "cleanrl_defaults", 4, 3, 3, cleanrl),
        make_case(rng, "no_normalisation_no_value_clip", 3, 2, 5, plain),
        make_case(rng, "tight_clips_lambda_0", 5, 2, 4, tight, spread=0.9, vspread=0.4),
        make_case(rng, "one_row", 1, 1, 2, cleanrl),
        make_case(rng, "atari_like_actions", 2, 3, 18, dict(cleanrl, entropy_cost=0.1), spread=0.4),
    ]
    out = sys.stdout
    out.write("/* tests/golden/ppo_golden.h: generated by tests/golden/ppo_ref.py; do not edit.\n"
              " * GAE by its explicit sum and CleanRL's PPO loss (numpy float64), gradients by\n"
              " * central finite differences with advantages, returns and old values fixed. */\n")
    out.write("#include <stdint.h>\n\n")
    for k, c in enumerate(cases):
        for key in ("rewards", "discounts", "old_values", "bootstrap", "logits", "blogits", "values"):
            out.write(carray("float", "pp%d_%s" % (k, key), c[key], cfloat))
        out.write(carray("int32_t", "pp%d_actions" % k, c["actions"], lambda x: "%d" % x))
        for key in ("adv", "ret", "dlogits", "dvalues"):
            out.write(carray("double", "pp%d_%s" % (k, key), c[key], lambda x: "%.12g" % x))
        out.write(carray("double", "pp%d_stats" % k, [c["terms"][s] for s in STATS], lambda x: "%.17g" % x))
        out.write("\n")
    out.write("/* stats[] holds, in order: %s */\n" % ", ".join(STATS))
    out.write("struct ppo_golden {\n\tconst char *name;\n\tint T, B, A;\n"
              "\tfloat %s;\n\tint normalize_advantages, clip_value;\n" % ", ".join(CFG))
    out.write("\tconst float *rewards, *discounts, *old_values, *bootstrap, *logits, *blogits, *values;\n"
              "\tconst int32_t *actions;\n\tconst double *adv, *ret, *dlogits, *dvalues, *stats;\n};\n\n")
    out.write("static const struct ppo_golden ppo_golden[] = {\n")
    for k, c in enumerate(cases):
        cfgs = ", ".join(cfloat(c["cfg"][x]) for x in CFG)
        out.write('\t{"%s", %d, %d, %d, %s, %d, %d,\n' % (c["name"], c["T"], c["B"], c["A"], cfgs,
                                                         c["cfg"]["normalize_advantages"],
                                                         c["cfg"]["clip_value"]))
        out.write("\t pp{0}_rewards, pp{0}_discounts, pp{0}_old_values, pp{0}_bootstrap, pp{0}_logits,\n"
                  "\t pp{0}_blogits, pp{0}_values, pp{0}_actions, pp{0}_adv, pp{0}_ret, pp{0}_dlogits,\n"
                  "\t pp{0}_dvalues, pp{0}_stats}},\n".format(k))
    out.write("};\n\n")

    # Gaussian policies, from a generator of their own so that the cases above stay as they were.
    grng = np.random.default_rng(20200601)
    gcases = [
        make_gauss_case(grng, "gaussian_cleanrl", 12, 3, cleanrl),
        make_gauss_case(grng, "gaussian_plain", 8, 1, plain),
        make_gauss_case(grng, "gaussian_wide", 6, 6, dict(cleanrl, entropy_cost=0.05)),
    ]
    for k, c in enumerate(gcases):
        for key in ("params", "bparams", "u", "adv", "ret", "old", "values"):
            out.write(carray("float", "pg%d_%s" % (k, key), c[key], cfloat))
        for key in ("dparams", "dvalues"):
            out.write(carray("double", "pg%d_%s" % (k, key), c[key], lambda x: "%.12g" % x))
        out.write(carray("double", "pg%d_stats" % k, [c["terms"][s] for s in STATS], lambda x: "%.17g" % x))
        out.write("\n")
    out.write("struct ppo_gauss_golden {\n\tconst char *name;\n\tint N, A;\n"
              "\tfloat %s;\n\tint normalize_advantages, clip_value;\n" % ", ".join(CFG))
    out.write("\tconst float *params, *bparams, *u, *adv, *ret, *old, *values;\n"
              "\tconst double *dparams, *dvalues, *stats;\n};\n\n")
    out.write("static const struct ppo_gauss_golden ppo_gauss_golden[] = {\n")
    for k, c in enumerate(gcases):
        cfgs = ", ".join(cfloat(c["cfg"][x]) for x in CFG)
        out.write('\t{"%s", %d, %d, %s, %d, %d,\n' % (c["name"], c["N"], c["A"], cfgs,
                                                     c["cfg"]["normalize_advantages"], c["cfg"]["clip_value"]))
        out.write("\t pg{0}_params, pg{0}_bparams, pg{0}_u, pg{0}_adv, pg{0}_ret, pg{0}_old, pg{0}_values,\n"
                  "\t pg{0}_dparams, pg{0}_dvalues, pg{0}_stats}},\n".format(k))
    out.write("};\n")


if __name__ == "__main__":
    main()
