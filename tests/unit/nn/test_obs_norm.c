/* test_obs_norm.c: running observation normalisation in a model (seed/nn.h
 * "obs_norm"): the statistics' updates against Gymnasium's RunningMeanStd
 * (goldens from tests/golden/obs_norm_ref.py), the normalisation in forward
 * against CleanRL's NormalizeObservation plus clip, both torsos and
 * backward against a model without it fed the normalised observations, the
 * parameter table (statistics first, their initial values, init drawing
 * nothing for them), optimizers leaving the statistics alone whatever the
 * weight decay or momentum (seed_model_trainable), the description's errors,
 * a checkpoint round trip, a population taking statistics of its own, and
 * the refusal of a GPU. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/checkpoint.h"
#include "seed/nn.h"
#include "seed/optim.h"
#include "seed/popnet.h"
#include "tap.h"
#include "tmpdir.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* tests/golden/obs_norm_ref.py's output: four batches of D = 3 values, the
 * statistics after each update, a probe batch and its normalised values
 * (clip 10, epsilon 1e-8) with the final statistics. */
static const int sizes[] = {1, 5, 4, 7};
static const float batch_obs[] = {
    5.79674006f,  -100.00563f,  0.25f,        6.17767f,     -99.9938049f,  0.25f,        5.08423615f,
    -99.9816284f, 0.25f,        1.858199f,    -99.9973145f, 0.25f,         7.00330973f,  -100.010742f,
    0.25f,        4.80424786f,  -100.006813f, 0.25f,        7.03365278f,   -100.011505f, -1.44146705f,
    2.08646345f,  -99.9983063f, 1.63132358f,  5.52717876f,  -99.9944382f,  -3.89669037f, 5.75052881f,
    -100.007729f, -2.64046383f, 6.90773964f,  -99.9924164f, -0.640961647f, 5.17124701f,  -100.00177f,
    0.395649582f, 2.16767859f,  -99.9939499f, -1.87610495f, 5.02275181f,   -100.006744f, 1.05810273f,
    8.88246918f,  -99.9845505f, -3.1127646f,  1.97368693f,  -99.9827957f,  1.7321434f,   6.63182211f,
    -100.008797f, -0.901997983f};
static const double gold_mean[][3] = {{5.7961604390403245, -99.995630930071059, 0.24997500249975002},
                                      {5.1206484534093111, -99.997655627858677, 0.24999583340277662},
                                      {5.1121715378724817, -99.999791170301194, -0.4847249195965071},
                                      {5.1693591133796373, -99.998172672025419, -0.4819519376713528}};
static const double gold_var[][3] = {{0.0034595375845095128, 1.0000126105112985, 0.00010623875118737501},
                                     {2.6443795286637006, 0.16677116109945495, 1.7708020838830922e-05},
                                     {2.9293410437432752, 0.10008920772105891, 2.4920533740036359},
                                     {3.9716391658899264, 0.058917332751564244, 2.4724320123008767}};
static const double gold_count[] = {1.0001, 6.0000999999999998, 10.0001, 17.0001};
static const float probe[] = {5.0f,  -100.0f,      0.0f, 40.0f,      -99.0f,      -30.0f,
                              -1.5f, -100.019997f, 2.5f, 1000000.0f, -1000000.0f, 0.125f};
static const double gold_y[] = {-0.084981360280295792,
                                -0.0075282655037266239,
                                0.30650781401473354,
                                10,
                                4.1122934678945251,
                                -10,
                                -3.3465645771438846,
                                -0.089910870203714549,
                                1.8964371724051539,
                                10,
                                -10,
                                0.38600428193425457};

enum { D = 3, NPROBE = 4 };

static seed_model *model_of(const char *json, int obs_n, int A, int max_batch)
{
	const int64_t shape[1] = {obs_n};
	seed_model *m = NULL;
	seed_err err = {{0}};
	int rc = seed_model_new(&m, json, SEED_DTYPE_F32, 1, shape, A, max_batch, &err);
	CHECK_MSG(rc == 0, "%s: %s", json, err.msg);
	return rc == 0 ? m : NULL;
}

