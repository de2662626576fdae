/* tests/unit/evo/test_evo_assign.c: members to environments (seed/evo_assign.h).
 *
 * The choice of member is checked against a direct transcription of the
 * rule (fewest assigned among those wanting more, else fewest assigned;
 * ties to the lowest index; none: the row waits) over random wants with
 * lost ends and held rows, and by hand on a small case;
 * then the life of rows: the previous generation kept until its last
 * episode ends, a third one orphaning it, the episode cap, episodes under
 * way when the first generation comes, lost ends, forgotten rows, stop;
 * common episodes: every member's k-th episode from one seed (the values
 * from splitmix64's finaliser worked in Python), restarted from it before
 * it starts, an actor that steps instead, a generation that moves on. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "seed/evo_assign.h"
#include "tap.h"

/* The rule as the contract words it, recomputed from scratch each time:
 * -1 when no member wants more (the row waits). */
static int reference_member(int M, const int32_t *wanted, const int64_t *assigned)
{
	int best = -1;
	for (int m = 0; m < M; m++)
		if (assigned[m] < wanted[m] && (best < 0 || assigned[m] < assigned[best]))
			best = m;
	return best;
}

/* Row r's first step (the actor's reset: length 0), then ends one after
 * the other: each assigns the next member. */
static int first_step(seed_evo_assign *a, seed_evo_row *r)
{
	seed_evo_episode rep;
	return seed_evo_assign_step(a, r, false, false, 0, 0, &rep);
}

static int end_step(seed_evo_assign *a, seed_evo_row *r, float ret, int32_t len, seed_evo_episode *rep)
{
	return seed_evo_assign_step(a, r, true, false, ret, len, rep);
}

/* Whether row r holds what the reference says: member want playing, or
 * waiting (want -1, and the server asks for a hold). */
static bool as_reference(const seed_evo_assign *a, const seed_evo_row *r, int want)
{
	if (want < 0)
		return r->state == SEED_EVO_ROW_WAITING && seed_evo_assign_request(a, r) == SEED_RESET_HOLD;
	return r->state == SEED_EVO_ROW_PLAYING && r->member == want &&
	       seed_evo_assign_request(a, r) == SEED_RESET_STEP;
}

/* Random wants, three rows interleaved: episodes end, ends go missing
 * (the member wants its episode again), waiting rows are held and step at
 * length 0; every assignment follows the rule. */
static void t_fewest_first(void)
{
	uint64_t x = 12345;
	int tw = 0, tl = 0;
	for (int trial = 0; trial < 200; trial++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int M = 1 + (int)((x >> 33) % 17);
		int32_t wanted[17];
		int64_t ref[17] = {0}, total = 0;
		for (int m = 0; m < M; m++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			/* mostly equal wants, sometimes one that wants many */
			wanted[m] =
			    (x >> 40) % 5 == 0 ? 1 + (int32_t)((x >> 20) % 30) : 1 + (int32_t)(trial % 3);
			total += wanted[m];
		}
		seed_evo_assign *a = seed_evo_assign_new();
		CHECK(seed_evo_assign_start(a, trial, M, wanted, 0, 0, NULL) == 0);
		/* Several rows, interleaved: assignments happen in step order. */
		seed_evo_row rows[3] = {{0}};
		int bad = 0, n = 0, waits = 0, losses = 0;
		for (int k = 0; k < 3; k++) {
			int want = reference_member(M, wanted, ref);
			first_step(a, &rows[k]);
			bad += !as_reference(a, &rows[k], want);
			if (want >= 0)
				ref[want]++;
			n++;
		}
		for (int step = 0; step < 400; step++) {
			seed_evo_row *r = &rows[step % 3];
			seed_evo_episode rep;
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			if (r->state == SEED_EVO_ROW_WAITING) {
				/* Held: the same start again, no report. */
				int want = reference_member(M, wanted, ref);
				CHECK(first_step(a, r) == 0);
				bad += !as_reference(a, r, want);
				if (want >= 0)
					ref[want]++;
				waits++;
			} else if ((x >> 35) % 6 == 0) {
				/* A length that does not grow: the end was lost,
				 * and its member wants the episode again; the
				 * restart (length 0) starts an episode at once. */
				CHECK(seed_evo_assign_step(a, r, false, false, 1, 5, &rep) == 0);
				ref[r->member]--;
				int want = reference_member(M, wanted, ref);
				CHECK(seed_evo_assign_step(a, r, false, false, 0, 0, &rep) == 0);
				bad += !as_reference(a, r, want);
				if (want >= 0)
					ref[want]++;
				losses++;
			} else {
				int32_t had = r->member;
				int want = reference_member(M, wanted, ref);
				CHECK(end_step(a, r, (float)step, 1 + step % 7, &rep) == 1);
				CHECK(rep.member == had && rep.generation == trial);
				bad += !as_reference(a, r, want);
				if (want >= 0)
					ref[want]++;
			}
			n++;
		}
		CHECK_MSG(bad == 0, "trial %d (M %d): %d of %d assignments differ from the rule", trial, M,
		          bad, n);
		int64_t sum = 0, playing = 0;
		for (int m = 0; m < M; m++) {
			CHECK(seed_evo_assign_assigned(a, 0, m) == ref[m] && ref[m] <= wanted[m]);
			sum += ref[m];
		}
		for (int k = 0; k < 3; k++)
			playing += rows[k].state == SEED_EVO_ROW_PLAYING;
		CHECK(seed_evo_assign_in_flight(a, 0) == playing);
		CHECK(sum <= total);
		tw += waits;
		tl += losses;
		seed_evo_assign_free(&a);
		CHECK(a == NULL);
	}
	/* The trials did wait and lose, many times. */
	CHECK_MSG(tw > 1000 && tl > 1000, "%d waits, %d losses", tw, tl);
	seed_evo_assign_free(NULL);
}

