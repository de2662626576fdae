/* test_loss.c: the V-trace actor-critic loss against numpy (values and
 * finite-difference gradients in tests/golden/loss_golden.h from
 * tests/golden/loss_ref.py), against finite differences taken here, and on
 * special cases and bad arguments. */
#include "seed/loss.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loss_golden.h"
#include "seed/rng.h"
#include "seed/vtrace.h"
#include "tap.h"

#define NGOLDEN ((int)(sizeof loss_golden / sizeof loss_golden[0]))

static int close_rel(double got, double want, double rel, double abs_tol)
{
	return fabs(got - want) <= rel * fabs(want) + abs_tol;
}

static seed_loss_batch golden_batch(const struct loss_golden *g)
{
	seed_loss_batch b = {g->T,       g->B,         g->A,      g->logits,    g->blogits, g->actions,
	                     g->rewards, g->discounts, g->values, g->bootstrap, NULL};
	return b;
}

static seed_loss_config golden_config(const struct loss_golden *g)
{
	seed_loss_config c = {
	    g->baseline_cost,           g->entropy_cost, g->kl_cost, g->clip_rho, g->clip_pg_rho, g->lambda,
	    (seed_loss_reduce)g->reduce};
	return c;
}

static void t_golden_values_and_gradients(void)
{
	for (int k = 0; k < NGOLDEN; k++) {
		const struct loss_golden *g = &loss_golden[k];
		seed_loss_batch in = golden_batch(g);
		seed_loss_config cfg = golden_config(g);
		const size_t n = (size_t)g->T * (size_t)g->B, nz = n * (size_t)g->A;
		float *dz = calloc(nz, sizeof *dz), *dv = calloc(n, sizeof *dv);
		seed_loss_stats st;
		seed_err err = {{0}};
		int rc = seed_loss_vtrace(&cfg, &in, &st, dz, dv, &err);
		CHECK_MSG(rc == 0, "%s: %s", g->name, err.msg);
		const double got[] = {st.total,        st.pg_loss,    st.baseline_loss,
		                      st.entropy_loss, st.kl_loss,    st.entropy,
		                      st.kl,           st.mean_rho,   st.clipped_rho_fraction,
		                      st.mean_vs,      st.mean_value, st.mean_pg_advantage};
		static const char *names[] = {"total",        "pg_loss",    "baseline_loss",
		                              "entropy_loss", "kl_loss",    "entropy",
		                              "kl",           "mean_rho",   "clipped_rho_fraction",
		                              "mean_vs",      "mean_value", "mean_pg_advantage"};
		for (int i = 0; i < 12; i++)
			CHECK_MSG(close_rel(got[i], g->stats[i], 1e-5, 1e-7), "%s: %s = %.9g, numpy %.9g",
			          g->name, names[i], got[i], g->stats[i]);
		double worst = 0;
		for (size_t i = 0; i < nz; i++) {
			CHECK_MSG(close_rel(dz[i], g->dlogits[i], 1e-5, 1e-7),
			          "%s: dlogits[%zu] = %.9g, numpy %.9g", g->name, i, dz[i], g->dlogits[i]);
			worst = fmax(worst, fabs(dz[i] - g->dlogits[i]));
		}
		for (size_t i = 0; i < n; i++) {
			CHECK_MSG(close_rel(dv[i], g->dvalues[i], 1e-5, 1e-7),
			          "%s: dvalues[%zu] = %.9g, numpy %.9g", g->name, i, dv[i], g->dvalues[i]);
			worst = fmax(worst, fabs(dv[i] - g->dvalues[i]));
		}
		printf("# %-22s total %.9g (numpy %.9g), max gradient difference %.2g\n", g->name, st.total,
		       g->stats[0], worst);
		free(dz);
		free(dv);
	}
}

/* Gaussian policies (2A parameters a step, raw samples) against numpy with
 * scipy's normal log-density and entropy, in a workspace of exactly
 * seed_loss_workspace_size bytes. */