static float *tensor(seed_model *m, const char *name, size_t n)
{
	const seed_model_param *p = seed_model_param_find(m, name);
	CHECK_MSG(p && p->numel == n, "tensor %s of %zu values", name, n);
	return p && p->numel == n ? seed_model_params(m) + p->offset : NULL;
}

/* The golden updates one by one, the rows handed over one byte off
 * alignment; the statistics after each against Gymnasium's, to the floats'
 * precision (the merge runs in double on the stored floats: a count that
 * started at 0 instead of 1e-4, a variance with ddof 1 or a mean not
 * weighted by the counts miss by orders of magnitude more). */
static void t_update_golden(void)
{
	seed_model *m = model_of("{\"torso\": [], \"obs_norm\": true}", D, 2, 8);
	if (!m)
		return;
	float *mean = tensor(m, "obs_norm.mean", D), *var = tensor(m, "obs_norm.var", D);
	float *count = tensor(m, "obs_norm.count", 1);
	if (!mean || !var || !count) {
		seed_model_free(&m);
		return;
	}
	unsigned char *buf = malloc(sizeof batch_obs + 1);
	const float *at = batch_obs;
	for (int u = 0; u < LEN(sizes); u++) {
		memcpy(buf + 1, at, (size_t)sizes[u] * D * sizeof *at);
		CHECK(seed_model_obs_norm_update(m, sizes[u], buf + 1) == 0);
		at += (size_t)sizes[u] * D;
		for (int j = 0; j < D; j++) {
			CHECK_NEAR(mean[j], gold_mean[u][j], 1e-6 * (1 + fabs(gold_mean[u][j])));
			CHECK_NEAR(var[j], gold_var[u][j], 1e-6 * gold_var[u][j]);
		}
		CHECK_NEAR(count[0], gold_count[u], 1e-6 * gold_count[u]);
	}
	/* Refusals leave the statistics as they are. */
	float keep[2 * D + 1];
	memcpy(keep, seed_model_params(m), sizeof keep);
	CHECK(seed_model_obs_norm_update(m, 0, batch_obs) == -EINVAL);
	CHECK(seed_model_obs_norm_update(m, -1, batch_obs) == -EINVAL);
	CHECK(seed_model_obs_norm_update(m, 1, NULL) == -EINVAL);
	CHECK(memcmp(keep, seed_model_params(m), sizeof keep) == 0);
	free(buf);
	seed_model_free(&m);
	seed_model *plain = model_of("{\"torso\": []}", D, 2, 8);
	if (plain)
		CHECK(seed_model_obs_norm_update(plain, 1, batch_obs) == -EINVAL);
	seed_model_free(&plain);
}

/* Observations wider than the columns merged at once: each column's
 * statistics are, bit for bit, those of a model of one column given that
 * column alone (columns are independent in RunningMeanStd). */
static void t_update_wide(void)
{
	enum { W = 130, R = 5 };
	seed_model *m = model_of("{\"torso\": [], \"obs_norm\": true}", W, 2, 1);
	seed_model *one = model_of("{\"torso\": [], \"obs_norm\": true}", 1, 2, 1);
	if (!m || !one) {
		seed_model_free(&m);
		seed_model_free(&one);
		return;
	}
	float x[R * W], col[R];
	for (int i = 0; i < R * W; i++)
		x[i] = (float)((i * 37) % 23) * 0.375f - (float)(i % W) * 0.5f;
	CHECK(seed_model_obs_norm_update(m, R, x) == 0);
	CHECK(seed_model_obs_norm_update(m, 2, x + W) == 0);
	const float *p = seed_model_params(m);
	for (int j = 0; j < W; j++) {
		float init[3] = {0.0f, 1.0f, 1e-4f};
		memcpy(seed_model_params(one), init, sizeof init);
		for (int r = 0; r < R; r++)
			col[r] = x[r * W + j];
		CHECK(seed_model_obs_norm_update(one, R, col) == 0);
		CHECK(seed_model_obs_norm_update(one, 2, col + 1) == 0);
		const float *q = seed_model_params(one);
		CHECK_MSG(p[j] == q[0] && p[W + j] == q[1], "column %d: %g %g, alone %g %g", j, (double)p[j],
		          (double)p[W + j], (double)q[0], (double)q[1]);
	}
	CHECK(p[2 * W] == seed_model_params(one)[2]);
	seed_model_free(&m);
	seed_model_free(&one);
}

