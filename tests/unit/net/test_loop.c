/* tests/unit/net/test_loop.c: the poll loop (seed/loop.h) over inproc and ipc sockets
 * and a recorded file.
 *
 * Each case builds its own loop and channels and logs what the handlers
 * saw; the expected logs follow from the contract in seed/loop.h (readers
 * in registration order among the ready ones, timers earliest deadline
 * first, nothing early).  Bounds on lateness are loose (tens of ms) since
 * the machine may be busy, but tight enough to catch a loop that rounds
 * waits up to whole milliseconds or spins instead of sleeping.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "seed/chan.h"
#include "seed/clock.h"
#include "seed/loop.h"
#include "tap.h"
#include "tmpdir.h"

static void *ctx;

/* ---- a log of handler calls --------------------------------------------- */

typedef struct {
	char text[256]; /* one letter per call, '|' between turns */
	int64_t at[64]; /* when each timer call happened */
	int n;
} trace;

static void note(trace *t, char c)
{
	size_t len = strlen(t->text);
	if (len + 1 < sizeof t->text) {
		t->text[len] = c;
		t->text[len + 1] = '\0';
	}
}

typedef struct {
	trace *t;
	char letter;
	int frames, calls;
	int stop_after;  /* call seed_loop_stop at this many frames (0: never) */
	int fail_with;   /* return this instead of 0 */
	bool end_self;   /* end this reader after its first frame */
	seed_loop *loop; /* for end_self */
} reader_arg;

static int on_frame(seed_loop *l, seed_chan *c, void *p, seed_err *err)
{
	reader_arg *a = p;
	a->calls++;
	seed_chan_msg m;
	int rc = seed_chan_recv(c, &m, 0, err);
	if (rc < 0)
		return rc;
	a->frames++;
	note(a->t, a->letter);
	if (a->fail_with)
		return seed_err_set(err, a->fail_with, "reader %c refused frame %d", a->letter, a->frames);
	if (a->end_self)
		CHECK(seed_loop_reader_end(l, c) == 0);
	if (a->stop_after && a->frames == a->stop_after)
		seed_loop_stop(l);
	return 0;
}

typedef struct {
	trace *t;
	char letter;
	int fires;
	int cancel;                  /* a timer id to cancel when this one fires */
	int stop_at;                 /* seed_loop_stop at this many fires (0: never) */
	int fail_with;               /* returned, with no message */
	volatile sig_atomic_t *flag; /* set on the first fire */
} timer_arg;

static int on_timer(seed_loop *l, int id, void *p, seed_err *err)
{
	(void)id, (void)err;
	timer_arg *a = p;
	if (a->t->n < 64)
		a->t->at[a->t->n++] = seed_now_us();
	a->fires++;
	note(a->t, a->letter);
	if (a->cancel)
		CHECK(seed_loop_timer_end(l, a->cancel) == 0);
	if (a->flag)
		*a->flag = 1;
	if (a->stop_at && a->fires == a->stop_at)
		seed_loop_stop(l);
	return a->fail_with;
}

/* ---- channels ----------------------------------------------------------- */

static seed_chan *open_chan(seed_chan_kind kind, const char *ep, bool bind)
{
	seed_chan *c = NULL;
	seed_err err;
	seed_chan_opts o = {.bind = bind};
	if (seed_chan_open(&c, ctx, kind, ep, &o, &err) != 0)
		printf("# %s: %s\n", ep, err.msg);
	return c;
}

static void send_str(seed_chan *c, const char *s)
{
	CHECK(seed_chan_send(c, NULL, 0, s, strlen(s), false) == 0);
}

/* n PULL channels on inproc://loop-<tag>-<i>, with their PUSH peers. */
static void pairs(const char *tag, int n, seed_chan **pull, seed_chan **push)
{
	for (int i = 0; i < n; i++) {
		char ep[64];
		snprintf(ep, sizeof ep, "inproc://loop-%s-%d", tag, i);
		pull[i] = open_chan(SEED_CHAN_PULL, ep, true);
		push[i] = open_chan(SEED_CHAN_PUSH, ep, false);
	}
}

static void close_all(seed_chan **c, int n)
{
	for (int i = 0; i < n; i++)
		seed_chan_close(&c[i]);
}

/* Run turns without waiting until nothing more happens (inproc delivery
 * is immediate, but give it a few turns). */
