/* loop.c: the poll loop over channels and timers (see seed/loop.h).
 *
 * Invariants: readers[0..nreaders) are in registration order; an ended
 * reader stays in the table, not live, until the start of the next turn
 * (so indices stay put while a turn walks the table), when the table is
 * compacted and fds rebuilt: fds[j] is the ZMQ_FD of the j-th live socket
 * reader, its capacity that of readers.  A timer slot is free when its id is
 * 0; slots are reused, so a turn neither allocates nor frees.  A timer's
 * `turn` is the turn it was added or last fired in: it does not fire again
 * in that turn, which bounds each turn's work even for a handler that adds
 * timers due at once.
 */
#include "seed/loop.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "seed/buf.h"
#include "seed/clock.h"

/* How long one sleep may last while waiting for ever: the longest a stop
 * flag set just before the loop went to sleep can go unseen. */
#define SLICE_US 100000

typedef struct reader {
	seed_chan *c;
	void *sock; /* NULL: a file, always ready */
	seed_loop_reader_fn fn;
	void *arg;
	bool live;
	bool ready; /* in this turn */
} reader;

typedef struct timer {
	int id; /* 0: a free slot */
	int64_t deadline, period;
	unsigned left; /* fires left; 0: for ever */
	uint64_t seq;  /* registration order, for equal deadlines */
	uint64_t turn; /* added or last fired in this turn */
	seed_loop_timer_fn fn;
	void *arg;
} timer;

struct seed_loop {
	volatile sig_atomic_t *stop;
	reader *readers;
	int nreaders;
	size_t cap_readers;
	struct pollfd *fds; /* [cap_readers] */
	int nfds;
	bool dirty; /* a reader ended since the last compaction */
	timer *timers;
	int ntimers;       /* slots in use (some free) */
	size_t cap_timers; /* allocated */
	int last_id;
	uint64_t seq, turn;
	bool stopping; /* a handler called seed_loop_stop */
};

int seed_loop_new(seed_loop **out, volatile sig_atomic_t *stop)
{
	seed_loop *l = seed_xcalloc(1, sizeof *l);
	l->stop = stop;
	*out = l;
	return 0;
}

void seed_loop_free(seed_loop **lp)
{
	if (!lp || !*lp)
		return;
	seed_loop *l = *lp;
	free(l->readers);
	free(l->fds);
	free(l->timers);
	free(l);
	*lp = NULL;
}

static reader *find_reader(seed_loop *l, const seed_chan *c)
{
	for (int i = 0; i < l->nreaders; i++)
		if (l->readers[i].live && l->readers[i].c == c)
			return &l->readers[i];
	return NULL;
}

int seed_loop_reader(seed_loop *l, seed_chan *c, seed_loop_reader_fn fn, void *arg, seed_err *err)
{
	if (!c || !fn)
		return seed_err_set(err, -EINVAL, "seed_loop_reader: no channel or no handler");
	if (find_reader(l, c))
		return seed_err_set(err, -EINVAL, "%s: already has a reader in this loop",
		                    seed_chan_endpoint(c));
	void *sock = seed_chan_socket(c);
	if (sock) {
		int type;
		size_t len = sizeof type;
		if (zmq_getsockopt(sock, ZMQ_TYPE, &type, &len) != 0)
			return seed_err_set(err, -errno, "%s: %s", seed_chan_endpoint(c),
			                    zmq_strerror(errno));
		if (type == ZMQ_PUSH || type == ZMQ_PUB)
			return seed_err_set(err, -EINVAL, "%s: a send-only channel cannot have a reader",
			                    seed_chan_endpoint(c));
	}
	/* readers and fds grow together: one capacity */
	size_t cap = l->cap_readers, need = (size_t)l->nreaders + 1;
	l->readers = seed_xgrow(l->readers, &cap, need, sizeof *l->readers);
	l->fds = seed_xgrow(l->fds, &l->cap_readers, need, sizeof *l->fds);
	l->readers[l->nreaders++] = (reader){c, sock, fn, arg, true, false};
	l->dirty = true; /* fds gets its descriptor at the next compaction */
	return 0;
}

