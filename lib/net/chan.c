/* chan.c: frame channels over ZeroMQ sockets or recorded-stream files.
 *
 * Invariants: a socket channel owns one zmq socket and one zmq_msg_t holding
 * the last received message (so seed_chan_msg can point into it without a
 * copy); a file channel owns an fd (not closed when it is stdin/stdout) and,
 * when reading, a seed_frame_reader.  Receiving waits the same way on both:
 * a non-blocking file that has nothing yet is polled within the timeout, as
 * a socket is.  A tcp:// or ipc:// socket also owns a monitor: a PAIR
 * socket on the socket's inproc:// monitor endpoint and the thread that
 * alone reads it, counting and saying failed handshakes, until close.
 */
#include "seed/chan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/frame.h"

#define MON_KINDS 4

struct seed_chan {
	seed_chan_kind kind;
	char *endpoint;
	volatile sig_atomic_t *stop;
	/* socket */
	void *sock;
	zmq_msg_t msg;
	bool msg_live;
	bool conflate; /* a SUB that keeps the newest message: take_newest */
	/* file */
	int fd;
	bool own_fd;
	seed_frame_reader *reader;
	/* the monitor of a tcp:// or ipc:// socket */
	void *mon;
	pthread_t mon_thread;
	bool mon_live, bound, curve;
	atomic_int mon_stop;
	atomic_uint_fast64_t refused;
	seed_chan_log_fn *log;
	void *log_arg;
	double last_log[MON_KINDS]; /* the monitor thread's own, per kind of failure */
	uint64_t unlogged[MON_KINDS];
};

/* Poll slices: how often blocking calls look at *stop. */
#define SLICE_MS 100

void *seed_chan_context(void)
{
	return zmq_ctx_new();
}

void seed_chan_context_free(void **ctx)
{
	if (ctx && *ctx) {
		zmq_ctx_term(*ctx);
		*ctx = NULL;
	}
}

static bool is_url(const char *s)
{
	return strncmp(s, "tcp://", 6) == 0 || strncmp(s, "ipc://", 6) == 0 ||
	       strncmp(s, "inproc://", 9) == 0;
}

static bool sends(seed_chan_kind k)
{
	return k == SEED_CHAN_PUSH || k == SEED_CHAN_PUB;
}

static int zkind(seed_chan_kind k)
{
	switch (k) {
	case SEED_CHAN_PUSH:
		return ZMQ_PUSH;
	case SEED_CHAN_PULL:
		return ZMQ_PULL;
	case SEED_CHAN_PUB:
		return ZMQ_PUB;
	case SEED_CHAN_SUB:
		return ZMQ_SUB;
	case SEED_CHAN_DEALER:
		return ZMQ_DEALER;
	case SEED_CHAN_ROUTER:
		return ZMQ_ROUTER;
	}
	return -1;
}

/* ---- the handshake monitor ---------------------------------------------------- */

#define HANDSHAKE_FAILED                                                                                     \
	(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |                        \
	 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)

/* Why a handshake failed, in words, for the side that saw it; the kind
 * (0-3) says which rate limit applies. */
static int describe(const seed_chan *c, unsigned event, uint32_t value, char *buf, size_t n)
{
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
		snprintf(buf, n, "%s (ZAP status %u)",
		         c->bound ? "its public key is not allowed"
		                  : "this client's public key is not allowed there",
		         (unsigned)value);
		return 0;
	}
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
	    value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
		if (c->bound)
			snprintf(buf, n,
			         c->curve ? "it has no CURVE keys (this socket requires CURVE)"
			                  : "it uses CURVE, this socket has no keys");
		else
			snprintf(buf, n,
			         c->curve ? "it does not use CURVE and this client does"
			                  : "it requires CURVE keys and this client has none");
		return 1;
	}
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC ||
	                                                     value == ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE)) {
		snprintf(buf, n, "the CURVE handshake failed (%s)",
		         c->bound ? "the client holds another server public key"
		                  : "the server's public key may be the wrong one");
		return 2;
	}
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && c->bound) {
		snprintf(buf, n,
		         "it closed the connection during the handshake (it may have no CURVE keys, or "
		         "another server public key)");
		return 3;
	}
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
		snprintf(buf, n, "it closed the connection during the handshake (%s)",
		         c->curve ? "it has no CURVE keys, or another key pair than the server's public key "
		                    "given here"
		                  : "it may require CURVE keys");
		return 3;
	}
	snprintf(buf, n, "the handshake failed (ZeroMQ event 0x%x, %s 0x%x)", event,
	         event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ? "errno" : "code", (unsigned)value);
	return 3;
}

