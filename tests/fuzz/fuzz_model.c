/* tests/fuzz/fuzz_model.c: a libFuzzer target for model descriptions.
 *
 * The input is a model's JSON description (seed/nn.h, what a configuration's
 * "model" holds and a params frame carries to seed-infer).  It is built
 * twice, for the observations of CartPole (f32 [4], 2 actions) and of
 * MinAtar (u8 [10,10,4], 6 actions), and a model that builds is initialised
 * and run forward and backward on a batch of 3.  Sizes are bounded here,
 * not in the library: a description whose "out", "filters" or "kernel" (or
 * its core's "units") ask for more than 64 (within the ranges the library
 * allows) is skipped, so that one input cannot allocate gigabytes, and one
 * of more than MAX_PARAMS parameters is built but not run.  Besides "no crash, no leak, no
 * undefined behaviour", it checks properties:
 *   - a refused description gets a message and an error code of the
 *     contract (-SEED_EOPTION for the description, -EINVAL for sizes);
 *   - a built model's tensors tile its parameter slab in order, without
 *     gaps, each named once, with the heads last (policy.weight [Ph, in],
 *     value.weight [1, in] (a critic torso's width instead of in),
 *     policy.bias [Ph], value.bias [1], then a Gaussian policy's
 *     policy.log_std [A] if it has one; Ph is A, or 2A for a Gaussian's
 *     "state" log-stds; a dueling head's advantage.* in policy's places),
 *     and the logits as wide as seed_model_policy_width says;
 *   - the summary line fits what it says it needs, and ends with the
 *     parameter count;
 *   - with "obs_norm", its statistics come first at their initial values,
 *     outside seed_model_trainable's range, get no gradient, and an update
 *     on the batch keeps them finite (without it, the update is refused);
 *   - forward and backward succeed on the batch, and the same parameters
 *     give the same outputs bit for bit (a second model, parameters copied);
 *   - with a recurrent core, a sequence of 3 steps (forward_seq with a reset
 *     and a state, then backward_seq) runs, and one call over the 3 steps
 *     ends in the state that 3 chained one-step calls end in.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "seed/nn.h"
#include "seed/rng.h"

#define LIMIT 64
/* A model of more parameters is built and checked, not run: each input
 * should take milliseconds (a conv2d of 62 filters of 9 x 9 over 46
 * channels, 231K weights, took 1.2 s to initialise and run under the
 * sanitizers, and timed out a loaded long run). */
#define MAX_PARAMS 100000

/* Whether every "out", "filters" and "kernel" of the torso and the critic
 * torso that the library would take is at most LIMIT (values it refuses
 * are kept: their errors are worth reaching). */
static bool small_list(json_t *torso)
{
	bool ok = true;
	for (size_t i = 0; ok && i < json_array_size(torso); i++) {
		json_t *layer = json_array_get(torso, i);
		json_t *out = json_object_get(layer, "out"), *filters = json_object_get(layer, "filters");
		/* A padding lets a kernel be larger than the observation (up
		 * to 4096): its weights and outputs grow with its square. */
		json_t *kernel = json_object_get(layer, "kernel");
		if (json_is_integer(kernel) && json_integer_value(kernel) > LIMIT &&
		    json_integer_value(kernel) <= 4096)
			ok = false;
		if (json_is_integer(out) && json_integer_value(out) > LIMIT &&
		    json_integer_value(out) <= 1 << 20)
			ok = false;
		if (json_is_integer(filters) && json_integer_value(filters) > LIMIT &&
		    json_integer_value(filters) <= 1 << 16)
			ok = false;
	}
	return ok;
}

static bool small_enough(const char *json)
{
	json_t *root = json_loads(json, 0, NULL);
	bool ok = json_is_object(root) ? small_list(json_object_get(root, "torso")) &&
	                                     small_list(json_object_get(root, "critic_torso"))
	                               : true;
	json_t *core = json_is_object(root) ? json_object_get(root, "core") : NULL;
	json_t *units = json_is_object(core) ? json_object_get(core, "units") : NULL;
	if (json_is_integer(units) && json_integer_value(units) > LIMIT)
		ok = false;
	json_decref(root);
	return ok;
}

