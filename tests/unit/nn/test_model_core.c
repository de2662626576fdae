/* test_model_core.c: a model with an LSTM core (seed_model(3) "core"):
 * forward_seq against the equations evaluated in float64 by
 * tests/golden/model_core_ref.py (tests/golden/model_core_golden.h), every parameter's
 * gradient through backward_seq by central differences across a reset from
 * a nonzero state, state carried across calls, the description's errors,
 * the parameter table and a checkpoint round trip, no allocation in forward
 * or backward, and the plain (state-free) calls. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "model_core_golden.h"
#include "seed/checkpoint.h"
#include "seed/nn.h"
#include "tap.h"
#include "tmpdir.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct golden {
	const char *name;
	int T, B, O, A, H, dueling;
	const char *json;
	const core_golden_param *params;
	const float *obs, *reward;
	const int32_t *action;
	const uint8_t *reset;
	const float *state0, *out, *values, *state_out;
};

static const struct golden goldens[] = {CORE_GOLDEN_CASES};

/* float32 arithmetic against a float64 reference: 1e-5 absolute plus 1e-4
 * relative (the outputs are O(1)). */
static int close_to(double got, double want)
{
	return fabs(got - want) <= 1e-5 + 1e-4 * fabs(want);
}

static void compare(const char *name, const char *what, const float *got, const float *want, size_t n)
{
	double worst = 0;
	for (size_t k = 0; k < n; k++) {
		CHECK_MSG(close_to(got[k], want[k]), "%s %s[%zu]: %.9g want %.9g", name, what, k, got[k],
		          want[k]);
		worst = fmax(worst, fabs(got[k] - want[k]));
	}
	printf("# %s %s: worst error %.3g\n", name, what, worst);
}

static seed_model *model(const char *json, int O, int A, int max_batch)
{
	seed_model *m = NULL;
	seed_err err = {{0}};
	int rc = seed_model_new(&m, json, SEED_DTYPE_F32, 1, (int64_t[]){O}, A, max_batch, &err);
	CHECK_MSG(rc == 0, "%s: %s", json, err.msg);
	return m;
}

/* Forward (either head) over s: out [T][B][A] and, actor-critic, values. */
static int fwd(seed_model *m, const seed_model_seq *s, float *out, float *values)
{
	if (seed_model_head_kind(m) == SEED_HEAD_DUELING)
		return seed_model_forward_seq_q(m, s, out);
	return seed_model_forward_seq(m, s, out, values);
}

static void t_golden(void)
{
	for (int k = 0; k < LEN(goldens); k++) {
		const struct golden *g = &goldens[k];
		seed_model *m = model(g->json, g->O, g->A, g->T * g->B);
		if (!m)
			continue;
		CHECK(seed_model_state_floats(m) == 2 * g->H);
		for (const core_golden_param *p = g->params; p->name; p++) {
			const seed_model_param *t = seed_model_param_find(m, p->name);
			CHECK_MSG(t && t->numel == p->numel, "%s: tensor %s", g->name, p->name);
			if (t && t->numel == p->numel)
				memcpy(seed_model_params(m) + t->offset, p->data, p->numel * sizeof(float));
		}
		size_t rows = (size_t)g->T * g->B, S = 2 * (size_t)g->H;
		float *out = calloc(rows * g->A, sizeof *out), *values = calloc(rows, sizeof *values);
		float *state = calloc(g->B * S, sizeof *state);
		seed_model_seq s = {g->T, g->B, g->obs, g->reward, g->action, g->reset, g->state0, state};
		CHECK(fwd(m, &s, out, values) == 0);
		compare(g->name, g->dueling ? "q" : "logits", out, g->out, rows * g->A);
		if (!g->dueling)
			compare(g->name, "values", values, g->values, rows);
		compare(g->name, "state_out", state, g->state_out, g->B * S);
		free(out);
		free(values);
		free(state);
		seed_model_free(&m);
	}
}

/* Deterministic pseudo-random floats in [-1, 1) without seed_rng's help. */
static float frand(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((double)(*x >> 11) / (double)(1ull << 52) - 1.0);
}

/* L = sum out * cout + sum values * cvalues after a forward over s. */
static double loss(seed_model *m, const seed_model_seq *s, const float *cout, const float *cvalues,
                   float *out, float *values)
{
	fwd(m, s, out, values);
	size_t rows = (size_t)s->T * s->B, A = (size_t)seed_model_num_actions(m);
	double L = 0;
	for (size_t i = 0; i < rows * A; i++)
		L += (double)cout[i] * out[i];
	if (seed_model_head_kind(m) != SEED_HEAD_DUELING)
		for (size_t i = 0; i < rows; i++)
			L += (double)cvalues[i] * values[i];
	return L;
}

