/* cmd/gymenvs.c: Gymnasium environments through seed-gym (gymenvs.h). */
#include "gymenvs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "seed/buf.h"
#include "seed/frame.h"

struct gym_envs {
	char *env;  /* "gym:ID", for messages */
	char *prog; /* seed-gym's name or path */
	pid_t pid;  /* the child; 0 once waited for */
	int in;     /* its stdin (the actions); -1 once closed */
	int out;    /* its stdout (the frames) */
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

/* Wait for the child; its status as a number for messages (128 + N for a
 * signal N), or -1 if it was waited for already. */
static int reap(gym_envs *g)
{
	if (g->pid <= 0)
		return -1;
	int status;
	while (waitpid(g->pid, &status, 0) < 0 && errno == EINTR)
		;
	g->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* seed-gym stopped (its stdout ended or its stdin broke) while "what". */
static int stopped(gym_envs *g, const char *what, seed_err *err)
{
	int st = reap(g);
	return seed_err_set(err, -SEED_EOPTION, "%s: %s stopped %s (status %d; its message is above)", g->env,
	                    g->prog, what, st);
}

/* A tensor field of the frame, or an error naming it. */
static const seed_tensor *field(gym_envs *g, const seed_frame *f, const char *name, seed_err *err)
{
	const seed_tensor *t = seed_frame_tensor(f, name);
	if (!t)
		seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld has no tensor '%s'", g->env, g->prog,
		             g->frames, name);
	return t;
}

/* Take a picture field u8 [H, W, 3] (final: final_rgb, else rgb); the
 * first one sets the size. */
static int take_picture(gym_envs *g, const seed_tensor *t, bool final, seed_err *err)
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
 * buffer); "what" says where, for the message if seed-gym stopped. */
static int next_frame(gym_envs *g, seed_frame *f, const char *what, seed_err *err)
{
	const void *data;
	size_t len;
	int rc;
	while ((rc = seed_frame_reader_next(g->reader, &data, &len, err)) == -EINTR && !cli_stop)
		;
	if (rc == -EINTR || (rc == -SEED_EEOF && cli_stop))
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
	if (rc < 0)
		return seed_err_set(err, rc, "%s: %s's frame %lld: %s", g->env, g->prog, g->frames, e2.msg);
	return 0;
}

