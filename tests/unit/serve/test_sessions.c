/* test_sessions.c: seed_sessions, a table of cases: lookup through the hash
 * map at many sessions, the seq rules (step, resend, gap, two in flight),
 * layouts that change, the bounds and eviction order, idle expiry and which
 * halves a batch still waits for, the walk over the halves.  Expected values are worked out by hand
 * in the comments. */
#include "seed/sessions.h"

#include <errno.h>
#include <string.h>

#include "tap.h"

/* A half of K rows of 4 f32 observations and 2 actions. */
static seed_unroll_layout lay(int K)
{
	return (seed_unroll_layout){
	    .rows = K, .num_actions = 2, .obs_dtype = SEED_DTYPE_F32, .obs_rank = 1, .obs_shape = {4}};
}

static seed_sessions *make(size_t max_sessions, size_t max_bytes)
{
	seed_sessions_opts o = {.unrolls = true,
	                        .T = 3,
	                        .overlap = 1,
	                        .idle_expiry = 1.0,
	                        .max_sessions = max_sessions,
	                        .max_bytes = max_bytes};
	seed_sessions *s = NULL;
	seed_err err;
	CHECK(seed_sessions_new(&s, &o, &err) == 0);
	return s;
}

static seed_session *get(seed_sessions *s, uint32_t run, uint32_t actor, int32_t env0, int K, double now,
                         int want)
{
	seed_unroll_layout l = lay(K);
	seed_session *h = NULL;
	seed_err err;
	int rc = seed_sessions_get(s, run, actor, env0, &l, now, &h, &err);
	CHECK_MSG(rc == want, "get(%u, %u, %d): %d, want %d (%s)", run, actor, env0, rc, want,
	          rc < 0 ? err.msg : "");
	return rc < 0 ? NULL : h;
}

/* 5000 halves: each found again, the same pointer, distinct from the
 * others; run, actor and env0 each tell halves apart. */
static void t_lookup(void)
{
	seed_sessions *s = make(100000, (size_t)1 << 32);
	static seed_session *seen[5000];
	for (int i = 0; i < 5000; i++)
		seen[i] = get(s, (uint32_t)(i % 7), (uint32_t)(i / 7), (int32_t)(i % 3) * 10, 1, 0, 1);
	CHECK(seed_sessions_count(s) == 5000);
	int same = 0;
	for (int i = 4999; i >= 0; i--)
		same +=
		    get(s, (uint32_t)(i % 7), (uint32_t)(i / 7), (int32_t)(i % 3) * 10, 1, 0, 0) == seen[i];
	CHECK(same == 5000);
	seed_session *h = seen[0];
	CHECK(h->run == 0 && h->actor == 0 && h->env0 == 0 && h->layout.rows == 1);
	CHECK(h->env[0] == 0 && h->unroll && h->unroll->steps == 4);
	/* env ids are env0 + row */
	seed_session *k = get(s, 99, 1, 6, 3, 0, 1);
	CHECK(k->env[0] == 6 && k->env[2] == 8);
	seed_sessions_free(&s);
	CHECK(s == NULL);
	seed_sessions_free(&s);
}

/* seq: 0 and 1 are steps; 1 again with an answer kept is a resend; 3
 * after 1 is a gap (the unroll restarts); while pending, the same seq is
 * the waiting request and another seq is refused. */
static void t_seq(void)
{
	seed_sessions *s = make(10, (size_t)1 << 30);
	seed_session *h = get(s, 1, 2, 0, 2, 0, 1);
	CHECK(seed_session_accept(h, 0) == SEED_SESSION_STEP);
	CHECK(seed_session_accept(h, 1) == SEED_SESSION_STEP);
	CHECK(seed_session_accept(h, 1) == SEED_SESSION_STEP); /* no answer kept yet: a step again */
	seed_buf_append(&h->reply, "x", 1);
	CHECK(seed_session_accept(h, 1) == SEED_SESSION_RESEND);
	h->unroll->pos = 2;
	CHECK(seed_session_accept(h, 3) == SEED_SESSION_GAP);
	CHECK(h->gaps == 1 && h->unroll->pos == 0 && h->last_seq == 3);
	h->pending = true;
	CHECK(seed_session_accept(h, 3) == SEED_SESSION_WAITING);
	CHECK(seed_session_accept(h, 4) == -EBUSY);
	CHECK(h->last_seq == 3);
	seed_sessions_free(&s);
}