/* Worked by hand: wants {1, 2, 1} over two rows r and q: r 0, q 1, r 2,
 * q 1 (its second); then both wait, held, until generation 5 (wants
 * {1, 1}) starts them on 0 and 1.  A third row x waits; r's end goes
 * missing (length 3, then 2): member 0 wants its episode again and x,
 * held, gets it; r goes on loose.  Forgetting x gives member 0 back once
 * more, and r's end takes it. */
static void t_waits_by_hand(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t wanted[3] = {1, 2, 1}, w5[2] = {1, 1};
	CHECK(seed_evo_assign_start(a, 4, 3, wanted, 0, 0, NULL) == 0);
	seed_evo_row r = {0}, q = {0}, x = {0};
	seed_evo_episode rep;
	first_step(a, &r);
	first_step(a, &q);
	CHECK(r.state == SEED_EVO_ROW_PLAYING && r.member == 0 && r.generation == 4 && q.member == 1);
	CHECK(end_step(a, &r, 1, 2, &rep) == 1 && rep.member == 0 && r.member == 2);
	CHECK(end_step(a, &q, 1, 2, &rep) == 1 && rep.member == 1 && q.member == 1);
	CHECK(end_step(a, &r, 1, 2, &rep) == 1 && rep.member == 2);
	CHECK(r.state == SEED_EVO_ROW_WAITING && r.member == -1 && r.generation == 4);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_HOLD);
	CHECK(seed_evo_assign_in_flight(a, 0) == 1);
	CHECK(end_step(a, &q, 1, 2, &rep) == 1 && rep.member == 1 && q.state == SEED_EVO_ROW_WAITING);
	CHECK(seed_evo_assign_in_flight(a, 0) == 0);
	/* Held: steps at length 0, nothing reported, still waiting. */
	for (int i = 0; i < 3; i++)
		CHECK(first_step(a, &r) == 0 && r.state == SEED_EVO_ROW_WAITING);
	int slot;
	int32_t m;
	seed_evo_assign_play(a, &r, &slot, &m);
	CHECK(slot == 0 && m == 0);
	CHECK(seed_evo_assign_assigned(a, 0, 0) == 1 && seed_evo_assign_assigned(a, 0, 1) == 2 &&
	      seed_evo_assign_assigned(a, 0, 2) == 1);
	CHECK(seed_evo_assign_start(a, 5, 2, w5, 0, 0, NULL) == 1);
	CHECK(first_step(a, &r) == 0 && r.state == SEED_EVO_ROW_PLAYING && r.generation == 5 &&
	      r.member == 0);
	CHECK(first_step(a, &q) == 0 && q.member == 1 && seed_evo_assign_request(a, &q) == SEED_RESET_STEP);
	CHECK(first_step(a, &x) == 0 && x.state == SEED_EVO_ROW_WAITING);
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 3, &rep) == 0);
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 2, &rep) == 0 && r.state == SEED_EVO_ROW_LOOSE);
	CHECK(seed_evo_assign_assigned(a, 1, 0) == 0 && seed_evo_assign_in_flight(a, 1) == 1);
	CHECK(first_step(a, &x) == 0 && x.state == SEED_EVO_ROW_PLAYING && x.member == 0);
	seed_evo_assign_forget(a, &x);
	CHECK(x.state == SEED_EVO_ROW_NEW && seed_evo_assign_assigned(a, 1, 0) == 0);
	CHECK(end_step(a, &r, 1, 4, &rep) == 1 && rep.member == -1 && rep.generation == 5);
	CHECK(r.state == SEED_EVO_ROW_PLAYING && r.member == 0 && seed_evo_assign_in_flight(a, 1) == 2);
	/* A waiting row that its actor steps anyway (it ignores the hold):
	 * loose, asked to restart; its end reports nothing and waits. */
	CHECK(first_step(a, &x) == 0 && x.state == SEED_EVO_ROW_WAITING);
	CHECK(seed_evo_assign_step(a, &x, false, false, 1, 1, &rep) == 0 && x.state == SEED_EVO_ROW_LOOSE);
	CHECK(seed_evo_assign_request(a, &x) == SEED_RESET_RESTART);
	CHECK(end_step(a, &x, 1, 2, &rep) == 1 && rep.member == -1 && x.state == SEED_EVO_ROW_WAITING);
	/* With no generation the server asks nothing of a waiting row. */
	seed_evo_assign_stop(a);
	CHECK(seed_evo_assign_request(a, &x) == SEED_RESET_STEP);
	seed_evo_assign_free(&a);
}

