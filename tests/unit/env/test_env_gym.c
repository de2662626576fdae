/* tests/unit/env/test_env_gym.c: Gymnasium environments through seed-gym
 * (lib/env/env_gym.c), without Python.
 *
 * The seed-gym run here is this program itself (SEED_GYM names it): called
 * with --env it plays a fake seed-gym, chosen by $FAKE_GYM, so every answer
 * is known in advance.  --spec prints {"obs_dtype": "f32", "obs_shape":
 * [2], "num_actions": 3, "max_steps": 7}; the offline mode steps K envs
 * whose observation is [t, i] (t the episode's steps so far, i the env),
 * whose reward is the action, whose episodes end (terminated) at t = 3 or
 * are cut (truncated and capped) at --max-episode-steps if that is less,
 * and with --rgb sends env 0's picture, u8 [2, 3, 3], every byte t (and
 * final_rgb, every byte 100 + t, where env 0's episode ended).
 * FAKE_GYM=box plays a Box of 2 actions, bounds [-1.5, 0.25] and [-inf,
 * inf] (in --spec's JSON and in every frame): an env's observation is its
 * last action as strtof reads it from the line, reward 1; every line
 * received is appended to $FAKE_GYM_LINES.  Faults: FAKE_GYM=die (status
 * 2 before the first frame), nospec (prints no spec), quit1 (ends after
 * the first step), status3 (exits 3 at the end), uncapped (a capped row
 * not truncated), boxspec (a --spec whose low is above its high), box65
 * (a Box of 65 actions, more than SEED_ENV_MAX_ACTION_DIM), boxmoved (a
 * Box whose high changes after the first frame).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/env_gym.h"
#include "seed/frame.h"
#include "tap.h"
#include "tmpdir.h"

static char self[PATH_MAX];

/* ---- the fake seed-gym ----------------------------------------------------- */

static const char *mode(void)
{
	const char *m = getenv("FAKE_GYM");
	return m ? m : "";
}

static void put_frame(seed_frame *f)
{
	seed_buf out = {0};
	seed_err err;
	if (seed_frame_encode(f, &out, &err) < 0) {
		fprintf(stderr, "fake seed-gym: %s\n", err.msg);
		exit(1);
	}
	fwrite(out.data, 1, out.len, stdout);
	fflush(stdout);
	seed_buf_free(&out);
}

static seed_tensor row(void *data, seed_dtype dt, int64_t k)
{
	int64_t shape[1] = {k};
	return seed_tensor_view(data, dt, 1, shape);
}

static bool is(const char *m)
{
	return strcmp(mode(), m) == 0;
}