static void t_gaussian_golden(void)
{
	const int ng = (int)(sizeof loss_gauss_golden / sizeof loss_gauss_golden[0]);
	for (int k = 0; k < ng; k++) {
		const struct loss_gauss_golden *g = &loss_gauss_golden[k];
		seed_loss_batch in = {.T = g->T,
		                      .B = g->B,
		                      .A = g->A,
		                      .logits = g->params,
		                      .behaviour_logits = g->bparams,
		                      .rewards = g->rewards,
		                      .discounts = g->discounts,
		                      .values = g->values,
		                      .bootstrap_value = g->bootstrap,
		                      .box_actions = g->u};
		seed_loss_config cfg;
		seed_loss_config_default(&cfg);
		cfg.baseline_cost = g->baseline_cost;
		cfg.entropy_cost = g->entropy_cost;
		cfg.kl_cost = g->kl_cost;
		cfg.clip_rho = g->clip_rho;
		cfg.clip_pg_rho = g->clip_pg_rho;
		cfg.lambda = g->lambda;
		cfg.reduce = (seed_loss_reduce)g->reduce;
		const size_t n = (size_t)g->T * (size_t)g->B, nz = n * 2 * (size_t)g->A;
		float *dz = calloc(nz, sizeof *dz), *dv = calloc(n, sizeof *dv);
		void *ws = malloc(seed_loss_workspace_size(g->T, g->B, g->A));
		seed_loss_stats st;
		seed_err err = {{0}};
		CHECK_MSG(seed_loss_vtrace_ws(&cfg, &in, ws, &st, dz, dv, &err) == 0, "%s: %s", g->name,
		          err.msg);
		const double got[] = {st.total,        st.pg_loss,    st.baseline_loss,
		                      st.entropy_loss, st.kl_loss,    st.entropy,
		                      st.kl,           st.mean_rho,   st.clipped_rho_fraction,
		                      st.mean_vs,      st.mean_value, st.mean_pg_advantage};
		for (int i = 0; i < 12; i++)
			CHECK_MSG(close_rel(got[i], g->stats[i], 1e-5, 1e-7),
			          "%s: stat %d = %.9g, numpy %.9g", g->name, i, got[i], g->stats[i]);
		for (size_t i = 0; i < nz; i++)
			CHECK_MSG(close_rel(dz[i], g->dparams[i], 1e-5, 1e-7),
			          "%s: dparams[%zu] = %.9g, numpy %.9g", g->name, i, dz[i], g->dparams[i]);
		for (size_t i = 0; i < n; i++)
			CHECK_MSG(close_rel(dv[i], g->dvalues[i], 1e-5, 1e-7),
			          "%s: dvalues[%zu] = %.9g, numpy %.9g", g->name, i, dv[i], g->dvalues[i]);
		float bad[64];
		memcpy(bad, g->u, n * (size_t)g->A * sizeof *bad);
		bad[1] = INFINITY;
		in.box_actions = bad;
		CHECK(seed_loss_vtrace_ws(&cfg, &in, ws, &st, dz, dv, &err) == -EINVAL);
		CHECK_MSG(strstr(err.msg, "raw sample 1 at step t=0, sequence b=0 is not finite"), "%s",
		          err.msg);
		free(ws);
		free(dz);
		free(dv);
	}
}

/* seed_loss_vtrace_ws in a workspace of exactly
 * seed_loss_workspace_size(T, B, A) bytes, followed by a guard of marked
 * bytes: the guard stays as it was (the size covers what the loss
 * writes), and the results are those of seed_loss_vtrace, bit for bit,
 * on every golden batch. */