/* A new generation mid-episode: the row finishes with the old one's member
 * and reports under its number; the old slot lives until then. */
static void t_previous_kept(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w2[2] = {1, 1}, w3[3] = {1, 1, 1};
	CHECK(seed_evo_assign_current(a) == -1);
	int s0 = seed_evo_assign_start(a, 10, 2, w2, 0, 0, NULL);
	CHECK(s0 == 0 && seed_evo_assign_current(a) == 0);
	seed_evo_row r[2] = {{0}};
	first_step(a, &r[0]);
	first_step(a, &r[1]);
	CHECK(r[0].member == 0 && r[1].member == 1 && seed_evo_assign_in_flight(a, 0) == 2);
	int s1 = seed_evo_assign_start(a, 11, 3, w3, 0, 0, NULL);
	CHECK(s1 == 1 && seed_evo_assign_current(a) == 1);
	CHECK(seed_evo_assign_live(a, 0) && seed_evo_assign_generation(a, 0) == 10);
	int slot;
	int32_t m;
	/* Rows stepped before the new generation and acted on after play
	 * their own member of the previous one. */
	seed_evo_assign_play(a, &r[1], &slot, &m);
	CHECK(slot == 0 && m == 1 && seed_evo_assign_request(a, &r[1]) == SEED_RESET_STEP);
	seed_evo_episode rep;
	/* Its next step, in the middle of the episode: reported as far as it
	 * went, truncated, and abandoned. */
	CHECK(seed_evo_assign_step(a, &r[1], false, false, 1.5f, 4, &rep) == 1);
	CHECK(rep.generation == 10 && rep.member == 1 && rep.ret == 1.5f && rep.length == 4 && rep.truncated);
	CHECK(r[1].state == SEED_EVO_ROW_CAPPED && seed_evo_assign_request(a, &r[1]) == SEED_RESET_RESTART);
	seed_evo_assign_play(a, &r[1], &slot, &m);
	CHECK(slot == 1 && m == 0);
	CHECK(seed_evo_assign_live(a, 0) && seed_evo_assign_in_flight(a, 0) == 1);
	/* The actor restarts it: length 0, no flags, no report; the new
	 * episode is generation 11's. */
	CHECK(seed_evo_assign_step(a, &r[1], false, false, 0, 0, &rep) == 0);
	CHECK(r[1].state == SEED_EVO_ROW_PLAYING && r[1].generation == 11 && r[1].member == 0);
	CHECK(seed_evo_assign_request(a, &r[1]) == SEED_RESET_STEP);
	seed_evo_assign_play(a, &r[1], &slot, &m);
	CHECK(slot == 1 && m == 0);
	/* The last episode of generation 10 ends at its next step: reported
	 * whole, and its slot is free. */
	CHECK(seed_evo_assign_step(a, &r[0], false, true, 3, 9, &rep) == 1);
	CHECK(rep.generation == 10 && rep.member == 0 && rep.length == 9 && rep.truncated == 1);
	CHECK(!seed_evo_assign_live(a, 0) && seed_evo_assign_generation(a, 0) == -1);
	CHECK(seed_evo_assign_in_flight(a, 1) == 2 && seed_evo_assign_members(a, 1) == 3);
	CHECK(r[0].generation == 11 && r[0].member == 1 &&
	      seed_evo_assign_request(a, &r[0]) == SEED_RESET_STEP);
	/* Both flags: terminated wins, not truncated. */
	CHECK(seed_evo_assign_step(a, &r[0], true, true, 3, 9, &rep) == 1 && rep.truncated == 0);
	/* A start with nothing in flight frees the old slot at once. */
	seed_evo_assign *b = seed_evo_assign_new();
	seed_evo_assign_start(b, 0, 2, w2, 0, 0, NULL);
	seed_evo_assign_start(b, 1, 2, w2, 0, 0, NULL);
	CHECK(!seed_evo_assign_live(b, 0) && seed_evo_assign_live(b, 1));
	seed_evo_assign_free(&b);
	seed_evo_assign_free(&a);
}