/* Say one failure of kind (or, when why is NULL, the failures not said
 * yet), at most once every SEED_CHAN_LOG_INTERVAL seconds per kind. */
static void mon_say(seed_chan *c, int kind, const char *why)
{
	double now = seed_now_s();
	for (int k = why ? kind : 0; k <= (why ? kind : MON_KINDS - 1); k++) {
		if (!c->log || now - c->last_log[k] < SEED_CHAN_LOG_INTERVAL || c->unlogged[k] == 0)
			continue;
		char msg[640];
		if (!why)
			snprintf(msg, sizeof msg, "%s: %llu more failed handshake%s since the last message",
			         c->endpoint, (unsigned long long)c->unlogged[k],
			         c->unlogged[k] == 1 ? "" : "s");
		else if (c->bound)
			snprintf(msg, sizeof msg, "%s: refused a peer: %s", c->endpoint, why);
		else
			snprintf(msg, sizeof msg, "%s: the server did not accept this client: %s; retrying",
			         c->endpoint, why);
		c->log(c->log_arg, msg);
		c->unlogged[k] = 0;
		c->last_log[k] = now;
	}
}

static void *mon_main(void *arg)
{
	seed_chan *c = arg;
	while (!atomic_load(&c->mon_stop)) {
		zmq_pollitem_t it = {.socket = c->mon, .events = ZMQ_POLLIN};
		if (zmq_poll(&it, 1, 100) <= 0) {
			mon_say(c, 0, NULL);
			continue;
		}
		zmq_msg_t m;
		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, c->mon, 0) < 0) {
			zmq_msg_close(&m);
			continue;
		}
		uint16_t event = 0;
		uint32_t value = 0;
		if (zmq_msg_size(&m) >= 6) {
			memcpy(&event, zmq_msg_data(&m), 2);
			memcpy(&value, (char *)zmq_msg_data(&m) + 2, 4);
		}
		while (zmq_msg_more(&m) && zmq_msg_recv(&m, c->mon, 0) >= 0)
			; /* the endpoint part: ours, already known */
		zmq_msg_close(&m);
		if (!(event & HANDSHAKE_FAILED))
			continue;
		/* A peer that hangs up in the middle of a plain greeting (a
		 * program killed while connecting, a port scan) was refused
		 * by nobody: not counted, not said. */
		if (c->bound && !c->curve && event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
			continue;
		atomic_fetch_add(&c->refused, 1);
		/* A server's refusal by ZAP is said by the handler, which
		 * knows the client's address and key: count it only. */
		if (c->bound && event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
			continue;
		char why[256];
		int kind = describe(c, event, value, why, sizeof why);
		c->unlogged[kind]++;
		mon_say(c, kind, why);
	}
	return NULL;
}

/* Watch c->sock's handshakes (before it binds or connects, so that no
 * event is missed). */
static int start_monitor(seed_chan *c, void *ctx, seed_err *err)
{
	/* A name never used before in this process: a closed channel's
	 * monitor endpoint is unbound asynchronously, and the next channel
	 * may get the same address. */
	static atomic_uint serial;
	char ep[96];
	snprintf(ep, sizeof ep, "inproc://seed-chan-monitor-%ld-%u", (long)getpid(),
	         atomic_fetch_add(&serial, 1));
	if (zmq_socket_monitor(c->sock, ep, HANDSHAKE_FAILED) != 0)
		return seed_err_set(err, -errno, "%s: cannot monitor the socket: %s", c->endpoint,
		                    zmq_strerror(errno));
	c->mon = zmq_socket(ctx, ZMQ_PAIR);
	if (!c->mon || zmq_connect(c->mon, ep) != 0)
		return seed_err_set(err, -errno, "%s: cannot monitor the socket: %s", c->endpoint,
		                    zmq_strerror(errno));
	for (int k = 0; k < MON_KINDS; k++)
		c->last_log[k] = -1e9;
	int rc = pthread_create(&c->mon_thread, NULL, mon_main, c);
	if (rc)
		return seed_err_set(err, -rc, "%s: cannot start the monitor thread: %s", c->endpoint,
		                    strerror(rc));
	c->mon_live = true;
	return 0;
}

