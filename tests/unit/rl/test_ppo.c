/* test_ppo.c: PPO (seed/ppo.h) and the learner's PPO update.
 *
 * GAE and the loss against numpy (tests/golden/ppo_golden.h from
 * tests/golden/ppo_ref.py: GAE by its explicit sum, the loss as CleanRL's
 * ppo.py writes it, gradients by finite differences there); gradients
 * against finite differences taken here too; Gaussian policies (scipy's
 * log-density and entropy there); special cases worked by
 * hand; bad arguments.  Then the learner with algorithm ppo on synthetic
 * unroll frames: one version and epochs * minibatches optimizer steps an
 * update, the policy and the value moving where the rewards say, the loss
 * falling over repeated updates of one batch, no allocation in an update,
 * and the models it refuses.
 */
#include "seed/ppo.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/checkpoint.h"
#include "seed/config.h"
#include "seed/frame.h"
#include "seed/learner.h"
#include "seed/nn.h"
#include "seed/rng.h"
#include "alloc_count.h"
#include "ppo_golden.h"
#include "tap.h"
#include "tmpdir.h"

#define NGOLDEN ((int)(sizeof ppo_golden / sizeof ppo_golden[0]))

static int close_rel(double got, double want, double rel, double abs_tol)
{
	return fabs(got - want) <= rel * fabs(want) + abs_tol;
}

static seed_ppo_config golden_config(const struct ppo_golden *g)
{
	seed_ppo_config c;
	seed_ppo_config_default(&c);
	c.clip = g->clip;
	c.value_clip = g->value_clip;
	c.value_cost = g->value_cost;
	c.entropy_cost = g->entropy_cost;
	c.lambda = g->lambda;
	c.normalize_advantages = g->normalize_advantages;
	c.clip_value = g->clip_value;
	return c;
}

/* ---- GAE ------------------------------------------------------------------- */

static void t_gae_golden(void)
{
	for (int k = 0; k < NGOLDEN; k++) {
		const struct ppo_golden *g = &ppo_golden[k];
		int n = g->T * g->B;
		float *adv = calloc((size_t)n, sizeof *adv), *ret = calloc((size_t)n, sizeof *ret);
		int rc = seed_ppo_gae(g->T, g->B, g->rewards, g->discounts, g->old_values, g->bootstrap,
		                      g->lambda, adv, ret);
		CHECK_MSG(rc == 0, "%s: rc %d", g->name, rc);
		for (int i = 0; i < n; i++) {
			CHECK_MSG(close_rel(adv[i], g->adv[i], 1e-6, 1e-6), "%s: adv[%d] = %.9g, numpy %.9g",
			          g->name, i, (double)adv[i], g->adv[i]);
			CHECK_MSG(close_rel(ret[i], g->ret[i], 1e-6, 1e-6), "%s: ret[%d] = %.9g, numpy %.9g",
			          g->name, i, (double)ret[i], g->ret[i]);
		}
		free(adv);
		free(ret);
	}
}

/* Worked by hand: one sequence of three steps, gamma 0.5, lambda 0.5, the
 * second step terminal (d = 0), values 1, 2, 3, bootstrap 4, rewards 1.
 *   delta_2 = 1 + 0.5*4 - 3 = 0,    A_2 = 0
 *   delta_1 = 1 + 0     - 2 = -1,   A_1 = -1          (d_1 = 0 cuts the trace)
 *   delta_0 = 1 + 0.5*2 - 1 = 1,    A_0 = 1 + 0.25*(-1) = 0.75
 * returns A + V: 1.75, 1, 3.  With lambda 0, A is delta: 1, -1, 0. */
static void t_gae_by_hand(void)
{
	const float r[] = {1, 1, 1}, d[] = {0.5f, 0, 0.5f}, v[] = {1, 2, 3}, boot[] = {4};
	float adv[3], ret[3];
	CHECK(seed_ppo_gae(3, 1, r, d, v, boot, 0.5f, adv, ret) == 0);
	CHECK(adv[0] == 0.75f && adv[1] == -1 && adv[2] == 0);
	CHECK(ret[0] == 1.75f && ret[1] == 1 && ret[2] == 3);
	CHECK(seed_ppo_gae(3, 1, r, d, v, boot, 0, adv, ret) == 0);
	CHECK(adv[0] == 1 && adv[1] == -1 && adv[2] == 0);
}

static void t_gae_bad_arguments(void)
{
	const float x[2] = {0, 0};
	float a[2] = {7, 7}, r[2] = {7, 7};
	CHECK(seed_ppo_gae(0, 1, x, x, x, x, 0.9f, a, r) == -EINVAL);
	CHECK(seed_ppo_gae(1, 0, x, x, x, x, 0.9f, a, r) == -EINVAL);
	CHECK(seed_ppo_gae(1, 1, NULL, x, x, x, 0.9f, a, r) == -EINVAL);
	CHECK(seed_ppo_gae(1, 1, x, x, x, x, 0.9f, a, a) == -EINVAL);
	CHECK(seed_ppo_gae(1, 1, x, x, x, x, 1.5f, a, r) == -EINVAL);
	CHECK(seed_ppo_gae(1, 1, x, x, x, x, NAN, a, r) == -EINVAL);
	CHECK(a[0] == 7 && r[0] == 7); /* nothing written */
}