static void t_workspace_size_covers_the_scratch(void)
{
	enum { GUARD = 256 };
	for (int k = 0; k < NGOLDEN; k++) {
		const struct loss_golden *g = &loss_golden[k];
		seed_loss_batch in = golden_batch(g);
		seed_loss_config cfg = golden_config(g);
		const size_t n = (size_t)g->T * (size_t)g->B, nz = n * (size_t)g->A;
		const size_t ws = seed_loss_workspace_size(g->T, g->B, g->A);
		unsigned char *w = malloc(ws + GUARD);
		memset(w + ws, 0xA5, GUARD);
		float *dz = calloc(nz, sizeof *dz), *dv = calloc(n, sizeof *dv);
		float *dz2 = calloc(nz, sizeof *dz2), *dv2 = calloc(n, sizeof *dv2);
		seed_loss_stats st, st2;
		seed_err err = {{0}};
		CHECK_MSG(seed_loss_vtrace_ws(&cfg, &in, w, &st, dz, dv, &err) == 0, "%s: %s", g->name,
		          err.msg);
		CHECK(seed_loss_vtrace(&cfg, &in, &st2, dz2, dv2, &err) == 0);
		int guard_ok = 1;
		for (size_t i = 0; i < GUARD; i++)
			guard_ok &= w[ws + i] == 0xA5;
		CHECK_MSG(guard_ok, "%s: the loss wrote past seed_loss_workspace_size", g->name);
		CHECK_MSG(memcmp(&st, &st2, sizeof st) == 0 && memcmp(dz, dz2, nz * sizeof *dz) == 0 &&
		              memcmp(dv, dv2, n * sizeof *dv) == 0,
		          "%s: results differ from seed_loss_vtrace's", g->name);
		free(w);
		free(dz);
		free(dv);
		free(dz2);
		free(dv2);
	}
}

/* An independent double-precision evaluation of the loss with the V-trace
 * targets vs and advantages adv frozen, for finite differences here. */
static double loss_frozen(const seed_loss_config *c, int T, int B, int A, const double *z, const double *zb,
                          const int32_t *act, const double *v, const float *vs, const float *adv)
{
	const int n = T * B;
	double total = 0;
	for (int i = 0; i < n; i++) {
		const double *zi = z + i * A, *zbi = zb + i * A;
		double S = 0, Sb = 0, H = 0;
		for (int j = 0; j < A; j++) {
			S += exp(zi[j]);
			Sb += exp(zbi[j]);
		}
		for (int j = 0; j < A; j++) {
			double p = exp(zi[j]) / S;
			H -= p * log(p);
		}
		double logpi = zi[act[i]] - log(S), logmu = zbi[act[i]] - log(Sb);
		double e = vs[i] - v[i];
		total += -adv[i] * logpi + c->baseline_cost * 0.5 * e * e - c->entropy_cost * H +
		         c->kl_cost * (logmu - logpi);
	}
	return c->reduce == SEED_LOSS_MEAN ? total / n : total;
}

