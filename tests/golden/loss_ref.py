#!/usr/bin/env python3
"""Golden values for tests/unit/rl/test_loss.c: the IMPALA/SEED V-trace loss in numpy.

The loss follows seed_rl's vtrace learner (mean reduction) and scalable_agent
(sum reduction):

    total = -R(A_t log pi(a_t|x_t)) + baseline_cost * 0.5 * R((v_t - V(x_t))^2)
            - entropy_cost * R(H(pi(.|x_t))) + kl_cost * R(log mu(a_t|x_t) - log pi(a_t|x_t))

with v_t, A_t from V-trace (tests/golden/vtrace_ref.py's explicit sum formula)
treated as constants.  The expected gradients are central finite differences
of that float64 loss with v_t and A_t frozen at their values for the
unperturbed inputs: no analytic derivative is written here, so the C code's
hand-derived gradients are checked against something independent.

The Gaussian cases (2A parameters per step, A means then A log standard
deviations, and the actor's raw samples u) take log pi(u) and the entropy from
scipy.stats.norm, not from a formula written here.

Usage: python3 tests/golden/loss_ref.py > tests/golden/loss_golden.h
"""
import math
import os
import sys

import numpy as np
from scipy.stats import norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtrace_ref import carray, cfloat, vtrace_explicit  # noqa: E402


def log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def loss_terms(cfg, logits, blogits, actions, values, vs, adv):
    """The loss with vs and adv given (frozen); everything float64."""
    logp = log_softmax(logits)
    logmu = log_softmax(blogits)
    lp_a = np.take_along_axis(logp, actions[..., None], axis=-1)[..., 0]
    lm_a = np.take_along_axis(logmu, actions[..., None], axis=-1)[..., 0]
    red = np.mean if cfg["reduce"] == 0 else np.sum
    p = np.exp(logp)
    ent = -(p * logp).sum(axis=-1)
    pg = -red(adv * lp_a)
    base = cfg["baseline_cost"] * 0.5 * red((vs - values) ** 2)
    ent_loss = -cfg["entropy_cost"] * red(ent)
    kl_loss = cfg["kl_cost"] * red(lm_a - lp_a)
    return dict(total=pg + base + ent_loss + kl_loss, pg_loss=pg, baseline_loss=base,
                entropy_loss=ent_loss, kl_loss=kl_loss, entropy=ent.mean(), kl=(lm_a - lp_a).mean())


def gauss_logp(params, u):
    A = u.shape[-1]
    return norm.logpdf(u, loc=params[..., :A], scale=np.exp(params[..., A:])).sum(axis=-1)


def gauss_terms(cfg, params, bparams, u, values, vs, adv):
    """loss_terms for a diagonal Gaussian policy with vs and adv frozen."""
    A = u.shape[-1]
    lp, lm = gauss_logp(params, u), gauss_logp(bparams, u)
    ent = norm.entropy(loc=params[..., :A], scale=np.exp(params[..., A:])).sum(axis=-1)
    red = np.mean if cfg["reduce"] == 0 else np.sum
    pg = -red(adv * lp)
    base = cfg["baseline_cost"] * 0.5 * red((vs - values) ** 2)
    ent_loss = -cfg["entropy_cost"] * red(ent)
    kl_loss = cfg["kl_cost"] * red(lm - lp)
    return dict(total=pg + base + ent_loss + kl_loss, pg_loss=pg, baseline_loss=base,
                entropy_loss=ent_loss, kl_loss=kl_loss, entropy=ent.mean(), kl=(lm - lp).mean())


def make_gauss_case(rng, name, T, B, A, cfg, p_end=0.25, gamma=0.99):
    f32 = np.float32
    bparams = np.concatenate([rng.standard_normal((T, B, A)), rng.uniform(-1.0, 0.3, (T, B, A))], axis=-1)
    bparams = bparams.astype(f32)
    params = (bparams + rng.standard_normal((T, B, 2 * A)) * 0.2).astype(f32)
    u = (bparams[..., :A] + np.exp(bparams[..., A:]) * rng.standard_normal((T, B, A)) * 1.5).astype(f32)
    rewards = rng.standard_normal((T, B)).astype(f32)
    discounts = np.where(rng.random((T, B)) < p_end, 0.0, gamma).astype(f32)
    values = rng.standard_normal((T, B)).astype(f32)
    bootstrap = rng.standard_normal(B).astype(f32)
    P, Pb, U, V = (x.astype(np.float64) for x in (params, bparams, u, values))
    log_rhos = gauss_logp(P, U) - gauss_logp(Pb, U)
    vs, adv = vtrace_explicit(log_rhos, discounts, rewards, V, bootstrap, cfg["clip_rho"],
                              cfg["clip_pg_rho"], cfg["lambda"])
    terms = gauss_terms(cfg, P, Pb, U, V, vs, adv)
    rho = np.exp(log_rhos)
    terms.update(mean_rho=rho.mean(), clipped_rho_fraction=(rho > cfg["clip_rho"]).mean(),
                 mean_vs=vs.mean(), mean_value=V.mean(), mean_pg_advantage=adv.mean())
    h = 1e-6
    dparams = np.empty_like(P)
    for idx in np.ndindex(P.shape):
        up, dn = P.copy(), P.copy()
        up[idx] += h
        dn[idx] -= h
        dparams[idx] = (gauss_terms(cfg, up, Pb, U, V, vs, adv)["total"]
                        - gauss_terms(cfg, dn, Pb, U, V, vs, adv)["total"]) / (2 * h)
    dvalues = np.empty_like(V)
    for idx in np.ndindex(V.shape):
        up, dn = V.copy(), V.copy()
        up[idx] += h
        dn[idx] -= h
        dvalues[idx] = (gauss_terms(cfg, P, Pb, U, up, vs, adv)["total"]
                        - gauss_terms(cfg, P, Pb, U, dn, vs, adv)["total"]) / (2 * h)
    return dict(name=name, T=T, B=B, A=A, cfg=cfg, params=params, bparams=bparams, u=u, rewards=rewards,
                discounts=discounts, values=values, bootstrap=bootstrap, terms=terms, dparams=dparams,
                dvalues=dvalues)