/* ---- the loss --------------------------------------------------------------- */

static seed_ppo_batch golden_batch(const struct ppo_golden *g, float *adv, float *ret)
{
	int n = g->T * g->B;
	for (int i = 0; i < n; i++) {
		adv[i] = (float)g->adv[i];
		ret[i] = (float)g->ret[i];
	}
	seed_ppo_batch b = {.N = n,
	                    .A = g->A,
	                    .logits = g->logits,
	                    .behaviour_logits = g->blogits,
	                    .actions = g->actions,
	                    .advantages = adv,
	                    .returns = ret,
	                    .old_values = g->old_values,
	                    .values = g->values};
	return b;
}

static void t_loss_golden(void)
{
	static const char *names[] = {"total",      "pg_loss",     "value_loss",    "entropy_loss",
	                              "entropy",    "approx_kl",   "clip_fraction", "mean_ratio",
	                              "mean_value", "mean_return", "mean_advantage"};
	for (int k = 0; k < NGOLDEN; k++) {
		const struct ppo_golden *g = &ppo_golden[k];
		int n = g->T * g->B;
		float *adv = calloc((size_t)n, sizeof *adv), *ret = calloc((size_t)n, sizeof *ret);
		float *dz = calloc((size_t)n * (size_t)g->A, sizeof *dz), *dv = calloc((size_t)n, sizeof *dv);
		seed_ppo_batch b = golden_batch(g, adv, ret);
		seed_ppo_config c = golden_config(g);
		seed_ppo_stats st;
		seed_err err = {""};
		int rc = seed_ppo_loss(&c, &b, &st, dz, dv, &err);
		CHECK_MSG(rc == 0, "%s: %s", g->name, err.msg);
		const double got[] = {st.total,      st.pg_loss,     st.value_loss,    st.entropy_loss,
		                      st.entropy,    st.approx_kl,   st.clip_fraction, st.mean_ratio,
		                      st.mean_value, st.mean_return, st.mean_advantage};
		for (int i = 0; i < 11; i++)
			CHECK_MSG(close_rel(got[i], g->stats[i], 1e-5, 1e-7), "%s: %s = %.9g, numpy %.9g",
			          g->name, names[i], got[i], g->stats[i]);
		/* Finite differences in float64 of a loss of float64 inputs:
		 * good to about 1e-9; the C gradient is rounded to float. */
		double scale = 0;
		for (int i = 0; i < n * g->A; i++)
			scale = fmax(scale, fabs(g->dlogits[i]));
		for (int i = 0; i < n * g->A; i++)
			CHECK_MSG(fabs(dz[i] - g->dlogits[i]) <= 1e-5 * scale + 1e-7,
			          "%s: dlogits[%d] = %.9g, numpy %.9g", g->name, i, (double)dz[i],
			          g->dlogits[i]);
		for (int i = 0; i < n; i++)
			CHECK_MSG(close_rel(dv[i], g->dvalues[i], 1e-5, 1e-7),
			          "%s: dvalues[%d] = %.9g, numpy %.9g", g->name, i, (double)dv[i],
			          g->dvalues[i]);
		free(adv);
		free(ret);
		free(dz);
		free(dv);
	}
}

/* A Gaussian policy's minibatch (raw samples, 2A parameters a row) against
 * numpy with scipy's normal log-density and entropy. */
