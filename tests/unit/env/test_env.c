/* tests/unit/env/test_env.c: the environment registry, the vector, CartPole and Catch.
 *
 * CartPole is checked step for step, with exact float equality, against
 * trajectories recorded with Gymnasium (tests/golden/cartpole_ref.h, made by
 * tests/golden/cartpole_ref.py).  Catch is checked against scenarios worked out
 * by hand from bsuite's rules.  The vector's own behaviour (time limit,
 * auto-reset, final_obs, episode totals, errors) is checked with a tiny
 * counting environment defined here, whose every step is known in advance.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "seed/env.h"
#include "tap.h"

#include "cartpole_ref.h"

#define NREFS ((int)(sizeof cartpole_refs / sizeof cartpole_refs[0]))

/* ---- a counting environment: obs = [steps taken, last action] ------------
 * It terminates after `end` steps (option, default 5); reward = action + 1. */

typedef struct counter_state {
	int steps;
	int resets; /* survives resets: the vector zeroes state only at creation */
} counter_state;

static int counter_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"end", NULL};
	long long end = 5;
	int rc = seed_env_options_check(options, "counter", known, err);
	if (rc == 0)
		rc = seed_env_option_int(options, "counter", "end", 1, 1000000, &end, err);
	if (rc < 0)
		return rc;
	int *c = malloc(sizeof *c);
	*c = (int)end;
	*config = c;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = 2;
	spec->num_actions = 3;
	spec->max_steps = 0;
	return 0;
}

static void counter_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	counter_state *s = state;
	float *o = obs;
	s->steps = 0;
	s->resets++;
	o[0] = 0;
	o[1] = -(float)s->resets; /* -1 on the first reset, -2 on the next... */
}

static void counter_step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                         bool *terminated)
{
	const int *end = config;
	counter_state *s = state;
	float *o = obs;
	s->steps++;
	o[0] = (float)s->steps;
	o[1] = (float)action;
	*reward = (float)(action + 1);
	*terminated = s->steps >= *end;
}

static const seed_env_class counter_class = {
    .name = "counter",
    .summary = "counts steps (test only)",
    .configure = counter_configure,
    .free_config = free,
    .state_size = sizeof(counter_state),
    .reset = counter_reset,
    .step = counter_step,
};

/* A class that reports an impossible spec (no actions). */
static int broken_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	*config = malloc(16);
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = 1;
	return 0;
}

static const seed_env_class broken_class = {
    .name = "broken",
    .summary = "reports zero actions (test only)",
    .configure = broken_configure,
    .free_config = free,
    .state_size = 1,
    .reset = counter_reset,
    .step = counter_step,
};

static void t_registry(void)
{
	CHECK(seed_env_class_at(0) == seed_env_find("cartpole"));
	CHECK(seed_env_class_at(1) == seed_env_find("catch"));
	CHECK(seed_env_find("cartpole") && strcmp(seed_env_find("cartpole")->name, "cartpole") == 0);
	CHECK(seed_env_find("catch") && seed_env_find("catch")->summary[0]);
	CHECK(seed_env_find("nope") == NULL);
	CHECK(seed_env_find(NULL) == NULL);
	CHECK(seed_env_class_at(-1) == NULL);
	int n = 0;
	while (seed_env_class_at(n))
		n++;
	CHECK(n >= 2);
	CHECK(seed_env_register(&counter_class) == 0);
	CHECK(seed_env_class_at(n) == &counter_class);
	CHECK(seed_env_class_at(n + 1) == NULL);
	CHECK(seed_env_find("counter") == &counter_class);
	CHECK(seed_env_register(&counter_class) == -EEXIST);
	seed_env_class clash = counter_class;
	clash.name = "cartpole";
	CHECK(seed_env_register(&clash) == -EEXIST);
	seed_env_class bad = counter_class;
	bad.name = "bad";
	bad.step = NULL;
	CHECK(seed_env_register(&bad) == -EINVAL);
	bad = counter_class;
	bad.name = "";
	CHECK(seed_env_register(&bad) == -EINVAL);
	CHECK(seed_env_register(NULL) == -EINVAL);
	CHECK(seed_env_class_at(n + 1) == NULL);

	/* A class whose spec is impossible is refused at creation (and its
	 * config freed: valgrind runs would show the leak). */
	CHECK(seed_env_register(&broken_class) == 0);
	seed_envs *e = NULL;
	seed_err err = {""};
	CHECK(seed_envs_new(&e, "broken", NULL, 1, 0, &err) == -EINVAL);
	CHECK(e == NULL && strstr(err.msg, "broken: 0 actions") != NULL);
}

static void t_specs(void)
{
	seed_envs *e = NULL;
	seed_err err;
	CHECK(seed_envs_new(&e, "cartpole", NULL, 3, 1, &err) == 0);
	const seed_env_spec *s = seed_envs_spec(e);
	CHECK(s->obs_dtype == SEED_DTYPE_F32 && s->obs_rank == 1 && s->obs_shape[0] == 4);
	CHECK(s->num_actions == 2 && s->max_steps == 500);
	CHECK(seed_env_spec_obs_numel(s) == 4 && seed_env_spec_obs_bytes(s) == 16);
	CHECK(seed_envs_num(e) == 3);
	CHECK(seed_envs_class(e) == seed_env_find("cartpole"));
	seed_envs_free(&e);
	CHECK(e == NULL);
	seed_envs_free(&e);
	seed_envs_free(NULL);

	CHECK(seed_envs_new(&e, "catch", "", 1, 1, &err) == 0);
	s = seed_envs_spec(e);
	CHECK(s->obs_dtype == SEED_DTYPE_F32 && s->obs_rank == 2 && s->obs_shape[0] == 10 &&
	      s->obs_shape[1] == 5);
	CHECK(s->num_actions == 3 && s->max_steps == 0 && seed_env_spec_obs_bytes(s) == 200);
	seed_envs_free(&e);

	CHECK(seed_envs_new(&e, "catch", "{\"rows\": 4, \"columns\": 7, \"max_steps\": 2}", 1, 1, &err) == 0);
	s = seed_envs_spec(e);
	CHECK(s->obs_shape[0] == 4 && s->obs_shape[1] == 7 && s->max_steps == 2);
	seed_envs_free(&e);

	CHECK(seed_envs_new(&e, "cartpole", "{\"max_steps\": 0}", 1, 1, &err) == 0);
	CHECK(seed_envs_spec(e)->max_steps == 0);
	seed_envs_free(&e);
}

