/* test_popnet.c: the forward pass of networks sharing a layout
 * (seed/popnet.h) against its definition, with no evolution in sight: for
 * every row, seed_model_forward (cpu.c, an independent forward) of a model
 * loaded with the row's member's parameters.  Full rank with members'
 * parameters written in place; low rank with a centre and each member's
 * slice and scale, the reference parameters built here from the layout
 * seed/popnet.h gives (A B^T / sqrt(r) for 2-D tensors, the floats as they
 * are for the others); members with no rows; acting; a model with
 * "obs_norm" normalising with the popnet's statistics, not its members';
 * the errors and the set protocol (nothing runs before ready, or after
 * drop). */
#include "seed/popnet.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/policy.h"
#include "member_ref.h"
#include "tap.h"

typedef struct shape_case {
	const char *name, *json;
	seed_dtype dtype;
	int rank;
	int64_t shape[3];
	int A;
} shape_case;

static const shape_case cases[] = {
    {"mlp",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 16}, {\"type\": \"tanh\"}]}",
     SEED_DTYPE_F32,
     1,
     {5},
     3},
    {"conv-dueling",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3}, {\"type\": \"relu\"}, {\"type\": "
     "\"flatten\"}, {\"type\": \"linear\", \"out\": 12}, {\"type\": \"relu\"}], \"head\": \"dueling\"}",
     SEED_DTYPE_U8,
     3,
     {6, 5, 2},
     4},
};

#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define ROWS 23
#define M 5
#define R 2

static void random_obs(const shape_case *c, int rows, void *obs, seed_rng *rng)
{
	size_t numel = 1;
	for (int i = 0; i < c->rank; i++)
		numel *= (size_t)c->shape[i];
	for (size_t i = 0; i < (size_t)rows * numel; i++) {
		if (c->dtype == SEED_DTYPE_U8)
			((uint8_t *)obs)[i] = (uint8_t)(seed_rng_u64(rng) % 4);
		else
			((float *)obs)[i] = (float)seed_rng_uniform(rng, -2.0, 2.0);
	}
}

/* The popnet's logits against ref's loaded with params (M, P) per row's
 * member: the largest error relative to the logits' scale. */
static double compare(const shape_case *c, seed_popnet *net, seed_model *ref, const float *params,
                      const void *obs, const int32_t *member)
{
	float got[ROWS * 8];
	CHECK(c->A <= 8);
	seed_err err = {{0}};
	int rc = seed_popnet_forward(net, ROWS, obs, member, got, &err);
	CHECK_MSG(rc == 0, "%s: %s", c->name, err.msg);
	return rc == 0 ? member_ref_error(ref, params, ROWS, obs, member, got) : INFINITY;
}

/* Floats of a low-rank slice for ref's layout at rank r. */
static size_t slice_len(const seed_model *ref, int r)
{
	size_t q = 0;
	for (int t = 0; t < seed_model_num_tensors(ref); t++) {
		const seed_model_param *tp = seed_model_param_at(ref, t);
		q += tp->rank == 2 ? (size_t)(tp->shape[0] + tp->shape[1]) * (size_t)r : tp->numel;
	}
	return q;
}

/* The parameters of a low-rank member, from the definition: centre plus
 * scale A B^T / sqrt(r) for 2-D tensors, plus scale e for the others. */
static void lowrank_params(const seed_model *ref, const float *centre, const float *slice, float scale, int r,
                           float *out)
{
	const float *src = slice;
	for (int t = 0; t < seed_model_num_tensors(ref); t++) {
		const seed_model_param *tp = seed_model_param_at(ref, t);
		const float *cen = centre + tp->offset;
		float *o = out + tp->offset;
		if (tp->rank != 2) {
			for (size_t i = 0; i < tp->numel; i++)
				o[i] = cen[i] + scale * src[i];
			src += tp->numel;
			continue;
		}
		int64_t d0 = tp->shape[0], d1 = tp->shape[1];
		const float *A = src, *B = src + d0 * r;
		for (int64_t i = 0; i < d0; i++)
			for (int64_t j = 0; j < d1; j++) {
				double s = 0;
				for (int k = 0; k < r; k++)
					s += (double)A[i * r + k] * B[j * r + k];
				o[i * d1 + j] = cen[i * d1 + j] + (float)(scale * s / sqrt((double)r));
			}
		src += (d0 + d1) * r;
	}
}

