/* run.c: seed-learn's loop, for either trainer (seed/trainer.h), on
 * seed_loop.
 *
 * One reader, on the frames channel: each frame is decoded (the decoder
 * keeps its zone: decoding allocates nothing), answered through the replay
 * client for a trainer on sampled sequences, and fed; an update or a round
 * that finishes is published at once (with its priorities for r2d2), and
 * for the evolver writes its metrics line.  Timers: republication (a late
 * subscriber gets what is current within the trainer's republish_s: a
 * one-shot timer, re-armed at each publication, so nothing wakes the loop
 * while updates go out more often than that),
 * metrics every metrics_interval (the learner), checkpoints every
 * checkpoint_interval, and the evolver's round deadline.  Each turn of the
 * loop first asks whether the trainer is done and keeps the sample
 * requests in flight.
 *
 * Where the time goes: the time between handlers is the wait phase (each
 * handler adds the wait since the last one returned, as it begins, so that
 * a metrics line written by a handler has all of it); decoding and feeding is take, less
 * the updates' own phases, which the trainer times (forward, backward and
 * optim); publishing and priorities are publish; checkpoints and metrics
 * lines are checkpoint.
 */
#include "trainer_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/loop.h"
#include "seed/replay_client.h"

typedef struct run {
	seed_trainer *t;
	const trainer_ops *ops;
	const seed_config *cfg;
	const seed_trainer_run_opts *o;
	seed_trainer_run_result *res;
	seed_loop *loop;
	seed_replay_client *client;
	seed_frame_decoder *dec;
	seed_frame f;
	seed_buf out;
	double tm[SEED_PHASE_N], tm_mark[SEED_PHASE_N], tm_mark_at;
	double cursor;     /* when the last handler returned: the wait since is the wait phase's */
	int64_t published; /* what was last published (seed_trainer_published) */
	double t_pub;      /* when */
	int repub;         /* the republication timer, due republish_s after t_pub (0: none) */
	int deadline;      /* the evolver's deadline timer (0: none) */
	bool ended;        /* why the run ends is known (res->why) */
	int fail;          /* the error that ends it (0: none) */
} run;