static void t_loss_gaussian_golden(void)
{
	const int ng = (int)(sizeof ppo_gauss_golden / sizeof ppo_gauss_golden[0]);
	for (int k = 0; k < ng; k++) {
		const struct ppo_gauss_golden *g = &ppo_gauss_golden[k];
		const int n = g->N, W = 2 * g->A;
		seed_ppo_config c;
		seed_ppo_config_default(&c);
		c.clip = g->clip;
		c.value_clip = g->value_clip;
		c.value_cost = g->value_cost;
		c.entropy_cost = g->entropy_cost;
		c.lambda = g->lambda;
		c.normalize_advantages = g->normalize_advantages;
		c.clip_value = g->clip_value;
		seed_ppo_batch b = {.N = n,
		                    .A = g->A,
		                    .logits = g->params,
		                    .behaviour_logits = g->bparams,
		                    .advantages = g->adv,
		                    .returns = g->ret,
		                    .old_values = g->old,
		                    .values = g->values,
		                    .box_actions = g->u};
		float *dz = calloc((size_t)n * (size_t)W, sizeof *dz), *dv = calloc((size_t)n, sizeof *dv);
		seed_ppo_stats st;
		seed_err err = {""};
		CHECK_MSG(seed_ppo_loss(&c, &b, &st, dz, dv, &err) == 0, "%s: %s", g->name, err.msg);
		const double got[] = {st.total,      st.pg_loss,     st.value_loss,    st.entropy_loss,
		                      st.entropy,    st.approx_kl,   st.clip_fraction, st.mean_ratio,
		                      st.mean_value, st.mean_return, st.mean_advantage};
		for (int i = 0; i < 11; i++)
			CHECK_MSG(close_rel(got[i], g->stats[i], 1e-5, 1e-7),
			          "%s: stat %d = %.9g, numpy %.9g", g->name, i, got[i], g->stats[i]);
		double scale = 0;
		for (int i = 0; i < n * W; i++)
			scale = fmax(scale, fabs(g->dparams[i]));
		for (int i = 0; i < n * W; i++)
			CHECK_MSG(fabs(dz[i] - g->dparams[i]) <= 1e-5 * scale + 1e-7,
			          "%s: dparams[%d] = %.9g, numpy %.9g", g->name, i, (double)dz[i],
			          g->dparams[i]);
		for (int i = 0; i < n; i++)
			CHECK_MSG(close_rel(dv[i], g->dvalues[i], 1e-5, 1e-7),
			          "%s: dvalues[%d] = %.9g, numpy %.9g", g->name, i, (double)dv[i],
			          g->dvalues[i]);
		/* A non-finite raw sample is refused, naming it. */
		float bad[64];
		memcpy(bad, g->u, (size_t)n * (size_t)g->A * sizeof *bad);
		bad[g->A] = NAN;
		b.box_actions = bad;
		CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, &err) == -EINVAL);
		CHECK_MSG(strstr(err.msg, "raw sample") && strstr(err.msg, "(row 1)"), "%s", err.msg);
		free(dz);
		free(dv);
	}
}

/* Central differences of the C loss itself on a random batch whose rows
 * fall on every branch (ratios in and out of the clip range, advantages of
 * both signs, values in and out of theirs): step 1e-3 on float inputs, the
 * loss in double; rows within 1e-2 of a kink are left out, where a step
 * would cross it. */
static void t_loss_finite_differences(void)
{
	enum { N = 24, A = 4 };
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	float z[N * A], zb[N * A], adv[N], ret[N], old[N], v[N];
	int32_t act[N];
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < A; j++) {
			zb[i * A + j] = (float)seed_rng_normal(&rng);
			z[i * A + j] = zb[i * A + j] + 0.4f * (float)seed_rng_normal(&rng);
		}
		act[i] = (int32_t)seed_rng_below(&rng, A);
		adv[i] = (float)seed_rng_normal(&rng);
		ret[i] = (float)seed_rng_normal(&rng);
		old[i] = (float)seed_rng_normal(&rng);
		v[i] = old[i] + 0.4f * (float)seed_rng_normal(&rng);
	}
	seed_ppo_config c;
	seed_ppo_config_default(&c);
	c.entropy_cost = 0.1f;
	seed_ppo_batch b = {N, A, z, zb, act, adv, ret, old, v, NULL};
	float dz[N * A], dv[N];
	seed_ppo_stats st, up, dn;
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	CHECK_MSG(st.clip_fraction > 0.1 && st.clip_fraction < 0.9, "clip fraction %g", st.clip_fraction);
	const float h = 1e-3f;
	int checked = 0;
	for (int i = 0; i < N; i++) {
		/* The ratio's and the value's distance to their kinks. */
		double m = -INFINITY, mb = -INFINITY, s = 0, sb = 0;
		for (int j = 0; j < A; j++) {
			m = fmax(m, z[i * A + j]);
			mb = fmax(mb, zb[i * A + j]);
		}
		for (int j = 0; j < A; j++) {
			s += exp(z[i * A + j] - m);
			sb += exp(zb[i * A + j] - mb);
		}
		double r = exp((z[i * A + act[i]] - m - log(s)) - (zb[i * A + act[i]] - mb - log(sb)));
		bool near =
		    fabs(r - 0.8) < 1e-2 || fabs(r - 1.2) < 1e-2 || fabs(fabs(v[i] - old[i]) - 0.2) < 1e-2;
		if (near)
			continue;
		for (int j = 0; j < A; j++) {
			float keep = z[i * A + j];
			z[i * A + j] = keep + h;
			seed_ppo_loss(&c, &b, &up, NULL, NULL, NULL);
			z[i * A + j] = keep - h;
			seed_ppo_loss(&c, &b, &dn, NULL, NULL, NULL);
			z[i * A + j] = keep;
			double fd = (up.total - dn.total) / (2.0 * (double)h);
			CHECK_MSG(fabs(fd - dz[i * A + j]) <= 2e-3 * fabs(fd) + 2e-6,
			          "dlogits[%d][%d] = %.6g, fd %.6g", i, j, (double)dz[i * A + j], fd);
		}
		float keep = v[i];
		v[i] = keep + h;
		seed_ppo_loss(&c, &b, &up, NULL, NULL, NULL);
		v[i] = keep - h;
		seed_ppo_loss(&c, &b, &dn, NULL, NULL, NULL);
		v[i] = keep;
		double fd = (up.total - dn.total) / (2.0 * (double)h);
		CHECK_MSG(fabs(fd - dv[i]) <= 2e-3 * fabs(fd) + 2e-6, "dvalues[%d] = %.6g, fd %.6g", i,
		          (double)dv[i], fd);
		checked++;
	}
	CHECK_MSG(checked >= N / 2, "only %d of %d rows away from the kinks", checked, N);
}

