/* seed/evolve.h: the evolution loop of seed-learn as a library: the
 * learner's side of algorithms es, ga and rs (seed-config(5), doc/evolution.md).
 *
 * An evolver owns the model (its layout, and for ES the centre), the shared
 * noise table (seed/noise.h) and the algorithm (seed/evo.h).  It encodes
 * the round to play as a generation frame (seed-frames(7)) for the params
 * channel, takes episode frames (those with generation and member fields:
 * the population server's), reports each episode of the current round to
 * the algorithm and drops the others as stale, and finishes the round when
 * every member has its episodes or when the round has been current for
 * evolution.generation_deadline seconds (0: no deadline).  Time is the
 * caller's clock, in seconds, passed in, so that a test can drive it.
 *
 * Frames: every episode of a member counts, stale or not: the frame budget
 * (total_frames) is the emulator frames the members played, each episode's
 * length (agent steps) times its frame frame_skip (1 without it,
 * seed-frames(7)).  An episode
 * of no member (member -1: under way when the server's first generation
 * came) or in a frame without generation fields (seed-infer not in
 * population mode) is counted in ignored and otherwise dropped.
 *
 * Stopping (seed_evolver_done): the frame budget, or the target return:
 * ES when the mean return of the last finished round's members reaches
 * target_return (the members are the centre perturbed by sigma: the round's
 * mean is the centre's return, a little pessimistic); GA and RS when the
 * elite's re-evaluated mean (elite_episodes episodes) reaches it.
 *
 * Checkpoints (seed_evolver_save) hold the best network as the model's
 * parameters by name (ES: the centre; GA, RS: the elite), so that seed-eval
 * --checkpoint and seed-infer --model play it as any other; the algorithm's
 * state (seed_evo_state_tensors: "evo.*"); for GA and RS the best network's
 * genome as "best.genome" (i64 [L]), whose noise table is named by the
 * configuration the checkpoint holds (evolution.noise_seed, noise_size;
 * also in a lone file's metadata) and by the state's "evo.noise": enough
 * to rebuild the parameters from the table alone (seed_evo_member_params
 * on a one-member generation);
 * "evolver.counters" (i64 [5]: frames, episodes, stale, ignored,
 * deadlines); with "obs_norm", "evolver.obs_norm" (f64 [2D + 1]: the mean,
 * the variance, the count, exactly, for a resume).
 *
 * Box action spaces: the model needs a Gaussian policy; members act with
 * its mean plus evolution.action_noise (the generation frame carries it).
 * Observation statistics: a model with "obs_norm" is normalised by the
 * evolver's running statistics, not by its slab's (noise and updates move
 * those): each generation frame carries them (obs_mean, obs_var), the
 * population server sends back the moments of the observations it acted on
 * in its episode frames (obs_count, obs_sum, obs_sumsq), and they are
 * merged, as Gymnasium's RunningMeanStd merges a batch, when a round
 * finishes, so that every member of a round sees the same statistics.  A
 * checkpoint's obs_norm.* tensors hold them (as floats), so that seed-eval
 * plays the network as the members did.  step counts finished rounds, policy_version is the current
 * round's generation, frames and agent_steps the frames and steps played
 * (a checkpoint without agent_steps counted steps as frames: resumed, its
 * frames are agent steps, times the frame skip of the first episode frame
 * taken), wall_time the seconds of training by the caller's clock as of
 * the last call that passed it.
 *
 * Threads: an evolver belongs to one thread at a time.
 */
#ifndef SEED_EVOLVE_H
#define SEED_EVOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/buf.h"
#include "seed/checkpoint.h"
#include "seed/config.h"
#include "seed/env.h"
#include "seed/error.h"
#include "seed/evo.h"
#include "seed/frame.h"
#include "seed/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_evolver seed_evolver;

/* Where the run stands; the counters survive a save and a restore. */
typedef struct seed_evolver_status {
	int64_t rounds;         /* rounds finished (the algorithm's stats.generation) */
	int64_t generation;     /* the current round's generation */
	int phase;              /* the current round's phase (1: an elite re-evaluation) */
	int64_t frames;         /* emulator frames of every episode of a member, stale or not */
	int64_t agent_steps;    /* their agent steps (frames / frame skip) */
	bool frames_from_steps; /* restored from a checkpoint that counted agent steps as
	                           frames: frames stand at agent_steps until an episode
	                           frame says its frame skip */
	int64_t episodes;       /* those episodes */
	int64_t stale;          /* episodes of another round than the current (dropped) */
	int64_t ignored;        /* episodes without generation fields or of no member (-1) */
	int64_t deadlines;      /* rounds finished by the deadline, incomplete */
	int64_t saved_rounds;   /* rounds at the last successful save (-1: none) */
	double round_seconds;   /* the last finished round's seconds */
	/* Seconds this process spent advancing rounds (the algorithm's update)
	 * and building the best network for checkpoints. */
	double time_update;
} seed_evolver_status;