/* ---- errors -------------------------------------------------------------- */

static void expect_error(const char *name, const char *options, int num, int code, const char *needle)
{
	seed_envs *e = (seed_envs *)&e; /* must stay untouched */
	seed_envs *const before = e;
	seed_err err = {""};
	int rc = seed_envs_new(&e, name, options, num, 1, &err);
	CHECK_MSG(rc == code, "%s %s: rc %d, expected %d (%s)", name, options ? options : "NULL", rc, code,
	          err.msg);
	CHECK_MSG(strstr(err.msg, needle) != NULL, "%s %s: message \"%s\" lacks \"%s\"", name,
	          options ? options : "NULL", err.msg, needle);
	CHECK(e == before);
}

static void t_option_errors(void)
{
	expect_error("nope", NULL, 1, -ENOENT, "\"nope\"");
	expect_error("cartpole", NULL, 0, -EINVAL, ">= 1");
	expect_error("cartpole", "{\"bogus\": 1}", 1, -SEED_EOPTION, "\"bogus\"");
	expect_error("cartpole", "{\"bogus\": 1}", 1, -SEED_EOPTION, "init_state");
	expect_error("catch", "{\"rows\": 10, \"colums\": 5}", 1, -SEED_EOPTION, "\"colums\"");
	expect_error("cartpole", "{\"init_state\": [0, 0", 1, -SEED_EOPTION, "not valid JSON");
	expect_error("cartpole", "[1, 2]", 1, -SEED_EOPTION, "JSON object");
	expect_error("cartpole", "{\"max_steps\": 1, \"max_steps\": 2}", 1, -SEED_EOPTION, "max_steps");
	expect_error("cartpole", "{\"max_steps\": -1}", 1, -SEED_EOPTION, "max_steps");
	expect_error("cartpole", "{\"max_steps\": 2.5}", 1, -SEED_EOPTION, "max_steps");
	expect_error("cartpole", "{\"max_steps\": \"10\"}", 1, -SEED_EOPTION, "max_steps");
	expect_error("cartpole", "{\"init_state\": [0, 0, 0]}", 1, -SEED_EOPTION, "init_state");
	expect_error("cartpole", "{\"init_state\": [0, 0, 0, \"x\"]}", 1, -SEED_EOPTION, "element 3");
	expect_error("cartpole", "{\"sutton_barto_reward\": 1}", 1, -SEED_EOPTION, "sutton_barto_reward");
	expect_error("catch", "{\"rows\": 1}", 1, -SEED_EOPTION, "\"rows\"");
	expect_error("catch", "{\"columns\": 0}", 1, -SEED_EOPTION, "\"columns\"");
	expect_error("catch", "{\"columns\": 2.0}", 1, -SEED_EOPTION, "\"columns\"");
}