static void settle(seed_loop *l, trace *t)
{
	for (int i = 0; i < 3; i++)
		CHECK(seed_loop_run_once(l, 1000, NULL) == 0);
	note(t, '|');
}

/* ---- cases -------------------------------------------------------------- */

/* Readers are called when their channel becomes ready, and only then; the
 * ready ones of one turn in registration order. */
static void t_readers_in_order_of_readiness(void)
{
	seed_chan *pull[3], *push[3];
	pairs("ready", 3, pull, push);
	trace t = {0};
	reader_arg a[3] = {{.t = &t, .letter = 'a'}, {.t = &t, .letter = 'b'}, {.t = &t, .letter = 'c'}};
	seed_loop *l;
	CHECK(seed_loop_new(&l, NULL) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(seed_loop_reader(l, pull[i], on_frame, &a[i], NULL) == 0);
	CHECK(seed_loop_run_once(l, 0, NULL) == 0); /* nothing ready */
	send_str(push[2], "1");
	settle(l, &t);
	send_str(push[0], "2");
	settle(l, &t);
	send_str(push[1], "3");
	send_str(push[2], "4");
	send_str(push[0], "5");
	CHECK(seed_loop_run_once(l, 100000, NULL) == 0);
	note(&t, '|');
	/* Two frames waiting on one channel: one per turn. */
	send_str(push[1], "6");
	send_str(push[1], "7");
	CHECK(seed_loop_run_once(l, 100000, NULL) == 0);
	note(&t, '|');
	settle(l, &t);
	CHECK_MSG(strcmp(t.text, "c|a|abc|b|b|") == 0, "log %s", t.text);
	seed_loop_free(&l);
	CHECK(l == NULL);
	close_all(pull, 3);
	close_all(push, 3);
}

/* Over ipc: a handler's seed_loop_stop ends seed_loop_run with 0, leaving
 * the frames not taken for the next run. */
static void t_reader_ipc_stop(void)
{
	const char *dir = tmpdir_new();
	char ep[4200];
	snprintf(ep, sizeof ep, "ipc://%s/sock", dir);
	seed_chan *pull = open_chan(SEED_CHAN_PULL, ep, true), *push = open_chan(SEED_CHAN_PUSH, ep, false);
	trace t = {0};
	reader_arg a = {.t = &t, .letter = 'x', .stop_after = 3};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	CHECK(seed_loop_reader(l, pull, on_frame, &a, NULL) == 0);
	send_str(push, "1");
	send_str(push, "2");
	send_str(push, "3");
	send_str(push, "4");
	seed_err err;
	CHECK(seed_loop_run(l, &err) == 0);
	CHECK(a.frames == 3);
	CHECK_MSG(strcmp(t.text, "xxx") == 0, "log %s", t.text);
	/* The fourth is still there for the next run. */
	a.stop_after = 4;
	CHECK(seed_loop_run(l, &err) == 0);
	CHECK(a.frames == 4);
	seed_loop_free(&l);
	seed_chan_close(&pull);
	seed_chan_close(&push);
	tmpdir_remove(dir);
}

/* One-shot timers fire earliest deadline first, whatever the order they
 * were added in, none before its deadline; the loop ends when none is
 * left. */
static void t_timers_in_deadline_order(void)
{
	trace t = {0};
	timer_arg a = {.t = &t, .letter = 'a'}, b = {.t = &t, .letter = 'b'}, c = {.t = &t, .letter = 'c'},
	          d = {.t = &t, .letter = 'd'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	int64_t t0 = seed_now_us();
	CHECK(seed_loop_timer(l, 30000, 1, on_timer, &a) > 0);
	CHECK(seed_loop_timer(l, 10000, 1, on_timer, &b) > 0);
	CHECK(seed_loop_timer(l, 20000, 1, on_timer, &c) > 0);
	CHECK(seed_loop_timer(l, 0, 1, on_timer, &d) > 0);
	CHECK(seed_loop_run(l, NULL) == 0);
	CHECK_MSG(strcmp(t.text, "dbca") == 0, "log %s", t.text);
	static const int64_t due[4] = {0, 10000, 20000, 30000};
	for (int i = 0; i < 4 && i < t.n; i++)
		CHECK_MSG(t.at[i] - t0 >= due[i], "timer %d fired at %lld us, due at %lld", i,
		          (long long)(t.at[i] - t0), (long long)due[i]);
	seed_loop_free(&l);
}

/* A repeating timer fires times times, one period apart (never early),
 * alongside one that repeats for ever until its handler stops the loop. */
static void t_timer_repeats(void)
{
	trace t = {0};
	timer_arg r = {.t = &t, .letter = 'r'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	int64_t t0 = seed_now_us();
	int id = seed_loop_timer(l, 2000, 3, on_timer, &r);
	CHECK(id > 0);
	CHECK(seed_loop_run(l, NULL) == 0);
	CHECK(r.fires == 3);
	for (int i = 0; i < t.n; i++)
		CHECK(t.at[i] - t0 >= 2000 * (i + 1));
	CHECK(seed_loop_timer_end(l, id) == -ENOENT); /* fired its last time */

	trace u = {0};
	timer_arg f = {.t = &u, .letter = 'f', .stop_at = 5}, o = {.t = &u, .letter = 'o'};
	CHECK(seed_loop_timer(l, 10000, 0, on_timer, &f) > 0);
	CHECK(seed_loop_timer(l, 25000, 1, on_timer, &o) > 0);
	CHECK(seed_loop_run(l, NULL) == 0);
	CHECK_MSG(strcmp(u.text, "ffofff") == 0, "log %s", u.text);
	seed_loop_free(&l);
}

/* A timer cancelled by another's handler never fires, even when both are
 * due in the same turn; cancelling twice or a made-up id is -ENOENT. */
static void t_timer_cancelled_from_handler(void)
{
	trace t = {0};
	timer_arg a = {.t = &t, .letter = 'a'}, b = {.t = &t, .letter = 'b'}, c = {.t = &t, .letter = 'c'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	/* a and b share a deadline; a was added first, so it fires first. */
	int ia = seed_loop_timer(l, 5000, 1, on_timer, &a);
	int ib = seed_loop_timer(l, 5000, 1, on_timer, &b);
	int ic = seed_loop_timer(l, 8000, 1, on_timer, &c);
	CHECK(ia > 0 && ib > 0 && ic > 0 && ia != ib && ib != ic);
	a.cancel = ib;
	/* Make sure both are due in one turn: wait past the deadline first. */
	struct timespec nap = {0, 10 * 1000 * 1000};
	nanosleep(&nap, NULL);
	CHECK(seed_loop_run(l, NULL) == 0);
	CHECK_MSG(strcmp(t.text, "ac") == 0, "log %s", t.text);
	CHECK(b.fires == 0);
	CHECK(seed_loop_timer_end(l, ib) == -ENOENT);
	CHECK(seed_loop_timer_end(l, 12345) == -ENOENT);
	CHECK(seed_loop_timer_end(l, 0) == -ENOENT);
	seed_loop_free(&l);
}

/* A timer of 300 us waits 300 us, not a millisecond: twenty periods of
 * 300 us take about 6 ms (a loop that rounds to whole milliseconds takes
 * 20 ms or more), and the thread sleeps meanwhile instead of spinning. */
static void t_timer_below_a_millisecond(void)
{
	trace t = {0};
	timer_arg r = {.t = &t, .letter = 'r'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	int64_t t0 = seed_now_us();
	CHECK(seed_loop_timer(l, 300, 20, on_timer, &r) > 0);
	CHECK(seed_loop_run(l, NULL) == 0);
	int64_t took = seed_now_us() - t0;
	CHECK(r.fires == 20);
	CHECK_MSG(took >= 6000 && took < 15000, "20 x 300 us took %lld us", (long long)took);
	for (int i = 0; i < t.n; i++)
		CHECK(t.at[i] - t0 >= 300 * (i + 1));

	/* 50 ms of waiting costs (nearly) no CPU time. */
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	CHECK(seed_loop_timer(l, 50000, 1, on_timer, &r) > 0);
	CHECK(seed_loop_run(l, NULL) == 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	double cpu_ms = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-6;
	CHECK_MSG(cpu_ms < 10.0, "waiting 50 ms used %.1f ms of CPU", cpu_ms);
	seed_loop_free(&l);
}

/* run_once with a timeout and nothing ready returns after the timeout
 * (sub-millisecond too), having called nothing. */
static void t_run_once_timeout(void)
{
	seed_chan *pull[1], *push[1];
	pairs("once", 1, pull, push);
	trace t = {0};
	reader_arg a = {.t = &t, .letter = 'a'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, NULL) == 0);
	static const int64_t waits[] = {0, 400, 2500};
	for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
		int64_t t0 = seed_now_us();
		CHECK(seed_loop_run_once(l, waits[i], NULL) == 0);
		int64_t took = seed_now_us() - t0;
		CHECK_MSG(took >= waits[i] && took < waits[i] + 20000, "wait %lld us took %lld us",
		          (long long)waits[i], (long long)took);
	}
	CHECK(a.calls == 0);
	/* A stop from a handler shows as 1. */
	a.stop_after = 1;
	send_str(push[0], "x");
	CHECK(seed_loop_run_once(l, 100000, NULL) == 1);
	CHECK(seed_loop_run_once(l, 0, NULL) == 0); /* and is forgotten */
	seed_loop_free(&l);
	close_all(pull, 1);
	close_all(push, 1);
}

static volatile sig_atomic_t alarm_flag;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_flag = 1;
}

/* The stop flag ends the loop with -EINTR: set before the run (no handler
 * is called), set by a handler, or set by a signal while the loop sleeps
 * with nothing to wake it (it notices at once, not at some timeout). */
static void t_stop_flag(void)
{
	seed_chan *pull[1], *push[1];
	pairs("stop", 1, pull, push);
	trace t = {0};
	reader_arg a = {.t = &t, .letter = 'a'};
	volatile sig_atomic_t flag = 1;
	seed_loop *l;
	seed_loop_new(&l, &flag);
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, NULL) == 0);
	send_str(push[0], "x");
	CHECK(seed_loop_run(l, NULL) == -EINTR);
	CHECK(a.calls == 0);

	flag = 0;
	timer_arg tf = {.t = &t, .letter = 't', .flag = &flag};
	CHECK(seed_loop_timer(l, 1000, 0, on_timer, &tf) > 0);
	CHECK(seed_loop_run(l, NULL) == -EINTR);
	CHECK(tf.fires == 1);
	seed_loop_free(&l);

	seed_loop_new(&l, &alarm_flag);
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, NULL) == 0);
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 20000}};
	int64_t t0 = seed_now_us();
	setitimer(ITIMER_REAL, &it, NULL);
	/* The frame sent above was taken; nothing else will come. */
	CHECK(seed_loop_run(l, NULL) == -EINTR);
	int64_t took = seed_now_us() - t0;
	CHECK_MSG(took >= 20000 && took < 90000, "stopped %lld us after the signal was due", (long long)took);
	signal(SIGALRM, SIG_DFL);
	seed_loop_free(&l);
	close_all(pull, 1);
	close_all(push, 1);
}