static int fake_gym(int argc, char **argv)
{
	int k = 1, cap = 0;
	bool rgb = false, spec = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--envs") == 0)
			k = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max-episode-steps") == 0)
			cap = atoi(argv[++i]);
		else if (strcmp(argv[i], "--rgb") == 0)
			rgb = true;
		else if (strcmp(argv[i], "--spec") == 0)
			spec = true;
	}
	if (strcmp(mode(), "die") == 0) {
		fprintf(stderr, "fake seed-gym: no such environment\n");
		return 2;
	}
	bool box = is("box") || is("boxspec") || is("box65") || is("boxmoved");
	if (spec) {
		if (box)
			printf("{\"obs_dtype\": \"f32\", \"obs_shape\": [2], \"action_space\": \"box\", "
			       "\"num_actions\": 2, \"action_low\": [-1.5, \"-inf\"], \"action_high\": [%s, "
			       "\"inf\"], \"max_steps\": 7}\n",
			       is("boxspec") ? "-2" : "0.25");
		else
			puts(is("nospec") ? "not a spec"
			                  : "{\"obs_dtype\": \"f32\", \"obs_shape\": [2], "
			                    "\"num_actions\": 3, \"max_steps\": 7}");
		return 0;
	}
	float low[65] = {-1.5f, -INFINITY}, high[65] = {0.25f, INFINITY};
	int64_t ashape[1] = {is("box65") ? 65 : 2};
	float obs[64][2], reward[64], ret[64], ep_return[64];
	int32_t t[64], ep_length[64];
	uint8_t term[64], trunc[64], capped[64], pic[18], final_pic[18];
	for (int i = 0; i < k; i++) {
		t[i] = 0;
		ret[i] = 0;
		obs[i][0] = 0;
		obs[i][1] = (float)i;
	}
	int64_t seq = 0;
	char line[1024];
	for (bool first = true;; first = false) {
		seed_frame f;
		seed_frame_init(&f, SEED_FRAME_STEP);
		seed_frame_set_int(&f, "run", 0);
		seed_frame_set_int(&f, "actor", 0);
		seed_frame_set_int(&f, "seq", seq++);
		seed_frame_set_int(&f, "env0", 0);
		seed_frame_set_int(&f, "num_actions", box ? ashape[0] : 3);
		if (box) {
			if (is("boxmoved") && !first)
				high[0] = 0.5f;
			seed_frame_set_tensor(&f, "action_low",
			                      seed_tensor_view(low, SEED_DTYPE_F32, 1, ashape));
			seed_frame_set_tensor(&f, "action_high",
			                      seed_tensor_view(high, SEED_DTYPE_F32, 1, ashape));
		}
		if (first) {
			memset(reward, 0, sizeof reward);
			memset(term, 0, sizeof term);
			memset(trunc, 0, sizeof trunc);
			memset(capped, 0, sizeof capped);
			memset(ep_return, 0, sizeof ep_return);
			memset(ep_length, 0, sizeof ep_length);
		}
		int64_t oshape[2] = {k, 2};
		seed_frame_set_tensor(&f, "obs", seed_tensor_view(obs, SEED_DTYPE_F32, 2, oshape));
		seed_frame_set_tensor(&f, "reward", row(reward, SEED_DTYPE_F32, k));
		seed_frame_set_tensor(&f, "terminated", row(term, SEED_DTYPE_U8, k));
		seed_frame_set_tensor(&f, "truncated", row(trunc, SEED_DTYPE_U8, k));
		seed_frame_set_tensor(&f, "ep_return", row(ep_return, SEED_DTYPE_F32, k));
		seed_frame_set_tensor(&f, "ep_length", row(ep_length, SEED_DTYPE_I32, k));
		if (cap > 0)
			seed_frame_set_tensor(&f, "capped", row(capped, SEED_DTYPE_U8, k));
		int64_t pshape[3] = {2, 3, 3};
		if (rgb) {
			memset(pic, t[0], sizeof pic);
			seed_frame_set_tensor(&f, "rgb", seed_tensor_view(pic, SEED_DTYPE_U8, 3, pshape));
		}
		if (rgb && (term[0] || trunc[0]))
			seed_frame_set_tensor(&f, "final_rgb",
			                      seed_tensor_view(final_pic, SEED_DTYPE_U8, 3, pshape));
		put_frame(&f);
		seed_frame_clear(&f);
		if (strcmp(mode(), "quit1") == 0 && seq == 2)
			return 0;
		if (!fgets(line, sizeof line, stdin))
			return strcmp(mode(), "status3") == 0 ? 3 : 0;
		const char *lines = getenv("FAKE_GYM_LINES");
		FILE *lf = lines ? fopen(lines, "a") : NULL;
		if (lf) {
			fputs(line, lf);
			fclose(lf);
		}
		char *p = line;
		for (int i = 0; i < k; i++) {
			float a;
			if (box) {
				obs[i][0] = strtof(p, &p);
				obs[i][1] = strtof(p, &p);
				a = 1;
			} else {
				a = (float)strtol(p, &p, 10);
			}
			reward[i] = a;
			ret[i] += (float)a;
			t[i]++;
			term[i] = t[i] == 3 && (cap == 0 || cap >= 3);
			trunc[i] = cap > 0 && t[i] == cap && cap < 3;
			capped[i] = trunc[i] || (strcmp(mode(), "uncapped") == 0 && i == 0);
			ep_return[i] = ep_length[i] = 0;
			if (term[i] || trunc[i]) {
				if (i == 0)
					memset(final_pic, 100 + t[0], sizeof final_pic);
				ep_return[i] = ret[i];
				ep_length[i] = t[i];
				t[i] = 0;
				ret[i] = 0;
			}
			if (!box)
				obs[i][0] = (float)t[i];
		}
	}
}

