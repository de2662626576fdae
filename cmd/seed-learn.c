/* seed-learn: the learner.
 *
 * V-trace (algorithm "vtrace"): pulls unroll frames and episode frames from
 * seed-infer.  R2D2 (algorithm "r2d2"): asks seed-replay for batches of
 * sequences over a DEALER socket, keeping --prefetch sample requests in
 * flight, answers each update with a priority frame, and takes the episode
 * frames seed-replay relays.  Either way it trains with a seed_learner
 * (seed/learner.h: batching, the update, checkpoints, version
 * reservations), and publishes the new parameters with their version after
 * each update.  Metrics go to JSON lines and, with a run directory, to a
 * TensorBoard event file there (a new one per process: TensorBoard reads
 * them all as one run); checkpoints to the run directory every
 * checkpoint_interval seconds, at the end and on SIGINT/SIGTERM.
 * --resume continues a run where it stopped.
 *
 * Neuroevolution (algorithms "es", "ga", "rs"): a seed_evolver
 * (seed/evolve.h) instead of a learner: each round goes out as a
 * generation frame on the params channel (and again every second, for a
 * late subscriber), episode frames with generation and member fields come
 * in on the unroll channel, and a round ends when complete or at the
 * generation deadline, with one metrics line.
 *
 * Where the time goes (seed_timing(3)): waiting for frames, taking them in,
 * the updates' forward, backward and optimizer phases (timed by the
 * learner), publishing, checkpoints and metrics; every metrics line carries
 * the fractions of its interval, and the end of a run says them over the
 * whole run.  --bottleneck DIR reads a seed-train run directory's metrics
 * files and says which program held the run back.
 *
 * This file is option parsing and wiring only.  A checkpoint that cannot be
 * written is said at once, counted in the metrics, named in the final
 * report and in the exit status; checkpoint_failure (seed-config(5)) says
 * whether training stops or goes on.
 */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "secure.h"
#include "seed/blas.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/clock.h"
#include "seed/config.h"
#include "seed/env.h"
#include "seed/evolve.h"
#include "seed/frame.h"
#include "seed/learner.h"
#include "seed/nn.h"
#include "seed/limits.h"
#include "seed/metrics.h"
#include "seed/opts.h"
#include "seed/tfevents.h"
#include "seed/timing.h"

/* The options: main's variables, filled by the table below.  Those that
 * set a configuration value apply after every --set, when given (seen). */
static struct {
	const char *config, *resume, *unrolls, *params, *dir, *metrics, *get, *bottleneck, *device;
	seed_opt_strs sets;
	int64_t frames, batch_size, prefetch;
	uint64_t seed;
	double lr, target, ckpt_interval;
	bool print_config, quiet;
	bool frames_seen, seed_seen, lr_seen, batch_seen, target_seen, ckpt_seen;
} opt = {.prefetch = 2};

static const seed_opt options[] = {
    {"config", 'C', SEED_OPT_STR, &opt.config, "PRESET|FILE",
     .help = "training configuration (a preset name or a JSON file)"},
    {"resume", 'r', SEED_OPT_STR, &opt.resume, "DIR",
     .help = "continue the run saved in DIR (its config, weights, counters)"},
    {"set", 0, SEED_OPT_STRS, &opt.sets, "KEY=VALUE",
     .help = "override a config value (dotted keys, JSON values), repeatable"},
    {"unrolls", 'u', SEED_OPT_STR, &opt.unrolls, "ENDPOINT",
     .help = "where unrolls come from (connects; '@' binds; or a file); r2d2: seed-replay's --bind; es, ga, "
             "rs: episodes"},
    {"prefetch", 0, SEED_OPT_INT, &opt.prefetch, "N", 1, 1024,
     .help = "r2d2: sample requests kept in flight to seed-replay (default 2)"},
    {"params", 'P', SEED_OPT_STR, &opt.params, "ENDPOINT",
     .help = "where parameters are published (binds; '>' connects)"},
    {"dir", 'd', SEED_OPT_STR, &opt.dir, "DIR",
     .help = "run directory for checkpoints and metrics, parents created (default: none)"},
    {"metrics", 'M', SEED_OPT_STR, &opt.metrics, "FILE",
     .help = "metrics as JSON lines (default DIR/metrics.jsonl; - for stdout)"},
    {"frames", 'f', SEED_OPT_INT, &opt.frames, "N", 1, INT64_MAX / 2,
     .help = "stop after N env frames (config total_frames)", .seen = &opt.frames_seen},
    {"seed", 's', SEED_OPT_U64, &opt.seed, "S", .help = "seed (config seed)", .seen = &opt.seed_seen},
    {"lr", 0, SEED_OPT_NUM, &opt.lr, "X", .lo = 0, .hi = 10, .help = "learning rate (config optimizer.lr)",
     .seen = &opt.lr_seen},
    {"batch-size", 'B', SEED_OPT_INT, &opt.batch_size, "N", 1, 1 << 20,
     .help = "unrolls per update (config batch_size)", .seen = &opt.batch_seen},
    {"target", 0, SEED_OPT_NUM, &opt.target, "R", .lo = -1e300, .hi = 1e300,
     .help = "stop once the mean return of the last episodes reaches R (config target_return)",
     .seen = &opt.target_seen},
    {"checkpoint-interval", 0, SEED_OPT_NUM, &opt.ckpt_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "seconds between checkpoints (config checkpoint_interval; 0: only at the end)",
     .seen = &opt.ckpt_seen},
    {"device", 0, SEED_OPT_STR, &opt.device, "DEV",
     .help = "compute the updates on DEV: cpu (default), cuda or cuda:N (a GPU, with CUDA built in)"},
    {"print-config", 0, SEED_OPT_FLAG, &opt.print_config,
     .help = "print the resolved configuration as JSON and exit"},
    {"get", 0, SEED_OPT_STR, &opt.get, "KEY", .help = "print one resolved value (dotted key) and exit"},
    {"bottleneck", 0, SEED_OPT_STR, &opt.bottleneck, "DIR",
     .help = "print which program held the run in DIR back (from its metrics files) and exit"},
    {"quiet", 'q', SEED_OPT_FLAG, &opt.quiet, .help = "no progress on stderr"},
    CLI_CURVE_OPTIONS,
    {0},
};

