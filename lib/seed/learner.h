/* seed/learner.h: the learner of seed-learn as a library: V-trace
 * (algorithm "vtrace", on unroll frames), PPO (algorithm "ppo", on unroll
 * frames; see "PPO" below) or R2D2 (algorithm "r2d2", on sequences frames
 * from seed-replay; see "R2D2" below).  Each algorithm is one file of
 * lib/learn behind a table of functions; the learner allocates the chosen
 * algorithm's buffers and no other's.
 *
 * A learner owns the training copy of a model, its optimizer and the batch
 * being filled.  Unroll frames (seed-frames(7)) are copied into the batch,
 * validated first; when it holds batch_size unrolls an update runs: forward,
 * the transition rule, the V-trace actor-critic loss, backward, global-norm
 * clipping, the learning-rate schedule, and the optimizer step, skipped when
 * the gradient is not finite.  Each update advances the policy version by
 * one.  Checkpoints (seed/checkpoint.h) save and restore the model, the
 * optimizer state, the counters and the window of the last returns (so
 * that a resumed run's mean return goes on, not over from its first
 * episodes).
 *
 * Batch layout: time-major, (T+1, B) rows, so that the T*B rows of the
 * transitions are one matrix for the model, the loss reads (T, B) slices
 * of its outputs, and the bootstrap row T is the B rows after them (it
 * goes forward alone, for its values, and takes no gradient).
 * Row t of an unroll holds obs_t, the reward and end flags of the step that
 * led to obs_t, and the action taken at obs_t; transition t uses step t+1.
 *
 * Versions: a version must never name two parameter sets, even across a
 * kill -9 and a resume.  With a run directory, the learner reserves
 * versions ahead in DIR/versions.json (seed_checkpoint_reserve), durably,
 * before an update hands out a version past the reservation, in blocks of
 * SEED_LEARNER_VERSION_BLOCK; a restored learner starts past any
 * reservation beyond its checkpoint.  The last save of a run gives the
 * unused reservation back, so a resume after a clean stop continues with
 * consecutive versions.
 *
 * Memory: everything an update touches is allocated by seed_learner_new;
 * adding unrolls and updating allocate nothing (an update that crosses a
 * reservation block writes one small file), except that an r2d2 update
 * makes the one temporary allocation of seed_r2d2_loss.
 *
 * R2D2 (cfg->algorithm SEED_CONFIG_R2D2): the model must have a dueling
 * head.  A target network of the same description starts as a copy of the
 * online one and is copied again after every cfg->r2d2.target_update_period
 * updates (after updates N, 2N, ...).  The batch holds batch_size sequences
 * of T+1 steps (sequences frames: the unroll's per-step fields, plus each
 * row's key and importance weight, and with a core its state and previous
 * action).  An update: with a core, both networks run forward from the
 * stored state (zeros without one) through the first burn_in steps, without
 * gradient, to their states at step burn_in (a feed-forward model skips
 * them); then both run over steps burn_in .. T (the online one with
 * gradient), seed_r2d2_loss (seed/r2d2.h) on that slice with cfg's
 * discount, r2d2.n_step, r2d2.value_rescale_eps and r2d2.eta gives each
 * sequence's loss_b and priority; the loss is mean_b(weight_b * loss_b),
 * so the gradient into sequence b's Q values is weight_b / B times that of
 * loss_b; then backward, clipping and the optimizer step as for V-trace.
 * done[t] = terminated[t] | truncated[t]; the core's inputs per step (the
 * reward that came with the observation, the previous action, a reset where
 * an episode begins) are those of the V-trace path.  After the update the
 * learner holds the batch's keys and new priorities
 * (seed_learner_priority_frame).  Checkpoints also hold the target network
 * as "target.NAME".
 *
 * PPO (cfg->algorithm SEED_CONFIG_PPO): unroll frames as for V-trace, an
 * actor-critic model without a core.  An update runs forward over the
 * batch's (T+1)*B rows for the values, seed_ppo_gae (seed/ppo.h) over the
 * transitions of the transition rule (as V-trace's, truncation folded into
 * the reward), then cfg->ppo.epochs passes over the T*B transitions, each
 * in a new order drawn from the learner's generator (saved in checkpoints),
 * cut into cfg->ppo.minibatches minibatches; each minibatch goes forward,
 * through seed_ppo_loss against the behaviour logits of the frames and the
 * values from the start of the update, backward, and takes one optimizer
 * step with clipping as above (a non-finite gradient skips that step and
 * counts it in skipped).  The update is still one update and one version:
 * the parameters are published after it, so that actors never play
 * parameters halfway through an epoch; frames count T * B.
 *
 * Threads: a learner belongs to one thread at a time.
 */