/* Every parameter of torso, core and heads: backward_seq against central
 * differences, over T = 4 steps of B = 3 rows from a nonzero state, with a
 * reset in the middle, the previous reward and action on. */
static void grad_check(const char *head)
{
	enum { T = 4, B = 3, O = 3, A = 3, ROWS = T * B };
	char json[512];
	snprintf(
	    json, sizeof json,
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 5}, {\"type\": \"tanh\"},"
	    " {\"type\": \"linear\", \"out\": 4}, {\"type\": \"relu\"}],"
	    " \"core\": {\"type\": \"lstm\", \"units\": 3, \"prev_reward\": true, \"prev_action\": true},"
	    " \"head\": \"%s\", \"init\": \"pytorch\"}",
	    head);
	seed_model *m = model(json, O, A, ROWS);
	if (!m)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	seed_model_init(m, &rng);
	uint64_t x = 99;
	float *p = seed_model_params(m);
	size_t np = seed_model_num_params(m);
	/* Biases away from zero, so that no relu sits on its kink. */
	for (size_t j = 0; j < np; j++)
		p[j] += 0.1f * frand(&x);
	float obs[ROWS * O], reward[ROWS], state0[B * 6], cout[ROWS * A], cval[ROWS];
	float out[ROWS * A], values[ROWS];
	int32_t action[ROWS];
	uint8_t reset[ROWS] = {0};
	for (int i = 0; i < ROWS * O; i++)
		obs[i] = 2 * frand(&x);
	for (int i = 0; i < ROWS; i++) {
		reward[i] = 1.5f * frand(&x);
		action[i] = (int32_t)(i % (A + 1)) - (i % 5 == 0); /* -1 .. A-1, some A */
		cval[i] = frand(&x);
	}
	for (int i = 0; i < B * 6; i++)
		state0[i] = frand(&x);
	for (int i = 0; i < ROWS * A; i++)
		cout[i] = frand(&x);
	reset[2 * B + 1] = 1; /* row 1 starts anew before step 2 */
	seed_model_seq s = {T, B, obs, reward, action, reset, state0, NULL};
	seed_model_zero_grad(m);
	CHECK(fwd(m, &s, out, values) == 0);
	int rc = strcmp(head, "dueling") == 0 ? seed_model_backward_seq_q(m, cout)
	                                      : seed_model_backward_seq(m, cout, cval);
	CHECK(rc == 0);
	const float *g = seed_model_grads(m);
	int bad = 0;
	double worst = 0;
	for (size_t j = 0; j < np; j++) {
		const float h = 1e-2f;
		float save = p[j];
		p[j] = save + h;
		double lp = loss(m, &s, cout, cval, out, values);
		p[j] = save - h;
		double lm = loss(m, &s, cout, cval, out, values);
		p[j] = save;
		double num = (lp - lm) / (2 * (double)h);
		worst = fmax(worst, fabs(num - g[j]));
		if (fabs(num - g[j]) > 2e-3 + 2e-2 * fabs(num) && bad++ < 5) {
			const char *name = "?";
			for (int t = 0; t < seed_model_num_tensors(m); t++) {
				const seed_model_param *q = seed_model_param_at(m, t);
				if (j >= q->offset && j < q->offset + q->numel)
					name = q->name;
			}
			printf("# %s: %s[%zu]: backward %.6g, central differences %.6g\n", head, name, j,
			       (double)g[j], num);
		}
	}
	CHECK(bad == 0);
	printf("# %s: %zu parameters, worst difference %.3g\n", head, np, worst);
	seed_model_free(&m);
}

static void t_grad_actor_critic(void)
{
	grad_check("actor-critic");
}

static void t_grad_dueling(void)
{
	grad_check("dueling");
}

/* Layers wide enough for the SIMD kernels where the CPU has them (a
 * linear layer of 256 inputs or more, seed_model(3)): the torso's last
 * layer fused with its relu below the core, the head on a 256-unit core.
 * Central differences of parameters sampled from every tensor. */