static void t_forward(void)
{
	for (int ci = 0; ci < NCASES; ci++) {
		const shape_case *c = &cases[ci];
		seed_popnet *net = NULL;
		seed_model *ref = NULL;
		seed_err err = {{0}};
		CHECK_MSG(seed_popnet_new(&net, c->json, c->dtype, c->rank, c->shape, c->A, ROWS, &err) == 0,
		          "%s: %s", c->name, err.msg);
		CHECK(seed_model_new(&ref, c->json, c->dtype, c->rank, c->shape, c->A, 1, NULL) == 0);
		if (!net || !ref) {
			seed_popnet_free(&net);
			seed_model_free(&ref);
			continue;
		}
		size_t P = seed_popnet_num_params(net);
		CHECK(P == seed_model_num_params(ref));
		CHECK(seed_popnet_obs_bytes(net) == seed_model_obs_bytes(ref));
		CHECK(seed_popnet_num_actions(net) == c->A);
		CHECK(seed_model_num_params(seed_popnet_model(net)) == P);
		seed_rng rng;
		seed_rng_init(&rng, 5 + (uint64_t)ci, 0);
		unsigned char obs[ROWS * 60 * 4];
		random_obs(c, ROWS, obs, &rng);
		int32_t member[ROWS];
		for (int r = 0; r < ROWS; r++)
			member[r] = (int32_t)(seed_rng_u64(&rng) % (M - 1)); /* member M - 1 has no rows */
		/* Full rank: each member an initialisation of its own. */
		float *params = malloc((size_t)M * P * sizeof *params);
		float *room = seed_popnet_full(net, M);
		for (int m = 0; m < M; m++) {
			seed_model_init(ref, &rng);
			memcpy(params + (size_t)m * P, seed_model_params(ref), P * sizeof *params);
			memcpy(room + (size_t)m * P, params + (size_t)m * P, P * sizeof *params);
		}
		seed_popnet_ready(net);
		double e = compare(c, net, ref, params, obs, member);
		CHECK_MSG(e < 1e-4, "%s full rank: error %g", c->name, e);
		/* Low rank: a centre, each member a slice and a scale. */
		float *centre = malloc(P * sizeof *centre);
		seed_model_init(ref, &rng);
		memcpy(centre, seed_model_params(ref), P * sizeof *centre);
		size_t Q = slice_len(ref, R);
		float *slices = malloc((size_t)M * Q * sizeof *slices);
		for (size_t i = 0; i < (size_t)M * Q; i++)
			slices[i] = (float)seed_rng_normal(&rng);
		seed_popnet_lowrank(net, M, R, centre);
		for (int m = 0; m < M; m++) {
			float scale = (m % 2 ? -1.0f : 1.0f) * 0.05f;
			seed_popnet_lowrank_member(net, m, slices + (size_t)m * Q, scale);
			lowrank_params(ref, centre, slices + (size_t)m * Q, scale, R, params + (size_t)m * P);
		}
		seed_popnet_ready(net);
		e = compare(c, net, ref, params, obs, member);
		CHECK_MSG(e < 1e-4, "%s low rank: error %g", c->name, e);
		/* Acting greedily is the argmax of the logits. */
		float logits[ROWS * 8];
		int32_t act[ROWS], want[ROWS];
		CHECK(seed_popnet_forward(net, ROWS, obs, member, logits, NULL) == 0);
		CHECK(seed_popnet_act(net, ROWS, obs, member, true, NULL, act, NULL) == 0);
		seed_policy_argmax(ROWS, c->A, logits, want);
		CHECK(memcmp(act, want, sizeof act) == 0);
		free(params);
		free(centre);
		free(slices);
		seed_popnet_free(&net);
		seed_popnet_free(&net);
		seed_model_free(&ref);
	}
}