/* Bring m's statistics to the golden final ones (all four updates). */
static void update_all(seed_model *m)
{
	const float *at = batch_obs;
	for (int u = 0; u < LEN(sizes); u++) {
		CHECK(seed_model_obs_norm_update(m, sizes[u], at) == 0);
		at += (size_t)sizes[u] * D;
	}
}

/* An empty torso and an identity policy layer: the logits are the
 * normalised observations themselves (A = D). */
static void identity_head(seed_model *m)
{
	float *w = tensor(m, "policy.weight", D * D), *b = tensor(m, "policy.bias", D);
	if (!w || !b)
		return;
	memset(w, 0, D * D * sizeof *w);
	memset(b, 0, D * sizeof *b);
	for (int j = 0; j < D; j++)
		w[j * D + j] = 1.0f;
}

/* The probe through forward against NormalizeObservation then np.clip,
 * with clip 10 (the default), then "clip": 2 (the golden values clipped
 * further: clip(clip(y, 10), 2) is clip(y, 2)). */
static void t_forward_golden(void)
{
	const char *json[] = {"{\"torso\": [], \"obs_norm\": true}",
	                      "{\"torso\": [], \"obs_norm\": {\"clip\": 2}}"};
	double clip[] = {10, 2};
	for (int k = 0; k < 2; k++) {
		seed_model *m = model_of(json[k], D, D, NPROBE);
		if (!m)
			continue;
		update_all(m);
		identity_head(m);
		float y[NPROBE * D];
		unsigned char *buf = malloc(sizeof probe + 3);
		memcpy(buf + 3, probe, sizeof probe);
		CHECK(seed_model_forward(m, NPROBE, buf + 3, y, NULL) == 0);
		for (int i = 0; i < NPROBE * D; i++) {
			double want = fmin(fmax(gold_y[i], -clip[k]), clip[k]);
			CHECK_NEAR(y[i], want, 1e-4);
		}
		free(buf);
		seed_model_free(&m);
	}
}

/* "epsilon" is added to the variance under the root: with var 0, an
 * epsilon of 0.25 divides by 0.5; a NaN stays NaN through the clip. */
static void t_forward_epsilon(void)
{
	seed_model *m =
	    model_of("{\"torso\": [], \"obs_norm\": {\"epsilon\": 0.25, \"clip\": 100}}", D, D, 2);
	if (!m)
		return;
	identity_head(m);
	float *mean = tensor(m, "obs_norm.mean", D), *var = tensor(m, "obs_norm.var", D);
	if (mean && var) {
		mean[0] = 1, mean[1] = -2, mean[2] = 0;
		var[0] = 0, var[1] = 0.75f, var[2] = 0;
	}
	/* The NaN in a row of its own: the identity head's products would
	 * spread it over the row. */
	float x[2 * D] = {3, 0, 0.5f, 0, 0, NAN}, y[2 * D];
	CHECK(seed_model_forward(m, 2, x, y, NULL) == 0);
	CHECK_NEAR(y[0], 4.0, 1e-6);
	CHECK_NEAR(y[1], 2.0, 1e-6);
	CHECK_NEAR(y[2], 1.0, 1e-6);
	CHECK(isnan(y[5]));
	seed_model_free(&m);
}