/* Worked by hand: the learner's logits equal the behaviour's, so every
 * ratio is 1 and no clip is active: the loss is the plain policy gradient
 * -mean(An) = 0 (normalised advantages have mean 0), and with two rows of
 * advantages 1 and 3 (mean 2, sample std sqrt(2)) the normalised ones are
 * -+1/sqrt(2), so d pg / d log pi(a_i) = -An_i / 2 = +-1/(2 sqrt 2).  With
 * equal logits over two actions p = 1/2, so d/dz_a = that times 1/2 and
 * d/dz_other the negative.  No entropy cost.  Values: v = R exactly, so
 * the value loss and its gradient are 0. */
static void t_loss_by_hand(void)
{
	const float z[] = {0, 0, 0, 0}, adv[] = {1, 3}, ret[] = {5, -5}, v[] = {5, -5};
	const int32_t act[] = {0, 1};
	seed_ppo_config c;
	seed_ppo_config_default(&c);
	c.entropy_cost = 0;
	seed_ppo_batch b = {2, 2, z, z, act, adv, ret, v, v, NULL};
	float dz[4], dv[2];
	seed_ppo_stats st;
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	const double k = 1 / (2 * sqrt(2.0)) / 2; /* 1/(2 sqrt 2) times p = 1/2 */
	CHECK_NEAR(st.pg_loss, 0.0, 1e-7);
	CHECK_NEAR(st.mean_ratio, 1.0, 1e-12);
	CHECK(st.clip_fraction == 0 && st.value_loss == 0 && st.approx_kl == 0);
	/* Row 0: An = -1/sqrt2, g = +1/(2 sqrt2): dz_0 = g (1 - 1/2), dz_1 = -g/2. */
	CHECK_NEAR(dz[0], k, 1e-7);
	CHECK_NEAR(dz[1], -k, 1e-7);
	/* Row 1 took action 1 with An = +1/sqrt2: the signs turn. */
	CHECK_NEAR(dz[2], k, 1e-7);
	CHECK_NEAR(dz[3], -k, 1e-7);
	CHECK(dv[0] == 0 && dv[1] == 0);
	/* One row: the normalised advantage is 0, so is the policy gradient. */
	b.N = 1;
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	CHECK(dz[0] == 0 && dz[1] == 0 && st.pg_loss == 0);
}

/* The ratio clip stops the policy gradient of a row whose ratio is past
 * the range in the advantage's direction, and only there; the value clip
 * stops the value gradient of a row whose clipped loss is larger. */
static void t_clips_stop_gradients(void)
{
	/* Behaviour: p(0) = 1/2; learner: z = (log 3, 0): p(0) = 3/4, r = 1.5. */
	const float zb[] = {0, 0}, z[] = {(float)log(3.0), 0};
	const int32_t act[] = {0};
	const float ret[] = {0}, old[] = {0}, v[] = {1}; /* |v - old| = 1 > 0.2 */
	float adv[] = {1};
	seed_ppo_config c;
	seed_ppo_config_default(&c);
	c.entropy_cost = 0;
	c.normalize_advantages = false;
	seed_ppo_batch b = {1, 2, z, zb, act, adv, ret, old, v, NULL};
	float dz[2], dv[1];
	seed_ppo_stats st;
	/* A > 0, r = 1.5 > 1.2: clipped branch (-1.2) larger than -1.5: no gradient. */
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	CHECK(dz[0] == 0 && dz[1] == 0);
	CHECK_NEAR(st.pg_loss, -1.2, 1e-6);
	CHECK(st.clip_fraction == 1);
	/* The value: u = 1, w = (0 + 0.2 - 0)^2 = 0.04 < u: unclipped, gradient
	 * value_cost * (v - R) = 0.5. */
	CHECK_NEAR(dv[0], 0.5, 1e-7);
	CHECK_NEAR(st.value_loss, 0.5 * 0.5 * 1, 1e-7);
	/* A < 0: the unclipped branch (+1.5) is the larger: gradient -A r (1 - p) = 1.5/4. */
	adv[0] = -1;
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	CHECK_NEAR(dz[0], 1.5 * 0.25, 1e-6);
	CHECK_NEAR(dz[1], -1.5 * 0.25, 1e-6);
	/* A value moved away from R beyond the clip: R = 0.5, old 0, v = -1:
	 * u = 2.25, w = (-0.2 - 0.5)^2 = 0.49: u larger, gradient 0.5 * -1.5.
	 * R = -2, v = 1: u = 9, w = (0.2 + 2)^2 = 4.84: u.  R = 1, v = -1: u = 4,
	 * w = (-0.2 - 1)^2 = 1.44.  The clipped branch wins when v moved toward
	 * R past it: R = 2, old = 0, v = 3: u = 1, w = (0.2 - 2)^2 = 3.24: no
	 * gradient. */
	const float ret2[] = {2}, v2[] = {3};
	b.returns = ret2;
	b.values = v2;
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	CHECK(dv[0] == 0);
	CHECK_NEAR(st.value_loss, 0.5 * 0.5 * 3.24, 1e-6);
	c.clip_value = false;
	CHECK(seed_ppo_loss(&c, &b, &st, dz, dv, NULL) == 0);
	CHECK_NEAR(dv[0], 0.5, 1e-7);
}

