/* tests/unit/envs/test_mujoco.c: MuJoCo's locomotion tasks against
 * Gymnasium, step for step.
 *
 * tests/golden/mujoco_ref.py recorded Gymnasium 0.26.3's v4 tasks (on
 * MuJoCo 2.2.2, the release Seed builds with on Debian 12) from set start
 * states with float32 actions within, near zero and beyond the bounds:
 * tests/golden/data/mujoco_<name>.bin.  Each episode is replayed here
 * through a vector of one instance started from the same state (the
 * init_qpos and init_qvel options, with the episode's own options), and
 * every observation (float32), reward (Gymnasium's float64 rounded to
 * float) and end flag must be equal, bit for bit: the physics is the same
 * library, and envs/mujoco.c computes what Gymnasium computes around it in
 * the same order.  Also: the specs, the options and their errors, the reset
 * noise, the unstable path (a speed MuJoCo rejects), that stepping
 * allocates nothing, and the pictures MuJoCo's renderer draws through OSMesa
 * (skipped, with the reason, where the build has no OSMesa or the machine
 * cannot make its context).
 *
 * Without MuJoCo (configure found no libmujoco-dev) the tasks are not
 * built: the test says so and skips.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/env.h"
#include "tap.h"

#ifdef HAVE_MUJOCO
#include "alloc_count.h"
#endif

#ifndef HAVE_MUJOCO
int main(void)
{
	printf("1..0 # SKIP built without MuJoCo (configure found no mujoco/mujoco.h and -lmujoco: "
	       "install libmujoco-dev)\n");
	return 0;
}
#else

/* ---- the trace files ------------------------------------------------------ */

typedef struct reader {
	const unsigned char *p, *end;
	int bad;
} reader;

static const unsigned char *take(reader *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *q = r->p;
	r->p += n;
	return q;
}

static uint64_t take_le(reader *r, int bytes)
{
	const unsigned char *q = take(r, (size_t)bytes);
	uint64_t v = 0;
	for (int i = bytes - 1; q && i >= 0; i--)
		v = v << 8 | q[i];
	return v;
}

static int take_i32(reader *r)
{
	return (int)(int32_t)(uint32_t)take_le(r, 4);
}