/* Observations wider than the columns normalised at once (130 values, as
 * Humanoid's 376 would be): every column with its own statistics, against
 * the formula written out here, rows of 2 through an identity head. */
static void t_forward_wide(void)
{
	enum { W = 130, R = 2 };
	const int64_t shape[1] = {W};
	seed_model *m = NULL;
	seed_err err = {{0}};
	CHECK_MSG(seed_model_new(&m, "{\"torso\": [], \"obs_norm\": true}", SEED_DTYPE_F32, 1, shape, W, R,
	                         &err) == 0,
	          "%s", err.msg);
	if (!m)
		return;
	float *w = tensor(m, "policy.weight", W * W), *b = tensor(m, "policy.bias", W);
	float *mean = tensor(m, "obs_norm.mean", W), *var = tensor(m, "obs_norm.var", W);
	if (!w || !b || !mean || !var) {
		seed_model_free(&m);
		return;
	}
	memset(w, 0, (size_t)W * W * sizeof *w);
	memset(b, 0, W * sizeof *b);
	float x[R * W], y[R * W];
	for (int j = 0; j < W; j++) {
		w[j * W + j] = 1.0f;
		mean[j] = (float)(j % 9) - 4.0f;
		var[j] = 0.25f * (float)(1 + j % 5);
		x[j] = 0.5f * (float)(j % 13) - 3.0f;
		x[W + j] = 8.0f * (float)(j % 7) - 24.0f; /* some beyond the clip */
	}
	CHECK(seed_model_forward(m, R, x, y, NULL) == 0);
	for (int i = 0; i < R * W; i++) {
		int j = i % W;
		double want = ((double)x[i] - mean[j]) / sqrt((double)var[j] + 1e-8);
		want = fmin(fmax(want, -10), 10);
		CHECK_NEAR(y[i], want, 1e-5 * (1 + fabs(want)));
	}
	seed_model_free(&m);
}

#define MLP "[{\"type\": \"linear\", \"out\": 5}, {\"type\": \"tanh\"}]"

/* Both torsos read the normalised observations, and backward goes through
 * them too: a model with obs_norm gives the logits, values and gradients of
 * the same model without it fed the observations normalised here (the
 * golden probe values: clipped rows included), and the statistics get no
 * gradient. */
static void t_torsos_and_backward(void)
{
	const char *with = "{\"torso\": " MLP ", \"critic_torso\": " MLP
	                   ", \"policy\": {\"type\": \"gaussian\"}, \"obs_norm\": true}";
	const char *without =
	    "{\"torso\": " MLP ", \"critic_torso\": " MLP ", \"policy\": {\"type\": \"gaussian\"}}";
	seed_model *m = model_of(with, D, 2, NPROBE), *t = model_of(without, D, 2, NPROBE);
	if (!m || !t) {
		seed_model_free(&m);
		seed_model_free(&t);
		return;
	}
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	seed_model_init(t, &rng);
	size_t first, count, P = seed_model_num_params(t);
	seed_model_trainable(m, &first, &count);
	CHECK(first == 2 * D + 1 && count == P);
	memcpy(seed_model_params(m) + first, seed_model_params(t), P * sizeof(float));
	update_all(m);
	float normed[NPROBE * D];
	for (int i = 0; i < NPROBE * D; i++)
		normed[i] = (float)gold_y[i];
	float la[NPROBE * 4], lb[NPROBE * 4], va[NPROBE], vb[NPROBE];
	CHECK(seed_model_forward(m, NPROBE, probe, la, va) == 0);
	CHECK(seed_model_forward(t, NPROBE, normed, lb, vb) == 0);
	for (int i = 0; i < NPROBE * 4; i++)
		CHECK_NEAR(la[i], lb[i], 1e-4);
	for (int i = 0; i < NPROBE; i++)
		CHECK_NEAR(va[i], vb[i], 1e-4);
	float dl[NPROBE * 4], dv[NPROBE];
	for (int i = 0; i < NPROBE * 4; i++)
		dl[i] = (float)(i % 5) * 0.5f - 1.0f;
	for (int i = 0; i < NPROBE; i++)
		dv[i] = (float)i - 1.5f;
	seed_model_zero_grad(m);
	seed_model_zero_grad(t);
	CHECK(seed_model_backward(m, NPROBE, dl, dv) == 0);
	CHECK(seed_model_backward(t, NPROBE, dl, dv) == 0);
	const float *ga = seed_model_grads(m), *gb = seed_model_grads(t);
	for (size_t i = 0; i < first; i++)
		CHECK_MSG(ga[i] == 0.0f, "statistics' gradient %zu is %g", i, (double)ga[i]);
	double worst = 0;
	for (size_t i = 0; i < P; i++)
		worst = fmax(worst, fabs((double)ga[first + i] - gb[i]) / (1 + fabs(gb[i])));
	CHECK_MSG(worst < 1e-4, "gradients differ by %g", worst);
	seed_model_free(&m);
	seed_model_free(&t);
}

