/* seed/sessions.h: the inference server's state of every actor half.
 *
 * An actor steps its environments in halves (double buffering) and sends
 * one step frame per half; a half is known by (run, actor, env0).  Its
 * session holds what the server needs between two requests of that half:
 * the layout of its frames (K rows, the observation's dtype and shape, the
 * number of actions), the last sequence number and the last answer (to
 * answer a resent request again), whether a request of it is waiting in
 * the current batch, its unroll in progress (seed_unroll(3)), and the times
 * of its requests.
 *
 * Sessions live in a hash map (lookup O(1)) and on a list in the order of
 * their last request, so that the longest idle one is found at once: idle
 * expiry and eviction never scan.  Memory is bounded twice, by the number
 * of sessions and by their bytes: a new session evicts the longest idle
 * ones that have no request waiting until it fits, and is refused when it
 * cannot.
 *
 * Liveness: a half that has been answered is expected back within a few of
 * its own intervals between requests; a half silent for longer (a killed
 * actor) is not waited for by a batch, long before its idle expiry.
 *
 * Threads: a seed_sessions and its sessions belong to one thread.
 */
#ifndef SEED_SESSIONS_H
#define SEED_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/buf.h"
#include "seed/error.h"
#include "seed/evo_assign.h"
#include "seed/unroll.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_session {
	/* the key */
	uint32_t run, actor;
	int32_t env0;
	/* the frames' layout: rows = K; T and overlap are the sessions' */
	seed_unroll_layout layout;
	size_t obs_bytes; /* of one row */
	int64_t last_seq; /* -1: no request yet */
	double last_seen; /* time of the last request */
	double interval;  /* smoothed time between requests; 0: unknown yet */
	bool pending;     /* a request of this half waits in the batch */
	int64_t gaps;     /* requests that came after lost ones */
	seed_buf reply;   /* the last answer, for resent requests */
	int32_t *actions; /* (K): the last answer's actions (discrete) */
	/* A Box action space (layout.box; else NULL): the last answer's raw
	 * samples and the actions sent for them, mapped into the bounds of
	 * the half's environments (from its latest request). */
	float *box_raw, *box_act; /* (K, A) */
	float *low, *high;        /* (A) */
	uint8_t *reset;           /* (K): the last answer's restart requests */
	int64_t *reset_seed;      /* (K): their seeds (population mode; 0: none) */
	int32_t *env;             /* (K): env0 + row, each row's environment */
	seed_unroll *unroll;      /* the unroll in progress; NULL without unrolls */
	/* A recurrent agent's state of each row (layout.state_size = S > 0
	 * floats a row, zeros when the session is made; NULL when S is 0), and
	 * whether the half has been answered since (h->actions then holds the
	 * actions taken, each row's previous action). */
	float *core;         /* (K, S) */
	float *core_reward;  /* (K): the reward that came with the waiting request */
	uint8_t *core_reset; /* (K): its rows that start an episode */
	bool acted;
	/* With unrolls, the episodes that ended since the half's last unroll
	 * frame, gathered to go out in one episode frame with the next one:
	 * ep_n of ep_cap (K * T: one unroll's worth) */
	int32_t *ep_env, *ep_len; /* (ep_cap) */
	float *ep_ret;            /* (ep_cap) */
	uint8_t *ep_trunc;        /* (ep_cap) */
	size_t ep_n, ep_cap;
	/* ... and, for a population server, each one's generation and member
	 * (ep_evo: the gathered episodes carry them) */
	int64_t *ep_gen;    /* (ep_cap) */
	int32_t *ep_member; /* (ep_cap) */
	bool ep_evo;
	/* A population server's state of each row (seed_evo_assign(3)),
	 * zeroed when the session is made. */
	seed_evo_row *evo; /* (K) */
	size_t bytes;      /* memory this session holds */
	/* private: hash chain and idle order */
	struct seed_session *hnext, *older, *newer;
} seed_session;

