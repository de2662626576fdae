/* tests/unit/net/test_chan.c: seed_chan, the endpoints that carry frames.
 *
 * What seed_chan(3) promises, case by case: the endpoint grammar (URLs,
 * '@' and '>', the default direction, files and '-'), messages over
 * inproc:// and ipc://, ROUTER ids, recorded files read back to their end,
 * timeouts, the stop flag, high-water marks, and bad input (endpoints that
 * are refused with a message naming them, messages that are not one part).
 * A channel does not look inside the bytes it moves; where a file needs
 * whole msgpack objects, the bytes are written out by hand.
 *
 * Timing cases allow generous margins (a loaded machine runs late, never
 * early): a timeout must not end before its time, nor hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/chan.h"
#include "seed/clock.h"
#include "seed/error.h"
#include "tap.h"
#include "tmpdir.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static void *ctx;
static const char *dir;

/* Three msgpack objects: {"a": 1}, the string "hi", and a 300-byte bin
 * (bin 16: 0xc5, big-endian length, bytes). */
static const unsigned char obj_map[] = {0x81, 0xa1, 'a', 0x01};
static const unsigned char obj_str[] = {0xa2, 'h', 'i'};
static unsigned char obj_bin[3 + 300];

static void make_bin(void)
{
	obj_bin[0] = 0xc5;
	obj_bin[1] = 300 >> 8;
	obj_bin[2] = 300 & 0xff;
	for (int i = 0; i < 300; i++)
		obj_bin[3 + i] = (unsigned char)i;
}

static bool msg_is(const seed_chan_msg *m, const void *data, size_t len)
{
	return m->len == len && (len == 0 || memcmp(m->data, data, len) == 0);
}

/* ---- the endpoint grammar --------------------------------------------- */

/* Endpoints that must be refused: the code, and words the message must
 * hold (the endpoint itself, and what was wrong). */
static const struct bad_endpoint {
	const char *name;
	seed_chan_kind kind;
	const char *endpoint; /* "DIR/" is replaced by the scratch directory */
	bool with_ctx;
	int code;
	const char *words[2];
} bad_endpoints[] = {
    {"empty endpoint", SEED_CHAN_PULL, "", true, -EINVAL, {"empty endpoint", NULL}},
    {"@ before a file", SEED_CHAN_PULL, "@unrolls.frames", true, -EINVAL, {"@unrolls.frames", "go before"}},
    {"> before -", SEED_CHAN_PUSH, ">-", true, -EINVAL, {">-", "go before"}},
    {"@ alone", SEED_CHAN_PULL, "@", true, -EINVAL, {"go before", NULL}},
    {"unknown transport",
     SEED_CHAN_PULL,
     "udp://127.0.0.1:5000",
     true,
     -EINVAL,
     {"udp://127.0.0.1:5000", "unknown transport"}},
    {"@ before an unknown transport", SEED_CHAN_PULL, "@udp://x", true, -EINVAL, {"@udp://x", "go before"}},
    {"a URL without a context",
     SEED_CHAN_PULL,
     "tcp://127.0.0.1:5000",
     false,
     -EINVAL,
     {"tcp://127.0.0.1:5000", "no ZeroMQ context"}},
    {"a file for a ROUTER", SEED_CHAN_ROUTER, "DIR/r.frames", true, -EINVAL, {"r.frames", "request/reply"}},
    {"- for a DEALER", SEED_CHAN_DEALER, "-", true, -EINVAL, {"-", "request/reply"}},
    {"a file that is not there",
     SEED_CHAN_PULL,
     "DIR/missing.frames",
     true,
     -ENOENT,
     {"missing.frames", "No such file"}},
    {"a file in a directory that is not there",
     SEED_CHAN_PUSH,
     "DIR/no/such/dir/out.frames",
     true,
     -ENOENT,
     {"out.frames", "No such file"}},
    {"a TCP address without a port",
     SEED_CHAN_PULL,
     "@tcp://127.0.0.1",
     true,
     -EINVAL,
     {"cannot bind tcp://127.0.0.1", NULL}},
    {"a connect to a TCP address without a port",
     SEED_CHAN_PUSH,
     "tcp://127.0.0.1",
     true,
     -EINVAL,
     {"cannot connect to tcp://127.0.0.1", NULL}},
};

static const char *in_dir(const char *endpoint, char *buf, size_t size)
{
	if (strncmp(endpoint, "DIR/", 4) != 0)
		return endpoint;
	snprintf(buf, size, "%s/%s", dir, endpoint + 4);
	return buf;
}

static void run_bad_endpoints(void)
{
	for (size_t i = 0; i < LEN(bad_endpoints); i++) {
		const struct bad_endpoint *k = &bad_endpoints[i];
		char path[4096];
		const char *ep = in_dir(k->endpoint, path, sizeof path);
		seed_chan *c = (seed_chan *)&path; /* must stay as it is */
		seed_err err = {{0}};
		int rc = seed_chan_open(&c, k->with_ctx ? ctx : NULL, k->kind, ep, NULL, &err);
		CHECK_MSG(rc == k->code, "rc %d (%s), want %d", rc, seed_strerror(rc), k->code);
		CHECK(c == (seed_chan *)&path);
		for (int w = 0; w < 2; w++)
			if (k->words[w])
				CHECK_MSG(strstr(err.msg, k->words[w]) != NULL, "message \"%s\" lacks \"%s\"",
				          err.msg, k->words[w]);
		char name[160];
		snprintf(name, sizeof name, "refused: %s", k->name);
		tap_result(name);
	}
}

