/* env_gym.c: Gymnasium environments ("gym:ID") through seed-gym(1)
 * (seed/env_gym.h): their spec, for seed_env_probe, and a vector of them
 * stepped through seed-gym's offline mode, for seed-eval.
 *
 * Both reach seed-gym one way: gym_prog names it ($SEED_GYM, else seed-gym
 * on PATH; seed-train sets SEED_GYM to the one beside it), gym_start runs
 * it with its stdout (and, for the vector, its stdin) on pipes and says
 * when it could not be run at all, gym_reap waits for it.
 *
 * --spec prints one JSON object {"obs_dtype", "obs_shape", "num_actions",
 * "max_steps"} and exits 0, or says what is wrong on its standard error
 * (which is the caller's) and exits 2 when the environment cannot work
 * with Seed, 1 on other failures.  A Box action space adds "action_space":
 * "box" and "action_low", "action_high": num_actions bounds each, numbers
 * or the strings "inf" and "-inf" (JSON has no infinity; the words
 * seed_frame_to_json uses), read as float32.  The offline mode answers
 * each line of actions with a step frame (seed-frames(7)), its first frame
 * before any; a Box's frames carry the bounds, f32 [A], and its lines are
 * the K * A numbers, env by env, each written with %.9g so that it reads
 * back as the same float32.
 */
#include "seed/env_gym.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seed/buf.h"
#include "seed/frame.h"

/* ---- reaching seed-gym ---------------------------------------------------- */

/* The program that is seed-gym: $SEED_GYM, else seed-gym on PATH. */
static const char *gym_prog(void)
{
	const char *prog = getenv("SEED_GYM");
	return prog && *prog ? prog : "seed-gym";
}

/* Wait for the child *pid; its status as a number for messages (128 + N
 * for a signal N), or -1 if it was waited for already (*pid 0). */
