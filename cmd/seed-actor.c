/* seed-actor: step a vector of environments for an inference server.
 *
 * The actor owns K environments and nothing else: no model, no weights.  In
 * server mode the K envs are split into two halves, each with one request in
 * flight at the inference server, so stepping one half overlaps the server's
 * work on the other (SEED's double buffering).  In offline mode the actions
 * come from a file, one line of K integers per step, and the step frames go
 * to a file: a way to debug an environment or produce test streams without
 * any server.
 *
 * Nothing is allocated per step: the halves' buffers and their encoded
 * requests are made once, and replies are decoded with a seed_frame_decoder.
 *
 * Identity: every frame carries the run id (random per process start), the
 * actor id (--actor), the first env slot of its half (env0) and a sequence
 * number per half, so the server can tell a restarted actor, a stale reply
 * and a resent request apart.
 *
 * Reporting: a resend is said on stderr (the first, then at most one line
 * every ten seconds), and so is the answer that ends a half's wait after
 * resends; --stats-interval adds a line of counters every SEC seconds while
 * the actor runs, so that an outage shows while it lasts, not only at exit.
 * In server mode the actor also times where its time goes (seed_timing(3):
 * step, encode, send, and wait, blocked receiving actions), said after
 * each statistics line and at exit, and written with the counters as JSON
 * lines with --metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli.h"
#include "secure.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/clock.h"
#include "seed/env.h"
#include "seed/frame.h"
#include "seed/limits.h"
#include "seed/metrics.h"
#include "seed/timing.h"

/* The options: main's variables, filled by the table below. */
static struct {
	const char *env, *env_options, *endpoint, *actions, *out, *metrics;
	int64_t envs, steps, actor, retry_ms;
	uint64_t seed;
	double stats_interval, metrics_interval;
	bool quiet;
} opt = {.envs = 1, .steps = -1, .retry_ms = 2000, .metrics_interval = 10};

static const seed_opt options[] = {
    {"env", 'e', SEED_OPT_STR, &opt.env, "NAME",
     .help = "environment: built in (seed-eval --list-envs), PATH.so:CLASS of a plugin, or NAME.so in "
             "SEED_ENV_PATH"},
    {"env-options", 'o', SEED_OPT_STR, &opt.env_options, "JSON",
     .help = "environment options, a JSON object (default {})"},
    {"envs", 'k', SEED_OPT_INT, &opt.envs, "K", 1, 1 << 20, .help = "number of environments (default 1)"},
    {"seed", 's', SEED_OPT_U64, &opt.seed, "S",
     .help = "seed for the environments (default 0; mixed with --actor)"},
    {"actor", 'a', SEED_OPT_INT, &opt.actor, "ID", 0, INT32_MAX,
     .help = "actor id, to tell actors apart (default 0)"},
    {"steps", 'n', SEED_OPT_INT, &opt.steps, "N", 0, INT64_MAX,
     .help = "stop after N steps of every environment (default: run until stopped)"},
    {"connect", 'c', SEED_OPT_STR, &opt.endpoint, "ENDPOINT",
     .help = "inference server to talk to (connects; tcp://, ipc://; '@' binds)"},
    {"retry-ms", 0, SEED_OPT_INT, &opt.retry_ms, "MS", 1, 3600000,
     .help = "resend a request unanswered for MS milliseconds (default 2000)"},
    {"stats-interval", 0, SEED_OPT_NUM, &opt.stats_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "print steps, episodes and resends on stderr every SEC seconds (default 0: never)"},
    {"metrics", 'M', SEED_OPT_STR, &opt.metrics, "FILE",
     .help = "append counters and where the time went as JSON lines to FILE (- for stdout)"},
    {"metrics-interval", 0, SEED_OPT_NUM, &opt.metrics_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "... a line every SEC seconds and one at exit (default 10; 0: only at exit)"},
    {"actions", 0, SEED_OPT_STR, &opt.actions, "FILE|-",
     .help = "offline: one line of K integer actions per step (K x A numbers for a Box space)"},
    {"out", 'O', SEED_OPT_STR, &opt.out, "FILE|-",
     .help = "offline: where to write the step frames (or a socket to push them to)"},
    {"quiet", 'q', SEED_OPT_FLAG, &opt.quiet, .help = "no summary on stderr at exit"},
    CLI_CURVE_OPTIONS,
    {0},
};

static const seed_opts spec = {
    .usage = "--env NAME --envs K (--connect ENDPOINT | --actions FILE --out FILE) [OPTION]...",
    .summary = "Step K environments for a Seed inference server (or from a file of actions).",
    .epilogue = "In server mode the envs are split in two halves with one request in flight\n"
                "each, so stepping overlaps inference; a request unanswered for --retry-ms is\n"
                "resent.  Ended episodes reset automatically; the step frames carry each\n"
                "episode's return and length.  See seed-actor(1) and seed-frames(7).\n",
    .opts = options,
    .max_operands = 0,
};