static void t_negative_hwm(void)
{
	seed_chan *c = NULL;
	seed_err err;
	seed_chan_opts o = {.bind = true, .hwm = -1};
	int rc = seed_chan_open(&c, ctx, SEED_CHAN_PUSH, "inproc://negative", &o, &err);
	CHECK_MSG(rc == -EINVAL, "rc %d", rc);
	CHECK(c == NULL);
	CHECK_MSG(strstr(err.msg, "inproc://negative") && strstr(err.msg, "high-water mark -1"),
	          "message \"%s\"", err.msg);
}

static void t_null_endpoint(void)
{
	seed_chan *c = NULL;
	seed_err err;
	CHECK(seed_chan_open(&c, ctx, SEED_CHAN_PULL, NULL, NULL, &err) == -EINVAL);
	CHECK(c == NULL);
	/* err may be NULL. */
	CHECK(seed_chan_open(&c, ctx, SEED_CHAN_PULL, "", NULL, NULL) == -EINVAL);
}

/* Whether name is bound by someone: a bind to it then fails. */
static bool inproc_bound(const char *url)
{
	void *s = zmq_socket(ctx, ZMQ_PULL);
	int rc = zmq_bind(s, url);
	int e = errno;
	zmq_close(s);
	return rc != 0 && e == EADDRINUSE;
}

/* Which way each spelling goes: '@' binds and '>' connects whatever
 * opts->bind says; without them opts->bind decides (connect for NULL). */
static const struct direction {
	const char *endpoint;
	int opts_bind; /* -1: opts NULL */
	bool binds;
	const char *url; /* what seed_chan_endpoint returns */
} directions[] = {
    {"inproc://d-plain", -1, false, "inproc://d-plain"},      {"inproc://d-opt", 1, true, "inproc://d-opt"},
    {"inproc://d-noopt", 0, false, "inproc://d-noopt"},       {"@inproc://d-at", -1, true, "inproc://d-at"},
    {"@inproc://d-at-over", 0, true, "inproc://d-at-over"},   {">inproc://d-gt", 1, false, "inproc://d-gt"},
    {">inproc://d-gt-null", -1, false, "inproc://d-gt-null"},
};

static void t_direction(void)
{
	for (size_t i = 0; i < LEN(directions); i++) {
		const struct direction *k = &directions[i];
		seed_chan_opts o = {.bind = k->opts_bind == 1};
		seed_chan *c = NULL;
		seed_err err;
		int rc =
		    seed_chan_open(&c, ctx, SEED_CHAN_PULL, k->endpoint, k->opts_bind < 0 ? NULL : &o, &err);
		CHECK_MSG(rc == 0, "%s: %s", k->endpoint, err.msg);
		if (rc)
			continue;
		CHECK(seed_chan_is_socket(c));
		CHECK(seed_chan_socket(c) != NULL);
		CHECK_MSG(strcmp(seed_chan_endpoint(c), k->url) == 0, "%s: endpoint %s", k->endpoint,
		          seed_chan_endpoint(c));
		CHECK_MSG(inproc_bound(k->url) == k->binds, "%s: %s", k->endpoint,
		          k->binds ? "did not bind" : "bound");
		seed_chan_close(&c);
		CHECK(c == NULL);
	}
}

static void t_bind_in_use(void)
{
	seed_chan *a = NULL, *b = NULL;
	seed_err err;
	CHECK(seed_chan_open(&a, ctx, SEED_CHAN_PULL, "@inproc://taken", NULL, &err) == 0);
	int rc = seed_chan_open(&b, ctx, SEED_CHAN_PULL, "@inproc://taken", NULL, &err);
	CHECK_MSG(rc == -EADDRINUSE, "rc %d", rc);
	CHECK(b == NULL);
	CHECK_MSG(strstr(err.msg, "cannot bind inproc://taken") != NULL, "message \"%s\"", err.msg);
	seed_chan_close(&a);
}

/* An ipc:// path longer than a socket address holds (108 bytes). */
static void t_ipc_path_too_long(void)
{
	char url[400];
	int n = snprintf(url, sizeof url, "@ipc://%s/", dir);
	memset(url + n, 'x', 150);
	url[n + 150] = '\0';
	seed_chan *c = NULL;
	seed_err err;
	int rc = seed_chan_open(&c, ctx, SEED_CHAN_PULL, url, NULL, &err);
	CHECK_MSG(rc == -ENAMETOOLONG, "rc %d (%s)", rc, seed_strerror(rc));
	CHECK(c == NULL);
	CHECK_MSG(strstr(err.msg, "cannot bind ipc://") && strstr(err.msg, "xxxxxxxx"), "message \"%s\"",
	          err.msg);
}