/* A handler's error ends the loop with that code and the handler's
 * message; one without a message gets one naming the timer. */
static void t_handler_error_ends_loop(void)
{
	seed_chan *pull[2], *push[2];
	pairs("error", 2, pull, push);
	trace t = {0};
	reader_arg a = {.t = &t, .letter = 'a', .fail_with = -EPROTO}, b = {.t = &t, .letter = 'b'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, NULL) == 0);
	CHECK(seed_loop_reader(l, pull[1], on_frame, &b, NULL) == 0);
	send_str(push[0], "x");
	send_str(push[1], "y");
	struct timespec nap = {0, 5 * 1000 * 1000};
	nanosleep(&nap, NULL);
	seed_err err;
	CHECK(seed_loop_run(l, &err) == -EPROTO);
	CHECK_MSG(strcmp(err.msg, "reader a refused frame 1") == 0, "message %s", err.msg);
	CHECK(b.calls == 0); /* the turn ended at the error */
	seed_loop_free(&l);

	timer_arg ta = {.t = &t, .letter = 't', .fail_with = -EIO};
	seed_loop_new(&l, NULL);
	int id = seed_loop_timer(l, 100, 0, on_timer, &ta);
	CHECK(seed_loop_run(l, &err) == -EIO);
	char want[64];
	snprintf(want, sizeof want, "timer %d: ", id);
	CHECK_MSG(strncmp(err.msg, want, strlen(want)) == 0, "message %s", err.msg);
	CHECK(ta.fires == 1);
	seed_loop_free(&l);
	close_all(pull, 2);
	close_all(push, 2);
}