static const seed_opts usage_spec = {
    .usage = "(--config PRESET|FILE | --resume DIR) --unrolls ENDPOINT --params ENDPOINT [OPTION]...",
    .summary = "Train a policy with V-trace or PPO on unrolls from seed-infer, or Q values with R2D2\n"
               "on sequences from seed-replay, and publish its parameters; or evolve a population\n"
               "(algorithms es, ga, rs) on episodes from seed-infer, publishing its generations.",
    .epilogue = "Exit status: 0 when the target or the frame budget is reached or when stopped by a\n"
                "signal, with the final checkpoint written; 1 on errors, among them a checkpoint that\n"
                "could not be written; 2 on usage errors.  See seed-learn(1) and seed-config(5).\n",
    .opts = options,
    .max_operands = 0,
};

static seed_config cfg;
static seed_learner *L;
static seed_buf out, req;
static int64_t bad_frames, ckpt_failures, priority_drops;

/* Where the time goes: seconds per phase (the updates' phases copied from
 * the learner's status), and where the metrics' interval began. */
#define LEARN_PHASES                                                                                         \
	(SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_TAKE) |                                 \
	 SEED_PHASE_BIT(SEED_PHASE_FORWARD) | SEED_PHASE_BIT(SEED_PHASE_BACKWARD) |                          \
	 SEED_PHASE_BIT(SEED_PHASE_OPTIM) | SEED_PHASE_BIT(SEED_PHASE_PUBLISH) |                             \
	 SEED_PHASE_BIT(SEED_PHASE_CHECKPOINT))
static double tm[SEED_PHASE_N], tm_mark[SEED_PHASE_N], tm_mark_at;

/* The learner's seconds in its updates so far. */
static double update_time(void)
{
	const seed_learner_status *st = seed_learner_get_status(L);
	return st->time_forward + st->time_backward + st->time_optim;
}

/* The fractions of the seconds from then to at, the totals having been at
 * from at time then, into frac; returns the seconds. */
static double time_split(const double *from, double then, double at, double *frac)
{
	const seed_learner_status *st = seed_learner_get_status(L);
	tm[SEED_PHASE_FORWARD] = st->time_forward;
	tm[SEED_PHASE_BACKWARD] = st->time_backward;
	tm[SEED_PHASE_OPTIM] = st->time_optim;
	double dt = at - then;
	seed_timing_fractions(from, tm, dt, frac);
	return dt;
}

/* --bottleneck DIR: the judgement over DIR's metrics files (seed-train's
 * names: metrics.jsonl, infer.metrics.jsonl, actor-N.metrics.jsonl), as
 * "NAME<TAB>sentence" on stdout.  A file missing is no figures; one that
 * cannot be read is an error. */
static int bottleneck(const char *dir)
{
	seed_timing_split sp[3] = {{0}};
	char path[4096];
	seed_err err;
	snprintf(path, sizeof path, "%s/actor-*.metrics.jsonl", dir);
	glob_t g;
	int grc = glob(path, 0, NULL, &g);
	if (grc != 0 && grc != GLOB_NOMATCH)
		cli_die("--bottleneck: cannot list %s", path);
	for (size_t i = 0; grc == 0 && i < g.gl_pathc; i++)
		if (seed_timing_read(g.gl_pathv[i], &sp[0], &err))
			cli_die("--bottleneck: %s", err.msg);
	if (grc == 0)
		globfree(&g);
	const char *names[2] = {"infer.metrics.jsonl", "metrics.jsonl"};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		int rc = seed_timing_read(path, &sp[1 + i], &err);
		if (rc && rc != -ENOENT)
			cli_die("--bottleneck: %s", err.msg);
	}
	char line[1024];
	seed_bottleneck b = seed_bottleneck_judge(&sp[0], &sp[1], &sp[2], line, sizeof line);
	printf("%s\t%s\n", seed_bottleneck_name(b), line);
	return 0;
}

/* Count a dropped frame and say why: the first few, then every thousandth,
 * so that a misconfigured peer cannot drown stderr. */
static void report_bad(const char *msg)
{
	if (++bad_frames <= 10 || bad_frames % 1000 == 0)
		cli_warn("dropped bad frame #%" PRId64 ": %s", bad_frames, msg);
}