static void say(run *R, seed_trainer_say kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(run *R, seed_trainer_say kind, const char *fmt, ...)
{
	if (!R->o->say)
		return;
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	R->o->say(R->o->say_arg, kind, line);
}

/* The run ends with this reason (the first one given stands). */
static void end(run *R, const char *why, int fail)
{
	if (!R->ended)
		snprintf(R->res->why, sizeof R->res->why, "%s", why);
	R->ended = true;
	if (!R->fail)
		R->fail = fail;
	seed_loop_stop(R->loop);
}

/* A handler begins: the time since the last one returned was waiting. */
static void enter(run *R)
{
	R->tm[SEED_PHASE_WAIT] += seed_now_s() - R->cursor;
	R->cursor = seed_now_s();
}

/* A handler returns. */
static int leave(run *R)
{
	R->cursor = seed_now_s();
	return 0;
}

/* The updates' phases so far, as the trainer timed them. */
static double update_time(run *R)
{
	double ph[SEED_PHASE_N] = {0};
	R->ops->times(R->t, ph);
	return ph[SEED_PHASE_FORWARD] + ph[SEED_PHASE_BACKWARD] + ph[SEED_PHASE_OPTIM];
}

static int on_republish(seed_loop *loop, int id, void *arg, seed_err *err);

static void publish(run *R)
{
	double t0 = seed_now_s();
	seed_err err;
	if (seed_trainer_publish_frame(R->t, &R->out, &err) == 0)
		/* PUB never blocks: a slow subscriber only misses old
		 * versions, and only the newest matters.  A failed send is
		 * retried with the next one. */
		seed_chan_send(R->o->params, NULL, 0, R->out.data, R->out.len, true);
	else
		say(R, SEED_TRAINER_WARN, "encoding what to publish: %s", err.msg);
	R->published = seed_trainer_published(R->t);
	R->t_pub = seed_now_s();
	/* Again after republish_s, unless something new goes out first (a
	 * timer's slot is reused: this allocates nothing after the first). */
	if (R->repub > 0)
		seed_loop_timer_end(R->loop, R->repub);
	R->repub = seed_loop_timer(R->loop, (int64_t)(R->ops->republish_s * 1e6), 1, on_republish, R);
	R->tm[SEED_PHASE_PUBLISH] += R->t_pub - t0;
}

/* r2d2: the last update's priorities back to seed-replay, never blocking
 * (one the socket cannot take now is dropped and counted). */
static void send_priorities(run *R)
{
	double t0 = seed_now_s();
	seed_err err;
	if (seed_trainer_priority_frame(R->t, &R->out, &err))
		say(R, SEED_TRAINER_WARN, "encoding priorities: %s", err.msg);
	else if (seed_replay_client_send(R->client, R->out.data, R->out.len) != 0 &&
	         seed_replay_client_drops(R->client) <= 10)
		say(R, SEED_TRAINER_WARN, "priority frame #%" PRId64 " not sent: seed-replay's queue is full",
		    seed_replay_client_drops(R->client));
	R->tm[SEED_PHASE_PUBLISH] += seed_now_s() - t0;
}

/* The trainer's phases into tm, and the fractions of [then, at) from the
 * totals from into frac; returns the seconds. */
static double time_split(run *R, const double *from, double then, double at, double *frac)
{
	R->ops->times(R->t, R->tm);
	double dt = at - then;
	seed_timing_fractions(from, R->tm, dt, frac);
	return dt;
}

/* A metrics line to the metrics file and, as scalars at step "frames" (the
 * one counter that every algorithm has and a resume restores), to the
 * event file; with the fractions of its interval, and the progress line. */
static void write_metrics(run *R)
{
	double wall = trainer_unix_time(), t0 = seed_now_s();
	json_t *m = seed_trainer_metrics(R->t);
	if (!m)
		return;
	/* The interval ends where this call began: the time spent here is the
	 * next interval's (its checkpoint phase, added below), so that no
	 * phase is counted in an interval it did not lie in. */
	double frac[SEED_PHASE_N];
	double dt = time_split(R, R->tm_mark, R->tm_mark_at, t0, frac);
	seed_timing_json(m, frac, R->ops->phases, dt);
	memcpy(R->tm_mark, R->tm, sizeof R->tm);
	R->tm_mark_at += dt;
	json_object_set_new(m, "bad_frames", json_integer(R->res->bad_frames));
	if (R->client)
		json_object_set_new(m, "priority_drops", json_integer(seed_replay_client_drops(R->client)));
	json_object_set_new(m, "checkpoint_failures", json_integer(R->res->checkpoint_failures));
	seed_err err;
	if (R->t->metrics && seed_metrics_write(R->t->metrics, m, &err))
		say(R, SEED_TRAINER_WARN, "metrics: %s", err.msg);
	if (R->t->events && seed_tfevents_write_json(R->t->events, m, "frames", wall, &err))
		say(R, SEED_TRAINER_WARN, "metrics: %s", err.msg);
	char line[512];
	seed_trainer_progress(R->t, m, line, sizeof line);
	say(R, SEED_TRAINER_PROGRESS, "%s, wait %.0f%%", line, 100 * frac[SEED_PHASE_WAIT]);
	json_decref(m);
	R->tm[SEED_PHASE_CHECKPOINT] += seed_now_s() - t0;
}

/* Save; on failure say so at once (the message says what the run
 * directory still holds) and count it. */
static int checkpoint(run *R, bool last)
{
	seed_err err;
	double t0 = seed_now_s();
	int rc = seed_trainer_save(R->t, last, &err);
	R->tm[SEED_PHASE_CHECKPOINT] += seed_now_s() - t0;
	if (rc == 0)
		return 0;
	R->res->checkpoint_failures++;
	say(R, SEED_TRAINER_WARN, "checkpoint failed: %s", err.msg);
	return -1;
}

static int on_deadline(seed_loop *loop, int id, void *arg, seed_err *err);

/* The evolver's round deadline, armed for the current round. */
static void arm_deadline(run *R)
{
	if (R->deadline > 0)
		seed_loop_timer_end(R->loop, R->deadline);
	R->deadline = 0;
	double in = seed_trainer_tick_in(R->t);
	if (isfinite(in))
		R->deadline =
		    seed_loop_timer(R->loop, in > 0 ? (int64_t)(in * 1e6) + 1 : 0, 1, on_deadline, R);
}

/* Updates or rounds finished: publish them, with r2d2's priorities and
 * the evolver's metrics line and next deadline. */
static void finished(run *R)
{
	if (R->client)
		send_priorities(R);
	publish(R);
	if (R->ops->rounds) {
		write_metrics(R);
		arm_deadline(R);
	}
}

/* A failed update or round: training cannot go on; the report says why in
 * the trainer's words. */
static int failed(run *R, int k, const seed_err *err)
{
	char why[sizeof R->res->why];
	if (R->ops->rounds) {
		say(R, SEED_TRAINER_WARN, "advancing the round: %s", err->msg);
		snprintf(why, sizeof why, "the next round could not be made");
	} else {
		snprintf(why, sizeof why, "update failed: %s", err->msg);
	}
	end(R, why, k);
	return 0;
}

/* Count a dropped frame and say why: the first few, then every
 * thousandth, so that a misconfigured peer cannot drown the log. */
static void bad_frame(run *R, const char *msg)
{
	int64_t n = ++R->res->bad_frames;
	if (n <= 10 || n % 1000 == 0)
		say(R, SEED_TRAINER_WARN, "dropped bad frame #%" PRId64 ": %s", n, msg);
}

/* One frame from the frames channel. */
static int frame_in(run *R, seed_chan *c)
{
	double t1 = seed_now_s(), u0 = update_time(R);
	seed_chan_msg m;
	seed_err err;
	int r = seed_chan_recv(c, &m, 0, &err);
	if (r == -SEED_EEOF) {
		end(R, R->ops->rounds ? "end of the episode stream" : "end of the unroll stream", 0);
		return 0;
	}
	if (r == -EAGAIN || r == -EINTR)
		return 0;
	if (r) {
		say(R, SEED_TRAINER_WARN, "%s", err.msg);
		return 0;
	}
	if (R->client)
		seed_replay_client_heard(R->client, t1);
	int k = seed_frame_decoder_decode(R->dec, &R->f, m.data, m.len, &err);
	if (k == 0 && R->client) {
		int a = seed_replay_client_answer(R->client, &R->f, t1, &err);
		if (a < 0) { /* a request that can never be answered */
			end(R, err.msg, a);
			return 0;
		}
		if (a == SEED_REPLAY_BUSY) {
			say(R, SEED_TRAINER_WARN, "%s", err.msg);
			return 0;
		}
	}
	bool decoded = k == 0;
	if (decoded)
		k = seed_trainer_feed(R->t, &R->f, &err);
	/* Decoding and taking the frame in, less the updates it ran. */
	R->tm[SEED_PHASE_TAKE] += seed_now_s() - t1 - (update_time(R) - u0);
	if (!decoded || k == -SEED_EFRAME)
		bad_frame(R, err.msg);
	else if (k < 0)
		return failed(R, k, &err);
	else if (k > 0)
		finished(R);
	return 0;
}

/* Publish again what is current: nothing new went out for republish_s
 * (the timer fired, and is no longer pending). */
static int republish(run *R)
{
	R->repub = 0;
	publish(R);
	return 0;
}

static int metrics_due(run *R)
{
	write_metrics(R);
	return 0;
}

static int checkpoint_due(run *R)
{
	if (checkpoint(R, false) && R->cfg->checkpoint_failure == SEED_CONFIG_CKPT_STOP)
		end(R, "a checkpoint could not be written (checkpoint_failure is \"stop\")", -EIO);
	return 0;
}

static int deadline_due(run *R)
{
	R->deadline = 0;
	seed_err err;
	int k = seed_trainer_tick(R->t, &err);
	if (k < 0)
		return failed(R, k, &err);
	if (k > 0)
		finished(R);
	else
		arm_deadline(R);
	return 0;
}

/* The handlers: each is its function between enter and leave. */
static int on_frame(seed_loop *loop, seed_chan *c, void *arg, seed_err *err)
{
	enter(arg);
	frame_in(arg, c);
	return leave(arg);
}

static int on_republish(seed_loop *loop, int id, void *arg, seed_err *err)
{
	enter(arg);
	republish(arg);
	return leave(arg);
}

static int on_metrics(seed_loop *loop, int id, void *arg, seed_err *err)
{
	enter(arg);
	metrics_due(arg);
	return leave(arg);
}

static int on_checkpoint(seed_loop *loop, int id, void *arg, seed_err *err)
{
	enter(arg);
	checkpoint_due(arg);
	return leave(arg);
}

static int on_deadline(seed_loop *loop, int id, void *arg, seed_err *err)
{
	enter(arg);
	deadline_due(arg);
	return leave(arg);
}

/* The loop's readers and timers (republication's is armed by publish). */
static int arm(run *R, seed_err *err)
{
	const seed_config *c = R->cfg;
	int rc = seed_loop_reader(R->loop, R->o->frames, on_frame, R, err);
	if (rc)
		return rc;
	if (!R->ops->rounds && c->metrics_interval > 0)
		seed_loop_timer(R->loop, (int64_t)(c->metrics_interval * 1e6), 0, on_metrics, R);
	if (R->o->checkpoints && c->checkpoint_interval > 0)
		seed_loop_timer(R->loop, (int64_t)(c->checkpoint_interval * 1e6), 0, on_checkpoint, R);
	arm_deadline(R);
	return 0;
}

/* Turns until the run ends: each asks whether the trainer is done, keeps
 * the sample requests in flight, and waits at most 100 ms (the stop flag
 * and lost requests are looked at that often). */
static int turns(run *R, seed_err *err)
{
	while (!R->ended && !(R->o->stop && *R->o->stop)) {
		const char *why = seed_trainer_done(R->t);
		if (why) {
			end(R, why, 0);
			break;
		}
		if (R->client)
			seed_replay_client_request(R->client, seed_now_s());
		int rc = seed_loop_run_once(R->loop, 100000, err);
		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	return 0;
}

/* Free what run() made. */
static void release(run *R)
{
	seed_frame_clear(&R->f);
	seed_frame_decoder_free(&R->dec);
	seed_replay_client_free(&R->client);
	seed_loop_free(&R->loop);
	seed_buf_free(&R->out);
}

int seed_trainer_run(seed_trainer *t, const seed_trainer_run_opts *o, seed_trainer_run_result *res,
                     seed_err *err)
{
	memset(res, 0, sizeof *res);
	run R = {.t = t, .ops = t->ops, .cfg = t->cfg, .o = o, .res = res, .published = -1};
	int rc = 0;
	seed_loop_new(&R.loop, o->stop);
	if (seed_frame_decoder_new(&R.dec))
		rc = seed_err_set(err, -ENOMEM, "trainer: no memory for a frame decoder");
	if (rc == 0 && seed_trainer_samples(t))
		rc = seed_replay_client_new(&R.client, o->frames, t->cfg->batch_size, o->prefetch,
		                            SEED_REPLAY_CLIENT_LOST_S, err);
	if (rc == 0)
		rc = arm(&R, err);
	if (rc) { /* it could not start: nothing to save */
		release(&R);
		return rc;
	}
	res->ran = true;
	double t_start = seed_now_s();
	R.tm_mark_at = R.cursor = t_start;
	publish(&R);
	leave(&R);
	rc = turns(&R, err);
	enter(&R);
	if (rc == 0 && R.fail)
		rc = seed_err_set(err, R.fail, "%s", res->why);
	if (o->checkpoints && checkpoint(&R, true) && rc == 0)
		rc = seed_err_set(err, -EIO, "the final checkpoint could not be written");
	if (!R.ops->rounds)
		write_metrics(&R);
	double zero[SEED_PHASE_N] = {0}, frac[SEED_PHASE_N];
	res->seconds = time_split(&R, zero, t_start, seed_now_s(), frac);
	memcpy(res->phase, R.tm, sizeof res->phase);
	res->phases = R.ops->phases;
	res->priority_drops = R.client ? seed_replay_client_drops(R.client) : 0;
	release(&R);
	return rc;
}

void seed_trainer_run_times(const seed_trainer_run_result *res, char *buf, size_t n)
{
	double zero[SEED_PHASE_N] = {0}, frac[SEED_PHASE_N];
	char split[256];
	seed_timing_fractions(zero, res->phase, res->seconds, frac);
	seed_timing_format(frac, res->phases, split, sizeof split);
	snprintf(buf, n, "%s (of %.1f s)", split, res->seconds);
}