/* A recorded file is always ready until its end, which ends its reader
 * (not the loop: the loop ends because nothing is left). */
static void t_file_reader(void)
{
	const char *dir = tmpdir_new();
	char path[4200];
	snprintf(path, sizeof path, "%s/frames.msgpack", dir);
	/* Three msgpack objects: {"a": 1}, [1, 2], "hi". */
	static const unsigned char bytes[] = {0x81, 0xa1, 'a', 0x01, 0x92, 0x01, 0x02, 0xa2, 'h', 'i'};
	CHECK(write_bytes(path, bytes, sizeof bytes) == 0);
	seed_chan *f = open_chan(SEED_CHAN_PULL, path, false);
	trace t = {0};
	reader_arg a = {.t = &t, .letter = 'f'};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	CHECK(seed_loop_reader(l, f, on_frame, &a, NULL) == 0);
	seed_err err;
	CHECK(seed_loop_run(l, &err) == 0);
	CHECK(a.frames == 3);
	CHECK(a.calls == 4); /* the fourth saw the end */
	CHECK(seed_loop_reader_end(l, f) == -ENOENT);
	seed_loop_free(&l);
	seed_chan_close(&f);
	tmpdir_remove(dir);
}

/* Registration: a send-only socket or a second reader on one channel is
 * refused; a reader that ends itself gets no more frames; bad timers. */