static void t_close_null(void)
{
	seed_chan *c = NULL;
	seed_chan_close(&c);
	seed_chan_close(NULL);
	CHECK(c == NULL);
}

/* ---- messages over sockets -------------------------------------------- */

/* A PUSH/PULL pair on url: PULL binds (opts) and PUSH connects. */
static bool pair(const char *url, seed_chan **in, seed_chan **out, const seed_chan_opts *in_opts,
                 const seed_chan_opts *out_opts)
{
	seed_err err;
	seed_chan_opts bind = {.bind = true};
	if (seed_chan_open(in, ctx, SEED_CHAN_PULL, url, in_opts ? in_opts : &bind, &err)) {
		printf("# %s: %s\n", url, err.msg);
		return false;
	}
	if (seed_chan_open(out, ctx, SEED_CHAN_PUSH, url, out_opts, &err)) {
		printf("# %s: %s\n", url, err.msg);
		seed_chan_close(in);
		return false;
	}
	return true;
}

static void push_pull_roundtrip(const char *url)
{
	seed_chan *in = NULL, *out = NULL;
	if (!pair(url, &in, &out, NULL, NULL)) {
		CHECK(!"pair opened");
		return;
	}
	CHECK(seed_chan_send(out, NULL, 0, obj_map, sizeof obj_map, false) == 0);
	CHECK(seed_chan_send(out, NULL, 0, obj_bin, sizeof obj_bin, false) == 0);
	CHECK(seed_chan_send(out, NULL, 0, "", 0, false) == 0);
	CHECK(seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false) == 0);
	seed_chan_msg m;
	seed_err err;
	CHECK(seed_chan_recv(in, &m, 5000, &err) == 0 && msg_is(&m, obj_map, sizeof obj_map) && m.idlen == 0);
	CHECK(seed_chan_recv(in, &m, 5000, &err) == 0 && msg_is(&m, obj_bin, sizeof obj_bin));
	CHECK(seed_chan_recv(in, &m, 5000, &err) == 0 && m.len == 0);
	CHECK(seed_chan_recv(in, &m, 5000, &err) == 0 && msg_is(&m, obj_str, sizeof obj_str));
	CHECK(seed_chan_recv(in, &m, 0, &err) == -EAGAIN);
	seed_chan_close(&out);
	seed_chan_close(&in);
}

static void t_push_pull_inproc(void)
{
	push_pull_roundtrip("inproc://roundtrip");
}

static void t_push_pull_ipc(void)
{
	char url[4200];
	snprintf(url, sizeof url, "ipc://%s/roundtrip.sock", dir);
	push_pull_roundtrip(url);
}

/* '@' and '>' over ipc, the connecting side first (ZeroMQ connects when
 * the binding side appears). */
static void t_ipc_connect_first(void)
{
	char bind[4200], conn[4200];
	snprintf(bind, sizeof bind, "@ipc://%s/late.sock", dir);
	snprintf(conn, sizeof conn, ">ipc://%s/late.sock", dir);
	seed_chan *in = NULL, *out = NULL;
	seed_err err;
	seed_chan_opts bind_opt = {.bind = true};
	CHECK(seed_chan_open(&out, ctx, SEED_CHAN_PUSH, conn, &bind_opt, &err) == 0);
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, bind, NULL, &err) == 0);
	if (in && out) {
		CHECK(seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false) == 0);
		seed_chan_msg m;
		CHECK(seed_chan_recv(in, &m, 5000, &err) == 0 && msg_is(&m, obj_str, sizeof obj_str));
	}
	seed_chan_close(&out);
	seed_chan_close(&in);
}

static void t_router_dealer(void)
{
	seed_chan *srv = NULL, *cli = NULL;
	seed_err err;
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "@inproc://rd", NULL, &err) == 0);
	CHECK(seed_chan_open(&cli, ctx, SEED_CHAN_DEALER, "inproc://rd", NULL, &err) == 0);
	if (!srv || !cli)
		goto out;
	CHECK(seed_chan_send(cli, NULL, 0, obj_map, sizeof obj_map, false) == 0);
	seed_chan_msg m;
	CHECK(seed_chan_recv(srv, &m, 5000, &err) == 0 && msg_is(&m, obj_map, sizeof obj_map));
	CHECK(m.idlen > 0);
	/* Answer that peer by its id. */
	CHECK(seed_chan_send(srv, m.id, m.idlen, obj_str, sizeof obj_str, false) == 0);
	seed_chan_msg r;
	CHECK(seed_chan_recv(cli, &r, 5000, &err) == 0 && msg_is(&r, obj_str, sizeof obj_str));
	CHECK(r.idlen == 0);
	/* A peer that is not there: an error, not silence (ROUTER_MANDATORY). */
	CHECK(seed_chan_send(srv, "nobody", 6, obj_str, sizeof obj_str, false) == -EHOSTUNREACH);
	CHECK(seed_chan_send(srv, "nobody", 6, obj_str, sizeof obj_str, true) == -EHOSTUNREACH);
out:
	seed_chan_close(&cli);
	seed_chan_close(&srv);
}