static void t_grad_wide(void)
{
	enum { T = 3, B = 2, O = 8, A = 4, ROWS = T * B, H = 256 };
	seed_model *m = model("{\"torso\": [{\"type\": \"linear\", \"out\": 300}, {\"type\": \"relu\"},"
	                      " {\"type\": \"linear\", \"out\": 256}, {\"type\": \"relu\"}],"
	                      " \"core\": {\"type\": \"lstm\", \"units\": 256, \"prev_action\": true},"
	                      " \"init\": \"pytorch\"}",
	                      O, A, ROWS);
	if (!m)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 11, 0);
	seed_model_init(m, &rng);
	uint64_t x = 17;
	float obs[ROWS * O], state0[B * 2 * H], cout[ROWS * A], cval[ROWS], out[ROWS * A], values[ROWS];
	int32_t action[ROWS];
	uint8_t reset[ROWS] = {0};
	for (int i = 0; i < ROWS * O; i++)
		obs[i] = 2 * frand(&x);
	for (int i = 0; i < ROWS; i++) {
		action[i] = i % A;
		cval[i] = frand(&x);
	}
	for (int i = 0; i < B * 2 * H; i++)
		state0[i] = 0.5f * frand(&x);
	for (int i = 0; i < ROWS * A; i++)
		cout[i] = frand(&x);
	reset[B + 1] = 1;
	seed_model_seq s = {T, B, obs, NULL, action, reset, state0, NULL};
	seed_model_zero_grad(m);
	CHECK(seed_model_forward_seq(m, &s, out, values) == 0);
	CHECK(seed_model_backward_seq(m, cout, cval) == 0);
	float *p = seed_model_params(m);
	const float *g = seed_model_grads(m);
	int bad = 0, checked = 0, skipped = 0;
	double worst = 0;
	for (int t = 0; t < seed_model_num_tensors(m); t++) {
		const seed_model_param *q = seed_model_param_at(m, t);
		for (int k = 0; k < 8; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			size_t j = q->offset + (size_t)(x >> 33) % q->numel;
			double num[2];
			float save = p[j];
			for (int e = 0; e < 2; e++) {
				const float h = e ? 5e-3f : 1e-2f;
				p[j] = save + h;
				double lp = loss(m, &s, cout, cval, out, values);
				p[j] = save - h;
				double lm = loss(m, &s, cout, cval, out, values);
				p[j] = save;
				num[e] = (lp - lm) / (2 * (double)h);
			}
			/* A relu's kink within the step: the two steps disagree. */
			if (fabs(num[0] - num[1]) > 1e-3 + 1e-2 * fabs(num[1])) {
				skipped++;
				continue;
			}
			worst = fmax(worst, fabs(num[0] - g[j]));
			checked++;
			if (fabs(num[0] - g[j]) > 2e-3 + 2e-2 * fabs(num[0]) && bad++ < 5)
				printf("# %s[%zu]: backward %.6g, central differences %.6g\n", q->name,
				       j - q->offset, (double)g[j], num[0]);
		}
	}
	CHECK(bad == 0);
	CHECK_MSG(skipped * 4 <= checked, "%d skipped near a kink, %d checked", skipped, checked);
	printf("# %d parameters of %d tensors checked, %d skipped near a kink, worst difference %.3g\n",
	       checked, seed_model_num_tensors(m), skipped, worst);
	seed_model_free(&m);
}

/* One forward_seq over T steps equals T calls of one step chaining
 * state_out -> state0 (inference's use), and a burn-in call followed by the
 * rest (R2D2's). */