static void t_step_errors(void)
{
	seed_envs *e, *twin;
	seed_err err;
	CHECK(seed_envs_new(&e, "cartpole", NULL, 4, 9, &err) == 0);
	CHECK(seed_envs_new(&twin, "cartpole", NULL, 4, 9, &err) == 0);
	float obs[4][4], obs2[4][4], rew[4], rew2[4];
	uint8_t term[4], trunc[4];
	int32_t acts[4] = {0, 1, 1, 0};
	CHECK(seed_envs_step(e, 0, 4, acts, obs, rew, term, trunc, NULL, NULL, NULL) ==
	      -EINVAL); /* no reset */
	seed_envs_reset(e, obs);
	seed_envs_reset(twin, obs2);
	CHECK(memcmp(obs, obs2, sizeof obs) == 0);
	int32_t bad[4] = {0, 1, 2, 0};
	CHECK(seed_envs_step(e, 0, 4, bad, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	bad[2] = -1;
	CHECK(seed_envs_step(e, 0, 4, bad, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	CHECK(seed_envs_step(e, -1, 2, acts, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	CHECK(seed_envs_step(e, 0, 5, acts, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	CHECK(seed_envs_step(e, 3, 2, acts, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	CHECK(seed_envs_step(e, 0, -1, acts, obs, rew, term, trunc, NULL, NULL, NULL) == -EINVAL);
	CHECK(seed_envs_step(e, 4, 0, acts, obs, rew, term, trunc, NULL, NULL, NULL) == 0);
	/* Nothing was stepped by the failed calls: e still matches its twin. */
	CHECK(seed_envs_step(e, 0, 4, acts, obs, rew, term, trunc, NULL, NULL, NULL) == 0);
	CHECK(seed_envs_step(twin, 0, 4, acts, obs2, rew2, term, trunc, NULL, NULL, NULL) == 0);
	CHECK(memcmp(obs, obs2, sizeof obs) == 0);
	char buf[8];
	CHECK(seed_envs_render_text(e, 4, buf, sizeof buf) == -EINVAL);
	CHECK(seed_envs_render_text(e, -1, buf, sizeof buf) == -EINVAL);
	seed_envs_free(&e);
	seed_envs_free(&twin);
}

/* ---- the vector, with the counting environment ---------------------------- */

static void t_time_limit_and_autoreset(void)
{
	/* end 5, max_steps 3: truncated at 3, never terminated. */
	seed_envs *e;
	seed_err err;
	CHECK(seed_envs_new(&e, "counter", "{\"end\": 5, \"max_steps\": 3}", 2, 0, &err) == 0);
	float obs[2][2], fin[2][2];
	float rew[2], ret[2];
	uint8_t term[2], trunc[2];
	int32_t len[2];
	seed_envs_reset(e, obs);
	CHECK(obs[0][0] == 0 && obs[1][0] == 0);
	int32_t acts[2] = {2, 0};
	for (int t = 1; t <= 7; t++) {
		memset(fin, 0x7f, sizeof fin);
		CHECK(seed_envs_step(e, 0, 2, acts, obs, rew, term, trunc, fin, ret, len) == 0);
		int inep = (t - 1) % 3 + 1; /* step within the episode */
		CHECK(rew[0] == 3 && rew[1] == 1);
		CHECK(len[0] == inep && len[1] == inep);
		CHECK(ret[0] == 3.0f * inep && ret[1] == 1.0f * inep);
		CHECK(term[0] == 0 && term[1] == 0);
		CHECK(trunc[0] == (inep == 3) && trunc[1] == (inep == 3));
		if (inep == 3) {
			/* reset; the reset count lives on in the state */
			CHECK(obs[0][0] == 0 && obs[0][1] == -(float)(1 + t / 3));
			CHECK(fin[0][0] == 3 && fin[0][1] == 2 && fin[1][0] == 3 && fin[1][1] == 0);
		} else {
			CHECK(obs[0][0] == (float)inep && obs[0][1] == 2);
			uint8_t fill[sizeof fin];
			memset(fill, 0x7f, sizeof fill);
			CHECK(memcmp(fin, fill, sizeof fin) == 0); /* untouched */
		}
	}
	seed_envs_free(&e);

	/* end 4, max_steps 4: both flags on step 4 (Gymnasium's TimeLimit
	 * truncates when elapsed >= max_steps, whatever terminated says). */
	CHECK(seed_envs_new(&e, "counter", "{\"end\": 4, \"max_steps\": 4}", 1, 0, &err) == 0);
	seed_envs_reset(e, obs);
	for (int t = 1; t <= 4; t++) {
		CHECK(seed_envs_step(e, 0, 1, acts, obs, rew, term, trunc, NULL, ret, len) == 0);
		CHECK(term[0] == (t == 4) && trunc[0] == (t == 4));
	}
	CHECK(len[0] == 4 && ret[0] == 12);
	seed_envs_free(&e);

	/* No time limit (class default 0): terminated at 5; only the stepped
	 * rows are written, the others keep their contents. */
	CHECK(seed_envs_new(&e, "counter", NULL, 3, 0, &err) == 0);
	float obs3[3][2];
	seed_envs_reset(e, obs3);
	int32_t a1 = 1;
	for (int t = 1; t <= 5; t++) {
		obs[1][0] = -7;
		rew[1] = -7;
		CHECK(seed_envs_step(e, 2, 1, &a1, obs, rew, term, trunc, NULL, ret, len) == 0);
		CHECK(term[0] == (t == 5) && trunc[0] == 0 && len[0] == t && ret[0] == 2.0f * t);
		CHECK(obs[1][0] == -7 && rew[1] == -7);
	}
	/* Env 0 and 1 never moved. */
	CHECK(seed_envs_step(e, 0, 2, acts, obs, rew, term, trunc, NULL, ret, len) == 0);
	CHECK(len[0] == 1 && len[1] == 1);
	/* seed_envs_reset restarts the counters. */
	seed_envs_reset(e, obs3);
	CHECK(seed_envs_step(e, 0, 1, acts, obs, rew, term, trunc, NULL, ret, len) == 0);
	CHECK(len[0] == 1 && ret[0] == 3);
	seed_envs_free(&e);
}

/* ---- CartPole against Gymnasium ------------------------------------------- */

static int same_bits(const float *a, const float *b, int n)
{
	return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static char *ref_options(const cartpole_ref *r, char *buf, size_t len)
{
	snprintf(buf, len, "{\"init_state\": [%.17g, %.17g, %.17g, %.17g]%s}", r->init[0], r->init[1],
	         r->init[2], r->init[3], r->sutton_barto ? ", \"sutton_barto_reward\": true" : "");
	return buf;
}

static void init_obs(const cartpole_ref *r, float *o)
{
	for (int j = 0; j < 4; j++)
		o[j] = (float)r->init[j];
}

/* Through the vector: Gymnasium's CartPole-v1 with its TimeLimit. */
/* seed_envs_restart: a new episode of one env at once, its counters from
 * 0; the other envs go on untouched. */
static void t_restart(void)
{
	seed_envs *e;
	seed_err err;
	CHECK(seed_envs_new(&e, "counter", "{\"end\": 5}", 2, 0, &err) == 0);
	float obs[2][2], one[2];
	CHECK(seed_envs_restart(e, 0, one) == -EINVAL); /* never reset */
	float rew[2], ret[2];
	uint8_t term[2], trunc[2];
	int32_t len[2], acts[2] = {2, 0};
	seed_envs_reset(e, obs);
	for (int t = 0; t < 2; t++)
		CHECK(seed_envs_step(e, 0, 2, acts, obs, rew, term, trunc, NULL, ret, len) == 0);
	CHECK(len[0] == 2 && len[1] == 2 && obs[1][0] == 2);
	CHECK(seed_envs_restart(e, 1, one) == 0);
	/* The counter's second reset of env 1: count 0, resets -2. */
	CHECK(one[0] == 0 && one[1] == -2);
	CHECK(seed_envs_step(e, 0, 2, acts, obs, rew, term, trunc, NULL, ret, len) == 0);
	CHECK(len[0] == 3 && ret[0] == 9 && len[1] == 1 && ret[1] == 1 && obs[1][0] == 1);
	CHECK(term[0] == 0 && term[1] == 0);
	CHECK(seed_envs_restart(e, 2, one) == -EINVAL && seed_envs_restart(e, -1, one) == -EINVAL);
	seed_envs_free(&e);
}

/* seed_envs_restart_seeded: an episode restarted from a seed is the same
 * whichever env of whichever vector plays it with the same actions: its
 * start, and every random draw in it (MinAtar Asterix's spawns and sticky
 * actions); another seed gives another episode. */
static void t_restart_seeded(void)
{
	const char *names[2] = {"cartpole", "minatar-asterix"};
	for (int n = 0; n < 2; n++) {
		seed_envs *a, *b;
		seed_err err;
		CHECK(seed_envs_new(&a, names[n], NULL, 3, 1, &err) == 0);
		CHECK(seed_envs_new(&b, names[n], NULL, 2, 2, &err) == 0);
		size_t ob = seed_env_spec_obs_bytes(seed_envs_spec(a));
		unsigned char *oa = calloc(3, ob), *obb = calloc(3, ob), *first = calloc(1, ob);
		CHECK(seed_envs_restart_seeded(a, 0, 99, first) == -EINVAL); /* never reset */
		seed_envs_reset(a, oa);
		seed_envs_reset(b, obb);
		/* Env 2 of a and env 0 of b from seed 99; a's env 2 again from
		 * seed 99 after a step, then from seed 100. */
		CHECK(seed_envs_restart_seeded(a, 2, 99, oa + 2 * ob) == 0);
		CHECK(seed_envs_restart_seeded(b, 0, 99, obb) == 0);
		CHECK(memcmp(oa + 2 * ob, obb, ob) == 0);
		float rew[3], rb[3];
		uint8_t te[3], tr[3], teb[3], trb[3];
		int32_t acts[3] = {0, 1, 1}, len[3];
		CHECK(seed_envs_step(a, 2, 1, acts, oa + 2 * ob, rew, te, tr, NULL, NULL, len) == 0);
		CHECK(seed_envs_restart_seeded(a, 2, 99, first) == 0);
		CHECK(memcmp(first, obb, ob) == 0);
		memcpy(oa + 2 * ob, first, ob);
		/* 60 steps of the same actions: the same observations and
		 * rewards, ends included (each env then resets from its own
		 * generator, so the comparison stops at the first end). */
		int same = 0, steps = 0;
		for (int t = 0; t < 60; t++) {
			int32_t act = (int32_t)((t * 7 + t / 3) % seed_envs_spec(a)->num_actions);
			CHECK(seed_envs_step(a, 2, 1, &act, oa + 2 * ob, rew, te, tr, NULL, NULL, len) == 0);
			CHECK(seed_envs_step(b, 0, 1, &act, obb, rb, teb, trb, NULL, NULL, len) == 0);
			steps++;
			same += memcmp(oa + 2 * ob, obb, ob) == 0 && rew[0] == rb[0] && te[0] == teb[0];
			if (te[0] || tr[0])
				break;
		}
		CHECK_MSG(same == steps && steps > 5, "%s: %d of %d steps the same", names[n], same, steps);
		CHECK(seed_envs_restart_seeded(a, 1, 100, oa + ob) == 0);
		CHECK(seed_envs_restart_seeded(b, 1, 99, obb + ob) == 0);
		if (n == 0) /* cartpole's start is all random: another seed, another start */
			CHECK(memcmp(oa + ob, obb + ob, ob) != 0);
		CHECK(seed_envs_restart_seeded(a, 3, 1, first) == -EINVAL);
		free(oa);
		free(obb);
		free(first);
		seed_envs_free(&a);
		seed_envs_free(&b);
	}
}

static void t_cartpole_matches_gymnasium(void)
{
	int checked = 0;
	for (int k = 0; k < NREFS; k++) {
		const cartpole_ref *r = &cartpole_refs[k];
		if (!r->time_limit)
			continue;
		char opts[256];
		seed_envs *e;
		seed_err err;
		if (seed_envs_new(&e, "cartpole", ref_options(r, opts, sizeof opts), 1, 42, &err) != 0) {
			CHECK_MSG(0, "%s: %s", r->name, err.msg);
			continue;
		}
		float obs[4], fin[4], want0[4], rew, ret;
		uint8_t term, trunc;
		int32_t len;
		seed_envs_reset(e, obs);
		init_obs(r, want0);
		CHECK_MSG(same_bits(obs, want0, 4), "%s: first observation", r->name);
		double sum = 0;
		for (int t = 0; t < r->steps; t++) {
			int rc = seed_envs_step(e, 0, 1, &r->actions[t], obs, &rew, &term, &trunc, fin, &ret,
			                        &len);
			CHECK(rc == 0);
			int ended = term || trunc;
			const float *got = ended ? fin : obs;
			sum += r->reward[t];
			if (!same_bits(got, r->obs[t], 4) || rew != r->reward[t] ||
			    term != r->terminated[t] || trunc != r->truncated[t] || len != t + 1 ||
			    ret != (float)sum) {
				CHECK_MSG(
				    0,
				    "%s step %d: obs [%a %a %a %a] want [%a %a %a %a]; reward %g want %g; "
				    "terminated %d want %d; truncated %d want %d; length %d return %g",
				    r->name, t + 1, got[0], got[1], got[2], got[3], r->obs[t][0],
				    r->obs[t][1], r->obs[t][2], r->obs[t][3], rew, r->reward[t], term,
				    r->terminated[t], trunc, r->truncated[t], len, ret);
				break;
			}
			if (ended) {
				/* Auto-reset: the next episode starts from init_state. */
				CHECK_MSG(same_bits(obs, want0, 4), "%s: observation after reset", r->name);
				CHECK_MSG(t == r->steps - 1, "%s: ended early at %d", r->name, t + 1);
			}
			checked++;
		}
		seed_envs_free(&e);
	}
	CHECK(checked > 1000);
}

/* The class alone, stepped past termination like Gymnasium's CartPoleEnv:
 * reward 1 (or -1) on the terminating step, then 0 (or -1), with warnings
 * in Gymnasium and nothing special here. */
static void t_cartpole_beyond_termination(void)
{
	const seed_env_class *c = seed_env_find("cartpole");
	int found = 0;
	for (int k = 0; k < NREFS; k++) {
		const cartpole_ref *r = &cartpole_refs[k];
		if (r->time_limit)
			continue;
		found++;
		char opts[256];
		json_t *j = json_loads(ref_options(r, opts, sizeof opts), 0, NULL);
		void *config = NULL;
		seed_env_spec spec;
		seed_err err;
		CHECK(c->configure(j, &config, &spec, &err) == 0);
		json_decref(j);
		void *state = calloc(1, c->state_size);
		seed_rng rng;
		seed_rng_init(&rng, 1, 0);
		float obs[4];
		c->reset(config, state, &rng, obs);
		int nterm = 0;
		for (int t = 0; t < r->steps; t++) {
			float rew;
			bool term;
			c->step(config, state, &rng, r->actions[t], obs, &rew, &term);
			CHECK_MSG(same_bits(obs, r->obs[t], 4) && rew == r->reward[t] &&
			              term == r->terminated[t],
			          "%s step %d: obs [%a %a %a %a] want [%a %a %a %a] reward %g want %g",
			          r->name, t + 1, obs[0], obs[1], obs[2], obs[3], r->obs[t][0], r->obs[t][1],
			          r->obs[t][2], r->obs[t][3], rew, r->reward[t]);
			nterm += term;
		}
		CHECK(nterm >= 4);
		free(state);
		c->free_config(config);
	}
	CHECK(found == 2);
}

/* Many instances in one vector, stepped in two unequal slices, each with
 * the action sequence of a different reference trajectory: every env must
 * follow exactly the path of a vector of its own, and env 0 (which replays
 * its own trajectory from its own start) must follow Gymnasium. */
static void t_cartpole_vector_slices(void)
{
	enum { K = 24 };
	int n = 0;
	const cartpole_ref *refs[K];
	for (int k = 0; k < NREFS && n < K; k++)
		if (cartpole_refs[k].time_limit && !cartpole_refs[k].sutton_barto)
			refs[n++] = &cartpole_refs[k];
	CHECK(n >= 10);
	char opts[256];
	ref_options(refs[0], opts, sizeof opts);
	seed_envs *wide, *one[K];
	seed_err err;
	CHECK(seed_envs_new(&wide, "cartpole", opts, n, 5, &err) == 0);
	for (int i = 0; i < n; i++)
		CHECK(seed_envs_new(&one[i], "cartpole", opts, 1, 5, &err) == 0);
	float obs[K][4], fin[K][4], o1[4], f1[4], rew[K], r1, ret[K], ret1;
	uint8_t term[K], trunc[K], te1, tr1;
	int32_t len[K], len1, acts[K];
	seed_envs_reset(wide, obs);
	for (int i = 0; i < n; i++)
		seed_envs_reset(one[i], o1);
	int bad = 0, gym_ok = 1;
	for (int t = 0; t < 600 && !bad; t++) {
		for (int i = 0; i < n; i++)
			acts[i] = refs[i]->actions[t % refs[i]->steps];
		int cut = n / 3;
		CHECK(seed_envs_step(wide, 0, cut, acts, obs, rew, term, trunc, fin, ret, len) == 0);
		CHECK(seed_envs_step(wide, cut, n - cut, acts + cut, obs + cut, rew + cut, term + cut,
		                     trunc + cut, fin + cut, ret + cut, len + cut) == 0);
		for (int i = 0; i < n; i++) {
			CHECK(seed_envs_step(one[i], 0, 1, &acts[i], o1, &r1, &te1, &tr1, f1, &ret1, &len1) ==
			      0);
			int ended = te1 || tr1;
			if (!same_bits(obs[i], o1, 4) || rew[i] != r1 || term[i] != te1 || trunc[i] != tr1 ||
			    ret[i] != ret1 || len[i] != len1 || (ended && !same_bits(fin[i], f1, 4))) {
				CHECK_MSG(0, "env %d differs from its single twin at step %d", i, t + 1);
				bad = 1;
			}
		}
		if (t < refs[0]->steps) {
			const float *got = t == refs[0]->steps - 1 ? fin[0] : obs[0];
			gym_ok &= same_bits(got, refs[0]->obs[t], 4) && term[0] == refs[0]->terminated[t];
		}
	}
	CHECK(gym_ok);
	seed_envs_free(&wide);
	for (int i = 0; i < n; i++)
		seed_envs_free(&one[i]);
}

/* Random starts: uniform in [-0.05, 0.05), env i's draws independent of K. */
static void t_cartpole_random_starts(void)
{
	seed_envs *a, *b;
	seed_err err;
	CHECK(seed_envs_new(&a, "cartpole", NULL, 3, 77, &err) == 0);
	CHECK(seed_envs_new(&b, "cartpole", NULL, 64, 77, &err) == 0);
	float oa[3][4], ob[64][4];
	seed_envs_reset(a, oa);
	seed_envs_reset(b, ob);
	CHECK(memcmp(oa, ob, sizeof oa) == 0);
	double mean = 0, lo = 1, hi = -1;
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < 4; j++) {
			mean += ob[i][j] / 256.0;
			lo = ob[i][j] < lo ? ob[i][j] : lo;
			hi = ob[i][j] > hi ? ob[i][j] : hi;
		}
	CHECK(lo >= -0.05 && hi <= 0.05 && lo < -0.04 && hi > 0.04);
	CHECK(fabs(mean) < 0.01); /* sd of the mean: 0.1/sqrt(12*256) = 0.0018 */
	CHECK(memcmp(ob[0], ob[1], sizeof ob[0]) != 0);
	/* Play on with the same actions: env i stays the same in both. */
	float ra[3], rb[64];
	uint8_t ta[64], tb[64], ua[64], ub[64];
	int32_t acts[64];
	for (int t = 0; t < 300; t++) {
		for (int i = 0; i < 64; i++)
			acts[i] = (t * 7 + i) % 3 == 0;
		CHECK(seed_envs_step(a, 0, 3, acts, oa, ra, ta, ua, NULL, NULL, NULL) == 0);
		CHECK(seed_envs_step(b, 0, 64, acts, ob, rb, tb, ub, NULL, NULL, NULL) == 0);
	}
	CHECK(memcmp(oa, ob, sizeof oa) == 0);
	seed_envs_free(&a);
	seed_envs_free(&b);
	/* A different seed gives different starts. */
	CHECK(seed_envs_new(&a, "cartpole", NULL, 3, 78, &err) == 0);
	float oc[3][4];
	seed_envs_reset(a, oc);
	CHECK(memcmp(oa, oc, sizeof oc) != 0);
	seed_envs_free(&a);
}

/* mask_velocity: the same episodes (same seed, same actions: rewards,
 * terminations and truncations alike), observed as (x, theta) only, the
 * full observation's elements 0 and 2. */
static void t_cartpole_mask_velocity(void)
{
	enum { N = 5 };
	seed_envs *full, *masked;
	seed_err err;
	CHECK(seed_envs_new(&full, "cartpole", NULL, N, 9, &err) == 0);
	CHECK(seed_envs_new(&masked, "cartpole", "{\"mask_velocity\": true}", N, 9, &err) == 0);
	const seed_env_spec *s = seed_envs_spec(masked);
	CHECK(s->obs_dtype == SEED_DTYPE_F32 && s->obs_rank == 1 && s->obs_shape[0] == 2);
	CHECK(seed_env_spec_obs_bytes(s) == 8 && s->num_actions == 2 && s->max_steps == 500);
	float of[N][4], om[N][2], rf[N], rm[N];
	uint8_t tf[N], tm[N], uf[N], um[N];
	int32_t acts[N];
	seed_envs_reset(full, of);
	seed_envs_reset(masked, om);
	int ends = 0, mismatches = 0;
	for (int t = 0; t <= 600; t++) {
		for (int i = 0; i < N; i++) {
			mismatches += om[i][0] != of[i][0] || om[i][1] != of[i][2];
			acts[i] = (t * 5 + i * 3) % 7 < 3;
		}
		CHECK(seed_envs_step(full, 0, N, acts, of, rf, tf, uf, NULL, NULL, NULL) == 0);
		CHECK(seed_envs_step(masked, 0, N, acts, om, rm, tm, um, NULL, NULL, NULL) == 0);
		for (int i = 0; i < N; i++) {
			mismatches += rf[i] != rm[i] || tf[i] != tm[i] || uf[i] != um[i];
			ends += tf[i];
		}
	}
	CHECK(mismatches == 0);
	CHECK(ends > N); /* episodes ended and reset, masked ones in step */
	seed_envs_free(&full);
	seed_envs_free(&masked);
	expect_error("cartpole", "{\"mask_velocity\": \"yes\"}", 1, -SEED_EOPTION, "mask_velocity");
}

/* The time limit option on CartPole: the balancing trajectory runs 500
 * steps without terminating; max_steps 0 lets it run past 500, max_steps 10
 * cuts it at 10. */
static void t_cartpole_max_steps(void)
{
	const cartpole_ref *r = NULL;
	for (int k = 0; k < NREFS; k++)
		if (strcmp(cartpole_refs[k].name, "balance_to_time_limit") == 0)
			r = &cartpole_refs[k];
	CHECK(r && r->steps == 500 && r->truncated[499] && !r->terminated[499]);
	if (!r)
		return;
	char opts[256], o2[300];
	ref_options(r, opts, sizeof opts);
	snprintf(o2, sizeof o2, "{\"max_steps\": 0, %s", opts + 1);
	seed_envs *e;
	seed_err err;
	CHECK(seed_envs_new(&e, "cartpole", o2, 1, 0, &err) == 0);
	float obs[4], rew, ret;
	uint8_t term, trunc;
	int32_t len;
	seed_envs_reset(e, obs);
	for (int t = 0; t < 500; t++) {
		CHECK(seed_envs_step(e, 0, 1, &r->actions[t], obs, &rew, &term, &trunc, NULL, &ret, &len) ==
		      0);
		CHECK(!trunc && !term);
	}
	CHECK(same_bits(obs, r->obs[499], 4) && len == 500 && ret == 500);
	int32_t a = 1;
	CHECK(seed_envs_step(e, 0, 1, &a, obs, &rew, &term, &trunc, NULL, &ret, &len) == 0);
	CHECK(!trunc && len == 501);
	seed_envs_free(&e);

	snprintf(o2, sizeof o2, "{\"max_steps\": 10, %s", opts + 1);
	CHECK(seed_envs_new(&e, "cartpole", o2, 1, 0, &err) == 0);
	seed_envs_reset(e, obs);
	for (int t = 0; t < 10; t++) {
		CHECK(seed_envs_step(e, 0, 1, &r->actions[t], obs, &rew, &term, &trunc, NULL, &ret, &len) ==
		      0);
		CHECK(trunc == (t == 9) && !term && len == t + 1);
	}
	seed_envs_free(&e);
}

static void t_cartpole_render(void)
{
	seed_envs *e;
	seed_err err;
	CHECK(seed_envs_new(&e, "cartpole", "{\"init_state\": [0, 0, 0.1, 0]}", 1, 0, &err) == 0);
	float obs[4];
	seed_envs_reset(e, obs);
	int n = seed_envs_render_text(e, 0, NULL, 0);
	CHECK(n > 0);
	char *buf = malloc((size_t)n + 1);
	CHECK(seed_envs_render_text(e, 0, buf, (size_t)n + 1) == n);
	CHECK((int)strlen(buf) == n && buf[n - 1] == '\n');
	/* Cart in the middle of a 49-wide track, pole leaning right (5.7 deg). */
	const char *want = "                        /\n|-----------------------#-----------------------|\n"
	                   "x=+0.0000 x_dot=+0.0000 theta=+5.73deg theta_dot=+0.0000\n";
	CHECK_MSG(strcmp(buf, want) == 0, "got:\n%s", buf);
	char small[10];
	CHECK(seed_envs_render_text(e, 0, small, sizeof small) == n);
	CHECK(strlen(small) == 9 && memcmp(small, want, 9) == 0);
	free(buf);
	seed_envs_free(&e);
}

/* ---- Catch ---------------------------------------------------------------- */

/* Where the 1.0s are: ball (row y, column x) and paddle column p in the
 * bottom row of a rows x cols board; nothing else may be set. */
static int board_is(const float *o, int rows, int cols, int y, int x, int p)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++) {
			float want = (i == y && j == x) || (i == rows - 1 && j == p) ? 1.0f : 0.0f;
			if (o[i * cols + j] != want)
				return 0;
		}
	return 1;
}

static int ball_column(const float *o, int cols)
{
	for (int j = 0; j < cols; j++)
		if (o[j] == 1.0f)
			return j;
	return -1;
}

/* The paddle starts at column 2 (5 // 2); each scenario gives the action
 * for each of the 9 steps and the paddle column it leads to, worked out by
 * hand with clipping at columns 0 and 4. */
static void t_catch_scenarios(void)
{
	static const struct {
		const char *name;
		int32_t actions[9];
		int paddle[9];
	} sc[] = {
	    {"stay", {1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 2, 2, 2, 2, 2, 2, 2, 2}},
	    {"left, clipped", {0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0, 0}},
	    {"right, clipped", {2, 2, 2, 2, 2, 2, 2, 2, 2}, {3, 4, 4, 4, 4, 4, 4, 4, 4}},
	    {"left then back", {0, 0, 0, 2, 2, 1, 2, 2, 0}, {1, 0, 0, 1, 2, 2, 3, 4, 3}},
	    {"wiggle", {2, 0, 2, 0, 0, 0, 1, 2, 1}, {3, 2, 3, 2, 1, 0, 0, 1, 1}},
	};
	enum { K = 40 };
	int caught = 0, missed = 0;
	for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
		seed_envs *e;
		seed_err err;
		CHECK(seed_envs_new(&e, "catch", NULL, K, 1000 + s, &err) == 0);
		static float obs[K][10][5], fin[K][10][5];
		float rew[K], ret[K];
		uint8_t term[K], trunc[K];
		int32_t len[K], acts[K];
		int ball[K];
		seed_envs_reset(e, obs);
		for (int i = 0; i < K; i++) {
			ball[i] = ball_column(&obs[i][0][0], 5);
			CHECK_MSG(board_is(&obs[i][0][0], 10, 5, 0, ball[i], 2), "%s: first board",
			          sc[s].name);
		}
		for (int t = 0; t < 9; t++) {
			for (int i = 0; i < K; i++)
				acts[i] = sc[s].actions[t];
			CHECK(seed_envs_step(e, 0, K, acts, obs, rew, term, trunc, fin, ret, len) == 0);
			for (int i = 0; i < K; i++) {
				int p = sc[s].paddle[t];
				CHECK(len[i] == t + 1 && !trunc[i]);
				if (t < 8) {
					CHECK_MSG(board_is(&obs[i][0][0], 10, 5, t + 1, ball[i], p),
					          "%s step %d", sc[s].name, t + 1);
					CHECK(rew[i] == 0 && !term[i]);
					continue;
				}
				/* The ball reaches row 9: the end. */
				CHECK(term[i]);
				CHECK_MSG(board_is(&fin[i][0][0], 10, 5, 9, ball[i], p), "%s final board",
				          sc[s].name);
				float want = p == ball[i] ? 1.0f : -1.0f;
				CHECK(rew[i] == want && ret[i] == want);
				caught += p == ball[i];
				missed += p != ball[i];
				/* Next episode already started. */
				int b2 = ball_column(&obs[i][0][0], 5);
				CHECK(b2 >= 0 && board_is(&obs[i][0][0], 10, 5, 0, b2, 2));
			}
		}
		seed_envs_free(&e);
	}
	CHECK(caught > 10 && missed > 10); /* both outcomes were exercised */
}

/* A small board with every board written out: rows 3, columns 4, paddle
 * starting at column 2 (4 // 2); move right twice (the second is clipped). */
static void t_catch_small_board(void)
{
	seed_envs *e;
	seed_err err;
	CHECK(seed_envs_new(&e, "catch", "{\"rows\": 3, \"columns\": 4}", 16, 3, &err) == 0);
	float obs[16][12], fin[16][12], rew[16];
	uint8_t term[16], trunc[16];
	int32_t acts[16];
	seed_envs_reset(e, obs);
	for (int i = 0; i < 16; i++)
		acts[i] = 2;
	int ball[16], seen[4] = {0};
	for (int i = 0; i < 16; i++) {
		ball[i] = ball_column(obs[i], 4);
		seen[ball[i] < 0 ? 0 : ball[i]]++;
		float want[12] = {0};
		want[ball[i]] = 1;
		want[8 + 2] = 1;
		CHECK(memcmp(obs[i], want, sizeof want) == 0);
	}
	CHECK(seen[0] && seen[1] && seen[2] && seen[3]);
	CHECK(seed_envs_step(e, 0, 16, acts, obs, rew, term, trunc, fin, NULL, NULL) == 0);
	for (int i = 0; i < 16; i++) {
		float want[12] = {0};
		want[4 + ball[i]] = 1;
		want[8 + 3] = 1;
		CHECK(memcmp(obs[i], want, sizeof want) == 0 && rew[i] == 0 && !term[i]);
	}
	char text[64];
	CHECK(seed_envs_render_text(e, 0, text, sizeof text) == 15);
	char expect[16] = "....\n....\n...=\n";
	expect[5 + ball[0]] = 'o';
	CHECK_MSG(strcmp(text, expect) == 0, "render:\n%s", text);
	CHECK(seed_envs_step(e, 0, 16, acts, obs, rew, term, trunc, fin, NULL, NULL) == 0);
	for (int i = 0; i < 16; i++) {
		float want[12] = {0};
		want[8 + ball[i]] = 1;
		want[8 + 3] = 1;
		CHECK(memcmp(fin[i], want, sizeof want) == 0 && term[i]);
		CHECK(rew[i] == (ball[i] == 3 ? 1.0f : -1.0f));
	}
	seed_envs_free(&e);
}

/* Stepping the class directly after the end changes nothing. */
static void t_catch_after_end(void)
{
	const seed_env_class *c = seed_env_find("catch");
	json_t *j = json_loads("{\"rows\": 2, \"columns\": 1}", 0, NULL);
	void *config;
	seed_env_spec spec;
	seed_err err;
	CHECK(c->configure(j, &config, &spec, &err) == 0);
	json_decref(j);
	void *state = calloc(1, c->state_size);
	seed_rng rng;
	seed_rng_init(&rng, 0, 0);
	float obs[2], rew;
	bool term;
	c->reset(config, state, &rng, obs);
	CHECK(obs[0] == 1 && obs[1] == 1);
	c->step(config, state, &rng, 0, obs, &rew, &term);
	CHECK(term && rew == 1 && obs[0] == 0 && obs[1] == 1);
	c->step(config, state, &rng, 2, obs, &rew, &term);
	CHECK(term && rew == 0 && obs[0] == 0 && obs[1] == 1);
	char text[8];
	CHECK(c->render_text(config, state, text, sizeof text) == 4 && strcmp(text, ".\n@\n") == 0);
	free(state);
	c->free_config(config);
}

/* The ball's column is uniform: 5000 episodes, each column within 5 standard
 * deviations (sqrt(5000 * 0.2 * 0.8) = 28) of 1000. */
static void t_catch_uniform_start(void)
{
	enum { K = 5000 };
	seed_envs *e;
	seed_err err;
	CHECK(seed_envs_new(&e, "catch", NULL, K, 11, &err) == 0);
	float(*obs)[50] = malloc(sizeof(float[K][50]));
	seed_envs_reset(e, obs);
	int count[5] = {0};
	for (int i = 0; i < K; i++) {
		int b = ball_column(obs[i], 5);
		CHECK(b >= 0);
		if (b >= 0)
			count[b]++;
	}
	for (int j = 0; j < 5; j++)
		CHECK_MSG(abs(count[j] - 1000) < 5 * 28, "column %d: %d", j, count[j]);
	free(obs);
	seed_envs_free(&e);
}

int main(void)
{
	TAP_RUN(t_registry);
	TAP_RUN(t_specs);
	TAP_RUN(t_option_errors);
	TAP_RUN(t_step_errors);
	TAP_RUN(t_time_limit_and_autoreset);
	TAP_RUN(t_restart);
	TAP_RUN(t_restart_seeded);
	TAP_RUN(t_cartpole_matches_gymnasium);
	TAP_RUN(t_cartpole_beyond_termination);
	TAP_RUN(t_cartpole_vector_slices);
	TAP_RUN(t_cartpole_random_starts);
	TAP_RUN(t_cartpole_mask_velocity);
	TAP_RUN(t_cartpole_max_steps);
	TAP_RUN(t_cartpole_render);
	TAP_RUN(t_catch_scenarios);
	TAP_RUN(t_catch_small_board);
	TAP_RUN(t_catch_after_end);
	TAP_RUN(t_catch_uniform_start);
	return tap_done();
}