/* A message of two parts is not a frame: refused, and the next one comes. */
static void t_multipart_refused(void)
{
	seed_chan *in = NULL;
	seed_err err;
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, "@inproc://multi", NULL, &err) == 0);
	void *raw = zmq_socket(ctx, ZMQ_PUSH);
	zmq_connect(raw, "inproc://multi");
	zmq_send(raw, "one", 3, ZMQ_SNDMORE);
	zmq_send(raw, "two", 3, ZMQ_SNDMORE);
	zmq_send(raw, "three", 5, 0);
	zmq_send(raw, obj_str, sizeof obj_str, 0);
	seed_chan_msg m;
	int rc = seed_chan_recv(in, &m, 5000, &err);
	CHECK_MSG(rc == -SEED_EFRAME, "rc %d", rc);
	CHECK_MSG(strstr(err.msg, "inproc://multi") && strstr(err.msg, "multi-part"), "message \"%s\"",
	          err.msg);
	CHECK(seed_chan_recv(in, &m, 5000, &err) == 0 && msg_is(&m, obj_str, sizeof obj_str));
	zmq_close(raw);

	/* The same through a ROUTER: the sender's id still comes back. */
	seed_chan *srv = NULL;
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "@inproc://multi-r", NULL, &err) == 0);
	raw = zmq_socket(ctx, ZMQ_DEALER);
	zmq_setsockopt(raw, ZMQ_ROUTING_ID, "peer", 4);
	zmq_connect(raw, "inproc://multi-r");
	zmq_send(raw, "one", 3, ZMQ_SNDMORE);
	zmq_send(raw, "two", 3, 0);
	zmq_send(raw, obj_map, sizeof obj_map, 0);
	rc = seed_chan_recv(srv, &m, 5000, &err);
	CHECK_MSG(rc == -SEED_EFRAME, "rc %d", rc);
	CHECK(m.idlen == 4 && memcmp(m.id, "peer", 4) == 0);
	CHECK(seed_chan_recv(srv, &m, 5000, &err) == 0 && msg_is(&m, obj_map, sizeof obj_map));
	CHECK(m.idlen == 4 && memcmp(m.id, "peer", 4) == 0);
	zmq_close(raw);
	seed_chan_close(&srv);
	seed_chan_close(&in);
}

/* ---- timeouts and the stop flag --------------------------------------- */

static void t_recv_timeout(void)
{
	seed_chan *in = NULL;
	seed_err err;
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, "@inproc://quiet", NULL, &err) == 0);
	if (!in)
		return;
	seed_chan_msg m;
	double t0 = (seed_now_s() * 1e3);
	CHECK(seed_chan_recv(in, &m, 0, &err) == -EAGAIN);
	double t1 = (seed_now_s() * 1e3);
	CHECK_MSG(t1 - t0 < 500, "timeout 0 took %.0f ms", t1 - t0);
	CHECK(seed_chan_recv(in, &m, 250, &err) == -EAGAIN);
	double t2 = (seed_now_s() * 1e3);
	CHECK_MSG(t2 - t1 >= 240 && t2 - t1 < 2000, "timeout 250 took %.0f ms", t2 - t1);
	/* Not a multiple of the 100 ms slices the stop flag is polled in. */
	CHECK(seed_chan_recv(in, &m, 30, &err) == -EAGAIN);
	double t3 = (seed_now_s() * 1e3);
	CHECK_MSG(t3 - t2 >= 25 && t3 - t2 < 1000, "timeout 30 took %.0f ms", t3 - t2);
	seed_chan_close(&in);
}

/* Signals that interrupt the wait (a handler without SA_RESTART, as a
 * program's SIGCHLD or SIGWINCH may be) must not shorten a timeout. */
static volatile sig_atomic_t pinging;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *ping(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	struct timespec d = {0, 5 * 1000 * 1000};
	while (pinging) {
		pthread_kill(target, SIGUSR1);
		nanosleep(&d, NULL);
	}
	return NULL;
}

static void t_timeout_survives_signals(void)
{
	seed_chan *in = NULL;
	seed_err err;
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, "@inproc://signalled", NULL, &err) == 0);
	if (!in)
		return;
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	pthread_t self = pthread_self(), th;
	pinging = 1;
	pthread_create(&th, NULL, ping, &self);
	seed_chan_msg m;
	double t0 = (seed_now_s() * 1e3);
	int rc = seed_chan_recv(in, &m, 300, &err);
	double took = (seed_now_s() * 1e3) - t0;
	pinging = 0;
	pthread_join(th, NULL);
	sigaction(SIGUSR1, &old, NULL);
	CHECK_MSG(rc == -EAGAIN, "rc %d", rc);
	CHECK_MSG(took >= 290 && took < 3000, "timeout 300 under signals took %.0f ms", took);
	seed_chan_close(&in);
}

static volatile sig_atomic_t stop_flag;

static void *raise_stop(void *arg)
{
	struct timespec d = {0, 200 * 1000 * 1000};
	nanosleep(&d, NULL);
	stop_flag = 1;
	return arg;
}

/* A PUSH that binds, with no peer yet, cannot send: with dontwait -EAGAIN
 * at once, else it blocks until *stop, and then -EINTR. */
