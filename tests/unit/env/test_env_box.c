/* tests/unit/env/test_env_box.c: Box action spaces in the vector, and Pendulum.
 *
 * The vector's Box path (seed_envs_step_box: non-finite actions refused,
 * unstable steps truncated with the last finite observation, free_state)
 * is checked with a test class whose every step is known in advance.
 * Pendulum is checked against steps worked in float64 with numpy by
 * tests/golden/pendulum_ref.py, whose printout is pasted below.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/env.h"
#include "tap.h"

/* ---- a test class: obs = [steps, a0 + a1], reward = a0 --------------------
 * Two action dimensions with bounds [-1, 1] and [0, 5].  Option "bad_at":
 * step n of an episode goes wrong ("how": 0 reports SEED_ENV_UNSTABLE, 1
 * writes a NaN observation, 2 an infinite reward). */

typedef struct box_config {
	long long bad_at, how;
} box_config;

typedef struct box_state {
	int steps;
	int *buffer; /* allocated by reset, released by free_state */
} box_state;

static int frees;

static int box_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"bad_at", "how", NULL};
	box_config c = {.bad_at = 0, .how = 0};
	int rc = seed_env_options_check(options, "box", known, err);
	if (rc == 0)
		rc = seed_env_option_int(options, "box", "bad_at", 0, 100, &c.bad_at, err);
	if (rc == 0)
		rc = seed_env_option_int(options, "box", "how", 0, 2, &c.how, err);
	if (rc < 0)
		return rc;
	box_config *p = malloc(sizeof *p);
	*p = c;
	*config = p;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = 2;
	spec->action_space = SEED_ACTIONS_BOX;
	spec->num_actions = 2;
	spec->action_low[0] = -1;
	spec->action_high[0] = 1;
	spec->action_low[1] = 0;
	spec->action_high[1] = 5;
	return 0;
}

static void box_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	box_state *s = state;
	float *o = obs;
	if (!s->buffer)
		s->buffer = malloc(64);
	s->steps = 0;
	o[0] = 0;
	o[1] = 0;
}

static int box_step(const void *config, void *state, seed_rng *rng, const float *action, void *obs,
                    float *reward, bool *terminated)
{
	const box_config *c = config;
	box_state *s = state;
	float *o = obs;
	s->steps++;
	o[0] = (float)s->steps;
	o[1] = action[0] + action[1];
	*reward = action[0];
	*terminated = false;
	if (s->steps == c->bad_at) {
		if (c->how == 0)
			return SEED_ENV_UNSTABLE;
		if (c->how == 1)
			o[1] = NAN;
		else
			*reward = INFINITY;
	}
	return 0;
}

static void box_free_state(const void *config, void *state)
{
	box_state *s = state;
	free(s->buffer);
	frees++;
}

static const seed_env_class box_class = {
    .name = "box",
    .summary = "two real actions (test only)",
    .configure = box_configure,
    .free_config = free,
    .state_size = sizeof(box_state),
    .reset = box_reset,
    .step_box = box_step,
    .free_state = box_free_state,
};

/* Like box_class, but its spec's bounds are crossed. */
static int crossed_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	int rc = box_configure(options, config, spec, err);
	spec->action_low[1] = 6;
	return rc;
}

static const seed_env_class crossed_class = {
    .name = "box-crossed",
    .summary = "bounds low > high (test only)",
    .configure = crossed_configure,
    .free_config = free,
    .state_size = sizeof(box_state),
    .reset = box_reset,
    .step_box = box_step,
};

/* A discrete spec with only step_box. */
static int nostep_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	int rc = box_configure(options, config, spec, err);
	spec->action_space = SEED_ACTIONS_DISCRETE;
	return rc;
}

static const seed_env_class nostep_class = {
    .name = "box-nostep",
    .summary = "discrete spec without step (test only)",
    .configure = nostep_configure,
    .free_config = free,
    .state_size = sizeof(box_state),
    .reset = box_reset,
    .step_box = box_step,
};