static void t_errors(void)
{
	const shape_case *c = &cases[0];
	seed_popnet *net = NULL;
	seed_err err = {{0}};
	CHECK(seed_popnet_new(&net, c->json, c->dtype, c->rank, c->shape, c->A, 8, &err) == 0);
	if (!net)
		return;
	float obs[8 * 5] = {0}, logits[8 * 3];
	int32_t member[8] = {0, 1, 0, 1, 0, 1, 0, 1};
	CHECK(seed_popnet_forward(net, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "no generation"));
	/* Room given but not ready: still nothing to run. */
	float *room = seed_popnet_full(net, 2);
	memset(room, 0, 2 * seed_popnet_num_params(net) * sizeof *room);
	CHECK(seed_popnet_forward(net, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "no generation"));
	seed_popnet_ready(net);
	CHECK(seed_popnet_forward(net, 8, obs, member, logits, &err) == 0);
	CHECK(seed_popnet_forward(net, 9, obs, member, logits, &err) == -EINVAL && strstr(err.msg, "9 rows"));
	member[3] = 2;
	CHECK(seed_popnet_forward(net, 8, obs, member, logits, &err) == -EINVAL && strstr(err.msg, "row 3"));
	member[3] = 1;
	seed_popnet_drop(net);
	CHECK(seed_popnet_forward(net, 8, obs, member, logits, &err) == -EINVAL &&
	      strstr(err.msg, "no generation"));
	seed_popnet_free(&net);
	const char *lstm = "{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 3}}";
	CHECK(seed_popnet_new(&net, lstm, SEED_DTYPE_F32, 1, c->shape, 2, 8, &err) == -EINVAL &&
	      strstr(err.msg, "recurrent"));
	CHECK(seed_popnet_new(&net, c->json, c->dtype, c->rank, c->shape, c->A, 0, &err) == -EINVAL);
	CHECK(seed_popnet_new(&net, "{\"torso\": 3}", c->dtype, c->rank, c->shape, c->A, 8, &err) ==
	      -SEED_EOPTION);
	CHECK(net == NULL);
}

/* Writes mean and var (NULL: 0 and 1) over the obs_norm.mean and
 * obs_norm.var of each of the M members' parameters. */
static void put_stats(const seed_model *ref, float *params, const float *mean, const float *var)
{
	size_t P = seed_model_num_params(ref);
	size_t om = seed_model_param_find(ref, "obs_norm.mean")->offset;
	size_t ov = seed_model_param_find(ref, "obs_norm.var")->offset;
	for (int m = 0; m < M; m++)
		for (int j = 0; j < seed_model_obs_norm_dim(ref); j++) {
			params[(size_t)m * P + om + (size_t)j] = mean ? mean[j] : 0.0f;
			params[(size_t)m * P + ov + (size_t)j] = var ? var[j] : 1.0f;
		}
}

/* "obs_norm": rows normalised with seed_popnet_obs_norm's statistics, in
 * full and low rank, whatever the members' slabs hold in their obs_norm.*
 * tensors (random values here, far from any statistics); the reference is
 * the model with the popnet's statistics written into each member's slab.
 * Then the refusals, which leave the statistics as they were. */