static void check_layout(seed_model *m, int A)
{
	size_t off = 0;
	int n = seed_model_num_tensors(m);
	REQUIRE(n >= 4 && seed_model_param_at(m, n) == NULL && seed_model_param_at(m, -1) == NULL);
	for (int i = 0; i < n; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		REQUIRE(p->offset == off && p->rank >= 1 && p->rank <= 4);
		size_t numel = 1;
		for (int d = 0; d < p->rank; d++) {
			REQUIRE(p->shape[d] >= 1);
			numel *= (size_t)p->shape[d];
		}
		REQUIRE(p->numel == numel);
		REQUIRE(seed_model_param_find(m, p->name) == p);
		off += numel;
	}
	REQUIRE(off == seed_model_num_params(m));
	/* "obs_norm": its statistics first, at their initial values, and
	 * outside the trainable range, which is the rest of the slab. */
	size_t first, count;
	seed_model_trainable(m, &first, &count);
	REQUIRE(first + count == seed_model_num_params(m));
	const seed_model_param *mean = seed_model_param_find(m, "obs_norm.mean");
	if (mean) {
		size_t D = mean->numel;
		const seed_model_param *var = seed_model_param_at(m, 1), *cnt = seed_model_param_at(m, 2);
		REQUIRE(mean == seed_model_param_at(m, 0) && strcmp(var->name, "obs_norm.var") == 0 &&
		        var->numel == D && strcmp(cnt->name, "obs_norm.count") == 0 && cnt->numel == 1 &&
		        first == 2 * D + 1);
		const float *p = seed_model_params_read(m);
		for (size_t j = 0; j < D; j++)
			REQUIRE(p[j] == 0.0f && p[D + j] == 1.0f);
		REQUIRE(p[2 * D] == 1e-4f);
	} else {
		REQUIRE(first == 0);
	}
	/* A Gaussian policy's "parameter" log-stds come last, after the
	 * heads; its "state" log-stds double the policy layer's rows. */
	bool gauss = seed_model_policy_kind(m) == SEED_POLICY_GAUSSIAN;
	const seed_model_param *ls = seed_model_param_find(m, "policy.log_std");
	int P = seed_model_policy_width(m), Ph = gauss && !ls ? 2 * A : A;
	REQUIRE(P == (gauss ? 2 * A : A));
	REQUIRE(!ls || (gauss && ls == seed_model_param_at(m, n - 1) && ls->numel == (size_t)A));
	int h = n - (ls ? 1 : 0);
	REQUIRE(h >= 4);
	const seed_model_param *pw = seed_model_param_at(m, h - 4), *vw = seed_model_param_at(m, h - 3);
	const seed_model_param *pb = seed_model_param_at(m, h - 2), *vb = seed_model_param_at(m, h - 1);
	bool duel = seed_model_head_kind(m) == SEED_HEAD_DUELING;
	/* A critic torso's value head reads its own input width. */
	char probe[4096];
	bool critic =
	    seed_model_summary(m, probe, sizeof probe) < (int)sizeof probe && strstr(probe, " | critic");
	REQUIRE(strcmp(pw->name, duel ? "advantage.weight" : "policy.weight") == 0 && pw->rank == 2 &&
	        pw->shape[0] == Ph);
	REQUIRE(strcmp(vw->name, "value.weight") == 0 && vw->rank == 2 && vw->shape[0] == 1 &&
	        (critic || vw->shape[1] == pw->shape[1]));
	REQUIRE(strcmp(pb->name, duel ? "advantage.bias" : "policy.bias") == 0 && pb->numel == (size_t)Ph);
	REQUIRE(strcmp(vb->name, "value.bias") == 0 && vb->numel == 1);

	seed_squash sq = SEED_SQUASH_CLIP;
	REQUIRE((seed_model_squash(m, &sq) == 0) == gauss);
	char small[8], line[4096];
	int need = seed_model_summary(m, small, sizeof small);
	REQUIRE(need > 0 && strlen(small) == (size_t)(need < 7 ? need : 7));
	REQUIRE(seed_model_summary(m, line, sizeof line) == need);
	if ((size_t)need < sizeof line) {
		char tail[64];
		if (duel)
			snprintf(tail, sizeof tail, " | dueling %d+1 -> Q %d | %zu params", A, A,
			         seed_model_num_params(m));
		else if (gauss)
			snprintf(tail, sizeof tail, " | heads gaussian(%d,%s,%s)+1 | %zu params", A,
			         ls ? "parameter" : "state", sq == SEED_SQUASH_TANH ? "tanh" : "clip",
			         seed_model_num_params(m));
		else
			snprintf(tail, sizeof tail, " | heads %d+1 | %zu params", A,
			         seed_model_num_params(m));
		REQUIRE(strlen(line) >= strlen(tail) &&
		        strcmp(line + strlen(line) - strlen(tail), tail) == 0);
	}
}