static void t_stop_ends_blocking_send(void)
{
	seed_chan *out = NULL;
	seed_err err;
	stop_flag = 0;
	seed_chan_opts o = {.stop = &stop_flag};
	o.bind = true;
	CHECK(seed_chan_open(&out, ctx, SEED_CHAN_PUSH, "inproc://no-one-there", &o, &err) == 0);
	if (!out)
		return;
	double t0 = (seed_now_s() * 1e3);
	CHECK(seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, true) == -EAGAIN);
	CHECK((seed_now_s() * 1e3) - t0 < 500);
	pthread_t th;
	pthread_create(&th, NULL, raise_stop, NULL);
	t0 = (seed_now_s() * 1e3);
	int rc = seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false);
	double took = (seed_now_s() * 1e3) - t0;
	pthread_join(th, NULL);
	CHECK_MSG(rc == -EINTR, "rc %d", rc);
	CHECK_MSG(took >= 150 && took < 3000, "the blocked send ended after %.0f ms", took);
	/* Already stopped: -EINTR without waiting. */
	t0 = (seed_now_s() * 1e3);
	CHECK(seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false) == -EINTR);
	CHECK((seed_now_s() * 1e3) - t0 < 500);
	seed_chan_close(&out);
}

static void t_stop_ends_blocking_recv(void)
{
	seed_chan *in = NULL;
	seed_err err;
	stop_flag = 0;
	seed_chan_opts o = {.bind = true, .stop = &stop_flag};
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, "inproc://wait-forever", &o, &err) == 0);
	if (!in)
		return;
	pthread_t th;
	pthread_create(&th, NULL, raise_stop, NULL);
	double t0 = (seed_now_s() * 1e3);
	seed_chan_msg m;
	int rc = seed_chan_recv(in, &m, -1, &err);
	double took = (seed_now_s() * 1e3) - t0;
	pthread_join(th, NULL);
	CHECK_MSG(rc == -EINTR, "rc %d", rc);
	CHECK_MSG(took >= 150 && took < 3000, "the blocked recv ended after %.0f ms", took);
	seed_chan_close(&in);
}

/* A ROUTER's POLLOUT says that some peer has room, not the one a reply is
 * for: a blocking send to a full peer, while another peer has room, must
 * wait without spinning, and go through once that peer reads. */
static double cpu_s(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static void *drain_later(void *sock)
{
	struct timespec d = {0, 300 * 1000 * 1000};
	nanosleep(&d, NULL);
	char b[8];
	while (zmq_recv(sock, b, sizeof b, ZMQ_DONTWAIT) >= 0)
		;
	return NULL;
}

static void t_router_full_peer(void)
{
	seed_chan *srv = NULL;
	seed_err err;
	stop_flag = 0;
	seed_chan_opts o = {.bind = true, .hwm = 1, .stop = &stop_flag};
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "inproc://full-peer", &o, &err) == 0);
	if (!srv)
		return;
	void *a = zmq_socket(ctx, ZMQ_DEALER), *b = zmq_socket(ctx, ZMQ_DEALER);
	int one = 1;
	zmq_setsockopt(a, ZMQ_RCVHWM, &one, sizeof one);
	zmq_setsockopt(a, ZMQ_ROUTING_ID, "A", 1);
	zmq_setsockopt(b, ZMQ_ROUTING_ID, "B", 1);
	zmq_connect(a, "inproc://full-peer");
	zmq_connect(b, "inproc://full-peer");
	zmq_send(a, "x", 1, 0);
	zmq_send(b, "x", 1, 0);
	seed_chan_msg m;
	CHECK(seed_chan_recv(srv, &m, 5000, &err) == 0);
	CHECK(seed_chan_recv(srv, &m, 5000, &err) == 0);
	int queued = 0;
	while (queued < 100 && seed_chan_send(srv, "A", 1, "y", 1, true) == 0)
		queued++;
	CHECK_MSG(queued > 0 && queued < 100, "%d queued for A", queued);

	/* Stopped while A stays full: -EINTR, and little CPU burnt meanwhile. */
	pthread_t th;
	pthread_create(&th, NULL, raise_stop, NULL);
	double c0 = cpu_s(), t0 = (seed_now_s() * 1e3);
	int rc = seed_chan_send(srv, "A", 1, "y", 1, false);
	double cpu = cpu_s() - c0, took = (seed_now_s() * 1e3) - t0;
	pthread_join(th, NULL);
	CHECK_MSG(rc == -EINTR, "rc %d", rc);
	CHECK_MSG(cpu < 0.5 * took / 1000, "%.3f s of CPU in %.3f s of waiting", cpu, took / 1000);

	/* A drains after a while: the blocked send then goes through. */
	stop_flag = 0;
	pthread_create(&th, NULL, drain_later, a);
	t0 = (seed_now_s() * 1e3);
	rc = seed_chan_send(srv, "A", 1, "z", 1, false);
	took = (seed_now_s() * 1e3) - t0;
	pthread_join(th, NULL);
	CHECK_MSG(rc == 0, "rc %d", rc);
	CHECK_MSG(took >= 250 && took < 3000, "the send waited %.0f ms", took);
	zmq_close(a);
	zmq_close(b);
	seed_chan_close(&srv);
}