/* A third generation while the first still has an episode in flight: that
 * episode is orphaned, reported at its next step as far as it went and
 * abandoned; an actor that does not restart it plays it out with the
 * current member 0, unreported. */
static void t_third_orphans(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[2] = {1, 1};
	seed_evo_assign_start(a, 0, 2, w, 0, 0, NULL);
	seed_evo_row r = {0}, q = {0};
	first_step(a, &r);
	seed_evo_assign_start(a, 1, 2, w, 0, 0, NULL);
	first_step(a, &q); /* generation 1's, in slot 1 */
	CHECK(q.generation == 1 && seed_evo_assign_in_flight(a, 1) == 1);
	CHECK(seed_evo_assign_start(a, 2, 2, w, 0, 0, NULL) == 0); /* slot 0 reused */
	CHECK(seed_evo_assign_in_flight(a, 0) == 0 && seed_evo_assign_generation(a, 0) == 2);
	int slot;
	int32_t m;
	seed_evo_assign_play(a, &r, &slot, &m);
	CHECK(slot == 0 && m == 0);
	seed_evo_episode rep;
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 1, &rep) == 1 && r.state == SEED_EVO_ROW_CAPPED);
	CHECK(rep.generation == 0 && rep.member == 0 && rep.length == 1 && rep.truncated);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_RESTART);
	/* Not restarted: longer steps report nothing, nor does its end. */
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 2, &rep) == 0 && r.state == SEED_EVO_ROW_CAPPED);
	seed_evo_assign_play(a, &r, &slot, &m);
	CHECK(slot == 0 && m == 0);
	CHECK(end_step(a, &r, 5, 3, &rep) == 0);
	CHECK(r.state == SEED_EVO_ROW_PLAYING && r.generation == 2);
	/* Generation 1's episode still counts and reports. */
	CHECK(end_step(a, &q, 4, 3, &rep) == 1 && rep.generation == 1);
	CHECK(!seed_evo_assign_live(a, 1));
	seed_evo_assign_free(&a);
}

/* The cap: reported at cap steps with the return so far, truncated; the
 * environment plays on unreported until its episode ends or its actor
 * restarts it. */
