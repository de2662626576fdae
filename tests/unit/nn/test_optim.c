/* test_optim.c: Adam and RMSProp against numpy references of the
 * frameworks' algorithms (tests/golden/optim_golden.h from tests/golden/optim_ref.py),
 * gradient clipping and the learning-rate schedule against hand-worked
 * values, checkpoint export/import, and bad arguments. */
#include "seed/optim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optim_golden.h"
#include "tap.h"

#define NGOLDEN ((int)(sizeof optim_golden / sizeof optim_golden[0]))

static seed_optim_config golden_config(const struct optim_golden *g)
{
	seed_optim_config c;
	seed_optim_config_default(&c, (seed_optim_kind)g->kind);
	c.beta1 = g->beta1;
	c.beta2 = g->beta2;
	c.eps = g->eps;
	c.decay = g->decay;
	c.momentum = g->momentum;
	c.rmsprop_style = (seed_rmsprop_style)g->style;
	c.weight_decay = g->weight_decay;
	c.decoupled_weight_decay = g->decoupled;
	return c;
}

/* 1e-6 relative to the larger of the entry and the RMS of its array: float
 * rounding is relative to the terms an entry was summed from, and an entry
 * much smaller than its array's scale (a momentum that cancelled out) has
 * an error on that scale, not its own. */
static double rms(const double *x, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * x[i];
	return sqrt(s / n);
}

static int close_rel(double got, double want, double scale)
{
	return fabs(got - want) <= 1e-6 * fmax(fabs(want), scale);
}

static void t_golden(void)
{
	for (int k = 0; k < NGOLDEN; k++) {
		const struct optim_golden *g = &optim_golden[k];
		seed_optim_config c = golden_config(g);
		seed_optim *o = NULL;
		seed_err err = {{0}};
		CHECK_MSG(seed_optim_new(&o, &c, OPT_N, &err) == 0, "%s: %s", g->name, err.msg);
		if (!o)
			continue;
		float p[OPT_N];
		memcpy(p, g->p0, sizeof p);
		for (int s = 0; s < OPT_STEPS; s++)
			CHECK(seed_optim_step(o, p, g->grads + s * OPT_N, g->lrs[s]) == 0);
		CHECK(seed_optim_steps(o) == OPT_STEPS);
		CHECK_MSG(seed_optim_slots(o) == g->nslots, "%s: %d slots, want %d", g->name,
		          seed_optim_slots(o), g->nslots);
		CHECK(seed_optim_state_size(o) == (size_t)g->nslots * OPT_N);
		double worst = 0, scale = rms(g->p, OPT_N);
		for (int i = 0; i < OPT_N; i++) {
			CHECK_MSG(close_rel(p[i], g->p[i], scale), "%s: p[%d] = %.9g, numpy %.17g", g->name,
			          i, p[i], g->p[i]);
			worst = fmax(worst, fabs(p[i] - g->p[i]) / fmax(fabs(g->p[i]), scale));
		}
		const float *st = seed_optim_state(o);
		for (int i = 0; i < g->nslots * OPT_N && seed_optim_slots(o) == g->nslots; i++) {
			if (i % OPT_N == 0)
				scale = rms(g->state + i, OPT_N);
			CHECK_MSG(close_rel(st[i], g->state[i], scale), "%s: %s[%d] = %.9g, numpy %.17g",
			          g->name, seed_optim_slot_name(o, i / OPT_N), i % OPT_N, st[i], g->state[i]);
			worst = fmax(worst, fabs(st[i] - g->state[i]) / fmax(fabs(g->state[i]), scale));
		}
		printf("# %-26s %d steps, max error relative to max(|x|, rms) %.2g\n", g->name, OPT_STEPS,
		       worst);
		seed_optim_free(&o);
		CHECK(o == NULL);
	}
}

/* Adam's first step moves every parameter by lr * sign(g) (up to eps),
 * whatever the size of g: the bias correction at work. */