static void t_loss_bad_arguments(void)
{
	const float z[] = {0, 0}, x[] = {0};
	const int32_t act[] = {0}, bad_act[] = {2};
	seed_ppo_config c;
	seed_ppo_config_default(&c);
	seed_ppo_batch b = {1, 2, z, z, act, x, x, x, x, NULL};
	seed_ppo_stats st;
	float dz[2] = {7, 7}, dv[1] = {7};
	seed_err err = {""};
	const struct {
		const char *name, *msg;
		seed_ppo_config c;
		seed_ppo_batch b;
	} cases[] = {
	    {"no rows", "N = 0", c, {0, 2, z, z, act, x, x, x, x, NULL}},
	    {"no actions", "A = 0", c, {1, 0, z, z, act, x, x, x, x, NULL}},
	    {"action outside", "action 2 at row 0", c, {1, 2, z, z, bad_act, x, x, x, x, NULL}},
	    {"NULL array", "NULL array", c, {1, 2, z, z, act, NULL, x, x, x, NULL}},
	    {"negative clip", "clip = -0.1", {4, 4, -0.1f, true, 0.2f, 0.5f, 0.01f, 0.95f, true}, b},
	    {"NaN entropy cost", "entropy_cost", {4, 4, 0.2f, true, 0.2f, 0.5f, NAN, 0.95f, true}, b},
	    {"lambda above 1", "lambda = 2", {4, 4, 0.2f, true, 0.2f, 0.5f, 0.01f, 2, true}, b},
	    {"no epochs", "epochs = 0", {0, 4, 0.2f, true, 0.2f, 0.5f, 0.01f, 0.95f, true}, b},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		err.msg[0] = '\0';
		int rc = seed_ppo_loss(&cases[i].c, &cases[i].b, &st, dz, dv, &err);
		CHECK_MSG(rc == -EINVAL && strstr(err.msg, cases[i].msg), "%s: rc %d, '%s'", cases[i].name,
		          rc, err.msg);
	}
	CHECK(dz[0] == 7 && dz[1] == 7 && dv[0] == 7); /* nothing written */
	CHECK(seed_ppo_loss(&c, &b, NULL, dz, dv, &err) == -EINVAL);
}

/* ---- the learner ------------------------------------------------------------- */

static const seed_env_spec SPEC = {
    .obs_dtype = SEED_DTYPE_F32, .obs_rank = 1, .obs_shape = {4}, .num_actions = 2};

static int config(seed_config *c, int T, int B, const char *model, const char *extra, seed_err *err)
{
	char text[1024];
	snprintf(text, sizeof text,
	         "{\"env\": \"cartpole\", \"algorithm\": \"ppo\", \"model\": %s, \"unroll_length\": %d, "
	         "\"batch_size\": %d, \"discount\": 0.9, \"seed\": 5, \"optimizer\": {\"lr\": 0.01, "
	         "\"lr_decay\": false}%s}",
	         model, T, B, extra ? extra : "");
	json_t *root = json_loads(text, 0, NULL);
	if (!root) {
		printf("# bad test config: %s\n", text);
		exit(99);
	}
	int rc = seed_config_parse(root, c, err);
	if (rc)
		json_decref(root);
	return rc;
}

static const char *MLP = "{\"torso\": [{\"type\": \"linear\", \"out\": 16}, {\"type\": \"tanh\"}]}";