/* One half of the vector: the envs [env0, env0+count) and their buffers. */
typedef struct half {
	int env0, count;
	uint32_t seq;
	int64_t steps;     /* vectorised steps taken */
	int64_t env_steps; /* rows of them not held (every env stepped or restarted) */
	bool inflight;
	double sent_at;  /* the last send of the request in flight */
	double asked_at; /* its first send */
	int64_t tries;   /* its resends */
	uint8_t *obs, *final_obs;
	float *reward, *ep_return;
	uint8_t *terminated, *truncated;
	int32_t *ep_length, *actions;
	float *box_actions;  /* [count][A] for a Box space, else NULL */
	uint8_t *reset;      /* the server's requests for the next step (SEED_RESET_*) */
	int64_t *reset_seed; /* the seeds of its restarts; 0: none (from where the env is) */
	uint8_t *held;       /* 1: held at a start since the last step (SEED_RESET_HOLD) */
	bool any_reset;
	seed_buf frame; /* the last request, kept for resending */
} half;

typedef struct actor {
	seed_envs *envs;
	const seed_env_spec *spec;
	size_t obs_bytes;
	bool box;         /* a Box action space: A = spec->num_actions reals per env */
	int64_t unstable; /* unstable steps the envs truncated, last said */
	double last_unstable_warn;
	uint32_t run;
	int64_t actor_id;
	half halves[2];
	int nhalves;
	/* statistics */
	int64_t episodes, restarts, held;
	double return_sum;
	int64_t resends;
	const char *endpoint;
	double last_resend_warn, last_answer_warn; /* < 0: never said */
	/* where the time goes (server mode): seconds per phase */
	double time[SEED_PHASE_N];
} actor;

/* The phases an actor times. */
#define ACTOR_PHASES                                                                                         \
	(SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_TAKE) |                                 \
	 SEED_PHASE_BIT(SEED_PHASE_STEP) | SEED_PHASE_BIT(SEED_PHASE_ENCODE) |                               \
	 SEED_PHASE_BIT(SEED_PHASE_SEND))

static void half_alloc(half *h, const actor *a, int env0, int count)
{
	memset(h, 0, sizeof *h);
	h->env0 = env0;
	h->count = count;
	h->obs = seed_xcalloc((size_t)count, a->obs_bytes);
	h->final_obs = seed_xcalloc((size_t)count, a->obs_bytes);
	h->reward = seed_xcalloc((size_t)count, sizeof(float));
	h->ep_return = seed_xcalloc((size_t)count, sizeof(float));
	h->terminated = seed_xcalloc((size_t)count, 1);
	h->truncated = seed_xcalloc((size_t)count, 1);
	h->ep_length = seed_xcalloc((size_t)count, sizeof(int32_t));
	h->actions = seed_xcalloc((size_t)count, sizeof(int32_t));
	if (a->box)
		h->box_actions = seed_xcalloc((size_t)count * (size_t)a->spec->num_actions, sizeof(float));
	h->reset = seed_xcalloc((size_t)count, 1);
	h->reset_seed = seed_xcalloc((size_t)count, sizeof *h->reset_seed);
	h->held = seed_xcalloc((size_t)count, 1);
	seed_buf_init(&h->frame);
}

static void half_free(half *h)
{
	free(h->obs);
	free(h->final_obs);
	free(h->reward);
	free(h->ep_return);
	free(h->terminated);
	free(h->truncated);
	free(h->ep_length);
	free(h->actions);
	free(h->box_actions);
	free(h->reset);
	free(h->reset_seed);
	free(h->held);
	seed_buf_free(&h->frame);
}