static void t_gradients_by_finite_differences(void)
{
	enum { T = 3, B = 2, A = 4, N = T * B };
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	float z[N * A], zb[N * A], r[N], d[N], v[N], boot[B], lr[N], vs[N], adv[N], dz[N * A], dv[N];
	double zd[N * A], zbd[N * A], vd[N];
	int32_t act[N];
	for (int i = 0; i < N * A; i++) {
		z[i] = (float)seed_rng_normal(&rng);
		zb[i] = z[i] + 0.5f * (float)seed_rng_normal(&rng);
		zd[i] = z[i];
		zbd[i] = zb[i];
	}
	for (int i = 0; i < N; i++) {
		act[i] = (int32_t)seed_rng_below(&rng, A);
		r[i] = (float)seed_rng_normal(&rng);
		d[i] = i == 2 ? 0.0f : 0.9f;
		v[i] = (float)seed_rng_normal(&rng);
		vd[i] = v[i];
	}
	boot[0] = 0.3f;
	boot[1] = -1.2f;
	seed_loss_config c = {0.7f, 0.2f, 0.3f, 1.0f, 1.5f, 0.8f, SEED_LOSS_MEAN};
	seed_loss_batch in = {T, B, A, z, zb, act, r, d, v, boot, NULL};
	for (int reduce = 0; reduce < 2; reduce++) {
		c.reduce = (seed_loss_reduce)reduce;
		seed_loss_stats st;
		CHECK(seed_loss_vtrace(&c, &in, &st, dz, dv, NULL) == 0);
		/* freeze the targets at the unperturbed inputs */
		for (int i = 0; i < N; i++) {
			double lp = 0, lm = 0, S = 0, Sb = 0;
			for (int j = 0; j < A; j++) {
				S += exp(zd[i * A + j]);
				Sb += exp(zbd[i * A + j]);
			}
			lp = zd[i * A + act[i]] - log(S);
			lm = zbd[i * A + act[i]] - log(Sb);
			lr[i] = (float)(lp - lm);
		}
		CHECK(seed_vtrace(T, B, lr, d, r, v, boot, c.clip_rho, c.clip_pg_rho, c.lambda, vs, adv) ==
		      0);
		CHECK_NEAR(st.total, loss_frozen(&c, T, B, A, zd, zbd, act, vd, vs, adv), 1e-6);
		const double h = 1e-5;
		for (int i = 0; i < N * A; i++) {
			const double z0 = zd[i];
			zd[i] = z0 + h;
			double up = loss_frozen(&c, T, B, A, zd, zbd, act, vd, vs, adv);
			zd[i] = z0 - h;
			double dn = loss_frozen(&c, T, B, A, zd, zbd, act, vd, vs, adv);
			zd[i] = z0;
			double fd = (up - dn) / (2 * h);
			CHECK_MSG(fabs(dz[i] - fd) <= 1e-5 * fabs(fd) + 1e-7,
			          "reduce %d dlogits[%d] %.9g fd %.9g", reduce, i, dz[i], fd);
		}
		for (int i = 0; i < N; i++) {
			const double v0 = vd[i];
			vd[i] = v0 + h;
			double up = loss_frozen(&c, T, B, A, zd, zbd, act, vd, vs, adv);
			vd[i] = v0 - h;
			double dn = loss_frozen(&c, T, B, A, zd, zbd, act, vd, vs, adv);
			vd[i] = v0;
			double fd = (up - dn) / (2 * h);
			CHECK_MSG(fabs(dv[i] - fd) <= 1e-5 * fabs(fd) + 1e-7,
			          "reduce %d dvalues[%d] %.9g fd %.9g", reduce, i, dv[i], fd);
		}
	}
}

/* The sum reduction is T*B times the mean, terms and gradients alike, and
 * the gradients are optional. */
static void t_sum_is_n_times_mean(void)
{
	const struct loss_golden *g = &loss_golden[0];
	seed_loss_batch in = golden_batch(g);
	seed_loss_config cfg = golden_config(g);
	const size_t n = (size_t)g->T * (size_t)g->B, nz = n * (size_t)g->A;
	float *dz1 = malloc(nz * sizeof *dz1), *dz2 = malloc(nz * sizeof *dz2);
	float *dv1 = malloc(n * sizeof *dv1), *dv2 = malloc(n * sizeof *dv2);
	seed_loss_stats mean, sum, bare;
	cfg.reduce = SEED_LOSS_MEAN;
	CHECK(seed_loss_vtrace(&cfg, &in, &mean, dz1, dv1, NULL) == 0);
	CHECK(seed_loss_vtrace(&cfg, &in, &bare, NULL, NULL, NULL) == 0);
	CHECK(memcmp(&mean, &bare, sizeof mean) == 0);
	cfg.reduce = SEED_LOSS_SUM;
	CHECK(seed_loss_vtrace(&cfg, &in, &sum, dz2, dv2, NULL) == 0);
	CHECK_NEAR(sum.total, mean.total * (double)n, 1e-9);
	CHECK_NEAR(sum.pg_loss, mean.pg_loss * (double)n, 1e-9);
	CHECK_NEAR(sum.entropy_loss, mean.entropy_loss * (double)n, 1e-9);
	CHECK(sum.entropy == mean.entropy && sum.mean_vs == mean.mean_vs);
	for (size_t i = 0; i < nz; i++)
		CHECK_NEAR(dz2[i], dz1[i] * (double)n, 1e-6 * fabs(dz2[i]) + 1e-9);
	for (size_t i = 0; i < n; i++)
		CHECK_NEAR(dv2[i], dv1[i] * (double)n, 1e-6 * fabs(dv2[i]) + 1e-9);
	free(dz1);
	free(dz2);
	free(dv1);
	free(dv2);
}