/* ---- high-water marks and conflation ---------------------------------- */

/* How many messages a PUSH takes without a receive before it would block
 * (at most limit). */
static int fill(seed_chan *out, int limit)
{
	int n = 0;
	while (n < limit && seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, true) == 0)
		n++;
	return n;
}

/* seed_chan(3): a message may sit in the sender's queue and in the
 * receiver's, each up to its own high-water mark: with hwm H on both
 * sides, at least H and at most 2H are accepted; with 0, ZeroMQ's 1000. */
static void t_hwm(void)
{
	seed_chan *in = NULL, *out = NULL;
	seed_chan_opts ib = {.bind = true, .hwm = 4}, oc = {.hwm = 4};
	if (pair("inproc://hwm4", &in, &out, &ib, &oc)) {
		int n = fill(out, 10000);
		CHECK_MSG(n >= 4 && n <= 8, "hwm 4 took %d messages", n);
		/* Backpressure, not loss: every one of them arrives. */
		seed_chan_msg m;
		seed_err err;
		int got = 0;
		while (seed_chan_recv(in, &m, 100, &err) == 0)
			got++;
		CHECK_MSG(got == n, "%d sent, %d received", n, got);
		/* Room again once the receiver has drained the queues. */
		CHECK(fill(out, 10000) == n);
	}
	seed_chan_close(&out);
	seed_chan_close(&in);

	/* A PUSH that connects queues for the peer it waits for, a bounded
	 * number (its send mark, with inproc's receive side perhaps added on),
	 * then blocks. */
	seed_chan_opts c2 = {.hwm = 2};
	seed_err err;
	CHECK(seed_chan_open(&out, ctx, SEED_CHAN_PUSH, "inproc://hwm-later", &c2, &err) == 0);
	if (out) {
		int n = fill(out, 10000);
		CHECK_MSG(n >= 2 && n <= 4, "a connecting PUSH of hwm 2 took %d messages", n);
	}
	seed_chan_close(&out);

	seed_chan_opts db = {.bind = true};
	if (pair("inproc://hwm-default", &in, &out, &db, NULL)) {
		int n = fill(out, 10000);
		CHECK_MSG(n >= 1000 && n <= 2000, "ZeroMQ's default took %d messages", n);
	}
	seed_chan_close(&out);
	seed_chan_close(&in);
}

/* Publish until the subscriber sees something (a subscription takes a
 * moment to reach the publisher). */
static bool subscribed(seed_chan *pub, seed_chan *sub)
{
	seed_chan_msg m;
	seed_err err;
	for (int i = 0; i < 100; i++) {
		seed_chan_send(pub, NULL, 0, "w", 1, true);
		if (seed_chan_recv(sub, &m, 20, &err) == 0) {
			while (seed_chan_recv(sub, &m, 50, &err) == 0)
				;
			return true;
		}
	}
	return false;
}

static void pub_sub(bool conflate)
{
	seed_chan *pub = NULL, *sub = NULL;
	seed_err err;
	seed_chan_opts pb = {.bind = true}, so = {.conflate = conflate};
	const char *url = conflate ? "inproc://pub-conflate" : "inproc://pub-all";
	CHECK(seed_chan_open(&pub, ctx, SEED_CHAN_PUB, url, &pb, &err) == 0);
	CHECK(seed_chan_open(&sub, ctx, SEED_CHAN_SUB, url, &so, &err) == 0);
	if (!pub || !sub || !subscribed(pub, sub)) {
		CHECK(!"subscribed");
		goto out;
	}
	for (char v = '1'; v <= '5'; v++)
		CHECK(seed_chan_send(pub, NULL, 0, &v, 1, false) == 0);
	struct timespec d = {0, 100 * 1000 * 1000};
	nanosleep(&d, NULL);
	seed_chan_msg m;
	if (conflate) {
		/* Only the newest is kept. */
		CHECK(seed_chan_recv(sub, &m, 1000, &err) == 0 && msg_is(&m, "5", 1));
	} else {
		for (char v = '1'; v <= '5'; v++)
			CHECK(seed_chan_recv(sub, &m, 1000, &err) == 0 && msg_is(&m, &v, 1));
	}
	CHECK(seed_chan_recv(sub, &m, 50, &err) == -EAGAIN);
out:
	seed_chan_close(&sub);
	seed_chan_close(&pub);
}

static void t_sub_conflate(void)
{
	pub_sub(true);
}

static void t_sub_everything(void)
{
	pub_sub(false);
}

/* A conflating SUB drops multi-part messages (not frames) among those it
 * skips, and keeps the newest whole one even when one comes after it. */