/* Unrolls of T1 steps where action 0 earns 1 and action 1 earns 0, every
 * step ending its episode (terminated), so that the value target of a
 * step is its reward and the advantage r - V: PPO must raise pi(0) and
 * bring V(x) toward E[r] under the behaviour policy (uniform: 1/2).
 * Observations are random, the behaviour logits zero (uniform). */
struct unrolls {
	int Bf, T1;
	int32_t env[8];
	float obs[8 * 9 * 4];
	int32_t action[8 * 9], version[8 * 9];
	float reward[8 * 9], final_value[8 * 9], logits[8 * 9 * 2];
	uint8_t terminated[8 * 9], truncated[8 * 9];
	seed_frame f;
};

static seed_frame *unrolls_make(struct unrolls *u, int Bf, int T1, uint64_t seed)
{
	memset(u, 0, sizeof *u);
	u->Bf = Bf, u->T1 = T1;
	seed_rng rng;
	seed_rng_init(&rng, seed, 1);
	for (int b = 0; b < Bf; b++) {
		u->env[b] = b;
		for (int t = 0; t < T1; t++) {
			int i = b * T1 + t;
			for (int k = 0; k < 4; k++)
				u->obs[i * 4 + k] = (float)seed_rng_uniform(&rng, -1, 1);
			u->action[i] = (int32_t)seed_rng_below(&rng, 2);
			u->terminated[i] = t > 0;
		}
		/* The reward of step t arrives with step t+1. */
		for (int t = 1; t < T1; t++)
			u->reward[b * T1 + t] = u->action[b * T1 + t - 1] == 0 ? 1.0f : 0.0f;
	}
	seed_frame *f = &u->f;
	int64_t B = Bf, T = T1;
	seed_frame_init(f, SEED_FRAME_UNROLL);
	seed_frame_set_int(f, "run", 0);
	seed_frame_set_int(f, "actor", 0);
	seed_frame_set_int(f, "num_actions", 2);
	seed_frame_set_tensor(f, "env", seed_tensor_view(u->env, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(f, "obs", seed_tensor_view(u->obs, SEED_DTYPE_F32, 3, (int64_t[]){B, T, 4}));
	seed_frame_set_tensor(f, "action", seed_tensor_view(u->action, SEED_DTYPE_I32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "reward", seed_tensor_view(u->reward, SEED_DTYPE_F32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "terminated",
	                      seed_tensor_view(u->terminated, SEED_DTYPE_U8, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "truncated",
	                      seed_tensor_view(u->truncated, SEED_DTYPE_U8, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "final_value",
	                      seed_tensor_view(u->final_value, SEED_DTYPE_F32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "policy_version",
	                      seed_tensor_view(u->version, SEED_DTYPE_I32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "logits",
	                      seed_tensor_view(u->logits, SEED_DTYPE_F32, 3, (int64_t[]){B, T, 2}));
	return f;
}

/* Mean pi(0|x) and mean V(x) of the model over the frame's observations. */
static void policy_on(seed_learner *L, const struct unrolls *u, double *p0, double *v)
{
	int n = u->Bf * u->T1;
	float logits[8 * 9 * 2], values[8 * 9];
	seed_model_forward(seed_learner_model(L), n, u->obs, logits, values);
	*p0 = *v = 0;
	for (int i = 0; i < n; i++) {
		*p0 += 1 / (1 + exp((double)logits[2 * i + 1] - logits[2 * i])) / n;
		*v += (double)values[i] / n;
	}
}

static void t_learner_update(void)
{
	enum { T = 8, B = 8 };
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, T, B, MLP, ", \"ppo\": {\"epochs\": 3, \"minibatches\": 4}", &err) == 0, "%s",
	          err.msg);
	seed_learner *L = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &SPEC, &err) == 0, "%s", err.msg);
	if (!L)
		return;
	struct unrolls u;
	seed_frame *f = unrolls_make(&u, B, T + 1, 11);
	double p0, v, p1, v1;
	policy_on(L, &u, &p0, &v);
	const seed_learner_status *st = seed_learner_get_status(L);
	int64_t version = st->policy_version;
	/* One update: one version, 3 x 4 optimizer steps, T*B frames. */
	CHECK(seed_learner_feed(L, f, &err) == 1);
	CHECK(st->policy_version == version + 1);
	CHECK_MSG(st->optim_steps == 12, "%lld optimizer steps", (long long)st->optim_steps);
	CHECK(st->frames == T * B && st->updates == 1 && st->skipped == 0);
	CHECK(isfinite(st->loss.total) && isfinite(st->grad_norm) && st->grad_norm > 0);
	double first = st->loss.total;
	/* The same batch again and again: the clipped objective of each
	 * update, measured from where that update starts, falls (its pg part
	 * is 0 at the start of each update by normalisation, so the fall is
	 * the value loss's), and the policy goes to the rewarded action, but
	 * only about as far as the clip lets it from the behaviour policy,
	 * which stays uniform here: a ratio of 1 + 0.2 is pi(0) = 0.6 (the
	 * rows of action 1 push it on to pi(1) = 0.4, and minibatch steps
	 * overshoot a little). */
	for (int k = 0; k < 30; k++)
		CHECK(seed_learner_feed(L, unrolls_make(&u, B, T + 1, 11), &err) == 1);
	policy_on(L, &u, &p1, &v1);
	CHECK_MSG(st->loss.total < first, "loss %g after 31 updates, %g after the first", st->loss.total,
	          first);
	CHECK_MSG(fabs(p0 - 0.5) < 0.05 && p1 > 0.58 && p1 < 0.7, "pi(0) %g -> %g", p0, p1);
	/* V(x) toward the value target of each action under the behaviour
	 * policy, i.e. its mean: 1/2 per step with the rewards above. */
	CHECK_MSG(fabs(v1 - 0.5) < fabs(v - 0.5) && fabs(v1 - 0.5) < 0.15, "V %g -> %g", v, v1);
	CHECK(st->policy_version == version + 31 && st->optim_steps == 31 * 12);
	json_t *m = seed_learner_metrics(L);
	if (m) {
		CHECK(json_is_real(json_object_get(m, "approx_kl")) &&
		      json_is_real(json_object_get(m, "clip_fraction")));
		CHECK(json_integer_value(json_object_get(m, "optim_steps")) == 31 * 12);
		CHECK(strcmp(json_string_value(json_object_get(m, "algorithm")), "ppo") == 0);
		json_decref(m);
	}
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* The learner's loss is the module's on the batch: with one epoch of one
 * minibatch (all T*B rows, shuffled; the loss is a mean, so the order does
 * not matter), the update's loss equals seed_ppo_loss on the batch laid
 * out here by hand (the transition rule, a truncation included), with
 * GAE's targets from the same parameters, which the model gives here
 * before the update. */
static void t_learner_loss_is_the_module_loss(void)
{
	enum { T = 4, B = 2, N = T * B };
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, T, B, MLP, ", \"ppo\": {\"epochs\": 1, \"minibatches\": 1}", &err) == 0, "%s",
	          err.msg);
	seed_learner *L = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &SPEC, &err) == 0, "%s", err.msg);
	if (!L)
		return;
	struct unrolls u;
	seed_frame *f = unrolls_make(&u, B, T + 1, 3);
	for (int i = 0; i < B * (T + 1); i++) /* behaviour logits other than the learner's */
		u.logits[2 * i] = 0.3f * (float)(i % 3);
	u.truncated[0 * (T + 1) + 2] = 1; /* a truncation: its reward takes gamma * final_value */
	u.terminated[0 * (T + 1) + 2] = 0;
	u.final_value[0 * (T + 1) + 2] = 2.5f;
	/* The expected loss, from a time-major copy of the batch. */
	float obs[(T + 1) * B * 4], logits[(T + 1) * B * 2], values[(T + 1) * B], blog[N * 2];
	float rew[N], disc[N], adv[N], ret[N];
	int32_t act[N];
	for (int t = 0; t <= T; t++)
		for (int b = 0; b < B; b++)
			memcpy(obs + (t * B + b) * 4, u.obs + (b * (T + 1) + t) * 4, 16);
	seed_model_forward(seed_learner_model(L), (T + 1) * B, obs, logits, values);
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			int i = t * B + b, s = b * (T + 1) + t, s1 = s + 1;
			act[i] = u.action[s];
			blog[2 * i] = u.logits[2 * s];
			blog[2 * i + 1] = u.logits[2 * s + 1];
			/* The transition rule, by hand. */
			rew[i] = u.reward[s1] + (u.truncated[s1] ? 0.9f * u.final_value[s1] : 0.0f);
			disc[i] = u.terminated[s1] || u.truncated[s1] ? 0.0f : 0.9f;
		}
	CHECK(seed_ppo_gae(T, B, rew, disc, values, values + N, 0.95f, adv, ret) == 0);
	seed_ppo_config pc;
	seed_ppo_config_default(&pc);
	seed_ppo_batch mb = {N, 2, logits, blog, act, adv, ret, values, values, NULL};
	seed_ppo_stats want;
	CHECK(seed_ppo_loss(&pc, &mb, &want, NULL, NULL, NULL) == 0);
	CHECK(seed_learner_feed(L, f, &err) == 1);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK_MSG(fabs(st->loss.total - want.total) < 1e-5 * (1 + fabs(want.total)), "loss %.9g, want %.9g",
	          st->loss.total, want.total);
	CHECK_NEAR(st->loss.mean_vs, want.mean_return, 1e-5);
	CHECK_NEAR(st->loss.entropy, want.entropy, 1e-6);
	CHECK_NEAR(st->loss.mean_rho, want.mean_ratio, 1e-6);
	seed_learner_free(&L);
	seed_config_free(&c);
}

