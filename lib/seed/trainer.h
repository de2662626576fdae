/* seed/trainer.h: one interface over seed-learn's two trainers, and the one
 * run loop that drives either.
 *
 * A trainer is the gradient learner (seed/learner.h: algorithms vtrace,
 * ppo, r2d2) or the evolver (seed/evolve.h: es, ga, rs), chosen by the
 * configuration's algorithm.  Both do the same things: start or restore,
 * take frames (unrolls, sampled sequences or episodes), finish updates or
 * rounds, say when they are done, publish what actors should play
 * (parameters or a generation), save checkpoints and write metrics.  The
 * functions below are those things, each passed to the trainer's own.
 *
 * seed_trainer_run is the loop of seed-learn on seed_loop (seed/loop.h):
 * a reader on the frames channel (a PULL from seed-infer, or a DEALER to
 * seed-replay through a seed_replay_client for a trainer on sampled
 * sequences), timers for republishing, metrics, checkpoints and the
 * evolver's round deadline.  It never prints: what a person should see
 * (warnings, the progress line) goes to the caller's say function.
 *
 * Threads: a trainer belongs to one thread at a time.
 */
#ifndef SEED_TRAINER_H
#define SEED_TRAINER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/config.h"
#include "seed/env.h"
#include "seed/error.h"
#include "seed/frame.h"
#include "seed/metrics.h"
#include "seed/nn.h"
#include "seed/tfevents.h"
#include "seed/timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_trainer seed_trainer;

/* A trainer for cfg (borrowed, outliving it) and environments of spec
 * (NULL: made from cfg->env once, to be asked): a learner for a gradient
 * algorithm, an evolver for es, ga or rs.  Errors: those of
 * seed_learner_new and seed_evolver_new, in their words. */
int seed_trainer_new(seed_trainer **out, const seed_config *cfg, const seed_env_spec *spec, seed_err *err);
/* Free *t (NULL is fine) and set *t to NULL. */
void seed_trainer_free(seed_trainer **t);
/* Restore from ck (a checkpoint of the same configuration), before any
 * frame; the restore of the learner or the evolver. */
int seed_trainer_restore(seed_trainer *t, const seed_checkpoint *ck, seed_err *err);
/* Compute on device (cpu, cuda, cuda:N).  The evolver's update is a few
 * vector operations a round: it refuses any device but the CPU, -EINVAL. */
int seed_trainer_set_device(seed_trainer *t, const char *device, seed_err *err);
/* Use run directory dir (created with its parents) for checkpoints. */
int seed_trainer_open_dir(seed_trainer *t, const char *dir, seed_err *err);

/* Open its metrics outputs: the metrics lines' file (metrics; NULL:
 * DIR/metrics.jsonl with a run directory dir, else none; "-": standard
 * output) and, with dir, a TensorBoard event file there (a new one per
 * process: TensorBoard reads them all as one run).  seed_trainer_run
 * writes to them; seed_trainer_free closes them.  Errors: the file's, naming
 * it. */
int seed_trainer_open_metrics(seed_trainer *t, const char *dir, const char *metrics, seed_err *err);

/* Whether it trains on sequences sampled from seed-replay (r2d2): then its
 * frames channel is a DEALER to seed-replay, sample requests go out and
 * priority frames go back. */
bool seed_trainer_samples(const seed_trainer *t);
/* The model it trains (the learner's, or the evolver's centre). */
seed_model *seed_trainer_model(seed_trainer *t);
/* The biggest frame it can be sent on its frames channel (a bound for
 * seed_chan_opts.max_msg), for environments of spec: an unroll frame of
 * this configuration from a half of up to envs_per_actor envs or of
 * seed-infer's default --max-envs (65536), whichever is more; a sequences
 * frame of batch_size rows or a relayed episode frame (r2d2); an episode
 * frame of as many episodes, each with its generation and member (the
 * evolver). */
int64_t seed_trainer_max_frame(seed_trainer *t, const seed_env_spec *spec);

/* Take one decoded frame.  Returns the updates or rounds it finished
 * (>= 0), -SEED_EFRAME for a frame it cannot take (nothing of it was
 * taken; err says why), or another negative code when training cannot go
 * on (err says why, in the trainer's words). */
int seed_trainer_feed(seed_trainer *t, const seed_frame *f, seed_err *err);
/* Let time pass: the evolver finishes a round at its deadline.  Returns
 * the rounds finished (0 or 1; always 0 for the learner) or a negative
 * code with err. */
int seed_trainer_tick(seed_trainer *t, seed_err *err);
/* Seconds until seed_trainer_tick has work (the evolver's deadline);
 * INFINITY when never. */
double seed_trainer_tick_in(const seed_trainer *t);
/* Why training is over by the configuration's rules, or NULL. */
const char *seed_trainer_done(const seed_trainer *t);

/* What actors play, as a frame into out (replacing what it held): the
 * learner's parameters with their version, the evolver's generation. */