/* The table: the statistics first, [D], [D], [1], at their initial values
 * from seed_model_new on (mean 0, var 1, count 1e-4 as Gymnasium starts);
 * the summary says so; without the key (or with false), none of it. */
static void t_param_table(void)
{
	seed_model *m =
	    model_of("{\"torso\": " MLP ", \"obs_norm\": {\"clip\": 5, \"epsilon\": 1e-6}}", 4, 2, 1);
	if (!m)
		return;
	const char *names[] = {"obs_norm.mean", "obs_norm.var", "obs_norm.count", "torso.0.weight"};
	size_t offs[] = {0, 4, 8, 9}, numel[] = {4, 4, 1, 20};
	for (int i = 0; i < 4; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		CHECK(p && strcmp(p->name, names[i]) == 0 && p->offset == offs[i] && p->numel == numel[i] &&
		      p->rank == (i < 3 ? 1 : 2));
	}
	const float *par = seed_model_params(m);
	for (int j = 0; j < 4; j++)
		CHECK(par[j] == 0.0f && par[4 + j] == 1.0f);
	CHECK(par[8] == 1e-4f);
	size_t first, count;
	seed_model_trainable(m, &first, &count);
	CHECK(first == 9 && count == seed_model_num_params(m) - 9);
	char line[256];
	seed_model_summary(m, line, sizeof line);
	CHECK_MSG(strncmp(line, "f32[4] obs_norm linear(5) tanh |", 32) == 0, "%s", line);
	seed_model_free(&m);
	const char *none[] = {"{\"torso\": " MLP "}", "{\"torso\": " MLP ", \"obs_norm\": false}"};
	for (int k = 0; k < 2; k++) {
		seed_model *n = model_of(none[k], 4, 2, 1);
		if (!n)
			continue;
		CHECK(seed_model_param_find(n, "obs_norm.mean") == NULL);
		seed_model_trainable(n, &first, &count);
		CHECK(first == 0 && count == seed_model_num_params(n));
		seed_model_summary(n, line, sizeof line);
		CHECK(strstr(line, "obs_norm") == NULL);
		seed_model_free(&n);
	}
}

/* seed_model_init puts the statistics back to their initial values and
 * draws nothing for them: every other parameter is, bit for bit, that of
 * the model without the key initialised from the same rng, for both
 * schemes and with a critic torso and a Gaussian's log-std. */
