/* learner_internal.h: what the learner's core (learner.c) and its
 * algorithms (algo_*.c) share; private to lib/learn.
 *
 * The core owns what every algorithm needs: the model and its optimizer,
 * the batch being filled (one column per field of the unroll table), the
 * transitions' rewards and discounts, a recurrent core's inputs, the
 * returns window, the versions and the run directory, checkpoints and
 * metrics.  Where the algorithm asks for them it also owns a target network
 * (saved as "target.NAME", copied every target_update_period updates) and
 * the inputs of prioritized replay (each sequence's key and importance
 * weight, and the priorities the last update gave them).
 *
 * An algorithm is one file and one row of the table in learner.c: a
 * learn_algo saying what it takes and needs, and functions that check
 * the model, allocate its own buffers (only when it is chosen) and run an
 * update.  Adding one: write algo_NAME.c with its learn_algo, add the
 * row, and the configuration's name for it.
 */
#ifndef SEED_LEARN_LEARNER_INTERNAL_H
#define SEED_LEARN_LEARNER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/learner.h"
#include "seed/optim.h"
#include "seed/reward_norm.h"
#include "seed/rng.h"
#include "seed/unroll.h"

typedef struct learn_algo learn_algo;

struct seed_learner {
	const seed_config *cfg;
	const learn_algo *algo;
	void *alg; /* the algorithm's own state and buffers */
	seed_env_spec spec;
	size_t obs_bytes;
	int A, T1, B;
	/* A Box action space (spec.action_space): a Gaussian policy of P = 2A
	 * parameters a row, A real numbers an action; else P = A logits. */
	bool box;
	int P;
	bool obs_norm; /* the model normalises observations (seed_model_obs_norm_update) */
	seed_model *model;
	seed_optim *optim;
	seed_rng rng;
	/* The batch being filled, time-major: one buffer per field of the
	 * unroll table (seed_frame_unroll_fields, or seed_frame_unroll_box_fields
	 * for a Box space: fields), col[k] of step_bytes[k] bytes per step; the
	 * typed pointers below name the same buffers. */
	const seed_unroll_field *fields;
	int fill;
	uint8_t *col[SEED_UNROLL_NFIELDS];
	size_t step_bytes[SEED_UNROLL_NFIELDS];
	uint8_t *obs;                    /* (T1, B, obs_bytes) */
	int32_t *action, *version;       /* (T1, B); action: discrete only */
	float *box_action;               /* (T1, B, A): Box only, the raw samples */
	float *reward, *final_value;     /* (T1, B) */
	uint8_t *terminated, *truncated; /* (T1, B) */
	float *blogits;                  /* (T1, B, P) */
	float *rewards_t, *discounts_t;  /* (T, B): the transitions */
	/* normalize_reward: the scaler and each unroll's environment. */
	seed_reward_norm *rnorm;
	seed_reward_norm_key *row_key; /* (B) */
	/* A recurrent core's inputs (S > 0): each unroll's state before step 0
	 * and its previous action there (from the frame; zeros and -1 when it
	 * has none), and per step the previous actions and the resets. */
	int S;
	float *state0;        /* (B, S) */
	int32_t *prev_action; /* (T1, B) */
	uint8_t *reset;       /* (T1, B) */
	/* algo->target: the target network. */
	seed_model *target;
	/* algo->sequences: the batch's keys and importance weights, and the
	 * last update's keys and the priorities the algorithm gave them. */
	int64_t *keys;      /* (B) */
	float *weights;     /* (B) */
	int64_t *last_keys; /* (B) */
	float *priorities;  /* (B) */
	int nprio;          /* priorities held: 0 before the first update, else B */
	seed_learner_status st;
	seed_learner_batch view;
	double *returns; /* ring of the last return_window returns */
	int ret_at;
	double wall0, wall_before; /* wall_before: seconds trained before a restore */
	double t_backward;         /* when the update's backward pass began (0: none yet) */
	/* Where the current metrics interval started. */
	struct {
		double t, lag_sum;
		int64_t frames, updates, lag_count;
	} mark;
	/* The frame skips of the rows in the batch, summed: T times it is the
	 * frames an update trains on. */
	int64_t fill_skip;
	/* Versions. */
	char *dir;
	int64_t reserved; /* versions up to this one are reserved in dir */
	bool restored;
	int64_t ck_version;                 /* the restored checkpoint's policy_version */
	int64_t src_reserved, dir_reserved; /* found at restore and open; -1: none */
};

/* One learning algorithm.  (Its names start learn_, not seed_: libseed
 * exports only seed_ names.) */
struct learn_algo {
	const char *name; /* as the configuration and the messages say it */
	/* What it trains on: sequences frames sampled from seed-replay (each
	 * with its key and importance weight; priorities go back), or unroll
	 * frames from seed-infer. */
	bool sequences;
	/* Whether it keeps a target network. */
	bool target;
	/* Whether its update takes its optimizer steps itself (and times its
	 * phases); else the core clips, steps and times after update(). */
	bool steps_itself;
	/* Whether the model L->model suits it (its head, its core); an error
	 * in the algorithm's own words. */
	int (*check)(const seed_learner *L, seed_err *err);
	/* Its state, allocated when it is chosen (after check), and freed. */
	void *(*alloc)(seed_learner *L);
	void (*free)(void *alg);
	/* One update on the full batch: the gradient into the model's slab
	 * (setting L->t_backward when its backward pass begins), or, with
	 * steps_itself, the whole update; statistics into L->st. */
	int (*update)(seed_learner *L, seed_err *err);
	/* Its own fields of the metrics line (may be NULL), and its progress
	 * line (NULL: the policy-gradient line). */
	void (*metrics)(const seed_learner *L, json_t *o);
	void (*progress)(const seed_learner *L, const json_t *metrics, char *buf, size_t n);
};

extern const learn_algo learn_vtrace, learn_ppo, learn_r2d2;

/* The core's helpers for the algorithms. */
/* A recurrent core's inputs over the batch's T1 steps (prev_action, reset). */
void learn_core_inputs(seed_learner *L);
/* Clip the gradient, set the learning rate of the schedule, and step,
 * unless the gradient is not finite (counted as skipped). */
void learn_optim_step(seed_learner *L);
/* Add the policy lag of the n rows of the batch from row `first`. */
void learn_count_lag(seed_learner *L, size_t first, size_t n);
/* Refuse a model without an actor-critic head, for algorithm `what`. */
int learn_need_actor_critic(const seed_learner *L, const char *what, seed_err *err);
/* The batch (batch.c): allocate its columns and view (after the model,
 * before the algorithm's alloc); check a frame whole (its rows into *Bf);
 * copy rows first, first+1, ... of a checked frame until the frame or the
 * batch is used up, returning how many. */
void learn_alloc_batch(seed_learner *L);
int learn_check_rows(const seed_learner *L, const seed_frame *f, int64_t *Bf, seed_err *err);
int learn_take_rows(seed_learner *L, const seed_frame *f, int64_t first);
/* The frame skip of a frame taken: resolves the frames of a checkpoint
 * that counted agent steps (seed_learner_status.frames_from_steps). */
void learn_know_skip(seed_learner *L, int64_t skip);
/* The learner's clock: seconds, monotonic. */
double learn_now(void);

#endif