static void t_state_continuity(void)
{
	enum { T = 5, B = 2, O = 3, A = 2, H = 4, S = 2 * H, ROWS = T * B };
	seed_model *m = model("{\"torso\": [{\"type\": \"linear\", \"out\": 6}, {\"type\": \"relu\"}],"
	                      " \"core\": {\"type\": \"lstm\", \"units\": 4, \"prev_reward\": true,"
	                      " \"prev_action\": true}}",
	                      O, A, ROWS);
	if (!m)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 3, 0);
	seed_model_init(m, &rng);
	uint64_t x = 5;
	float obs[ROWS * O], reward[ROWS], state0[B * S];
	int32_t action[ROWS];
	uint8_t reset[ROWS] = {0};
	for (int i = 0; i < ROWS * O; i++)
		obs[i] = frand(&x);
	for (int i = 0; i < ROWS; i++) {
		reward[i] = frand(&x);
		action[i] = i % A;
	}
	for (int i = 0; i < B * S; i++)
		state0[i] = frand(&x);
	reset[3 * B + 0] = 1;
	float lg[ROWS * A], v[ROWS], st[B * S];
	seed_model_seq s = {T, B, obs, reward, action, reset, state0, st};
	CHECK(seed_model_forward_seq(m, &s, lg, v) == 0);

	float lg1[ROWS * A], v1[ROWS], cur[B * S], next[B * S];
	memcpy(cur, state0, sizeof cur);
	for (int t = 0; t < T; t++) {
		seed_model_seq s1 = {
		    1, B, obs + (size_t)t * B * O, reward + t * B, action + t * B, reset + t * B, cur, next};
		CHECK(seed_model_forward_seq(m, &s1, lg1 + t * B * A, v1 + t * B) == 0);
		memcpy(cur, next, sizeof cur);
	}
	double worst = 0;
	for (int i = 0; i < ROWS * A; i++)
		worst = fmax(worst, fabs(lg[i] - lg1[i]));
	for (int i = 0; i < ROWS; i++)
		worst = fmax(worst, fabs(v[i] - v1[i]));
	for (int i = 0; i < B * S; i++)
		worst = fmax(worst, fabs(st[i] - cur[i]));
	CHECK_MSG(worst <= 1e-6, "one call against %d chained calls: %.3g", T, worst);

	/* Burn-in of 2 steps, then 3 from its state: the same last 3 steps. */
	float mid[B * S], lg2[3 * B * A], v2[3 * B];
	seed_model_seq burn = {2, B, obs, reward, action, reset, state0, mid};
	CHECK(seed_model_forward_seq(m, &burn, NULL, NULL) == 0);
	seed_model_seq rest = {3,   B,  obs + 2 * B * O, reward + 2 * B, action + 2 * B, reset + 2 * B,
	                       mid, cur};
	CHECK(seed_model_forward_seq(m, &rest, lg2, v2) == 0);
	worst = 0;
	for (int i = 0; i < 3 * B * A; i++)
		worst = fmax(worst, fabs(lg2[i] - lg[2 * B * A + i]));
	for (int i = 0; i < 3 * B; i++)
		worst = fmax(worst, fabs(v2[i] - v[2 * B + i]));
	for (int i = 0; i < B * S; i++)
		worst = fmax(worst, fabs(st[i] - cur[i]));
	CHECK_MSG(worst <= 1e-6, "burn-in then the rest: %.3g", worst);

	/* state_out may be state0's buffer: the chain in place. */
	memcpy(cur, state0, sizeof cur);
	for (int t = 0; t < T; t++) {
		seed_model_seq s1 = {
		    1, B, obs + (size_t)t * B * O, reward + t * B, action + t * B, reset + t * B, cur, cur};
		CHECK(seed_model_forward_seq(m, &s1, lg1 + t * B * A, v1 + t * B) == 0);
	}
	worst = 0;
	for (int i = 0; i < B * S; i++)
		worst = fmax(worst, fabs(st[i] - cur[i]));
	CHECK_MSG(worst <= 1e-6, "in place: %.3g", worst);

	/* A reset at step 0 ignores state0: the same as a zero state0. */
	uint8_t r0[ROWS] = {0};
	r0[0] = r0[1] = 1;
	float la[ROWS * A], lb[ROWS * A];
	seed_model_seq sa = {T, B, obs, reward, action, r0, state0, NULL};
	seed_model_seq sb = {T, B, obs, reward, action, NULL, NULL, NULL};
	CHECK(seed_model_forward_seq(m, &sa, la, NULL) == 0);
	CHECK(seed_model_forward_seq(m, &sb, lb, NULL) == 0);
	CHECK(memcmp(la, lb, sizeof la) == 0);
	seed_model_free(&m);
}

/* Without a core, forward_seq over T*B rows is seed_model_forward of the
 * same rows and backward_seq its backward; nothing of the state is read
 * or written. */