#ifndef SEED_LEARNER_H
#define SEED_LEARNER_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/checkpoint.h"
#include "seed/buf.h"
#include "seed/config.h"
#include "seed/env.h"
#include "seed/error.h"
#include "seed/frame.h"
#include "seed/loss.h"
#include "seed/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Versions reserved at a time in a run directory. */
#define SEED_LEARNER_VERSION_BLOCK 4096

typedef struct seed_learner seed_learner;

/* Where training stands.  Counters survive a save and a restore. */
typedef struct seed_learner_status {
	int64_t updates;     /* updates run (skipped ones included) */
	int64_t optim_steps; /* optimizer steps taken (ppo: up to epochs * minibatches an update) */
	/* Agent steps trained on: T * B per update (r2d2: replayed steps);
	 * and emulator frames, the papers' count: each row's T steps times
	 * the frame skip of the frame it came in (its field frame_skip,
	 * seed-frames(7); 1 without it, where the two counts are the same).
	 * total_frames and the learning rate's schedule are in frames. */
	int64_t agent_steps, frames;
	/* Restored from a checkpoint without agent_steps, which counted agent
	 * steps as frames: frames stand at agent_steps until the first frame
	 * taken says its frame skip, then become agent_steps times it. */
	bool frames_from_steps;
	int64_t policy_version; /* the version of the current parameters */
	int64_t skipped;        /* updates skipped for a non-finite gradient */
	int64_t episodes;       /* episodes reported by episode frames */
	int nreturns;           /* returns in the window (<= return_window) */
	double mean_return;     /* mean of the window; NAN when it is empty */
	/* The last update. */
	seed_loss_stats loss;
	double grad_norm; /* before clipping; may be NAN or infinite */
	double lr;        /* the learning rate it used */
	/* Policy lag (current version minus the version that acted), summed
	 * over every transition trained on, and their count: a caller takes
	 * differences for the mean over an interval. */
	double lag_sum;
	int64_t lag_count;
	/* The last successful save: updates and frames then (-1: none yet). */
	int64_t saved_updates, saved_frames;
	/* r2d2 only: the last update's mean Q value of the actions taken over
	 * the trained steps, mean |TD error|, mean new priority (NAN before
	 * the first update; loss.total is the weighted loss, the rest of loss
	 * is zero), and the copies into the target network so far. */
	double mean_q, mean_abs_td, mean_priority;
	int64_t target_updates;
	/* The emulator frames of the finished episodes that episode frames
	 * reported (their lengths times their frame skip, summed): what the
	 * actors played, where frames counts what was trained on.  Not kept
	 * by checkpoints. */
	int64_t env_frames;
	/* Seconds the updates of this process spent in their forward passes
	 * (with the loss), backward passes, and clipping and optimizer steps
	 * (seed_timing(3)'s forward, backward, optim).  Not kept by
	 * checkpoints. */
	double time_forward, time_backward, time_optim;
} seed_learner_status;

/* The batch, time-major.  Valid until the next add or update. */
typedef struct seed_learner_batch {
	int T, B, A;
	int fill;                         /* unrolls in it so far */
	size_t obs_bytes;                 /* bytes of one observation */
	const uint8_t *obs;               /* (T+1, B, obs_bytes) */
	const int32_t *action;            /* (T+1, B); NULL for a Box space */
	const float *box_action;          /* (T+1, B, A): a Box space's raw samples; else NULL */
	const float *reward;              /* (T+1, B) */
	const uint8_t *terminated;        /* (T+1, B) */
	const uint8_t *truncated;         /* (T+1, B) */
	const float *final_value;         /* (T+1, B) */
	const int32_t *version;           /* (T+1, B) */
	const float *behaviour_logits;    /* (T+1, B, A), or (T+1, B, 2A) for a Box space */
	const float *rewards, *discounts; /* (T, B): the last update's transitions */
} seed_learner_batch;