/* Another K: remade when idle (fresh seq), refused while pending (and left
 * as it was). */
static void t_layout_change(void)
{
	seed_sessions *s = make(10, (size_t)1 << 30);
	seed_session *h = get(s, 1, 1, 0, 2, 0, 1);
	seed_session_accept(h, 5);
	h = get(s, 1, 1, 0, 3, 0.1, 1);
	CHECK(h && h->layout.rows == 3 && h->last_seq == -1 && seed_sessions_count(s) == 1);
	h->pending = true;
	CHECK(get(s, 1, 1, 0, 4, 0.2, -EBUSY) == NULL);
	CHECK(h->layout.rows == 3 && h->pending);
	/* Same layout while pending: found. */
	CHECK(get(s, 1, 1, 0, 3, 0.3, 0) == h);
	/* Bad layouts. */
	CHECK(get(s, 1, 1, 100, 0, 0.3, -EINVAL) == NULL);
	CHECK(get(s, 1, 1, 2147483647, 2, 0.3, -EINVAL) == NULL);
	seed_sessions_free(&s);
}

/* At most 2 sessions: a third evicts the longest idle one, skipping one
 * with a request pending; when all are pending the new one is refused. */
static void t_bounds(void)
{
	seed_sessions *s = make(2, (size_t)1 << 30);
	seed_session *a = get(s, 1, 0, 0, 1, 0.0, 1);
	seed_session *b = get(s, 1, 1, 0, 1, 0.1, 1);
	(void)b;
	get(s, 1, 0, 0, 1, 0.2, 0); /* a heard from again: b is now the longest idle */
	get(s, 1, 2, 0, 1, 0.3, 1); /* evicts b */
	CHECK(seed_sessions_count(s) == 2 && seed_sessions_evicted(s) == 1);
	get(s, 1, 0, 0, 1, 0.4, 0); /* a still there */
	a->pending = true;
	get(s, 1, 3, 0, 1, 0.5, 1); /* a is pending: evicts actor 2 instead */
	CHECK(get(s, 1, 0, 0, 1, 0.6, 0) == a);
	CHECK(seed_sessions_evicted(s) == 2);
	seed_session *d = get(s, 1, 3, 0, 1, 0.7, 0);
	d->pending = true;
	CHECK(get(s, 1, 4, 0, 1, 0.8, -ENOSPC) == NULL);
	CHECK(seed_sessions_count(s) == 2);
	seed_sessions_free(&s);

	/* Bytes: one half of K rows holds its unroll, an unroll's worth of
	 * ended episodes (K T of 25 bytes: env, return, length, truncated,
	 * generation, member) plus its own part (a population server's row
	 * state among it); a bound below what one needs refuses it; a bound
	 * of two halves' worth keeps two. */
	seed_unroll_layout l = lay(8);
	l.T = 3;
	l.overlap = 1;
	size_t ub = seed_unroll_bytes(&l);
	CHECK(ub > 0);
	s = make(100, ub);
	CHECK(get(s, 1, 0, 0, 8, 0, -E2BIG) == NULL);
	seed_sessions_free(&s);
	s = make(100, 2 * ub + 2 * (sizeof(seed_session) + (3 * 4 + 2 + 2 * 8 + sizeof(seed_evo_row)) * 8 +
	                            25 * 8 * 3 + 256));
	get(s, 1, 0, 0, 8, 0, 1);
	get(s, 1, 1, 0, 8, 0, 1);
	CHECK(seed_sessions_bytes(s) ==
	      2 * ub + 2 * (sizeof(seed_session) + (3 * 4 + 2 + 2 * 8 + sizeof(seed_evo_row)) * 8 +
	                    25 * 8 * 3 + 256));
	get(s, 1, 2, 0, 8, 0, 1);
	CHECK(seed_sessions_count(s) == 2 && seed_sessions_evicted(s) == 1);
	seed_sessions_free(&s);

	/* A recurrent agent's state of S = 6 floats a row: the unroll's state
	 * blocks and, in the session, the floats, each row's reward (4 bytes)
	 * and reset (1); zeros at first. */
	s = make(100, 1 << 20);
	seed_unroll_layout r = lay(8);
	r.state_size = 6;
	r.T = 3; /* the sessions' T and overlap, for seed_unroll_bytes */
	r.overlap = 1;
	seed_session *h = NULL;
	seed_err err;
	CHECK(seed_sessions_get(s, 1, 0, 0, &r, 0, &h, &err) == 1);
	CHECK(h->layout.state_size == 6 && h->unroll && h->unroll->layout.state_size == 6);
	CHECK(seed_sessions_bytes(s) == seed_unroll_bytes(&r) + sizeof(seed_session) +
	                                    (3 * 4 + 2 + 2 * 8 + sizeof(seed_evo_row)) * 8 + 25 * 8 * 3 +
	                                    256 + 8 * (6 * 4 + 5));
	int zeros = 0;
	for (int k = 0; k < 8 * 6; k++)
		zeros += h->core[k] == 0;
	CHECK(zeros == 48 && !h->acted);
	h->core[0] = 1;
	/* The same state size: the same session; another: remade, zeros. */
	seed_session *same = NULL;
	CHECK(seed_sessions_get(s, 1, 0, 0, &r, 1, &same, &err) == 0 && same == h && h->core[0] == 1);
	r.state_size = 4;
	CHECK(seed_sessions_get(s, 1, 0, 0, &r, 2, &h, &err) == 1);
	CHECK(h->layout.state_size == 4 && h->core[0] == 0);
	r.state_size = 0;
	CHECK(seed_sessions_get(s, 1, 0, 0, &r, 3, &h, &err) == 1 && h->core == NULL);
	seed_sessions_free(&s);
}