static void t_cap(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[1] = {3};
	seed_evo_assign_start(a, 3, 1, w, 5, 0, NULL);
	seed_evo_row r = {0};
	first_step(a, &r);
	seed_evo_episode rep;
	for (int32_t t = 1; t < 5; t++)
		CHECK(seed_evo_assign_step(a, &r, false, false, (float)t, t, &rep) == 0);
	CHECK(seed_evo_assign_in_flight(a, 0) == 1);
	CHECK(seed_evo_assign_step(a, &r, false, false, 5, 5, &rep) == 1);
	CHECK(rep.generation == 3 && rep.member == 0 && rep.ret == 5 && rep.length == 5 &&
	      rep.truncated == 1);
	CHECK(r.state == SEED_EVO_ROW_CAPPED && seed_evo_assign_in_flight(a, 0) == 0);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_RESTART); /* the server asks for a restart */
	for (int32_t t = 6; t < 9; t++)
		CHECK(seed_evo_assign_step(a, &r, false, false, (float)t, t, &rep) == 0);
	CHECK(end_step(a, &r, 9, 9, &rep) == 0);
	CHECK(r.state == SEED_EVO_ROW_PLAYING && seed_evo_assign_assigned(a, 0, 0) == 2);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_STEP);
	/* An episode that ends before the cap is reported as it is. */
	CHECK(end_step(a, &r, 2, 2, &rep) == 1 && rep.length == 2 && rep.truncated == 0);
	/* Capped again, and restarted by the actor this time: the next step
	 * is a start, and the member has its three episodes: it waits. */
	for (int32_t t = 1; t < 5; t++)
		CHECK(seed_evo_assign_step(a, &r, false, false, (float)t, t, &rep) == 0);
	CHECK(seed_evo_assign_step(a, &r, false, false, 5, 5, &rep) == 1 && rep.length == 5);
	CHECK(seed_evo_assign_step(a, &r, false, false, 0, 0, &rep) == 0);
	CHECK(r.state == SEED_EVO_ROW_WAITING && seed_evo_assign_assigned(a, 0, 0) == 3);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_HOLD);
	seed_evo_assign_free(&a);
}

/* Seen first mid-episode: loose, played by member 0, reported with -1. */
static void t_loose(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[2] = {1, 1};
	seed_evo_row r = {0};
	seed_evo_episode rep;
	/* Before any generation: nothing assigned, nothing reported. */
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 3, &rep) == 0 && r.state == SEED_EVO_ROW_NEW);
	int slot;
	int32_t m;
	seed_evo_assign_play(a, &r, &slot, &m);
	CHECK(slot == -1);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_STEP); /* no generation: nothing to ask */
	seed_evo_assign_start(a, 6, 2, w, 0, 0, NULL);
	CHECK(seed_evo_assign_step(a, &r, false, false, 4, 7, &rep) == 0 && r.state == SEED_EVO_ROW_LOOSE);
	CHECK(seed_evo_assign_request(a, &r) == SEED_RESET_RESTART);
	seed_evo_assign_play(a, &r, &slot, &m);
	CHECK(slot == 0 && m == 0 && seed_evo_assign_in_flight(a, 0) == 0);
	CHECK(end_step(a, &r, 8, 8, &rep) == 1 && rep.member == -1 && rep.generation == 6 && rep.length == 8);
	CHECK(r.state == SEED_EVO_ROW_PLAYING && r.member == 0 && seed_evo_assign_assigned(a, 0, 0) == 1);
	/* Loose again, restarted by its actor: an assigned episode starts. */
	seed_evo_row q = {0};
	CHECK(seed_evo_assign_step(a, &q, false, false, 2, 5, &rep) == 0 && q.state == SEED_EVO_ROW_LOOSE);
	CHECK(seed_evo_assign_step(a, &q, false, false, 0, 0, &rep) == 0);
	CHECK(q.state == SEED_EVO_ROW_PLAYING && q.member == 1 &&
	      seed_evo_assign_request(a, &q) == SEED_RESET_STEP);
	seed_evo_assign_free(&a);
}

/* A length that does not grow without an end: the end was lost; the
 * episode is abandoned (not reported) and the row goes on loose. */