static void t_adam_first_step_is_lr_sign(void)
{
	seed_optim_config c;
	seed_optim_config_default(&c, SEED_OPTIM_ADAM);
	CHECK(c.beta1 == 0.9f && c.beta2 == 0.999f && c.eps == 1e-8f && c.weight_decay == 0);
	float p[40], g[40];
	for (int i = 0; i < 40; i++) {
		p[i] = 1;
		g[i] = (i % 2 ? -1.0f : 1.0f) * (0.001f + (float)i * 10);
	}
	seed_optim *o;
	CHECK(seed_optim_new(&o, &c, 40, NULL) == 0);
	CHECK(seed_optim_step(o, p, g, 0.01f) == 0);
	for (int i = 0; i < 40; i++)
		CHECK_NEAR(p[i], 1 - 0.01 * (i % 2 ? -1 : 1), 1e-6);
	seed_optim_free(&o);
	seed_optim_free(&o); /* NULL is fine */
	seed_optim_free(NULL);
}

/* RMSProp defaults are IMPALA's; TF style starts its mean square at 1. */
static void t_rmsprop_initial_state(void)
{
	seed_optim_config c;
	seed_optim_config_default(&c, SEED_OPTIM_RMSPROP);
	CHECK(c.decay == 0.99f && c.momentum == 0 && c.eps == 0.01f && c.rmsprop_style == SEED_RMSPROP_TF);
	seed_optim *o;
	CHECK(seed_optim_new(&o, &c, 20, NULL) == 0);
	CHECK(seed_optim_slots(o) == 1 && seed_optim_state_size(o) == 20);
	CHECK(strcmp(seed_optim_slot_name(o, 0), "rmsprop_ms") == 0);
	CHECK(seed_optim_slot_name(o, 1) == NULL && seed_optim_slot_name(o, -1) == NULL);
	for (int i = 0; i < 20; i++)
		CHECK(seed_optim_state(o)[i] == 1.0f);
	seed_optim_free(&o);
	c.rmsprop_style = SEED_RMSPROP_TORCH;
	c.momentum = 0.5f;
	CHECK(seed_optim_new(&o, &c, 20, NULL) == 0);
	CHECK(seed_optim_slots(o) == 2 && seed_optim_state_size(o) == 40);
	CHECK(strcmp(seed_optim_slot_name(o, 1), "rmsprop_mom") == 0);
	for (int i = 0; i < 40; i++)
		CHECK(seed_optim_state(o)[i] == 0.0f);
	seed_optim_free(&o);
}

/* Export after 3 steps, import into a fresh optimizer, and both continue
 * identically; reset gives back a fresh optimizer. */
static void t_checkpoint_roundtrip(void)
{
	const struct optim_golden *g = &optim_golden[0];
	seed_optim_config c = golden_config(g);
	seed_optim *a, *b, *fresh;
	CHECK(seed_optim_new(&a, &c, OPT_N, NULL) == 0);
	CHECK(seed_optim_new(&b, &c, OPT_N, NULL) == 0);
	CHECK(seed_optim_new(&fresh, &c, OPT_N, NULL) == 0);
	CHECK(seed_optim_numel(a) == OPT_N);
	CHECK(strcmp(seed_optim_slot_name(a, 0), "adam_m") == 0 &&
	      strcmp(seed_optim_slot_name(a, 1), "adam_v") == 0);
	float pa[OPT_N], pb[OPT_N];
	memcpy(pa, g->p0, sizeof pa);
	for (int s = 0; s < 3; s++)
		CHECK(seed_optim_step(a, pa, g->grads + s * OPT_N, g->lrs[s]) == 0);
	const size_t ns = seed_optim_state_size(a);
	float *saved = malloc(ns * sizeof *saved);
	memcpy(saved, seed_optim_state(a), ns * sizeof *saved);
	int64_t steps = seed_optim_steps(a);
	CHECK(steps == 3);

	memcpy(seed_optim_state(b), saved, ns * sizeof *saved);
	CHECK(seed_optim_set_steps(b, steps) == 0);
	memcpy(pb, pa, sizeof pb);
	for (int s = 3; s < OPT_STEPS; s++) {
		CHECK(seed_optim_step(a, pa, g->grads + s * OPT_N, g->lrs[s]) == 0);
		CHECK(seed_optim_step(b, pb, g->grads + s * OPT_N, g->lrs[s]) == 0);
	}
	CHECK(memcmp(pa, pb, sizeof pa) == 0);
	CHECK(memcmp(seed_optim_state(a), seed_optim_state(b), ns * sizeof(float)) == 0);
	/* and the result is the golden one, through the checkpoint */
	for (int i = 0; i < OPT_N; i++)
		CHECK(close_rel(pb[i], g->p[i], rms(g->p, OPT_N)));
	/* losing the step counter changes the bias correction, so it matters */
	CHECK(seed_optim_set_steps(b, 0) == 0);
	memcpy(seed_optim_state(b), saved, ns * sizeof *saved);
	memcpy(pb, pa, sizeof pb);
	float pc[OPT_N];
	memcpy(pc, pa, sizeof pc);
	CHECK(seed_optim_set_steps(a, 3) == 0);
	memcpy(seed_optim_state(a), saved, ns * sizeof *saved);
	CHECK(seed_optim_step(a, pc, g->grads, g->lrs[0]) == 0);
	CHECK(seed_optim_step(b, pb, g->grads, g->lrs[0]) == 0);
	CHECK(memcmp(pb, pc, sizeof pb) != 0);

	seed_optim_reset(a);
	CHECK(seed_optim_steps(a) == 0);
	CHECK(memcmp(seed_optim_state(a), seed_optim_state(fresh), ns * sizeof(float)) == 0);
	CHECK(seed_optim_set_steps(a, -1) == -EINVAL);
	free(saved);
	seed_optim_free(&a);
	seed_optim_free(&b);
	seed_optim_free(&fresh);
}