/* A learner for cfg (borrowed: it must outlive the learner) and
 * environments of spec: a model built from cfg->model and initialised from
 * cfg->seed, its optimizer, and a batch of cfg->batch_size unrolls of
 * cfg->unroll_length steps.  spec NULL: the spec of the environment that
 * cfg names (cfg->env with cfg->env_options, made once to be asked).
 * Errors: the environment, the model description or the optimizer
 * configuration is refused (the message says why). */
int seed_learner_new(seed_learner **out, const seed_config *cfg, const seed_env_spec *spec, seed_err *err);

/* Free L (NULL is fine) and set *L to NULL.  Reservations stay as they
 * are: only seed_learner_save(L, true, ...) gives them back. */
void seed_learner_free(seed_learner **L);
/* Run the learner's models (the online one, and a target network) on
 * device: "cpu", "cuda" or "cuda:N" (seed_model_set_device).  Errors: those
 * of seed_model_set_device; the models stay where they were. */
int seed_learner_set_device(seed_learner *L, const char *device, seed_err *err);

/* Restore the parameters, the optimizer state, the counters and the
 * return window ("learner.returns", when ck has it: its last return_window
 * returns) from ck (borrowed), before the first update.  A reservation of versions past
 * ck's policy_version in the directory ck was loaded from moves the
 * version past it.  Errors: a tensor missing or of another shape (-ENOENT,
 * -EINVAL, naming the file and the tensor); L is then partly restored. */
int seed_learner_restore(seed_learner *L, const seed_checkpoint *ck, seed_err *err);

/* Use run directory dir (copied) for saves and version reservations,
 * before the first update: create it and its parents, move the version
 * past any reservation there beyond what was restored, and reserve the
 * current version.  Errors name the path that failed. */
int seed_learner_open_dir(seed_learner *L, const char *dir, seed_err *err);

/* Copy unrolls first, first+1, ... of unroll frame f into the batch until
 * the frame or the batch is used up; return how many were taken (0 when
 * the batch is already full: update first).  The whole frame is checked
 * before anything is copied, so a bad frame changes nothing:
 * -SEED_EFRAME with a message naming the field, for a frame that is not a
 * valid unroll frame, steps other than unroll_length+1, observations of
 * another dtype or shape than spec's, num_actions other than spec's, an
 * action outside [0, num_actions); -EINVAL for first outside [0, B_f].
 * r2d2: the same for sequences frames (their keys and weights with them),
 * also refusing a weight that is negative or not finite, and unroll frames
 * (a V-trace learner refuses sequences frames). */
int seed_learner_add(seed_learner *L, const seed_frame *f, int first, seed_err *err);

/* Take the returns of episode frame f into the window of the last
 * return_window returns.  -SEED_EFRAME for a frame that is not a valid
 * episode frame. */
int seed_learner_add_episodes(seed_learner *L, const seed_frame *f, seed_err *err);

/* Take a decoded frame: an unroll frame's unrolls (r2d2: a sequences
 * frame's sequences) go into the batch with seed_learner_add, running seed_learner_update each time it fills;
 * an episode frame goes to seed_learner_add_episodes.  Returns the number of updates run (publish the newest
 * version after it).  Errors: -SEED_EFRAME for a frame of another type or a bad frame, which changed nothing;
 * those of seed_learner_update, after the updates counted so far. */
int seed_learner_feed(seed_learner *L, const seed_frame *f, seed_err *err);

/* Why training is over by cfg's rules, or NULL: "frame budget reached"
 * (total_frames consumed) or "target return reached" (the window of
 * return_window returns is full and its mean reaches target_return). */
const char *seed_learner_done(const seed_learner *L);

/* Whether the batch holds batch_size unrolls. */
bool seed_learner_full(const seed_learner *L);

/* Run one update on the full batch (see above), empty the batch and
 * advance the version.  A non-finite gradient norm skips the optimizer
 * step and counts it in skipped; the frames still count.  Errors: -EINVAL
 * when the batch is not full, a reservation that cannot be written (the
 * message names the file): then nothing changed, the batch is still
 * full. */
int seed_learner_update(seed_learner *L, seed_err *err);