static void t_missed_end(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[2] = {1, 1};
	seed_evo_assign_start(a, 0, 2, w, 0, 0, NULL);
	seed_evo_row r = {0};
	first_step(a, &r);
	seed_evo_episode rep;
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 10, &rep) == 0); /* a gap: 10 after 0 is fine */
	CHECK(r.state == SEED_EVO_ROW_PLAYING);
	CHECK(seed_evo_assign_step(a, &r, false, false, 1, 3, &rep) == 0);
	CHECK(r.state == SEED_EVO_ROW_LOOSE && seed_evo_assign_in_flight(a, 0) == 0);
	CHECK(end_step(a, &r, 2, 4, &rep) == 1 && rep.member == -1);
	seed_evo_assign_free(&a);
}

/* Forgotten rows release their generation; stop forgets everything. */
static void t_forget_and_stop(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[2] = {1, 1};
	seed_evo_assign_start(a, 0, 2, w, 0, 0, NULL);
	seed_evo_row r = {0}, q = {0};
	first_step(a, &r);
	seed_evo_assign_start(a, 1, 2, w, 0, 0, NULL);
	CHECK(seed_evo_assign_live(a, 0));
	seed_evo_assign_forget(a, &r);
	CHECK(!seed_evo_assign_live(a, 0) && r.state == SEED_EVO_ROW_NEW);
	first_step(a, &q);
	CHECK(seed_evo_assign_in_flight(a, 1) == 1);
	seed_evo_assign_stop(a);
	CHECK(seed_evo_assign_current(a) == -1 && !seed_evo_assign_live(a, 1));
	int slot;
	int32_t m;
	seed_evo_assign_play(a, &q, &slot, &m);
	CHECK(slot == -1);
	seed_evo_episode rep;
	CHECK(end_step(a, &q, 1, 1, &rep) == 0 && q.state == SEED_EVO_ROW_NEW);
	/* After a stop, a new start: q's next first step is assigned. */
	seed_evo_assign_start(a, 5, 2, w, 0, 0, NULL);
	CHECK(first_step(a, &q) == 0 && q.state == SEED_EVO_ROW_PLAYING && q.generation == 5);
	seed_evo_assign_free(&a);
}

static void t_refusals(void)
{
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[2] = {1, 1}, z[2] = {1, 0};
	seed_err err = {""};
	seed_evo_assign_start(a, 0, 2, w, 0, 0, NULL);
	seed_evo_row r = {0};
	first_step(a, &r);
	CHECK(seed_evo_assign_start(a, 1, 0, w, 0, 0, &err) == -EINVAL && strstr(err.msg, "0 members"));
	CHECK(seed_evo_assign_start(a, 1, 2, z, 0, 0, &err) == -EINVAL &&
	      strstr(err.msg, "member 1 wants 0 episodes"));
	CHECK(seed_evo_assign_start(a, 1, 2, w, -1, 0, &err) == -EINVAL && strstr(err.msg, "episode cap -1"));
	/* Nothing changed. */
	CHECK(seed_evo_assign_current(a) == 0 && seed_evo_assign_in_flight(a, 0) == 1);
	CHECK(seed_evo_assign_generation(a, 0) == 0 && !seed_evo_assign_live(a, 1));
	CHECK(seed_evo_assign_assigned(a, 0, 2) == 0 && seed_evo_assign_assigned(a, 7, 0) == 0);
	seed_evo_assign_free(&a);
}

/* Common episodes: a generation with an episode seed has each member's
 * k-th episode played from seed_evo_episode_seed(seed, k); the row is
 * asked to restart from it, and the episode starts at the restart. */