static int set_curve(seed_chan *c, const char *url, bool bind, const seed_chan_opts *o, seed_err *err)
{
	const seed_curve_key *k = o->curve_key;
	if (!seed_curve_available())
		return seed_err_set(err, -ENOTSUP, "%s: this libzmq was built without CURVE", url);
	if (strlen(k->pub) != SEED_CURVE_Z85_LEN || strlen(k->sec) != SEED_CURVE_Z85_LEN)
		return seed_err_set(err, -EINVAL,
		                    "%s: a CURVE socket needs a key pair (public and secret key)", url);
	int one = 1, rc = 0;
	if (bind) {
		rc |= zmq_setsockopt(c->sock, ZMQ_CURVE_SERVER, &one, sizeof one);
		rc |= zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, k->sec, SEED_CURVE_Z85_LEN);
		rc |= zmq_setsockopt(c->sock, ZMQ_ZAP_DOMAIN, "seed", 4);
	} else {
		const char *srv = o->curve_server;
		if (!srv || strlen(srv) != SEED_CURVE_Z85_LEN)
			return seed_err_set(
			    err, -EINVAL,
			    "%s: a CURVE client needs the server's public key (40 Z85 characters)", url);
		rc |= zmq_setsockopt(c->sock, ZMQ_CURVE_SERVERKEY, srv, SEED_CURVE_Z85_LEN);
		rc |= zmq_setsockopt(c->sock, ZMQ_CURVE_PUBLICKEY, k->pub, SEED_CURVE_Z85_LEN);
		rc |= zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, k->sec, SEED_CURVE_Z85_LEN);
	}
	if (rc)
		return seed_err_set(err, -errno, "%s: CURVE: %s", url, zmq_strerror(errno));
	c->curve = true;
	return 0;
}