/* Encode the step frame of half h into h->frame. */
static void encode_step(actor *a, half *h)
{
	const seed_env_spec *s = a->spec;
	int64_t k = h->count;
	int64_t oshape[1 + SEED_ENV_MAX_OBS_RANK];
	oshape[0] = k;
	for (int i = 0; i < s->obs_rank; i++)
		oshape[1 + i] = s->obs_shape[i];
	bool any_trunc = false;
	for (int i = 0; i < h->count; i++)
		any_trunc |= h->truncated[i] != 0;

	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_STEP);
	seed_frame_set_int(&f, "run", a->run);
	seed_frame_set_int(&f, "actor", a->actor_id);
	seed_frame_set_int(&f, "seq", h->seq);
	seed_frame_set_int(&f, "env0", h->env0);
	seed_frame_set_int(&f, "num_actions", s->num_actions);
	seed_frame_set_tensor(&f, "obs", seed_tensor_view(h->obs, s->obs_dtype, 1 + s->obs_rank, oshape));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(h->reward, SEED_DTYPE_F32, 1, &k));
	seed_frame_set_tensor(&f, "terminated", seed_tensor_view(h->terminated, SEED_DTYPE_U8, 1, &k));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view(h->truncated, SEED_DTYPE_U8, 1, &k));
	seed_frame_set_tensor(&f, "ep_return", seed_tensor_view(h->ep_return, SEED_DTYPE_F32, 1, &k));
	seed_frame_set_tensor(&f, "ep_length", seed_tensor_view(h->ep_length, SEED_DTYPE_I32, 1, &k));
	if (any_trunc)
		seed_frame_set_tensor(&f, "final_obs",
		                      seed_tensor_view(h->final_obs, s->obs_dtype, 1 + s->obs_rank, oshape));
	/* A Box space's bounds, after final_obs as the schema orders them. */
	int64_t na = s->num_actions;
	if (a->box) {
		seed_frame_set_tensor(&f, "action_low",
		                      seed_tensor_view((void *)s->action_low, SEED_DTYPE_F32, 1, &na));
		seed_frame_set_tensor(&f, "action_high",
		                      seed_tensor_view((void *)s->action_high, SEED_DTYPE_F32, 1, &na));
	}
	seed_buf_reset(&h->frame);
	seed_err err;
	int rc = seed_frame_encode(&f, &h->frame, &err);
	if (rc)
		cli_die("encoding a step frame: %s", err.msg); /* our own frame: a bug */
}

/* Whether a rate-limited line last said at *last (< 0: never) may be said
 * at now: the first one, then one every ten seconds. */
static bool say_now(double *last, double now)
{
	if (*last >= 0 && now - *last < 10)
		return false;
	*last = now;
	return true;
}

/* Step rows i .. j-1 of half h. */
static int step_rows(actor *a, half *h, int i, int j, seed_err *err)
{
	size_t ob = a->obs_bytes;
	int rc = a->box ? seed_envs_step_box(a->envs, h->env0 + i, j - i,
	                                     h->box_actions + (size_t)i * (size_t)a->spec->num_actions,
	                                     h->obs + (size_t)i * ob, h->reward + i, h->terminated + i,
	                                     h->truncated + i, h->final_obs + (size_t)i * ob,
	                                     h->ep_return + i, h->ep_length + i)
	                : seed_envs_step(a->envs, h->env0 + i, j - i, h->actions + i, h->obs + (size_t)i * ob,
	                                 h->reward + i, h->terminated + i, h->truncated + i,
	                                 h->final_obs + (size_t)i * ob, h->ep_return + i, h->ep_length + i);
	if (rc)
		return seed_err_set(err, rc, "stepping envs %d..%d: %s", h->env0 + i, h->env0 + j - 1,
		                    seed_strerror(rc));
	return 0;
}

/* Step half h with h->actions; rows of truncated envs get final_obs.  Rows
 * the server asked to restart start a new episode instead (from the seed
 * it gave, where it gave one): their row is its first observation, with
 * reward, flags and counters 0 (seed-frames(7)).
 * Rows it asked to hold are restarted so the first time, and then left as
 * they are: neither stepped nor restarted, their row repeated. */
static int step_half(actor *a, half *h, seed_err *err)
{
	memset(h->final_obs, 0, (size_t)h->count * a->obs_bytes);
	int rc = 0;
	int64_t held = 0;
	if (!h->any_reset) {
		rc = step_rows(a, h, 0, h->count, err);
		memset(h->held, 0, (size_t)h->count);
	}
	for (int i = 0; h->any_reset && i < h->count && !rc;) {
		int j = i;
		while (j < h->count && h->reset[j] == SEED_RESET_STEP)
			h->held[j++] = 0;
		if (j > i)
			rc = step_rows(a, h, i, j, err);
		if (rc || j == h->count)
			break;
		bool hold = h->reset[j] == SEED_RESET_HOLD;
		if (hold && h->held[j]) {
			held++;
		} else {
			void *o = h->obs + (size_t)j * a->obs_bytes;
			rc = !hold && h->reset_seed[j] > 0
			         ? seed_envs_restart_seeded(a->envs, h->env0 + j, (uint64_t)h->reset_seed[j],
			                                    o)
			         : seed_envs_restart(a->envs, h->env0 + j, o);
			if (rc)
				return seed_err_set(err, rc, "restarting env %d: %s", h->env0 + j,
				                    seed_strerror(rc));
			h->reward[j] = 0;
			h->terminated[j] = h->truncated[j] = 0;
			h->ep_return[j] = 0;
			h->ep_length[j] = 0;
			a->restarts += !hold;
		}
		h->held[j] = hold;
		i = j + 1;
	}
	if (rc)
		return rc;
	for (int i = 0; i < h->count; i++)
		if (h->terminated[i] || h->truncated[i]) {
			a->episodes++;
			a->return_sum += h->ep_return[i];
		}
	int64_t unstable = a->box ? seed_envs_unstable(a->envs) : 0;
	if (unstable > a->unstable && say_now(&a->last_unstable_warn, seed_now_s())) {
		cli_warn("the simulation went unstable: %" PRId64 " episodes truncated so far", unstable);
		a->unstable = unstable;
	}
	a->held += held;
	h->env_steps += h->count - held;
	h->steps++;
	h->seq++;
	return 0;
}