static void t_common_episodes(void)
{
	/* splitmix64's finaliser of 77 + 0x9e3779b97f4a7c15 (k + 1), the top
	 * bit cleared: computed in Python from the formula. */
	CHECK(seed_evo_episode_seed(77, 0) == 7086638178683056257ull);
	CHECK(seed_evo_episode_seed(77, 1) == 9103081651828072020ull);
	CHECK(seed_evo_episode_seed(77, 2) == 885720525965706988ull);
	seed_evo_assign *a = seed_evo_assign_new();
	int32_t w[2] = {2, 2};
	seed_evo_assign_start(a, 0, 2, w, 0, 77, NULL);
	/* Four rows start: members 0, 1, 0, 1 (by levels), episodes 0, 0, 1, 1. */
	seed_evo_row r[4] = {{0}};
	for (int i = 0; i < 4; i++) {
		first_step(a, &r[i]);
		CHECK(r[i].state == SEED_EVO_ROW_PLAYING && r[i].member == i % 2);
		CHECK(seed_evo_assign_request(a, &r[i]) == SEED_RESET_RESTART);
		CHECK(seed_evo_assign_reset_seed(a, &r[i]) == seed_evo_episode_seed(77, i / 2));
	}
	seed_evo_episode rep;
	/* Row 0 restarts (its next step is a start, length 0): the episode
	 * starts, stepped from now on, and ends reported as member 0's. */
	CHECK(first_step(a, &r[0]) == 0);
	CHECK(r[0].state == SEED_EVO_ROW_PLAYING && r[0].member == 0);
	CHECK(seed_evo_assign_request(a, &r[0]) == SEED_RESET_STEP &&
	      seed_evo_assign_reset_seed(a, &r[0]) == 0);
	CHECK(seed_evo_assign_step(a, &r[0], false, false, 1, 1, &rep) == 0);
	CHECK(end_step(a, &r[0], 3, 2, &rep) == 1 && rep.member == 0 && rep.length == 2 &&
	      rep.generation == 0);
	/* Row 1's actor steps it instead (it cannot restart from a seed): the
	 * member's episode goes on from there, and is reported. */
	CHECK(seed_evo_assign_step(a, &r[1], false, false, 1, 1, &rep) == 0);
	CHECK(r[1].state == SEED_EVO_ROW_PLAYING && r[1].member == 1);
	CHECK(seed_evo_assign_request(a, &r[1]) == SEED_RESET_STEP);
	CHECK(end_step(a, &r[1], 4, 2, &rep) == 1 && rep.member == 1);
	/* Every member has its episodes: rows 0 and 1 wait. */
	CHECK(r[0].state == SEED_EVO_ROW_WAITING && r[1].state == SEED_EVO_ROW_WAITING);
	/* The next generation comes before rows 2 and 3 restarted: row 2's
	 * restart starts generation 1's first episode instead (member 0,
	 * episode 0 of seed 78), restarted from its seed in turn. */
	seed_evo_assign_start(a, 1, 2, w, 0, 78, NULL);
	CHECK(first_step(a, &r[2]) == 0);
	CHECK(r[2].state == SEED_EVO_ROW_PLAYING && r[2].generation == 1 && r[2].member == 0);
	CHECK(seed_evo_assign_reset_seed(a, &r[2]) == seed_evo_episode_seed(78, 0));
	CHECK(seed_evo_assign_in_flight(a, 0) == 1); /* row 3's, of generation 0 */
	/* A held row takes an episode when its generation comes: member 1's
	 * first, from the same seed as member 0's. */
	CHECK(first_step(a, &r[0]) == 0 && r[0].member == 1);
	CHECK(seed_evo_assign_request(a, &r[0]) == SEED_RESET_RESTART);
	CHECK(seed_evo_assign_reset_seed(a, &r[0]) == seed_evo_episode_seed(78, 0));
	/* Without an episode seed nothing is restarted. */
	seed_evo_assign_start(a, 2, 2, w, 0, 0, NULL);
	CHECK(first_step(a, &r[1]) == 0 && r[1].state == SEED_EVO_ROW_PLAYING);
	CHECK(seed_evo_assign_request(a, &r[1]) == SEED_RESET_STEP &&
	      seed_evo_assign_reset_seed(a, &r[1]) == 0);
	seed_evo_assign_free(&a);
}

int main(void)
{
	TAP_RUN(t_fewest_first);
	TAP_RUN(t_waits_by_hand);
	TAP_RUN(t_previous_kept);
	TAP_RUN(t_third_orphans);
	TAP_RUN(t_cap);
	TAP_RUN(t_loose);
	TAP_RUN(t_missed_end);
	TAP_RUN(t_forget_and_stop);
	TAP_RUN(t_refusals);
	TAP_RUN(t_common_episodes);
	return tap_done();
}