/* The first frame: the spec, the first observations and picture. */
static int first_frame(gym_envs *g, seed_err *err)
{
	seed_frame f;
	int rc = next_frame(g, &f, "before its first frame", err);
	if (rc < 0)
		return rc;
	const seed_tensor *obs = field(g, &f, "obs", err);
	if (!obs)
		return -SEED_EFRAME;
	if (obs->rank < 2 || obs->rank - 1 > SEED_ENV_MAX_OBS_RANK || obs->shape[0] != g->k)
		return seed_err_set(err, -SEED_EFRAME,
		                    "%s: %s's first frame: obs is not [%d, ...] of rank 2 to %d", g->env,
		                    g->prog, g->k, SEED_ENV_MAX_OBS_RANK + 1);
	g->spec.obs_dtype = obs->dtype;
	g->spec.obs_rank = obs->rank - 1;
	for (int d = 1; d < obs->rank; d++)
		g->spec.obs_shape[d - 1] = obs->shape[d];
	int64_t na = seed_frame_int(&f, "num_actions", 0);
	if (na < 1 || na > INT32_MAX)
		return seed_err_set(err, -SEED_EFRAME, "%s: %s's first frame: num_actions %" PRId64, g->env,
		                    g->prog, na);
	g->spec.num_actions = (int)na;
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

int gym_envs_new(gym_envs **out, const char *env, const char *options, int k, uint64_t seed, bool rgb,
                 int max_episode_steps, seed_err *err)
{
	*out = NULL;
	const char *prog = getenv("SEED_GYM");
	if (!prog || !*prog)
		prog = "seed-gym";
	int act[2], frm[2];
	if (pipe2(act, O_CLOEXEC))
		return seed_err_set(err, -errno, "%s: a pipe to %s: %s", env, prog, strerror(errno));
	if (pipe2(frm, O_CLOEXEC)) {
		int e = errno;
		close(act[0]);
		close(act[1]);
		return seed_err_set(err, -e, "%s: a pipe from %s: %s", env, prog, strerror(e));
	}
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
	argv[n++] = "--envs";
	argv[n++] = kbuf;
	argv[n++] = "--seed";
	argv[n++] = sbuf;
	argv[n++] = "--max-episode-steps";
	argv[n++] = cbuf;
	argv[n++] = "--quiet";
	argv[n++] = "--actions";
	argv[n++] = "-";
	argv[n++] = "--out";
	argv[n++] = "-";
	if (rgb)
		argv[n++] = "--rgb";
	argv[n] = NULL;
	/* Exec's failure comes back through a pipe of its own. */
	int ex[2];
	if (pipe2(ex, O_CLOEXEC)) {
		int e = errno;
		close(act[0]);
		close(act[1]);
		close(frm[0]);
		close(frm[1]);
		return seed_err_set(err, -e, "%s: a pipe: %s", env, strerror(e));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (dup2(act[0], 0) < 0 || dup2(frm[1], 1) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execvp(prog, (char *const *)argv);
		int e = errno;
		ssize_t w = write(ex[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	int e = errno;
	close(act[0]);
	close(frm[1]);
	close(ex[1]);
	if (pid < 0) {
		close(act[1]);
		close(frm[0]);
		close(ex[0]);
		return seed_err_set(err, -e, "%s: cannot start %s: %s", env, prog, strerror(e));
	}
	int exec_errno = 0;
	ssize_t r;
	while ((r = read(ex[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
		;
	close(ex[0]);
	gym_envs *g = seed_xcalloc(1, sizeof *g);
	g->env = strdup(env);
	g->prog = strdup(prog);
	g->pid = pid;
	g->in = act[1];
	g->out = frm[0];
	g->k = k;
	g->rgb = rgb;
	seed_frame_reader_new(&g->reader, g->out);
	int rc;
	if (r == (ssize_t)sizeof exec_errno) {
		reap(g);
		rc = seed_err_set(err, -ENOENT,
		                  "%s: cannot run %s: %s (it is installed with Seed; or set SEED_GYM)", env,
		                  prog, strerror(exec_errno));
	} else {
		rc = first_frame(g, err);
	}
	if (rc < 0) {
		gym_envs_free(&g);
		return rc;
	}
	*out = g;
	return 0;
}

const seed_env_spec *gym_envs_spec(const gym_envs *g)
{
	return &g->spec;
}

void gym_envs_reset(gym_envs *g, void *obs)
{
	memcpy(obs, g->obs0, (size_t)g->k * g->ob);
	g->has_final = false;
}

/* Copy tensor t into dst, checking it is dtype [K] (K = g->k). */
static int take_row(gym_envs *g, const seed_frame *f, const char *name, seed_dtype dt, void *dst,
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

int gym_envs_step(gym_envs *g, const int32_t *actions, void *obs, float *reward, uint8_t *terminated,
                  uint8_t *truncated, uint8_t *capped, float *ep_return, int32_t *ep_length, seed_err *err)
{
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
	for (size_t done = 0; done < g->line.len;) {
		ssize_t w = write(g->in, g->line.data + done, g->line.len - done);
		if (w < 0 && errno == EINTR && !cli_stop)
			continue;
		if (w < 0 && errno == EINTR)
			return seed_err_set(err, -EINTR, "interrupted");
		if (w < 0 && errno == EPIPE)
			return stopped(g, "taking actions", err);
		if (w < 0)
			return seed_err_set(err, -errno, "%s: writing actions to %s: %s", g->env, g->prog,
			                    strerror(errno));
		done += (size_t)w;
	}
	seed_frame f;
	int rc = next_frame(g, &f, "in the middle of an episode", err);
	if (rc < 0)
		return rc;
	const seed_tensor *o = field(g, &f, "obs", err);
	if (!o)
		return -SEED_EFRAME;
	bool same = o->dtype == g->spec.obs_dtype && o->rank == g->spec.obs_rank + 1 && o->shape[0] == g->k;
	for (int d = 0; same && d < g->spec.obs_rank; d++)
		same = o->shape[d + 1] == g->spec.obs_shape[d];
	if (!same)
		return seed_err_set(err, -SEED_EFRAME, "%s: %s's frame %lld: obs changed dtype or shape",
		                    g->env, g->prog, g->frames);
	memcpy(obs, o->data, (size_t)g->k * g->ob);
	if ((rc = take_row(g, &f, "reward", SEED_DTYPE_F32, reward, err)) < 0 ||
	    (rc = take_row(g, &f, "terminated", SEED_DTYPE_U8, terminated, err)) < 0 ||
	    (rc = take_row(g, &f, "truncated", SEED_DTYPE_U8, truncated, err)) < 0 ||
	    (rc = take_row(g, &f, "ep_return", SEED_DTYPE_F32, ep_return, err)) < 0 ||
	    (rc = take_row(g, &f, "ep_length", SEED_DTYPE_I32, ep_length, err)) < 0)
		return rc;
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

int gym_envs_draw(void *ctx, bool final, uint8_t *rgb, int width, int height)
{
	gym_envs *g = ctx;
	if (!g->rgb)
		return -ENOTSUP;
	if (final && !g->has_final)
		return -ENOENT;
	return seed_env_rgb_scale(final ? g->final_pic : g->pic, g->spec.rgb_width, g->spec.rgb_height, rgb,
	                          width, height);
}

static void release(gym_envs *g)
{
	if (g->in >= 0)
		close(g->in);
	close(g->out);
	seed_frame_reader_free(&g->reader);
	seed_buf_free(&g->line);
	free(g->obs0);
	free(g->pic);
	free(g->final_pic);
	free(g->env);
	free(g->prog);
	free(g);
}

int gym_envs_close(gym_envs **gp, seed_err *err)
{
	gym_envs *g = *gp;
	*gp = NULL;
	if (!g)
		return 0;
	close(g->in);
	g->in = -1;
	int st = reap(g);
	int rc = 0;
	if (st > 0)
		rc = seed_err_set(err, -SEED_EOPTION, "%s: %s exited with status %d (its message is above)",
		                  g->env, g->prog, st);
	release(g);
	return rc;
}

void gym_envs_free(gym_envs **gp)
{
	gym_envs *g = *gp;
	*gp = NULL;
	if (!g)
		return;
	if (g->pid > 0)
		kill(g->pid, SIGTERM);
	reap(g);
	release(g);
}