/* seed_sessions_next walks the halves from the most recently heard from:
 * made at 0, 1, 2, then the first heard again at 3: order 0, 2, 1.  Each
 * has room for K T = 2 x 3 episodes, none gathered yet. */
static void t_next(void)
{
	seed_sessions *s = make(10, (size_t)1 << 30);
	CHECK(seed_sessions_next(s, NULL) == NULL);
	seed_session *h0 = get(s, 1, 0, 0, 2, 0.0, 1), *h1 = get(s, 1, 1, 0, 2, 1.0, 1),
	             *h2 = get(s, 1, 2, 0, 2, 2.0, 1);
	get(s, 1, 0, 0, 2, 3.0, 0);
	const seed_session *want[] = {h0, h2, h1, NULL};
	const seed_session *h = NULL;
	for (int i = 0; i < 4; i++) {
		h = seed_sessions_next(s, h);
		CHECK_MSG(h == want[i], "session %d of the walk", i);
		if (h)
			CHECK(h->ep_cap == 6 && h->ep_n == 0);
		if (!h)
			break;
	}
	seed_sessions_free(&s);
}

/* Expiry 1 s: halves last heard at 0.5, 1, 2 and 2.4; at 2.5 the first
 * two are forgotten (silent 2 and 1.5 s), whatever their order of
 * creation. */
static void t_expire(void)
{
	seed_sessions *s = make(10, (size_t)1 << 30);
	get(s, 1, 3, 0, 1, 0.0, 1);
	get(s, 1, 1, 0, 1, 0.5, 1);
	get(s, 1, 3, 0, 1, 1.0, 0); /* created first, heard from later */
	get(s, 1, 2, 0, 1, 2.0, 1);
	get(s, 1, 4, 0, 1, 2.4, 1);
	CHECK(seed_sessions_expire(s, 2.5) == 2);
	CHECK(seed_sessions_count(s) == 2 && seed_sessions_expired(s) == 2);
	get(s, 1, 2, 0, 1, 2.6, 0);
	get(s, 1, 3, 0, 1, 2.6, 1); /* forgotten: made anew */
	/* A pending half is never expired. */
	seed_session *p = get(s, 9, 9, 0, 1, 3.0, 1);
	p->pending = true;
	CHECK(seed_sessions_expire(s, 100) == 3);
	CHECK(seed_sessions_count(s) == 1);
	seed_sessions_free(&s);
}

/* Half A asks every 10 ms (interval 0.01); half B asked once.  A batch
 * waits for A within 4 intervals (40 ms) of its last request, for B within
 * the window (0.2 s here), never for a pending half. */