static void t_learner_update_allocates_nothing(void)
{
	enum { T = 4, B = 4 };
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, T, B, MLP, NULL, &err) == 0, "%s", err.msg);
	seed_learner *L = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &SPEC, &err) == 0, "%s", err.msg);
	if (!L)
		return;
	struct unrolls u;
	seed_frame *f = unrolls_make(&u, B, T + 1, 5);
	CHECK(seed_learner_feed(L, f, &err) == 1);
	alloc_count = 0;
	alloc_counting = true;
	for (int k = 0; k < 3; k++) {
		int n = seed_learner_add(L, f, 0, &err);
		int rc = seed_learner_update(L, &err);
		CHECK(n == B && rc == 0);
	}
	alloc_counting = false;
	CHECK_MSG(alloc_count == 0, "%ld allocations in 3 adds and updates", alloc_count);
	if (!COUNT_ALLOCATIONS)
		printf("# allocations not counted under AddressSanitizer\n");
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* A PPO run saved and restored goes on as if never stopped: the
 * parameters, Adam's state, the optimizer steps and the generator that
 * shuffles the minibatches all come back, so the next update of both
 * learners is the same update, to the bit. */
static void t_learner_resumes_exactly(void)
{
	enum { T = 4, B = 4 };
	const char *tmp = tmpdir_new();
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/run", tmp);
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, T, B, MLP, NULL, &err) == 0, "%s", err.msg);
	seed_learner *L = NULL, *R = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &SPEC, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_learner_new(&R, &c, &SPEC, &err) == 0, "%s", err.msg);
	if (!L || !R)
		return;
	CHECK_MSG(seed_learner_open_dir(L, dir, &err) == 0, "%s", err.msg);
	struct unrolls u;
	for (int k = 0; k < 3; k++)
		CHECK(seed_learner_feed(L, unrolls_make(&u, B, T + 1, 20 + (uint64_t)k), &err) == 1);
	CHECK_MSG(seed_learner_save(L, true, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	CHECK_MSG(ck && seed_learner_restore(R, ck, &err) == 0, "%s", err.msg);
	const seed_learner_status *ls = seed_learner_get_status(L), *rs = seed_learner_get_status(R);
	CHECK(rs->optim_steps == 3 * 16 && rs->optim_steps == ls->optim_steps && rs->updates == 3);
	CHECK(seed_learner_feed(L, unrolls_make(&u, B, T + 1, 30), &err) == 1);
	CHECK(seed_learner_feed(R, unrolls_make(&u, B, T + 1, 30), &err) == 1);
	size_t np = seed_model_num_params(seed_learner_model(L));
	CHECK(memcmp(seed_model_params(seed_learner_model(L)), seed_model_params(seed_learner_model(R)),
	             np * sizeof(float)) == 0);
	CHECK(rs->loss.total == ls->loss.total && rs->optim_steps == 4 * 16);
	seed_checkpoint_free(&ck);
	seed_learner_free(&L);
	seed_learner_free(&R);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

static void t_learner_refuses(void)
{
	seed_config c;
	seed_err err = {""};
	seed_learner *L = NULL;
	const char *core = "{\"torso\": [{\"type\": \"linear\", \"out\": 8}], \"core\": {\"type\": \"lstm\", "
	                   "\"units\": 8}}";
	CHECK_MSG(config(&c, 4, 2, core, NULL, &err) == 0, "%s", err.msg);
	CHECK(seed_learner_new(&L, &c, &SPEC, &err) == -EINVAL && !L);
	CHECK_MSG(strstr(err.msg, "without a core"), "%s", err.msg);
	seed_config_free(&c);
	const char *dueling = "{\"torso\": [], \"head\": \"dueling\"}";
	CHECK_MSG(config(&c, 4, 2, dueling, NULL, &err) == 0, "%s", err.msg);
	CHECK(seed_learner_new(&L, &c, &SPEC, &err) == -EINVAL && !L);
	CHECK_MSG(strstr(err.msg, "PPO needs an actor-critic head"), "%s", err.msg);
	seed_config_free(&c);
}

int main(void)
{
	TAP_RUN(t_gae_golden);
	TAP_RUN(t_gae_by_hand);
	TAP_RUN(t_gae_bad_arguments);
	TAP_RUN(t_loss_golden);
	TAP_RUN(t_loss_gaussian_golden);
	TAP_RUN(t_loss_finite_differences);
	TAP_RUN(t_loss_by_hand);
	TAP_RUN(t_clips_stop_gradients);
	TAP_RUN(t_loss_bad_arguments);
	TAP_RUN(t_learner_update);
	TAP_RUN(t_learner_loss_is_the_module_loss);
	TAP_RUN(t_learner_update_allocates_nothing);
	TAP_RUN(t_learner_resumes_exactly);
	TAP_RUN(t_learner_refuses);
	return tap_done();
}
