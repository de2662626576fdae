/* evo_assign.c: members to environments at episode starts (seed/evo_assign.h).
 *
 * Two slots hold generations: `current`, and the other one while episodes
 * of the previous generation are in flight.  Each start gets a new epoch;
 * a row names the slot of its episode by epoch, so a slot reused by a later
 * generation never claims the rows of an earlier one.
 *
 * The choice "fewest assigned among those wanting more, ties to the lowest
 * index" is a sweep by levels: at level L, in index order, every member
 * with L assigned that wants more than L gets one; then L + 1.  Within a
 * level every member left of the cursor has more than L assigned or wants
 * no more, so the first eligible member right of it is the fewest-assigned
 * one of lowest index.  Once all have their episodes (total_assigned ==
 * total_wanted) a starting row waits.  An episode lost before its end
 * gives its member's assignment back (lose): the sweep goes back to its
 * level and to the first index, which keeps the invariant.  Invariants:
 * total_assigned is the sum of assigned[]; in_flight counts the PLAYING
 * rows of the slot's epoch not yet ended, capped, lost or forgotten.
 */
#include "seed/evo_assign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"

struct slot {
	bool live;
	uint64_t epoch;
	int64_t generation, cap;
	uint64_t episode_seed; /* 0: episodes from where their environments are */
	int M;
	size_t cap_m;
	int32_t *wanted;   /* (M) */
	int64_t *assigned; /* (M) */
	int64_t total_wanted, total_assigned;
	int64_t level; /* the sweep's level and position */
	int cursor;
	int64_t in_flight;
};

struct seed_evo_assign {
	struct slot s[2];
	int current; /* -1: none */
	uint64_t epochs;
};

seed_evo_assign *seed_evo_assign_new(void)
{
	seed_evo_assign *a = seed_xcalloc(1, sizeof *a);
	a->current = -1;
	return a;
}

void seed_evo_assign_free(seed_evo_assign **ap)
{
	if (!ap || !*ap)
		return;
	for (int i = 0; i < 2; i++) {
		free((*ap)->s[i].wanted);
		free((*ap)->s[i].assigned);
	}
	free(*ap);
	*ap = NULL;
}

/* The live slot of row r's episode, or -1 (none, or orphaned). */
static int slot_of(const seed_evo_assign *a, const seed_evo_row *r)
{
	for (int i = 0; i < 2; i++)
		if (a->s[i].live && a->s[i].epoch == r->epoch)
			return i;
	return -1;
}

/* Row r's episode no longer holds its generation. */
static void release(seed_evo_assign *a, const seed_evo_row *r)
{
	if (r->state != SEED_EVO_ROW_PLAYING)
		return;
	int i = slot_of(a, r);
	if (i < 0)
		return;
	struct slot *s = &a->s[i];
	s->in_flight--;
	if (i != a->current && s->in_flight == 0)
		s->live = false;
}

int seed_evo_assign_prepare(seed_evo_assign *a)
{
	int t = a->current < 0 ? 0 : 1 - a->current;
	a->s[t].live = false; /* its rows in flight are orphans now */
	a->s[t].in_flight = 0;
	return t;
}

int seed_evo_assign_start(seed_evo_assign *a, int64_t generation, int members, const int32_t *episodes,
                          int64_t cap, uint64_t episode_seed, seed_err *err)
{
	if (members < 1)
		return seed_err_set(err, -EINVAL, "evo_assign: %d members, expected at least 1", members);
	if (cap < 0)
		return seed_err_set(err, -EINVAL, "evo_assign: episode cap %" PRId64 ", expected >= 0", cap);
	int64_t total = 0;
	for (int m = 0; m < members; m++) {
		if (episodes[m] < 1)
			return seed_err_set(err, -EINVAL,
			                    "evo_assign: member %d wants %" PRId32 " episodes, expected >= 1",
			                    m, episodes[m]);
		total += episodes[m];
	}
	int t = seed_evo_assign_prepare(a);
	struct slot *s = &a->s[t];
	/* wanted and assigned grow together: one capacity */
	size_t cap_m = s->cap_m;
	s->wanted = seed_xgrow(s->wanted, &cap_m, (size_t)members, sizeof *s->wanted);
	s->assigned = seed_xgrow(s->assigned, &s->cap_m, (size_t)members, sizeof *s->assigned);
	memcpy(s->wanted, episodes, (size_t)members * sizeof *s->wanted);
	memset(s->assigned, 0, (size_t)members * sizeof *s->assigned);
	s->M = members;
	s->generation = generation;
	s->cap = cap;
	s->episode_seed = episode_seed;
	s->total_wanted = total;
	s->total_assigned = 0;
	s->level = 0;
	s->cursor = 0;
	s->in_flight = 0;
	s->epoch = ++a->epochs;
	s->live = true;
	if (a->current >= 0 && a->s[a->current].in_flight == 0)
		a->s[a->current].live = false;
	a->current = t;
	return t;
}

