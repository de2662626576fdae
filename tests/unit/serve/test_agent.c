/* test_agent.c: the acting agent (seed/agent.h).
 *
 * Goldens: a tiny model (3 inputs, linear(2) + relu, 3 actions) whose
 * parameters are binary fractions, so that every logit and value is exact in
 * f32; tests/golden/agent_ref.py computes them in plain Python (and the sampling
 * probabilities), and they were checked by hand.  The dtype conversion table
 * runs through an identity model (no torso, value = the single observation),
 * so a row's value is exactly what the conversion made of it.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/agent.h"
#include "seed/nn.h"
#include "seed/rng.h"
#include "tap.h"

static const char tiny_json[] = "{\"torso\": [{\"type\": \"linear\", \"out\": 2}, {\"type\": \"relu\"}]}";

/* In the model's slab order: torso.0.weight, torso.0.bias, policy.weight,
 * value.weight, policy.bias, value.bias (seed_model(3)). */
static const float tiny_params[] = {
    1.0f, -0.5f,  0.25f,  0.5f, 1.0f,  -1.0f, /* torso.0.weight [2, 3] */
    0.5f, -0.25f,                             /* torso.0.bias [2] */
    1.0f, 0.0f,   0.0f,   1.0f, -1.0f, 2.0f,  /* policy.weight [3, 2] */
    0.5f, -0.5f,                              /* value.weight [1, 2] */
    0.0f, 0.5f,   -0.25f,                     /* policy.bias [3] */
    1.0f,                                     /* value.bias [1] */
};

#define NROWS 5
static const float tiny_obs[NROWS][3] = {{1, 2, 4}, {0, 0, 0}, {2, 1, 3}, {0, 3, 1}, {0, 1, 0}};
/* tests/golden/agent_ref.py */
static const float tiny_logits[NROWS][3] = {{1.5f, 0.5f, -1.75f},
                                            {0.5f, 0.5f, -0.75f},
                                            {2.75f, 0.5f, -3.0f},
                                            {0.0f, 2.25f, 3.25f},
                                            {0.0f, 1.25f, 1.25f}};
static const float tiny_values[NROWS] = {1.75f, 1.25f, 2.375f, 0.125f, 0.625f};
/* The first largest logit: rows 1 and 4 have ties. */
static const int32_t tiny_greedy[NROWS] = {0, 0, 0, 2, 1};
/* softmax of row 3's logits */
static const double row3_probs[3] = {0.027564857816, 0.261528089329, 0.710907052855};