static void t_expected(void)
{
	seed_sessions *s = make(10, (size_t)1 << 30);
	get(s, 1, 0, 0, 1, 0.00, 1);
	get(s, 1, 1, 0, 1, 0.00, 1);
	get(s, 1, 0, 0, 1, 0.01, 0);
	seed_session *a = get(s, 1, 0, 0, 1, 0.02, 0);
	CHECK_NEAR(a->interval, 0.01, 1e-12);
	CHECK(seed_sessions_expected(s, 0.025, 0.2) == 2);
	CHECK(seed_sessions_expected(s, 0.1, 0.2) == 1);    /* A silent 80 ms > 40 ms */
	CHECK(seed_sessions_expected(s, 0.3, 0.2) == 0);    /* B silent 0.3 s > window */
	CHECK(seed_sessions_expected(s, 0.025, 0.01) == 1); /* the window bounds A too */
	a->pending = true;
	CHECK(seed_sessions_expected(s, 0.025, 0.2) == 1);
	seed_sessions_free(&s);
}

static void t_options(void)
{
	seed_sessions *s = NULL;
	seed_err err;
	seed_sessions_opts bad[] = {
	    {.unrolls = true, .T = 0, .overlap = 1, .idle_expiry = 1, .max_sessions = 1, .max_bytes = 1},
	    {.unrolls = true, .T = 2, .overlap = 3, .idle_expiry = 1, .max_sessions = 1, .max_bytes = 1},
	    {.unrolls = false, .idle_expiry = 0, .max_sessions = 1, .max_bytes = 1},
	    {.unrolls = false, .idle_expiry = 1, .max_sessions = 0, .max_bytes = 1},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK_MSG(seed_sessions_new(&s, &bad[i], &err) == -EINVAL && !s, "case %zu", i);
	/* Without unrolls a session has no unroll. */
	seed_sessions_opts o = {.idle_expiry = 1, .max_sessions = 4, .max_bytes = 1 << 20};
	CHECK(seed_sessions_new(&s, &o, &err) == 0);
	seed_session *h = get(s, 1, 1, 0, 4, 0, 1);
	CHECK(h && h->unroll == NULL);
	seed_sessions_free(&s);
}

/* The dropped callback: once for each session forgotten by expiry,
 * eviction or a remake, with the session still whole; not at free.  Rows
 * of a population server start NEW (zeroed). */
static int ndropped;
static uint32_t dropped_actor[8];
static void on_dropped(void *ctx, seed_session *h)
{
	CHECK(ctx == &ndropped && h->evo != NULL);
	if (ndropped < 8)
		dropped_actor[ndropped] = h->actor;
	ndropped++;
}

static void t_dropped(void)
{
	seed_sessions_opts o = {.unrolls = true,
	                        .T = 3,
	                        .overlap = 1,
	                        .idle_expiry = 1.0,
	                        .max_sessions = 2,
	                        .max_bytes = 1 << 20,
	                        .dropped = on_dropped,
	                        .ctx = &ndropped};
	seed_sessions *s = NULL;
	seed_err err;
	CHECK(seed_sessions_new(&s, &o, &err) == 0);
	seed_session *h = get(s, 1, 0, 0, 4, 0, 1);
	CHECK(h && h->evo[3].state == SEED_EVO_ROW_NEW && h->ep_gen && h->ep_member && !h->ep_evo);
	get(s, 1, 1, 0, 4, 0.1, 1);
	get(s, 1, 2, 0, 4, 0.2, 1); /* evicts actor 0, the longest idle */
	CHECK(ndropped == 1 && dropped_actor[0] == 0);
	get(s, 1, 2, 0, 5, 0.3, 1); /* another layout: remade */
	CHECK(ndropped == 2 && dropped_actor[1] == 2);
	CHECK(seed_sessions_expire(s, 1.25) == 1); /* actor 1, silent since 0.1 */
	CHECK(ndropped == 3 && dropped_actor[2] == 1);
	seed_sessions_free(&s);
	CHECK(ndropped == 3);
}

int main(void)
{
	TAP_RUN(t_lookup);
	TAP_RUN(t_seq);
	TAP_RUN(t_layout_change);
	TAP_RUN(t_bounds);
	TAP_RUN(t_next);
	TAP_RUN(t_expire);
	TAP_RUN(t_expected);
	TAP_RUN(t_options);
	TAP_RUN(t_dropped);
	return tap_done();
}