static void t_sub_conflate_parts(void)
{
	seed_chan *pub = NULL, *sub = NULL;
	seed_err err;
	seed_chan_opts pb = {.bind = true}, so = {.conflate = 1};
	const char *url = "inproc://pub-conflate-parts";
	CHECK(seed_chan_open(&pub, ctx, SEED_CHAN_PUB, url, &pb, &err) == 0);
	CHECK(seed_chan_open(&sub, ctx, SEED_CHAN_SUB, url, &so, &err) == 0);
	if (!pub || !sub || !subscribed(pub, sub)) {
		CHECK(!"subscribed");
		goto out;
	}
	void *ps = seed_chan_socket(pub);
	CHECK(seed_chan_send(pub, NULL, 0, "1", 1, false) == 0);
	CHECK(zmq_send(ps, "x", 1, ZMQ_SNDMORE) == 1 && zmq_send(ps, "y", 1, 0) == 1);
	CHECK(seed_chan_send(pub, NULL, 0, "2", 1, false) == 0);
	CHECK(seed_chan_send(pub, NULL, 0, "3", 1, false) == 0);
	struct timespec d = {0, 100 * 1000 * 1000};
	nanosleep(&d, NULL);
	seed_chan_msg m;
	CHECK(seed_chan_recv(sub, &m, 1000, &err) == 0 && msg_is(&m, "3", 1));
	CHECK(seed_chan_send(pub, NULL, 0, "4", 1, false) == 0);
	CHECK(zmq_send(ps, "x", 1, ZMQ_SNDMORE) == 1 && zmq_send(ps, "y", 1, 0) == 1);
	nanosleep(&d, NULL);
	CHECK(seed_chan_recv(sub, &m, 1000, &err) == 0 && msg_is(&m, "4", 1));
	CHECK(seed_chan_recv(sub, &m, 50, &err) == -EAGAIN);
out:
	seed_chan_close(&sub);
	seed_chan_close(&pub);
}

/* ---- files and '-' ---------------------------------------------------- */

static void write_objects(seed_chan_kind kind, const char *path)
{
	seed_chan *out = NULL;
	seed_err err;
	CHECK(seed_chan_open(&out, NULL, kind, path, NULL, &err) == 0);
	if (!out)
		return;
	CHECK(!seed_chan_is_socket(out));
	CHECK(seed_chan_socket(out) == NULL);
	CHECK(strcmp(seed_chan_endpoint(out), path) == 0);
	CHECK(seed_chan_send(out, NULL, 0, obj_map, sizeof obj_map, false) == 0);
	CHECK(seed_chan_send(out, NULL, 0, obj_bin, sizeof obj_bin, true) == 0);
	CHECK(seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false) == 0);
	/* A sending file cannot receive. */
	seed_chan_msg m;
	CHECK(seed_chan_recv(out, &m, 0, &err) == -EBADF);
	seed_chan_close(&out);
}

static void read_objects(seed_chan_kind kind, const char *path)
{
	seed_chan *in = NULL;
	seed_err err;
	CHECK(seed_chan_open(&in, NULL, kind, path, NULL, &err) == 0);
	if (!in)
		return;
	seed_chan_msg m;
	CHECK(seed_chan_recv(in, &m, 0, &err) == 0 && msg_is(&m, obj_map, sizeof obj_map) && m.idlen == 0);
	CHECK(seed_chan_recv(in, &m, 0, &err) == 0 && msg_is(&m, obj_bin, sizeof obj_bin));
	CHECK(seed_chan_recv(in, &m, -1, &err) == 0 && msg_is(&m, obj_str, sizeof obj_str));
	/* The end, and it stays the end. */
	CHECK(seed_chan_recv(in, &m, 0, &err) == -SEED_EEOF);
	CHECK(seed_chan_recv(in, &m, 0, &err) == -SEED_EEOF);
	/* A receiving file cannot send. */
	CHECK(seed_chan_send(in, NULL, 0, obj_str, sizeof obj_str, false) == -EBADF);
	seed_chan_close(&in);
}

static void t_file_roundtrip(void)
{
	const char *path = pathf(dir, "push.frames");
	write_objects(SEED_CHAN_PUSH, path);
	/* msgpack is self-delimiting: the file is the bytes, back to back. */
	size_t len;
	char *bytes = read_bytes(path, &len);
	CHECK(bytes && len == sizeof obj_map + sizeof obj_bin + sizeof obj_str);
	CHECK(bytes && memcmp(bytes, obj_map, sizeof obj_map) == 0);
	free(bytes);
	read_objects(SEED_CHAN_PULL, path);
	/* PUB writes and SUB reads files just the same. */
	const char *p2 = pathf(dir, "pub.frames");
	write_objects(SEED_CHAN_PUB, p2);
	read_objects(SEED_CHAN_SUB, p2);
}

static void t_file_truncated_on_open(void)
{
	const char *path = pathf(dir, "again.frames");
	write_objects(SEED_CHAN_PUSH, path);
	seed_chan *out = NULL;
	seed_err err;
	CHECK(seed_chan_open(&out, NULL, SEED_CHAN_PUSH, path, NULL, &err) == 0);
	if (out)
		CHECK(seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false) == 0);
	seed_chan_close(&out);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size == (off_t)sizeof obj_str);
	mode_t mask = umask(0);
	umask(mask);
	CHECK_MSG((st.st_mode & 0777) == (0644 & ~mask), "mode %o", (unsigned)(st.st_mode & 0777));
}