void seed_evo_assign_stop(seed_evo_assign *a)
{
	for (int i = 0; i < 2; i++) {
		a->s[i].live = false;
		a->s[i].in_flight = 0;
	}
	a->current = -1;
}

/* The member the next episode of slot s goes to (the sweep above), or -1
 * when every member has its episodes assigned. */
static int next_member(struct slot *s)
{
	if (s->total_assigned >= s->total_wanted)
		return -1;
	for (;;) {
		for (; s->cursor < s->M; s->cursor++) {
			int m = s->cursor;
			if (s->assigned[m] == s->level && s->wanted[m] > s->level) {
				s->cursor++;
				return m;
			}
		}
		s->level++;
		s->cursor = 0;
	}
}

/* An episode of row r starts: a member of the current generation, or
 * none wanted: the row waits. */
static void assign(seed_evo_assign *a, seed_evo_row *r)
{
	struct slot *s = &a->s[a->current];
	int m = next_member(s);
	r->generation = s->generation;
	r->reseed = 0;
	if (m < 0) {
		r->state = SEED_EVO_ROW_WAITING;
		r->member = -1;
		return;
	}
	r->reseed = s->episode_seed ? seed_evo_episode_seed(s->episode_seed, s->assigned[m]) : 0;
	s->assigned[m]++;
	s->total_assigned++;
	s->in_flight++;
	r->state = SEED_EVO_ROW_PLAYING;
	r->epoch = s->epoch;
	r->member = m;
}

uint64_t seed_evo_episode_seed(uint64_t episode_seed, int64_t k)
{
	/* splitmix64's finaliser over the pair */
	uint64_t z = episode_seed + 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	z &= INT64_MAX;
	return z ? z : 1;
}

/* Row r's episode is lost before its end (an end that never came, a
 * forgotten environment): its member of the current generation wants it
 * again. */
static void lose(seed_evo_assign *a, const seed_evo_row *r)
{
	int i = r->state == SEED_EVO_ROW_PLAYING ? slot_of(a, r) : -1;
	if (i >= 0 && i == a->current) {
		struct slot *s = &a->s[i];
		int m = r->member;
		s->assigned[m]--;
		s->total_assigned--;
		if (s->assigned[m] < s->level)
			s->level = s->assigned[m];
		s->cursor = 0;
	}
	release(a, r);
}

static void go_loose(const seed_evo_assign *a, seed_evo_row *r)
{
	r->state = SEED_EVO_ROW_LOOSE;
	r->generation = a->s[a->current].generation;
	r->member = -1;
}