static void t_clip_global_norm(void)
{
	float g[2] = {3, 4};
	CHECK(seed_optim_clip_global_norm(g, 2, 10) == 5.0);
	CHECK(g[0] == 3 && g[1] == 4);
	CHECK(seed_optim_clip_global_norm(g, 2, 1) == 5.0);
	CHECK_NEAR(g[0], 0.6, 1e-7);
	CHECK_NEAR(g[1], 0.8, 1e-7);
	g[0] = 3;
	g[1] = 4;
	CHECK(seed_optim_clip_global_norm(g, 2, 4.5f) == 5.0);
	CHECK_NEAR(g[0], 2.7, 1e-6);
	CHECK_NEAR(g[1], 3.6, 1e-6);
	g[0] = 3;
	g[1] = 4;
	CHECK(seed_optim_clip_global_norm(g, 2, 5) == 5.0); /* at the threshold: untouched */
	CHECK(g[0] == 3 && g[1] == 4);
	CHECK(seed_optim_clip_global_norm(g, 2, 0) == 5.0);
	CHECK(seed_optim_clip_global_norm(g, 2, INFINITY) == 5.0);
	CHECK(seed_optim_clip_global_norm(g, 2, NAN) == 5.0);
	CHECK(seed_optim_clip_global_norm(g, 2, -1) == 5.0);
	CHECK(g[0] == 3 && g[1] == 4);
	CHECK(seed_optim_clip_global_norm(NULL, 0, 1) == 0.0);

	/* 1000 elements (blocks plus a tail): norm sqrt(sum i^2 / 1e6) */
	enum { N = 1000 };
	static float big[N];
	double want = 0;
	for (int i = 0; i < N; i++) {
		big[i] = (float)((i % 7) - 3) * 0.5f;
		want += (double)big[i] * big[i];
	}
	want = sqrt(want);
	CHECK_NEAR(seed_optim_clip_global_norm(big, N, 2.0f), want, 1e-12 * want);
	CHECK_NEAR(seed_optim_clip_global_norm(big, N, 0), 2.0, 1e-6);

	/* a non-finite gradient is reported and left alone */
	big[999] = NAN;
	CHECK(isnan(seed_optim_clip_global_norm(big, N, 1.0f)));
	CHECK(isnan(big[999]) && big[0] != 0);
	big[999] = INFINITY;
	const float before = big[3];
	CHECK(isinf(seed_optim_clip_global_norm(big, N, 1.0f)));
	CHECK(big[3] == before);
}

/* The schedule returns a float: compare within its rounding. */
#define CHECK_LR(got, want) CHECK_NEAR(got, want, 1e-7 * (want))