static void t_no_core_is_forward(void)
{
	enum { T = 3, B = 4, O = 5, A = 3, ROWS = T * B };
	static const char *const heads[] = {"actor-critic", "dueling"};
	for (int h = 0; h < 2; h++) {
		char json[256];
		snprintf(json, sizeof json,
		         "{\"torso\": [{\"type\": \"linear\", \"out\": 7}, {\"type\": \"tanh\"}],"
		         " \"head\": \"%s\"}",
		         heads[h]);
		seed_model *m = model(json, O, A, ROWS);
		if (!m)
			continue;
		CHECK(seed_model_state_floats(m) == 0);
		seed_rng rng;
		seed_rng_init(&rng, 1, 0);
		seed_model_init(m, &rng);
		uint64_t x = 8;
		float obs[ROWS * O], d[ROWS * A], dv[ROWS], a[ROWS * A], av[ROWS], b[ROWS * A], bv[ROWS];
		for (int i = 0; i < ROWS * O; i++)
			obs[i] = frand(&x);
		for (int i = 0; i < ROWS * A; i++)
			d[i] = frand(&x);
		for (int i = 0; i < ROWS; i++)
			dv[i] = frand(&x);
		float untouched = 12345.0f;
		uint8_t reset[ROWS] = {1, 0, 1};
		seed_model_seq s = {T, B, obs, dv, (const int32_t *)NULL, reset, NULL, &untouched};
		size_t np = seed_model_num_params(m);
		float *g1 = malloc(np * sizeof *g1);
		seed_model_zero_grad(m);
		if (h == 0) {
			CHECK(seed_model_forward(m, ROWS, obs, a, av) == 0);
			CHECK(seed_model_backward(m, ROWS, d, dv) == 0);
		} else {
			CHECK(seed_model_forward_q(m, ROWS, obs, a) == 0);
			CHECK(seed_model_backward_q(m, ROWS, d) == 0);
		}
		memcpy(g1, seed_model_grads(m), np * sizeof *g1);
		seed_model_zero_grad(m);
		if (h == 0) {
			CHECK(seed_model_forward_seq(m, &s, b, bv) == 0);
			CHECK(seed_model_backward_seq(m, d, dv) == 0);
			CHECK(memcmp(av, bv, sizeof av) == 0);
		} else {
			CHECK(seed_model_forward_seq_q(m, &s, b) == 0);
			CHECK(seed_model_backward_seq_q(m, d) == 0);
		}
		CHECK(memcmp(a, b, sizeof a) == 0);
		CHECK(memcmp(g1, seed_model_grads(m), np * sizeof *g1) == 0);
		CHECK(untouched == 12345.0f);
		free(g1);
		seed_model_free(&m);
	}
}

/* seed_model_forward on a model with a core is one step from a zero state
 * with no previous reward or action; its backward is the one-step
 * backward_seq; after a longer sequence the plain backward refuses. */
static void t_plain_calls_with_core(void)
{
	enum { B = 3, O = 2, A = 2, H = 3 };
	seed_model *m = model("{\"torso\": [{\"type\": \"linear\", \"out\": 4}],"
	                      " \"core\": {\"type\": \"lstm\", \"units\": 3, \"prev_reward\": true,"
	                      " \"prev_action\": true}}",
	                      O, A, 4 * B);
	if (!m)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 2, 0);
	seed_model_init(m, &rng);
	float obs[4 * B * O], a[B * A], av[B], b[B * A], bv[B], zero[B * 2 * H] = {0};
	uint64_t x = 4;
	for (int i = 0; i < 4 * B * O; i++)
		obs[i] = frand(&x);
	int32_t none[B] = {-1, -1, -1};
	float r0[B] = {0};
	CHECK(seed_model_forward(m, B, obs, a, av) == 0);
	seed_model_seq s = {1, B, obs, r0, none, NULL, zero, NULL};
	CHECK(seed_model_forward_seq(m, &s, b, bv) == 0);
	CHECK(memcmp(a, b, sizeof a) == 0 && memcmp(av, bv, sizeof av) == 0);
	size_t np = seed_model_num_params(m);
	float *g1 = malloc(np * sizeof *g1);
	seed_model_zero_grad(m);
	CHECK(seed_model_forward(m, B, obs, a, av) == 0);
	CHECK(seed_model_backward(m, B, a, av) == 0);
	memcpy(g1, seed_model_grads(m), np * sizeof *g1);
	seed_model_zero_grad(m);
	CHECK(seed_model_forward_seq(m, &s, b, bv) == 0);
	CHECK(seed_model_backward_seq(m, a, av) == 0);
	CHECK(memcmp(g1, seed_model_grads(m), np * sizeof *g1) == 0);
	/* The core's parameters got gradient. */
	const seed_model_param *k = seed_model_param_find(m, "core.kernel");
	double sum = 0;
	for (size_t j = 0; k && j < k->numel; j++)
		sum += fabs(seed_model_grads(m)[k->offset + j]);
	CHECK(sum > 0);
	free(g1);
	/* Four steps of B rows: the plain backward (B rows) is not for it. */
	float l4[4 * B * A], d4[4 * B * A] = {0};
	seed_model_seq s4 = {4, B, obs, NULL, NULL, NULL, NULL, NULL};
	CHECK(seed_model_forward_seq(m, &s4, l4, NULL) == 0);
	CHECK(seed_model_backward(m, B, d4, NULL) == -EINVAL);
	CHECK(seed_model_backward(m, 4 * B, d4, NULL) == -EINVAL);
	CHECK(seed_model_backward_seq(m, d4, NULL) == 0);
	seed_model_free(&m);
}

