/* seed/evo_assign.h: which member of a generation plays each environment's
 * episode, for the population server (seed_serve(3)).
 *
 * A generation wants episodes[m] episodes of each member m.  At an
 * environment's episode start the assigner picks the member with the fewest
 * episodes assigned so far among those with fewer assigned than wanted
 * (ties: the lowest index).  Once every member has its episodes assigned,
 * a starting environment waits: the server asks its actor to hold it at
 * the start of an episode, not stepping it, until a member wants an
 * episode (one was lost) or the next generation comes.  An episode lost
 * before its end (an end the server never saw, a forgotten environment)
 * gives its member's assignment back.
 *
 * An episode is played by one member's fixed weights.  When a new
 * generation starts, the learner has moved on: an episode of an earlier
 * generation is reported at its next step as far as it went (truncated,
 * under its generation and member, so its frames are counted) and then
 * abandoned.  The server asks the actor to restart an abandoned episode
 * (seed_evo_assign_request; the reset of an action frame, seed-frames(7));
 * an actor that does not, plays it out with the current generation's
 * member 0, unreported.  The assigner keeps two generations: the current
 * one and the previous one while episodes of it are under way ("in
 * flight": stepped before the new generation came, acted on after).  A
 * third generation arriving while the previous one still has episodes in
 * flight orphans them, abandoned alike.
 *
 * The state of each environment is a seed_evo_row kept by the caller (in
 * its session; zeroed when the environment is first seen), and each step
 * of it goes through seed_evo_assign_step with the step frame's flags and
 * the actor's episode counters (seed-frames(7): ep_return and ep_length
 * are the totals so far, this step included; at an end, the totals of the
 * episode that ended, obs already the next episode's first).  A row is:
 *   NEW      not yet seen, or no generation has come yet;
 *   PLAYING  an assigned episode under way;
 *   LOOSE    an episode that was under way when the row was first seen with
 *            a generation (it began unassigned): played by the current
 *            generation's member 0, reported at its end with member -1;
 *   CAPPED   an episode stopped at the generation's episode cap (reported
 *            then, truncated, with its return so far and length = the
 *            cap), or abandoned with its generation: played on,
 *            unreported, until it ends or the actor restarts it;
 *   WAITING  at the start of an episode with no member wanting one: held
 *            by the actor (length 0) until one is assigned at a step; a
 *            step that is not at a start (an actor that played on) makes
 *            it LOOSE, an end assigns the next episode.
 * A step whose episode length is not larger than the last one seen without
 * an end between (a restart the server asked for, or an end lost with
 * frames the server never got) abandons the episode: it is not reported,
 * and a step of length 0 (a restart's first) starts an assigned episode,
 * a later one goes on LOOSE.
 *
 * Common episodes: a generation started with a non-zero episode seed plays
 * the k-th episode of every member from the same seed (k counted per
 * member from 0), so members are ranked on the same episodes (common
 * random numbers, as EvoJAX evaluates a population).  An episode assigned
 * so is not played from the start the actor gave it: the server asks the
 * actor to restart the environment from the episode's seed
 * (seed_evo_assign_request gives SEED_RESET_RESTART and
 * seed_evo_assign_reset_seed the seed), and the episode starts at the
 * restart's first step (length 0).  An actor that steps the row instead
 * (it cannot restart it from a seed) plays the member's episode from where
 * it was: assigned, reported, not common.  An episode lost gives its index
 * back with its assignment: the member's next one takes the count then
 * (rare: an actor gone, frames lost), which may repeat an index in flight.
 *
 * Cost: O(1) a step; an assignment is O(1) amortised while the members
 * want the same number of episodes (the general bound: O(M) when one
 * member wants many more than the others).
 *
 * Threads: an assigner belongs to one thread at a time.
 */
#ifndef SEED_EVO_ASSIGN_H
#define SEED_EVO_ASSIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	SEED_EVO_ROW_NEW = 0,
	SEED_EVO_ROW_PLAYING,
	SEED_EVO_ROW_LOOSE,
	SEED_EVO_ROW_CAPPED,
	SEED_EVO_ROW_WAITING
};

/* One environment's state (zeroed: NEW). */
typedef struct seed_evo_row {
	uint64_t epoch;     /* PLAYING: the start (seed_evo_assign_start) it belongs to */
	int64_t generation; /* PLAYING, LOOSE: the generation reported at the end */
	int32_t member;     /* PLAYING: its member */
	int32_t length;     /* the episode's length at the last step seen */
	uint64_t reseed;    /* PLAYING: the seed to restart from before the episode starts; 0: none */
	uint8_t state;      /* SEED_EVO_ROW_* */
} seed_evo_row;

