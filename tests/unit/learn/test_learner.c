/* tests/unit/learn/test_learner.c: the learner (seed/learner.h).
 *
 * What is checked against values worked by hand (in the comments): the
 * time-major layout of the batch, the transition rule (rewards and
 * discounts from the end flags and final values), the learning-rate
 * schedule, global-norm clipping, the policy lag, the return window and
 * the version rule across a crash (the reservation block).  Bad frames are
 * a table of named cases, each of which must leave the batch untouched.
 * The update is also checked to allocate nothing (tests/alloc_count.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "seed/checkpoint.h"
#include "seed/clock.h"
#include "seed/config.h"
#include "seed/frame.h"
#include "seed/learner.h"
#include "seed/timing.h"
#include "seed/loss.h"
#include "seed/nn.h"
#include "alloc_count.h"
#include "r2d2_learner_golden.h"
#include "tap.h"
#include "tmpdir.h"

/* ---- fixtures -------------------------------------------------------------- */

static const seed_env_spec SPEC = {
    .obs_dtype = SEED_DTYPE_F32, .obs_rank = 1, .obs_shape = {4}, .num_actions = 2};

static int has(const char *msg, const char *part)
{
	return strstr(msg, part) != NULL;
}

/* A config for cartpole-shaped data: T steps, B unrolls a batch. */
static void config(seed_config *c, int T, int B, const char *extra)
{
	char text[1024];
	snprintf(
	    text, sizeof text,
	    "{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": "
	    "\"tanh\"}]}, \"unroll_length\": %d, \"batch_size\": %d, \"discount\": 0.9, \"seed\": 5%s}",
	    T, B, extra ? extra : "");
	json_t *root = json_loads(text, 0, NULL);
	seed_err err = {""};
	if (!root || seed_config_parse(root, c, &err)) {
		printf("# bad test config: %s\n", err.msg);
		exit(99);
	}
}

/* The data of an unroll frame of Bf unrolls of T1 steps, unroll-major as
 * on the wire: element [b][t] at b*T1 + t.  Values encode where they came
 * from, so that the layout can be checked. */
struct unrolls {
	int Bf, T1, A;
	int32_t env[8];
	float obs[8 * 16 * 4];
	int32_t action[8 * 16], version[8 * 16];
	float reward[8 * 16], final_value[8 * 16], logits[8 * 16 * 2];
	uint8_t terminated[8 * 16], truncated[8 * 16];
	seed_frame f;
};

static void unrolls_init(struct unrolls *u, int Bf, int T1)
{
	memset(u, 0, sizeof *u);
	u->Bf = Bf, u->T1 = T1, u->A = 2;
	for (int b = 0; b < Bf; b++) {
		u->env[b] = b;
		for (int t = 0; t < T1; t++) {
			int i = b * T1 + t;
			for (int k = 0; k < 4; k++)
				u->obs[i * 4 + k] = (float)(100 * b + 10 * t + k) * 0.01f;
			u->action[i] = (b + t) % 2;
			u->version[i] = 0;
			u->reward[i] = (float)(b + 1);
			u->logits[i * 2] = 0.1f * (float)t;
			u->logits[i * 2 + 1] = -0.1f * (float)b;
		}
	}
}