/* Bad arguments: -EINVAL, nothing run. */
static void t_errors(void)
{
	seed_model *m = model("{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 2}}", 2, 2, 6);
	if (!m)
		return;
	float obs[14 * 2] = {0}, out[14 * 2], v[14];
	CHECK(seed_model_backward_seq(m, NULL, NULL) == -EINVAL); /* no forward yet */
	seed_model_seq s = {3, 2, obs, NULL, NULL, NULL, NULL, NULL};
	CHECK(seed_model_forward_seq_q(m, &s, out) == -EINVAL); /* not a dueling head */
	CHECK(seed_model_backward_seq_q(m, NULL) == -EINVAL);
	CHECK(seed_model_forward_seq(m, NULL, out, v) == -EINVAL);
	s.T = 0;
	CHECK(seed_model_forward_seq(m, &s, out, v) == -EINVAL);
	s.T = 3, s.B = 0;
	CHECK(seed_model_forward_seq(m, &s, out, v) == -EINVAL);
	s.T = 7, s.B = 2; /* 14 rows of 6 */
	CHECK(seed_model_forward_seq(m, &s, out, v) == -EINVAL);
	s.T = 3, s.obs = NULL;
	CHECK(seed_model_forward_seq(m, &s, out, v) == -EINVAL);
	/* Room for 14 rows: then it runs, and backward follows. */
	seed_err err = {{0}};
	CHECK(seed_model_reserve(m, 14, &err) == 0);
	s.T = 7, s.obs = obs;
	CHECK(seed_model_forward_seq(m, &s, out, v) == 0);
	CHECK(seed_model_backward_seq(m, out, v) == 0);
	seed_model_free(&m);
}

/* Each bad "core" names what is wrong. */
static void t_parse_errors(void)
{
	static const struct {
		const char *core, *want;
	} cases[] = {
	    {"[]", "key \"core\" must be an object"},
	    {"{\"units\": 4}", "core: key \"type\" is missing"},
	    {"{\"type\": \"gru\", \"units\": 4}", "core: key \"type\" must be \"lstm\""},
	    {"{\"type\": \"lstm\"}", "core (lstm): key \"units\" is missing"},
	    {"{\"type\": \"lstm\", \"units\": 0}", "key \"units\" must be an integer in 1..4096"},
	    {"{\"type\": \"lstm\", \"units\": 4097}", "key \"units\" must be an integer in 1..4096"},
	    {"{\"type\": \"lstm\", \"units\": \"8\"}", "key \"units\" must be an integer"},
	    {"{\"type\": \"lstm\", \"units\": 2.5}", "key \"units\" must be an integer"},
	    {"{\"type\": \"lstm\", \"units\": 4, \"unit\": 4}", "core: unknown key \"unit\""},
	    {"{\"type\": \"lstm\", \"units\": 4, \"prev_reward\": 1}",
	     "key \"prev_reward\" must be true or false"},
	    {"{\"type\": \"lstm\", \"units\": 4, \"prev_action\": \"yes\"}",
	     "key \"prev_action\" must be true or false"},
	};
	for (int i = 0; i < LEN(cases); i++) {
		char json[256];
		snprintf(json, sizeof json, "{\"torso\": [{\"type\": \"linear\", \"out\": 3}], \"core\": %s}",
		         cases[i].core);
		seed_model *m = NULL;
		seed_err err = {{0}};
		int rc = seed_model_new(&m, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, 2, 4, &err);
		CHECK_MSG(rc == -SEED_EOPTION && m == NULL, "%s: rc %d", cases[i].core, rc);
		CHECK_MSG(strstr(err.msg, cases[i].want), "%s: \"%s\", want \"%s\"", cases[i].core, err.msg,
		          cases[i].want);
	}
	/* The core needs a rank-1 torso output, like the heads. */
	seed_model *m = NULL;
	seed_err err = {{0}};
	CHECK(seed_model_new(&m, "{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 2}}",
	                     SEED_DTYPE_U8, 3, (int64_t[]){4, 4, 1}, 2, 4, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "end the torso with a flatten layer"), "%s", err.msg);
	/* A misspelt top-level key lists "core" among those expected. */
	CHECK(seed_model_new(&m, "{\"torso\": [], \"cores\": {}}", SEED_DTYPE_F32, 1, (int64_t[]){2}, 2, 4,
	                     &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "unknown key \"cores\"") && strstr(err.msg, "\"core\""), "%s", err.msg);
}

