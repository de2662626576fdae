/* seed/unroll.h: unrolls, the fixed-length trajectories the inference server
 * assembles per environment and a learner trains on.
 *
 * An unroll of B environments (rows) holds L = T + overlap consecutive steps
 * of each.  Step t of a row holds obs_t; the reward and end flags of the
 * transition that led to obs_t; the action taken at obs_t with its behaviour
 * logits and policy version; and, when that transition was a truncation, the
 * behaviour value of the truncated episode's real last observation
 * (final_value, 0 elsewhere).  Consecutive unrolls of a row share `overlap`
 * steps: with 1 (SEED RL's layout) every transition is in exactly one
 * unroll; more steps give a learner a burn-in prefix.
 *
 * The fields are those of seed_frame_unroll_fields (<seed/frame.h>), the one
 * table the frame schema checks, stored batch-major as in the unroll frame
 * ((B, L, ...) each), so that the frame is a view of the buffers, no copy.
 * The action space is fixed at creation: discrete (the layout's box false),
 * an action is one i32 and its logits A floats; a Box of A reals (box true,
 * seed_frame_unroll_box_fields), an action is A floats, the policy's raw
 * sample, and its behaviour parameters 2A floats, the Gaussian's A means
 * then A log standard deviations.
 * Optionally each row also keeps S floats of recurrent state: the state in
 * which step 0's action was chosen (the frame's optional `state` field),
 * and with it the action taken before step 0 (`prev_action`), the one input
 * of a recurrent agent (seed_model(3), "prev_action") that the steps of the
 * unroll do not hold (at step t >= 1 it is action t - 1).
 *
 * seed_unroll_transitions is the one place that turns steps into the
 * rewards and discounts of transitions (termination, truncation, neither).
 *
 * Threads: a seed_unroll belongs to one thread; nothing is global.
 */
#ifndef SEED_UNROLL_H
#define SEED_UNROLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/frame.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_unroll_layout {
	int T;           /* transitions per unroll, >= 1 */
	int overlap;     /* steps shared by consecutive unrolls, in [1, T] */
	int rows;        /* B, >= 1 */
	int num_actions; /* A, >= 1 */
	seed_dtype obs_dtype;
	int obs_rank; /* of one observation, in [0, SEED_TENSOR_MAX_RANK - 2] */
	int64_t obs_shape[SEED_TENSOR_MAX_RANK];
	int state_size; /* S floats of state per row at step 0; 0: none */
	bool box;       /* actions: A reals (a Box); false: one of A (discrete) */
	/* The emulator frames one step is (the step frames' frame_skip,
	 * seed-frames(7)); 0 means 1.  Frames of a skip above 1 say it. */
	int frame_skip;
} seed_unroll_layout;

typedef struct seed_unroll {
	seed_unroll_layout layout;
	int steps;                              /* L = T + overlap */
	int pos;                                /* steps recorded so far, in [0, L] */
	size_t obs_bytes;                       /* bytes of one observation */
	size_t elem_bytes[SEED_UNROLL_NFIELDS]; /* bytes of one (row, step) of each field */
	void *field[SEED_UNROLL_NFIELDS];       /* (B, L, ...) each, see seed_frame_unroll_fields */
	float *state;                           /* (B, S): the state before step 0 */
	float *next_state; /* (B, S): the state before the step that opens the next unroll */
	int32_t *prev_action, *next_prev_action; /* (B) each when S > 0: the action before either */
	size_t bytes;                            /* memory held, all in one allocation */
	void *mem;
} seed_unroll;

/* Bytes that seed_unroll_new allocates for layout l, header included; 0 when
 * l is invalid or its size does not fit in a size_t.  A caller bounding its
 * memory checks this before building one. */
size_t seed_unroll_bytes(const seed_unroll_layout *l);

/* Buffers for unrolls of layout l (copied), empty (pos 0).  Errors: -EINVAL
 * for an invalid layout (among them a Box layout with a state: a Box
 * unroll keeps no previous action), -E2BIG when its size overflows; err
 * says which part.  Allocation failure aborts (seed_xmalloc). */