static void t_init(void)
{
	const char *bodies[] = {
	    "\"torso\": " MLP,
	    "\"torso\": " MLP ", \"init\": \"pytorch\"",
	    "\"torso\": " MLP ", \"critic_torso\": " MLP
	    ", \"policy\": {\"type\": \"gaussian\", \"log_std_init\": -0.5}",
	};
	for (int k = 0; k < LEN(bodies); k++) {
		char a[512], b[512];
		snprintf(a, sizeof a, "{%s, \"obs_norm\": true}", bodies[k]);
		snprintf(b, sizeof b, "{%s}", bodies[k]);
		seed_model *m = model_of(a, 6, 3, 1), *t = model_of(b, 6, 3, 1);
		if (!m || !t) {
			seed_model_free(&m);
			seed_model_free(&t);
			continue;
		}
		float *par = seed_model_params(m);
		for (int j = 0; j < 13; j++)
			par[j] = 42.0f; /* not the initial values */
		seed_rng r1, r2;
		seed_rng_init(&r1, 1234, 5);
		seed_rng_init(&r2, 1234, 5);
		seed_model_init(m, &r1);
		seed_model_init(t, &r2);
		size_t first, count;
		seed_model_trainable(m, &first, &count);
		CHECK(first == 13 && count == seed_model_num_params(t));
		par = seed_model_params(m);
		CHECK_MSG(memcmp(par + first, seed_model_params(t), count * sizeof(float)) == 0, "%s", a);
		for (int j = 0; j < 6; j++)
			CHECK(par[j] == 0.0f && par[6 + j] == 1.0f);
		CHECK(par[12] == 1e-4f);
		/* The rngs are where they would be: the same next draw. */
		CHECK(seed_rng_u64(&r1) == seed_rng_u64(&r2));
		seed_model_free(&m);
		seed_model_free(&t);
	}
}

/* Optimizer steps on a model leave the statistics and their state slots
 * bit for bit as they were, whatever the weight decay (L2 or decoupled) or
 * momentum, even with gradients written there by hand; and the trainable
 * range steps exactly as a slab of its own would. */
static void t_optim_skips_statistics(void)
{
	seed_optim_config cs[4];
	seed_optim_config_default(&cs[0], SEED_OPTIM_ADAM);
	cs[0].weight_decay = 0.1f;
	seed_optim_config_default(&cs[1], SEED_OPTIM_ADAM);
	cs[1].weight_decay = 0.5f;
	cs[1].decoupled_weight_decay = 1;
	seed_optim_config_default(&cs[2], SEED_OPTIM_RMSPROP);
	cs[2].momentum = 0.9f;
	cs[2].weight_decay = 0.1f;
	seed_optim_config_default(&cs[3], SEED_OPTIM_RMSPROP);
	cs[3].rmsprop_style = SEED_RMSPROP_TORCH;
	cs[3].momentum = 0.5f;
	cs[3].weight_decay = 0.1f;
	for (int k = 0; k < LEN(cs); k++) {
		seed_model *m = model_of("{\"torso\": " MLP ", \"obs_norm\": true}", D, 2, 4);
		if (!m)
			continue;
		seed_rng rng;
		seed_rng_init(&rng, 99, 0);
		seed_model_init(m, &rng);
		update_all(m); /* statistics of every kind of value */
		size_t P = seed_model_num_params(m), first, count;
		seed_model_trainable(m, &first, &count);
		seed_optim *o = NULL, *ref = NULL;
		seed_err err = {{0}};
		CHECK_MSG(seed_optim_new(&o, &cs[k], P, &err) == 0, "%s", err.msg);
		CHECK_MSG(seed_optim_new(&ref, &cs[k], count, &err) == 0, "%s", err.msg);
		if (!o || !ref) {
			seed_optim_free(&o);
			seed_optim_free(&ref);
			seed_model_free(&m);
			continue;
		}
		float stats[2 * D + 1], *own = malloc(count * sizeof *own),
		                        *state0 = malloc(P * 2 * sizeof *state0);
		memcpy(stats, seed_model_params(m), sizeof stats);
		memcpy(own, seed_model_params(m) + first, count * sizeof *own);
		memcpy(state0, seed_optim_state(o), seed_optim_state_size(o) * sizeof *state0);
		for (int step = 0; step < 3; step++) {
			float *g = seed_model_grads(m);
			for (size_t i = 0; i < P; i++)
				g[i] = (float)((i * 7 + (size_t)step) % 11) * 0.1f - 0.5f;
			CHECK(seed_optim_step_model(o, m, 1e-2f) == 0);
			CHECK(seed_optim_step(ref, own, seed_model_grads(m) + first, 1e-2f) == 0);
		}
		const float *par = seed_model_params(m);
		CHECK_MSG(memcmp(stats, par, sizeof stats) == 0, "config %d moved the statistics", k);
		CHECK_MSG(memcmp(own, par + first, count * sizeof *own) == 0, "config %d", k);
		CHECK(memcmp(par + first, own, count * sizeof *own) == 0 && par[first] != stats[0]);
		/* The statistics' state slots untouched too. */
		const float *st = seed_optim_state(o);
		for (int s = 0; s < seed_optim_slots(o); s++)
			CHECK(memcmp(st + (size_t)s * P, state0 + (size_t)s * P, first * sizeof *st) == 0);
		free(own);
		free(state0);
		seed_optim_free(&o);
		seed_optim_free(&ref);
		seed_model_free(&m);
	}
}