static void publish(seed_chan *params)
{
	double t0 = seed_now_s();
	seed_err err;
	if (seed_learner_params_frame(L, &out, &err))
		cli_die("encoding parameters: %s", err.msg);
	/* PUB never blocks: a slow subscriber only misses old versions, and only
	 * the newest matters.  A failed send is retried with the next version. */
	seed_chan_send(params, NULL, 0, out.data, out.len, true);
	tm[SEED_PHASE_PUBLISH] += seed_now_s() - t0;
}

/* Save; on failure say so at once (the message says what the run
 * directory still holds). */
static int checkpoint(bool last)
{
	seed_err err;
	double t0 = seed_now_s();
	int rc = seed_learner_save(L, last, &err);
	tm[SEED_PHASE_CHECKPOINT] += seed_now_s() - t0;
	if (rc == 0)
		return 0;
	ckpt_failures++;
	cli_warn("checkpoint failed: %s", err.msg);
	return -1;
}

/* r2d2: send the last update's priorities to seed-replay.  Never blocks:
 * a frame the socket cannot take now is dropped and counted (the items
 * keep their old priorities). */
static void send_priorities(seed_chan *replay)
{
	double t0 = seed_now_s();
	seed_err err;
	if (seed_learner_priority_frame(L, &out, &err))
		cli_die("encoding priorities: %s", err.msg);
	if (seed_chan_send(replay, NULL, 0, out.data, out.len, true) != 0 && ++priority_drops <= 10)
		cli_warn("priority frame #%" PRId64 " not sent: seed-replay's queue is full", priority_drops);
	tm[SEED_PHASE_PUBLISH] += seed_now_s() - t0;
}

/* r2d2: seconds without a frame from seed-replay after which the sample
 * requests in flight are taken for lost and sent again. */
#define REQUEST_LOST_S 30.0

/* r2d2: send sample requests until `want` are in flight; a request the
 * socket cannot take now (no seed-replay yet) is tried again later. */
static void request_samples(seed_chan *replay, int64_t *inflight, int64_t want)
{
	while (*inflight < want && seed_chan_send(replay, NULL, 0, req.data, req.len, true) == 0)
		++*inflight;
}

/* Seconds since the Unix epoch: TensorBoard's wall_time (the metrics'
 * "time" counts seconds of training instead). */
static double unix_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The metrics file (metrics, or DIR/metrics.jsonl when only a run
 * directory is given; none without either) and the TensorBoard event file
 * (in the run directory only); dies on failure. */
static void open_outputs(const char *dir, const char *metrics, seed_metrics **mx, seed_tfevents **tb)
{
	seed_err err;
	char path[4096];
	if (!metrics && dir) {
		snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
		metrics = path;
	}
	if (metrics && seed_metrics_open(metrics, mx, &err))
		cli_die("%s", err.msg);
	if (dir && seed_tfevents_open(dir, unix_time(), tb, &err))
		cli_die("%s", err.msg);
}

/* A metrics line to the metrics file and, as scalars at step "frames" (the
 * one counter that every algorithm has and a resume restores), to the
 * event file. */
static void write_metrics(seed_metrics *mx, seed_tfevents *tb, bool progress)
{
	double wall = unix_time(), t0 = seed_now_s();
	json_t *o = seed_learner_metrics(L);
	if (!o)
		return;
	/* The interval ends where this call began: the time spent here is
	 * the next interval's (its checkpoint phase, added below), so that no
	 * phase is counted in an interval it did not lie in, and an interval's
	 * fractions sum to 1 at most, however short it is. */
	double frac[SEED_PHASE_N];
	double dt = time_split(tm_mark, tm_mark_at, t0, frac);
	seed_timing_json(o, frac, LEARN_PHASES, dt);
	memcpy(tm_mark, tm, sizeof tm);
	tm_mark_at += dt;
	json_object_set_new(o, "bad_frames", json_integer(bad_frames));
	if (cfg.algorithm == SEED_CONFIG_R2D2)
		json_object_set_new(o, "priority_drops", json_integer(priority_drops));
	json_object_set_new(o, "checkpoint_failures", json_integer(ckpt_failures));
	seed_err err;
	if (mx && seed_metrics_write(mx, o, &err))
		cli_warn("metrics: %s", err.msg);
	if (tb && seed_tfevents_write_json(tb, o, "frames", wall, &err))
		cli_warn("metrics: %s", err.msg);
	if (progress) {
		char line[256];
		seed_learner_progress(L, o, line, sizeof line);
		fprintf(stderr, "\r%s: %s, wait %.0f%%   ", cli_prog, line, 100 * frac[SEED_PHASE_WAIT]);
	}
	json_decref(o);
	tm[SEED_PHASE_CHECKPOINT] += seed_now_s() - t0;
}

/* The spec of a Gymnasium environment (a config env "gym:ID"), which no
 * seed_envs can make: asked of seed-gym(1), run as `seed-gym --env ID
 * --env-options JSON --spec` (the program named by $SEED_GYM, else
 * seed-gym on PATH; seed-train sets SEED_GYM to the one beside it), which
 * prints one JSON object {"obs_dtype", "obs_shape", "num_actions",
 * "max_steps"}.  Errors name the command and what was wrong. */