int seed_loop_reader_end(seed_loop *l, seed_chan *c)
{
	reader *r = find_reader(l, c);
	if (!r)
		return -ENOENT;
	r->live = false;
	l->dirty = true;
	return 0;
}

/* Drop ended readers and rebuild fds from the live socket readers. */
static int compact(seed_loop *l, seed_err *err)
{
	int n = 0;
	l->nfds = 0;
	for (int i = 0; i < l->nreaders; i++) {
		reader r = l->readers[i];
		if (!r.live)
			continue;
		l->readers[n++] = r;
		if (r.sock) {
			int fd;
			size_t len = sizeof fd;
			if (zmq_getsockopt(r.sock, ZMQ_FD, &fd, &len) != 0)
				return seed_err_set(err, -errno, "%s: %s", seed_chan_endpoint(r.c),
				                    zmq_strerror(errno));
			l->fds[l->nfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
	}
	l->nreaders = n;
	l->dirty = false;
	return 0;
}

int seed_loop_timer(seed_loop *l, int64_t delay_us, unsigned times, seed_loop_timer_fn fn, void *arg)
{
	if (delay_us < 0 || (delay_us == 0 && times != 1) || !fn)
		return -EINVAL;
	timer *t = NULL;
	for (int i = 0; i < l->ntimers && !t; i++)
		if (!l->timers[i].id)
			t = &l->timers[i];
	if (!t) {
		l->timers = seed_xgrow(l->timers, &l->cap_timers, (size_t)l->ntimers + 1, sizeof *l->timers);
		t = &l->timers[l->ntimers++];
		t->id = 0; /* free until filled in below (the id search reads it) */
	}
	/* The next id that no pending timer has (ids wrap after INT_MAX). */
	int id = l->last_id;
	for (bool taken = true; taken;) {
		id = id == INT_MAX ? 1 : id + 1;
		taken = false;
		for (int i = 0; i < l->ntimers && !taken; i++)
			taken = l->timers[i].id == id;
	}
	l->last_id = id;
	*t = (timer){id, seed_now_us() + delay_us, delay_us, times, l->seq++, l->turn, fn, arg};
	return id;
}

int seed_loop_timer_end(seed_loop *l, int id)
{
	if (id <= 0)
		return -ENOENT;
	for (int i = 0; i < l->ntimers; i++)
		if (l->timers[i].id == id) {
			l->timers[i].id = 0;
			return 0;
		}
	return -ENOENT;
}

void seed_loop_stop(seed_loop *l)
{
	l->stopping = true;
}

static bool stopped(const seed_loop *l)
{
	return l->stop && *l->stop;
}

/* Mark the ready readers; returns how many, or -errno. */
static int check_ready(seed_loop *l, seed_err *err)
{
	int n = 0;
	for (int i = 0; i < l->nreaders; i++) {
		reader *r = &l->readers[i];
		r->ready = false;
		if (!r->live)
			continue;
		if (!r->sock) {
			r->ready = true;
		} else {
			int ev;
			size_t len = sizeof ev;
			if (zmq_getsockopt(r->sock, ZMQ_EVENTS, &ev, &len) != 0)
				return seed_err_set(err, -errno, "%s: %s", seed_chan_endpoint(r->c),
				                    zmq_strerror(errno));
			r->ready = (ev & ZMQ_POLLIN) != 0;
		}
		n += r->ready;
	}
	return n;
}

/* Wait until a reader is ready, *stop, or the clock reaches until (-1:
 * never).  Returns the number of ready readers (0 at the deadline), -EINTR
 * or -errno. */
static int wait_ready(seed_loop *l, int64_t until, seed_err *err)
{
	for (;;) {
		int n = check_ready(l, err);
		if (n != 0)
			return n;
		int64_t left = SLICE_US;
		if (until >= 0) {
			left = until - seed_now_us();
			if (left <= 0)
				return 0;
			if (left > SLICE_US)
				left = SLICE_US;
		}
		struct timespec ts = {(time_t)(left / 1000000), (long)(left % 1000000) * 1000};
		if (ppoll(l->fds, (nfds_t)l->nfds, &ts, NULL) < 0 && errno != EINTR)
			return seed_err_set(err, -errno, "ppoll: %s", strerror(errno));
		if (stopped(l))
			return -EINTR;
	}
}

/* The pending timer that fires next in this turn at time now, or NULL. */
static timer *next_due(seed_loop *l, int64_t now)
{
	timer *best = NULL;
	for (int i = 0; i < l->ntimers; i++) {
		timer *t = &l->timers[i];
		if (!t->id || t->turn == l->turn || t->deadline > now)
			continue;
		if (!best || t->deadline < best->deadline ||
		    (t->deadline == best->deadline && t->seq < best->seq))
			best = t;
	}
	return best;
}

static int handler_failed(int rc, seed_err *err, const char *what, const char *name)
{
	if (err && !err->msg[0])
		seed_err_set(err, rc, "%s %s: %s", what, name, seed_strerror(rc));
	return rc;
}

int seed_loop_run_once(seed_loop *l, int64_t timeout_us, seed_err *err)
{
	seed_err local;
	if (!err)
		err = &local;
	l->stopping = false;
	if (stopped(l))
		return -EINTR;
	if (l->dirty) {
		int rc = compact(l, err);
		if (rc < 0)
			return rc;
	}
	l->turn++;

	int64_t now = seed_now_us(), until = timeout_us < 0 ? -1 : now + timeout_us;
	for (int i = 0; i < l->ntimers; i++)
		if (l->timers[i].id && (until < 0 || l->timers[i].deadline < until))
			until = l->timers[i].deadline;
	int rc = wait_ready(l, until, err);
	if (rc < 0)
		return rc;

	/* Readers, in registration order; nreaders may grow meanwhile (a
	 * handler adding one), the new ones are not ready in this turn. */
	for (int i = 0, n = l->nreaders; i < n; i++) {
		reader *r = &l->readers[i];
		if (!r->live || !r->ready)
			continue;
		seed_chan *c = r->c;
		err->msg[0] = '\0';
		rc = r->fn(l, c, r->arg, err);
		if (rc == -SEED_EEOF)
			seed_loop_reader_end(l, c);
		else if (rc < 0)
			return handler_failed(rc, err, "reader on", seed_chan_endpoint(c));
		if (l->stopping)
			return 1;
	}

	/* Timers due now, earliest first; a timer's slot is updated before its
	 * handler runs, which may add, cancel or reuse slots. */
	now = seed_now_us();
	for (timer *t; (t = next_due(l, now));) {
		int id = t->id;
		seed_loop_timer_fn fn = t->fn;
		void *arg = t->arg;
		t->turn = l->turn;
		if (t->left == 1) {
			t->id = 0;
		} else {
			if (t->left)
				t->left--;
			t->deadline += t->period;
			if (t->deadline <= now)
				t->deadline = now + t->period;
		}
		err->msg[0] = '\0';
		rc = fn(l, id, arg, err);
		if (rc < 0) {
			char name[16];
			snprintf(name, sizeof name, "%d", id);
			return handler_failed(rc, err, "timer", name);
		}
		if (l->stopping)
			return 1;
	}
	return 0;
}

/* Whether anything is left to wait for. */
static bool busy(const seed_loop *l)
{
	for (int i = 0; i < l->nreaders; i++)
		if (l->readers[i].live)
			return true;
	for (int i = 0; i < l->ntimers; i++)
		if (l->timers[i].id)
			return true;
	return false;
}

int seed_loop_run(seed_loop *l, seed_err *err)
{
	while (busy(l)) {
		int rc = seed_loop_run_once(l, -1, err);
		if (rc != 0)
			return rc > 0 ? 0 : rc;
	}
	return 0;
}