/* An episode to report: what an episode frame's row carries. */
typedef struct seed_evo_episode {
	int64_t generation;
	int32_t member; /* -1: LOOSE, no member was assigned */
	float ret;
	int32_t length;
	uint8_t truncated; /* the time limit or the episode cap */
} seed_evo_episode;

typedef struct seed_evo_assign seed_evo_assign;

/* An assigner without a generation.  Allocation failure aborts. */
seed_evo_assign *seed_evo_assign_new(void);
/* Free *a (NULL is fine) and set *a to NULL. */
void seed_evo_assign_free(seed_evo_assign **a);

/* The slot (0 or 1) the next seed_evo_assign_start will use, emptied now:
 * episodes of the generation it held still in flight are orphaned.  A
 * caller that builds the generation's weights per slot builds them there
 * between this and seed_evo_assign_start (and when building fails, starts
 * nothing: the current generation plays on). */
int seed_evo_assign_prepare(seed_evo_assign *a);

/* Make generation `generation` of members (M) current in the prepared slot:
 * episodes[m] wanted of member m (copied), episodes stopped after cap steps
 * (0: no cap), every member's k-th episode played from the seed
 * seed_evo_episode_seed(episode_seed, k) (0: each from where its
 * environment is, see "Common episodes").  The current generation becomes
 * the previous one, kept while episodes of it are in flight.  Returns the slot, or -EINVAL (members < 1,
 * an episodes[m] < 1, cap < 0; err says which; nothing changes). */
int seed_evo_assign_start(seed_evo_assign *a, int64_t generation, int members, const int32_t *episodes,
                          int64_t cap, uint64_t episode_seed, seed_err *err);

/* The seed of the k-th episode (k >= 0) of each member of a generation
 * whose episode seed is episode_seed (non-zero): a mix of the two, in
 * [1, 2^63) so that an action frame's i64 carries it. */
uint64_t seed_evo_episode_seed(uint64_t episode_seed, int64_t k);

/* Forget every generation (leaving population mode): rows then play
 * nothing until the next start (seed_evo_assign_play gives slot -1) and
 * their episodes under way are not reported. */
void seed_evo_assign_stop(seed_evo_assign *a);

/* One step of row r: its flags at this step and the actor's counters.
 * Reports the episode that ended (or reached the cap) into *rep and returns
 * 1, else returns 0; then assigns a member when an episode starts.  At most
 * one report a step. */
int seed_evo_assign_step(seed_evo_assign *a, seed_evo_row *r, bool terminated, bool truncated,
                         float ep_return, int32_t ep_length, seed_evo_episode *rep);

/* What the server's answer asks of row r's environment, as an action
 * frame's reset value: SEED_RESET_RESTART for an episode no generation
 * wants (LOOSE, CAPPED) and for an assigned episode to be played from its
 * seed, SEED_RESET_HOLD for a WAITING row, else (and whenever no
 * generation is current) SEED_RESET_STEP. */
int seed_evo_assign_request(const seed_evo_assign *a, const seed_evo_row *r);

/* The seed row r's environment should restart from (an action frame's
 * reset_seed), or 0: restart from where it is, or no restart. */
uint64_t seed_evo_assign_reset_seed(const seed_evo_assign *a, const seed_evo_row *r);

/* Who chooses row r's next action: *slot (0 or 1; -1: no generation) and
 * *member in it.  PLAYING rows their own; the others the current
 * generation's member 0. */
void seed_evo_assign_play(const seed_evo_assign *a, const seed_evo_row *r, int *slot, int32_t *member);

/* Row r's environment is forgotten (its half dropped by the server): its
 * episode in flight no longer holds its generation, and its member of the
 * current generation wants that episode again. */
void seed_evo_assign_forget(seed_evo_assign *a, seed_evo_row *r);

/* Introspection: whether slot holds a generation (the current one, or the
 * previous one with episodes in flight); its generation number (-1 for an
 * empty slot), members, episodes in flight and the episodes assigned so
 * far to member m (0 for an empty slot or a member out of range); the
 * current slot (-1: none). */
bool seed_evo_assign_live(const seed_evo_assign *a, int slot);
int64_t seed_evo_assign_generation(const seed_evo_assign *a, int slot);
int seed_evo_assign_members(const seed_evo_assign *a, int slot);
int64_t seed_evo_assign_in_flight(const seed_evo_assign *a, int slot);
int64_t seed_evo_assign_assigned(const seed_evo_assign *a, int slot, int m);
int seed_evo_assign_current(const seed_evo_assign *a);

#ifdef __cplusplus
}
#endif
#endif