/* On-policy (the learner's logits are the behaviour logits): every ratio
 * pi/mu is exactly 1, so nothing counts as clipped at clip_rho = 1 and the
 * sampled KL is exactly 0, whatever the logits. */
static void t_on_policy_ratios_are_exactly_one(void)
{
	enum { T = 4, B = 8, A = 3, N = T * B };
	float z[N * A], v[N], r[N], d[N], boot[B];
	int32_t act[N];
	seed_rng rng;
	seed_rng_init(&rng, 7, 1);
	for (int i = 0; i < N * A; i++)
		z[i] = 6.0f * (float)seed_rng_double(&rng) - 3.0f;
	for (int i = 0; i < N; i++) {
		act[i] = i % A;
		v[i] = r[i] = 0.5f;
		d[i] = 0.9f;
	}
	for (int b = 0; b < B; b++)
		boot[b] = 1.0f;
	seed_loss_batch in = {T, B, A, z, z, act, r, d, v, boot, NULL};
	seed_loss_config c;
	seed_loss_config_default(&c);
	seed_loss_stats st;
	CHECK(seed_loss_vtrace(&c, &in, &st, NULL, NULL, NULL) == 0);
	CHECK_MSG(st.mean_rho == 1 && st.clipped_rho_fraction == 0 && st.kl == 0,
	          "mean_rho %.17g, clipped %.17g, kl %.17g", st.mean_rho, st.clipped_rho_fraction, st.kl);
}

/* One action: pi = mu = 1, no entropy, no policy gradient at all.  The value
 * target of a single step with discount 0 is the reward, which is how a
 * caller folds a truncated step's bootstrap: r + gamma * V(x_final). */
static void t_single_action_and_truncation_fold(void)
{
	const float z[] = {3.0f}, zb[] = {-2.0f}, v[] = {0.5f}, boot[] = {100.0f};
	const float gamma = 0.99f, v_final = 2.0f;
	const float r[] = {1.0f + gamma * v_final}, d[] = {0.0f};
	const int32_t act[] = {0};
	seed_loss_batch in = {1, 1, 1, z, zb, act, r, d, v, boot, NULL};
	seed_loss_config c;
	seed_loss_config_default(&c);
	seed_loss_stats st;
	float dz[1] = {42}, dv[1];
	CHECK(seed_loss_vtrace(&c, &in, &st, dz, dv, NULL) == 0);
	CHECK(st.entropy == 0 && st.entropy_loss == 0 && st.kl == 0);
	CHECK(st.mean_rho == 1 && st.clipped_rho_fraction == 0);
	CHECK(dz[0] == 0);
	CHECK_NEAR(st.mean_vs, 1.0 + 0.99 * 2.0, 1e-6);
	CHECK_NEAR(st.mean_pg_advantage, 1.0 + 0.99 * 2.0 - 0.5, 1e-6);
	/* baseline: 0.5 * 0.5 * (2.48)^2, gradient -0.5 * 2.48 */
	CHECK_NEAR(st.baseline_loss, 0.25 * 2.48 * 2.48, 1e-5);
	CHECK_NEAR(dv[0], -0.5 * 2.48, 1e-6);
	CHECK_NEAR(st.total, st.baseline_loss, 1e-12);
}

/* Uniform logits with A actions: entropy log A, and the defaults are
 * seed_rl's. */