static void t_lr_linear(void)
{
	CHECK_LR(seed_optim_lr_linear(1e-3f, 0, 100, 0), 1e-3);
	CHECK_LR(seed_optim_lr_linear(1e-3f, 25, 100, 0), 7.5e-4);
	CHECK_LR(seed_optim_lr_linear(1e-3f, 99, 100, 0), 1e-5);
	CHECK(seed_optim_lr_linear(1e-3f, 100, 100, 0) == 0.0f);
	CHECK(seed_optim_lr_linear(1e-3f, 150, 100, 0) == 0.0f);
	CHECK_LR(seed_optim_lr_linear(1e-3f, 95, 100, 1e-4f), 1e-4);
	CHECK_LR(seed_optim_lr_linear(1e-3f, 50, 100, 1e-4f), 5e-4);
	CHECK_LR(seed_optim_lr_linear(1e-3f, 200, 100, 1e-4f), 1e-4);
	CHECK(seed_optim_lr_linear(6e-4f, 12345, 0, 0) == 6e-4f);
	CHECK(seed_optim_lr_linear(6e-4f, -5, 100, 0) == 6e-4f);
	/* a step count beyond 2^31 (long runs) */
	CHECK_LR(seed_optim_lr_linear(1.0f, 3000000000LL, 4000000000LL, 0), 0.25);
}

static void t_errors(void)
{
	seed_optim_config c;
	seed_optim *o = (seed_optim *)&c; /* must stay untouched on error */
	seed_err err = {{0}};
	seed_optim_config_default(&c, SEED_OPTIM_ADAM);
	CHECK(seed_optim_new(&o, &c, 0, &err) == -EINVAL);
	CHECK(seed_optim_new(NULL, &c, 4, &err) == -EINVAL);
	CHECK(seed_optim_new(&o, NULL, 4, &err) == -EINVAL);
	c.kind = (seed_optim_kind)9;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "kind") != NULL, "message: %s", err.msg);
	seed_optim_config_default(&c, SEED_OPTIM_ADAM);
	c.beta1 = 1.0f;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "beta") != NULL, "message: %s", err.msg);
	c.beta1 = 0.9f;
	c.beta2 = NAN;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	c.beta2 = 0.999f;
	c.eps = -1e-8f;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	c.eps = 1e-8f;
	c.weight_decay = -0.1f;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	seed_optim_config_default(&c, SEED_OPTIM_RMSPROP);
	c.decay = 1.5f;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	c.decay = 0.99f;
	c.momentum = -0.5f;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	c.momentum = 0;
	c.rmsprop_style = (seed_rmsprop_style)5;
	CHECK(seed_optim_new(&o, &c, 4, &err) == -EINVAL);
	CHECK(o == (seed_optim *)&c);

	seed_optim_config_default(&c, SEED_OPTIM_ADAM);
	CHECK(seed_optim_new(&o, &c, 4, &err) == 0);
	float p[4] = {1, 2, 3, 4}, g[4] = {1, 1, 1, 1};
	CHECK(seed_optim_step(o, NULL, g, 0.1f) == -EINVAL);
	CHECK(seed_optim_step(o, p, NULL, 0.1f) == -EINVAL);
	CHECK(seed_optim_step(o, p, p, 0.1f) == -EINVAL);
	CHECK(seed_optim_step(o, p, g, -0.1f) == -EINVAL);
	CHECK(seed_optim_step(o, p, g, NAN) == -EINVAL);
	CHECK(seed_optim_step(o, p, g, INFINITY) == -EINVAL);
	CHECK(seed_optim_step(NULL, p, g, 0.1f) == -EINVAL);
	CHECK(p[0] == 1 && p[3] == 4 && seed_optim_steps(o) == 0);
	/* lr = 0 is a valid step: the state moves, the parameters do not */
	CHECK(seed_optim_step(o, p, g, 0) == 0);
	CHECK(p[0] == 1 && p[3] == 4 && seed_optim_steps(o) == 1);
	seed_optim_free(&o);
}

int main(void)
{
	TAP_RUN(t_golden);
	TAP_RUN(t_adam_first_step_is_lr_sign);
	TAP_RUN(t_rmsprop_initial_state);
	TAP_RUN(t_checkpoint_roundtrip);
	TAP_RUN(t_clip_global_norm);
	TAP_RUN(t_lr_linear);
	TAP_RUN(t_errors);
	return tap_done();
}