static void build(const char *json, seed_dtype dt, int rank, const int64_t *shape, int A)
{
	enum { B = 3 };
	seed_model *m = NULL;
	seed_err err;
	err.msg[0] = '\0';
	int rc = seed_model_new(&m, json, dt, rank, shape, A, B, &err);
	if (rc != 0) {
		REQUIRE(rc == -SEED_EOPTION || rc == -EINVAL);
		REQUIRE_MESSAGE(err);
		REQUIRE(m == NULL);
		return;
	}
	check_layout(m, A);
	int P = seed_model_policy_width(m);
	if (seed_model_num_params(m) > MAX_PARAMS) {
		/* Parsed and laid out; too slow to run at fuzzing speed. */
		seed_model_free(&m);
		return;
	}
	seed_rng rng;
	seed_rng_init(&rng, 1, 0);
	seed_model_init(m, &rng);

	size_t obs_bytes = seed_model_obs_bytes(m);
	unsigned char *obs = malloc(B * obs_bytes);
	for (size_t i = 0; i < B * obs_bytes; i++)
		obs[i] = (unsigned char)(i * 37 % 11);
	if (dt == SEED_DTYPE_F32)
		for (size_t i = 0; i < B * obs_bytes / 4; i++)
			((float *)(void *)obs)[i] = (float)(i % 7) * 0.25f - 0.75f;
	float *logits = malloc((size_t)B * P * sizeof *logits), *values = malloc(B * sizeof *values);
	float *logits2 = malloc((size_t)B * P * sizeof *logits2), *values2 = malloc(B * sizeof *values2);
	bool duel = seed_model_head_kind(m) == SEED_HEAD_DUELING;
	REQUIRE(duel ? seed_model_forward_q(m, B, obs, logits) == 0
	             : seed_model_forward(m, B, obs, logits, values) == 0);
	float *dlogits = calloc((size_t)B * P, sizeof *dlogits), dvalues[B] = {1, -1, 0.5f};
	dlogits[0] = 1;
	REQUIRE(duel ? seed_model_backward_q(m, B, dlogits) == 0
	             : seed_model_backward(m, B, dlogits, dvalues) == 0);

	seed_model *twin = NULL;
	REQUIRE(seed_model_new(&twin, json, dt, rank, shape, A, 1, &err) == 0);
	REQUIRE(seed_model_reserve(twin, B, &err) == 0);
	REQUIRE(seed_model_copy_params(twin, m) == 0);
	REQUIRE(duel ? seed_model_forward_q(twin, B, obs, logits2) == 0
	             : seed_model_forward(twin, B, obs, logits2, values2) == 0);
	REQUIRE(memcmp(logits, logits2, (size_t)B * P * sizeof *logits) == 0);
	REQUIRE(duel || memcmp(values, values2, B * sizeof *values) == 0);

	/* The statistics get no gradient; an update merges the batch (the
	 * count grows by its rows, the variances stay finite and not
	 * negative), and forward runs on the new statistics. */
	size_t first, count;
	seed_model_trainable(m, &first, &count);
	const float *g = seed_model_grads(m);
	for (size_t i = 0; i < first; i++)
		REQUIRE(g[i] == 0.0f);
	int urc = seed_model_obs_norm_update(twin, B, obs);
	REQUIRE(first ? urc == 0 : urc == -EINVAL);
	if (first) {
		size_t D = (first - 1) / 2;
		const float *p = seed_model_params_read(twin);
		for (size_t j = 0; j < D; j++)
			REQUIRE(isfinite(p[D + j]) && p[D + j] >= 0.0f);
		REQUIRE(p[2 * D] == (float)((double)1e-4f + B));
		REQUIRE(duel ? seed_model_forward_q(twin, B, obs, logits2) == 0
		             : seed_model_forward(twin, B, obs, logits2, values2) == 0);
		REQUIRE(seed_model_copy_params(twin, m) == 0);
	}

	int S = seed_model_state_floats(m);
	REQUIRE(S >= 0 && S <= 2 * LIMIT);
	if (S > 0) {
		/* Three steps of one row: one call, then three chained. */
		float st0[2 * LIMIT], st[2 * LIMIT], a[2 * LIMIT], b[2 * LIMIT], rw[B] = {0.5f, -2, 1};
		int32_t act[B] = {1, -1, 7};
		uint8_t reset[B] = {0, 1, 0};
		for (int i = 0; i < S; i++)
			st0[i] = (float)(i % 5) * 0.1f - 0.2f;
		seed_model_seq s = {B, 1, obs, rw, act, reset, st0, a};
		REQUIRE(duel ? seed_model_forward_seq_q(m, &s, logits) == 0
		             : seed_model_forward_seq(m, &s, logits, values) == 0);
		REQUIRE(duel ? seed_model_backward_seq_q(m, dlogits) == 0
		             : seed_model_backward_seq(m, dlogits, dvalues) == 0);
		memcpy(st, st0, (size_t)S * sizeof *st);
		for (int t = 0; t < B; t++) {
			seed_model_seq s1 = {1, 1, obs + t * obs_bytes, rw + t, act + t, reset + t, st, b};
			REQUIRE(duel ? seed_model_forward_seq_q(twin, &s1, logits2) == 0
			             : seed_model_forward_seq(twin, &s1, logits2, values2) == 0);
			memcpy(st, b, (size_t)S * sizeof *st);
		}
		for (int i = 0; i < S; i++)
			REQUIRE(isnan(a[i]) ? isnan(st[i])
			                    : fabsf(a[i] - st[i]) <= 1e-4f * (1 + fabsf(a[i])));
	}

	free(obs);
	free(logits);
	free(values);
	free(logits2);
	free(values2);
	free(dlogits);
	seed_model_free(&twin);
	seed_model_free(&m);
	REQUIRE(m == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = malloc(size + 1);
	memcpy(json, data, size);
	json[size] = '\0';
	if (strlen(json) == size && small_enough(json)) {
		build(json, SEED_DTYPE_F32, 1, (const int64_t[]){4}, 2);
		build(json, SEED_DTYPE_U8, 3, (const int64_t[]){10, 10, 4}, 6);
	}
	free(json);
	return 0;
}