static void t_defaults_and_uniform_entropy(void)
{
	seed_loss_config c;
	seed_loss_config_default(&c);
	CHECK(c.baseline_cost == 0.5f && c.entropy_cost == 0.01f && c.kl_cost == 0.0f);
	CHECK(c.clip_rho == 1.0f && c.clip_pg_rho == 1.0f && c.lambda == 1.0f && c.reduce == SEED_LOSS_MEAN);
	float z[2 * 6] = {0}, r[2] = {0}, d[2] = {0.9f, 0.9f}, v[2] = {0}, boot[1] = {0};
	const int32_t act[2] = {5, 0};
	for (int j = 0; j < 6; j++)
		z[6 + j] = 7.0f; /* a constant shift changes nothing */
	seed_loss_batch in = {2, 1, 6, z, z, act, r, d, v, boot, NULL};
	seed_loss_stats st;
	CHECK(seed_loss_vtrace(&c, &in, &st, NULL, NULL, NULL) == 0);
	CHECK_NEAR(st.entropy, log(6.0), 1e-12);
	CHECK_NEAR(st.entropy_loss, -0.01f * log(6.0), 1e-9);
	CHECK_NEAR(st.total, -0.01f * log(6.0), 1e-9);
}

static void t_errors(void)
{
	const struct loss_golden *g = &loss_golden[0];
	seed_loss_batch in = golden_batch(g);
	seed_loss_config c = golden_config(g), bad;
	seed_loss_stats st, st0;
	memset(&st0, 0x5a, sizeof st0);
	st = st0;
	float dv[12];
	for (int i = 0; i < 12; i++)
		dv[i] = 42;
	seed_err err = {{0}};

	int32_t act[12];
	memcpy(act, g->actions, sizeof act);
	act[4] = (int32_t)g->A; /* t = 1, b = 1 */
	in.actions = act;
	CHECK(seed_loss_vtrace(&c, &in, &st, NULL, dv, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "t=1") && strstr(err.msg, "b=1"), "message: %s", err.msg);
	act[4] = -1;
	CHECK(seed_loss_vtrace(&c, &in, &st, NULL, dv, NULL) == -EINVAL);
	in = golden_batch(g);

	seed_loss_batch shape = in;
	shape.A = 0;
	CHECK(seed_loss_vtrace(&c, &shape, &st, NULL, dv, &err) == -EINVAL);
	shape = in;
	shape.T = 0;
	CHECK(seed_loss_vtrace(&c, &shape, &st, NULL, dv, &err) == -EINVAL);
	shape = in;
	shape.values = NULL;
	CHECK(seed_loss_vtrace(&c, &shape, &st, NULL, dv, &err) == -EINVAL);
	CHECK(seed_loss_vtrace(NULL, &in, &st, NULL, dv, &err) == -EINVAL);
	CHECK(seed_loss_vtrace(&c, NULL, &st, NULL, dv, &err) == -EINVAL);
	CHECK(seed_loss_vtrace(&c, &in, NULL, NULL, dv, &err) == -EINVAL);

	bad = c;
	bad.baseline_cost = -1;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "baseline_cost") != NULL, "message: %s", err.msg);
	bad = c;
	bad.entropy_cost = NAN;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);
	bad = c;
	bad.kl_cost = INFINITY;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);
	bad = c;
	bad.clip_rho = NAN;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);
	bad = c;
	bad.clip_pg_rho = -1;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);
	bad = c;
	bad.lambda = 1.01f;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);
	bad = c;
	bad.reduce = (seed_loss_reduce)7;
	CHECK(seed_loss_vtrace(&bad, &in, &st, NULL, dv, &err) == -EINVAL);

	CHECK(memcmp(&st, &st0, sizeof st) == 0);
	for (int i = 0; i < 12; i++)
		CHECK(dv[i] == 42);
}

int main(void)
{
	TAP_RUN(t_golden_values_and_gradients);
	TAP_RUN(t_gaussian_golden);
	TAP_RUN(t_workspace_size_covers_the_scratch);
	TAP_RUN(t_gradients_by_finite_differences);
	TAP_RUN(t_sum_is_n_times_mean);
	TAP_RUN(t_on_policy_ratios_are_exactly_one);
	TAP_RUN(t_single_action_and_truncation_fold);
	TAP_RUN(t_defaults_and_uniform_entropy);
	TAP_RUN(t_errors);
	return tap_done();
}
