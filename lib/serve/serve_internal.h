/* serve_internal.h: what the service's files share; private to lib/serve.
 *
 * seed_serve (seed/serve.h) is one object spread over five files, one per
 * part of a request's path:
 *   serve.c      the object, its policy and agent, taking requests
 *                (decoding, bounds, sessions, the batch), the loop's turn
 *                and the parameters channel;
 *   serve_act.c  running a batch: the agent's forward pass (a recurrent
 *                core's inputs, each row's epsilon), the answers, and each
 *                row's step appended to its unroll;
 *   serve_out.c  what leaves besides answers: error frames, pushes on the
 *                unrolls channel (rate-limited warnings), episode and
 *                unroll frames with a Q model's first priorities;
 *   serve_pop.c  population mode: generation frames, the members'
 *                populations and noise tables, and acting with them;
 *   serve_loop.c a program's loop around the turns, with its statistics
 *                and metrics lines.
 *
 * Invariants: a session is pending exactly while one of its requests is in
 * the batch; the batch's observations, when a model is in use, all have
 * one dtype and one row size: once the agent exists every request is
 * converted to its dtype as it comes (seed_agent_convert), and before that
 * a request of another dtype first runs the batch; scratch arrays only
 * grow.  Every request taken is answered once: with an action frame by
 * seed_serve_run, or with an error frame.
 */
#ifndef SEED_SERVE_SERVE_INTERNAL_H
#define SEED_SERVE_SERVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/agent.h"
#include "seed/batcher.h"
#include "seed/buf.h"
#include "seed/checkpoint.h"
#include "seed/evo_assign.h"
#include "seed/evo_frame.h"
#include "seed/frame.h"
#include "seed/noise.h"
#include "seed/population.h"
#include "seed/rng.h"
#include "seed/serve.h"
#include "seed/sessions.h"
#include "seed/unroll.h"

struct seed_serve {
	seed_serve_opts o;
	seed_chan *actors, *unrolls, *params;
	seed_sessions *ss;
	seed_batcher *b;
	seed_frame_decoder *dec; /* of requests and params: allocates nothing */
	seed_rng rng;
	seed_dtype batch_dtype; /* of the batch's observations */
	/* the policy */
	char *json;      /* the model's description; NULL: none yet */
	uint8_t *staged; /* parameters for the next agent built */
	size_t staged_len, staged_cap;
	int64_t staged_version;
	bool have_staged, build_failed;
	seed_agent *agent;
	seed_checkpoint *ckpt; /* whose parameters the agent starts with; NULL: none */
	/* The observations the agent is (to be) built for, and the actor
	 * whose request told them: learnt from the first request (the one
	 * build on a request's path), then every policy or generation is
	 * built into an agent as it arrives.  While there is no agent (none
	 * yet, or a build failed) the latest request's observations are the
	 * ones the next parameters to arrive are built for. */
	seed_unroll_layout agent_layout;
	uint32_t layout_actor;
	bool have_layout;
	/* Each part's own state and scratch (scratch arrays grow to the
	 * largest batch and never shrink). */
	struct serve_take {          /* serve.c: a request's observations, converted */
		unsigned char *conv; /* its observations and final ones */
		size_t cap_conv;
	} take;
	struct serve_act { /* serve_act.c: one batch's forward pass */
		int32_t *actions;
		float *raw; /* a Gaussian policy's raw samples (rows, A) */
		size_t cap_raw;
		float *logits, *final_values;
		uint8_t *failed; /* (requests) */
		/* a recurrent agent's batch: the state before and after the
		 * step (rows, S), the previous rewards, actions and resets
		 * (rows), and the states and inputs of the final observations
		 * (nfinal, S) */
		float *core_in, *core_out, *core_reward, *final_in, *final_reward;
		int32_t *core_action, *final_action;
		uint8_t *core_reset;
		size_t cap_core_in, cap_core_out, cap_core_reward, cap_core_action, cap_core_reset;
		size_t cap_final_in, cap_final_reward, cap_final_action;
		float *eps; /* a Q agent's batch: each row's epsilon (rows) */
		size_t cap_eps, cap_rows, cap_logits, cap_final, cap_req;
	} act;
	struct serve_q { /* serve_out.c: a Q agent's first priorities of an
		          * unroll (B), its steps burn_in.. time-major: Q
		          * values (L', B, A), actions, rewards, ends (L', B),
		          * losses (B) */
		float *prio, *pq, *preward, *ploss;
		int32_t *paction;
		uint8_t *pdone;
		size_t cap_prio, cap_pq, cap_preward, cap_ploss, cap_paction, cap_pdone;
		int64_t prio_warns;
	} q;
	bool q_warned;
	struct serve_pop {               /* serve_pop.c: population mode (a generation frame
		                          * came): the assigner, and per slot of it the
		                          * population playing that generation, built for
		                          * the agent's model and observations, and its noise
		                          * table (shared by the slots when they name the
		                          * same one) */
		seed_evo_assign *assign; /* NULL until the first generation */
		bool active;             /* a generation is current */
		struct evo_slot {
			seed_population *pop;
			char *json;                /* the model pop was built for */
			seed_unroll_layout layout; /* ... and the observations (the agent's dtype) */
			seed_noise *noise;
			int64_t generation;
			bool greedy;         /* discrete members act greedily */
			double action_noise; /* Box members' noise about their mean */
			int64_t obs_dim;     /* the features of its statistics (0: none given) */
		} slot[2];
		/* the newest generation frame, until an agent gives its layout */
		seed_evo_gen_copy pending;
		bool have_pending, pending_greedy;
		int64_t pending_cap;
		uint64_t pending_episode_seed; /* 0: no common episodes */
		/* the (run, generation, phase) taken last: a repeat is ignored */
		int64_t last_gen[3];
		bool have_last_gen;
		int64_t gen_warns;
		/* scratch of a population batch: each row's slot and member, and
		 * the rows of one slot gathered (obs, members, actions or Box
		 * members' means, their rows) */
		int8_t *row_slot;
		int32_t *row_member, *pop_member, *pop_actions, *pop_index;
		unsigned char *pop_obs;
		float *pop_raw;
		size_t cap_row_slot, cap_row_member, cap_pop_member, cap_pop_actions, cap_pop_index,
		    cap_pop_obs, cap_pop_raw;
		/* The observation moments not yet sent (serve_send_episodes):
		 * the rows acted on by a slot whose generation gives statistics
		 * of obs_dim features (f32 rows of that many), their count and
		 * each feature's sum and sum of squares (obs_dim each). */
		int64_t obs_count, obs_dim;
		double *obs_sum, *obs_sumsq;
		size_t cap_obs_sum, cap_obs_sumsq;
	} pop;
	seed_buf out;
	seed_frame f;
	seed_step step; /* f read once, by type (seed_frame_step) */
	seed_serve_stats st;
	double last_gap_warn, last_build_warn, last_evict_warn, last_push_warn;
	int64_t evict_warns;
	int64_t push_warned; /* push_failed at the last warning of it */
	int64_t gaps_warned;
	bool build_warned;
};