/* ---- the tests ---------------------------------------------------------------- */

static void t_spec(void)
{
	setenv("SEED_GYM", self, 1);
	setenv("FAKE_GYM", "", 1);
	seed_env_spec s = {0};
	seed_err err = {{0}};
	int rc = seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	CHECK(s.obs_dtype == SEED_DTYPE_F32 && s.obs_rank == 1 && s.obs_shape[0] == 2);
	CHECK(s.num_actions == 3 && s.max_steps == 7);
	/* seed_env_probe asks seed-gym for a gym:ID environment. */
	seed_env_spec p = {0};
	CHECK(seed_env_probe("gym:Fake-v0", "{}", &p, &err) == 0 && p.num_actions == 3);
	setenv("FAKE_GYM", "die", 1);
	rc = seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err);
	CHECK_MSG(rc == -SEED_EOPTION && strstr(err.msg, "failed (status 2; its message is above)"), "%d %s",
	          rc, err.msg);
	setenv("FAKE_GYM", "nospec", 1);
	rc = seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err);
	CHECK_MSG(rc == -SEED_EOPTION && strstr(err.msg, "printed no valid spec") &&
	              strstr(err.msg, "not a spec"),
	          "%d %s", rc, err.msg);
}

/* A Box's spec: "action_space", bounds as numbers and "inf" / "-inf". */
static void t_box_spec(void)
{
	setenv("SEED_GYM", self, 1);
	setenv("FAKE_GYM", "box", 1);
	seed_env_spec s = {0};
	seed_err err = {{0}};
	int rc = seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	CHECK(s.action_space == SEED_ACTIONS_BOX && s.num_actions == 2 && s.max_steps == 7);
	CHECK(s.action_low[0] == -1.5f && s.action_high[0] == 0.25f);
	CHECK(s.action_low[1] == -INFINITY && s.action_high[1] == INFINITY);
	setenv("FAKE_GYM", "", 1);
	CHECK(seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err) == 0 &&
	      s.action_space == SEED_ACTIONS_DISCRETE);
	/* A low above its high is no spec. */
	setenv("FAKE_GYM", "boxspec", 1);
	rc = seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err);
	CHECK_MSG(rc == -SEED_EOPTION && strstr(err.msg, "printed no valid spec") &&
	              strstr(err.msg, "\"action_high\": [-2, \"inf\"]"),
	          "%d %s", rc, err.msg);
}

/* Both ways of reaching seed-gym say the same when it cannot be run. */
static void t_cannot_run(void)
{
	setenv("SEED_GYM", "/no/such/seed-gym", 1);
	seed_env_spec s;
	seed_err err = {{0}};
	int rc = seed_env_gym_spec("gym:Fake-v0", NULL, &s, &err);
	const char *words = "cannot run /no/such/seed-gym: No such file or directory (it is installed with "
	                    "Seed; or set SEED_GYM)";
	CHECK_MSG(rc == -ENOENT && strstr(err.msg, words), "%d %s", rc, err.msg);
	static int not_a_vector;
	seed_gym_envs *g = (seed_gym_envs *)&not_a_vector; /* to be set to NULL */
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 2, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == -ENOENT &&
	              strcmp(err.msg, "gym:Fake-v0: "
	                              "cannot run /no/such/seed-gym: No such file "
	                              "or directory (it is installed with Seed; or set SEED_GYM)") == 0,
	          "%d %s", rc, err.msg);
	CHECK(g == NULL);
}