int seed_evo_assign_step(seed_evo_assign *a, seed_evo_row *r, bool terminated, bool truncated,
                         float ep_return, int32_t ep_length, seed_evo_episode *rep)
{
	bool ended = terminated || truncated;
	if (a->current < 0) {
		r->state = SEED_EVO_ROW_NEW;
		r->length = ended ? 0 : ep_length;
		return 0;
	}
	int out = 0;
	if (ended) {
		if (r->state == SEED_EVO_ROW_PLAYING && slot_of(a, r) >= 0) {
			*rep = (seed_evo_episode){r->generation, r->member, ep_return, ep_length,
			                          truncated && !terminated};
			out = 1;
			release(a, r);
		} else if (r->state == SEED_EVO_ROW_LOOSE) {
			*rep = (seed_evo_episode){r->generation, -1, ep_return, ep_length,
			                          truncated && !terminated};
			out = 1;
		}
		assign(a, r); /* obs is the next episode's first */
		r->length = 0;
		return out;
	}
	if (r->state == SEED_EVO_ROW_WAITING) {
		/* Held at a start (length 0): an episode starts if one is
		 * wanted now.  Stepped all the same: unassigned, loose. */
		if (ep_length == 0)
			assign(a, r);
		else
			go_loose(a, r);
		r->length = ep_length;
		return 0;
	}
	if (r->state == SEED_EVO_ROW_PLAYING && r->reseed) {
		/* The restart from the episode's seed was asked at the last
		 * answer: a step of length 0 is its first, and the episode
		 * starts here (or, its generation gone meanwhile, the next
		 * one is assigned).  A longer one: the actor stepped the row
		 * instead, and the member's episode goes on from there. */
		r->reseed = 0;
		if (ep_length == 0) {
			if (slot_of(a, r) != a->current) {
				release(a, r);
				assign(a, r);
			}
			r->length = 0;
			return 0;
		}
	}
	if (r->state != SEED_EVO_ROW_NEW && ep_length <= r->length) {
		/* An end went missing (frames the server never got). */
		lose(a, r);
		r->state = SEED_EVO_ROW_NEW;
	}
	if (r->state == SEED_EVO_ROW_NEW) {
		if (ep_length == 0)
			assign(a, r); /* the actor's first step: an episode's start */
		else
			go_loose(a, r);
	} else if (r->state == SEED_EVO_ROW_PLAYING) {
		int i = slot_of(a, r);
		if (i != a->current) {
			/* Of an earlier generation: the learner has moved on.
			 * Reported as far as it went (its frames count), then
			 * abandoned. */
			*rep = (seed_evo_episode){r->generation, r->member, ep_return, ep_length, 1};
			out = 1;
			release(a, r);
			r->state = SEED_EVO_ROW_CAPPED;
		} else if (a->s[i].cap > 0 && ep_length >= a->s[i].cap) {
			*rep = (seed_evo_episode){r->generation, r->member, ep_return, ep_length, 1};
			out = 1;
			release(a, r);
			r->state = SEED_EVO_ROW_CAPPED;
		}
	}
	r->length = ep_length;
	return out;
}

int seed_evo_assign_request(const seed_evo_assign *a, const seed_evo_row *r)
{
	if (a->current < 0)
		return SEED_RESET_STEP;
	switch (r->state) {
	case SEED_EVO_ROW_LOOSE:
	case SEED_EVO_ROW_CAPPED:
		return SEED_RESET_RESTART;
	case SEED_EVO_ROW_WAITING:
		return SEED_RESET_HOLD;
	case SEED_EVO_ROW_PLAYING:
		return r->reseed ? SEED_RESET_RESTART : SEED_RESET_STEP;
	default:
		return SEED_RESET_STEP;
	}
}

uint64_t seed_evo_assign_reset_seed(const seed_evo_assign *a, const seed_evo_row *r)
{
	return a->current >= 0 && r->state == SEED_EVO_ROW_PLAYING ? r->reseed : 0;
}

void seed_evo_assign_play(const seed_evo_assign *a, const seed_evo_row *r, int *slot, int32_t *member)
{
	*slot = a->current;
	*member = 0;
	if (r->state == SEED_EVO_ROW_PLAYING) {
		int i = slot_of(a, r);
		if (i >= 0) {
			*slot = i;
			*member = r->member;
		}
	}
}

void seed_evo_assign_forget(seed_evo_assign *a, seed_evo_row *r)
{
	lose(a, r);
	r->state = SEED_EVO_ROW_NEW;
}

bool seed_evo_assign_live(const seed_evo_assign *a, int slot)
{
	return (slot == 0 || slot == 1) && a->s[slot].live;
}

int64_t seed_evo_assign_generation(const seed_evo_assign *a, int slot)
{
	return seed_evo_assign_live(a, slot) ? a->s[slot].generation : -1;
}

int seed_evo_assign_members(const seed_evo_assign *a, int slot)
{
	return seed_evo_assign_live(a, slot) ? a->s[slot].M : 0;
}

int64_t seed_evo_assign_in_flight(const seed_evo_assign *a, int slot)
{
	return seed_evo_assign_live(a, slot) ? a->s[slot].in_flight : 0;
}

int64_t seed_evo_assign_assigned(const seed_evo_assign *a, int slot, int m)
{
	if (!seed_evo_assign_live(a, slot) || m < 0 || m >= a->s[slot].M)
		return 0;
	return a->s[slot].assigned[m];
}

int seed_evo_assign_current(const seed_evo_assign *a)
{
	return a->current;
}