/* serve.c */
/* Say msg (printf-style) through opts.warn, if there is one. */
void serve_warn(seed_serve *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether two layouts give the same agent: the same actions, and
 * observations of the same dtype and shape. */
bool serve_same_obs(const seed_unroll_layout *a, const seed_unroll_layout *b);
/* Whether h's observations fit the agent (it converts dtypes); if not,
 * err says how they differ. */
bool serve_fits(const seed_serve *s, const seed_session *h, seed_err *err);

/* serve_out.c */
/* Answer a request (to, or the peer id/idlen) with an error frame of code
 * and msg (type: the refused frame's type, or NULL), and count it. */
void serve_send_error(seed_serve *s, const seed_chan_msg *to, const void *id, size_t idlen, int code,
                      const char *msg, const char *type);
/* Seconds counted in every phase so far. */
double serve_counted(const seed_serve *s);
/* Push the episodes gathered in h as one episode frame, and forget them. */
int serve_send_episodes(seed_serve *s, seed_session *h);
/* Gather the episodes that ended at this step (step frame f) of h. */
void serve_gather_episodes(seed_serve *s, seed_session *h, const seed_step *step);
/* Push h's full unroll (after its episodes) and start its next one. */
int serve_send_unroll(seed_serve *s, seed_session *h);

/* serve_act.c */
/* Refuse request i of the batch after it was taken. */
void serve_fail(seed_serve *s, int i, int code, const seed_err *err);

/* serve_pop.c */
/* seed_sessions' dropped callback: a half is forgotten. */
void serve_session_dropped(void *ctx, seed_session *h);
/* A generation frame that cannot be played: said and counted. */
void serve_bad_generation(seed_serve *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Into population mode or out of it. */
void serve_switch_mode(seed_serve *s, bool population);
/* One step (step frame f) of h's environments in population mode. */
void serve_evo_step(seed_serve *s, seed_session *h, const seed_step *step);
/* Play the pending generation (needs the agent). */
void serve_apply_generation(seed_serve *s);
/* A generation frame from the learner. */
void serve_take_generation(seed_serve *s, const seed_frame *f);
/* Act on the batch with the population. */
void serve_act_population(seed_serve *s);

#endif