/* Two envs, three steps: the first frame, rewards, an episode ending. */
static void t_step(void)
{
	setenv("SEED_GYM", self, 1);
	setenv("FAKE_GYM", "", 1);
	seed_gym_envs *g = NULL;
	seed_err err = {{0}};
	int rc = seed_gym_envs_new(&g, "gym:Fake-v0", "{}", 2, 5, false, 0, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc)
		return;
	const seed_env_spec *s = seed_gym_envs_spec(g);
	CHECK(s->obs_dtype == SEED_DTYPE_F32 && s->obs_rank == 1 && s->obs_shape[0] == 2 &&
	      s->num_actions == 3 && s->max_steps == 0 && s->rgb_width == 0);
	float obs[2][2], reward[2], ep_return[2];
	int32_t ep_length[2];
	uint8_t term[2], trunc[2], capped[2];
	seed_gym_envs_reset(g, obs);
	CHECK(obs[0][0] == 0 && obs[0][1] == 0 && obs[1][0] == 0 && obs[1][1] == 1);
	int32_t bad[2] = {0, 3};
	rc = seed_gym_envs_step(g, bad, obs, reward, term, trunc, capped, ep_return, ep_length, &err);
	CHECK_MSG(rc == -EINVAL && strcmp(err.msg, "action 3 of env 1 is out of range [0, 3)") == 0, "%d %s",
	          rc, err.msg);
	int32_t act[2] = {1, 2};
	for (int step = 1; step <= 3; step++) {
		rc = seed_gym_envs_step(g, act, obs, reward, term, trunc, capped, ep_return, ep_length, &err);
		CHECK_MSG(rc == 0, "step %d: %d %s", step, rc, err.msg);
		CHECK(reward[0] == 1 && reward[1] == 2);
		CHECK(term[0] == (step == 3) && term[1] == (step == 3) && !trunc[0] && !trunc[1]);
		CHECK(!capped[0] && !capped[1]);
		CHECK(obs[0][0] == (float)(step % 3) && obs[1][1] == 1);
	}
	CHECK(ep_return[0] == 3 && ep_return[1] == 6 && ep_length[0] == 3 && ep_length[1] == 3);
	uint8_t pic[3];
	CHECK(seed_gym_envs_draw(g, false, pic, 1, 1) == -ENOTSUP);
	CHECK(seed_gym_envs_close(&g, &err) == 0 && g == NULL);
	CHECK(seed_gym_envs_close(&g, &err) == 0);
	seed_gym_envs_free(&g);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* A Box of 2 actions, two envs: the bounds from the first frame, each
 * step's line (K * A numbers, env by env, %.9g), and the float32 values
 * the fake reads back from it, bit for bit. */
static void t_box_step(void)
{
	const char *dir = tmpdir_new();
	char lines[sizeof tmpdir_path + 8];
	snprintf(lines, sizeof lines, "%s/lines", dir);
	setenv("SEED_GYM", self, 1);
	setenv("FAKE_GYM", "box", 1);
	setenv("FAKE_GYM_LINES", lines, 1);
	seed_gym_envs *g = NULL;
	seed_err err = {{0}};
	int rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 2, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc) {
		tmpdir_remove(dir);
		return;
	}
	const seed_env_spec *s = seed_gym_envs_spec(g);
	CHECK(s->action_space == SEED_ACTIONS_BOX && s->num_actions == 2);
	CHECK(s->action_low[0] == -1.5f && s->action_high[0] == 0.25f && s->action_low[1] == -INFINITY &&
	      s->action_high[1] == INFINITY);
	float obs[2][2], reward[2], ep_return[2];
	int32_t ep_length[2];
	uint8_t term[2], trunc[2], capped[2];
	seed_gym_envs_reset(g, obs);
	/* Non-finite actions are refused, nothing sent; so are the Discrete
	 * step's integers. */
	float nan_act[4] = {0, 1, NAN, 0}, inf_act[4] = {0, 1, 2, -INFINITY};
	rc = seed_gym_envs_step_box(g, nan_act, obs, reward, term, trunc, capped, ep_return, ep_length, &err);
	CHECK_MSG(rc == -EINVAL && strcmp(err.msg, "action 0 of env 1 is nan, not a finite number") == 0,
	          "%d %s", rc, err.msg);
	rc = seed_gym_envs_step_box(g, inf_act, obs, reward, term, trunc, capped, ep_return, ep_length, &err);
	CHECK_MSG(rc == -EINVAL && strcmp(err.msg, "action 1 of env 1 is -inf, not a finite number") == 0,
	          "%d %s", rc, err.msg);
	int32_t ints[2] = {0, 1};
	rc = seed_gym_envs_step(g, ints, obs, reward, term, trunc, capped, ep_return, ep_length, &err);
	CHECK_MSG(rc == -EINVAL && strstr(err.msg, "gym:Fake-v0: its actions are a Box"), "%d %s", rc,
	          err.msg);
	CHECK(strcmp(slurp(lines), "") == 0);
	/* Inside, at and beyond the bounds; values whose 9 digits matter;
	 * the largest and smallest float32. */
	float act[3][4] = {{0.1f, -2, 0.25f, 1e6f},
	                   {-1.5f, 3.40282347e38f, 1.17549435e-38f, 1.40129846e-45f},
	                   {0.333333343f, -0.f, 16777217.f, -3.40282347e38f}};
	const char *want = "0.100000001 -2 0.25 1000000\n"
	                   "-1.5 3.40282347e+38 1.17549435e-38 1.40129846e-45\n"
	                   "0.333333343 -0 16777216 -3.40282347e+38\n";
	for (int step = 0; step < 3; step++) {
		rc = seed_gym_envs_step_box(g, act[step], obs, reward, term, trunc, capped, ep_return,
		                            ep_length, &err);
		CHECK_MSG(rc == 0, "step %d: %d %s", step, rc, err.msg);
		CHECK_MSG(memcmp(obs, act[step], sizeof obs) == 0, "step %d: %.9g %.9g %.9g %.9g", step,
		          (double)obs[0][0], (double)obs[0][1], (double)obs[1][0], (double)obs[1][1]);
		CHECK(reward[0] == 1 && reward[1] == 1 && term[0] == (step == 2) && !trunc[0] && !capped[1]);
	}
	CHECK(signbit(obs[0][1]) && ep_return[1] == 3 && ep_length[1] == 3);
	const char *got = slurp(lines);
	CHECK_MSG(strcmp(got, want) == 0, "lines:\n%s", got);
	CHECK(seed_gym_envs_close(&g, &err) == 0 && g == NULL);
	tmpdir_remove(dir);
	unsetenv("FAKE_GYM_LINES");

	/* A Discrete vector refuses the Box step. */
	setenv("FAKE_GYM", "", 1);
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc == 0) {
		CHECK(seed_gym_envs_spec(g)->action_space == SEED_ACTIONS_DISCRETE);
		rc = seed_gym_envs_step_box(g, act[0], obs, reward, term, trunc, capped, ep_return, ep_length,
		                            &err);
		CHECK_MSG(rc == -EINVAL && strstr(err.msg, "its actions are Discrete"), "%d %s", rc, err.msg);
		seed_gym_envs_free(&g);
	}

	/* Frames with more actions than Seed takes, or whose bounds move (the
	 * schema refuses bounds that are half there or not a range). */
	setenv("FAKE_GYM", "box65", 1);
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == -SEED_EFRAME && g == NULL &&
	              strstr(err.msg, "frame 1: a Box of 65 actions (Seed takes 64)"),
	          "%d %s", rc, err.msg);
	setenv("FAKE_GYM", "boxmoved", 1);
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc == 0) {
		rc = seed_gym_envs_step_box(g, act[0], obs, reward, term, trunc, capped, ep_return, ep_length,
		                            &err);
		CHECK_MSG(rc == -SEED_EFRAME && strstr(err.msg, "frame 2: the action space changed"), "%d %s",
		          rc, err.msg);
		seed_gym_envs_free(&g);
	}
}