/* (Re)build the frame over u's arrays. */
static seed_frame *unrolls_frame(struct unrolls *u)
{
	seed_frame *f = &u->f;
	int64_t B = u->Bf, T1 = u->T1;
	seed_frame_init(f, SEED_FRAME_UNROLL);
	seed_frame_set_int(f, "run", 0);
	seed_frame_set_int(f, "actor", 0);
	seed_frame_set_int(f, "num_actions", u->A);
	seed_frame_set_tensor(f, "env", seed_tensor_view(u->env, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(f, "obs", seed_tensor_view(u->obs, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, 4}));
	seed_frame_set_tensor(f, "action",
	                      seed_tensor_view(u->action, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "reward",
	                      seed_tensor_view(u->reward, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "terminated",
	                      seed_tensor_view(u->terminated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "truncated",
	                      seed_tensor_view(u->truncated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "final_value",
	                      seed_tensor_view(u->final_value, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "policy_version",
	                      seed_tensor_view(u->version, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "logits",
	                      seed_tensor_view(u->logits, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, u->A}));
	return f;
}

static seed_learner *learner(const seed_config *c)
{
	seed_learner *L = NULL;
	seed_err err = {""};
	int rc = seed_learner_new(&L, c, &SPEC, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (!L)
		exit(99);
	return L;
}

/* ---- the batch ----------------------------------------------------------- */

/* Three unrolls into batches of two: the first add takes two (time-major
 * copies: batch row t*B + j is unroll j's step t), the second the third. */
static void t_layout_time_major(void)
{
	seed_config c;
	config(&c, 2, 2, NULL);
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 3, 3);
	u.terminated[1 * 3 + 2] = 1;
	u.final_value[2 * 3 + 1] = 7;
	seed_err err = {""};
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 2);
	CHECK(seed_learner_full(L));
	const seed_learner_batch *b = seed_learner_get_batch(L);
	CHECK(b->T == 2 && b->B == 2 && b->A == 2 && b->fill == 2 && b->obs_bytes == 16);
	const float *obs = (const float *)b->obs;
	for (int t = 0; t < 3; t++)
		for (int j = 0; j < 2; j++) {
			int row = t * 2 + j;
			CHECK_NEAR(obs[row * 4 + 3], (100 * j + 10 * t + 3) * 0.01f, 0);
			CHECK(b->action[row] == (j + t) % 2);
			CHECK_NEAR(b->reward[row], j + 1, 0);
			CHECK_NEAR(b->behaviour_logits[row * 2], 0.1f * t, 0);
			CHECK_NEAR(b->behaviour_logits[row * 2 + 1], -0.1f * j, 0);
		}
	CHECK(b->terminated[2 * 2 + 1] == 1 && b->terminated[2 * 2 + 0] == 0);
	/* Full: nothing more is taken until an update. */
	CHECK(seed_learner_add(L, unrolls_frame(&u), 2, &err) == 0);
	CHECK(seed_learner_update(L, &err) == 0);
	CHECK(seed_learner_get_batch(L)->fill == 0);
	CHECK(seed_learner_add(L, unrolls_frame(&u), 2, &err) == 1);
	/* The third unroll is now column 0. */
	CHECK_NEAR(b->final_value[1 * 2 + 0], 7, 0);
	CHECK_NEAR(obs[(2 * 2 + 0) * 4], (200 + 20) * 0.01f, 1e-7);
	CHECK(!seed_learner_full(L));
	CHECK(seed_learner_update(L, &err) == -EINVAL && has(err.msg, "1 of 2"));
	seed_learner_free(&L);
	CHECK(L == NULL);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* The transition rule, gamma = 0.9, one unroll of T = 3 (steps 0..3),
 * rewards r_s = s + 1 at step s:
 *   t=0 uses step 1: plain:                 reward 2,             discount 0.9
 *   t=1 uses step 2: terminated:            reward 3,             discount 0
 *   t=2 uses step 3: truncated, final 10:   reward 4 + 0.9*10=13, discount 0
 * A flag at step 0 belongs to the unroll before and is ignored. */
static void t_transitions_by_hand(void)
{
	seed_config c;
	config(&c, 3, 1, NULL);
	seed_learner *L = learner(&c);
	CHECK(!seed_learner_wants_sequences(L)); /* V-trace trains on pushed unrolls */
	struct unrolls u;
	unrolls_init(&u, 1, 4);
	for (int s = 0; s < 4; s++)
		u.reward[s] = (float)(s + 1);
	u.terminated[0] = 1;
	u.terminated[2] = 1;
	u.truncated[3] = 1;
	u.final_value[3] = 10;
	seed_err err = {""};
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
	CHECK_MSG(seed_learner_update(L, &err) == 0, "%s", err.msg);
	const seed_learner_batch *b = seed_learner_get_batch(L);
	const float want_r[] = {2, 3, 13}, want_d[] = {0.9f, 0, 0};
	for (int t = 0; t < 3; t++) {
		CHECK_NEAR(b->rewards[t], want_r[t], 1e-6);
		CHECK_NEAR(b->discounts[t], want_d[t], 1e-7);
	}
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* ---- refused frames ---------------------------------------------------- */

enum fault { STEPS, NUM_ACTIONS, OBS_DTYPE, OBS_SHAPE, ACTION_NEGATIVE, ACTION_TOO_BIG, NOT_UNROLL, FIRST };

static const struct {
	const char *name;
	enum fault fault;
	int rc;
	const char *want;
} bad_frames[] = {
    {"steps_other_than_unroll_length_plus_1", STEPS, -SEED_EFRAME, "4 steps, expected unroll_length+1 = 3"},
    {"num_actions_other_than_the_envs", NUM_ACTIONS, -SEED_EFRAME, "'num_actions': 3"},
    {"obs_dtype_other_than_the_envs", OBS_DTYPE, -SEED_EFRAME, "'obs'"},
    {"obs_shape_other_than_the_envs", OBS_SHAPE, -SEED_EFRAME, "'obs'"},
    {"action_negative", ACTION_NEGATIVE, -SEED_EFRAME, "'action': -1 at [1][2]"},
    {"action_past_num_actions", ACTION_TOO_BIG, -SEED_EFRAME, "'action': 2 at [1][0]"},
    {"an_episode_frame", NOT_UNROLL, -SEED_EFRAME, "not an unroll frame"},
    {"first_past_the_frame", FIRST, -EINVAL, "unroll 3 of 2"},
};

static void t_bad_frames(void)
{
	seed_config c;
	config(&c, 2, 4, NULL);
	for (size_t i = 0; i < sizeof bad_frames / sizeof bad_frames[0]; i++) {
		int saved = tap_case_failed;
		tap_case_failed = 0;
		seed_learner *L = learner(&c);
		struct unrolls u;
		unrolls_init(&u, 2, bad_frames[i].fault == STEPS ? 4 : 3);
		seed_frame *f = unrolls_frame(&u);
		int first = 0;
		uint8_t bytes[2 * 3 * 16];
		switch (bad_frames[i].fault) {
		case NUM_ACTIONS:
			/* Three logits per step, so that the frame itself is valid. */
			u.A = 3;
			f = unrolls_frame(&u);
			break;
		case OBS_DTYPE:
			memset(bytes, 1, sizeof bytes);
			seed_frame_set_tensor(
			    f, "obs", seed_tensor_view(bytes, SEED_DTYPE_U8, 3, (int64_t[]){2, 3, 16}));
			break;
		case OBS_SHAPE:
			seed_frame_set_tensor(
			    f, "obs", seed_tensor_view(u.obs, SEED_DTYPE_F32, 4, (int64_t[]){2, 3, 2, 2}));
			break;
		case ACTION_NEGATIVE:
			u.action[1 * 3 + 2] = -1;
			break;
		case ACTION_TOO_BIG:
			u.action[1 * 3 + 0] = 2;
			break;
		case NOT_UNROLL:
			f->type = SEED_FRAME_EPISODE;
			break;
		case FIRST:
			first = 3;
			break;
		case STEPS:
			break;
		}
		seed_err err = {""};
		int rc = seed_learner_add(L, f, first, &err);
		CHECK_MSG(rc == bad_frames[i].rc && has(err.msg, bad_frames[i].want), "rc %d, message: %s",
		          rc, err.msg);
		/* Nothing was taken, not even the good unroll before the bad one. */
		const seed_learner_batch *b = seed_learner_get_batch(L);
		CHECK(b->fill == 0);
		for (int k = 0; k < 3 * 4; k++)
			CHECK(b->action[k] == 0);
		seed_learner_free(&L);
		char name[128];
		snprintf(name, sizeof name, "bad_frame_%s", bad_frames[i].name);
		tap_result(name);
		tap_case_failed = saved;
	}
	seed_config_free(&c);
}

/* ---- the update ---------------------------------------------------------- */

static int params_equal(seed_learner *a, const float *p)
{
	seed_model *m = seed_learner_model(a);
	return memcmp(seed_model_params(m), p, seed_model_num_params(m) * sizeof(float)) == 0;
}

static float *params_copy(seed_learner *L)
{
	seed_model *m = seed_learner_model(L);
	size_t n = seed_model_num_params(m) * sizeof(float);
	return memcpy(malloc(n), seed_model_params(m), n);
}

/* A NaN reward makes the gradient NaN: the step is skipped, the
 * parameters stay, the counters move on. */
static void t_non_finite_gradient_skips_the_step(void)
{
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	float *before = params_copy(L);
	struct unrolls u;
	unrolls_init(&u, 1, 3);
	u.reward[1] = NAN;
	seed_err err = {""};
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
	CHECK(seed_learner_update(L, &err) == 0);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK(!isfinite(st->grad_norm));
	CHECK(st->skipped == 1 && st->updates == 1 && st->frames == 2 && st->policy_version == 1);
	CHECK(params_equal(L, before));
	/* A good batch then trains. */
	u.reward[1] = 1;
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
	CHECK(seed_learner_update(L, &err) == 0);
	CHECK(st->skipped == 1 && isfinite(st->grad_norm) && !params_equal(L, before));
	free(before);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* lr 0.01 decaying over total_frames 100, T*B = 2*4 = 8 frames an update:
 * update k (0-based) uses lr 0.01 * (1 - 8k/100): 0.01, 0.0092, 0.0084. */
static void t_learning_rate_schedule(void)
{
	seed_config c;
	config(&c, 2, 4, ", \"total_frames\": 100, \"optimizer\": {\"lr\": 0.01}");
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 4, 3);
	seed_err err = {""};
	const double want[] = {0.01, 0.0092, 0.0084};
	for (int k = 0; k < 3; k++) {
		CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 4);
		CHECK(seed_learner_update(L, &err) == 0);
		CHECK_NEAR(seed_learner_get_status(L)->lr, want[k], 1e-9);
	}
	/* 96 of 100 frames: one more update ends the budget. */
	for (int k = 3; k < 12; k++)
		CHECK(seed_learner_feed(L, unrolls_frame(&u), &err) == 1);
	CHECK(seed_learner_get_status(L)->frames == 96 && seed_learner_done(L) == NULL);
	CHECK(seed_learner_feed(L, unrolls_frame(&u), &err) == 1);
	CHECK(seed_learner_done(L) && strcmp(seed_learner_done(L), "frame budget reached") == 0);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* Frames are emulator frames: each unroll's T steps times the frame skip
 * of its frame, agent steps T per unroll whatever the skip.  By hand, T 3,
 * batches of 2, total_frames 30, lr 0.01 decayed linearly over the frames:
 *   a frame of 2 unrolls of frame skip 4: agent steps 6, frames 3*(4+4) = 24;
 *   a frame of 2 without the field (skip 1): agent steps 12, frames 24 + 6 = 30;
 * the second update's rate is 0.01 * (1 - 24/30) = 0.002 (at agent steps it
 * would be 0.01 * (1 - 6/30) = 0.008), and the budget of 30 frames is
 * reached at 12 agent steps.  Episode frames: lengths 5 and 7 at frame skip
 * 4, then 11 without the field: env_frames 4*(5+7) + 11 = 59. */
static void t_frames_count_the_frame_skip(void)
{
	seed_config c;
	config(&c, 3, 2, ", \"total_frames\": 30, \"optimizer\": {\"lr\": 0.01}");
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 2, 4);
	seed_err err = {""};
	seed_frame *f = unrolls_frame(&u);
	seed_frame_set_int(f, "frame_skip", 4);
	CHECK_MSG(seed_learner_feed(L, f, &err) == 1, "%s", err.msg);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK_MSG(st->agent_steps == 6 && st->frames == 24, "%lld agent steps, %lld frames",
	          (long long)st->agent_steps, (long long)st->frames);
	CHECK(seed_learner_done(L) == NULL);
	CHECK_MSG(seed_learner_feed(L, unrolls_frame(&u), &err) == 1, "%s", err.msg);
	CHECK_MSG(st->agent_steps == 12 && st->frames == 30, "%lld agent steps, %lld frames",
	          (long long)st->agent_steps, (long long)st->frames);
	CHECK_NEAR(st->lr, 0.002, 1e-9); /* float arithmetic */
	CHECK(seed_learner_done(L) && strcmp(seed_learner_done(L), "frame budget reached") == 0);
	json_t *m = seed_learner_metrics(L);
	CHECK(m && json_number_value(json_object_get(m, "frames")) == 30 &&
	      json_number_value(json_object_get(m, "agent_steps")) == 12);
	json_decref(m);
	char line[256];
	seed_learner_summary(L, "done", line, sizeof line);
	CHECK_MSG(has(line, "done: 30 frames (12 agent steps), 2 updates"), "%s", line);
	int32_t env[3] = {0, 1, 2}, len[3] = {5, 7, 11};
	float ret[3] = {1, 2, 3};
	uint8_t tr[3] = {0};
	for (int k = 0; k < 2; k++) {
		int64_t n = k ? 1 : 2;
		seed_frame e;
		seed_frame_init(&e, SEED_FRAME_EPISODE);
		seed_frame_set_int(&e, "run", 0);
		seed_frame_set_int(&e, "actor", 0);
		seed_frame_set_tensor(&e, "env", seed_tensor_view(env + 2 * k, SEED_DTYPE_I32, 1, &n));
		seed_frame_set_tensor(&e, "return", seed_tensor_view(ret + 2 * k, SEED_DTYPE_F32, 1, &n));
		seed_frame_set_tensor(&e, "length", seed_tensor_view(len + 2 * k, SEED_DTYPE_I32, 1, &n));
		seed_frame_set_tensor(&e, "truncated", seed_tensor_view(tr + 2 * k, SEED_DTYPE_U8, 1, &n));
		if (k == 0)
			seed_frame_set_int(&e, "frame_skip", 4);
		CHECK_MSG(seed_learner_feed(L, &e, &err) == 0, "%s", err.msg);
	}
	CHECK_MSG(st->env_frames == 59, "env_frames %lld", (long long)st->env_frames);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* With max_grad_norm 1e-3 the gradient that reaches the optimizer has
 * norm 1e-3 (it is far longer before). */
static void t_gradient_clipping(void)
{
	seed_config c;
	config(&c, 2, 2, ", \"max_grad_norm\": 0.001");
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 2, 3);
	seed_err err = {""};
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 2);
	CHECK(seed_learner_update(L, &err) == 0);
	seed_model *m = seed_learner_model(L);
	const float *g = seed_model_grads(m);
	double s = 0;
	for (size_t i = 0; i < seed_model_num_params(m); i++)
		s += (double)g[i] * g[i];
	CHECK(seed_learner_get_status(L)->grad_norm > 0.01);
	CHECK_NEAR(sqrt(s), 0.001, 1e-7);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* Policy lag: the learner at version 0 trains on steps acted by version
 * 0 (lag 0) then, at version 1, on steps of versions 0 and -2 (lags 1
 * and 3): T*B = 2 transitions each, sum 0 + 0 + 1 + 3 = 4 over 4.  Only
 * steps 0..T-1 count (the bootstrap step acts in no transition). */
static void t_policy_lag(void)
{
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 1, 3);
	u.version[2] = 99;
	seed_err err = {""};
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
	CHECK(seed_learner_update(L, &err) == 0);
	u.version[1] = -2;
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
	CHECK(seed_learner_update(L, &err) == 0);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK(st->lag_count == 4);
	CHECK_NEAR(st->lag_sum, 4, 0);
	json_t *m = seed_learner_metrics(L);
	CHECK(m && json_number_value(json_object_get(m, "policy_lag")) == 1.0);
	CHECK(m && json_number_value(json_object_get(m, "version")) == 2.0);
	CHECK(m && json_is_null(json_object_get(m, "episode_return")));
	json_decref(m);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* A window of 3 returns: after 1, 2, 3, 4 the mean is (2+3+4)/3 = 3. */
static void t_return_window(void)
{
	seed_config c;
	config(&c, 2, 1, ", \"return_window\": 3, \"target_return\": 3");
	seed_learner *L = learner(&c);
	float ret[4] = {1, 2, 3, 4};
	int32_t env[4] = {0, 1, 2, 3}, len[4] = {5, 7, 11, 13};
	uint8_t tr[4] = {0};
	/* Two frames of two episodes: 1, 2 (the window is not full yet), then
	 * 3, 4. */
	seed_err err = {""};
	CHECK(isnan(seed_learner_get_status(L)->mean_return));
	for (int k = 0; k < 2; k++) {
		int64_t n = 2;
		seed_frame f;
		seed_frame_init(&f, SEED_FRAME_EPISODE);
		seed_frame_set_int(&f, "run", 0);
		seed_frame_set_int(&f, "actor", 0);
		seed_frame_set_tensor(&f, "env", seed_tensor_view(env + 2 * k, SEED_DTYPE_I32, 1, &n));
		seed_frame_set_tensor(&f, "return", seed_tensor_view(ret + 2 * k, SEED_DTYPE_F32, 1, &n));
		seed_frame_set_tensor(&f, "length", seed_tensor_view(len + 2 * k, SEED_DTYPE_I32, 1, &n));
		seed_frame_set_tensor(&f, "truncated", seed_tensor_view(tr + 2 * k, SEED_DTYPE_U8, 1, &n));
		CHECK(seed_learner_done(L) == NULL);
		CHECK_MSG(seed_learner_feed(L, &f, &err) == 0, "%s", err.msg);
	}
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK(st->episodes == 4 && st->nreturns == 3);
	CHECK(st->env_frames == 5 + 7 + 11 + 13); /* the episodes' lengths */
	CHECK_NEAR(st->mean_return, 3, 1e-12);
	CHECK(seed_learner_done(L) && strcmp(seed_learner_done(L), "target return reached") == 0);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* feed runs an update each time the batch fills: 5 unrolls into batches
 * of 2 make two updates and leave one unroll waiting. */
static void t_feed_updates_as_batches_fill(void)
{
	seed_config c;
	config(&c, 2, 2, NULL);
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 5, 3);
	seed_err err = {""};
	CHECK(seed_learner_feed(L, unrolls_frame(&u), &err) == 2);
	CHECK(seed_learner_get_status(L)->policy_version == 2 && seed_learner_get_batch(L)->fill == 1);
	seed_frame p;
	seed_frame_init(&p, SEED_FRAME_PARAMS);
	CHECK(seed_learner_feed(L, &p, &err) == -SEED_EFRAME && has(err.msg, "a params frame"));
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* Adding and updating allocate nothing (after a first update, which may
 * let BLAS set itself up). */
static void t_update_allocates_nothing(void)
{
	seed_config c;
	config(&c, 4, 4, NULL);
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, 4, 5);
	seed_frame *f = unrolls_frame(&u);
	seed_err err = {""};
	CHECK(seed_learner_feed(L, f, &err) == 1);
	alloc_count = 0;
	alloc_counting = true;
	for (int k = 0; k < 5; k++) {
		int n = seed_learner_add(L, f, 0, &err);
		int rc = seed_learner_update(L, &err);
		CHECK(n == 4 && rc == 0);
	}
	alloc_counting = false;
	CHECK_MSG(alloc_count == 0, "%ld allocations in 5 adds and updates", alloc_count);
	if (!COUNT_ALLOCATIONS)
		printf("# allocations not counted under AddressSanitizer\n");
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* The update's gradient is the plain one: an independent model with the
 * same parameters runs forward over all (T+1)*B rows of the batch, the
 * allocating seed_loss_vtrace takes the transitions, and backward runs
 * over all rows with a zero gradient on the bootstrap row.  The learner
 * may get there by a shorter road (it skips the bootstrap row in
 * backward), but not to another place: every gradient element agrees
 * within float rounding (relative to the largest one). */
static void t_update_gradient_is_the_full_batch_gradient(void)
{
	enum { T = 3, B = 4, T1 = T + 1, A = 2, ROWS = T1 * B };
	seed_config c;
	config(&c, T, B, ", \"max_grad_norm\": 0");
	seed_learner *L = learner(&c);
	struct unrolls u;
	unrolls_init(&u, B, T1);
	for (int i = 0; i < B * T1; i++) {
		u.logits[2 * i] = 0.3f * (float)(i % 5) - 0.5f;
		u.logits[2 * i + 1] = 0.2f * (float)(i % 3);
		u.reward[i] = (float)(i % 4) - 1.5f;
	}
	u.terminated[0 * T1 + 2] = 1;
	u.truncated[2 * T1 + 3] = 1;
	u.final_value[2 * T1 + 3] = 2.5f;
	u.terminated[3 * T1 + 1] = 1;
	seed_model *m = seed_learner_model(L);
	size_t np = seed_model_num_params(m);
	seed_model *ref = NULL;
	seed_err err = {""};
	CHECK_MSG(
	    seed_model_new(&ref, c.model, SPEC.obs_dtype, SPEC.obs_rank, SPEC.obs_shape, A, ROWS, &err) == 0,
	    "%s", err.msg);
	if (!ref)
		exit(99);
	memcpy(seed_model_params(ref), seed_model_params(m), np * sizeof(float));
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == B);
	CHECK_MSG(seed_learner_update(L, &err) == 0, "%s", err.msg);

	const seed_learner_batch *b = seed_learner_get_batch(L);
	static float logits[ROWS * A], values[ROWS], dlogits[ROWS * A], dvalues[ROWS];
	CHECK(seed_model_forward(ref, ROWS, b->obs, logits, values) == 0);
	seed_loss_batch lb = {
	    .T = T,
	    .B = B,
	    .A = A,
	    .logits = logits,
	    .behaviour_logits = b->behaviour_logits,
	    .actions = b->action,
	    .rewards = b->rewards,
	    .discounts = b->discounts,
	    .values = values,
	    .bootstrap_value = values + T * B,
	};
	seed_loss_stats st;
	memset(dlogits, 0, sizeof dlogits);
	memset(dvalues, 0, sizeof dvalues);
	CHECK_MSG(seed_loss_vtrace(&c.loss, &lb, &st, dlogits, dvalues, &err) == 0, "%s", err.msg);
	seed_model_zero_grad(ref);
	CHECK(seed_model_backward(ref, ROWS, dlogits, dvalues) == 0);
	const float *g = seed_model_grads(m), *want = seed_model_grads(ref);
	double gmax = 0, worst = 0;
	for (size_t i = 0; i < np; i++)
		gmax = fmax(gmax, fabs(want[i]));
	for (size_t i = 0; i < np; i++)
		worst = fmax(worst, fabs((double)g[i] - want[i]));
	CHECK_MSG(gmax > 1e-4, "the reference gradient is not zero (max %g)", gmax);
	CHECK_MSG(worst <= 1e-5 * gmax, "gradients differ by %g (largest %g)", worst, gmax);
	const seed_loss_stats *ls = &seed_learner_get_status(L)->loss;
	CHECK_NEAR(ls->total, st.total, 1e-6 * fabs(st.total));
	CHECK_NEAR(ls->mean_rho, st.mean_rho, 1e-6);
	CHECK_NEAR(ls->mean_value, st.mean_value, 1e-6);
	seed_model_free(&ref);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* ---- checkpoints and versions ----------------------------------------- */

static int64_t reserved_in(const char *dir)
{
	int64_t r = -2;
	seed_err err = {""};
	CHECK_MSG(seed_checkpoint_reserved(dir, &r, &err) == 0, "%s", err.msg);
	return r;
}

static void run_updates(seed_learner *L, struct unrolls *u, int n)
{
	seed_err err = {""};
	for (int k = 0; k < n; k++)
		CHECK_MSG(seed_learner_feed(L, unrolls_frame(u), &err) == 1, "%s", err.msg);
}

/* Save into a directory whose parents do not exist; restore into a new
 * learner: parameters, optimizer state, counters and generator come back,
 * and after a last save the version continues where it was. */
static void t_save_and_restore(void)
{
	const char *tmp = tmpdir_new();
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/runs/a/b", tmp);
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	seed_err err = {""};
	CHECK(seed_learner_save(L, true, &err) == -EINVAL); /* no directory yet */
	CHECK_MSG(seed_learner_open_dir(L, dir, &err) == 0, "%s", err.msg);
	CHECK(strcmp(seed_learner_dir(L), dir) == 0);
	struct unrolls u;
	unrolls_init(&u, 1, 3);
	run_updates(L, &u, 3);
	CHECK_MSG(seed_learner_save(L, true, &err) == 0, "%s", err.msg);
	CHECK(reserved_in(dir) == 3); /* the last save gives the rest back */
	float *p = params_copy(L);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK(st->saved_updates == 3 && st->saved_frames == 6);

	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && ck->step == 3 && ck->frames == 6 && ck->policy_version == 3 && ck->optim_step == 3);
	CHECK(ck && seed_checkpoint_get(ck, "optim.adam_m") && seed_checkpoint_get(ck, "optim.adam_v"));
	seed_learner *R = learner(&c);
	CHECK(!params_equal(R, p)); /* a fresh model is another one */
	CHECK_MSG(seed_learner_restore(R, ck, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_learner_open_dir(R, dir, &err) == 0, "%s", err.msg);
	CHECK(params_equal(R, p));
	const seed_learner_status *rs = seed_learner_get_status(R);
	CHECK(rs->updates == 3 && rs->frames == 6 && rs->policy_version == 3);
	/* The same next update in both: same optimizer state, same result. */
	run_updates(L, &u, 1);
	run_updates(R, &u, 1);
	CHECK(params_equal(R, seed_model_params(seed_learner_model(L))));
	CHECK(rs->policy_version == 4);
	seed_checkpoint_free(&ck);
	seed_learner_free(&R);
	seed_learner_free(&L);
	free(p);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* A checkpoint written before frames were emulator frames has no
 * agent_steps, and its frames are agent steps.  Made here as such a Seed
 * wrote it: a learner's checkpoint (3 updates of T 2, B 1: 6 steps) saved
 * again with agent_steps -1, which seed_checkpoint_save leaves out.
 * Resumed, the learner stands at 6 agent steps with frames not known (no
 * metrics line, the summary says so, a save keeps the old form) until a
 * frame says its frame skip, 4: frames 6 * 4 = 24, and its update adds
 * 2 * 4: 32 frames, 8 agent steps, saved with both. */
static void t_resume_a_checkpoint_that_counted_agent_steps(void)
{
	const char *tmp = tmpdir_new();
	char dir[4200], old[4200], again[4200];
	snprintf(dir, sizeof dir, "%s/new", tmp);
	snprintf(old, sizeof old, "%s/old", tmp);
	snprintf(again, sizeof again, "%s/again", tmp);
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	seed_err err = {""};
	CHECK_MSG(seed_learner_open_dir(L, dir, &err) == 0, "%s", err.msg);
	struct unrolls u;
	unrolls_init(&u, 1, 3);
	run_updates(L, &u, 3);
	CHECK_MSG(seed_learner_save(L, true, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && ck->agent_steps == 6 && ck->frames == 6);
	ck->agent_steps = -1;
	CHECK_MSG(seed_checkpoint_save(old, ck, &err) == 0, "%s", err.msg);
	seed_checkpoint_free(&ck);
	char path[4300];
	snprintf(path, sizeof path, "%s/checkpoint.json", old);
	json_t *j = json_load_file(path, 0, NULL);
	CHECK(j && !json_object_get(j, "agent_steps") &&
	      json_integer_value(json_object_get(j, "frames")) == 6);
	json_decref(j);

	CHECK_MSG(seed_checkpoint_load(old, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && ck->agent_steps == -1);
	seed_learner *R = learner(&c);
	CHECK_MSG(seed_learner_restore(R, ck, &err) == 0, "%s", err.msg);
	const seed_learner_status *st = seed_learner_get_status(R);
	CHECK(st->frames_from_steps && st->agent_steps == 6 && st->frames == 6);
	struct timespec ms = {0, 2000000};
	nanosleep(&ms, NULL);
	CHECK(seed_learner_metrics(R) == NULL);
	char line[256];
	seed_learner_summary(R, NULL, line, sizeof line);
	CHECK_MSG(has(line, "stopped by a signal: 6 agent steps (frame skip not known yet), 3 updates"), "%s",
	          line);
	/* Saved before any frame came: still the old form. */
	CHECK_MSG(seed_learner_open_dir(R, again, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_learner_save(R, false, &err) == 0, "%s", err.msg);
	snprintf(path, sizeof path, "%s/checkpoint.json", again);
	j = json_load_file(path, 0, NULL);
	CHECK(j && !json_object_get(j, "agent_steps") &&
	      json_integer_value(json_object_get(j, "frames")) == 6);
	json_decref(j);
	/* The first frame says frame skip 4. */
	seed_frame *f = unrolls_frame(&u);
	seed_frame_set_int(f, "frame_skip", 4);
	CHECK_MSG(seed_learner_feed(R, f, &err) == 1, "%s", err.msg);
	CHECK_MSG(!st->frames_from_steps && st->agent_steps == 8 && st->frames == 32,
	          "%lld agent steps, %lld frames", (long long)st->agent_steps, (long long)st->frames);
	json_t *m = seed_learner_metrics(R);
	CHECK(m && json_number_value(json_object_get(m, "frames")) == 32 &&
	      json_number_value(json_object_get(m, "agent_steps")) == 8);
	json_decref(m);
	CHECK_MSG(seed_learner_save(R, true, &err) == 0, "%s", err.msg);
	j = json_load_file(path, 0, NULL);
	CHECK(j && json_integer_value(json_object_get(j, "agent_steps")) == 8 &&
	      json_integer_value(json_object_get(j, "frames")) == 32);
	json_decref(j);
	seed_checkpoint_free(&ck);
	seed_learner_free(&R);
	seed_learner_free(&L);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* Feed an episode frame of n returns to L. */
static void feed_returns(seed_learner *L, float *ret, int n)
{
	int32_t env[8] = {0}, len[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	uint8_t tr[8] = {0};
	int64_t N = n;
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_EPISODE);
	seed_frame_set_int(&f, "run", 0);
	seed_frame_set_int(&f, "actor", 0);
	seed_frame_set_tensor(&f, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &N));
	seed_frame_set_tensor(&f, "return", seed_tensor_view(ret, SEED_DTYPE_F32, 1, &N));
	seed_frame_set_tensor(&f, "length", seed_tensor_view(len, SEED_DTYPE_I32, 1, &N));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view(tr, SEED_DTYPE_U8, 1, &N));
	seed_err err = {""};
	CHECK_MSG(seed_learner_feed(L, &f, &err) == 0, "%s", err.msg);
}

/* A resumed run's mean return goes on from the window it had, by hand:
 * window 3, returns 1, 2, 3, 4 leave {2, 3, 4}, mean 3, in the
 * checkpoint; restored, the mean is 3 at once (the metrics line says so),
 * and a return of 8 makes {3, 4, 8}, mean 5 (starting over would give 8).
 * A learner resumed with a window of 2 keeps the last two: {3, 4}, mean
 * 3.5.  A checkpoint saved before any episode ended has no window. */
static void t_return_window_survives_resume(void)
{
	const char *tmp = tmpdir_new();
	char dir[4200], empty[4200];
	snprintf(dir, sizeof dir, "%s/run", tmp);
	snprintf(empty, sizeof empty, "%s/empty", tmp);
	seed_config c, c2;
	config(&c, 2, 1, ", \"return_window\": 3");
	config(&c2, 2, 1, ", \"return_window\": 2");
	seed_err err = {""};
	seed_learner *E = learner(&c);
	CHECK_MSG(seed_learner_open_dir(E, empty, &err) == 0 && seed_learner_save(E, true, &err) == 0, "%s",
	          err.msg);
	seed_learner *L = learner(&c);
	feed_returns(L, (float[]){1, 2, 3, 4}, 4);
	CHECK_NEAR(seed_learner_get_status(L)->mean_return, 3, 1e-12);
	CHECK_MSG(seed_learner_open_dir(L, dir, &err) == 0 && seed_learner_save(L, true, &err) == 0, "%s",
	          err.msg);
	seed_checkpoint *ck = NULL, *ck0 = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	CHECK_MSG(seed_checkpoint_load(empty, &ck0, &err) == 0, "%s", err.msg);
	CHECK(ck && seed_checkpoint_get(ck, "learner.returns"));
	CHECK(ck0 && !seed_checkpoint_get(ck0, "learner.returns"));

	seed_learner *R = learner(&c);
	CHECK_MSG(seed_learner_restore(R, ck, &err) == 0, "%s", err.msg);
	const seed_learner_status *rs = seed_learner_get_status(R);
	CHECK(rs->nreturns == 3);
	CHECK_NEAR(rs->mean_return, 3, 1e-12);
	nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL); /* a metrics interval needs time */
	json_t *m = seed_learner_metrics(R);
	const json_t *er = m ? json_object_get(m, "episode_return") : NULL;
	CHECK_MSG(json_is_number(er) && fabs(json_number_value(er) - 3) < 1e-12, "episode_return %s",
	          json_is_number(er) ? "not 3" : "not a number");
	json_decref(m);
	feed_returns(R, (float[]){8}, 1);
	CHECK(rs->nreturns == 3);
	CHECK_NEAR(rs->mean_return, 5, 1e-12);

	seed_learner *S = learner(&c2);
	CHECK_MSG(seed_learner_restore(S, ck, &err) == 0, "%s", err.msg);
	CHECK(seed_learner_get_status(S)->nreturns == 2);
	CHECK_NEAR(seed_learner_get_status(S)->mean_return, 3.5, 1e-12);

	seed_learner *Z = learner(&c);
	CHECK_MSG(seed_learner_restore(Z, ck0, &err) == 0, "%s", err.msg);
	CHECK(seed_learner_get_status(Z)->nreturns == 0 && isnan(seed_learner_get_status(Z)->mean_return));

	seed_checkpoint_free(&ck);
	seed_checkpoint_free(&ck0);
	seed_learner_free(&Z);
	seed_learner_free(&S);
	seed_learner_free(&R);
	seed_learner_free(&L);
	seed_learner_free(&E);
	seed_config_free(&c2);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* A learner killed after publishing versions past its checkpoint: the
 * resumed one must start past everything reserved.  Opening a fresh
 * directory reserves versions 0 .. BLOCK-1 (4095); the checkpoint is at
 * version 2, versions 3..5 were handed out after it; the resumed learner
 * starts at 4096. */
static void t_versions_are_not_reused_after_a_crash(void)
{
	const char *tmp = tmpdir_new();
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	seed_err err = {""};
	CHECK(seed_learner_open_dir(L, tmp, &err) == 0);
	CHECK(reserved_in(tmp) == 4095);
	struct unrolls u;
	unrolls_init(&u, 1, 3);
	run_updates(L, &u, 2);
	CHECK(seed_learner_save(L, false, &err) == 0);
	CHECK(reserved_in(tmp) == 4095); /* not the last save: kept */
	run_updates(L, &u, 3);
	CHECK(seed_learner_get_status(L)->policy_version == 5);
	seed_learner_free(&L); /* kill -9: no last save */

	seed_checkpoint *ck = NULL;
	CHECK(seed_checkpoint_load(tmp, &ck, &err) == 0 && ck->policy_version == 2);
	seed_learner *R = learner(&c);
	CHECK(seed_learner_restore(R, ck, &err) == 0);
	/* Restore alone already sees the reservation beside the checkpoint. */
	CHECK(seed_learner_get_status(R)->policy_version == 4096);
	CHECK(seed_learner_open_dir(R, tmp, &err) == 0);
	CHECK(seed_learner_get_status(R)->policy_version == 4096);
	CHECK(reserved_in(tmp) == 4096 + 4095);
	run_updates(R, &u, 1);
	CHECK(seed_learner_get_status(R)->policy_version == 4097);
	seed_checkpoint_free(&ck);
	seed_learner_free(&R);

	/* A new run into a directory that was used starts past it too. */
	seed_learner *N = learner(&c);
	CHECK(seed_learner_open_dir(N, tmp, &err) == 0);
	CHECK(seed_learner_get_status(N)->policy_version == 4096 + 4095 + 1);
	seed_learner_free(&N);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* An update that needs a new block and cannot write it changes nothing:
 * the batch stays full, the version stays. */
static void t_reservation_failure_changes_nothing(void)
{
	const char *tmp = tmpdir_new();
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/run", tmp);
	seed_config c;
	config(&c, 1, 1, NULL);
	seed_learner *L = learner(&c);
	seed_err err = {""};
	CHECK(seed_learner_open_dir(L, dir, &err) == 0);
	struct unrolls u;
	unrolls_init(&u, 1, 2);
	run_updates(L, &u, SEED_LEARNER_VERSION_BLOCK - 1);
	CHECK(seed_learner_get_status(L)->policy_version == 4095);
	/* The run directory becomes a file: nothing can be written there. */
	char cmd[8600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && touch '%s'", dir, dir);
	CHECK(system(cmd) == 0);
	CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
	int rc = seed_learner_update(L, &err);
	CHECK_MSG(rc < 0 && has(err.msg, dir), "rc %d: %s", rc, err.msg);
	CHECK(seed_learner_full(L) && seed_learner_get_status(L)->policy_version == 4095);
	/* A save fails too, and says what the directory holds. */
	rc = seed_learner_save(L, false, &err);
	CHECK_MSG(rc < 0 && has(err.msg, "holds no checkpoint of this run"), "%s", err.msg);
	seed_learner_free(&L);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* A run directory under a regular file cannot be made: the message names
 * the path. */
/* V-trace needs policy logits: a dueling (Q-value) head is refused at
 * creation, with what it needs instead. */
static void t_refuses_dueling_head(void)
{
	const char *text =
	    "{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 8}],"
	    " \"head\": \"dueling\"}, \"unroll_length\": 4, \"batch_size\": 2}";
	json_t *root = json_loads(text, 0, NULL);
	seed_config c;
	seed_err err = {""};
	int rc = root ? seed_config_parse(root, &c, &err) : -1;
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc) { /* root is still ours */
		json_decref(root);
		return;
	}
	seed_learner *L = NULL;
	CHECK(seed_learner_new(&L, &c, &SPEC, &err) == -EINVAL);
	CHECK(L == NULL);
	CHECK_MSG(has(err.msg, "\"dueling\" head") && has(err.msg, "V-trace") &&
	              has(err.msg, "Q-learning algorithm (r2d2)"),
	          "%s", err.msg);
	seed_config_free(&c);
}

/* V-trace unrolls carry no core state yet: a model with a core is refused
 * at creation, saying why. */
/* V-trace through a recurrent core: the learner runs the T + 1 steps of
 * each unroll through the core from the frame's state, with the previous
 * action (the frame's before step 0, then the unroll's own), the reward
 * that came with each observation, and resets where episodes begin; the
 * gradient is that of the reference built here by hand from those
 * definitions.  A state of the wrong size is refused. */
static void t_core_gradient(void)
{
	enum { T = 3, B = 2, T1 = T + 1, A = 2, H = 3, S = 2 * H };
	const char *text =
	    "{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 5}, "
	    "{\"type\": \"tanh\"}], \"core\": {\"type\": \"lstm\", \"units\": 3, \"prev_reward\": true, "
	    "\"prev_action\": true}}, \"unroll_length\": 3, \"batch_size\": 2, \"discount\": 0.9, "
	    "\"seed\": 5, \"max_grad_norm\": 0}";
	json_t *root = json_loads(text, 0, NULL);
	seed_config c;
	seed_err err = {""};
	int rc = root ? seed_config_parse(root, &c, &err) : -1;
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc) {
		json_decref(root);
		return;
	}
	seed_learner *L = learner(&c);
	seed_model *m = seed_learner_model(L);
	CHECK(seed_model_state_floats(m) == S);
	size_t np = seed_model_num_params(m);
	seed_model *ref = NULL;
	CHECK(seed_model_new(&ref, c.model, SPEC.obs_dtype, SPEC.obs_rank, SPEC.obs_shape, A, T1 * B, &err) ==
	      0);
	if (!ref)
		exit(99);
	memcpy(seed_model_params(ref), seed_model_params(m), np * sizeof(float));
	struct unrolls u;
	unrolls_init(&u, B, T1);
	for (int i = 0; i < B * T1; i++)
		u.reward[i] = 0.7f * (float)(i % 3) - 0.4f;
	u.terminated[1 * T1 + 2] = 1; /* unroll 1 starts an episode at step 2 */
	float state[B][S];
	int32_t prev0[B] = {1, -1};
	for (int b = 0; b < B; b++)
		for (int k = 0; k < S; k++)
			state[b][k] = 0.2f * (float)(k + 1) * (b ? -1.0f : 1.0f);
	seed_frame *f = unrolls_frame(&u);
	seed_frame_set_tensor(f, "state", seed_tensor_view(state, SEED_DTYPE_F32, 2, (int64_t[]){B, S}));
	seed_frame_set_tensor(f, "prev_action", seed_tensor_view(prev0, SEED_DTYPE_I32, 1, (int64_t[]){B}));
	CHECK_MSG(seed_learner_add(L, f, 0, &err) == B, "%s", err.msg);
	CHECK_MSG(seed_learner_update(L, &err) == 0, "%s", err.msg);

	/* The reference, time-major [t][b]. */
	const seed_learner_batch *bt = seed_learner_get_batch(L);
	static float obs[T1][B][4], rew[T1][B], logits[T1][B][A], values[T1][B], dlogits[T1][B][A],
	    dvalues[T1][B];
	static int32_t prev[T1][B];
	static uint8_t reset[T1][B];
	for (int t = 0; t < T1; t++)
		for (int b = 0; b < B; b++) {
			int i = b * T1 + t;
			memcpy(obs[t][b], &u.obs[i * 4], sizeof obs[t][b]);
			rew[t][b] = u.reward[i];
			prev[t][b] = t == 0 ? prev0[b] : u.action[i - 1];
			reset[t][b] = u.terminated[i] || u.truncated[i];
		}
	seed_model_seq q = {.T = T1,
	                    .B = B,
	                    .obs = obs,
	                    .prev_reward = &rew[0][0],
	                    .prev_action = &prev[0][0],
	                    .reset = &reset[0][0],
	                    .state0 = &state[0][0]};
	CHECK(seed_model_forward_seq(ref, &q, &logits[0][0][0], &values[0][0]) == 0);
	seed_loss_batch lb = {.T = T,
	                      .B = B,
	                      .A = A,
	                      .logits = &logits[0][0][0],
	                      .behaviour_logits = bt->behaviour_logits,
	                      .actions = bt->action,
	                      .rewards = bt->rewards,
	                      .discounts = bt->discounts,
	                      .values = &values[0][0],
	                      .bootstrap_value = values[T]};
	seed_loss_stats st;
	memset(dlogits, 0, sizeof dlogits);
	memset(dvalues, 0, sizeof dvalues);
	CHECK_MSG(seed_loss_vtrace(&c.loss, &lb, &st, &dlogits[0][0][0], &dvalues[0][0], &err) == 0, "%s",
	          err.msg);
	seed_model_zero_grad(ref);
	CHECK(seed_model_backward_seq(ref, &dlogits[0][0][0], &dvalues[0][0]) == 0);
	const float *g = seed_model_grads(m), *want = seed_model_grads(ref);
	double gmax = 0, worst = 0;
	for (size_t i = 0; i < np; i++) {
		gmax = fmax(gmax, fabs(want[i]));
		worst = fmax(worst, fabs((double)g[i] - want[i]));
	}
	CHECK_MSG(gmax > 1e-4, "the reference gradient is not zero (max %g)", gmax);
	CHECK_MSG(worst <= 1e-5 * gmax, "gradients differ by %g (largest %g)", worst, gmax);
	CHECK_NEAR(seed_learner_get_status(L)->loss.total, st.total, 1e-6 * fabs(st.total));

	/* A state of another size is refused. */
	f = unrolls_frame(&u);
	seed_frame_set_tensor(f, "state", seed_tensor_view(state, SEED_DTYPE_F32, 2, (int64_t[]){B, S - 1}));
	CHECK(seed_learner_add(L, f, 0, &err) == -SEED_EFRAME);
	CHECK_MSG(has(err.msg, "field 'state'") && has(err.msg, "keeps 6"), "%s", err.msg);
	seed_model_free(&ref);
	seed_learner_free(&L);
	seed_config_free(&c);
}

static void t_open_dir_errors(void)
{
	const char *tmp = tmpdir_new();
	char file[4200], dir[4300];
	snprintf(file, sizeof file, "%s/file", tmp);
	snprintf(dir, sizeof dir, "%s/run", file);
	FILE *f = fopen(file, "w");
	fclose(f);
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	seed_err err = {""};
	int rc = seed_learner_open_dir(L, dir, &err);
	CHECK_MSG(rc == -ENOTDIR && has(err.msg, file), "rc %d: %s", rc, err.msg);
	CHECK(seed_learner_dir(L) == NULL);
	seed_learner_free(&L);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* ---- R2D2 ----------------------------------------------------------------- */

/* A sequences frame's data: Bf rows of T1 steps, batch-major as on the
 * wire, with keys, weights and, when S > 0, each row's state and previous
 * action. */
struct seqs {
	int Bf, T1, A, S;
	int32_t env[4], run[4], actor[4], prev_action[4];
	int64_t key[4];
	float weight[4], state[4 * 8];
	float obs[4 * 8 * 4];
	int32_t action[4 * 8], version[4 * 8];
	float reward[4 * 8], final_value[4 * 8], logits[4 * 8 * 2];
	uint8_t terminated[4 * 8], truncated[4 * 8];
	seed_frame f;
};

/* The golden update's data (tests/golden/r2d2_learner_golden.h). */
static void seqs_golden(struct seqs *s)
{
	memset(s, 0, sizeof *s);
	s->Bf = R2L_B, s->T1 = R2L_T + 1, s->A = R2L_A;
	int n = s->Bf * s->T1;
	memcpy(s->obs, r2l_obs, sizeof r2l_obs);
	memcpy(s->action, r2l_action, sizeof r2l_action);
	memcpy(s->reward, r2l_reward, sizeof r2l_reward);
	memcpy(s->terminated, r2l_terminated, sizeof r2l_terminated);
	memcpy(s->truncated, r2l_truncated, sizeof r2l_truncated);
	memcpy(s->weight, r2l_weight, sizeof r2l_weight);
	memcpy(s->key, r2l_key, sizeof r2l_key);
	for (int i = 0; i < n; i++)
		s->logits[2 * i] = 0.5f, s->logits[2 * i + 1] = -0.5f; /* Q values that acted: unused */
	for (int b = 0; b < s->Bf; b++)
		s->env[b] = b, s->run[b] = 0, s->actor[b] = 3;
}

static seed_frame *seqs_frame(struct seqs *s)
{
	seed_frame *f = &s->f;
	int64_t B = s->Bf, T1 = s->T1;
	seed_frame_init(f, SEED_FRAME_SEQUENCES);
	seed_frame_set_int(f, "num_actions", s->A);
	seed_frame_set_tensor(f, "env", seed_tensor_view(s->env, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(f, "run", seed_tensor_view(s->run, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(f, "actor", seed_tensor_view(s->actor, SEED_DTYPE_I32, 1, &B));
	if (s->S > 0) {
		seed_frame_set_tensor(f, "state",
		                      seed_tensor_view(s->state, SEED_DTYPE_F32, 2, (int64_t[]){B, s->S}));
		seed_frame_set_tensor(f, "prev_action",
		                      seed_tensor_view(s->prev_action, SEED_DTYPE_I32, 1, &B));
	}
	seed_frame_set_tensor(f, "key", seed_tensor_view(s->key, SEED_DTYPE_I64, 1, &B));
	seed_frame_set_tensor(f, "weight", seed_tensor_view(s->weight, SEED_DTYPE_F32, 1, &B));
	seed_frame_set_tensor(f, "obs", seed_tensor_view(s->obs, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, 4}));
	seed_frame_set_tensor(f, "action",
	                      seed_tensor_view(s->action, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "reward",
	                      seed_tensor_view(s->reward, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "terminated",
	                      seed_tensor_view(s->terminated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "truncated",
	                      seed_tensor_view(s->truncated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "final_value",
	                      seed_tensor_view(s->final_value, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "policy_version",
	                      seed_tensor_view(s->version, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(f, "logits",
	                      seed_tensor_view(s->logits, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, s->A}));
	return f;
}

static const char *FF_DUELING = "{\"torso\": [], \"head\": \"dueling\"}";
static const char *CORE_DUELING =
    "{\"torso\": [{\"type\": \"linear\", \"out\": 5}, {\"type\": \"tanh\"}], \"core\": {\"type\": \"lstm\", "
    "\"units\": 3, \"prev_reward\": true, \"prev_action\": true}, \"head\": \"dueling\"}";

/* An r2d2 config: the golden update's settings, no clipping, no decay. */
static void r2config(seed_config *c, const char *model, int T, int B, int burn, int period, const char *extra)
{
	char text[2048];
	snprintf(
	    text, sizeof text,
	    "{\"env\": \"cartpole\", \"algorithm\": \"r2d2\", \"model\": %s, \"unroll_length\": %d, "
	    "\"batch_size\": %d, \"discount\": 0.9, \"seed\": 5, \"max_grad_norm\": 0, "
	    "\"optimizer\": {\"lr\": 0.01, \"lr_decay\": false, \"eps\": 1e-3}, \"r2d2\": {\"burn_in\": %d, "
	    "\"n_step\": %d, \"value_rescale_eps\": 1e-3, \"eta\": 0.9, \"target_update_period\": %d}%s}",
	    model, T, B, burn, R2L_N_STEP, period, extra ? extra : "");
	json_t *root = json_loads(text, 0, NULL);
	seed_err err = {""};
	if (!root || seed_config_parse(root, c, &err)) {
		printf("# bad test config: %s\n", err.msg);
		exit(99);
	}
}

static int close_to(double got, double want)
{
	return fabs(got - want) <= 2e-5 * fabs(want) + 1e-6;
}

/* The golden learner: online and target parameters from the reference. */
static seed_learner *golden_learner(seed_config *c, int period)
{
	r2config(c, FF_DUELING, R2L_T, R2L_B, R2L_BURN, period, NULL);
	seed_learner *L = learner(c);
	seed_model *m = seed_learner_model(L), *tg = seed_learner_target_model(L);
	CHECK(seed_model_num_params(m) == R2L_NP && tg);
	/* The slab order the reference assumes. */
	static const char *const order[] = {"advantage.weight", "value.weight", "advantage.bias",
	                                    "value.bias"};
	for (int i = 0; i < 4; i++)
		CHECK(strcmp(seed_model_param_at(m, i)->name, order[i]) == 0);
	CHECK(seed_model_load_params(m, r2l_online, sizeof r2l_online) == 0);
	CHECK(seed_model_load_params(tg, r2l_target, sizeof r2l_target) == 0);
	return L;
}

/* One update against tests/golden/r2d2_learner_ref.py: priorities, the
 * weighted loss, its statistics, the gradient of every parameter (no
 * clipping: the slab holds it after the update), and the priority frame. */
static void t_r2d2_update_matches_reference(void)
{
	seed_config c;
	seed_learner *L = golden_learner(&c, 100);
	struct seqs s;
	seqs_golden(&s);
	seed_err err = {""};
	int64_t version0 = seed_learner_get_status(L)->policy_version;
	CHECK_MSG(seed_learner_feed(L, seqs_frame(&s), &err) == 1, "%s", err.msg);
	const seed_learner_status *st = seed_learner_get_status(L);
	const int64_t *keys;
	int n;
	const float *prio = seed_learner_priorities(L, &keys, &n);
	CHECK(n == R2L_B);
	for (int b = 0; b < n; b++) {
		CHECK_MSG(close_to(prio[b], r2l_priority[b]), "priority[%d] %.9g, reference %.9g", b, prio[b],
		          r2l_priority[b]);
		CHECK(keys[b] == r2l_key[b]);
	}
	CHECK_MSG(close_to(st->loss.total, r2l_loss), "loss %.9g, reference %.9g", st->loss.total, r2l_loss);
	CHECK_MSG(close_to(st->mean_q, r2l_mean_q), "mean_q %.9g, reference %.9g", st->mean_q, r2l_mean_q);
	CHECK_MSG(close_to(st->mean_abs_td, r2l_mean_abs_td), "mean_abs_td %.9g, reference %.9g",
	          st->mean_abs_td, r2l_mean_abs_td);
	CHECK(close_to(st->mean_priority, (r2l_priority[0] + r2l_priority[1]) / 2));
	const float *g = seed_model_grads(seed_learner_model(L));
	for (int i = 0; i < R2L_NP; i++)
		CHECK_MSG(close_to(g[i], r2l_grad[i]), "grad[%d] %.9g, reference %.9g", i, g[i], r2l_grad[i]);
	CHECK(st->updates == 1 && st->policy_version == version0 + 1 && st->target_updates == 0);
	CHECK(st->frames == R2L_T * R2L_B);
	/* The parameters moved against the gradient (Adam's first step). */
	const float *p = seed_model_params(seed_learner_model(L));
	for (int i = 0; i < R2L_NP; i++)
		CHECK(fabs(r2l_grad[i]) < 1e-6 || (p[i] - r2l_online[i]) * r2l_grad[i] < 0);
	/* The priority frame: keys and priorities, decoded back. */
	seed_buf out = {0};
	CHECK_MSG(seed_learner_priority_frame(L, &out, &err) == 0, "%s", err.msg);
	seed_frame pf;
	CHECK_MSG(seed_frame_decode(&pf, out.data, out.len, &err) == 0, "%s", err.msg);
	CHECK(pf.type == SEED_FRAME_PRIORITY);
	const seed_tensor *kt = seed_frame_tensor(&pf, "key"), *pt = seed_frame_tensor(&pf, "priority");
	CHECK(kt && pt && kt->shape[0] == R2L_B && pt->shape[0] == R2L_B);
	for (int b = 0; kt && pt && b < R2L_B; b++) {
		int64_t k;
		float x;
		memcpy(&k, (const uint8_t *)kt->data + 8 * b, 8);
		memcpy(&x, (const uint8_t *)pt->data + 4 * b, 4);
		CHECK(k == r2l_key[b] && x == prio[b]);
	}
	seed_frame_clear(&pf);
	/* The metrics name R2D2's statistics. */
	json_t *mo = seed_learner_metrics(L);
	CHECK(mo && json_object_get(mo, "mean_q") && json_object_get(mo, "mean_abs_td") &&
	      json_object_get(mo, "mean_priority") && json_object_get(mo, "target_updates") &&
	      !json_object_get(mo, "entropy"));
	json_decref(mo);
	seed_buf_free(&out);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* For a feed-forward model the burn-in steps are skipped: changing their
 * observations, rewards, actions and flags changes nothing. */
static void t_r2d2_burn_in_changes_nothing_without_a_core(void)
{
	float prio[2][R2L_B], grads[2][R2L_NP];
	for (int k = 0; k < 2; k++) {
		seed_config c;
		seed_learner *L = golden_learner(&c, 100);
		struct seqs s;
		seqs_golden(&s);
		for (int b = 0; k == 1 && b < s.Bf; b++) {
			int i = b * s.T1; /* step 0: the burn-in */
			for (int j = 0; j < 4; j++)
				s.obs[4 * i + j] = 9.0f + (float)j;
			s.reward[i] = -7;
			s.action[i] = 1 - s.action[i];
			s.terminated[i] = 1;
		}
		seed_err err = {""};
		CHECK_MSG(seed_learner_feed(L, seqs_frame(&s), &err) == 1, "%s", err.msg);
		memcpy(prio[k], seed_learner_priorities(L, NULL, NULL), sizeof prio[k]);
		memcpy(grads[k], seed_model_grads(seed_learner_model(L)), sizeof grads[k]);
		seed_learner_free(&L);
		seed_config_free(&c);
	}
	CHECK(memcmp(prio[0], prio[1], sizeof prio[0]) == 0);
	CHECK(memcmp(grads[0], grads[1], sizeof grads[0]) == 0);
}

/* Core data: 2 rows of T1 steps, each row with a stored state. */
static void seqs_core(struct seqs *s, int T1, int S)
{
	memset(s, 0, sizeof *s);
	s->Bf = 2, s->T1 = T1, s->A = 2, s->S = S;
	for (int b = 0; b < 2; b++) {
		s->env[b] = b, s->key[b] = 100 + b, s->weight[b] = b ? 1.0f : 0.75f;
		s->prev_action[b] = b ? 1 : -1;
		for (int j = 0; j < S; j++)
			s->state[b * S + j] = 0.1f * (float)(j + 1) * (b ? -1.0f : 1.0f);
		for (int t = 0; t < T1; t++) {
			int i = b * T1 + t;
			for (int k = 0; k < 4; k++)
				s->obs[4 * i + k] = sinf((float)(1 + 5 * b + 3 * t + k));
			s->action[i] = (b + 2 * t + t / 2) % 2;
			s->reward[i] = 0.3f * (float)t - 0.4f * (float)b;
		}
	}
	s->terminated[0 * T1 + 3] = 1;
}

/* With a core the burn-in only rebuilds the state: the update equals that
 * of a learner with no burn-in fed the trained steps alone from the state
 * the burn-in reaches (computed here with a separate copy of the model),
 * so no gradient flows into the burn-in steps; and that state matters:
 * other burn-in steps give other priorities. */
static void t_r2d2_core_burn_in_takes_no_gradient(void)
{
	enum { T = 4, BURN = 2 };
	seed_config c1, c2;
	r2config(&c1, CORE_DUELING, T, 2, BURN, 100, NULL);
	r2config(&c2, CORE_DUELING, T - BURN, 2, 0, 100, NULL);
	seed_learner *L1 = learner(&c1), *L2 = learner(&c2);
	seed_model *m1 = seed_learner_model(L1);
	int S = seed_model_state_floats(m1);
	CHECK(S == 6);
	seed_model_copy_params(seed_learner_model(L2), m1);
	seed_model_copy_params(seed_learner_target_model(L2), m1);
	struct seqs s1, s2;
	seqs_core(&s1, T + 1, S);
	/* The burn-in by hand: steps 0 .. BURN-1 of each row, time-major. */
	seed_model *m = NULL;
	seed_err err = {""};
	CHECK_MSG(seed_model_new(&m, CORE_DUELING, SEED_DTYPE_F32, 1, (int64_t[]){4}, 2, 64, &err) == 0, "%s",
	          err.msg);
	seed_model_copy_params(m, m1);
	float obs[BURN * 2 * 4], rew[BURN * 2], q[BURN * 2 * 2], state[2 * 6];
	int32_t pa[BURN * 2];
	uint8_t reset[BURN * 2];
	for (int t = 0; t < BURN; t++)
		for (int b = 0; b < 2; b++) {
			int i = b * (T + 1) + t, j = t * 2 + b;
			memcpy(obs + 4 * j, s1.obs + 4 * i, 16);
			rew[j] = s1.reward[i];
			pa[j] = t ? s1.action[i - 1] : s1.prev_action[b];
			reset[j] = s1.terminated[i] | s1.truncated[i];
		}
	memcpy(state, s1.state, sizeof state);
	seed_model_seq sq = {.T = BURN,
	                     .B = 2,
	                     .obs = obs,
	                     .prev_reward = rew,
	                     .prev_action = pa,
	                     .reset = reset,
	                     .state0 = state,
	                     .state_out = state};
	CHECK(seed_model_forward_seq_q(m, &sq, q) == 0);
	/* The second learner's rows: steps BURN .. T from that state. */
	memset(&s2, 0, sizeof s2);
	s2 = s1;
	s2.T1 = T + 1 - BURN;
	memcpy(s2.state, state, sizeof state);
	for (int b = 0; b < 2; b++) {
		s2.prev_action[b] = s1.action[b * (T + 1) + BURN - 1];
		for (int t = 0; t < s2.T1; t++) {
			int i = b * (T + 1) + BURN + t, j = b * s2.T1 + t;
			memcpy(s2.obs + 4 * j, s1.obs + 4 * i, 16);
			s2.action[j] = s1.action[i];
			s2.reward[j] = s1.reward[i];
			s2.terminated[j] = s1.terminated[i];
			s2.truncated[j] = s1.truncated[i];
			memcpy(s2.logits + 2 * j, s1.logits + 2 * i, 8);
		}
	}
	CHECK_MSG(seed_learner_feed(L1, seqs_frame(&s1), &err) == 1, "%s", err.msg);
	CHECK_MSG(seed_learner_feed(L2, seqs_frame(&s2), &err) == 1, "%s", err.msg);
	const float *p1 = seed_learner_priorities(L1, NULL, NULL),
	            *p2 = seed_learner_priorities(L2, NULL, NULL);
	for (int b = 0; b < 2; b++)
		CHECK_MSG(close_to(p1[b], p2[b]), "priority[%d]: %.9g with burn-in, %.9g from its state", b,
		          p1[b], p2[b]);
	CHECK(close_to(seed_learner_get_status(L1)->loss.total, seed_learner_get_status(L2)->loss.total));
	const float *g1 = seed_model_grads(m1), *g2 = seed_model_grads(seed_learner_model(L2));
	size_t np = seed_model_num_params(m1);
	double gmax = 0;
	for (size_t i = 0; i < np; i++) {
		CHECK_MSG(close_to(g1[i], g2[i]), "grad[%zu]: %.9g with burn-in, %.9g from its state", i,
		          g1[i], g2[i]);
		gmax = fmax(gmax, fabs(g1[i]));
	}
	CHECK(gmax > 1e-4); /* not a vacuous comparison */
	/* Other burn-in steps: another state, other priorities. */
	seed_learner *L3 = learner(&c1);
	seed_model_copy_params(seed_learner_model(L3), m1);
	seed_model_copy_params(seed_learner_target_model(L3), m1);
	struct seqs s3 = s1;
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 4; k++)
			s3.obs[4 * (b * (T + 1)) + k] += 1.5f;
	CHECK_MSG(seed_learner_feed(L3, seqs_frame(&s3), &err) == 1, "%s", err.msg);
	const float *p3 = seed_learner_priorities(L3, NULL, NULL);
	CHECK(p3[0] != p1[0] || p3[1] != p1[1]);
	seed_model_free(&m);
	seed_learner_free(&L1);
	seed_learner_free(&L2);
	seed_learner_free(&L3);
	seed_config_free(&c1);
	seed_config_free(&c2);
}

static int target_equals(seed_learner *L, const float *p)
{
	seed_model *t = seed_learner_target_model(L);
	return memcmp(seed_model_params(t), p, seed_model_num_params(t) * sizeof(float)) == 0;
}

/* Period 3: the target holds the starting parameters through updates 1
 * and 2, the online ones of update 3 after it, through 5, those of update
 * 6 after it. */
static void t_r2d2_target_copied_every_period(void)
{
	seed_config c;
	r2config(&c, FF_DUELING, R2L_T, R2L_B, R2L_BURN, 3, NULL);
	seed_learner *L = learner(&c);
	float *start = params_copy(L), *held = params_copy(L);
	CHECK(target_equals(L, start)); /* a copy at the start */
	struct seqs s;
	seqs_golden(&s);
	seed_err err = {""};
	for (int u = 1; u <= 7; u++) {
		CHECK_MSG(seed_learner_feed(L, seqs_frame(&s), &err) == 1, "%s", err.msg);
		CHECK(!params_equal(L, held) || u % 3 == 0); /* the online network moves */
		if (u % 3 == 0)
			memcpy(held, seed_model_params(seed_learner_model(L)), R2L_NP * sizeof(float));
		CHECK_MSG(target_equals(L, held), "after update %d", u);
		CHECK(seed_learner_get_status(L)->target_updates == u / 3);
	}
	CHECK(!target_equals(L, start));
	free(start);
	free(held);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* A checkpoint holds the target network (target.NAME) and restores it. */
static void t_r2d2_checkpoint_round_trips_target(void)
{
	const char *tmp = tmpdir_new();
	seed_config c;
	r2config(&c, FF_DUELING, R2L_T, R2L_B, R2L_BURN, 2, NULL);
	seed_learner *L = learner(&c);
	seed_err err = {""};
	CHECK_MSG(seed_learner_open_dir(L, tmp, &err) == 0, "%s", err.msg);
	struct seqs s;
	seqs_golden(&s);
	for (int u = 0; u < 3; u++)
		CHECK_MSG(seed_learner_feed(L, seqs_frame(&s), &err) == 1, "%s", err.msg);
	seed_model *tg = seed_learner_target_model(L);
	float *target = memcpy(malloc(R2L_NP * sizeof(float)), seed_model_params(tg), R2L_NP * sizeof(float));
	CHECK(!params_equal(L, target)); /* update 3 moved the online network past the copy of update 2 */
	CHECK_MSG(seed_learner_save(L, true, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(tmp, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && seed_checkpoint_get(ck, "target.advantage.weight") &&
	      seed_checkpoint_get(ck, "target.value.bias"));
	seed_learner *R = learner(&c);
	CHECK_MSG(ck && seed_learner_restore(R, ck, &err) == 0, "%s", err.msg);
	CHECK(target_equals(R, target));
	CHECK(params_equal(R, seed_model_params(seed_learner_model(L))));
	CHECK(seed_learner_get_status(R)->target_updates == 1);
	/* The next update is the same in both. */
	CHECK(seed_learner_feed(L, seqs_frame(&s), &err) == 1 &&
	      seed_learner_feed(R, seqs_frame(&s), &err) == 1);
	CHECK(target_equals(R, seed_model_params(seed_learner_model(L))));
	CHECK(params_equal(R, seed_model_params(seed_learner_model(L))));
	seed_checkpoint_free(&ck);
	free(target);
	seed_learner_free(&R);
	seed_learner_free(&L);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* Bad frames and bad models, each refused with a message naming it. */
static void t_r2d2_refuses_bad_frames(void)
{
	seed_config c, v;
	r2config(&c, FF_DUELING, R2L_T, R2L_B, R2L_BURN, 100, NULL);
	seed_learner *L = learner(&c);
	CHECK(seed_learner_wants_sequences(L)); /* R2D2's row of the table: sampled sequences */
	seed_err err = {""};
	seed_buf out = {0};
	CHECK(seed_learner_priority_frame(L, &out, &err) == -EINVAL && has(err.msg, "no update"));
	/* Unroll frames are V-trace's. */
	struct unrolls u;
	unrolls_init(&u, 2, R2L_T + 1);
	CHECK(seed_learner_feed(L, unrolls_frame(&u), &err) == -SEED_EFRAME && has(err.msg, "sequences"));
	struct seqs s;
	struct {
		const char *name, *want;
	} cases[] = {{"negative weight", "'weight'"},
	             {"NaN weight", "'weight'"},
	             {"action", "'action'"},
	             {"steps", "steps"}};
	for (int i = 0; i < 4; i++) {
		seqs_golden(&s);
		if (i == 0)
			s.weight[1] = -1;
		if (i == 1)
			s.weight[0] = NAN;
		if (i == 2)
			s.action[3] = 2;
		if (i == 3)
			s.T1 = R2L_T;
		CHECK_MSG(seed_learner_feed(L, seqs_frame(&s), &err) == -SEED_EFRAME &&
		              has(err.msg, cases[i].want) && has(err.msg, "sequences frame"),
		          "%s: %s", cases[i].name, err.msg);
		CHECK(seed_learner_get_batch(L)->fill == 0);
	}
	seed_learner_free(&L);
	/* Sequences frames are R2D2's. */
	config(&v, R2L_T, R2L_B, NULL);
	seed_learner *V = learner(&v);
	seqs_golden(&s);
	CHECK(seed_learner_feed(V, seqs_frame(&s), &err) == -SEED_EFRAME && has(err.msg, "r2d2"));
	CHECK(seed_learner_priority_frame(V, &out, &err) == -EINVAL);
	CHECK(seed_learner_target_model(V) == NULL);
	seed_learner_free(&V);
	seed_config_free(&v);
	seed_config_free(&c);
	/* An actor-critic model cannot learn Q values. */
	r2config(&c, "{\"torso\": []}", R2L_T, R2L_B, R2L_BURN, 100, NULL);
	CHECK(seed_learner_new(&L, &c, &SPEC, &err) == -EINVAL && has(err.msg, "dueling") && !L);
	seed_config_free(&c);
	seed_buf_free(&out);
}

/* An r2d2 update, with a core, allocates nothing of its own: the one
 * allocation per update is seed_r2d2_loss's q_boot scratch (lib/rl/r2d2.c
 * allocates it per call; a workspace variant would take it away).  Under
 * valgrind nothing is counted (it replaces malloc). */
static void t_r2d2_update_allocates_only_the_loss_scratch(void)
{
	seed_config c;
	r2config(&c, CORE_DUELING, 4, 2, 2, 2, NULL);
	seed_learner *L = learner(&c);
	struct seqs s;
	seqs_core(&s, 5, 6);
	seed_frame *f = seqs_frame(&s);
	seed_err err = {""};
	CHECK(seed_learner_feed(L, f, &err) == 1);
	alloc_count = 0;
	alloc_counting = true;
	for (int k = 0; k < 5; k++) {
		int n = seed_learner_add(L, f, 0, &err);
		int rc = seed_learner_update(L, &err);
		CHECK(n == 2 && rc == 0);
	}
	alloc_counting = false;
	CHECK_MSG(alloc_count <= 5, "%ld allocations in 5 adds and updates (at most one each)", alloc_count);
	seed_learner_free(&L);
	seed_config_free(&c);
}

/* Where an update's time goes: forward, backward and the optimizer each
 * take some, and together no more than the updates' wall time (V-trace,
 * then R2D2). */
static void check_phases(const seed_learner *L, double wall)
{
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK_MSG(st->time_forward > 0 && st->time_backward > 0 && st->time_optim > 0,
	          "forward %g, backward %g, optim %g", st->time_forward, st->time_backward, st->time_optim);
	CHECK_MSG(st->time_forward + st->time_backward + st->time_optim <= wall, "%g s of %g",
	          st->time_forward + st->time_backward + st->time_optim, wall);
}

static void t_update_phases(void)
{
	seed_config c;
	config(&c, 2, 1, NULL);
	seed_learner *L = learner(&c);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK(st->time_forward == 0 && st->time_backward == 0 && st->time_optim == 0);
	struct unrolls u;
	unrolls_init(&u, 1, 3);
	seed_err err = {""};
	double t0 = seed_now_s();
	for (int i = 0; i < 3; i++) {
		CHECK(seed_learner_add(L, unrolls_frame(&u), 0, &err) == 1);
		CHECK(seed_learner_update(L, &err) == 0);
	}
	check_phases(L, seed_now_s() - t0);
	seed_learner_free(&L);
	seed_config_free(&c);

	r2config(&c, FF_DUELING, R2L_T, R2L_B, R2L_BURN, 3, NULL);
	L = learner(&c);
	struct seqs s;
	seqs_golden(&s);
	t0 = seed_now_s();
	for (int i = 0; i < 3; i++)
		CHECK_MSG(seed_learner_feed(L, seqs_frame(&s), &err) == 1, "%s", err.msg);
	check_phases(L, seed_now_s() - t0);
	seed_learner_free(&L);
	seed_config_free(&c);
}

int main(void)
{
	TAP_RUN(t_layout_time_major);
	TAP_RUN(t_transitions_by_hand);
	t_bad_frames();
	TAP_RUN(t_non_finite_gradient_skips_the_step);
	TAP_RUN(t_learning_rate_schedule);
	TAP_RUN(t_frames_count_the_frame_skip);
	TAP_RUN(t_gradient_clipping);
	TAP_RUN(t_policy_lag);
	TAP_RUN(t_return_window);
	TAP_RUN(t_feed_updates_as_batches_fill);
	TAP_RUN(t_update_allocates_nothing);
	TAP_RUN(t_update_gradient_is_the_full_batch_gradient);
	TAP_RUN(t_save_and_restore);
	TAP_RUN(t_resume_a_checkpoint_that_counted_agent_steps);
	TAP_RUN(t_return_window_survives_resume);
	TAP_RUN(t_versions_are_not_reused_after_a_crash);
	TAP_RUN(t_reservation_failure_changes_nothing);
	TAP_RUN(t_open_dir_errors);
	TAP_RUN(t_refuses_dueling_head);
	TAP_RUN(t_core_gradient);
	TAP_RUN(t_r2d2_update_matches_reference);
	TAP_RUN(t_r2d2_burn_in_changes_nothing_without_a_core);
	TAP_RUN(t_r2d2_core_burn_in_takes_no_gradient);
	TAP_RUN(t_r2d2_target_copied_every_period);
	TAP_RUN(t_r2d2_checkpoint_round_trips_target);
	TAP_RUN(t_r2d2_refuses_bad_frames);
	TAP_RUN(t_update_phases);
	TAP_RUN(t_r2d2_update_allocates_only_the_loss_scratch);
	return tap_done();
}