static int gym_reap(pid_t *pid)
{
	if (*pid <= 0)
		return -1;
	int status;
	while (waitpid(*pid, &status, 0) < 0 && errno == EINTR)
		;
	*pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A running seed-gym: its pid, the write end of its stdin (-1: it reads
 * ours) and the read end of its stdout. */
typedef struct gym_child {
	pid_t pid;
	int in, out;
} gym_child;

static void close_pair(int p[2])
{
	close(p[0]);
	close(p[1]);
}

/* Run prog with argv (argv[0] is prog), its stdout on a pipe into c->out,
 * with feed its stdin on a pipe from c->in (else it reads ours; c->in is
 * then -1), its stderr ours.  who starts the messages.  Errors: -ENOENT
 * when prog could not be run (exec failed; the child is reaped), -errno
 * when a pipe or the fork failed. */
static int gym_start(const char *who, const char *prog, const char *const *argv, bool feed, gym_child *c,
                     seed_err *err)
{
	int act[2] = {-1, -1}, frm[2], ex[2];
	if (feed && pipe2(act, O_CLOEXEC))
		return seed_err_set(err, -errno, "%s: a pipe to %s: %s", who, prog, strerror(errno));
	if (pipe2(frm, O_CLOEXEC)) {
		int e = errno;
		if (feed)
			close_pair(act);
		return seed_err_set(err, -e, "%s: a pipe from %s: %s", who, prog, strerror(e));
	}
	/* Exec's failure comes back through a pipe of its own. */
	if (pipe2(ex, O_CLOEXEC)) {
		int e = errno;
		if (feed)
			close_pair(act);
		close_pair(frm);
		return seed_err_set(err, -e, "%s: a pipe: %s", who, strerror(e));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if ((feed && dup2(act[0], 0) < 0) || dup2(frm[1], 1) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execvp(prog, (char *const *)argv);
		int e = errno;
		ssize_t w = write(ex[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	int e = errno;
	if (feed)
		close(act[0]);
	close(frm[1]);
	close(ex[1]);
	if (pid < 0) {
		if (feed)
			close(act[1]);
		close(frm[0]);
		close(ex[0]);
		return seed_err_set(err, -e, "%s: cannot start %s: %s", who, prog, strerror(e));
	}
	int exec_errno = 0;
	ssize_t r;
	while ((r = read(ex[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
		;
	close(ex[0]);
	*c = (gym_child){.pid = pid, .in = feed ? act[1] : -1, .out = frm[0]};
	if (r == (ssize_t)sizeof exec_errno) {
		if (feed)
			close(c->in);
		close(c->out);
		gym_reap(&c->pid);
		return seed_err_set(err, -ENOENT,
		                    "%s: cannot run %s: %s (it is installed with Seed; or set SEED_GYM)", who,
		                    prog, strerror(exec_errno));
	}
	return 0;
}

/* ---- the spec: seed-gym --spec -------------------------------------------- */

/* A bound of --spec's JSON into *out: a number, or "inf" / "-inf". */
static bool parse_bound(const json_t *v, float *out)
{
	const char *w = json_string_value(v);
	if (w && (strcmp(w, "inf") == 0 || strcmp(w, "-inf") == 0)) {
		*out = w[0] == '-' ? -INFINITY : INFINITY;
		return true;
	}
	if (!json_is_number(v))
		return false;
	*out = (float)json_number_value(v); /* a float32's shortest decimal reads back to it */
	return true;
}

/* The Box part of --spec's JSON o into s (s->num_actions set): false when
 * it is not one (an "action_space" other than "box", bounds missing, of
 * another length, or low above high).  No "action_space": Discrete. */
static bool parse_box(json_t *o, seed_env_spec *s)
{
	json_t *space = json_object_get(o, "action_space");
	const char *name = json_string_value(space);
	json_t *low = json_object_get(o, "action_low"), *high = json_object_get(o, "action_high");
	if (!space) {
		s->action_space = SEED_ACTIONS_DISCRETE;
		return !low && !high;
	}
	if (!name || strcmp(name, "box") != 0 || s->num_actions > SEED_ENV_MAX_ACTION_DIM ||
	    !json_is_array(low) || !json_is_array(high) || json_array_size(low) != (size_t)s->num_actions ||
	    json_array_size(high) != (size_t)s->num_actions)
		return false;
	s->action_space = SEED_ACTIONS_BOX;
	for (int i = 0; i < s->num_actions; i++)
		if (!parse_bound(json_array_get(low, (size_t)i), &s->action_low[i]) ||
		    !parse_bound(json_array_get(high, (size_t)i), &s->action_high[i]) ||
		    !(s->action_low[i] <= s->action_high[i]))
			return false;
	return true;
}

/* The spec printed by --spec, or false when it is not one. */
static bool parse_spec(const char *text, seed_env_spec *out)
{
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	const char *dt = json_string_value(json_object_get(o, "obs_dtype"));
	json_t *shape = json_object_get(o, "obs_shape");
	json_t *na = json_object_get(o, "num_actions"), *ms = json_object_get(o, "max_steps");
	seed_env_spec s = {0};
	s.obs_dtype = dt ? seed_dtype_parse(dt, strlen(dt)) : SEED_DTYPE_INVALID;
	s.obs_rank = json_is_array(shape) ? (int)json_array_size(shape) : 0;
	bool ok = o && s.obs_dtype != SEED_DTYPE_INVALID && s.obs_rank >= 1 &&
	          s.obs_rank <= SEED_ENV_MAX_OBS_RANK && json_is_integer(na) && json_integer_value(na) >= 1 &&
	          json_integer_value(na) <= INT32_MAX && json_is_integer(ms) && json_integer_value(ms) >= 0 &&
	          json_integer_value(ms) <= INT32_MAX;
	for (int i = 0; ok && i < s.obs_rank; i++) {
		json_t *d = json_array_get(shape, (size_t)i);
		ok = json_is_integer(d) && json_integer_value(d) >= 1 && json_integer_value(d) <= INT32_MAX;
		if (ok)
			s.obs_shape[i] = json_integer_value(d);
	}
	if (ok) {
		s.num_actions = (int)json_integer_value(na);
		s.max_steps = (int)json_integer_value(ms);
		ok = parse_box(o, &s);
	}
	if (ok)
		*out = s;
	json_decref(o);
	return ok;
}

int seed_env_gym_spec(const char *name, const char *options, seed_env_spec *spec, seed_err *err)
{
	const char *prog = gym_prog();
	char who[300], buf[4096];
	snprintf(who, sizeof who, "env \"%s\"", name);
	const char *argv[] = {prog,     "--env", name, "--env-options", options && *options ? options : "{}",
	                      "--spec", NULL};
	gym_child c;
	int rc = gym_start(who, prog, argv, false, &c, err);
	if (rc < 0)
		return rc;
	size_t len = 0;
	ssize_t r;
	while ((r = read(c.out, buf + len, sizeof buf - 1 - len)) > 0 || (r < 0 && errno == EINTR))
		len += r > 0 ? (size_t)r : 0;
	close(c.out);
	buf[len] = '\0';
	int st = gym_reap(&c.pid);
	/* Its status 2: the environment cannot work (seed-gym(1)); else a runtime failure. */
	if (st != 0)
		return seed_err_set(err, st == 2 ? -SEED_EOPTION : -EIO,
		                    "env \"%s\": `%s --spec` failed (status %d; its message is above)", name,
		                    prog, st);
	if (!parse_spec(buf, spec))
		return seed_err_set(err, -SEED_EOPTION,
		                    "env \"%s\": `%s --spec` printed no valid spec (obs_dtype, obs_shape of "
		                    "rank 1..%d, num_actions, max_steps; for a Box, action_space \"box\" and "
		                    "action_low, action_high of num_actions <= %d bounds): %.200s",
		                    name, prog, SEED_ENV_MAX_OBS_RANK, SEED_ENV_MAX_ACTION_DIM, buf);
	return 0;
}

/* ---- a vector: seed-gym's offline mode ------------------------------------ */

struct seed_gym_envs {
	char *env;       /* "gym:ID", for messages */
	char *prog;      /* seed-gym's name or path */
	gym_child child; /* pid 0 once waited for; in -1 once closed */
	volatile sig_atomic_t *stop;
	seed_frame_reader *reader;
	int k;
	seed_env_spec spec;
	size_t ob;     /* bytes of one observation */
	uint8_t *obs0; /* the first frame's observations */
	bool rgb;
	uint8_t *pic, *final_pic; /* env 0's pictures, [rgb_height][rgb_width][3] */
	bool has_final;
	long long frames; /* frames read */
	seed_buf line;
};

static bool stopping(const seed_gym_envs *g)
{
	return g->stop && *g->stop;
}

/* seed-gym stopped (its stdout ended or its stdin broke) while "what". */
static int stopped(seed_gym_envs *g, const char *what, seed_err *err)
{
	int st = gym_reap(&g->child.pid);
	return seed_err_set(err, -SEED_EOPTION, "%s: %s stopped %s (status %d; its message is above)", g->env,
	                    g->prog, what, st);
}

/* A tensor field of the frame, or an error naming it. */
static const seed_tensor *field(seed_gym_envs *g, const seed_frame *f, const char *name, seed_err *err)
{
	const seed_tensor *t = seed_frame_tensor(f, name);
	if (!t)
		seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld has no tensor '%s'", g->env, g->prog,
		             g->frames, name);
	return t;
}

/* Take a picture field u8 [H, W, 3] (final: final_rgb, else rgb); the
 * first one sets the size. */
static int take_picture(seed_gym_envs *g, const seed_tensor *t, bool final, seed_err *err)
{
	const char *name = final ? "final_rgb" : "rgb";
	bool first = g->spec.rgb_width == 0;
	if (t->dtype != SEED_DTYPE_U8 || t->rank != 3 || t->shape[2] != 3 || t->shape[0] < 1 ||
	    t->shape[0] > SEED_ENV_MAX_RGB || t->shape[1] < 1 || t->shape[1] > SEED_ENV_MAX_RGB ||
	    (!first && (t->shape[0] != g->spec.rgb_height || t->shape[1] != g->spec.rgb_width)))
		return seed_err_set(
		    err, -SEED_EFRAME, "%s: %s's frame %lld: '%s' is not a u8 [%d, %d, 3] picture", g->env,
		    g->prog, g->frames, name, first ? 0 : g->spec.rgb_height, first ? 0 : g->spec.rgb_width);
	if (first) {
		g->spec.rgb_height = (int)t->shape[0];
		g->spec.rgb_width = (int)t->shape[1];
		size_t n = (size_t)t->shape[0] * (size_t)t->shape[1] * 3;
		g->pic = seed_xmalloc(n);
		g->final_pic = seed_xmalloc(n);
	}
	memcpy(final ? g->final_pic : g->pic, t->data,
	       (size_t)g->spec.rgb_width * (size_t)g->spec.rgb_height * 3);
	return 0;
}

/* Read and decode the next frame into f (pointing into the reader's
 * buffer), a step frame the schema has checked, read by type into *st;
 * "what" says where, for the message if seed-gym stopped. */
static int next_frame(seed_gym_envs *g, seed_frame *f, seed_step *st, const char *what, seed_err *err)
{
	const void *data;
	size_t len;
	int rc;
	while ((rc = seed_frame_reader_next(g->reader, &data, &len, err)) == -EINTR && !stopping(g))
		;
	if (rc == -EINTR || (rc == -SEED_EEOF && stopping(g)))
		return seed_err_set(err, -EINTR, "interrupted");
	if (rc == -SEED_EEOF)
		return stopped(g, what, err);
	if (rc < 0)
		return seed_err_set(err, rc, "%s: reading %s's frames: %s", g->env, g->prog, err->msg);
	g->frames++;
	seed_err e2;
	rc = seed_frame_decode(f, data, len, &e2);
	if (rc == 0 && f->type != SEED_FRAME_STEP)
		rc = seed_err_set(&e2, -SEED_EFRAME, "a %s frame, not a step frame",
		                  seed_frame_type_name(f->type));
	if (rc == 0)
		rc = seed_frame_step(f, st, &e2);
	if (rc < 0)
		return seed_err_set(err, rc, "%s: %s's frame %lld: %s", g->env, g->prog, g->frames, e2.msg);
	return 0;
}

/* A step frame's Box bounds (the schema has checked them: both or
 * neither, f32 [num_actions], no NaN, low <= high) into low and high: 1
 * when it has them, 0 when not (a Discrete space), -SEED_EFRAME when there
 * are more than Seed takes. */
static int take_bounds(seed_gym_envs *g, const seed_step *st, float *low, float *high, seed_err *err)
{
	if (!st->action_low)
		return 0;
	if (st->num_actions > SEED_ENV_MAX_ACTION_DIM)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: %s's frame %lld: a Box of %d actions (Seed takes %d)", g->env,
		                    g->prog, g->frames, (int)st->num_actions, SEED_ENV_MAX_ACTION_DIM);
	memcpy(low, st->action_low, (size_t)st->num_actions * sizeof *low);
	memcpy(high, st->action_high, (size_t)st->num_actions * sizeof *high);
	return 1;
}

/* The first frame: the spec, the first observations and picture. */
static int first_frame(seed_gym_envs *g, seed_err *err)
{
	seed_frame f;
	seed_step st;
	int rc = next_frame(g, &f, &st, "before its first frame", err);
	if (rc < 0)
		return rc;
	const seed_tensor *obs = st.obs;
	if (obs->rank < 2 || obs->rank - 1 > SEED_ENV_MAX_OBS_RANK || obs->shape[0] != g->k)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: %s's first frame: obs is not [%d, ...] of rank 2 to %d", g->env,
		                    g->prog, g->k, SEED_ENV_MAX_OBS_RANK + 1);
	g->spec.obs_dtype = obs->dtype;
	g->spec.obs_rank = obs->rank - 1;
	for (int d = 1; d < obs->rank; d++)
		g->spec.obs_shape[d - 1] = obs->shape[d];
	g->spec.num_actions = st.num_actions; /* at least 1: the schema's bound */
	int rc2 = take_bounds(g, &st, g->spec.action_low, g->spec.action_high, err);
	if (rc2 < 0)
		return rc2;
	g->spec.action_space = rc2 ? SEED_ACTIONS_BOX : SEED_ACTIONS_DISCRETE;
	g->ob = seed_env_spec_obs_bytes(&g->spec);
	g->obs0 = seed_xmalloc((size_t)g->k * g->ob);
	memcpy(g->obs0, obs->data, (size_t)g->k * g->ob);
	if (g->rgb) {
		const seed_tensor *p = field(g, &f, "rgb", err);
		if (!p || take_picture(g, p, false, err) < 0)
			return -SEED_EFRAME;
	}
	return 0;
}

int seed_gym_envs_new(seed_gym_envs **out, const char *env, const char *options, int k, uint64_t seed,
                      bool rgb, int max_episode_steps, volatile sig_atomic_t *stop, seed_err *err)
{
	*out = NULL;
	const char *prog = gym_prog();
	char kbuf[32], sbuf[32], cbuf[32];
	snprintf(kbuf, sizeof kbuf, "%d", k);
	snprintf(sbuf, sizeof sbuf, "%" PRIu64, seed);
	snprintf(cbuf, sizeof cbuf, "%d", max_episode_steps);
	const char *argv[20];
	int n = 0;
	argv[n++] = prog;
	argv[n++] = "--env";
	argv[n++] = env;
	if (options) {
		argv[n++] = "--env-options";
		argv[n++] = options;
	}
	const char *rest[] = {"--envs",    kbuf, "--seed", sbuf, "--max-episode-steps", cbuf, "--quiet",
	                      "--actions", "-",  "--out",  "-"};
	for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
		argv[n++] = rest[i];
	if (rgb)
		argv[n++] = "--rgb";
	argv[n] = NULL;
	gym_child c;
	int rc = gym_start(env, prog, argv, true, &c, err);
	if (rc < 0)
		return rc;
	seed_gym_envs *g = seed_xcalloc(1, sizeof *g);
	g->env = strdup(env);
	g->prog = strdup(prog);
	g->child = c;
	g->stop = stop;
	g->k = k;
	g->rgb = rgb;
	seed_frame_reader_new(&g->reader, c.out);
	rc = first_frame(g, err);
	if (rc < 0) {
		seed_gym_envs_free(&g);
		return rc;
	}
	*out = g;
	return 0;
}

const seed_env_spec *seed_gym_envs_spec(const seed_gym_envs *g)
{
	return &g->spec;
}

void seed_gym_envs_reset(seed_gym_envs *g, void *obs)
{
	memcpy(obs, g->obs0, (size_t)g->k * g->ob);
	g->has_final = false;
}

/* Copy tensor t into dst, checking it is dtype [K] (K = g->k). */
static int take_row(seed_gym_envs *g, const seed_frame *f, const char *name, seed_dtype dt, void *dst,
                    seed_err *err)
{
	const seed_tensor *t = field(g, f, name, err);
	if (!t)
		return -SEED_EFRAME;
	if (t->dtype != dt || t->rank != 1 || t->shape[0] != g->k)
		return seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld: '%s' is not %s [%d]", g->env,
		                    g->prog, g->frames, name, seed_dtype_name(dt), g->k);
	memcpy(dst, t->data, (size_t)g->k * seed_dtype_size(dt));
	return 0;
}

/* Send g->line, a step's actions, to seed-gym. */
static int send_line(seed_gym_envs *g, seed_err *err)
{
	for (size_t done = 0; done < g->line.len;) {
		ssize_t w = write(g->child.in, g->line.data + done, g->line.len - done);
		if (w < 0 && errno == EINTR && !stopping(g))
			continue;
		if (w < 0 && errno == EINTR)
			return seed_err_set(err, -EINTR, "interrupted");
		if (w < 0 && errno == EPIPE) /* gone before the actions, or after: said alike */
			return stopped(g, "in the middle of an episode", err);
		if (w < 0)
			return seed_err_set(err, -errno, "%s: writing actions to %s: %s", g->env, g->prog,
			                    strerror(errno));
		done += (size_t)w;
	}
	return 0;
}

/* Read the frame that answers a step and take its outputs
 * (seed_gym_envs_step's). */
static int take_step(seed_gym_envs *g, void *obs, float *reward, uint8_t *terminated, uint8_t *truncated,
                     uint8_t *capped, float *ep_return, int32_t *ep_length, seed_err *err)
{
	seed_frame f;
	seed_step st;
	int rc = next_frame(g, &f, &st, "in the middle of an episode", err);
	if (rc < 0)
		return rc;
	/* The action space is the first frame's throughout. */
	float low[SEED_ENV_MAX_ACTION_DIM], high[SEED_ENV_MAX_ACTION_DIM];
	int box = take_bounds(g, &st, low, high, err);
	if (box < 0)
		return box;
	size_t nb = (size_t)g->spec.num_actions * sizeof(float);
	if (st.num_actions != g->spec.num_actions || box != (g->spec.action_space == SEED_ACTIONS_BOX) ||
	    (box && (memcmp(low, g->spec.action_low, nb) != 0 || memcmp(high, g->spec.action_high, nb) != 0)))
		return seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld: the action space changed",
		                    g->env, g->prog, g->frames);
	const seed_tensor *o = st.obs;
	bool same = o->dtype == g->spec.obs_dtype && o->rank == g->spec.obs_rank + 1 && o->shape[0] == g->k;
	for (int d = 0; same && d < g->spec.obs_rank; d++)
		same = o->shape[d + 1] == g->spec.obs_shape[d];
	if (!same)
		return seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld: obs changed dtype or shape",
		                    g->env, g->prog, g->frames);
	/* The schema gave every per-environment field obs's K rows and its
	 * dtype. */
	size_t k = (size_t)g->k;
	memcpy(obs, o->data, k * g->ob);
	memcpy(reward, st.reward, k * sizeof *reward);
	memcpy(terminated, st.terminated, k);
	memcpy(truncated, st.truncated, k);
	memcpy(ep_return, st.ep_return, k * sizeof *ep_return);
	memcpy(ep_length, st.ep_length, k * sizeof *ep_length);
	/* The rows seed-gym's step cap cut: "capped" where it has a cap. */
	memset(capped, 0, (size_t)g->k);
	if (seed_frame_tensor(&f, "capped") &&
	    (rc = take_row(g, &f, "capped", SEED_DTYPE_U8, capped, err)) < 0)
		return rc;
	for (int i = 0; i < g->k; i++)
		if (capped[i] && !truncated[i])
			return seed_err_set(err, -SEED_EFRAME,
			                    "%s: %s's frame %lld: env %d is capped but not truncated", g->env,
			                    g->prog, g->frames, i);
	if (g->rgb) {
		const seed_tensor *p = field(g, &f, "rgb", err);
		if (!p || (rc = take_picture(g, p, false, err)) < 0)
			return -SEED_EFRAME;
		const seed_tensor *fp = seed_frame_tensor(&f, "final_rgb");
		bool ended = terminated[0] || truncated[0];
		if (ended != (fp != NULL))
			return seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld: final_rgb %s", g->env,
			                    g->prog, g->frames,
			                    ended ? "missing where env 0's episode ended"
			                          : "where env 0's episode did not end");
		if (fp) {
			if ((rc = take_picture(g, fp, true, err)) < 0)
				return rc;
			g->has_final = true;
		}
	}
	return 0;
}

int seed_gym_envs_step(seed_gym_envs *g, const int32_t *actions, void *obs, float *reward,
                       uint8_t *terminated, uint8_t *truncated, uint8_t *capped, float *ep_return,
                       int32_t *ep_length, seed_err *err)
{
	if (g->spec.action_space != SEED_ACTIONS_DISCRETE)
		return seed_err_set(err, -EINVAL,
		                    "%s: its actions are a Box: step it with seed_gym_envs_step_box", g->env);
	seed_buf_reset(&g->line);
	for (int i = 0; i < g->k; i++) {
		if (actions[i] < 0 || actions[i] >= g->spec.num_actions)
			return seed_err_set(err, -EINVAL,
			                    "action %" PRId32 " of env %d is out of range [0, %d)",
			                    actions[i], i, g->spec.num_actions);
		char num[16];
		int len =
		    snprintf(num, sizeof num, i + 1 < g->k ? "%" PRId32 " " : "%" PRId32 "\n", actions[i]);
		seed_buf_append(&g->line, num, (size_t)len);
	}
	int rc = send_line(g, err);
	return rc < 0 ? rc
	              : take_step(g, obs, reward, terminated, truncated, capped, ep_return, ep_length, err);
}

int seed_gym_envs_step_box(seed_gym_envs *g, const float *actions, void *obs, float *reward,
                           uint8_t *terminated, uint8_t *truncated, uint8_t *capped, float *ep_return,
                           int32_t *ep_length, seed_err *err)
{
	if (g->spec.action_space != SEED_ACTIONS_BOX)
		return seed_err_set(err, -EINVAL,
		                    "%s: its actions are Discrete: step it with seed_gym_envs_step", g->env);
	int a = g->spec.num_actions;
	seed_buf_reset(&g->line);
	for (int i = 0; i < g->k * a; i++) {
		if (!isfinite(actions[i]))
			return seed_err_set(err, -EINVAL, "action %d of env %d is %g, not a finite number",
			                    i % a, i / a, (double)actions[i]);
		/* %.9g: the digits that read back as the same float32. */
		char num[32];
		int len =
		    snprintf(num, sizeof num, i + 1 < g->k * a ? "%.9g " : "%.9g\n", (double)actions[i]);
		seed_buf_append(&g->line, num, (size_t)len);
	}
	int rc = send_line(g, err);
	return rc < 0 ? rc
	              : take_step(g, obs, reward, terminated, truncated, capped, ep_return, ep_length, err);
}

int seed_gym_envs_draw(void *ctx, bool final, uint8_t *rgb, int width, int height)
{
	seed_gym_envs *g = ctx;
	if (!g->rgb)
		return -ENOTSUP;
	if (final && !g->has_final)
		return -ENOENT;
	return seed_env_rgb_scale(final ? g->final_pic : g->pic, g->spec.rgb_width, g->spec.rgb_height, rgb,
	                          width, height);
}

static void release(seed_gym_envs *g)
{
	if (g->child.in >= 0)
		close(g->child.in);
	close(g->child.out);
	seed_frame_reader_free(&g->reader);
	seed_buf_free(&g->line);
	free(g->obs0);
	free(g->pic);
	free(g->final_pic);
	free(g->env);
	free(g->prog);
	free(g);
}

int seed_gym_envs_close(seed_gym_envs **gp, seed_err *err)
{
	seed_gym_envs *g = *gp;
	*gp = NULL;
	if (!g)
		return 0;
	close(g->child.in);
	g->child.in = -1;
	int st = gym_reap(&g->child.pid);
	int rc = 0;
	if (st > 0)
		rc = seed_err_set(err, -SEED_EOPTION, "%s: %s exited with status %d (its message is above)",
		                  g->env, g->prog, st);
	release(g);
	return rc;
}

void seed_gym_envs_free(seed_gym_envs **gp)
{
	seed_gym_envs *g = *gp;
	*gp = NULL;
	if (!g)
		return;
	if (g->child.pid > 0)
		kill(g->child.pid, SIGTERM);
	gym_reap(&g->child.pid);
	release(g);
}