/* The step cap: capped rows, truncated; and env 0's pictures. */
static void t_capped_rgb(void)
{
	setenv("SEED_GYM", self, 1);
	setenv("FAKE_GYM", "", 1);
	seed_gym_envs *g = NULL;
	seed_err err = {{0}};
	int rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, true, 2, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc)
		return;
	CHECK(seed_gym_envs_spec(g)->rgb_width == 3 && seed_gym_envs_spec(g)->rgb_height == 2);
	float obs[2], reward, ep_return;
	int32_t ep_length, a = 0;
	uint8_t term, trunc, capped, pic[2 * 3 * 3];
	seed_gym_envs_reset(g, obs);
	CHECK(seed_gym_envs_draw(g, true, pic, 3, 2) == -ENOENT);
	CHECK(seed_gym_envs_step(g, &a, obs, &reward, &term, &trunc, &capped, &ep_return, &ep_length, &err) ==
	      0);
	CHECK(!trunc && !capped);
	CHECK(seed_gym_envs_draw(g, false, pic, 3, 2) == 0 && pic[0] == 1 && pic[17] == 1);
	rc = seed_gym_envs_step(g, &a, obs, &reward, &term, &trunc, &capped, &ep_return, &ep_length, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	CHECK(trunc && capped && !term && ep_length == 2);
	CHECK(seed_gym_envs_draw(g, true, pic, 3, 2) == 0 && pic[0] == 102 && pic[17] == 102);
	CHECK(seed_gym_envs_draw(g, false, pic, 3, 2) == 0 && pic[0] == 0);
	seed_gym_envs_free(&g);
	CHECK(g == NULL);
}