static float take_f32(reader *r)
{
	uint32_t u = (uint32_t)take_le(r, 4);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static double take_f64(reader *r)
{
	uint64_t u = take_le(r, 8);
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static unsigned char *slurp(const char *name, size_t *len)
{
	const char *src = getenv("SEED_SRCDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/data/mujoco_%s.bin", src ? src : ".", name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("# cannot open %s\n", path);
		return NULL;
	}
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = realloc(buf, cap);
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

static int same_f32(float a, float b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

/* The options of an episode (JSON text) with its start state added. */
static char *episode_options(const char *text, const double *qpos, int nq, const double *qvel, int nv)
{
	json_error_t jerr;
	json_t *o = json_loads(text, 0, &jerr);
	json_t *p = json_array(), *v = json_array();
	for (int i = 0; i < nq; i++)
		json_array_append_new(p, json_real(qpos[i]));
	for (int i = 0; i < nv; i++)
		json_array_append_new(v, json_real(qvel[i]));
	json_object_set_new(o, "init_qpos", p);
	json_object_set_new(o, "init_qvel", v);
	/* Seventeen digits: every double comes back as itself. */
	char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(o);
	return s;
}

/* Replay every episode of mujoco_<name>.bin; counts what differs. */
static void replay(const char *name)
{
	size_t len;
	unsigned char *buf = slurp(name, &len);
	CHECK(buf != NULL);
	if (!buf)
		return;
	reader r = {buf, buf + len, 0};
	const unsigned char *magic = take(&r, 8);
	CHECK(magic && memcmp(magic, "SEEDMJT1", 8) == 0);
	int nq = take_i32(&r), nv = take_i32(&r), nu = take_i32(&r), episodes = take_i32(&r);
	CHECK(!r.bad && nq > 0 && nv > 0 && nu > 0 && nu <= SEED_ENV_MAX_ACTION_DIM && episodes > 0);
	if (r.bad || nu > SEED_ENV_MAX_ACTION_DIM)
		episodes = 0;
	float low[SEED_ENV_MAX_ACTION_DIM], high[SEED_ENV_MAX_ACTION_DIM];
	for (int i = 0; i < nu && !r.bad; i++)
		low[i] = take_f32(&r);
	for (int i = 0; i < nu && !r.bad; i++)
		high[i] = take_f32(&r);
	double *qpos = calloc((size_t)nq, sizeof *qpos), *qvel = calloc((size_t)nv, sizeof *qvel);
	long long steps_total = 0, obs_bad = 0, reward_bad = 0, flag_bad = 0, ends = 0, terms = 0, truncs = 0;
	double worst_obs = 0, worst_reward = 0;
	for (int ep = 0; ep < episodes && !r.bad; ep++) {
		int olen = take_i32(&r);
		const unsigned char *otext = take(&r, olen > 0 ? (size_t)olen : 0);
		int steps = take_i32(&r), od = take_i32(&r);
		if (r.bad || !otext || steps < 1 || od < 1) {
			r.bad = 1;
			break;
		}
		char *text = malloc((size_t)olen + 1);
		memcpy(text, otext, (size_t)olen);
		text[olen] = 0;
		for (int i = 0; i < nq; i++)
			qpos[i] = take_f64(&r);
		for (int i = 0; i < nv; i++)
			qvel[i] = take_f64(&r);
		char *opts = episode_options(text, qpos, nq, qvel, nv);
		seed_envs *e = NULL;
		seed_err err;
		int rc = seed_envs_new(&e, name, opts, 1, 7, &err);
		CHECK_MSG(rc == 0, "%s %s: %s", name, text, rc == 0 ? "" : err.msg);
		free(opts);
		if (rc < 0) {
			free(text);
			r.bad = 1;
			break;
		}
		const seed_env_spec *spec = seed_envs_spec(e);
		CHECK(spec->obs_shape[0] == od && spec->num_actions == nu && spec->max_steps == 1000);
		for (int i = 0; i < nu; i++)
			CHECK(spec->action_low[i] == low[i] && spec->action_high[i] == high[i]);
		float *obs = calloc((size_t)od, sizeof *obs), *fin = calloc((size_t)od, sizeof *fin);
		float *want = calloc((size_t)od, sizeof *want);
		seed_envs_reset(e, obs);
		for (int i = 0; i < od; i++) {
			want[i] = take_f32(&r);
			if (!same_f32(want[i], obs[i]))
				obs_bad++;
		}
		for (int t = 0; t < steps && !r.bad && spec->obs_shape[0] == od; t++) {
			float act[SEED_ENV_MAX_ACTION_DIM];
			for (int i = 0; i < nu; i++)
				act[i] = take_f32(&r);
			for (int i = 0; i < od; i++)
				want[i] = take_f32(&r);
			double reward = take_f64(&r);
			int flags = (int)take_le(&r, 1);
			float rew, ret;
			uint8_t term, trunc;
			int32_t elen;
			rc = seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &elen);
			CHECK(rc == 0);
			steps_total++;
			const float *got = term || trunc ? fin : obs;
			for (int i = 0; i < od; i++) {
				double d = fabs((double)got[i] - (double)want[i]);
				if (!same_f32(got[i], want[i])) {
					if (obs_bad < 3)
						printf(
						    "# %s episode %d step %d: obs[%d] %.9g, Gymnasium %.9g\n",
						    name, ep, t + 1, i, got[i], want[i]);
					obs_bad++;
				}
				worst_obs = d > worst_obs ? d : worst_obs;
			}
			if (!same_f32(rew, (float)reward)) {
				if (reward_bad < 3)
					printf("# %s episode %d step %d: reward %.9g, Gymnasium %.17g\n",
					       name, ep, t + 1, rew, reward);
				reward_bad++;
				double d = fabs(rew - reward);
				worst_reward = d > worst_reward ? d : worst_reward;
			}
			if (term != (flags & 1) || trunc != (flags >> 1 & 1)) {
				if (flag_bad < 3)
					printf("# %s episode %d step %d: terminated %d truncated %d, "
					       "Gymnasium %d %d\n",
					       name, ep, t + 1, term, trunc, flags & 1, flags >> 1 & 1);
				flag_bad++;
			}
			terms += flags & 1;
			truncs += flags >> 1 & 1;
			if (flags)
				ends++;
		}
		CHECK(seed_envs_unstable(e) == 0);
		free(obs);
		free(fin);
		free(want);
		free(text);
		seed_envs_free(&e);
	}
	CHECK(!r.bad && r.p == r.end);
	printf("# %s: %d episodes, %lld steps (%lld terminated, %lld truncated): %lld observation numbers, "
	       "%lld rewards, %lld end flags differ (largest differences %.3g, %.3g)\n",
	       name, episodes, steps_total, terms, truncs, obs_bad, reward_bad, flag_bad, worst_obs,
	       worst_reward);
	CHECK(steps_total > 0);
	CHECK(obs_bad == 0);
	CHECK(reward_bad == 0);
	CHECK(flag_bad == 0);
	(void)ends;
	free(qpos);
	free(qvel);
	free(buf);
}

static void t_halfcheetah_as_gymnasium(void)
{
	replay("halfcheetah");
}

static void t_hopper_as_gymnasium(void)
{
	replay("hopper");
}

static void t_walker2d_as_gymnasium(void)
{
	replay("walker2d");
}

static void t_ant_as_gymnasium(void)
{
	replay("ant");
}

static void t_humanoid_as_gymnasium(void)
{
	replay("humanoid");
}

/* ---- specs ----------------------------------------------------------------
 * Gymnasium's documented sizes (the v4 pages): observation, action, bound. */

static void t_specs(void)
{
	static const struct {
		const char *name, *options;
		int obs, act;
		float bound;
	} cases[] = {
	    {"halfcheetah", NULL, 17, 6, 1.0f},
	    {"halfcheetah", "{\"exclude_current_positions_from_observation\": false}", 18, 6, 1.0f},
	    {"hopper", NULL, 11, 3, 1.0f},
	    {"hopper", "{\"exclude_current_positions_from_observation\": false}", 12, 3, 1.0f},
	    {"walker2d", NULL, 17, 6, 1.0f},
	    {"ant", NULL, 27, 8, 1.0f},
	    {"ant", "{\"use_contact_forces\": true}", 111, 8, 1.0f},
	    {"ant", "{\"exclude_current_positions_from_observation\": false}", 29, 8, 1.0f},
	    {"humanoid", NULL, 376, 17, 0.4f},
	    {"humanoid", "{\"exclude_current_positions_from_observation\": false}", 378, 17, 0.4f},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		seed_env_spec spec;
		seed_err err;
		int rc = seed_env_probe(cases[c].name, cases[c].options, &spec, &err);
		CHECK_MSG(rc == 0, "%s: %s", cases[c].name, rc == 0 ? "" : err.msg);
		if (rc < 0)
			continue;
		CHECK(spec.obs_dtype == SEED_DTYPE_F32 && spec.obs_rank == 1);
		CHECK_MSG(spec.obs_shape[0] == cases[c].obs, "%s %s: obs %lld", cases[c].name,
		          cases[c].options ? cases[c].options : "", (long long)spec.obs_shape[0]);
		CHECK(spec.action_space == SEED_ACTIONS_BOX && spec.num_actions == cases[c].act);
		CHECK(spec.max_steps == 1000);
		for (int i = 0; i < spec.num_actions; i++)
			CHECK(spec.action_low[i] == -cases[c].bound && spec.action_high[i] == cases[c].bound);
	}
	/* All five are listed after the classic tasks. */
	int found = 0;
	for (int i = 0; seed_env_class_at(i); i++) {
		const char *n = seed_env_class_at(i)->name;
		found += !strcmp(n, "halfcheetah") || !strcmp(n, "hopper") || !strcmp(n, "walker2d") ||
		         !strcmp(n, "ant") || !strcmp(n, "humanoid");
	}
	CHECK(found == 5);
}

/* ---- option errors -------------------------------------------------------- */

static void t_option_errors(void)
{
	static const struct {
		const char *name, *options, *names;
	} cases[] = {
	    {"halfcheetah", "{\"init_qpos\": [0, 0, 0]}", "init_qpos"},
	    {"halfcheetah", "{\"init_qvel\": [0, 1]}", "init_qvel"},
	    {"hopper", "{\"init_qpos\": \"zero\"}", "init_qpos"},
	    {"halfcheetah", "{\"gravity\": 3}", "gravity"},
	    {"hopper", "{\"use_contact_forces\": true}", "use_contact_forces"},
	    {"halfcheetah", "{\"healthy_reward\": 1}", "healthy_reward"},
	    {"walker2d", "{\"healthy_state_range\": [-1, 1]}", "healthy_state_range"},
	    {"ant", "{\"forward_reward_weight\": 2}", "forward_reward_weight"},
	    {"hopper", "{\"healthy_z_range\": [1, 0.5]}", "healthy_z_range"},
	    {"hopper", "{\"healthy_angle_range\": [0.1]}", "healthy_angle_range"},
	    {"ant", "{\"contact_force_range\": [-1, \"x\"]}", "contact_force_range"},
	    {"humanoid", "{\"ctrl_cost_weight\": \"high\"}", "ctrl_cost_weight"},
	    {"humanoid", "{\"terminate_when_unhealthy\": 1}", "terminate_when_unhealthy"},
	    {"walker2d", "{\"reset_noise_scale\": -0.1}", "reset_noise_scale"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		seed_envs *e = NULL;
		seed_err err;
		int rc = seed_envs_new(&e, cases[c].name, cases[c].options, 1, 1, &err);
		CHECK_MSG(rc == -SEED_EOPTION, "%s %s: %d", cases[c].name, cases[c].options, rc);
		CHECK(e == NULL);
		if (rc < 0)
			CHECK_MSG(strstr(err.msg, cases[c].names) != NULL,
			          "%s: message \"%s\" does not name %s", cases[c].options, err.msg,
			          cases[c].names);
		seed_envs_free(&e);
	}
}

/* ---- resets --------------------------------------------------------------- */

/* Reset noise: within reset_noise_scale of Gymnasium's start (qpos0, zero
 * speeds) for the uniform draws, different per instance, the same for the
 * same seed; with init_qpos and init_qvel, that state exactly. */
static void t_reset(void)
{
	seed_envs *a = NULL, *b = NULL;
	seed_err err;
	/* hopper: qpos0 = (0, 1.25, 0, 0, 0, 0), observation qpos[1:] then qvel, noise 5e-3 uniform. */
	int rc = seed_envs_new(&a, "hopper", NULL, 3, 11, &err);
	CHECK(rc == 0);
	rc = seed_envs_new(&b, "hopper", NULL, 3, 11, &err);
	CHECK(rc == 0);
	if (!a || !b)
		return;
	float oa[3][11], ob[3][11];
	seed_envs_reset(a, oa);
	seed_envs_reset(b, ob);
	CHECK(memcmp(oa, ob, sizeof oa) == 0);
	CHECK(memcmp(oa[0], oa[1], sizeof oa[0]) != 0);
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 11; i++) {
			double start = i == 0 ? 1.25 : 0.0;
			CHECK(fabs(oa[k][i] - start) <= 5e-3 + 1e-7);
		}
	seed_envs_free(&a);
	seed_envs_free(&b);

	/* halfcheetah with a set state: exactly it (observation qpos[1:], qvel). */
	const char *opts = "{\"init_qpos\": [0.5, 0.1, -0.2, 0.3, 0, 0, 0, 0, 0.25],"
	                   " \"init_qvel\": [1, 2, 3, 4, 5, 6, 7, 8, -9]}";
	rc = seed_envs_new(&a, "halfcheetah", opts, 2, 3, &err);
	CHECK_MSG(rc == 0, "%s", rc == 0 ? "" : err.msg);
	if (!a)
		return;
	float o[2][17];
	seed_envs_reset(a, o);
	static const float want[17] = {0.1f, -0.2f, 0.3f, 0, 0, 0, 0, 0.25f, 1, 2, 3, 4, 5, 6, 7, 8, -9};
	CHECK(memcmp(o[0], want, sizeof want) == 0);
	CHECK(memcmp(o[1], want, sizeof want) == 0);
	char text[256];
	int n = seed_envs_render_text(a, 0, text, sizeof text);
	CHECK(n > 0 && (size_t)n < sizeof text && strstr(text, "x=+0.500") && strstr(text, "z=0.100"));
	seed_envs_free(&a);
}

/* ---- instability ---------------------------------------------------------- */

/* A speed above MuJoCo's limit (mjMAXVAL, 1e10): MuJoCo reports a bad
 * qvel and resets its data; the step is truncated as unstable, with reward 0
 * and the last finite observation as final_obs. */
static void t_unstable(void)
{
	seed_envs *e = NULL;
	seed_err err;
	const char *opts = "{\"init_qvel\": [0, 0, 0, 3e11, 0, 0, 0, 0, 0]}";
	int rc = seed_envs_new(&e, "halfcheetah", opts, 1, 1, &err);
	CHECK_MSG(rc == 0, "%s", rc == 0 ? "" : err.msg);
	if (!e)
		return;
	float obs[17], first[17], fin[17], rew = 1, ret;
	uint8_t term = 9, trunc = 9;
	int32_t len;
	seed_envs_reset(e, first);
	CHECK(first[11] == 3e11f);
	const float act[6] = {1, -1, 1, -1, 1, -1};
	rc = seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &len);
	CHECK(rc == 0);
	CHECK(term == 0 && trunc == 1 && rew == 0);
	CHECK(seed_envs_unstable(e) == 1);
	CHECK(memcmp(fin, first, sizeof fin) == 0);
	CHECK(memcmp(obs, first, sizeof obs) == 0); /* the next episode starts from the set state */
	seed_envs_free(&e);

	/* A healthy start stays stable under actions far beyond the bounds
	 * (MuJoCo clamps ctrl to ctrlrange; the control cost is of the raw action). */
	rc = seed_envs_new(&e, "hopper", NULL, 2, 1, &err);
	CHECK(rc == 0);
	if (!e)
		return;
	float o2[2][11], f2[2][11], r2[2], ret2[2];
	uint8_t t2[2], u2[2];
	int32_t l2[2];
	seed_envs_reset(e, o2);
	const float big[6] = {1e3f, -1e3f, 1e3f, -1e3f, 1e3f, -1e3f};
	for (int s = 0; s < 50; s++) {
		rc = seed_envs_step_box(e, 0, 2, big, o2, r2, t2, u2, f2, ret2, l2);
		CHECK(rc == 0);
		for (int k = 0; k < 2; k++)
			CHECK(isfinite(r2[k]));
	}
	CHECK(seed_envs_unstable(e) == 0);
	seed_envs_free(&e);
}

/* ---- no allocation while stepping -----------------------------------------
 * Each instance makes its mjData on its first reset; after that neither
 * steps nor the resets of ended episodes (falls, unstable steps) allocate. */
static void t_no_allocation(void)
{
#if COUNT_ALLOCATIONS
	static const struct {
		const char *name, *options;
	} cases[] = {
	    {"hopper", NULL},
	    {"humanoid", NULL},
	    {"ant", "{\"use_contact_forces\": true}"},
	    {"halfcheetah", "{\"init_qvel\": [0, 0, 0, 3e11, 0, 0, 0, 0, 0]}"},
	};
	enum { K = 3 };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		seed_envs *e = NULL;
		seed_err err;
		int rc = seed_envs_new(&e, cases[c].name, cases[c].options, K, 5, &err);
		CHECK(rc == 0);
		if (!e)
			continue;
		const seed_env_spec *spec = seed_envs_spec(e);
		size_t od = (size_t)spec->obs_shape[0];
		int a = spec->num_actions;
		float *obs = calloc(K * od, sizeof *obs), *fin = calloc(K * od, sizeof *fin);
		float act[K * SEED_ENV_MAX_ACTION_DIM], rew[K], ret[K];
		uint8_t term[K], trunc[K];
		int32_t len[K];
		long long ends = 0;
		/* The first reset makes the mjData: the count sees MuJoCo's
		 * allocations, so a zero below means something.  Where it sees
		 * none, malloc is not ours to count (valgrind replaces it). */
		alloc_count = 0;
		alloc_counting = true;
		seed_envs_reset(e, obs);
		alloc_counting = false;
		bool counted = alloc_count > 0;
		alloc_count = 0;
		alloc_counting = true;
		for (int t = 0; t < 100; t++) {
			for (int i = 0; i < K * a; i++)
				act[i] = (float)((t * 7 + i * 3) % 11 -
				                 5); /* within, and far beyond, the bounds */
			seed_envs_step_box(e, 0, K, act, obs, rew, term, trunc, fin, ret, len);
			for (int k = 0; k < K; k++)
				ends += term[k] | trunc[k];
		}
		alloc_counting = false;
		if (counted)
			CHECK_MSG(alloc_count == 0, "%s: %ld allocations in 100 steps", cases[c].name,
			          alloc_count);
		else
			printf(
			    "# %s: allocations not seen (malloc replaced, as under valgrind): not checked\n",
			    cases[c].name);
		CHECK_MSG(ends > 0, "%s: no episode ended, so no reset was counted", cases[c].name);
		free(obs);
		free(fin);
		seed_envs_free(&e);
	}
#else
	printf("# allocations not counted in this build (not glibc, or AddressSanitizer)\n");
#endif
}

/* ---- pictures -------------------------------------------------------------
 * HalfCheetah from a set start (no reset noise), drawn small: the picture
 * has the asked size and several colours; the same state draws the same
 * picture, also after a larger one grew the renderer's buffer; another
 * state draws another; the state an episode ended in is drawn, not the
 * next episode's start.  Where there are no pictures the error says what
 * is missing. */
static char pictures_skip[600]; /* why t_pictures skipped, or "" */

static int colours(const uint8_t *rgb, int n)
{
	uint32_t seen[64];
	int k = 0;
	for (int i = 0; i < n && k < 64; i++) {
		uint32_t c = (uint32_t)rgb[3 * i] << 16 | (uint32_t)rgb[3 * i + 1] << 8 | rgb[3 * i + 2];
		int j = 0;
		while (j < k && seen[j] != c)
			j++;
		if (j == k)
			seen[k++] = c;
	}
	return k;
}

static void t_pictures(void)
{
	enum { W = 64, H = 64 };
	seed_envs *e = NULL;
	seed_err err;
	const char *opts = "{\"init_qpos\": [0, 0, 0, 0, 0, 0, 0, 0, 0], \"max_steps\": 2}";
	int rc = seed_envs_new(&e, "halfcheetah", opts, 1, 1, &err);
	CHECK_MSG(rc == 0, "%s", rc == 0 ? "" : err.msg);
	if (!e)
		return;
	CHECK(seed_envs_spec(e)->rgb_width == 480 && seed_envs_spec(e)->rgb_height == 480);
	float obs[17], fin[17], rew, ret;
	uint8_t term, trunc;
	int32_t len;
	seed_envs_reset(e, obs);
	static uint8_t a[W * H * 3], b[W * H * 3], c[W * H * 3], big[300 * 200 * 3], odd[7 * 5 * 3];
	rc = seed_envs_render_rgb(e, 0, a, W, H);
	const char *why = seed_env_rgb_why();
#ifdef HAVE_OSMESA
	if (rc == -ENOTSUP) {
		snprintf(pictures_skip, sizeof pictures_skip, "no OpenGL context here: %s",
		         why ? why : "(no reason)");
		seed_envs_free(&e);
		return;
	}
#else
	CHECK(rc == -ENOTSUP);
	CHECK_MSG(why && strstr(why, "halfcheetah") && strstr(why, "no OSMesa") &&
	              strstr(why, "libosmesa6-dev"),
	          "%s", why ? why : "(none)");
	snprintf(pictures_skip, sizeof pictures_skip,
	         "built without OSMesa (--without-osmesa, or configure found no osmesa: install "
	         "libosmesa6-dev)");
	seed_envs_free(&e);
	return;
#endif
	CHECK_MSG(rc == 0, "%d %s", rc, why ? why : "");
	CHECK(why == NULL);
	CHECK(colours(a, W * H) >= 8);
	CHECK(seed_envs_render_rgb(e, 0, b, W, H) == 0);
	CHECK(memcmp(a, b, sizeof a) == 0);
	/* A larger picture, and one whose rows are not a multiple of 4 bytes,
	 * then the small one again: the same. */
	CHECK(seed_envs_render_rgb(e, 0, big, 300, 200) == 0);
	CHECK(colours(big, 300 * 200) >= 8);
	CHECK(seed_envs_render_rgb(e, 0, odd, 7, 5) == 0);
	CHECK(seed_envs_render_rgb(e, 0, b, W, H) == 0);
	CHECK(memcmp(a, b, sizeof a) == 0);

	const float act[6] = {1, -1, 1, -1, 1, -1};
	CHECK(seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &len) == 0);
	CHECK(seed_envs_render_rgb(e, 0, b, W, H) == 0);
	CHECK(memcmp(a, b, sizeof a) != 0);
	/* The second step ends the episode (max_steps 2) and the vector starts
	 * the next from the same set state: the current picture is the first
	 * again, the final one shows where the cheetah got to. */
	CHECK(seed_envs_step_box(e, 0, 1, act, obs, &rew, &term, &trunc, fin, &ret, &len) == 0);
	CHECK(trunc == 1);
	CHECK(seed_envs_render_rgb(e, 0, c, W, H) == 0);
	CHECK(memcmp(a, c, sizeof a) == 0);
	CHECK(seed_envs_render_rgb_final(e, 0, c, W, H) == 0);
	CHECK(memcmp(a, c, sizeof a) != 0 && memcmp(b, c, sizeof b) != 0);
	seed_envs_free(&e);

	/* Another task in the same process: the renderer takes its model. */
	rc = seed_envs_new(&e, "ant", NULL, 1, 1, &err);
	CHECK_MSG(rc == 0, "%s", rc == 0 ? "" : err.msg);
	if (!e)
		return;
	float ant_obs[27];
	seed_envs_reset(e, ant_obs);
	CHECK(seed_envs_render_rgb(e, 0, c, W, H) == 0);
	CHECK(colours(c, W * H) >= 8 && memcmp(a, c, sizeof a) != 0);
	seed_envs_free(&e);
}

int main(void)
{
	TAP_RUN(t_halfcheetah_as_gymnasium);
	TAP_RUN(t_hopper_as_gymnasium);
	TAP_RUN(t_walker2d_as_gymnasium);
	TAP_RUN(t_ant_as_gymnasium);
	TAP_RUN(t_humanoid_as_gymnasium);
	TAP_RUN(t_specs);
	TAP_RUN(t_option_errors);
	TAP_RUN(t_reset);
	TAP_RUN(t_unstable);
	TAP_RUN(t_no_allocation);
	/* t_pictures, or its skip with the reason. */
	t_pictures();
	char name[700] = "t_pictures";
	if (pictures_skip[0] && !tap_case_failed)
		snprintf(name, sizeof name, "t_pictures # SKIP %s", pictures_skip);
	tap_result(name);
	return tap_done();
}
#endif