def make_case(rng, name, T, B, A, cfg, p_end=0.25, gamma=0.99):
    f32 = np.float32
    logits = (rng.standard_normal((T, B, A)) * 1.5).astype(f32)
    blogits = (logits + rng.standard_normal((T, B, A)) * 0.8).astype(f32)
    actions = rng.integers(0, A, size=(T, B)).astype(np.int32)
    rewards = rng.standard_normal((T, B)).astype(f32)
    discounts = np.where(rng.random((T, B)) < p_end, 0.0, gamma).astype(f32)
    values = rng.standard_normal((T, B)).astype(f32)
    bootstrap = rng.standard_normal(B).astype(f32)

    L = logits.astype(np.float64)
    Lb = blogits.astype(np.float64)
    V = values.astype(np.float64)
    lp = np.take_along_axis(log_softmax(L), actions[..., None], axis=-1)[..., 0]
    lm = np.take_along_axis(log_softmax(Lb), actions[..., None], axis=-1)[..., 0]
    log_rhos = lp - lm
    vs, adv = vtrace_explicit(log_rhos, discounts, rewards, V, bootstrap, cfg["clip_rho"],
                              cfg["clip_pg_rho"], cfg["lambda"])
    terms = loss_terms(cfg, L, Lb, actions, V, vs, adv)
    rho = np.exp(log_rhos)
    terms.update(mean_rho=rho.mean(), clipped_rho_fraction=(rho > cfg["clip_rho"]).mean(),
                 mean_vs=vs.mean(), mean_value=V.mean(), mean_pg_advantage=adv.mean())

    h = 1e-6
    dlogits = np.empty_like(L)
    for idx in np.ndindex(L.shape):
        up, dn = L.copy(), L.copy()
        up[idx] += h
        dn[idx] -= h
        dlogits[idx] = (loss_terms(cfg, up, Lb, actions, V, vs, adv)["total"]
                        - loss_terms(cfg, dn, Lb, actions, V, vs, adv)["total"]) / (2 * h)
    dvalues = np.empty_like(V)
    for idx in np.ndindex(V.shape):
        up, dn = V.copy(), V.copy()
        up[idx] += h
        dn[idx] -= h
        dvalues[idx] = (loss_terms(cfg, L, Lb, actions, up, vs, adv)["total"]
                        - loss_terms(cfg, L, Lb, actions, dn, vs, adv)["total"]) / (2 * h)
    return dict(name=name, T=T, B=B, A=A, cfg=cfg, logits=logits, blogits=blogits, actions=actions,
                rewards=rewards, discounts=discounts, values=values, bootstrap=bootstrap,
                terms=terms, dlogits=dlogits, dvalues=dvalues)


STATS = ("total", "pg_loss", "baseline_loss", "entropy_loss", "kl_loss", "entropy", "kl", "mean_rho",
         "clipped_rho_fraction", "mean_vs", "mean_value", "mean_pg_advantage")
CFG = ("baseline_cost", "entropy_cost", "kl_cost", "clip_rho", "clip_pg_rho", "lambda")