static int gym_spec(const seed_config *c, seed_env_spec *spec, seed_err *err)
{
	const char *prog = getenv("SEED_GYM");
	if (!prog || !*prog)
		prog = "seed-gym";
	int fd[2];
	if (pipe(fd))
		return seed_err_set(err, -errno, "%s --spec: %s", prog, strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fd[0]);
		close(fd[1]);
		return seed_err_set(err, -e, "%s --spec: %s", prog, strerror(e));
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp(prog, prog, "--env", c->env, "--env-options", c->env_options, "--spec", (char *)NULL);
		fprintf(stderr, "%s: cannot run %s: %s\n", cli_prog, prog, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	while ((n = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0 || (n < 0 && errno == EINTR))
		len += n > 0 ? (size_t)n : 0;
	close(fd[0]);
	buf[len] = '\0';
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* Its status 2: the environment cannot work (seed-gym(1)); else a runtime failure. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return seed_err_set(err, WIFEXITED(status) && WEXITSTATUS(status) == 2 ? -SEED_EOPTION : -EIO,
		                    "env \"%s\": `%s --spec` failed (status %d; its message is above)",
		                    c->env, prog,
		                    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	json_error_t je;
	json_t *o = json_loads(buf, 0, &je);
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
	}
	json_decref(o);
	if (!ok)
		return seed_err_set(err, -SEED_EOPTION,
		                    "env \"%s\": `%s --spec` printed no valid spec (obs_dtype, obs_shape of "
		                    "rank 1..%d, num_actions, max_steps): %.200s",
		                    c->env, prog, SEED_ENV_MAX_OBS_RANK, buf);
	*spec = s;
	return 0;
}

/* ---- algorithms es, ga, rs: the evolution loop (seed/evolve.h) ---------- */

#define EVO_PHASES                                                                                           \
	(SEED_PHASE_BIT(SEED_PHASE_WAIT) | SEED_PHASE_BIT(SEED_PHASE_TAKE) |                                 \
	 SEED_PHASE_BIT(SEED_PHASE_OPTIM) | SEED_PHASE_BIT(SEED_PHASE_PUBLISH) |                             \
	 SEED_PHASE_BIT(SEED_PHASE_CHECKPOINT))

/* Seconds between publications of the same round: a seed-infer that
 * restarted, or subscribed late, gets the round within this. */
#define EVO_REPUBLISH_S 1.0

static seed_evolver *E;

static void evo_publish(seed_chan *params)
{
	double t0 = seed_now_s();
	seed_err err;
	if (seed_evolver_generation_frame(E, &out, &err))
		cli_die("encoding the generation: %s", err.msg);
	seed_chan_send(params, NULL, 0, out.data, out.len, true);
	tm[SEED_PHASE_PUBLISH] += seed_now_s() - t0;
}

static int evo_checkpoint(void)
{
	seed_err err;
	double t0 = seed_now_s();
	int rc = seed_evolver_save(E, &err);
	tm[SEED_PHASE_CHECKPOINT] += seed_now_s() - t0;
	if (rc == 0)
		return 0;
	ckpt_failures++;
	cli_warn("checkpoint failed: %s", err.msg);
	return -1;
}

/* The metrics line of the round that just finished, to the metrics file
 * and the event file (step: frames, as for the other algorithms). */
static void evo_metrics(seed_metrics *mx, seed_tfevents *tb, bool progress)
{
	double wall = unix_time(), t0 = seed_now_s();
	json_t *o = seed_evolver_metrics(E, seed_now_s());
	tm[SEED_PHASE_OPTIM] = seed_evolver_get_status(E)->time_update;
	double frac[SEED_PHASE_N], dt = t0 - tm_mark_at; /* as in write_metrics */
	seed_timing_fractions(tm_mark, tm, dt, frac);
	seed_timing_json(o, frac, EVO_PHASES, dt);
	memcpy(tm_mark, tm, sizeof tm);
	tm_mark_at += dt;
	json_object_set_new(o, "bad_frames", json_integer(bad_frames));
	json_object_set_new(o, "checkpoint_failures", json_integer(ckpt_failures));
	seed_err err;
	if (mx && seed_metrics_write(mx, o, &err))
		cli_warn("metrics: %s", err.msg);
	if (tb && seed_tfevents_write_json(tb, o, "frames", wall, &err))
		cli_warn("metrics: %s", err.msg);
	if (progress) {
		const seed_evo_stats *s = seed_evolver_stats(E);
		fprintf(stderr,
		        "\r%s: generation %" PRId64 ", best %.4g, mean %.4g, elite %.4g, %" PRId64
		        " frames, %.0f fps, wait %.0f%%   ",
		        cli_prog, s->generation, s->best, s->mean, s->elite,
		        seed_evolver_get_status(E)->frames,
		        json_number_value(json_object_get(o, "frames_per_s")), 100 * frac[SEED_PHASE_WAIT]);
	}
	json_decref(o);
	tm[SEED_PHASE_CHECKPOINT] += seed_now_s() - t0;
}

/* Evolve: publish the round as a generation frame on the params channel
 * (again every EVO_REPUBLISH_S), take episode frames from the unroll
 * channel, finish rounds when complete or at the deadline, stop at the
 * frame budget or the target.  Returns the exit status. */
static int evolve(seed_checkpoint *ck, const char *dir, const char *metrics, const seed_env_spec *gym)
{
	seed_err err;
	int rc = seed_evolver_new(&E, &cfg, gym, seed_now_s(), &err);
	if (rc == -SEED_EOPTION || rc == -ENOENT)
		cli_config_error("config: %s", err.msg);
	if (rc)
		cli_die("config: %s", err.msg);
	if (ck && seed_evolver_restore(E, ck, seed_now_s(), &err))
		cli_die("--resume: %s", err.msg);
	bool resumed = ck != NULL;
	seed_checkpoint_free(&ck);
	if (dir && seed_evolver_open_dir(E, dir, &err))
		cli_die("--dir: %s", err.msg);
	seed_metrics *mx = NULL;
	seed_tfevents *tb = NULL;
	open_outputs(dir, metrics, &mx, &tb);

	void *ctx = seed_chan_context();
	seed_chan *uch, *pch;
	/* Episode frames of up to as many episodes as an unroll frame has
	 * rows, each with its generation and member (12 bytes more a row). */
	int64_t rows = cfg.envs_per_actor > 65536 ? cfg.envs_per_actor : 65536;
	int64_t max_msg = seed_limit_unroll(rows, 1, 0, 0, 0) + 12 * rows;
	seed_chan_opts uo = {.bind = false, .hwm = cfg.infer_hwm, .stop = &cli_stop, .max_msg = max_msg};
	/* The params PUB queues little for a slow subscriber (one that conflates
	 * queues little itself): beyond it a publication is dropped for that
	 * subscriber, and the next one, an update later, gets through. */
	seed_chan_opts po = {.bind = true, .hwm = SEED_CHAN_CONFLATE_HWM, .stop = &cli_stop};
	cli_curve_chan(ctx, &uo, opt.unrolls, "--unrolls");
	cli_curve_chan(ctx, &po, opt.params, "--params");
	if (!ctx || seed_chan_open(&uch, ctx, SEED_CHAN_PULL, opt.unrolls, &uo, &err))
		cli_die("%s", ctx ? err.msg : "cannot create a ZeroMQ context");
	if (seed_chan_open(&pch, ctx, SEED_CHAN_PUB, opt.params, &po, &err))
		cli_die("%s", err.msg);

	const seed_evolver_status *st = seed_evolver_get_status(E);
	bool progress = !opt.quiet && isatty(2);
	if (!opt.quiet) {
		char summary[512];
		seed_model_summary(seed_evolver_model(E), summary, sizeof summary);
		const seed_config_evolution *ev = &cfg.evolution;
		fprintf(
		    stderr, "%s: %s on %s, %s population %d, noise table %" PRId64 " floats (%.0f MiB); %s\n",
		    cli_prog, summary, cfg.env, seed_config_algorithm_name(cfg.algorithm), ev->population,
		    ev->noise_size, (double)ev->noise_size * 4 / (1 << 20), resumed ? "resumed" : "new run");
	}
	rc = 0;
	const char *why = NULL;
	double t_ckpt = seed_now_s(), t_pub = -1e300;
	int64_t published = -1;
	seed_frame f = {0};
	seed_frame_decoder *dec;
	if (seed_frame_decoder_new(&dec))
		cli_die("out of memory");
	double t_start = seed_now_s();
	tm_mark_at = t_start;
	while (!cli_stop) {
		double now = seed_now_s();
		if (st->generation != published || now - t_pub >= EVO_REPUBLISH_S) {
			evo_publish(pch);
			published = st->generation;
			t_pub = now;
		}
		if ((why = seed_evolver_done(E)))
			break;
		/* Wake for the deadline and the next republication. */
		double wake = seed_evolver_deadline_in(E, now);
		if (t_pub + EVO_REPUBLISH_S - now < wake)
			wake = t_pub + EVO_REPUBLISH_S - now;
		int timeout = wake <= 0 ? 0 : wake < 0.1 ? (int)(wake * 1000) + 1 : 100;
		seed_chan_msg m;
		double t0 = seed_now_s();
		int r = seed_chan_recv(uch, &m, timeout, &err);
		double t1 = seed_now_s();
		tm[SEED_PHASE_WAIT] += t1 - t0;
		if (r == -SEED_EEOF) {
			why = "end of the episode stream";
			break;
		}
		if (r == 0) {
			int k = seed_frame_decoder_decode(dec, &f, m.data, m.len, &err);
			if (k == 0)
				k = seed_evolver_feed(E, &f, &err);
			if (k < 0)
				report_bad(err.msg);
		} else if (r != -EAGAIN && r != -EINTR) {
			cli_warn("%s", err.msg);
		}
		tm[SEED_PHASE_TAKE] += seed_now_s() - t1;
		int k = seed_evolver_step(E, seed_now_s(), &err);
		if (k < 0) {
			cli_warn("advancing the round: %s", err.msg);
			why = "the next round could not be made";
			rc = 1;
			break;
		}
		if (k > 0) {
			evo_publish(pch);
			published = st->generation;
			t_pub = seed_now_s();
			evo_metrics(mx, tb, progress);
		}
		now = seed_now_s();
		if (dir && cfg.checkpoint_interval > 0 && now - t_ckpt >= cfg.checkpoint_interval) {
			t_ckpt = now;
			if (evo_checkpoint() && cfg.checkpoint_failure == SEED_CONFIG_CKPT_STOP) {
				why = "a checkpoint could not be written (checkpoint_failure is \"stop\")";
				rc = 1;
				break;
			}
		}
	}
	seed_frame_clear(&f);
	seed_frame_decoder_free(&dec);
	if (dir && evo_checkpoint())
		rc = 1;
	if (progress)
		fputc('\n', stderr);
	if (!opt.quiet) {
		double zero[SEED_PHASE_N] = {0}, frac[SEED_PHASE_N];
		char split[256];
		tm[SEED_PHASE_OPTIM] = st->time_update;
		double dt = seed_now_s() - t_start;
		seed_timing_fractions(zero, tm, dt, frac);
		seed_timing_format(frac, EVO_PHASES, split, sizeof split);
		fprintf(stderr, "%s: time: %s (of %.1f s)\n", cli_prog, split, dt);
	}
	if (!opt.quiet || rc) {
		char line[4400];
		seed_evolver_summary(E, why, seed_now_s(), line, sizeof line);
		fprintf(stderr, "%s: %s\n", cli_prog, line);
	}
	cli_curve_report((seed_chan *[]){uch, pch}, 2, opt.quiet && !rc);
	seed_metrics_close(&mx);
	seed_tfevents_close(&tb);
	seed_chan_close(&uch);
	seed_chan_close(&pch);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	seed_evolver_free(&E);
	seed_buf_free(&out);
	seed_buf_free(&req);
	seed_config_free(&cfg);
	return rc;
}

int main(int argc, char **argv)
{
	cli_parse(&usage_spec, argc, argv);
	cli_curve_load();
	seed_err derr;
	if (opt.device && seed_device_check(opt.device, &derr) < 0)
		cli_die("--device: %s", derr.msg);
	const char *resume = opt.resume, *dir = opt.dir, *metrics = opt.metrics, *get_key = opt.get;
	if (opt.bottleneck) {
		if (opt.config || resume || opt.unrolls || opt.params)
			cli_usage_error("--bottleneck DIR reads a finished run: it goes with none of "
			                "--config, --resume, --unrolls and --params");
		return bottleneck(opt.bottleneck);
	}
	if (!opt.config == !resume)
		cli_usage_error("give one of --config and --resume");
	if (!opt.print_config && !get_key && (!opt.unrolls || !opt.params))
		cli_usage_error("--unrolls and --params are required");
	/* Every --set, then the options that set config values, as assignments. */
	const char **sets = seed_xcalloc((size_t)opt.sets.n + 6, sizeof *sets);
	char argsets[6][64];
	int nsets = 0, nargs = 0;
	for (int i = 0; i < opt.sets.n; i++)
		sets[nsets++] = opt.sets.v[i];
#define SETF(seen, ...)                                                                                      \
	if (seen)                                                                                            \
	sets[nsets++] = argsets[nargs], snprintf(argsets[nargs++], sizeof argsets[0], __VA_ARGS__)
	SETF(opt.frames_seen, "total_frames=%lld", (long long)opt.frames);
	SETF(opt.seed_seen, "seed=%llu", (unsigned long long)opt.seed);
	SETF(opt.lr_seen, "optimizer.lr=%.9g", opt.lr);
	SETF(opt.batch_seen, "batch_size=%lld", (long long)opt.batch_size);
	SETF(opt.target_seen, "target_return=%.17g", opt.target);
	SETF(opt.ckpt_seen, "checkpoint_interval=%.17g", opt.ckpt_interval);
#undef SETF
	cli_catch_signals();

	seed_err err;
	seed_checkpoint *ck = NULL;
	if (resume && seed_checkpoint_load(resume, &ck, &err))
		cli_die("--resume: %s", err.msg);
	if (resume && !ck->config)
		cli_die("--resume %s: the checkpoint holds no training configuration", resume);
	if (resume && !dir)
		dir = resume;
	const char *env_dir = getenv("SEED_PRESETS");
	const char *dirs[] = {env_dir ? env_dir : "examples/presets", SEED_PRESETDIR, NULL};
	int rc = seed_config_resolve(ck ? ck->config : NULL, opt.config, dirs, sets, nsets, &cfg, &err);
	if (rc == -EINVAL)
		cli_usage_error("%s", err.msg);
	else if (rc) /* a configuration that does not load or check: a restart cannot mend it */
		cli_config_error("%s%s", resume ? "--resume: " : "", err.msg);
	free(sets);
	seed_opt_strs_free(&opt.sets);
	if (get_key || opt.print_config) {
		char *text = seed_config_text(cfg.root, get_key, &err);
		if (!text)
			cli_die("--get: %s", err.msg);
		puts(text);
		free(text);
		seed_config_free(&cfg);
		seed_checkpoint_free(&ck);
		return 0;
	}

	/* A gym:ID environment lives in seed-gym(1): its spec comes from there. */
	seed_env_spec gym;
	bool is_gym = strncmp(cfg.env, "gym:", 4) == 0;
	rc = is_gym ? gym_spec(&cfg, &gym, &err) : 0;
	if (rc == -SEED_EOPTION)
		cli_config_error("config: %s", err.msg);
	if (rc)
		cli_die("config: %s", err.msg);
	if (SEED_CONFIG_IS_EVO(cfg.algorithm) && opt.device && strcmp(opt.device, "cpu") != 0)
		cli_usage_error("--device %s: algorithm %s runs no backward pass; its update (a few vector "
		                "operations a round) is the CPU's",
		                opt.device, seed_config_algorithm_name(cfg.algorithm));
	if (SEED_CONFIG_IS_EVO(cfg.algorithm))
		return evolve(ck, dir, metrics, is_gym ? &gym : NULL);
	rc = seed_learner_new(&L, &cfg, is_gym ? &gym : NULL, &err);
	if (rc == -SEED_EOPTION || rc == -ENOENT)
		cli_config_error("config: %s", err.msg);
	if (rc)
		cli_die("config: %s", err.msg);
	if (ck && seed_learner_restore(L, ck, &err))
		cli_die("--resume: %s", err.msg);
	if (opt.device && seed_learner_set_device(L, opt.device, &err))
		cli_die("--device: %s", err.msg);
	seed_checkpoint_free(&ck);
	if (dir && seed_learner_open_dir(L, dir, &err))
		cli_die("--dir: %s", err.msg);

	seed_metrics *mx = NULL;
	seed_tfevents *tb = NULL;
	open_outputs(dir, metrics, &mx, &tb);

	void *ctx = seed_chan_context();
	seed_chan *uch, *pch;
	/* An unroll frame of this config's env, model and unroll length, from
	 * a half of up to envs_per_actor envs or of seed-infer's default
	 * --max-envs, whichever is more: a bigger message cannot be one. */
	const seed_model *model = seed_learner_model(L);
	int64_t rows = cfg.envs_per_actor > 65536 ? cfg.envs_per_actor : 65536;
	int64_t obs_bytes = (int64_t)seed_model_obs_bytes(model);
	seed_env_spec probed; /* the env's own rows, should the model read another dtype */
	if (seed_env_probe(cfg.env, cfg.env_options, &probed, &err) == 0) {
		int64_t env_bytes = (int64_t)seed_env_spec_obs_bytes(&probed);
		obs_bytes = env_bytes > obs_bytes ? env_bytes : obs_bytes;
	}
	bool r2d2 = cfg.algorithm == SEED_CONFIG_R2D2;
	int64_t max_msg = seed_limit_unroll(rows, cfg.unroll_length + 1, obs_bytes,
	                                    seed_model_num_actions(model), seed_model_state_floats(model));
	if (r2d2) {
		/* A sequences frame of batch_size rows: an unroll frame's fields
		 * plus, per row, run, actor, key and weight (at most 24 bytes
		 * more, which seed_limit_priority's 12 per row and its slack
		 * cover); or a relayed episode frame of up to `rows` episodes. */
		int64_t seqs =
		    seed_limit_unroll(cfg.batch_size, cfg.unroll_length + 1, obs_bytes,
		                      seed_model_num_actions(model), seed_model_state_floats(model));
		seqs += seed_limit_priority(2 * (int64_t)cfg.batch_size);
		int64_t episodes = seed_limit_unroll(rows, 1, 0, 0, 0);
		max_msg = seqs > episodes ? seqs : episodes;
	}
	seed_chan_opts uo = {.bind = false, .hwm = cfg.infer_hwm, .stop = &cli_stop, .max_msg = max_msg};
	/* The params PUB queues little for a slow subscriber (one that conflates
	 * queues little itself): beyond it a publication is dropped for that
	 * subscriber, and the next one, an update later, gets through. */
	seed_chan_opts po = {.bind = true, .hwm = SEED_CHAN_CONFLATE_HWM, .stop = &cli_stop};
	cli_curve_chan(ctx, &uo, opt.unrolls, "--unrolls");
	cli_curve_chan(ctx, &po, opt.params, "--params");
	if (!ctx ||
	    seed_chan_open(&uch, ctx, r2d2 ? SEED_CHAN_DEALER : SEED_CHAN_PULL, opt.unrolls, &uo, &err))
		cli_die("%s%s", r2d2 && ctx ? "--unrolls (seed-replay's --bind, for algorithm r2d2): " : "",
		        ctx ? err.msg : "cannot create a ZeroMQ context");
	int64_t inflight = 0;
	if (r2d2) {
		seed_frame sf;
		seed_frame_init(&sf, SEED_FRAME_SAMPLE);
		seed_frame_set_int(&sf, "batch", cfg.batch_size);
		if (seed_frame_encode(&sf, &req, &err))
			cli_die("encoding a sample request: %s", err.msg);
	}
	if (seed_chan_open(&pch, ctx, SEED_CHAN_PUB, opt.params, &po, &err))
		cli_die("%s", err.msg);

	const seed_learner_status *st = seed_learner_get_status(L);
	char summary[512];
	seed_model_summary(seed_learner_model(L), summary, sizeof summary);
	bool progress = !opt.quiet && isatty(2);
	if (!opt.quiet)
		fprintf(stderr, "%s: %s on %s, %s; %s\n", cli_prog, summary, cfg.env, seed_blas_info(),
		        resume ? "resumed" : "new run");

	double t_ckpt = seed_now_s(), t_metrics = t_ckpt, t_pub = 0, t_heard = t_ckpt;
	int64_t published = -1;
	const char *why = NULL;
	char failed[sizeof err.msg + 16];
	seed_frame f = {0};
	seed_frame_decoder *dec; /* keeps its zone: decoding a frame allocates nothing */
	if (seed_frame_decoder_new(&dec))
		cli_die("out of memory");
	double t_start = seed_now_s();
	tm_mark_at = t_start;
	while (!cli_stop) {
		double now = seed_now_s();
		/* Until updates flow, republish so late subscribers get parameters. */
		if (st->policy_version != published || now - t_pub > 0.5) {
			if (st->policy_version == published)
				publish(pch);
			published = st->policy_version;
			t_pub = now;
		}
		if ((why = seed_learner_done(L)))
			break;
		if (r2d2 && inflight > 0 && now - t_heard > REQUEST_LOST_S) {
			/* Nothing from the replay for that long: a seed-replay that
			 * restarted lost the requests.  Ask again; answers to the old
			 * ones, should they come, count against the new (inflight
			 * may go below zero), so the requests in flight come back
			 * to --prefetch. */
			inflight = 0;
			t_heard = now;
		}
		if (r2d2)
			request_samples(uch, &inflight, opt.prefetch);
		seed_chan_msg m;
		double t0 = seed_now_s();
		int r = seed_chan_recv(uch, &m, 100, &err);
		double t1 = seed_now_s(), u0 = update_time();
		tm[SEED_PHASE_WAIT] += t1 - t0;
		if (r == -SEED_EEOF) {
			why = "end of the unroll stream";
			break;
		}
		int k = 0;
		if (r == 0)
			t_heard = seed_now_s();
		bool decoded = r == 0 && seed_frame_decoder_decode(dec, &f, m.data, m.len, &err) == 0;
		if (decoded && r2d2 && f.type == SEED_FRAME_ERROR) {
			/* seed-replay refused a request: one that can never be
			 * answered is a configuration error; a full queue passes. */
			const char *msg = "(no message)";
			size_t len = strlen(msg);
			seed_frame_str(&f, "message", &msg, &len);
			int64_t code = seed_frame_int(&f, "code", 0);
			if (code != -EBUSY)
				cli_die("seed-replay refused a request: %.*s", (int)len, msg);
			cli_warn("seed-replay is busy: %.*s", (int)len, msg);
			inflight--;
			continue;
		}
		if (decoded && r2d2 && f.type == SEED_FRAME_SEQUENCES)
			inflight--; /* answered: the next request goes out at the top of the loop */
		if (r == 0 && decoded)
			k = seed_learner_feed(L, &f, &err);
		/* Decoding and taking the frame in, less the updates it ran. */
		tm[SEED_PHASE_TAKE] += seed_now_s() - t1 - (update_time() - u0);
		if (r == 0 && (!decoded || k == -SEED_EFRAME)) {
			report_bad(err.msg);
		} else if (k > 0) {
			if (r2d2)
				send_priorities(uch);
			publish(pch);
		} else if (k < 0) {
			/* An update that failed (a reservation that cannot be
			 * written, the device): the report says why in the
			 * library's words. */
			snprintf(failed, sizeof failed, "update failed: %s", err.msg);
			why = failed;
			rc = 1;
			break;
		} else if (r != 0 && r != -EAGAIN && r != -EINTR) {
			cli_warn("%s", err.msg);
		}
		now = seed_now_s();
		if (cfg.metrics_interval > 0 && now - t_metrics >= cfg.metrics_interval)
			write_metrics(mx, tb, progress), t_metrics = now;
		if (dir && cfg.checkpoint_interval > 0 && now - t_ckpt >= cfg.checkpoint_interval) {
			t_ckpt = now;
			if (checkpoint(false) && cfg.checkpoint_failure == SEED_CONFIG_CKPT_STOP) {
				why = "a checkpoint could not be written (checkpoint_failure is \"stop\")";
				rc = 1;
				break;
			}
		}
	}
	seed_frame_clear(&f);
	seed_frame_decoder_free(&dec);
	if (dir && checkpoint(true))
		rc = 1;
	write_metrics(mx, tb, progress);
	if (progress)
		fputc('\n', stderr);
	if (!opt.quiet) {
		double zero[SEED_PHASE_N] = {0}, frac[SEED_PHASE_N];
		char split[256];
		double dt = time_split(zero, t_start, seed_now_s(), frac);
		seed_timing_format(frac, LEARN_PHASES, split, sizeof split);
		fprintf(stderr, "%s: time: %s (of %.1f s)\n", cli_prog, split, dt);
	}
	if (!opt.quiet || rc) {
		char line[4400];
		seed_learner_summary(L, why, line, sizeof line);
		fprintf(stderr, "%s: %s\n", cli_prog, line);
	}
	cli_curve_report((seed_chan *[]){uch, pch}, 2, opt.quiet && !rc);
	seed_metrics_close(&mx);
	seed_tfevents_close(&tb);
	seed_chan_close(&uch);
	seed_chan_close(&pch);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	seed_learner_free(&L);
	seed_buf_free(&out);
	seed_buf_free(&req);
	seed_config_free(&cfg);
	return rc;
}