/* Bad descriptions: each refused with -SEED_EOPTION and a message naming
 * the key; observations that are not f32 vectors refused too. */
static void t_errors(void)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
	    {"{\"torso\": [], \"obs_norm\": 1}", "\"obs_norm\" must be true, false or an object"},
	    {"{\"torso\": [], \"obs_norm\": \"yes\"}", "\"obs_norm\" must be true, false or an object"},
	    {"{\"torso\": [], \"obs_norm\": {\"clip\": 0}}", "obs_norm: key \"clip\""},
	    {"{\"torso\": [], \"obs_norm\": {\"clip\": -3}}", "obs_norm: key \"clip\""},
	    {"{\"torso\": [], \"obs_norm\": {\"clip\": \"10\"}}", "obs_norm: key \"clip\""},
	    {"{\"torso\": [], \"obs_norm\": {\"epsilon\": 0}}", "obs_norm: key \"epsilon\""},
	    {"{\"torso\": [], \"obs_norm\": {\"epsilon\": 2}}", "obs_norm: key \"epsilon\""},
	    {"{\"torso\": [], \"obs_norm\": {\"eps\": 1e-8}}", "obs_norm: unknown key \"eps\""},
	};
	const int64_t vec[1] = {D};
	for (int i = 0; i < LEN(bad); i++) {
		seed_model *m = NULL;
		seed_err err = {{0}};
		int rc = seed_model_new(&m, bad[i].json, SEED_DTYPE_F32, 1, vec, 2, 1, &err);
		CHECK_MSG(rc == -SEED_EOPTION && !m && strstr(err.msg, bad[i].says), "%s: %d %s", bad[i].json,
		          rc, err.msg);
		seed_model_free(&m);
	}
	const int64_t img[3] = {10, 10, 4};
	const struct {
		seed_dtype dt;
		int rank;
		const int64_t *shape;
		const char *json;
	} obs[] = {
	    {SEED_DTYPE_U8, 3, img, "{\"torso\": [{\"type\": \"flatten\"}], \"obs_norm\": true}"},
	    {SEED_DTYPE_F32, 3, img, "{\"torso\": [{\"type\": \"flatten\"}], \"obs_norm\": true}"},
	    {SEED_DTYPE_U8, 1, vec, "{\"torso\": [], \"obs_norm\": {}}"},
	};
	for (int i = 0; i < LEN(obs); i++) {
		seed_model *m = NULL;
		seed_err err = {{0}};
		int rc = seed_model_new(&m, obs[i].json, obs[i].dt, obs[i].rank, obs[i].shape, 2, 1, &err);
		CHECK_MSG(rc == -SEED_EOPTION && !m &&
		              strstr(err.msg, "\"obs_norm\" needs f32 observations of rank 1"),
		          "%d: %s", i, err.msg);
		seed_model_free(&m);
	}
}

/* The statistics travel with the parameters: a checkpoint and a copy carry
 * them, and the copy normalises as the original does. */