static void t_obs_norm(void)
{
	const shape_case c = {"obs-norm",
	                      "{\"torso\": [{\"type\": \"linear\", \"out\": 16}, {\"type\": \"tanh\"}], "
	                      "\"obs_norm\": {\"clip\": 1.5, \"epsilon\": 0.001}}",
	                      SEED_DTYPE_F32,
	                      1,
	                      {5},
	                      3};
	seed_popnet *net = NULL;
	seed_model *ref = NULL;
	seed_err err = {{0}};
	CHECK_MSG(seed_popnet_new(&net, c.json, c.dtype, c.rank, c.shape, c.A, ROWS, &err) == 0, "%s",
	          err.msg);
	CHECK(seed_model_new(&ref, c.json, c.dtype, c.rank, c.shape, c.A, 1, NULL) == 0);
	if (!net || !ref)
		goto out;
	size_t P = seed_popnet_num_params(net);
	seed_rng rng;
	seed_rng_init(&rng, 31, 0);
	float obs[ROWS * 5];
	random_obs(&c, ROWS, obs, &rng);
	int32_t member[ROWS];
	for (int r = 0; r < ROWS; r++)
		member[r] = (int32_t)seed_rng_below(&rng, M);
	const float mean[5] = {1.0f, -0.5f, 0.25f, 0.0f, -2.0f}, var[5] = {0.5f, 2.0f, 0.0f, 9.0f, 0.125f};
	/* Full rank, members' obs_norm.* entries random. */
	float *params = malloc((size_t)M * P * sizeof *params);
	float *room = seed_popnet_full(net, M);
	for (int m = 0; m < M; m++) {
		seed_model_init(ref, &rng);
		for (size_t i = 0; i < 11; i++) /* obs_norm.mean, .var, .count: the first 2 D + 1 */
			seed_model_params(ref)[i] = (float)seed_rng_uniform(&rng, 0.5, 3.0);
		memcpy(room + (size_t)m * P, seed_model_params(ref), P * sizeof *room);
		memcpy(params + (size_t)m * P, seed_model_params(ref), P * sizeof *params);
	}
	seed_popnet_ready(net);
	/* Until given, mean 0 and var 1. */
	put_stats(ref, params, NULL, NULL);
	double e = compare(&c, net, ref, params, obs, member);
	CHECK_MSG(e < 1e-4, "full rank, no statistics: error %g", e);
	CHECK_MSG(seed_popnet_obs_norm(net, 5, mean, var, &err) == 0, "%s", err.msg);
	put_stats(ref, params, mean, var);
	e = compare(&c, net, ref, params, obs, member);
	CHECK_MSG(e < 1e-4, "full rank: error %g", e);
	/* Low rank: the slices move the centre's obs_norm.* too. */
	float *centre = malloc(P * sizeof *centre);
	seed_model_init(ref, &rng);
	memcpy(centre, seed_model_params(ref), P * sizeof *centre);
	size_t Q = slice_len(ref, R);
	float *slices = malloc((size_t)M * Q * sizeof *slices);
	for (size_t i = 0; i < (size_t)M * Q; i++)
		slices[i] = (float)seed_rng_normal(&rng);
	seed_popnet_lowrank(net, M, R, centre);
	for (int m = 0; m < M; m++) {
		seed_popnet_lowrank_member(net, m, slices + (size_t)m * Q, 0.5f);
		lowrank_params(ref, centre, slices + (size_t)m * Q, 0.5f, R, params + (size_t)m * P);
	}
	seed_popnet_ready(net);
	put_stats(ref, params, mean, var); /* kept across the set */
	e = compare(&c, net, ref, params, obs, member);
	CHECK_MSG(e < 1e-4, "low rank: error %g", e);
	/* Refusals leave the statistics: the same outputs to the bit. */
	float before[ROWS * 3], after[ROWS * 3], bad[5];
	CHECK(seed_popnet_forward(net, ROWS, obs, member, before, NULL) == 0);
	CHECK(seed_popnet_obs_norm(net, 4, mean, var, &err) == -EINVAL && strstr(err.msg, "4 features") &&
	      strstr(err.msg, "D = 5"));
	CHECK(seed_popnet_obs_norm(net, 5, mean, NULL, &err) == -EINVAL && strstr(err.msg, "var NULL"));
	CHECK(seed_popnet_obs_norm(net, 0, mean, NULL, &err) == -EINVAL && strstr(err.msg, "mean given"));
	CHECK(seed_popnet_obs_norm(net, -1, NULL, NULL, &err) == -EINVAL && strstr(err.msg, "-1 features"));
	memcpy(bad, var, sizeof bad);
	bad[2] = -1e-6f;
	CHECK(seed_popnet_obs_norm(net, 5, mean, bad, &err) == -EINVAL && strstr(err.msg, "var[2]"));
	bad[2] = INFINITY;
	CHECK(seed_popnet_obs_norm(net, 5, mean, bad, &err) == -EINVAL && strstr(err.msg, "var[2]"));
	memcpy(bad, mean, sizeof bad);
	bad[4] = NAN;
	CHECK(seed_popnet_obs_norm(net, 5, bad, var, &err) == -EINVAL && strstr(err.msg, "mean[4]"));
	CHECK(seed_popnet_forward(net, ROWS, obs, member, after, NULL) == 0);
	CHECK(memcmp(before, after, sizeof before) == 0);
	/* D 0 resets them. */
	CHECK(seed_popnet_obs_norm(net, 0, NULL, NULL, &err) == 0);
	put_stats(ref, params, NULL, NULL);
	e = compare(&c, net, ref, params, obs, member);
	CHECK_MSG(e < 1e-4, "low rank, reset: error %g", e);
	free(params);
	free(centre);
	free(slices);
	seed_popnet_free(&net);
	/* A model without "obs_norm" takes no statistics (D 0 is fine). */
	CHECK(seed_popnet_new(&net, cases[0].json, cases[0].dtype, cases[0].rank, cases[0].shape, cases[0].A,
	                      8, NULL) == 0);
	if (net) {
		CHECK(seed_popnet_obs_norm(net, 0, NULL, NULL, &err) == 0);
		CHECK(seed_popnet_obs_norm(net, 5, mean, var, &err) == -EINVAL &&
		      strstr(err.msg, "without \"obs_norm\""));
	}
out:
	seed_popnet_free(&net);
	seed_model_free(&ref);
}

int main(void)
{
	TAP_RUN(t_forward);
	TAP_RUN(t_obs_norm);
	TAP_RUN(t_errors);
	return tap_done();
}