static void t_spec_checks(void)
{
	seed_err err;
	seed_envs *e;
	seed_env_spec spec;
	CHECK(seed_env_probe("box", NULL, &spec, &err) == 0);
	CHECK(spec.action_space == SEED_ACTIONS_BOX && spec.num_actions == 2);
	CHECK(spec.action_low[1] == 0 && spec.action_high[1] == 5);
	CHECK(seed_envs_new(&e, "box-crossed", NULL, 1, 0, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "Box action 1 has bounds [6, 5]"), "%s", err.msg);
	CHECK(seed_envs_new(&e, "box-nostep", NULL, 1, 0, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "discrete actions but no step function"), "%s", err.msg);
	/* Registering needs step or step_box. */
	seed_env_class none = box_class;
	none.name = "box-none";
	none.step_box = NULL;
	CHECK(seed_env_register(&none) == -EINVAL);
}

static void t_step_box(void)
{
	seed_err err;
	seed_envs *e;
	frees = 0;
	CHECK(seed_envs_new(&e, "box", "{\"max_steps\": 3}", 2, 1, &err) == 0);
	float obs[2][2], fin[2][2], rew[2], ret[2];
	uint8_t term[2], trunc[2];
	int32_t len[2];
	float act[2][2] = {{0.5f, 2}, {-3, 7}}; /* outside the bounds reaches the env */
	CHECK(seed_envs_step_box(e, 0, 2, &act[0][0], obs, rew, term, trunc, fin, ret, len) == -EINVAL);
	seed_envs_reset(e, obs);
	int32_t dact[2] = {0, 0};
	CHECK(seed_envs_step(e, 0, 2, dact, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	act[1][1] = NAN;
	CHECK(seed_envs_step_box(e, 0, 2, &act[0][0], obs, rew, term, trunc, fin, ret, len) == -EINVAL);
	act[1][1] = -INFINITY;
	CHECK(seed_envs_step_box(e, 1, 1, &act[1][0], obs, rew, term, trunc, fin, ret, len) == -EINVAL);
	act[1][1] = 7;
	for (int t = 1; t <= 3; t++) {
		CHECK(seed_envs_step_box(e, 0, 2, &act[0][0], obs, rew, term, trunc, fin, ret, len) == 0);
		CHECK(rew[0] == 0.5f && rew[1] == -3 && !term[0] && !term[1]);
		CHECK(len[0] == t && ret[1] == -3.0f * (float)t);
		CHECK(trunc[0] == (t == 3) && trunc[1] == (t == 3));
		if (t < 3)
			CHECK(obs[0][0] == (float)t && obs[0][1] == 2.5f && obs[1][1] == 4);
	}
	/* The time limit reset both: final_obs holds step 3. */
	CHECK(obs[0][0] == 0 && fin[0][0] == 3 && fin[1][1] == 4);
	CHECK(seed_envs_unstable(e) == 0);
	seed_envs_free(&e);
	CHECK(frees == 2);
}

/* Each way of going wrong at step 2 truncates the episode there: reward 0,
 * final_obs the observation of step 1, the next episode's first in obs. */
static void t_unstable(void)
{
	for (int how = 0; how < 3; how++) {
		seed_err err;
		seed_envs *e;
		char opts[64];
		snprintf(opts, sizeof opts, "{\"bad_at\": 2, \"how\": %d}", how);
		CHECK(seed_envs_new(&e, "box", opts, 1, 1, &err) == 0);
		float obs[2], fin[2] = {-9, -9}, rew, ret;
		uint8_t term, trunc;
		int32_t len;
		float act[2] = {0.25f, 1};
		seed_envs_reset(e, obs);
		CHECK(seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &len) == 0);
		CHECK(!trunc && obs[0] == 1 && obs[1] == 1.25f);
		CHECK(seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &len) == 0);
		CHECK_MSG(trunc == 1 && term == 0 && rew == 0, "how %d: trunc %d term %d rew %g", how, trunc,
		          term, (double)rew);
		CHECK(fin[0] == 1 && fin[1] == 1.25f);
		CHECK(obs[0] == 0 && obs[1] == 0);
		CHECK(len == 2 && ret == 0.25f);
		CHECK(seed_envs_unstable(e) == 1);
		/* The next episode runs on. */
		CHECK(seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &len) == 0);
		CHECK(!trunc && obs[0] == 1 && len == 1);
		seed_envs_free(&e);
	}
}