static void t_registration(void)
{
	seed_chan *pull[1], *push[1];
	pairs("reg", 1, pull, push);
	trace t = {0};
	reader_arg a = {.t = &t, .letter = 'a', .end_self = true};
	seed_loop *l;
	seed_loop_new(&l, NULL);
	seed_err err;
	CHECK(seed_loop_reader(l, push[0], on_frame, &a, &err) == -EINVAL);
	CHECK(strstr(err.msg, "inproc://loop-reg-0") != NULL);
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, &err) == 0);
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, &err) == -EINVAL);
	CHECK(strstr(err.msg, "already") != NULL);
	send_str(push[0], "1");
	send_str(push[0], "2");
	CHECK(seed_loop_run(l, &err) == 0); /* ends: its only reader ended */
	CHECK(a.frames == 1);
	CHECK(seed_loop_reader_end(l, pull[0]) == -ENOENT);
	/* Registered again, it gets the second frame. */
	a.end_self = false;
	a.stop_after = 2;
	CHECK(seed_loop_reader(l, pull[0], on_frame, &a, &err) == 0);
	CHECK(seed_loop_run(l, &err) == 0);
	CHECK(a.frames == 2);
	timer_arg ta = {.t = &t, .letter = 't'};
	CHECK(seed_loop_timer(l, -1, 1, on_timer, &ta) == -EINVAL);
	CHECK(seed_loop_timer(l, 0, 0, on_timer, &ta) == -EINVAL);
	CHECK(seed_loop_timer(l, 0, 2, on_timer, &ta) == -EINVAL);
	CHECK(seed_loop_timer(l, 10, 1, NULL, &ta) == -EINVAL);
	seed_loop_free(&l);
	seed_loop_free(&l); /* NULL is fine */
	close_all(pull, 1);
	close_all(push, 1);

	seed_loop_new(&l, NULL);
	CHECK(seed_loop_run(l, NULL) == 0); /* nothing to wait for */
	seed_loop_free(&l);
}

int main(void)
{
	ctx = seed_chan_context();
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
	    {"readers in order of readiness", t_readers_in_order_of_readiness},
	    {"reader over ipc, stopped by its handler", t_reader_ipc_stop},
	    {"timers in deadline order", t_timers_in_deadline_order},
	    {"timers repeat", t_timer_repeats},
	    {"timer cancelled from a handler", t_timer_cancelled_from_handler},
	    {"timer below a millisecond, sleeping", t_timer_below_a_millisecond},
	    {"run once with a timeout", t_run_once_timeout},
	    {"stop flag", t_stop_flag},
	    {"handler error ends the loop", t_handler_error_ends_loop},
	    {"file reader until EOF", t_file_reader},
	    {"registration", t_registration},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tap_case_failed = 0;
		cases[i].fn();
		tap_result(cases[i].name);
	}
	seed_chan_context_free(&ctx);
	return tap_done();
}