/* The slab: torso, core (Keras names and shapes), heads reading H; the
 * summary shows the core; init is Keras's for the core. */
static void t_param_table(void)
{
	enum { O = 6, D = 5, H = 4, A = 3, I = D + 1 + A };
	seed_model *m = model("{\"torso\": [{\"type\": \"linear\", \"out\": 5}, {\"type\": \"relu\"}],"
	                      " \"core\": {\"type\": \"lstm\", \"units\": 4, \"prev_reward\": true,"
	                      " \"prev_action\": true}, \"head\": \"dueling\"}",
	                      O, A, 8);
	if (!m)
		return;
	static const struct {
		const char *name;
		int rank;
		int64_t shape[2];
	} want[] = {
	    {"torso.0.weight", 2, {D, O}},  {"torso.0.bias", 1, {D}},
	    {"core.kernel", 2, {I, 4 * H}}, {"core.recurrent_kernel", 2, {H, 4 * H}},
	    {"core.bias", 1, {4 * H}},      {"advantage.weight", 2, {A, H}},
	    {"value.weight", 2, {1, H}},    {"advantage.bias", 1, {A}},
	    {"value.bias", 1, {1}},
	};
	CHECK(seed_model_num_tensors(m) == LEN(want));
	size_t off = 0;
	for (int i = 0; i < LEN(want) && i < seed_model_num_tensors(m); i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		CHECK_MSG(strcmp(p->name, want[i].name) == 0, "tensor %d is %s, want %s", i, p->name,
		          want[i].name);
		CHECK(p->rank == want[i].rank && p->shape[0] == want[i].shape[0] &&
		      (p->rank == 1 || p->shape[1] == want[i].shape[1]));
		CHECK_MSG(p->offset == off, "%s at %zu, want %zu", p->name, p->offset, off);
		off += p->numel;
	}
	CHECK(seed_model_num_params(m) == off);
	CHECK(seed_model_state_floats(m) == 2 * H);
	char buf[256];
	seed_model_summary(m, buf, sizeof buf);
	CHECK_MSG(strstr(buf, "linear(5) relu | lstm(4) +reward +action | dueling 3+1"), "%s", buf);

	seed_rng rng;
	seed_rng_init(&rng, 9, 0);
	seed_model_init(m, &rng);
	const float *p = seed_model_params(m);
	const seed_model_param *b = seed_model_param_find(m, "core.bias");
	const seed_model_param *u = seed_model_param_find(m, "core.recurrent_kernel");
	const seed_model_param *k = seed_model_param_find(m, "core.kernel");
	for (int j = 0; j < 4 * H; j++)
		CHECK(p[b->offset + j] == (j >= H && j < 2 * H ? 1.0f : 0.0f)); /* unit forget bias */
	for (int r = 0; r < H; r++)
		for (int q = 0; q < H; q++) {
			double d = 0;
			for (int j = 0; j < 4 * H; j++)
				d += (double)p[u->offset + r * 4 * H + j] * p[u->offset + q * 4 * H + j];
			CHECK_MSG(fabs(d - (r == q)) < 1e-5, "(u u^T)[%d][%d] = %.6g", r, q, d);
		}
	double lim = sqrt(6.0 / (I + 4 * H)), nz = 0;
	for (size_t j = 0; j < k->numel; j++) {
		CHECK(fabs(p[k->offset + j]) <= lim);
		nz += p[k->offset + j] != 0;
	}
	CHECK(nz > 0);
	/* Same generator state, same parameters. */
	seed_model *m2 = model("{\"torso\": [{\"type\": \"linear\", \"out\": 5}, {\"type\": \"relu\"}],"
	                       " \"core\": {\"type\": \"lstm\", \"units\": 4, \"prev_reward\": true,"
	                       " \"prev_action\": true}, \"head\": \"dueling\"}",
	                       O, A, 2);
	seed_rng_init(&rng, 9, 0);
	seed_model_init(m2, &rng);
	CHECK(memcmp(p, seed_model_params(m2), off * sizeof *p) == 0);
	seed_model_free(&m2);
	seed_model_free(&m);
}

/* A checkpoint of a model with a core names its tensors as the table does
 * and loads back into a fresh model bit for bit. */