/* seed-gym failing: before its first frame, in an episode, at its end,
 * and a frame that contradicts itself. */
static void t_faults(void)
{
	setenv("SEED_GYM", self, 1);
	seed_gym_envs *g = NULL;
	seed_err err = {{0}};
	setenv("FAKE_GYM", "die", 1);
	int rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == -SEED_EOPTION && g == NULL && strncmp(err.msg, "gym:Fake-v0: ", 13) == 0 &&
	              strstr(err.msg, "stopped before its first frame (status 2; its message is above)"),
	          "%d %s", rc, err.msg);

	float obs[2], reward, ep_return;
	int32_t ep_length, a = 1;
	uint8_t term, trunc, capped;
	setenv("FAKE_GYM", "quit1", 1);
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc == 0) {
		CHECK(seed_gym_envs_step(g, &a, obs, &reward, &term, &trunc, &capped, &ep_return, &ep_length,
		                         &err) == 0);
		rc = seed_gym_envs_step(g, &a, obs, &reward, &term, &trunc, &capped, &ep_return, &ep_length,
		                        &err);
		CHECK_MSG(rc == -SEED_EOPTION &&
		              strstr(err.msg,
		                     "stopped in the middle of an episode (status 0; its message is above)"),
		          "%d %s", rc, err.msg);
		seed_gym_envs_free(&g);
	}

	setenv("FAKE_GYM", "status3", 1);
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 0, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	rc = seed_gym_envs_close(&g, &err);
	CHECK_MSG(rc == -SEED_EOPTION && strstr(err.msg, "gym:Fake-v0: ") == err.msg &&
	              strstr(err.msg, " exited with status 3 (its message is above)"),
	          "%d %s", rc, err.msg);
	CHECK(g == NULL);

	setenv("FAKE_GYM", "uncapped", 1);
	rc = seed_gym_envs_new(&g, "gym:Fake-v0", NULL, 1, 0, false, 5, NULL, &err);
	CHECK_MSG(rc == 0, "%d %s", rc, err.msg);
	if (rc == 0) {
		rc = seed_gym_envs_step(g, &a, obs, &reward, &term, &trunc, &capped, &ep_return, &ep_length,
		                        &err);
		CHECK_MSG(rc == -SEED_EFRAME && strstr(err.msg, "frame 2: env 0 is capped but not truncated"),
		          "%d %s", rc, err.msg);
		seed_gym_envs_free(&g);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--env") == 0)
		return fake_gym(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		printf("1..0 # SKIP no /proc/self/exe to run as seed-gym\n");
		return 0;
	}
	self[n] = '\0';
	signal(SIGPIPE, SIG_IGN); /* as the programs do: seed-gym's end is an error, not a death */
	TAP_RUN(t_spec);
	TAP_RUN(t_box_spec);
	TAP_RUN(t_cannot_run);
	TAP_RUN(t_step);
	TAP_RUN(t_box_step);
	TAP_RUN(t_capped_rgb);
	TAP_RUN(t_faults);
	return tap_done();
}