int seed_unroll_new(seed_unroll **out, const seed_unroll_layout *l, seed_err *err);
/* Free u (NULL is fine) and set *u to NULL. */
void seed_unroll_free(seed_unroll **u);

/* Record the observation half of step pos for every row: obs (B, obs_bytes),
 * reward f32 (B), terminated and truncated u8 (B); final_value is set to 0.
 * The pointers may be unaligned (frame data).  Call before
 * seed_unroll_record_action, and only while pos < L. */
void seed_unroll_record_step(seed_unroll *u, const void *obs, const void *reward, const uint8_t *terminated,
                             const uint8_t *truncated);

/* The behaviour value of row's truncated episode's last observation, for
 * the step being recorded (between record_step and record_action). */
void seed_unroll_set_final_value(seed_unroll *u, int row, float value);

/* Record the acting half of step pos and advance pos: action i32 (B), the
 * behaviour logits f32 (B, A) (NULL: the uniform policy, logits 0), the
 * policy version, the state f32 (B, S) each row acted in (NULL: zeros) and
 * the action i32 (B) taken before this step (NULL: -1, none); state and
 * prev_action are ignored when S is 0.  Returns whether the unroll is now
 * full (pos == L): then send it (seed_unroll_frame) and call
 * seed_unroll_next. */
bool seed_unroll_record_action(seed_unroll *u, const int32_t *action, const float *logits, int32_t version,
                               const float *state, const int32_t *prev_action);

/* The same for a Box unroll (layout.box; record_action is for discrete
 * ones, this for Box ones, neither checks): action f32 (B, A), the raw
 * samples the actions were made from, before any clipping into the
 * bounds; params f32 (B, 2A), each row's A means then A log standard
 * deviations (NULL: zeros, the standard normal); the policy version. */
bool seed_unroll_record_action_box(seed_unroll *u, const float *action, const float *params, int32_t version);

/* Fill f with an unroll frame viewing u's buffers (f is initialised here;
 * it points into u and env, which must outlive its encoding): run, actor,
 * num_actions, env i32 (B) (each row's environment in the actor's vector),
 * state and prev_action when S > 0, every field of
 * seed_frame_unroll_fields (seed_frame_unroll_box_fields for a Box layout)
 * over the L steps, and frame_skip when the layout's is above 1.  Errors: -EINVAL when u is not full; -ENOSPC
 * when f has no room (cannot happen with the fields defined here). */
int seed_unroll_frame(const seed_unroll *u, seed_frame *f, uint32_t run, uint32_t actor, const int32_t *env);

/* Start the next unroll: the last `overlap` steps of the full one become its
 * first steps (pos = overlap), and the state (and previous action) recorded
 * before the first of them becomes the state at step 0. */
void seed_unroll_next(seed_unroll *u);

/* Drop the steps recorded so far (pos = 0): steps were lost, the unroll
 * cannot continue. */
void seed_unroll_restart(seed_unroll *u);

/* Rewards and discounts of the T transitions of B unrolls.  Inputs are time-major [T+1][B] (row t*B+b is
 * step t of unroll b; step n holds the reward and flags of the step that led to obs_n); outputs [T][B]:
 * transition t uses step t+1.
 * The rule: a termination ends the episode for real, discount 0 and nothing
 * to bootstrap (it wins when both flags are set); a truncation ends it at a
 * time limit: gamma * final_value (the value of the real last observation)
 * is folded into the reward and the discount is 0, because the next
 * observation already belongs to the next episode; otherwise the reward as
 * it is and discount gamma. */
void seed_unroll_transitions(int T, int B, float gamma, const float *reward, const uint8_t *terminated,
                             const uint8_t *truncated, const float *final_value, float *rewards,
                             float *discounts);

#ifdef __cplusplus
}
#endif
#endif