static seed_agent *tiny_agent(seed_dtype dt, int max_rows, bool greedy, uint64_t seed)
{
	seed_agent *a = NULL;
	seed_err err;
	int rc = seed_agent_new(&a, tiny_json, dt, 1, (int64_t[]){3}, 3, max_rows, greedy, seed, 7, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return NULL;
	rc = seed_agent_load_params(a, tiny_params, sizeof tiny_params, 42, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	return a;
}

static seed_tensor obs_view(const void *data, seed_dtype dt, int rows)
{
	return seed_tensor_view((void *)data, dt, 2, (int64_t[]){rows, 3});
}

static void t_act_greedy_golden(void)
{
	seed_agent *a = tiny_agent(SEED_DTYPE_F32, NROWS, true, 0);
	if (!a)
		return;
	int32_t actions[NROWS];
	float logits[NROWS][3], values[NROWS];
	seed_tensor obs = obs_view(tiny_obs, SEED_DTYPE_F32, NROWS);
	seed_err err;
	int rc = seed_agent_act(a, NROWS, &obs, actions, &logits[0][0], values, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	for (int r = 0; r < NROWS; r++) {
		CHECK_MSG(actions[r] == tiny_greedy[r], "row %d: action %d, want %d", r, actions[r],
		          tiny_greedy[r]);
		CHECK_NEAR(values[r], tiny_values[r], 0);
		for (int j = 0; j < 3; j++)
			CHECK_NEAR(logits[r][j], tiny_logits[r][j], 0);
	}
	CHECK(seed_agent_policy_version(a) == 42);
	CHECK(seed_agent_num_actions(a) == 3);
	CHECK(seed_agent_obs_dtype(a) == SEED_DTYPE_F32);
	/* Without logits and values: the same actions. */
	int32_t again[NROWS];
	rc = seed_agent_act(a, NROWS, &obs, again, NULL, NULL, &err);
	CHECK(rc == 0);
	CHECK(memcmp(again, actions, sizeof again) == 0);
	seed_agent_free(&a);
	CHECK(a == NULL);
	seed_agent_free(&a);
	seed_agent_free(NULL);
}

static void t_values_golden(void)
{
	seed_agent *a = tiny_agent(SEED_DTYPE_F32, 2, false, 0);
	if (!a)
		return;
	float values[NROWS];
	seed_tensor obs = obs_view(tiny_obs, SEED_DTYPE_F32, NROWS);
	seed_err err;
	int rc = seed_agent_values(a, NROWS, &obs, values, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	for (int r = 0; r < NROWS; r++)
		CHECK_NEAR(values[r], tiny_values[r], 0);
	seed_agent_free(&a);
}

/* Sampling follows softmax(logits): 12000 draws of row 3 against its
 * probabilities (4.5 standard deviations), the greedy agent always takes
 * the argmax, and the same seed gives the same draws. */
static void t_act_sampled(void)
{
	enum { N = 3000, CALLS = 4 };
	float(*obs)[3] = malloc(sizeof(float[N][3]));
	for (int r = 0; r < N; r++)
		memcpy(obs[r], tiny_obs[3], sizeof obs[r]);
	seed_tensor t = obs_view(obs, SEED_DTYPE_F32, N);
	seed_agent *a = tiny_agent(SEED_DTYPE_F32, N, false, 1);
	seed_agent *b = tiny_agent(SEED_DTYPE_F32, N, false, 1);
	seed_agent *g = tiny_agent(SEED_DTYPE_F32, N, true, 1);
	int32_t *act = malloc(N * sizeof *act), *act_b = malloc(N * sizeof *act_b);
	long counts[3] = {0};
	seed_err err;
	int same = 1;
	for (int c = 0; c < CALLS && a && b && g; c++) {
		CHECK(seed_agent_act(a, N, &t, act, NULL, NULL, &err) == 0);
		CHECK(seed_agent_act(b, N, &t, act_b, NULL, NULL, &err) == 0);
		same &= memcmp(act, act_b, N * sizeof *act) == 0;
		for (int r = 0; r < N; r++) {
			CHECK(act[r] >= 0 && act[r] < 3);
			if (act[r] >= 0 && act[r] < 3)
				counts[act[r]]++;
		}
		CHECK(seed_agent_act(g, N, &t, act_b, NULL, NULL, &err) == 0);
		for (int r = 0; r < N; r++)
			CHECK(act_b[r] == 2);
	}
	CHECK(same);
	double n = (double)N * CALLS;
	for (int j = 0; j < 3; j++) {
		double p = row3_probs[j], sd = sqrt(n * p * (1 - p));
		CHECK_NEAR((double)counts[j], n * p, 4.5 * sd);
	}
	/* Another seed draws differently. */
	seed_agent *d = tiny_agent(SEED_DTYPE_F32, N, false, 2);
	if (d && b) {
		CHECK(seed_agent_act(b, N, &t, act, NULL, NULL, &err) == 0);
		CHECK(seed_agent_act(d, N, &t, act_b, NULL, NULL, &err) == 0);
		CHECK(memcmp(act, act_b, N * sizeof *act) != 0);
	}
	seed_agent_free(&a);
	seed_agent_free(&b);
	seed_agent_free(&g);
	seed_agent_free(&d);
	free(act);
	free(act_b);
	free(obs);
}

/* A u8 model and other client dtypes give the golden results too. */
static void t_act_dtypes_golden(void)
{
	uint8_t u8[NROWS][3];
	double f64[NROWS][3];
	int64_t i64[NROWS][3];
	for (int r = 0; r < NROWS; r++)
		for (int j = 0; j < 3; j++) {
			u8[r][j] = (uint8_t)tiny_obs[r][j];
			f64[r][j] = tiny_obs[r][j];
			i64[r][j] = (int64_t)tiny_obs[r][j];
		}
	static const struct {
		const char *name;
		seed_dtype model, client;
	} cases[] = {
	    {"u8 to a u8 model", SEED_DTYPE_U8, SEED_DTYPE_U8},
	    {"f32 to a u8 model", SEED_DTYPE_U8, SEED_DTYPE_F32},
	    {"f64 to a u8 model", SEED_DTYPE_U8, SEED_DTYPE_F64},
	    {"u8 to an f32 model", SEED_DTYPE_F32, SEED_DTYPE_U8},
	    {"f64 to an f32 model", SEED_DTYPE_F32, SEED_DTYPE_F64},
	    {"i64 to an f32 model", SEED_DTYPE_F32, SEED_DTYPE_I64},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		seed_agent *a = tiny_agent(cases[c].model, NROWS, true, 0);
		if (!a)
			continue;
		const void *data = cases[c].client == SEED_DTYPE_U8    ? (const void *)u8
		                   : cases[c].client == SEED_DTYPE_F64 ? (const void *)f64
		                   : cases[c].client == SEED_DTYPE_I64 ? (const void *)i64
		                                                       : (const void *)tiny_obs;
		seed_tensor obs = obs_view(data, cases[c].client, NROWS);
		int32_t actions[NROWS];
		float logits[NROWS][3], values[NROWS];
		seed_err err;
		int rc = seed_agent_act(a, NROWS, &obs, actions, &logits[0][0], values, &err);
		CHECK_MSG(rc == 0, "%s: %s", cases[c].name, err.msg);
		CHECK(seed_agent_obs_dtype(a) == cases[c].model);
		for (int r = 0; r < NROWS && rc == 0; r++) {
			CHECK_MSG(actions[r] == tiny_greedy[r], "%s: row %d", cases[c].name, r);
			CHECK_MSG(values[r] == tiny_values[r], "%s: row %d", cases[c].name, r);
			for (int j = 0; j < 3; j++)
				CHECK_MSG(logits[r][j] == tiny_logits[r][j], "%s: row %d", cases[c].name, r);
		}
		seed_agent_free(&a);
	}
}

/* ---- the conversion rules ------------------------------------------------ */

/* An identity model: no torso, one observation, one action; value.weight 1
 * and value.bias 0, so the value is the converted observation. */
static seed_agent *identity_agent(seed_dtype model)
{
	seed_agent *a = NULL;
	seed_err err;
	int rc = seed_agent_new(&a, "{\"torso\": []}", model, 1, (int64_t[]){1}, 1, 2, true, 0, 0, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return NULL;
	/* policy.weight [1,1], value.weight [1,1], policy.bias [1], value.bias [1] */
	static const float p[4] = {0, 1, 0, 0};
	CHECK(seed_agent_load_params(a, p, sizeof p, 0, &err) == 0);
	return a;
}

typedef struct conv_case {
	const char *name;
	seed_dtype model, client;
	double value;   /* the client's value, as its dtype stores it */
	int64_t ivalue; /* ... for integer dtypes */
	int rc;         /* 0 or -ERANGE */
	float want;     /* the converted value when rc is 0 */
} conv_case;

#define F32 SEED_DTYPE_F32
#define U8 SEED_DTYPE_U8
static const conv_case conv_cases[] = {
    /* to an f32 model */
    {"u8 255 -> f32", F32, SEED_DTYPE_U8, 0, 255, 0, 255.0f},
    {"i8 -7 -> f32", F32, SEED_DTYPE_I8, 0, -7, 0, -7.0f},
    {"i32 2^24 -> f32", F32, SEED_DTYPE_I32, 0, 16777216, 0, 16777216.0f},
    {"i32 2^24+1 refused (not exact)", F32, SEED_DTYPE_I32, 0, 16777217, -ERANGE, 0},
    {"i32 -(2^24+2) -> f32 (exact)", F32, SEED_DTYPE_I32, 0, -16777218, 0, -16777218.0f},
    {"i32 INT32_MAX refused", F32, SEED_DTYPE_I32, 0, INT32_MAX, -ERANGE, 0},
    {"i64 2^40 -> f32", F32, SEED_DTYPE_I64, 0, (int64_t)1 << 40, 0, 1099511627776.0f},
    {"i64 2^53+1 refused", F32, SEED_DTYPE_I64, 0, ((int64_t)1 << 53) + 1, -ERANGE, 0},
    {"i64 INT64_MAX refused (rounds to 2^63)", F32, SEED_DTYPE_I64, 0, INT64_MAX, -ERANGE, 0},
    {"i64 INT64_MIN -> f32 (-2^63 is exact)", F32, SEED_DTYPE_I64, 0, INT64_MIN, 0, -0x1p63f},
    {"f64 -3.5 -> f32", F32, SEED_DTYPE_F64, -3.5, 0, 0, -3.5f},
    {"f64 0.1 -> nearest f32", F32, SEED_DTYPE_F64, 0.1, 0, 0, 0.1f},
    {"f64 FLT_MAX -> f32", F32, SEED_DTYPE_F64, FLT_MAX, 0, 0, FLT_MAX},
    {"f64 1e39 refused (out of f32's range)", F32, SEED_DTYPE_F64, 1e39, 0, -ERANGE, 0},
    {"f64 NaN refused", F32, SEED_DTYPE_F64, NAN, 0, -ERANGE, 0},
    {"f64 -inf refused", F32, SEED_DTYPE_F64, -INFINITY, 0, -ERANGE, 0},
    {"f32 2.5 as is", F32, SEED_DTYPE_F32, 2.5, 0, 0, 2.5f},
    /* to a u8 model */
    {"u8 9 as is", U8, SEED_DTYPE_U8, 0, 9, 0, 9.0f},
    {"f32 3.0 -> u8", U8, SEED_DTYPE_F32, 3.0, 0, 0, 3.0f},
    {"f32 255 -> u8", U8, SEED_DTYPE_F32, 255.0, 0, 0, 255.0f},
    {"f32 -0.0 -> u8 0", U8, SEED_DTYPE_F32, -0.0, 0, 0, 0.0f},
    {"f32 3.5 refused", U8, SEED_DTYPE_F32, 3.5, 0, -ERANGE, 0},
    {"f32 -1 refused", U8, SEED_DTYPE_F32, -1.0, 0, -ERANGE, 0},
    {"f32 256 refused", U8, SEED_DTYPE_F32, 256.0, 0, -ERANGE, 0},
    {"f32 NaN refused", U8, SEED_DTYPE_F32, NAN, 0, -ERANGE, 0},
    {"f64 200 -> u8", U8, SEED_DTYPE_F64, 200.0, 0, 0, 200.0f},
    {"f64 1e-300 refused", U8, SEED_DTYPE_F64, 1e-300, 0, -ERANGE, 0},
    {"i8 -1 refused", U8, SEED_DTYPE_I8, 0, -1, -ERANGE, 0},
    {"i8 127 -> u8", U8, SEED_DTYPE_I8, 0, 127, 0, 127.0f},
    {"i32 255 -> u8", U8, SEED_DTYPE_I32, 0, 255, 0, 255.0f},
    {"i32 256 refused", U8, SEED_DTYPE_I32, 0, 256, -ERANGE, 0},
    {"i64 7 -> u8", U8, SEED_DTYPE_I64, 0, 7, 0, 7.0f},
    {"i64 -2^40 refused", U8, SEED_DTYPE_I64, 0, -((int64_t)1 << 40), -ERANGE, 0},
};
#undef F32
#undef U8

/* Two rows: a good value (1) first, the case's value second, stored
 * unaligned (one byte into the buffer) as a decoded frame may be. */
static void store(const conv_case *c, uint8_t *buf)
{
	size_t es = seed_dtype_size(c->client);
	for (int r = 0; r < 2; r++) {
		uint8_t *at = buf + 1 + (size_t)r * es;
		double dv = r ? c->value : 1.0;
		int64_t iv = r ? c->ivalue : 1;
		switch (c->client) {
		case SEED_DTYPE_U8:
		case SEED_DTYPE_I8:
			*at = (uint8_t)iv;
			break;
		case SEED_DTYPE_I32: {
			int32_t v = (int32_t)iv;
			memcpy(at, &v, 4);
			break;
		}
		case SEED_DTYPE_I64:
			memcpy(at, &iv, 8);
			break;
		case SEED_DTYPE_F32: {
			float v = (float)dv;
			memcpy(at, &v, 4);
			break;
		}
		default:
			memcpy(at, &dv, 8);
			break;
		}
	}
}

static void t_conversion_table(void)
{
	for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
		const conv_case *c = &conv_cases[i];
		seed_agent *a = identity_agent(c->model);
		if (!a)
			return;
		uint8_t buf[1 + 2 * 8];
		store(c, buf);
		seed_tensor obs = seed_tensor_view(buf + 1, c->client, 2, (int64_t[]){2, 1});
		float values[2] = {-99, -99}, logits[2] = {-99, -99};
		int32_t actions[2] = {-5, -5};
		seed_err err = {""};
		int rc = seed_agent_act(a, 2, &obs, actions, logits, values, &err);
		CHECK_MSG(rc == c->rc, "%s: rc %d, want %d (%s)", c->name, rc, c->rc, err.msg);
		if (c->rc == 0 && rc == 0) {
			CHECK_MSG(values[0] == 1.0f, "%s: row 0 is %g", c->name, values[0]);
			CHECK_MSG(values[1] == c->want, "%s: %.9g, want %.9g", c->name, values[1], c->want);
		} else if (rc) {
			/* Refused: the message says where and what; nothing written. */
			CHECK_MSG(strstr(err.msg, "row 1, element 0") != NULL, "%s: %s", c->name, err.msg);
			CHECK_MSG(strstr(err.msg, seed_dtype_name(c->client)) != NULL, "%s: %s", c->name,
			          err.msg);
			CHECK(values[0] == -99 && values[1] == -99 && logits[0] == -99);
			CHECK(actions[0] == -5 && actions[1] == -5);
			/* seed_agent_values refuses the same way. */
			CHECK(seed_agent_values(a, 2, &obs, values, &err) == c->rc);
			CHECK(values[0] == -99);
		}
		/* seed_agent_convert: the same rule, the model's dtype out. */
		union {
			float f[2];
			uint8_t u[2];
		} conv;
		CHECK(seed_agent_obs_bytes(a) == seed_dtype_size(c->model));
		rc = seed_agent_convert(a, 2, &obs, &conv, &err);
		CHECK_MSG(rc == c->rc, "%s: convert rc %d", c->name, rc);
		if (rc == 0 && c->model == SEED_DTYPE_F32)
			CHECK_MSG(conv.f[0] == 1.0f && conv.f[1] == c->want, "%s: %.9g", c->name, conv.f[1]);
		else if (rc == 0)
			CHECK_MSG(conv.u[0] == 1 && conv.u[1] == (uint8_t)c->want, "%s: %d", c->name,
			          conv.u[1]);
		seed_agent_free(&a);
	}
}

/* f32 NaN goes to an f32 model as is: the model sees what was sent. */
static void t_f32_nan_passes(void)
{
	seed_agent *a = identity_agent(SEED_DTYPE_F32);
	if (!a)
		return;
	float x[2] = {NAN, 1};
	seed_tensor obs = seed_tensor_view(x, SEED_DTYPE_F32, 2, (int64_t[]){2, 1});
	float values[2];
	int32_t actions[2];
	seed_err err;
	CHECK(seed_agent_act(a, 2, &obs, actions, NULL, values, &err) == 0);
	CHECK(isnan(values[0]) && values[1] == 1.0f);
	seed_agent_free(&a);
}

/* ---- bad calls ------------------------------------------------------------- */

static void t_bad_shapes(void)
{
	seed_agent *a = tiny_agent(SEED_DTYPE_F32, 4, true, 0);
	if (!a)
		return;
	float x[4][3] = {{0}};
	int32_t actions[4] = {-5, -5, -5, -5};
	seed_err err;
	static const struct {
		const char *name;
		int rows, rank;
		int64_t shape[3];
		const char *msg;
	} cases[] = {
	    {"rows != shape[0]", 2, 2, {3, 3}, "shape [3,3], but the model takes [2,3]"},
	    {"wrong row size", 2, 2, {2, 4}, "shape [2,4]"},
	    {"rank 1", 3, 1, {3}, "shape [3]"},
	    {"rank 3", 2, 3, {2, 3, 1}, "shape [2,3,1]"},
	    {"zero rows", 0, 2, {0, 3}, "0 rows"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		seed_tensor obs = seed_tensor_view(x, SEED_DTYPE_F32, cases[i].rank, cases[i].shape);
		int rc = seed_agent_act(a, cases[i].rows, &obs, actions, NULL, NULL, &err);
		CHECK_MSG(rc == -EINVAL, "%s: rc %d", cases[i].name, rc);
		CHECK_MSG(strstr(err.msg, cases[i].msg) != NULL, "%s: %s", cases[i].name, err.msg);
	}
	CHECK(actions[0] == -5);
	seed_tensor obs = seed_tensor_view(x, SEED_DTYPE_F32, 2, (int64_t[]){4, 3});
	CHECK(obs.device == SEED_DEVICE_CPU);
	obs.device = (seed_device)1; /* no such device yet: refused, not read */
	CHECK(seed_agent_act(a, 4, &obs, actions, NULL, NULL, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "on device invalid") != NULL, "%s", err.msg);
	CHECK(strcmp(seed_device_name(SEED_DEVICE_CPU), "cpu") == 0);
	CHECK(!seed_tensor_on_cpu(&obs));
	obs.device = SEED_DEVICE_CPU;
	obs.dtype = SEED_DTYPE_INVALID;
	CHECK(seed_agent_act(a, 4, &obs, actions, NULL, NULL, &err) == -EINVAL);
	CHECK(seed_agent_act(a, 4, NULL, actions, NULL, NULL, &err) == -EINVAL);
	CHECK(actions[0] == -5);
	seed_agent_free(&a);

	/* Construction errors. */
	seed_agent *b = NULL;
	CHECK(seed_agent_new(&b, "{\"torso\": [{\"type\": \"lstm\"}]}", SEED_DTYPE_F32, 1, (int64_t[]){3}, 3,
	                     4, false, 0, 0, &err) == -SEED_EOPTION);
	CHECK(seed_agent_new(&b, tiny_json, SEED_DTYPE_INVALID, 1, (int64_t[]){3}, 3, 4, false, 0, 0, &err) ==
	      -EINVAL);
	CHECK(seed_agent_new(&b, tiny_json, SEED_DTYPE_F32, 1, (int64_t[]){3}, 3, 0, false, 0, 0, &err) ==
	      -EINVAL);
	CHECK(seed_agent_new(&b, tiny_json, SEED_DTYPE_F32, 1, (int64_t[]){3}, 0, 4, false, 0, 0, &err) ==
	      -EINVAL);
	CHECK(b == NULL);
}

/* ---- Q models (a dueling head) --------------------------------------- */

static const char q_json[] = "{\"torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"relu\"}], "
                             "\"head\": \"dueling\"}";

/* A Q agent of 4 actions on 3 inputs with random parameters, and a copy of
 * its model for the reference. */
static seed_agent *q_agent(bool greedy, seed_model **ref)
{
	seed_agent *a = NULL;
	seed_err err = {{0}};
	int rc = seed_agent_new(&a, q_json, SEED_DTYPE_F32, 1, (int64_t[]){3}, 4, NROWS, greedy, 11, 3, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return NULL;
	CHECK(seed_agent_head(a) == SEED_HEAD_DUELING);
	seed_rng rng;
	seed_rng_init(&rng, 9, 0);
	seed_model_init(seed_agent_model(a), &rng);
	CHECK(seed_model_new(ref, q_json, SEED_DTYPE_F32, 1, (int64_t[]){3}, 4, NROWS, &err) == 0);
	CHECK(seed_model_copy_params(*ref, seed_agent_model(a)) == 0);
	return a;
}

/* The first index of the largest of n values, worked out here. */
static int first_max(const float *q, int n)
{
	int best = 0;
	for (int i = 1; i < n; i++)
		if (q[i] > q[best])
			best = i;
	return best;
}

/* The logits out are the model's Q values (seed_model_forward_q, tested
 * against numpy in test_model_core), the values max_a Q, and a greedy
 * agent takes the first argmax, drawing nothing. */
static void t_q_greedy(void)
{
	seed_model *m = NULL;
	seed_agent *a = q_agent(true, &m);
	if (!a)
		return;
	CHECK(seed_agent_epsilon(a) == 0);
	float want[NROWS][4], q[NROWS][4], v[NROWS], v2[NROWS];
	int32_t act[NROWS];
	seed_err err;
	CHECK(seed_model_forward_q(m, NROWS, tiny_obs, &want[0][0]) == 0);
	seed_tensor obs = obs_view(tiny_obs, SEED_DTYPE_F32, NROWS);
	CHECK_MSG(seed_agent_act(a, NROWS, &obs, act, &q[0][0], v, &err) == 0, "%s", err.msg);
	CHECK(seed_agent_values(a, NROWS, &obs, v2, &err) == 0);
	int distinct = 0;
	for (int r = 0; r < NROWS; r++) {
		for (int k = 0; k < 4; k++)
			CHECK_MSG(q[r][k] == want[r][k], "row %d action %d: Q %g, want %g", r, k, q[r][k],
			          want[r][k]);
		int g = first_max(want[r], 4);
		CHECK_MSG(act[r] == g, "row %d: action %d, want %d", r, act[r], g);
		CHECK(v[r] == want[r][g] && v2[r] == want[r][g]);
		distinct += act[r] != act[0];
	}
	CHECK_MSG(distinct > 0, "every row has the same greedy action: the test shows little");
	/* Ties go to the lowest index: zero parameters make every Q 0. */
	float zeros[64] = {0};
	size_t np = seed_model_num_params(seed_agent_model(a));
	CHECK(np <= 64);
	CHECK(seed_agent_load_params(a, zeros, np * 4, 1, &err) == 0);
	CHECK(seed_agent_act(a, NROWS, &obs, act, NULL, NULL, &err) == 0);
	for (int r = 0; r < NROWS; r++)
		CHECK(act[r] == 0);
	seed_model_free(&m);
	seed_agent_free(&a);
}

/* Epsilon 1: every action equally likely (a chi-square test of 40000
 * draws over 4 actions, fixed seed; the 0.1% point of chi2(3) is 16.27);
 * epsilon 0: never anything but the greedy action, though the agent is not
 * greedy; a bad epsilon is refused and the old one stays. */
static void t_q_epsilon(void)
{
	seed_model *m = NULL;
	seed_agent *a = q_agent(false, &m);
	if (!a)
		return;
	seed_err err;
	CHECK(seed_agent_epsilon(a) == SEED_AGENT_EPSILON);
	CHECK(seed_agent_set_epsilon(a, 1.5, &err) == -EINVAL);
	CHECK(seed_agent_set_epsilon(a, NAN, &err) == -EINVAL);
	CHECK(seed_agent_set_epsilon(a, -0.1, &err) == -EINVAL);
	CHECK(seed_agent_epsilon(a) == SEED_AGENT_EPSILON);
	float want[NROWS][4];
	CHECK(seed_model_forward_q(m, NROWS, tiny_obs, &want[0][0]) == 0);
	int g[NROWS];
	for (int r = 0; r < NROWS; r++)
		g[r] = first_max(want[r], 4);
	seed_tensor obs = obs_view(tiny_obs, SEED_DTYPE_F32, NROWS);
	int32_t act[NROWS];
	CHECK(seed_agent_set_epsilon(a, 0, &err) == 0);
	int off = 0;
	for (int i = 0; i < 2000; i++) {
		CHECK(seed_agent_act(a, NROWS, &obs, act, NULL, NULL, &err) == 0);
		for (int r = 0; r < NROWS; r++)
			off += act[r] != g[r];
	}
	CHECK_MSG(off == 0, "%d of 10000 actions at epsilon 0 are not greedy", off);
	CHECK(seed_agent_set_epsilon(a, 1, &err) == 0);
	long count[4] = {0};
	enum { N = 8000 };
	for (int i = 0; i < N; i++) {
		CHECK(seed_agent_act(a, NROWS, &obs, act, NULL, NULL, &err) == 0);
		for (int r = 0; r < NROWS; r++)
			count[act[r]]++;
	}
	double e = N * NROWS / 4.0, chi2 = 0;
	for (int k = 0; k < 4; k++)
		chi2 += (count[k] - e) * (count[k] - e) / e;
	CHECK_MSG(chi2 < 16.27, "chi2 %g of counts %ld %ld %ld %ld", chi2, count[0], count[1], count[2],
	          count[3]);
	seed_model_free(&m);
	seed_agent_free(&a);
}

/* Each row's own epsilon: 0 (always greedy), 1 (uniform: the greedy action
 * a quarter of the time), 0.4 (greedy 1 - 0.4 + 0.4 / 4 = 0.7 of the
 * time); a row's epsilon outside [0, 1] is refused before anything is
 * written.  Frequencies of 20000 draws, within 5 standard errors. */
static void t_q_per_row_epsilon(void)
{
	seed_model *m = NULL;
	seed_agent *a = q_agent(true, &m); /* greedy: the rows' epsilons still rule */
	if (!a)
		return;
	float want[NROWS][4];
	CHECK(seed_model_forward_q(m, NROWS, tiny_obs, &want[0][0]) == 0);
	const float eps[3] = {0, 1, 0.4f};
	const double p[3] = {1, 0.25, 0.7};
	long hit[3] = {0};
	enum { N = 20000 };
	seed_tensor obs = obs_view(tiny_obs, SEED_DTYPE_F32, 3);
	seed_agent_core c = {.epsilon = eps};
	seed_err err;
	int32_t act[3];
	for (int i = 0; i < N; i++) {
		CHECK(seed_agent_act_core(a, 3, &obs, &c, act, NULL, NULL, &err) == 0);
		for (int r = 0; r < 3; r++)
			hit[r] += act[r] == first_max(want[r], 4);
	}
	CHECK_MSG(hit[0] == N, "row 0 (epsilon 0): %ld of %d greedy", hit[0], N);
	for (int r = 1; r < 3; r++) {
		double f = (double)hit[r] / N, se = sqrt(p[r] * (1 - p[r]) / N);
		CHECK_MSG(fabs(f - p[r]) < 5 * se, "row %d (epsilon %g): greedy %.4f of the time, want %.4f",
		          r, (double)eps[r], f, p[r]);
	}
	const float bad[3] = {0, 1.25f, 0};
	c.epsilon = bad;
	act[0] = act[1] = act[2] = -7;
	CHECK(seed_agent_act_core(a, 3, &obs, &c, act, NULL, NULL, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "row 1") && strstr(err.msg, "epsilon"), "%s", err.msg);
	CHECK(act[0] == -7 && act[1] == -7);
	seed_model_free(&m);
	seed_agent_free(&a);
}

/* A Q model with an LSTM core stepped T times by the caller, its state
 * carried, gives the Q values of the model over the whole sequence
 * (seed_model_forward_seq_q) and their greedy actions. */
static void t_q_core_steps(void)
{
	enum { T = 4, B = 2, A = 3, S = 6 };
	const char *json = "{\"torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"tanh\"}], "
	                   "\"core\": {\"type\": \"lstm\", \"units\": 3, \"prev_reward\": true, "
	                   "\"prev_action\": true}, \"head\": \"dueling\"}";
	seed_agent *a = NULL;
	seed_err err = {{0}};
	CHECK_MSG(seed_agent_new(&a, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, B, true, 0, 0, &err) == 0,
	          "%s", err.msg);
	if (!a)
		return;
	CHECK(seed_agent_state_floats(a) == S && seed_agent_head(a) == SEED_HEAD_DUELING);
	seed_rng rng;
	seed_rng_init(&rng, 6, 0);
	seed_model_init(seed_agent_model(a), &rng);
	seed_model *m = NULL;
	CHECK(seed_model_new(&m, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, T * B, &err) == 0);
	CHECK(seed_model_copy_params(m, seed_agent_model(a)) == 0);
	float obs[T][B][2], rew[T][B];
	int32_t prev[T][B];
	uint8_t reset[T][B] = {{0}};
	reset[2][0] = 1;
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			obs[t][b][0] = 0.4f * (float)t - 0.3f * (float)b;
			obs[t][b][1] = -0.6f + 0.25f * (float)(t + b);
			rew[t][b] = (float)(b - t) * 0.5f;
			prev[t][b] = t == 0 ? -1 : (2 * t + b) % A;
		}
	float want_q[T][B][A], want_state[B][S], state0[B][S] = {{0}};
	seed_model_seq q = {.T = T,
	                    .B = B,
	                    .obs = obs,
	                    .prev_reward = &rew[0][0],
	                    .prev_action = &prev[0][0],
	                    .reset = &reset[0][0],
	                    .state0 = &state0[0][0],
	                    .state_out = &want_state[0][0]};
	CHECK(seed_model_forward_seq_q(m, &q, &want_q[0][0][0]) == 0);
	float st[2][B][S] = {{{0}}};
	double worst = 0;
	int wrong = 0;
	for (int t = 0; t < T; t++) {
		float qv[B][A], v[B];
		int32_t act[B];
		seed_agent_core c = {.prev_reward = rew[t],
		                     .prev_action = prev[t],
		                     .reset = reset[t],
		                     .state = &st[t % 2][0][0],
		                     .state_out = &st[(t + 1) % 2][0][0]};
		seed_tensor o = seed_tensor_view(obs[t], SEED_DTYPE_F32, 2, (int64_t[]){B, 2});
		CHECK_MSG(seed_agent_act_core(a, B, &o, &c, act, &qv[0][0], v, &err) == 0, "%s", err.msg);
		for (int b = 0; b < B; b++) {
			for (int k = 0; k < A; k++)
				worst = fmax(worst, fabs(qv[b][k] - want_q[t][b][k]));
			int g = first_max(want_q[t][b], A);
			wrong += act[b] != g;
			worst = fmax(worst, fabs(v[b] - want_q[t][b][g]));
		}
	}
	for (int b = 0; b < B; b++)
		for (int k = 0; k < S; k++)
			worst = fmax(worst, fabs(st[T % 2][b][k] - want_state[b][k]));
	CHECK_MSG(worst < 1e-6 && wrong == 0, "largest difference %g, %d actions not greedy", worst, wrong);
	seed_model_free(&m);
	seed_agent_free(&a);
}

/* A recurrent agent stepped T times, its state carried by the caller from
 * state_out to state, with the previous rewards and actions, acts exactly
 * as the model run over the whole sequence (seed_model_forward_seq, whose
 * own values test_model_core checks against numpy); resets included.  The
 * plain act and values refuse it, saying what to use. */
static void t_core_steps(void)
{
	enum { T = 4, B = 2, A = 3, S = 6 };
	const char *json = "{\"torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"tanh\"}], "
	                   "\"core\": {\"type\": \"lstm\", \"units\": 3, \"prev_reward\": true, "
	                   "\"prev_action\": true}}";
	seed_agent *a = NULL;
	seed_err err = {{0}};
	CHECK_MSG(seed_agent_new(&a, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, B, true, 0, 0, &err) == 0,
	          "%s", err.msg);
	CHECK(seed_agent_state_floats(a) == S);
	seed_rng rng;
	seed_rng_init(&rng, 5, 0);
	seed_model_init(seed_agent_model(a), &rng);
	seed_model *m = NULL;
	CHECK(seed_model_new(&m, json, SEED_DTYPE_F32, 1, (int64_t[]){2}, A, T * B, &err) == 0);
	CHECK(seed_model_copy_params(m, seed_agent_model(a)) == 0);
	float obs[T][B][2], rew[T][B];
	int32_t prev[T][B];
	uint8_t reset[T][B] = {{0}};
	reset[2][1] = 1;
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			obs[t][b][0] = 0.3f * (float)t - 0.5f * (float)b;
			obs[t][b][1] = 0.7f - 0.2f * (float)(t * b);
			rew[t][b] = (float)(t - b) * 0.75f; /* some beyond [-1, 1] */
			prev[t][b] = t == 0 ? -1 : (t + b) % A;
		}
	float state0[B][S];
	for (int b = 0; b < B; b++)
		for (int k = 0; k < S; k++)
			state0[b][k] = 0.1f * (float)(k - b);
	float want_lg[T][B][A], want_v[T][B], want_state[B][S];
	seed_model_seq q = {.T = T,
	                    .B = B,
	                    .obs = obs,
	                    .prev_reward = &rew[0][0],
	                    .prev_action = &prev[0][0],
	                    .reset = &reset[0][0],
	                    .state0 = &state0[0][0],
	                    .state_out = &want_state[0][0]};
	CHECK(seed_model_forward_seq(m, &q, &want_lg[0][0][0], &want_v[0][0]) == 0);
	float st[2][B][S];
	memcpy(st[0], state0, sizeof state0);
	double worst = 0;
	for (int t = 0; t < T; t++) {
		float lg[B][A], v[B];
		int32_t act[B];
		seed_agent_core c = {.prev_reward = rew[t],
		                     .prev_action = prev[t],
		                     .reset = reset[t],
		                     .state = &st[t % 2][0][0],
		                     .state_out = &st[(t + 1) % 2][0][0]};
		seed_tensor o = seed_tensor_view(obs[t], SEED_DTYPE_F32, 2, (int64_t[]){B, 2});
		CHECK_MSG(seed_agent_act_core(a, B, &o, &c, act, &lg[0][0], v, &err) == 0, "%s", err.msg);
		for (int b = 0; b < B; b++) {
			for (int k = 0; k < A; k++)
				worst = fmax(worst, fabs(lg[b][k] - want_lg[t][b][k]));
			worst = fmax(worst, fabs(v[b] - want_v[t][b]));
		}
	}
	for (int b = 0; b < B; b++)
		for (int k = 0; k < S; k++)
			worst = fmax(worst, fabs(st[T % 2][b][k] - want_state[b][k]));
	CHECK_MSG(worst < 1e-6, "largest difference %g", worst);
	/* The outputs depend on the state: from zeros they differ. */
	float lg0[B][A];
	int32_t act0[B];
	seed_agent_core zero = {.prev_reward = rew[1], .prev_action = prev[1]};
	seed_tensor o1 = seed_tensor_view(obs[1], SEED_DTYPE_F32, 2, (int64_t[]){B, 2});
	CHECK(seed_agent_act_core(a, B, &o1, &zero, act0, &lg0[0][0], NULL, &err) == 0);
	CHECK(fabs(lg0[0][0] - want_lg[1][0][0]) > 1e-4);
	/* Without the state, the plain calls refuse. */
	int32_t acts[B];
	float vals[B];
	CHECK(seed_agent_act(a, B, &o1, acts, NULL, NULL, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "recurrent core") && strstr(err.msg, "seed_agent_act_core"), "%s", err.msg);
	CHECK(seed_agent_values(a, B, &o1, vals, &err) == -EINVAL);
	seed_model_free(&m);
	seed_agent_free(&a);
}

/* Parameters of the wrong size are refused; the old ones stay. */
static void t_params_wrong_size(void)
{
	seed_agent *a = tiny_agent(SEED_DTYPE_F32, 1, true, 0);
	if (!a)
		return;
	seed_err err;
	float zeros[21] = {0};
	size_t sizes[] = {sizeof tiny_params - 4, sizeof tiny_params + 4, 0, 1};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		int rc = seed_agent_load_params(a, zeros, sizes[i], 99, &err);
		CHECK_MSG(rc == -EINVAL, "size %zu: rc %d", sizes[i], rc);
		CHECK_MSG(strstr(err.msg, "20 parameters (80 bytes") != NULL, "%s", err.msg);
	}
	CHECK(seed_agent_policy_version(a) == 42);
	float values[1];
	seed_tensor obs = obs_view(tiny_obs[0], SEED_DTYPE_F32, 1);
	CHECK(seed_agent_values(a, 1, &obs, values, &err) == 0);
	CHECK(values[0] == tiny_values[0]);
	/* The version of parameters loaded straight into the model. */
	seed_agent_set_policy_version(a, 7);
	CHECK(seed_agent_policy_version(a) == 7);
	CHECK(seed_model_num_params(seed_agent_model(a)) == 20);
	seed_agent_free(&a);
}

/* Calls within the capacity never grow it; a bigger call grows it once to
 * exactly its rows, keeps the parameters and the model, and the results do
 * not depend on the capacity. */
static void t_capacity(void)
{
	seed_agent *a = tiny_agent(SEED_DTYPE_U8, 2, true, 0);
	if (!a)
		return;
	seed_model *m = seed_agent_model(a);
	float x[NROWS * 4][3];
	for (int r = 0; r < NROWS * 4; r++)
		memcpy(x[r], tiny_obs[r % NROWS], sizeof x[r]);
	int32_t actions[NROWS * 4];
	float values[NROWS * 4];
	seed_err err;
	CHECK(seed_agent_capacity(a) == 2);
	for (int i = 0; i < 50; i++) {
		seed_tensor obs = obs_view(x, SEED_DTYPE_F32, 1 + i % 2);
		CHECK(seed_agent_act(a, 1 + i % 2, &obs, actions, NULL, values, &err) == 0);
		CHECK(seed_agent_values(a, 1 + i % 2, &obs, values, &err) == 0);
	}
	CHECK(seed_agent_capacity(a) == 2);
	seed_tensor obs = obs_view(x, SEED_DTYPE_F32, NROWS * 4);
	CHECK(seed_agent_act(a, NROWS * 4, &obs, actions, NULL, values, &err) == 0);
	CHECK(seed_agent_capacity(a) == NROWS * 4);
	CHECK(seed_agent_model(a) == m);
	for (int r = 0; r < NROWS * 4; r++) {
		CHECK(actions[r] == tiny_greedy[r % NROWS]);
		CHECK(values[r] == tiny_values[r % NROWS]);
	}
	obs = obs_view(x, SEED_DTYPE_F32, 3);
	CHECK(seed_agent_values(a, 3, &obs, values, &err) == 0);
	CHECK(seed_agent_capacity(a) == NROWS * 4);
	seed_agent_free(&a);
}

int main(void)
{
	TAP_RUN(t_act_greedy_golden);
	TAP_RUN(t_values_golden);
	TAP_RUN(t_act_sampled);
	TAP_RUN(t_act_dtypes_golden);
	TAP_RUN(t_conversion_table);
	TAP_RUN(t_f32_nan_passes);
	TAP_RUN(t_bad_shapes);
	TAP_RUN(t_q_greedy);
	TAP_RUN(t_q_epsilon);
	TAP_RUN(t_q_per_row_epsilon);
	TAP_RUN(t_q_core_steps);
	TAP_RUN(t_core_steps);
	TAP_RUN(t_params_wrong_size);
	TAP_RUN(t_capacity);
	return tap_done();
}