/* Save a checkpoint into the run directory (seed_checkpoint_save): the
 * parameters by name, the optimizer slots as "optim.SLOT" (Adam:
 * optim.adam_m, optim.adam_v), the counters, the generator, cfg's whole
 * configuration.  last: the last save of this process, which also gives
 * back the versions reserved past the current one.  Errors: -EINVAL
 * without a run directory; those of seed_checkpoint_save, naming the path
 * (the previous checkpoint then stays current). */
int seed_learner_save(seed_learner *L, bool last, seed_err *err);

/* The metrics of the interval since the previous call (or since new or
 * restore), as a new JSON object for seed_metrics_write: time (seconds
 * trained), frames (emulator frames), agent_steps, updates, version, fps
 * (frames a second), updates_per_s, the last
 * update's loss, pg_loss, baseline_loss, entropy_loss, entropy, mean_rho,
 * mean_value, grad_norm and lr, episodes, policy_lag (mean over the
 * interval), batch_size, unroll_length, skipped_updates, and
 * episode_return (mean of the window; null while it is empty).  Starts a
 * new interval.  NULL when no time has passed since the previous call, or
 * while the frames of a checkpoint that counted agent steps are not known
 * yet (frames_from_steps: a line then would put agent steps on the frames
 * axis). */
json_t *seed_learner_metrics(seed_learner *L);

/* Encode a params frame (seed-frames(7)) of the current parameters, their
 * version and cfg's model description into out, replacing what it held.
 * The frame's parameters are a view: encoding copies them once, into out,
 * and out's memory is reused from call to call. */
int seed_learner_params_frame(const seed_learner *L, seed_buf *out, seed_err *err);

/* r2d2: encode a priority frame (seed-frames(7)) {key i64[B], priority
 * f32[B]} of the last update's sequences into out, replacing what it held:
 * only the last update's (feed a sequences frame of batch_size rows, as
 * seed-learn requests them, to send every priority).  Errors: -EINVAL for
 * a V-trace learner or before the first update. */
int seed_learner_priority_frame(const seed_learner *L, seed_buf *out, seed_err *err);

/* r2d2: the last update's priorities (B of them, in batch order; *n = 0
 * before the first update and for V-trace) and their keys (*keys, when
 * keys is not NULL).  Valid until the next update. */
const float *seed_learner_priorities(const seed_learner *L, const int64_t **keys, int *n);

/* r2d2: the target network (NULL for V-trace). */
seed_model *seed_learner_target_model(seed_learner *L);

/* Whether L's algorithm trains on sequences frames sampled from
 * seed-replay (r2d2: a DEALER asks for them, priorities go back), not on
 * unroll frames pushed by seed-infer: its own row of the algorithms'
 * table says so. */
bool seed_learner_wants_sequences(const seed_learner *L);

/* Borrowed views, valid while L lives. */
const seed_learner_status *seed_learner_get_status(const seed_learner *L);
const seed_learner_batch *seed_learner_get_batch(const seed_learner *L);
seed_model *seed_learner_model(seed_learner *L);
/* Seconds of training: since seed_learner_new, plus the wall_time of a
 * restored checkpoint. */
double seed_learner_wall_time(const seed_learner *L);
/* The run directory, or NULL before seed_learner_open_dir. */
const char *seed_learner_dir(const seed_learner *L);

/* The one-line account of a run that a program prints when it stops, into
 * buf (n bytes, always terminated): "WHY: F frames, U updates, version V,
 * mean return R over the last N episodes, S s" ("F frames (A agent
 * steps)" where the two differ; "A agent steps (frame skip not known yet)"
 * while frames_from_steps) and then where the run is:
 * ", checkpoint in DIR" when the last checkpoint holds every update, or
 * "; NOT SAVED: DIR holds ..." when it does not (no directory: nothing).
 * why NULL reads "stopped by a signal". */
void seed_learner_summary(const seed_learner *L, const char *why, char *buf, size_t n);

/* The live progress line of a run into buf (n bytes, always terminated):
 * "F frames, X fps, U updates, return R (E episodes), entropy H, lag G",
 * the rates and the lag from metrics (an object of seed_learner_metrics). */
void seed_learner_progress(const seed_learner *L, const json_t *metrics, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