/* tests/golden/pendulum_ref.py: from (theta, theta_dot) = (1, 0.5), torques
 * 0.5, 3 (clipped to 2), -2.5 (clipped to -2), 0. */
static const float pendulum_ref[4][4] = {
    /* reward, cos theta, sin theta, theta_dot */
    {-1.02525f, 0.48860586f, 0.87250465f, 1.2061032f},
    {-1.2737155f, 0.39168948f, 0.9200975f, 2.1604817f},
    {-1.8357613f, 0.27148855f, 0.9624417f, 2.5505548f},
    {-2.3297784f, 0.111090265f, 0.9938103f, 3.272386f},
};

static void t_pendulum(void)
{
	seed_err err;
	seed_envs *e;
	CHECK(seed_envs_new(&e, "pendulum", "{\"init_state\": [1.0, 0.5]}", 1, 0, &err) == 0);
	const seed_env_spec *s = seed_envs_spec(e);
	CHECK(s->action_space == SEED_ACTIONS_BOX && s->num_actions == 1);
	CHECK(s->action_low[0] == -2 && s->action_high[0] == 2 && s->max_steps == 200);
	CHECK(s->obs_rank == 1 && s->obs_shape[0] == 3);
	float obs[3], rew;
	uint8_t term, trunc;
	seed_envs_reset(e, obs);
	CHECK(obs[0] == (float)cos(1.0) && obs[1] == (float)sin(1.0) && obs[2] == 0.5f);
	const float torques[4] = {0.5f, 3, -2.5f, 0};
	for (int t = 0; t < 4; t++) {
		CHECK(seed_envs_step_box(e, 0, 1, &torques[t], obs, &rew, &term, &trunc, NULL, NULL, NULL) ==
		      0);
		CHECK_NEAR(rew, pendulum_ref[t][0], 2e-6);
		for (int i = 0; i < 3; i++)
			CHECK_NEAR(obs[i], pendulum_ref[t][i + 1], 2e-6);
		CHECK(!term && !trunc);
	}
	seed_envs_free(&e);

	/* Random starts: theta in [-pi, pi), theta_dot in [-1, 1). */
	CHECK(seed_envs_new(&e, "pendulum", NULL, 64, 3, &err) == 0);
	float many[64][3];
	seed_envs_reset(e, many);
	int ok = 1;
	for (int i = 0; i < 64; i++)
		ok &= fabsf(many[i][0] * many[i][0] + many[i][1] * many[i][1] - 1) < 1e-5f &&
		      many[i][2] >= -1 && many[i][2] < 1;
	CHECK(ok);
	seed_envs_free(&e);

	CHECK(seed_envs_new(&e, "pendulum", "{\"g\": \"x\"}", 1, 0, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "pendulum: option \"g\" must be a number"), "%s", err.msg);
	CHECK(seed_envs_new(&e, "pendulum", "{\"init_state\": [1]}", 1, 0, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "init_state"), "%s", err.msg);
}

int main(void)
{
	CHECK(seed_env_register(&box_class) == 0);
	CHECK(seed_env_register(&crossed_class) == 0);
	CHECK(seed_env_register(&nostep_class) == 0);
	TAP_RUN(t_spec_checks);
	TAP_RUN(t_step_box);
	TAP_RUN(t_unstable);
	TAP_RUN(t_pendulum);
	return tap_done();
}
