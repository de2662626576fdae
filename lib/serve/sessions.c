/* sessions.c: the state of every actor half, in a hash map with an idle
 * order (seed/sessions.h).
 *
 * Invariants: every session is in exactly one hash chain and on the idle
 * list, which runs from the oldest last request (s->oldest) to the newest
 * (s->newest), so last_seen never decreases along it; s->bytes is the sum of
 * the sessions' bytes; the bucket count is a power of two and at least 4/3
 * of the sessions (chains stay short).  A pending session is never freed,
 * remade or evicted.
 */
#include "seed/sessions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct seed_sessions {
	seed_sessions_opts o;
	seed_session **bucket;
	size_t nbuckets, n, bytes;
	seed_session *oldest, *newest;
	int64_t evicted, expired;
};

static uint64_t hash(uint32_t run, uint32_t actor, int32_t env0)
{
	/* splitmix64's finaliser over the packed key. */
	uint64_t x = ((uint64_t)run << 32 | actor) ^ ((uint64_t)(uint32_t)env0 * 0x9e3779b97f4a7c15ULL);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int seed_sessions_new(seed_sessions **out, const seed_sessions_opts *o, seed_err *err)
{
	if (o->unrolls && (o->T < 1 || o->overlap < 1 || o->overlap > o->T))
		return seed_err_set(err, -EINVAL, "sessions: unroll T %d, overlap %d", o->T, o->overlap);
	if (!(o->idle_expiry > 0) || o->max_sessions < 1 || o->max_bytes < 1)
		return seed_err_set(err, -EINVAL,
		                    "sessions: idle expiry %g s, at most %zu sessions of %zu bytes",
		                    o->idle_expiry, o->max_sessions, o->max_bytes);
	seed_sessions *s = seed_xcalloc(1, sizeof *s);
	s->o = *o;
	s->nbuckets = 64;
	s->bucket = seed_xcalloc(s->nbuckets, sizeof *s->bucket);
	*out = s;
	return 0;
}

static seed_session **chain(const seed_sessions *s, uint32_t run, uint32_t actor, int32_t env0)
{
	return &s->bucket[hash(run, actor, env0) & (s->nbuckets - 1)];
}

static void unlink_idle(seed_sessions *s, seed_session *h)
{
	if (h->older)
		h->older->newer = h->newer;
	else
		s->oldest = h->newer;
	if (h->newer)
		h->newer->older = h->older;
	else
		s->newest = h->older;
	h->older = h->newer = NULL;
}

static void push_newest(seed_sessions *s, seed_session *h)
{
	h->older = s->newest;
	h->newer = NULL;
	if (s->newest)
		s->newest->newer = h;
	else
		s->oldest = h;
	s->newest = h;
}

static void release(seed_session *h)
{
	seed_buf_free(&h->reply);
	free(h->actions);
	free(h->box_raw);
	free(h->box_act);
	free(h->low);
	free(h->high);
	free(h->reset);
	free(h->reset_seed);
	free(h->env);
	free(h->ep_env);
	free(h->ep_len);
	free(h->ep_ret);
	free(h->ep_trunc);
	free(h->ep_gen);
	free(h->ep_member);
	free(h->evo);
	seed_unroll_free(&h->unroll);
	free(h->core);
	free(h->core_reward);
	free(h->core_reset);
}

/* Take h out of the map and the list and free it. */
static void drop(seed_sessions *s, seed_session *h)
{
	if (s->o.dropped)
		s->o.dropped(s->o.ctx, h);
	seed_session **p = chain(s, h->run, h->actor, h->env0);
	while (*p != h)
		p = &(*p)->hnext;
	*p = h->hnext;
	unlink_idle(s, h);
	s->n--;
	s->bytes -= h->bytes;
	release(h);
	free(h);
}

void seed_sessions_free(seed_sessions **sp)
{
	if (!sp || !*sp)
		return;
	seed_sessions *s = *sp;
	for (seed_session *h = s->oldest, *next; h; h = next) {
		next = h->newer;
		release(h);
		free(h);
	}
	free(s->bucket);
	free(s);
	*sp = NULL;
}

static void grow(seed_sessions *s)
{
	size_t nb = s->nbuckets * 2;
	seed_session **b = seed_xcalloc(nb, sizeof *b);
	for (seed_session *h = s->oldest; h; h = h->newer) {
		size_t i = hash(h->run, h->actor, h->env0) & (nb - 1);
		h->hnext = b[i];
		b[i] = h;
	}
	free(s->bucket);
	s->bucket = b;
	s->nbuckets = nb;
}

static bool same_layout(const seed_unroll_layout *a, const seed_unroll_layout *b)
{
	if (a->rows != b->rows || a->num_actions != b->num_actions || a->obs_dtype != b->obs_dtype ||
	    a->obs_rank != b->obs_rank || a->state_size != b->state_size || a->box != b->box ||
	    (a->frame_skip > 1 ? a->frame_skip : 1) != (b->frame_skip > 1 ? b->frame_skip : 1))
		return false;
	for (int i = 0; i < a->obs_rank; i++)
		if (a->obs_shape[i] != b->obs_shape[i])
			return false;
	return true;
}

/* The full layout of a session for frames of layout l, and its bytes
 * (0 when l is invalid). */
static size_t session_bytes(const seed_sessions *s, const seed_unroll_layout *l, seed_unroll_layout *full)
{
	*full = *l;
	full->T = s->o.unrolls ? s->o.T : 1;
	full->overlap = s->o.unrolls ? s->o.overlap : 1;
	size_t ub = seed_unroll_bytes(full); /* validates the layout either way */
	if (ub == 0)
		return 0;
	/* The answer: the actions, restart requests and their seeds twice (the
	 * arrays and the encoded frame) and the frame's fixed part; each row's
	 * env and assignment; the recurrent state. */
	size_t own =
	    sizeof(seed_session) + (3 * 4 + 2 + 2 * 8 + sizeof(seed_evo_row)) * (size_t)l->rows + 256;
	if (l->box) /* two answers of A floats a row, and the bounds */
		own += 2 * 4 * (size_t)l->rows * (size_t)l->num_actions + 8 * (size_t)l->num_actions;
	if (l->state_size > 0) /* its floats, and each row's reward and reset */
		own += (size_t)l->rows * ((size_t)l->state_size * sizeof(float) + 5);
	/* With unrolls, an unroll's worth of ended episodes: 25 bytes each. */
	size_t eps = 25 * (size_t)l->rows * (size_t)full->T;
	return s->o.unrolls ? own + ub + eps : own;
}

/* Free room for one more session of `need` bytes: evict the longest idle
 * sessions without a pending request. */
static int make_room(seed_sessions *s, size_t need, seed_err *err)
{
	seed_session *h = s->oldest;
	while (s->n + 1 > s->o.max_sessions || s->bytes + need > s->o.max_bytes) {
		while (h && h->pending)
			h = h->newer;
		if (!h)
			return seed_err_set(
			    err, -ENOSPC,
			    "%zu actor halves hold %zu bytes (bounds: %zu halves, %zu bytes) and every "
			    "one has a request waiting",
			    s->n, s->bytes, s->o.max_sessions, s->o.max_bytes);
		seed_session *next = h->newer;
		drop(s, h);
		s->evicted++;
		h = next;
	}
	return 0;
}

/* Build h's buffers for layout full. */
static int build(seed_sessions *s, seed_session *h, const seed_unroll_layout *full, size_t bytes,
                 seed_err *err)
{
	h->unroll = NULL;
	if (s->o.unrolls) {
		int rc = seed_unroll_new(&h->unroll, full, err);
		if (rc)
			return rc;
		/* Every env ends at most one episode per step. */
		size_t cap = (size_t)full->rows * (size_t)full->T;
		h->ep_env = seed_xmalloc(cap * sizeof *h->ep_env);
		h->ep_len = seed_xmalloc(cap * sizeof *h->ep_len);
		h->ep_ret = seed_xmalloc(cap * sizeof *h->ep_ret);
		h->ep_trunc = seed_xmalloc(cap);
		h->ep_gen = seed_xmalloc(cap * sizeof *h->ep_gen);
		h->ep_member = seed_xmalloc(cap * sizeof *h->ep_member);
		h->ep_cap = cap;
	}
	h->ep_n = 0;
	h->ep_evo = false;
	h->evo = seed_xcalloc((size_t)full->rows, sizeof *h->evo);
	h->layout = *full;
	h->obs_bytes = seed_dtype_size(full->obs_dtype);
	for (int i = 0; i < full->obs_rank; i++)
		h->obs_bytes *= (size_t)full->obs_shape[i];
	h->last_seq = -1;
	h->gaps = 0;
	h->pending = false;
	seed_buf_init(&h->reply);
	h->actions = seed_xcalloc((size_t)full->rows, sizeof *h->actions);
	h->reset = seed_xcalloc((size_t)full->rows, 1);
	h->reset_seed = seed_xcalloc((size_t)full->rows, sizeof *h->reset_seed);
	h->box_raw = h->box_act = h->low = h->high = NULL;
	if (full->box) {
		size_t na = (size_t)full->num_actions;
		h->box_raw = seed_xcalloc((size_t)full->rows * na, sizeof *h->box_raw);
		h->box_act = seed_xcalloc((size_t)full->rows * na, sizeof *h->box_act);
		h->low = seed_xcalloc(na, sizeof *h->low);
		h->high = seed_xcalloc(na, sizeof *h->high);
	}
	h->core = h->core_reward = NULL;
	h->core_reset = NULL;
	if (full->state_size > 0) {
		h->core = seed_xcalloc((size_t)full->rows * (size_t)full->state_size, sizeof *h->core);
		h->core_reward = seed_xcalloc((size_t)full->rows, sizeof *h->core_reward);
		h->core_reset = seed_xcalloc((size_t)full->rows, 1);
	}
	h->acted = false;
	h->env = seed_xmalloc((size_t)full->rows * sizeof *h->env);
	for (int b = 0; b < full->rows; b++)
		h->env[b] = h->env0 + b;
	h->bytes = bytes;
	s->bytes += bytes;
	return 0;
}

int seed_sessions_get(seed_sessions *s, uint32_t run, uint32_t actor, int32_t env0,
                      const seed_unroll_layout *l, double now, seed_session **out, seed_err *err)
{
	if (l->rows < 1 || env0 < 0 || (int64_t)env0 + l->rows - 1 > INT32_MAX)
		return seed_err_set(err, -EINVAL, "env0 %" PRId32 " and %d rows: environments past 2^31 - 1",
		                    env0, l->rows);
	seed_session *h = *chain(s, run, actor, env0);
	while (h && !(h->run == run && h->actor == actor && h->env0 == env0))
		h = h->hnext;
	int made = 0;
	if (!h || !same_layout(&h->layout, l)) {
		if (h && h->pending)
			return seed_err_set(
			    err, -EBUSY,
			    "actor %" PRIu32 " (run %" PRIu32 ", env0 %" PRId32
			    "): another layout (%d rows, %d actions) while a request of %d rows waits",
			    actor, run, env0, l->rows, l->num_actions, h->layout.rows);
		seed_unroll_layout full;
		size_t need = session_bytes(s, l, &full);
		if (need == 0) {
			/* Say why: seed_unroll_new refuses the same layouts
			 * (and allocates nothing then). */
			seed_unroll *u = NULL;
			int rc = seed_unroll_new(&u, &full, err);
			seed_unroll_free(&u);
			return rc ? rc : -EINVAL;
		}
		if (need > s->o.max_bytes)
			return seed_err_set(err, -E2BIG,
			                    "actor %" PRIu32 " (env0 %" PRId32
			                    "): %d rows would hold %zu bytes, more than "
			                    "the bound of %zu",
			                    actor, env0, l->rows, need, s->o.max_bytes);
		if (h)
			drop(s, h); /* remade: the old state is stale */
		int rc = make_room(s, need, err);
		if (rc)
			return rc;
		if (s->n + 1 > s->nbuckets / 4 * 3)
			grow(s);
		h = seed_xcalloc(1, sizeof *h);
		h->run = run;
		h->actor = actor;
		h->env0 = env0;
		rc = build(s, h, &full, need, err);
		if (rc) {
			free(h);
			return rc;
		}
		seed_session **c = chain(s, run, actor, env0);
		h->hnext = *c;
		*c = h;
		s->n++;
		push_newest(s, h);
		made = 1;
	} else {
		double dt = now - h->last_seen;
		h->interval = h->interval > 0 ? 0.75 * h->interval + 0.25 * dt : dt;
		unlink_idle(s, h);
		push_newest(s, h);
	}
	h->last_seen = now;
	*out = h;
	return made;
}

int seed_session_accept(seed_session *h, int64_t seq)
{
	if (h->pending)
		return seq == h->last_seq ? SEED_SESSION_WAITING : -EBUSY;
	if (seq == h->last_seq && h->reply.len)
		return SEED_SESSION_RESEND;
	/* The same seq without an answer kept: that request was never
	 * answered (refused), so this is no gap. */
	bool gap = h->last_seq >= 0 && seq != h->last_seq + 1 && seq != h->last_seq;
	h->last_seq = seq;
	if (!gap)
		return SEED_SESSION_STEP;
	h->gaps++;
	if (h->unroll)
		seed_unroll_restart(h->unroll);
	return SEED_SESSION_GAP;
}

size_t seed_sessions_expire(seed_sessions *s, double now)
{
	size_t n = 0;
	while (s->oldest && !s->oldest->pending && now - s->oldest->last_seen > s->o.idle_expiry) {
		drop(s, s->oldest);
		n++;
	}
	s->expired += (int64_t)n;
	return n;
}

size_t seed_sessions_expected(const seed_sessions *s, double now, double window)
{
	size_t n = 0;
	for (const seed_session *h = s->newest; h && now - h->last_seen <= window; h = h->older) {
		if (h->pending)
			continue;
		double silent = now - h->last_seen;
		if (h->interval > 0 ? silent <= 4 * h->interval : true)
			n++;
	}
	return n;
}

seed_session *seed_sessions_next(const seed_sessions *s, const seed_session *h)
{
	return h ? h->older : s->newest;
}

size_t seed_sessions_count(const seed_sessions *s)
{
	return s->n;
}

size_t seed_sessions_bytes(const seed_sessions *s)
{
	return s->bytes;
}

int64_t seed_sessions_evicted(const seed_sessions *s)
{
	return s->evicted;
}

int64_t seed_sessions_expired(const seed_sessions *s)
{
	return s->expired;
}