int seed_trainer_publish_frame(seed_trainer *t, seed_buf *out, seed_err *err);
/* The number of what seed_trainer_publish_frame encodes now: the policy
 * version, or the generation; it changes when there is something new. */
int64_t seed_trainer_published(const seed_trainer *t);
/* r2d2: the last update's priorities as a priority frame. */
int seed_trainer_priority_frame(seed_trainer *t, seed_buf *out, seed_err *err);

/* Save a checkpoint (last: the run's final one, seed_learner_save). */
int seed_trainer_save(seed_trainer *t, bool last, seed_err *err);
/* A metrics line as a new JSON object (NULL when none is due: the
 * learner's interval is empty). */
json_t *seed_trainer_metrics(seed_trainer *t);
/* The progress line for a person, from the metrics line just made. */
void seed_trainer_progress(const seed_trainer *t, const json_t *metrics, char *buf, size_t n);
/* The one-line account of the run (why NULL: stopped by a signal). */
void seed_trainer_summary(const seed_trainer *t, const char *why, char *buf, size_t n);
/* The line that says what is trained, for the start of a run: the model,
 * the environment and the algorithm's own figures. */
void seed_trainer_describe(seed_trainer *t, char *buf, size_t n);

/* What seed_trainer_run tells its caller. */
typedef enum seed_trainer_say {
	SEED_TRAINER_WARN,     /* a warning: one line */
	SEED_TRAINER_PROGRESS, /* the progress line (with every metrics line) */
} seed_trainer_say;

typedef struct seed_trainer_run_opts {
	/* The channels (opened by the caller, kept by it): where frames come
	 * from (PULL, a file, or for seed_trainer_samples a DEALER to
	 * seed-replay) and where parameters or generations go (PUB). */
	seed_chan *frames, *params;
	int prefetch; /* sample requests in flight (seed_trainer_samples) */
	/* Save checkpoints (into the run directory of seed_trainer_open_dir)
	 * every checkpoint_interval and at the end. */
	bool checkpoints;
	volatile sig_atomic_t *stop; /* set by a signal: stop, saving */
	void (*say)(void *arg, seed_trainer_say kind, const char *line);
	void *say_arg;
} seed_trainer_run_opts;

/* How a run ended. */
typedef struct seed_trainer_run_result {
	/* Why it ended ("frame budget reached", "update failed: ...", ...);
	 * empty when a signal stopped it. */
	char why[1200];
	bool ran; /* the loop ran (false: it could not start, err says why; nothing was saved) */
	int64_t bad_frames, checkpoint_failures, priority_drops;
	double seconds;             /* of the loop */
	double phase[SEED_PHASE_N]; /* seconds per phase over the run */
	uint32_t phases;            /* which phases the trainer has */
} seed_trainer_run_result;

/* Run t (its run directory, if any, already open: seed_trainer_open_dir)
 * until it is done, the frame stream ends, *stop, or an error that
 * training cannot go on from: publish at once and after every update or
 * round (again every half second, or second, while nothing new comes, for
 * late subscribers), feed every frame, write a metrics line every
 * metrics_interval (the evolver: every round) and save every
 * checkpoint_interval, then the final checkpoint and metrics line.  Bad
 * frames are dropped, counted and said (the first ten, then every
 * thousandth).  Returns 0, or a negative code with err (a checkpoint that
 * failed under checkpoint_failure "stop", an update that failed, a
 * refused sample request, a final checkpoint that failed); res says how
 * it ended either way. */
int seed_trainer_run(seed_trainer *t, const seed_trainer_run_opts *o, seed_trainer_run_result *res,
                     seed_err *err);

/* Where a run's time went, into buf (n bytes, always terminated): its
 * phases' fractions of the loop's seconds as seed_timing_format writes
 * them, then " (of S s)": "wait 0.12 take 0.03 ... (of 61.2 s)". */
void seed_trainer_run_times(const seed_trainer_run_result *res, char *buf, size_t n);

/* The options of a training program that set configuration values, each
 * applied only when given (its _seen set): seed-learn's --frames, --seed,
 * --lr, --batch-size, --target and --checkpoint-interval. */
typedef struct seed_trainer_overrides {
	int64_t frames, batch_size;
	uint64_t seed;
	double lr, target, checkpoint_interval;
	bool frames_seen, seed_seen, lr_seen, batch_size_seen, target_seen, checkpoint_interval_seen;
} seed_trainer_overrides;

/* The assignments for seed_config_resolve: sets[0..nsets) (--set's, in
 * their order), then "KEY=VALUE" for each value o gives, in the order
 * above (total_frames, seed, optimizer.lr, batch_size, target_return,
 * checkpoint_interval), so that such an option wins over a --set of its
 * key.  Numbers are written so that they read back as given (the
 * learning rate to 9 significant digits).  *n is the count; the array and
 * the strings it makes are one allocation: free() it. */
const char **seed_trainer_sets(const seed_trainer_overrides *o, const char *const *sets, int nsets, int *n);

#ifdef __cplusplus
}
#endif
#endif