def main():
    rng = np.random.default_rng(20200215)  # the SEED RL paper's arXiv date
    default = dict(baseline_cost=0.5, entropy_cost=0.01, kl_cost=0.0, clip_rho=1.0, clip_pg_rho=1.0,
                   reduce=0)
    default["lambda"] = 1.0
    summed = dict(baseline_cost=0.25, entropy_cost=0.05, kl_cost=0.1, clip_rho=math.inf, clip_pg_rho=2.0,
                  reduce=1)
    summed["lambda"] = 0.9
    strong = dict(default, entropy_cost=0.5, baseline_cost=1.0, clip_rho=0.8)
    cases = [
        make_case(rng, "seed_defaults", 4, 3, 5, default),
        make_case(rng, "summed_kl_lambda", 3, 2, 4, summed),
        make_case(rng, "one_step_two_actions", 1, 1, 2, strong),
        make_case(rng, "atari_like_actions", 5, 2, 18, dict(strong, kl_cost=0.2), p_end=0.1),
    ]
    out = sys.stdout
    out.write("/* tests/golden/loss_golden.h: generated by tests/golden/loss_ref.py; do not edit.\n"
              " * V-trace actor-critic loss (numpy float64) and its gradients by central\n"
              " * finite differences with the V-trace targets held fixed. */\n")
    out.write("#include <math.h>\n#include <stdint.h>\n\n")
    for k, c in enumerate(cases):
        for key in ("logits", "blogits", "rewards", "discounts", "values", "bootstrap"):
            out.write(carray("float", "ls%d_%s" % (k, key), c[key], cfloat))
        out.write(carray("int32_t", "ls%d_actions" % k, c["actions"], lambda x: "%d" % x))
        out.write(carray("double", "ls%d_dlogits" % k, c["dlogits"], lambda x: "%.12g" % x))
        out.write(carray("double", "ls%d_dvalues" % k, c["dvalues"], lambda x: "%.12g" % x))
        out.write(carray("double", "ls%d_stats" % k, [c["terms"][s] for s in STATS], lambda x: "%.17g" % x))
        out.write("\n")
    out.write("/* stats[] holds, in order: %s */\n" % ", ".join(STATS))
    out.write("struct loss_golden {\n\tconst char *name;\n\tint T, B, A;\n"
              "\tfloat %s;\n\tint reduce;\n" % ", ".join(CFG))
    out.write("\tconst float *logits, *blogits, *rewards, *discounts, *values, *bootstrap;\n"
              "\tconst int32_t *actions;\n\tconst double *dlogits, *dvalues, *stats;\n};\n\n")
    out.write("static const struct loss_golden loss_golden[] = {\n")
    for k, c in enumerate(cases):
        cfgs = ", ".join(cfloat(c["cfg"][x]) for x in CFG)
        out.write('\t{"%s", %d, %d, %d, %s, %d,\n' % (c["name"], c["T"], c["B"], c["A"], cfgs, c["cfg"]["reduce"]))
        out.write("\t ls{0}_logits, ls{0}_blogits, ls{0}_rewards, ls{0}_discounts, ls{0}_values, ls{0}_bootstrap,\n"
                  "\t ls{0}_actions, ls{0}_dlogits, ls{0}_dvalues, ls{0}_stats}},\n".format(k))
    out.write("};\n\n")

    # Gaussian policies, from a generator of their own so that the cases above stay as they were.
    grng = np.random.default_rng(20200601)
    gcases = [
        make_gauss_case(grng, "gaussian_defaults", 4, 3, 2, default),
        make_gauss_case(grng, "gaussian_summed_kl", 3, 2, 4, summed),
    ]
    for k, c in enumerate(gcases):
        for key in ("params", "bparams", "u", "rewards", "discounts", "values", "bootstrap"):
            out.write(carray("float", "lg%d_%s" % (k, key), c[key], cfloat))
        out.write(carray("double", "lg%d_dparams" % k, c["dparams"], lambda x: "%.12g" % x))
        out.write(carray("double", "lg%d_dvalues" % k, c["dvalues"], lambda x: "%.12g" % x))
        out.write(carray("double", "lg%d_stats" % k, [c["terms"][s] for s in STATS], lambda x: "%.17g" % x))
        out.write("\n")
    out.write("struct loss_gauss_golden {\n\tconst char *name;\n\tint T, B, A;\n"
              "\tfloat %s;\n\tint reduce;\n" % ", ".join(CFG))
    out.write("\tconst float *params, *bparams, *u, *rewards, *discounts, *values, *bootstrap;\n"
              "\tconst double *dparams, *dvalues, *stats;\n};\n\n")
    out.write("static const struct loss_gauss_golden loss_gauss_golden[] = {\n")
    for k, c in enumerate(gcases):
        cfgs = ", ".join(cfloat(c["cfg"][x]) for x in CFG)
        out.write('\t{"%s", %d, %d, %d, %s, %d,\n' % (c["name"], c["T"], c["B"], c["A"], cfgs, c["cfg"]["reduce"]))
        out.write("\t lg{0}_params, lg{0}_bparams, lg{0}_u, lg{0}_rewards, lg{0}_discounts, lg{0}_values,\n"
                  "\t lg{0}_bootstrap, lg{0}_dparams, lg{0}_dvalues, lg{0}_stats}},\n".format(k))
    out.write("};\n")


if __name__ == "__main__":
    main()