static void t_file_not_msgpack(void)
{
	/* 0xc1 is the one byte msgpack never uses. */
	const char *junk = pathf(dir, "junk.frames");
	write_bytes(junk, "\xc1\x01\x02", 3);
	seed_chan *in = NULL;
	seed_err err;
	CHECK(seed_chan_open(&in, NULL, SEED_CHAN_PULL, junk, NULL, &err) == 0);
	seed_chan_msg m;
	if (in) {
		int rc = seed_chan_recv(in, &m, 0, &err);
		CHECK_MSG(rc == -SEED_EFRAME, "rc %d", rc);
		CHECK_MSG(strstr(err.msg, "byte 0"), "message \"%s\"", err.msg);
	}
	seed_chan_close(&in);

	/* A whole object, then one cut short. */
	const char *cut = pathf(dir, "cut.frames");
	unsigned char bytes[sizeof obj_map + 10];
	memcpy(bytes, obj_map, sizeof obj_map);
	memcpy(bytes + sizeof obj_map, obj_bin, 10);
	write_bytes(cut, bytes, sizeof bytes);
	CHECK(seed_chan_open(&in, NULL, SEED_CHAN_PULL, cut, NULL, &err) == 0);
	if (in) {
		CHECK(seed_chan_recv(in, &m, 0, &err) == 0 && msg_is(&m, obj_map, sizeof obj_map));
		int rc = seed_chan_recv(in, &m, 0, &err);
		CHECK_MSG(rc == -SEED_EFRAME, "rc %d", rc);
		CHECK_MSG(strstr(err.msg, "truncated"), "message \"%s\"", err.msg);
	}
	seed_chan_close(&in);

	/* An empty file is a stream of no frames. */
	const char *empty = pathf(dir, "empty.frames");
	write_bytes(empty, "", 0);
	CHECK(seed_chan_open(&in, NULL, SEED_CHAN_PULL, empty, NULL, &err) == 0);
	if (in)
		CHECK(seed_chan_recv(in, &m, 0, &err) == -SEED_EEOF);
	seed_chan_close(&in);
}

/* '-' reads standard input and writes standard output, and closing the
 * channel leaves them open. */
static void t_dash(void)
{
	const char *inpath = pathf(dir, "stdin.frames");
	write_objects(SEED_CHAN_PUSH, inpath);
	int saved_in = dup(STDIN_FILENO);
	int fd = open(inpath, O_RDONLY);
	dup2(fd, STDIN_FILENO);
	close(fd);
	read_objects(SEED_CHAN_PULL, "-");
	CHECK(fcntl(STDIN_FILENO, F_GETFD) != -1);
	dup2(saved_in, STDIN_FILENO);
	close(saved_in);

	const char *outpath = pathf(dir, "stdout.frames");
	fflush(stdout);
	int saved_out = dup(STDOUT_FILENO);
	fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	seed_chan *out = NULL;
	seed_err err;
	int rc = seed_chan_open(&out, NULL, SEED_CHAN_PUSH, "-", NULL, &err);
	if (rc == 0) {
		seed_chan_send(out, NULL, 0, obj_str, sizeof obj_str, false);
		seed_chan_send(out, NULL, 0, obj_map, sizeof obj_map, false);
	}
	seed_chan_close(&out);
	bool open_after = fcntl(STDOUT_FILENO, F_GETFD) != -1;
	dup2(saved_out, STDOUT_FILENO);
	close(saved_out);
	CHECK(rc == 0);
	CHECK(open_after);
	size_t len;
	char *bytes = read_bytes(outpath, &len);
	CHECK(bytes && len == sizeof obj_str + sizeof obj_map &&
	      memcmp(bytes, obj_str, sizeof obj_str) == 0 &&
	      memcmp(bytes + sizeof obj_str, obj_map, sizeof obj_map) == 0);
	free(bytes);
}

int main(void)
{
	make_bin();
	dir = tmpdir_new();
	ctx = seed_chan_context();
	if (!ctx) {
		printf("Bail out! no ZeroMQ context\n");
		return 1;
	}
	run_bad_endpoints();
	TAP_RUN(t_null_endpoint);
	TAP_RUN(t_negative_hwm);
	TAP_RUN(t_direction);
	TAP_RUN(t_bind_in_use);
	TAP_RUN(t_ipc_path_too_long);
	TAP_RUN(t_close_null);
	TAP_RUN(t_push_pull_inproc);
	TAP_RUN(t_push_pull_ipc);
	TAP_RUN(t_ipc_connect_first);
	TAP_RUN(t_router_dealer);
	TAP_RUN(t_multipart_refused);
	TAP_RUN(t_recv_timeout);
	TAP_RUN(t_timeout_survives_signals);
	TAP_RUN(t_stop_ends_blocking_send);
	TAP_RUN(t_stop_ends_blocking_recv);
	TAP_RUN(t_router_full_peer);
	TAP_RUN(t_hwm);
	TAP_RUN(t_sub_conflate);
	TAP_RUN(t_sub_everything);
	TAP_RUN(t_sub_conflate_parts);
	TAP_RUN(t_file_roundtrip);
	TAP_RUN(t_file_truncated_on_open);
	TAP_RUN(t_file_not_msgpack);
	TAP_RUN(t_dash);
	seed_chan_context_free(&ctx);
	CHECK(ctx == NULL);
	tmpdir_remove(dir);
	return tap_done();
}