static void t_checkpoint_and_copy(void)
{
	const char *json = "{\"torso\": " MLP ", \"obs_norm\": true}";
	seed_model *m = model_of(json, D, 2, NPROBE), *m2 = model_of(json, D, 2, NPROBE),
	           *m3 = model_of(json, D, 2, NPROBE);
	if (!m || !m2 || !m3) {
		seed_model_free(&m);
		seed_model_free(&m2);
		seed_model_free(&m3);
		return;
	}
	seed_rng rng;
	seed_rng_init(&rng, 5, 0);
	seed_model_init(m, &rng);
	update_all(m);
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
		const seed_tensor *c = seed_checkpoint_get(got, "obs_norm.count");
		CHECK(c && c->rank == 1 && c->shape[0] == 1);
		CHECK_MSG(seed_checkpoint_load_model(got, m2, &err) == 0, "%s", err.msg);
		CHECK(memcmp(seed_model_params(m), seed_model_params(m2),
		             seed_model_num_params(m) * sizeof(float)) == 0);
	}
	seed_checkpoint_free(&got);
	tmpdir_remove(dir);
	free(ts);
	CHECK(seed_model_copy_params(m3, m) == 0);
	float a[NPROBE * 2], b[NPROBE * 2];
	CHECK(seed_model_forward(m, NPROBE, probe, a, NULL) == 0);
	CHECK(seed_model_forward(m3, NPROBE, probe, b, NULL) == 0);
	CHECK(memcmp(a, b, sizeof a) == 0);
	seed_model_free(&m);
	seed_model_free(&m2);
	seed_model_free(&m3);
}

/* A population keeps statistics of its own (its members' would be moved
 * by the noise: seed_popnet_obs_norm, tests/unit/nn/test_popnet.c checks
 * its forward), of the model's D only.  A GPU (the CUDA backend has no
 * normalisation) refuses: -ENOTSUP with a device, -ENODEV without one;
 * either way the model stays on the CPU. */
static void t_refusals(void)
{
	const int64_t shape[1] = {D};
	seed_popnet *net = NULL;
	seed_err err = {{0}};
	CHECK_MSG(seed_popnet_new(&net, "{\"torso\": [], \"obs_norm\": true}", SEED_DTYPE_F32, 1, shape, 2, 4,
	                          &err) == 0,
	          "%s", err.msg);
	if (net) {
		float mean[D + 1] = {0}, var[D + 1] = {0};
		CHECK(seed_popnet_obs_norm(net, D, mean, var, &err) == 0);
		CHECK(seed_popnet_obs_norm(net, D + 1, mean, var, &err) == -EINVAL &&
		      strstr(err.msg, "\"obs_norm\""));
		seed_popnet_free(&net);
	}
	seed_model *m = model_of("{\"torso\": [], \"obs_norm\": true}", D, 2, 1);
	if (!m)
		return;
	memset(&err, 0, sizeof err);
	int rc = seed_model_set_device(m, "cuda", &err);
	CHECK_MSG(rc == -ENOTSUP || rc == -ENODEV, "%d: %s", rc, err.msg);
	if (rc == -ENOTSUP)
		CHECK_MSG(strstr(err.msg, "\"obs_norm\""), "%s", err.msg);
	CHECK(strcmp(seed_model_device(m), "cpu") == 0);
	seed_model_free(&m);
}

int main(void)
{
	TAP_RUN(t_update_golden);
	TAP_RUN(t_update_wide);
	TAP_RUN(t_forward_golden);
	TAP_RUN(t_forward_epsilon);
	TAP_RUN(t_forward_wide);
	TAP_RUN(t_torsos_and_backward);
	TAP_RUN(t_param_table);
	TAP_RUN(t_init);
	TAP_RUN(t_optim_skips_statistics);
	TAP_RUN(t_errors);
	TAP_RUN(t_checkpoint_and_copy);
	TAP_RUN(t_refusals);
	return tap_done();
}