/* An evolver for cfg (borrowed; an es, ga or rs configuration) and
 * environments of spec (NULL: made from cfg->env once, to be asked): the
 * model of cfg->model initialised from cfg->seed (ES's first centre), the
 * noise table of evolution.noise_seed and noise_size, the algorithm seeded
 * by cfg->seed.  now: the caller's clock, the first round's start.
 * Errors: -EINVAL for another algorithm, a model without an actor-critic
 * head or with a core, a policy that does not suit the action space (a
 * Box space needs a Gaussian one), what seed_evo_new refuses. */
int seed_evolver_new(seed_evolver **out, const seed_config *cfg, const seed_env_spec *spec, double now,
                     seed_err *err);

/* Free *E (NULL is fine) and set *E to NULL. */
void seed_evolver_free(seed_evolver **E);

/* Restore the algorithm's state and the counters from ck (a checkpoint of
 * an evolver of the same configuration), before anything was fed; the
 * round current then is played again from its start, which is now.
 * Errors: those of seed_evo_restore, naming the tensor. */
int seed_evolver_restore(seed_evolver *E, const seed_checkpoint *ck, double now, seed_err *err);

/* Use run directory dir (copied, created with its parents) for saves. */
int seed_evolver_open_dir(seed_evolver *E, const char *dir, seed_err *err);

/* Encode the current round as a generation frame into out (replacing what
 * it held): the round, the model's description, evolution.episode_cap and
 * evolution.greedy; for a Box space evolution.action_noise; with
 * "obs_norm" the observation statistics. */
int seed_evolver_generation_frame(seed_evolver *E, seed_buf *out, seed_err *err);

/* Take an episode frame: each episode of the current round is reported to
 * the algorithm; the others are counted (stale, ignored); its observation
 * moments (rows of any round) are kept for the statistics.  Returns the
 * episodes reported, or -SEED_EFRAME (a frame of another type, an invalid
 * one, moments of another number of features: nothing was taken). */
int seed_evolver_feed(seed_evolver *E, const seed_frame *f, seed_err *err);

/* Finish the round when it is complete or past its deadline at time now,
 * and make the next one current (publish it).  Returns 1 when a round
 * finished, 0 when not, or a negative errno (the algorithm's advance). */
int seed_evolver_step(seed_evolver *E, double now, seed_err *err);

/* Seconds until the current round's deadline at time now (INFINITY
 * without one; <= 0: past). */
double seed_evolver_deadline_in(const seed_evolver *E, double now);

/* Why the run is over by cfg's rules, or NULL: "frame budget reached" or
 * "target return reached" (above). */
const char *seed_evolver_done(const seed_evolver *E);

/* The metrics line of the last finished round, as a new JSON object:
 * generation (rounds finished), phase (of that round), best, mean, median
 * (of the last evaluation round's members; null before one), elite (null
 * until one), evaluated, frames, agent_steps, episodes (totals),
 * frames_per_s and episodes_per_s (since the previous call), round_seconds,
 * stale, ignored, deadlines, time (seconds of training), algorithm.  Starts
 * a new interval for the rates.  now: the caller's clock.  NULL while the
 * frames of a checkpoint that counted agent steps are not known yet
 * (frames_from_steps). */
json_t *seed_evolver_metrics(seed_evolver *E, double now);

/* Save a checkpoint into the run directory (above).  Errors: -EINVAL
 * without one; those of building the best network and of
 * seed_checkpoint_save (the previous checkpoint then stays current). */
int seed_evolver_save(seed_evolver *E, seed_err *err);

/* Borrowed views, valid while E lives. */
const seed_evolver_status *seed_evolver_get_status(const seed_evolver *E);
const seed_evo_stats *seed_evolver_stats(const seed_evolver *E);
seed_model *seed_evolver_model(seed_evolver *E);
seed_evo *seed_evolver_evo(seed_evolver *E);
/* Seconds of training: since seed_evolver_new, plus a restored checkpoint's. */
double seed_evolver_wall_time(const seed_evolver *E, double now);

/* The one-line account of a run into buf (n bytes, always terminated):
 * "WHY: F frames, G rounds, best B, mean M, elite E, S s", and where the
 * checkpoint is.  why NULL reads "stopped by a signal". */
void seed_evolver_summary(const seed_evolver *E, const char *why, double now, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