static int open_socket(seed_chan *c, void *ctx, const char *url, bool bind, const seed_chan_opts *o,
                       seed_err *err)
{
	c->sock = zmq_socket(ctx, zkind(c->kind));
	if (!c->sock)
		return seed_err_set(err, -errno, "%s: %s", url, zmq_strerror(errno));
	int linger = 200;
	zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
	if (o && o->hwm > 0) {
		zmq_setsockopt(c->sock, ZMQ_SNDHWM, &o->hwm, sizeof o->hwm);
		zmq_setsockopt(c->sock, ZMQ_RCVHWM, &o->hwm, sizeof o->hwm);
	}
	if (c->kind == SEED_CHAN_SUB) {
		/* Conflating here, not with ZMQ_CONFLATE: libzmq 4.3.4's
		 * conflating pipe leaks a message when the I/O thread's write
		 * finds the reader holding the pipe's lock and another message
		 * comes before the next successful swap (its dbuffer_t::write
		 * overwrites the back buffer without closing it).  A small
		 * receive bound keeps a stalled reader from queueing many. */
		if (o && o->conflate) {
			c->conflate = true;
			int hwm = o->hwm > 0 ? o->hwm : SEED_CHAN_CONFLATE_HWM;
			zmq_setsockopt(c->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
		}
		zmq_setsockopt(c->sock, ZMQ_SUBSCRIBE, "", 0);
	}
	if (c->kind == SEED_CHAN_ROUTER) {
		/* Report unroutable replies instead of dropping them silently. */
		int one = 1;
		zmq_setsockopt(c->sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
	}
	int64_t max_msg = o && o->max_msg > 0 ? o->max_msg
	                  : sends(c->kind)    ? SEED_CHAN_SEND_ONLY_MAX_MSG
	                                      : -1;
	if (zmq_setsockopt(c->sock, ZMQ_MAXMSGSIZE, &max_msg, sizeof max_msg) != 0)
		return seed_err_set(err, -errno, "%s: message bound: %s", url, zmq_strerror(errno));
	c->bound = bind;
	if (o && o->curve_key) {
		int r = set_curve(c, url, bind, o, err);
		if (r)
			return r;
	}
	if (strncmp(url, "inproc://", 9) != 0) {
		c->log = o ? o->log : NULL;
		c->log_arg = o ? o->log_arg : NULL;
		int r = start_monitor(c, ctx, err);
		if (r)
			return r;
	}
	int rc = bind ? zmq_bind(c->sock, url) : zmq_connect(c->sock, url);
	if (rc != 0)
		return seed_err_set(err, -errno, "cannot %s %s: %s", bind ? "bind" : "connect to", url,
		                    zmq_strerror(errno));
	zmq_msg_init(&c->msg);
	c->msg_live = true;
	return 0;
}

static int open_file(seed_chan *c, const char *path, seed_err *err)
{
	bool out = sends(c->kind);
	if (!out && c->kind != SEED_CHAN_PULL && c->kind != SEED_CHAN_SUB)
		return seed_err_set(err, -EINVAL, "%s: a file cannot serve as a request/reply endpoint",
		                    path);
	if (strcmp(path, "-") == 0) {
		c->fd = out ? STDOUT_FILENO : STDIN_FILENO;
		c->own_fd = false;
	} else {
		c->fd = out ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
		            : open(path, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0)
			return seed_err_set(err, -errno, "%s: %s", path, strerror(errno));
		c->own_fd = true;
	}
	if (!out) {
		int rc = seed_frame_reader_new(&c->reader, c->fd);
		if (rc)
			return seed_err_set(err, rc, "%s: %s", path, seed_strerror(rc));
	}
	return 0;
}

int seed_chan_open(seed_chan **out, void *ctx, seed_chan_kind kind, const char *endpoint,
                   const seed_chan_opts *opts, seed_err *err)
{
	if (!endpoint || !*endpoint)
		return seed_err_set(err, -EINVAL, "empty endpoint");
	if (opts && opts->max_msg < 0)
		return seed_err_set(err, -EINVAL, "%s: message bound %lld: it counts bytes, 0 for none",
		                    endpoint, (long long)opts->max_msg);
	if (opts && opts->hwm < 0)
		return seed_err_set(err, -EINVAL,
		                    "%s: high-water mark %d: it counts messages, 0 for ZeroMQ's default",
		                    endpoint, opts->hwm);
	bool bind = opts ? opts->bind : false;
	const char *url = endpoint;
	if (url[0] == '@' || url[0] == '>') {
		bind = url[0] == '@';
		url++;
		if (!is_url(url))
			return seed_err_set(err, -EINVAL,
			                    "%s: '@' and '>' go before a tcp://, ipc:// or inproc:// URL",
			                    endpoint);
	}
	seed_chan *c = seed_xcalloc(1, sizeof *c);
	c->kind = kind;
	size_t n = strlen(url) + 1;
	c->endpoint = memcpy(seed_xmalloc(n), url, n); /* not strdup: one out-of-memory handler */
	c->stop = opts ? opts->stop : NULL;
	c->fd = -1;
	int rc;
	if (is_url(url)) {
		rc = ctx ? open_socket(c, ctx, url, bind, opts, err)
		         : seed_err_set(err, -EINVAL, "%s: no ZeroMQ context", url);
	} else if (strstr(url, "://")) {
		rc = seed_err_set(err, -EINVAL,
		                  "%s: unknown transport (use tcp://, ipc://, inproc://, a file or -)", url);
	} else {
		rc = open_file(c, url, err);
	}
	if (rc) {
		seed_chan_close(&c);
		return rc;
	}
	*out = c;
	return 0;
}

void seed_chan_close(seed_chan **pc)
{
	seed_chan *c = pc ? *pc : NULL;
	if (!c)
		return;
	if (c->msg_live)
		zmq_msg_close(&c->msg);
	if (c->mon_live) {
		atomic_store(&c->mon_stop, 1);
		pthread_join(c->mon_thread, NULL);
	}
	if (c->mon) {
		zmq_close(c->mon);
		zmq_socket_monitor(c->sock, NULL, 0);
	}
	if (c->sock)
		zmq_close(c->sock);
	seed_frame_reader_free(&c->reader);
	if (c->own_fd && c->fd >= 0)
		close(c->fd);
	free(c->endpoint);
	free(c);
	*pc = NULL;
}

uint64_t seed_chan_refused(const seed_chan *c)
{
	return atomic_load(&((seed_chan *)c)->refused);
}

bool seed_chan_leaves_host(const char *endpoint)
{
	const char *url = endpoint;
	if (url[0] == '@' || url[0] == '>')
		url++;
	if (strncmp(url, "tcp://", 6) != 0)
		return false;
	url += 6;
	const char *semi = strchr(url, ';'); /* tcp://SOURCE;HOST:PORT: the peer is after ';' */
	if (semi)
		url = semi + 1;
	char host[256];
	const char *colon = strrchr(url, ':');
	size_t n = colon ? (size_t)(colon - url) : strlen(url);
	if (n >= sizeof host)
		return true;
	memcpy(host, url, n);
	host[n] = 0;
	char *h = host;
	if (h[0] == '[' && n >= 2 && h[n - 1] == ']') {
		h[n - 1] = 0;
		h++;
	}
	if (strcmp(h, "localhost") == 0 || strcmp(h, "lo") == 0 || strcmp(h, "::1") == 0)
		return false;
	struct in_addr a4;
	if (inet_pton(AF_INET, h, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) != 127;
	struct in6_addr a6;
	if (inet_pton(AF_INET6, h, &a6) == 1)
		return !IN6_IS_ADDR_LOOPBACK(&a6);
	return true;
}

bool seed_chan_is_socket(const seed_chan *c)
{
	return c->sock != NULL;
}

bool seed_chan_bound(const seed_chan *c)
{
	return c->sock && c->bound;
}

void *seed_chan_socket(seed_chan *c)
{
	return c->sock;
}

const char *seed_chan_endpoint(const seed_chan *c)
{
	return c->endpoint;
}

static bool stopped(const seed_chan *c)
{
	return c->stop && *c->stop;
}

/* Wait until the socket (or, for a file channel, its descriptor) has events
 * (ZMQ_POLLIN/OUT) or timeout_ms passes (-1: forever), looking at *stop
 * every slice.  0 ready, -EAGAIN timeout, -EINTR stopped.  The time left is
 * measured on the clock, not counted in slices: a signal that ends a poll
 * early must not shorten the timeout. */
static int wait_for(seed_chan *c, short events, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? 0 : seed_now_us() + (int64_t)timeout_ms * 1000;
	for (;;) {
		if (stopped(c))
			return -EINTR;
		int slice = SLICE_MS;
		if (timeout_ms >= 0) {
			/* whole milliseconds left, rounded up: zmq_poll's unit */
			int64_t left = (deadline - seed_now_us() + 999) / 1000;
			if (left < slice)
				slice = left > 0 ? (int)left : 0;
		}
		zmq_pollitem_t it = {.socket = c->sock, .fd = c->sock ? 0 : c->fd, .events = events};
		int n = zmq_poll(&it, 1, slice);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && seed_now_us() >= deadline)
			return -EAGAIN;
	}
}

int seed_chan_poll(seed_chan *const *cs, int n, int timeout_ms, bool *ready)
{
	zmq_pollitem_t it[8];
	if (n < 1 || n > 8)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (!cs[i]->sock)
			return -EINVAL;
		it[i] = (zmq_pollitem_t){.socket = cs[i]->sock, .events = ZMQ_POLLIN};
	}
	int rc = zmq_poll(it, n, timeout_ms);
	if (rc < 0)
		return -errno;
	for (int i = 0; ready && i < n; i++)
		ready[i] = (it[i].revents & ZMQ_POLLIN) != 0;
	return rc;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int seed_chan_send(seed_chan *c, const void *id, size_t idlen, const void *data, size_t len, bool dontwait)
{
	if (!c->sock) {
		if (!sends(c->kind))
			return -EBADF;
		return write_all(c->fd, data, len);
	}
	int backoff_ms = 0;
	for (;;) {
		int rc = 0;
		if (c->kind == SEED_CHAN_ROUTER)
			rc = zmq_send(c->sock, id, idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT);
		if (rc >= 0)
			rc = zmq_send(c->sock, data, len, ZMQ_DONTWAIT);
		if (rc >= 0)
			return 0;
		if (errno == EHOSTUNREACH)
			return -EHOSTUNREACH; /* ROUTER: that peer is gone */
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (dontwait)
			return -EAGAIN;
		if (c->kind == SEED_CHAN_ROUTER) {
			/* A ROUTER's POLLOUT means that some peer has room, not
			 * this one: polling would return at once and spin while
			 * another peer can take messages.  Sleep instead, from
			 * 1 ms up to a slice, looking at *stop in between. */
			if (stopped(c))
				return -EINTR;
			backoff_ms = backoff_ms ? backoff_ms * 2 : 1;
			if (backoff_ms > SLICE_MS)
				backoff_ms = SLICE_MS;
			struct timespec d = {0, (long)backoff_ms * 1000000L};
			nanosleep(&d, NULL);
			continue;
		}
		int w = wait_for(c, ZMQ_POLLOUT, -1);
		if (w)
			return w;
	}
}

int seed_chan_reply(seed_chan *c, const seed_chan_msg *to, const void *data, size_t len, bool dontwait)
{
	if (!c->sock || c->kind != SEED_CHAN_ROUTER || !to->envelope)
		return seed_chan_send(c, to->id, to->idlen, data, len, dontwait);
	/* The REQ envelope: id, the empty delimiter, the frame.  A reply is
	 * small and the peer waits for it: never block on it. */
	if (zmq_send(c->sock, to->id, to->idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(c->sock, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(c->sock, data, len, ZMQ_DONTWAIT) < 0)
		return -errno;
	return 0;
}

/* Receive one part into c->msg without blocking; 1 if more parts follow. */
static int recv_part(seed_chan *c)
{
	if (zmq_msg_recv(&c->msg, c->sock, ZMQ_DONTWAIT) < 0)
		return -errno;
	return zmq_msg_more(&c->msg) ? 1 : 0;
}

/* A conflating SUB: replace the message just received by the newest whole
 * one queued behind it; the ones between, and multi-part ones (not
 * frames), are dropped. */
static void take_newest(seed_chan *c)
{
	zmq_msg_t next;
	zmq_msg_init(&next);
	while (zmq_msg_recv(&next, c->sock, ZMQ_DONTWAIT) >= 0) {
		if (zmq_msg_more(&next)) {
			while (zmq_msg_more(&next) && zmq_msg_recv(&next, c->sock, ZMQ_DONTWAIT) >= 0)
				;
			continue;
		}
		zmq_msg_move(&c->msg, &next);
	}
	zmq_msg_close(&next);
}

/* The next object of a file channel; a non-blocking fd with nothing yet is
 * waited for as a socket waits for its peer. */
static int recv_file(seed_chan *c, seed_chan_msg *m, int timeout_ms, seed_err *err)
{
	if (!c->reader)
		return -EBADF;
	for (;;) {
		uint64_t at = seed_frame_reader_offset(c->reader);
		int rc = seed_frame_reader_next(c->reader, &m->data, &m->len, err);
		if (rc == -EAGAIN) {
			rc = wait_for(c, ZMQ_POLLIN, timeout_ms);
			if (rc)
				return rc;
			continue;
		}
		if (rc == 0) {
			m->idlen = 0;
			m->offset = at;
		}
		return rc;
	}
}

int seed_chan_recv(seed_chan *c, seed_chan_msg *m, int timeout_ms, seed_err *err)
{
	if (!c->sock)
		return recv_file(c, m, timeout_ms, err);
	for (;;) {
		int rc = recv_part(c);
		if (rc == -EAGAIN) {
			rc = wait_for(c, ZMQ_POLLIN, timeout_ms);
			if (rc)
				return rc;
			continue;
		}
		if (rc < 0)
			return seed_err_set(err, rc, "%s: %s", c->endpoint, zmq_strerror(-rc));
		m->idlen = 0;
		m->envelope = false;
		if (c->kind == SEED_CHAN_ROUTER) {
			size_t n = zmq_msg_size(&c->msg);
			if (n > sizeof m->id)
				n = sizeof m->id;
			memcpy(m->id, zmq_msg_data(&c->msg), n);
			m->idlen = n;
			if (rc == 0) /* an id with no frame after it */
				return seed_err_set(err, -SEED_EFRAME, "%s: empty message", c->endpoint);
			rc = recv_part(c);
			if (rc < 0)
				return seed_err_set(err, rc, "%s: %s", c->endpoint, zmq_strerror(-rc));
			/* A REQ socket puts an empty delimiter part before its
			 * message: say so, and let the answer (seed_chan_reply)
			 * keep the delimiter so that the REQ peer receives it. */
			m->envelope = rc == 1 && zmq_msg_size(&c->msg) == 0;
			if (m->envelope) {
				while (recv_part(c) == 1)
					;
				return seed_err_set(
				    err, -SEED_EFRAME,
				    "%s: a message in a REQ envelope (an empty part before the frame): "
				    "connect a DEALER socket, which sends a frame as one part",
				    c->endpoint);
			}
		}
		if (rc == 1) {
			/* Frames are single-part: drop the extra parts of this message. */
			while (recv_part(c) == 1)
				;
			return seed_err_set(err, -SEED_EFRAME, "%s: multi-part message (a frame is one part)",
			                    c->endpoint);
		}
		if (c->conflate)
			take_newest(c);
		m->data = zmq_msg_data(&c->msg);
		m->len = zmq_msg_size(&c->msg);
		m->offset = 0;
		return 0;
	}
}