/* The reset observations of every env, into the halves. */
static void reset_all(actor *a)
{
	size_t k = (size_t)seed_envs_num(a->envs);
	uint8_t *all = seed_xcalloc(k, a->obs_bytes);
	seed_envs_reset(a->envs, all);
	for (int j = 0; j < a->nhalves; j++) {
		half *h = &a->halves[j];
		memcpy(h->obs, all + (size_t)h->env0 * a->obs_bytes, (size_t)h->count * a->obs_bytes);
	}
	free(all);
}

/* Read up to want actions of one line at *pp into h (integers, or finite
 * numbers for a Box space), separated by blanks or commas; *pp ends past
 * the trailing blanks.  Returns how many were read. */
static int parse_actions(const actor *a, half *h, char **pp, int want)
{
	char *p = *pp, *end;
	int n = 0;
	while (n < want) {
		errno = 0;
		if (a->box) {
			float v = strtof(p, &end);
			if (end == p || !isfinite(v))
				break;
			h->box_actions[n++] = v;
		} else {
			long v = strtol(p, &end, 10);
			if (end == p || errno)
				break;
			h->actions[n++] = (int32_t)v;
		}
		p = end;
		while (*p == ',')
			p++;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
		p++;
	*pp = p;
	return n;
}

/* Offline: actions from a text file, frames to a file. */
static int run_offline(actor *a, const char *actions_path, const char *out_path, int64_t max_steps)
{
	FILE *in = strcmp(actions_path, "-") == 0 ? stdin : fopen(actions_path, "r");
	if (!in)
		cli_die("%s: %s", actions_path, strerror(errno));
	seed_err err;
	seed_chan_opts copts = {.stop = &cli_stop};
	seed_chan *out;
	/* --out is any endpoint: a file, -, or a socket to push to. */
	void *ctx = seed_chan_context();
	cli_curve_chan(ctx, &copts, out_path, "--out");
	if (!ctx || seed_chan_open(&out, ctx, SEED_CHAN_PUSH, out_path, &copts, &err))
		cli_die("%s", ctx ? err.msg : "cannot create a ZeroMQ context");
	half *h = &a->halves[0];
	encode_step(a, h);
	int rc = seed_chan_send(out, NULL, 0, h->frame.data, h->frame.len, false);
	if (rc)
		cli_die("%s: %s", out_path, seed_strerror(rc));
	char *line = NULL;
	size_t cap = 0;
	int64_t lineno = 0;
	while (!cli_stop && (max_steps < 0 || h->steps < max_steps) && getline(&line, &cap, in) > 0) {
		lineno++;
		int want = a->box ? h->count * a->spec->num_actions : h->count;
		char *p = line;
		int n = parse_actions(a, h, &p, want);
		if (n == 0 && *p == '\0')
			continue; /* blank line */
		if (n != want || *p != '\0') {
			if (a->box)
				cli_warn("%s:%" PRId64 ": expected %d finite numbers (%d environments x %d)",
				         actions_path, lineno, want, h->count, a->spec->num_actions);
			else
				cli_warn("%s:%" PRId64 ": expected %d integer actions", actions_path, lineno,
				         h->count);
			rc = 1;
			break;
		}
		if (step_half(a, h, &err)) {
			cli_warn("%s:%" PRId64 ": %s", actions_path, lineno, err.msg);
			rc = 1;
			break;
		}
		encode_step(a, h);
		int s = seed_chan_send(out, NULL, 0, h->frame.data, h->frame.len, false);
		if (s) {
			cli_warn("%s: %s", out_path, seed_strerror(s));
			rc = 1;
			break;
		}
	}
	free(line);
	if (in != stdin)
		fclose(in);
	seed_chan_close(&out);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	return rc;
}

/* Send h's request (h->frame) for the first time. */
static int send_half(seed_chan *c, half *h)
{
	h->inflight = true;
	h->sent_at = h->asked_at = seed_now_s();
	h->tries = 0;
	return seed_chan_send(c, NULL, 0, h->frame.data, h->frame.len, false);
}

/* Resend every half whose request is older than retry_ms, counting and
 * saying so (rate-limited).  Called on every turn of the loop, whatever the last receive
 * gave: while one half gets quick replies, the receive never times out, and
 * the other half's lost request must still be resent. */
static void resend_due(actor *a, seed_chan *c, int retry_ms, double now)
{
	for (int j = 0; j < a->nhalves; j++) {
		half *h = &a->halves[j];
		if (h->inflight && now - h->sent_at >= retry_ms * 1e-3) {
			/* Same bytes, same seq: the server answers it once. */
			double t = seed_now_s();
			seed_chan_send(c, NULL, 0, h->frame.data, h->frame.len, false);
			a->time[SEED_PHASE_SEND] += seed_now_s() - t;
			h->sent_at = now;
			h->tries++;
			a->resends++;
			if (say_now(&a->last_resend_warn, now))
				cli_warn("no answer from %s for %.1f s: resending the request of envs %d..%d "
				         "(seq %" PRIu32 "); %" PRId64 " resends so far",
				         a->endpoint, now - h->asked_at, h->env0, h->env0 + h->count - 1,
				         h->seq, a->resends);
		}
	}
}

/* Milliseconds until the nearest resend deadline (at most retry_ms) or the
 * next statistics or metrics line (at next_stats, next_metrics; 0: none). */
static int until_due(const actor *a, int retry_ms, double next_stats, double next_metrics, double now)
{
	double wait = retry_ms * 1e-3;
	if (next_stats > 0 && next_stats - now < wait)
		wait = next_stats - now;
	if (next_metrics > 0 && next_metrics - now < wait)
		wait = next_metrics - now;
	for (int j = 0; j < a->nhalves; j++) {
		const half *h = &a->halves[j];
		if (h->inflight && h->sent_at + retry_ms * 1e-3 - now < wait)
			wait = h->sent_at + retry_ms * 1e-3 - now;
	}
	return wait <= 0 ? 0 : (int)(wait * 1e3) + 1;
}

static int64_t env_steps(const actor *a)
{
	int64_t n = 0;
	for (int j = 0; j < a->nhalves; j++)
		n += a->halves[j].env_steps;
	return n;
}

/* The statistics line: the rate since the last one (dt seconds, *last env
 * steps then), the counts in all, and the halves now waiting past a resend
 * (those the server has not answered for more than --retry-ms). */
static void stats_line(const actor *a, int64_t *last, double dt)
{
	int64_t n = env_steps(a), waiting = 0;
	for (int j = 0; j < a->nhalves; j++)
		waiting += a->halves[j].inflight && a->halves[j].tries > 0;
	fprintf(stderr,
	        "%s: %.0f env steps/s, %" PRId64 " env steps, %" PRId64 " episodes, %" PRId64
	        " resends, %" PRId64 " halves unanswered\n",
	        cli_prog, dt > 0 ? (double)(n - *last) / dt : 0.0, n, a->episodes, a->resends, waiting);
	*last = n;
}

/* The line of where the time went since the totals were last[] (dt
 * seconds), and those totals moved to now. */
static void time_line(const actor *a, double *last, double dt, bool final)
{
	double frac[SEED_PHASE_N];
	char split[200];
	seed_timing_fractions(last, a->time, dt, frac);
	seed_timing_format(frac, ACTOR_PHASES, split, sizeof split);
	fprintf(stderr, "%s: %stime: %s (of %.1f s)\n", cli_prog, final ? "done: " : "", split, dt);
	memcpy(last, a->time, sizeof a->time);
}

/* Where a metrics line's window started: when, and the counts then. */
typedef struct mark {
	double t;
	int64_t steps, episodes;
	double return_sum;
	double time[SEED_PHASE_N];
} mark;

/* A metrics line of the window since m (its rates, the return of the
 * episodes it ended, where the time went), the counts so far and the
 * seconds since start; m moves to now. */
static void metrics_line(const actor *a, seed_metrics *mx, mark *m, double now, double start)
{
	double dt = now - m->t;
	if (dt <= 0)
		return;
	int64_t n = env_steps(a), waiting = 0, eps = a->episodes - m->episodes;
	for (int j = 0; j < a->nhalves; j++)
		waiting += a->halves[j].inflight && a->halves[j].tries > 0;
	json_t *o = SEED_METRICS_OBJ({"time", now - start}, {"env_steps", n},
	                             {"steps_per_s", (double)(n - m->steps) / dt}, {"episodes", a->episodes},
	                             {"restarts", a->restarts}, {"held", a->held}, {"resends", a->resends},
	                             {"halves_unanswered", waiting});
	json_object_set_new(o, "episode_return",
	                    eps ? json_real((a->return_sum - m->return_sum) / (double)eps) : json_null());
	double frac[SEED_PHASE_N];
	seed_timing_fractions(m->time, a->time, dt, frac);
	seed_timing_json(o, frac, ACTOR_PHASES, dt);
	seed_err err;
	if (seed_metrics_write(mx, o, &err))
		cli_warn("--metrics: %s", err.msg);
	json_decref(o);
	*m = (mark){.t = now, .steps = n, .episodes = a->episodes, .return_sum = a->return_sum};
	memcpy(m->time, a->time, sizeof a->time);
}

/* The periodic lines of server mode: when they are due, and where the last
 * ones left the counts. */
typedef struct schedule {
	double start, last_stats;
	double stats_interval, next_stats;     /* 0: no statistics lines */
	double metrics_interval, next_metrics; /* 0: no metrics lines but the last */
	int64_t stats_steps;
	double stats_time[SEED_PHASE_N];
	seed_metrics *mx; /* NULL: no metrics */
	mark mk;
} schedule;

/* The statistics and metrics lines due at now. */
static void report_due(actor *a, schedule *sc, double now)
{
	if (sc->next_stats > 0 && now >= sc->next_stats) {
		time_line(a, sc->stats_time, now - sc->last_stats, false);
		stats_line(a, &sc->stats_steps, now - sc->last_stats);
		sc->last_stats = now;
		while (sc->next_stats <= now)
			sc->next_stats += sc->stats_interval;
	}
	if (sc->next_metrics > 0 && now >= sc->next_metrics) {
		metrics_line(a, sc->mx, &sc->mk, now, sc->start);
		while (sc->next_metrics <= now)
			sc->next_metrics += sc->metrics_interval;
	}
}

/* The half an action frame f answers, with its actions and the server's
 * restart requests taken in; NULL for a stale or duplicate reply (the
 * request it answers is done) or one of the wrong size. */
static half *take_reply(actor *a, const seed_frame *f)
{
	int64_t env0 = seed_frame_int(f, "env0", -1);
	half *h = NULL;
	for (int j = 0; j < a->nhalves; j++)
		if (a->halves[j].env0 == env0)
			h = &a->halves[j];
	if (f->type != SEED_FRAME_ACTION || !h || !h->inflight ||
	    (uint32_t)seed_frame_int(f, "run", -1) != a->run ||
	    seed_frame_int(f, "seq", -1) != (int64_t)h->seq)
		return NULL;
	const seed_tensor *act = seed_frame_tensor(f, "action");
	bool box = act->dtype == SEED_DTYPE_F32; /* validated: f32 [K, A] or i32 [K] */
	if (box != a->box || act->shape[0] != h->count || (box && act->shape[1] != a->spec->num_actions)) {
		if (box != a->box)
			cli_warn("reply for envs %d.. has %s actions; the environment's are %s", h->env0,
			         box ? "Box" : "discrete", a->box ? "Box" : "discrete");
		else
			cli_warn("reply for envs %d.. has %" PRId64 " x %" PRId64
			         " actions, expected %d x %d",
			         h->env0, act->shape[0], box ? act->shape[1] : 1, h->count,
			         a->box ? a->spec->num_actions : 1);
		return NULL;
	}
	seed_tensor_copy(box ? (void *)h->box_actions : (void *)h->actions, act);
	const seed_tensor *rs = seed_frame_tensor(f, "reset");
	h->any_reset = false;
	if (rs) {
		seed_tensor_copy(h->reset, rs); /* validated: u8 [K] */
		for (int i = 0; i < h->count; i++)
			h->any_reset |= h->reset[i] != 0;
	}
	const seed_tensor *seeds = seed_frame_tensor(f, "reset_seed");
	if (seeds)
		seed_tensor_copy(h->reset_seed, seeds); /* validated: i64 [K] */
	else
		memset(h->reset_seed, 0, (size_t)h->count * sizeof *h->reset_seed);
	h->inflight = false;
	if (h->tries > 0) {
		double t = seed_now_s();
		if (say_now(&a->last_answer_warn, t))
			cli_warn("%s answers again: the request of envs %d..%d (seq %" PRIu32
			         ") waited %.1f s and was resent %" PRId64 " times",
			         a->endpoint, h->env0, h->env0 + h->count - 1, h->seq, t - h->asked_at,
			         h->tries);
	}
	return h;
}

/* What became of a half given its actions. */
enum { HALF_SENT, HALF_DONE, HALF_SEND_FAILED, HALF_STEP_FAILED };

/* Step half h (its actions taken at t), then, unless it has played
 * max_steps (< 0: no end), send its next request. */
static int play_half(actor *a, seed_chan *c, half *h, int64_t max_steps, double t)
{
	seed_err err;
	int sr = step_half(a, h, &err);
	double t3 = seed_now_s();
	a->time[SEED_PHASE_STEP] += t3 - t;
	if (sr) {
		cli_warn("%s", err.msg);
		return HALF_STEP_FAILED;
	}
	if (max_steps >= 0 && h->steps >= max_steps)
		return HALF_DONE;
	encode_step(a, h);
	double t4 = seed_now_s();
	a->time[SEED_PHASE_ENCODE] += t4 - t3;
	sr = send_half(c, h);
	a->time[SEED_PHASE_SEND] += seed_now_s() - t4;
	return sr ? HALF_SEND_FAILED : HALF_SENT;
}

/* The first request of every half (none when max_steps is 0); returns how
 * many are in flight. */
static int send_first(actor *a, seed_chan *c, int64_t max_steps)
{
	int busy = 0;
	for (int j = 0; j < a->nhalves; j++) {
		half *h = &a->halves[j];
		if (max_steps == 0)
			continue;
		encode_step(a, h);
		if (send_half(c, h))
			break;
		busy++;
	}
	return busy;
}

/* Receive and answer replies until every half is done (busy: the halves
 * in flight), a signal, a refusal, a failed step or a failed send; returns
 * 1 for a refusal or a failed step, else 0. */
static int serve_halves(actor *a, seed_chan *c, int busy, int64_t max_steps, int retry_ms, schedule *sc)
{
	seed_err err;
	seed_frame f = {0};
	int rc = 0;
	/* Decoding keeps its zone: nothing is allocated per step. */
	seed_frame_decoder *dec;
	if (seed_frame_decoder_new(&dec))
		cli_die("out of memory");
	while (busy > 0 && !cli_stop) {
		double now = seed_now_s();
		resend_due(a, c, retry_ms, now);
		report_due(a, sc, now);
		seed_chan_msg m;
		double t0 = seed_now_s();
		int r = seed_chan_recv(c, &m, until_due(a, retry_ms, sc->next_stats, sc->next_metrics, now),
		                       &err);
		double t1 = seed_now_s();
		a->time[SEED_PHASE_WAIT] += t1 - t0;
		if (r == -EAGAIN || r == -EINTR)
			continue;
		if (r) {
			cli_warn("%s", err.msg);
			continue;
		}
		if (seed_frame_decoder_decode(dec, &f, m.data, m.len, &err)) {
			cli_warn("bad reply from %s: %s", a->endpoint, err.msg);
			continue;
		}
		if (f.type == SEED_FRAME_ERROR) {
			const char *msg = "";
			size_t len = 0;
			seed_frame_str(&f, "message", &msg, &len);
			cli_warn("the server refused a request: %.*s", (int)len, msg);
			rc = 1;
			break;
		}
		half *h = take_reply(a, &f);
		if (!h)
			continue;
		double t2 = seed_now_s();
		a->time[SEED_PHASE_TAKE] += t2 - t1;
		int hs = play_half(a, c, h, max_steps, t2);
		if (hs == HALF_DONE) {
			busy--;
		} else if (hs != HALF_SENT) {
			rc = hs == HALF_STEP_FAILED;
			break;
		}
	}
	seed_frame_clear(&f);
	seed_frame_decoder_free(&dec);
	return rc;
}

/* Server mode: keep one request in flight per half; a statistics line
 * every stats_interval seconds (0: none), a metrics line to
 * mx (NULL: none) every metrics_interval seconds (0: none) and at the end;
 * where the time went at the end unless quiet. */
static int run_server(actor *a, const char *endpoint, int64_t max_steps, int retry_ms, double stats_interval,
                      seed_metrics *mx, double metrics_interval, bool quiet)
{
	void *ctx = seed_chan_context();
	seed_err err;
	/* The server answers with an action or error frame for one half (the
	 * last is the larger when K is odd). */
	seed_chan_opts copts = {
	    .bind = false,
	    .stop = &cli_stop,
	    /* Box actions are K x A four-byte numbers, as K x A discrete ones would be. */
	    .max_msg = seed_limit_action((int64_t)a->halves[a->nhalves - 1].count *
	                                 (a->box ? a->spec->num_actions : 1))};
	cli_curve_chan(ctx, &copts, endpoint, "--connect");
	seed_chan *c;
	if (!ctx || seed_chan_open(&c, ctx, SEED_CHAN_DEALER, endpoint, &copts, &err))
		cli_die("%s", ctx ? err.msg : "cannot create a ZeroMQ context");
	int busy = send_first(a, c, max_steps);
	a->endpoint = endpoint;
	a->last_resend_warn = a->last_answer_warn = -1;
	double start = seed_now_s();
	schedule sc = {.start = start,
	               .last_stats = start,
	               .stats_interval = stats_interval,
	               .next_stats = stats_interval > 0 ? start + stats_interval : 0,
	               .metrics_interval = metrics_interval,
	               .next_metrics = mx && metrics_interval > 0 ? start + metrics_interval : 0,
	               .mx = mx,
	               .mk = {.t = start}};
	int rc = serve_halves(a, c, busy, max_steps, retry_ms, &sc);
	double end = seed_now_s();
	if (mx)
		metrics_line(a, mx, &sc.mk, end, start);
	if (!quiet) {
		double zero[SEED_PHASE_N] = {0};
		time_line(a, zero, end - start, true);
	}
	if (a->resends)
		cli_warn("resent %" PRId64 " unanswered requests", a->resends);
	seed_chan_close(&c);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	return rc;
}

int main(int argc, char **argv)
{
	cli_parse(&spec, argc, argv);
	cli_curve_load();
	if (!opt.env)
		cli_usage_error("--env is required");
	if (!opt.endpoint == !(opt.actions || opt.out))
		cli_usage_error("give either --connect, or --actions and --out");
	if (!opt.endpoint && (!opt.actions || !opt.out))
		cli_usage_error("offline mode needs both --actions and --out");
	const char *endpoint = opt.endpoint;
	int64_t k = opt.envs, max_steps = opt.steps, actor_id = opt.actor;
	int retry_ms = (int)opt.retry_ms;
	cli_catch_signals();

	actor a = {0};
	seed_err err;
	/* Mix the actor id into the seed so actors started alike differ. */
	uint64_t env_seed = opt.seed ^ ((uint64_t)actor_id * 0x9e3779b97f4a7c15ULL);
	int rc = seed_envs_new(&a.envs, opt.env, opt.env_options, (int)k, env_seed, &err);
	if (rc == -SEED_EOPTION || rc == -ENOENT)
		cli_config_error("%s",
		                 err.msg); /* an unknown environment or option: a restart cannot mend it */
	if (rc)
		cli_die("%s", err.msg);
	a.spec = seed_envs_spec(a.envs);
	a.box = a.spec->action_space == SEED_ACTIONS_BOX;
	a.last_unstable_warn = -1;
	a.obs_bytes = seed_env_spec_obs_bytes(a.spec);
	a.actor_id = actor_id;
	if (getrandom(&a.run, sizeof a.run, 0) != sizeof a.run)
		a.run = (uint32_t)(seed_now_s() * 1e6) ^ (uint32_t)getpid();
	if (endpoint && k >= 2) {
		a.nhalves = 2;
		half_alloc(&a.halves[0], &a, 0, (int)(k / 2));
		half_alloc(&a.halves[1], &a, (int)(k / 2), (int)(k - k / 2));
	} else {
		a.nhalves = 1;
		half_alloc(&a.halves[0], &a, 0, (int)k);
	}
	reset_all(&a);

	seed_metrics *mx = NULL;
	if (opt.metrics && !endpoint)
		cli_usage_error("--metrics goes with --connect (server mode)");
	if (opt.metrics && seed_metrics_open(opt.metrics, &mx, &err))
		cli_die("--metrics: %s", err.msg);
	double t0 = seed_now_s();
	rc = endpoint ? run_server(&a, endpoint, max_steps, retry_ms, opt.stats_interval, mx,
	                           opt.metrics_interval, opt.quiet)
	              : run_offline(&a, opt.actions, opt.out, max_steps);
	seed_metrics_close(&mx);
	double dt = seed_now_s() - t0;

	int64_t steps = env_steps(&a);
	if (!opt.quiet) {
		fprintf(stderr, "%s: %" PRId64 " env steps in %.2f s (%.0f steps/s), %" PRId64 " episodes",
		        cli_prog, steps, dt, dt > 0 ? (double)steps / dt : 0.0, a.episodes);
		if (a.episodes)
			fprintf(stderr, ", mean return %.3f", a.return_sum / (double)a.episodes);
		if (a.restarts)
			fprintf(stderr, ", %" PRId64 " restarted by the server", a.restarts);
		if (a.held)
			fprintf(stderr, ", %" PRId64 " env steps held by the server", a.held);
		fputc('\n', stderr);
	}
	for (int j = 0; j < a.nhalves; j++)
		half_free(&a.halves[j]);
	seed_envs_free(&a.envs);
	return rc;
}