typedef struct seed_sessions_opts {
	bool unrolls;       /* keep an unroll per session */
	int T, overlap;     /* of the unrolls */
	double idle_expiry; /* seconds of silence before a session is forgotten */
	size_t max_sessions;
	size_t max_bytes; /* of all sessions together */
	/* Called with a session about to be forgotten (expired, evicted, or
	 * remade for another layout; not by seed_sessions_free); NULL: none. */
	void (*dropped)(void *ctx, seed_session *h);
	void *ctx;
} seed_sessions_opts;

typedef struct seed_sessions seed_sessions;

/* Empty sessions with the given options (copied).  Errors: -EINVAL for an
 * option out of range (T or overlap with unrolls, a non-positive expiry or
 * bound).  Allocation failure aborts. */
int seed_sessions_new(seed_sessions **out, const seed_sessions_opts *o, seed_err *err);
/* Free s and every session (NULL is fine); *s becomes NULL. */
void seed_sessions_free(seed_sessions **s);

/* The session of (run, actor, env0), made for layout l (rows, num_actions,
 * the observation's dtype, rank and shape, state_size, the floats of
 * recurrent state a row, and frame_skip are read; T and overlap are the
 * sessions') if there is none, or remade if the half's layout changed (a
 * new state size: the agent changed, its old state is meaningless; a new
 * frame skip: its unroll's steps would count differently).  Marks it as heard from at now.  Returns 1 for a
 * new (or remade) session, 0 for a known one, with *out set; or -EBUSY   the half's layout changed while one
 * of its requests waits in the batch (its buffers are in use: nothing is changed); -E2BIG   the session alone
 * needs more than max_bytes; -ENOSPC  the bounds are reached and every session has a request waiting, so none
 * can be evicted; -EINVAL  l is not a valid layout; err says which and why.  Never invalidates a pending
 * session. */
int seed_sessions_get(seed_sessions *s, uint32_t run, uint32_t actor, int32_t env0,
                      const seed_unroll_layout *l, double now, seed_session **out, seed_err *err);

/* What a request with sequence number seq is to session h. */
typedef enum seed_session_verdict {
	SEED_SESSION_STEP = 0,   /* the next step: act on it */
	SEED_SESSION_GAP = 1,    /* a step after lost ones: act on it; the unroll restarted */
	SEED_SESSION_RESEND = 2, /* the last request again: send h->reply again */
	SEED_SESSION_WAITING = 3 /* the request waiting in the batch, resent: it will be answered */
} seed_session_verdict;

/* Classify a request of h by its seq and update h (last_seq, gaps, the
 * unroll restarted on a gap).  -EBUSY for a new seq while a request of h is
 * still pending (a peer with two requests in flight for one half). */
int seed_session_accept(seed_session *h, int64_t seq);

/* Forget the sessions silent for more than the idle expiry at now (never
 * one with a request pending).  Returns how many; cost: the number
 * forgotten. */
size_t seed_sessions_expire(seed_sessions *s, double now);

/* How many sessions without a request pending the batch should still wait
 * for at now: those heard from within four of their own intervals (within
 * `window` seconds while their interval is unknown), and never one silent
 * for more than window.  Cost: the sessions heard from within window. */
size_t seed_sessions_expected(const seed_sessions *s, double now, double window);

/* The sessions one by one, from the most recently heard from: the first
 * for h NULL, else the one after h; NULL after the last.  h must be a
 * session of s; dropping or getting sessions changes the order. */
seed_session *seed_sessions_next(const seed_sessions *s, const seed_session *h);

/* Counts: sessions, their bytes, evictions (sessions forgotten to make room)
 * and expiries so far. */
size_t seed_sessions_count(const seed_sessions *s);
size_t seed_sessions_bytes(const seed_sessions *s);
int64_t seed_sessions_evicted(const seed_sessions *s);
int64_t seed_sessions_expired(const seed_sessions *s);

#ifdef __cplusplus
}
#endif
#endif