static void t_checkpoint(void)
{
	const char *json = "{\"torso\": [{\"type\": \"linear\", \"out\": 4}],"
	                   " \"core\": {\"type\": \"lstm\", \"units\": 3, \"prev_action\": true}}";
	seed_model *m = model(json, 2, 2, 4), *m2 = model(json, 2, 2, 4);
	if (!m || !m2)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 4, 0);
	seed_model_init(m, &rng);
	int n = seed_model_num_tensors(m);
	seed_checkpoint_tensor *ts = calloc((size_t)n, sizeof *ts);
	for (int i = 0; i < n; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		ts[i].name = p->name;
		ts[i].tensor.dtype = SEED_DTYPE_F32;
		ts[i].tensor.rank = p->rank;
		memcpy(ts[i].tensor.shape, p->shape, sizeof p->shape);
		ts[i].tensor.data = seed_model_params(m) + p->offset;
	}
	seed_checkpoint ck = {.ntensors = (size_t)n, .tensors = ts};
	const char *dir = tmpdir_new();
	seed_err err = {{0}};
	CHECK_MSG(seed_checkpoint_save(dir, &ck, &err) == 0, "%s", err.msg);
	seed_checkpoint *got = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &got, &err) == 0, "%s", err.msg);
	if (got) {
		CHECK(seed_checkpoint_get(got, "core.kernel") &&
		      seed_checkpoint_get(got, "core.recurrent_kernel") &&
		      seed_checkpoint_get(got, "core.bias"));
		const seed_tensor *k = seed_checkpoint_get(got, "core.kernel");
		CHECK(k && k->rank == 2 && k->shape[0] == 4 + 2 && k->shape[1] == 12);
		CHECK_MSG(seed_checkpoint_load_model(got, m2, &err) == 0, "%s", err.msg);
		CHECK(memcmp(seed_model_params(m), seed_model_params(m2),
		             seed_model_num_params(m) * sizeof(float)) == 0);
	}
	seed_checkpoint_free(&got);
	tmpdir_remove(dir);
	free(ts);
	seed_model_free(&m);
	seed_model_free(&m2);
}

/* Neither forward_seq nor backward_seq allocates, for either head. */
static void t_no_allocation(void)
{
#if COUNT_ALLOCATIONS
	static const char *const jsons[] = {
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": \"relu\"}],"
	    " \"core\": {\"type\": \"lstm\", \"units\": 6, \"prev_reward\": true, \"prev_action\": true}}",
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": \"relu\"}],"
	    " \"core\": {\"type\": \"lstm\", \"units\": 6, \"prev_action\": true}, \"head\": \"dueling\"}",
	};
	enum { T = 5, B = 4, O = 3, A = 3, ROWS = T * B };
	for (int h = 0; h < 2; h++) {
		seed_model *m = model(jsons[h], O, A, ROWS);
		if (!m)
			continue;
		seed_rng rng;
		seed_rng_init(&rng, 1, 0);
		seed_model_init(m, &rng);
		float obs[ROWS * O] = {0}, out[ROWS * A], v[ROWS], st[B * 12], r[ROWS] = {0};
		int32_t act[ROWS] = {0};
		uint8_t reset[ROWS] = {0};
		reset[B] = 1;
		seed_model_seq s = {T, B, obs, r, act, reset, NULL, st};
		long taken = 0;
		for (int rep = 0; rep < 4; rep++) {
			long before = alloc_count;
			alloc_counting = rep >= 2; /* the first calls may load BLAS's threads */
			fwd(m, &s, out, v);
			if (h == 0)
				seed_model_backward_seq(m, out, v);
			else
				seed_model_backward_seq_q(m, out);
			s.state0 = st;
			alloc_counting = false;
			taken += alloc_count - before;
		}
		CHECK_MSG(taken == 0, "%ld allocations", taken);
		seed_model_free(&m);
	}
#else
	printf("# allocations not counted in this build\n");
#endif
}

int main(void)
{
	TAP_RUN(t_golden);
	TAP_RUN(t_grad_actor_critic);
	TAP_RUN(t_grad_dueling);
	TAP_RUN(t_grad_wide);
	TAP_RUN(t_state_continuity);
	TAP_RUN(t_no_core_is_forward);
	TAP_RUN(t_plain_calls_with_core);
	TAP_RUN(t_errors);
	TAP_RUN(t_parse_errors);
	TAP_RUN(t_param_table);
	TAP_RUN(t_checkpoint);
	TAP_RUN(t_no_allocation);
	return tap_done();
}
