/* chan.c: frame channels over ZeroMQ sockets or recorded-stream files.
 *
 * Invariants: a socket channel owns one zmq socket and one zmq_msg_t holding
 * the last received message (so seed_chan_msg can point into it without a
 * copy); a file channel owns an fd (not closed when it is stdin/stdout) and,
 * when reading, a seed_frame_reader.  Receiving waits the same way on both:
 * a non-blocking file that has nothing yet is polled within the timeout, as
 * a socket is.
 */
#include "seed/chan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/buf.h"
#include "seed/frame.h"

struct seed_chan {
	seed_chan_kind kind;
	char *endpoint;
	volatile sig_atomic_t *stop;
	/* socket */
	void *sock;
	zmq_msg_t msg;
	bool msg_live;
	/* file */
	int fd;
	bool own_fd;
	seed_frame_reader *reader;
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
		if (o && o->conflate) {
			int one = 1;
			zmq_setsockopt(c->sock, ZMQ_CONFLATE, &one, sizeof one);
		}
		zmq_setsockopt(c->sock, ZMQ_SUBSCRIBE, "", 0);
	}
	if (c->kind == SEED_CHAN_ROUTER) {
		/* Report unroutable replies instead of dropping them silently. */
		int one = 1;
		zmq_setsockopt(c->sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
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
	if (c->sock)
		zmq_close(c->sock);
	seed_frame_reader_free(&c->reader);
	if (c->own_fd && c->fd >= 0)
		close(c->fd);
	free(c->endpoint);
	free(c);
	*pc = NULL;
}

bool seed_chan_is_socket(const seed_chan *c)
{
	return c->sock != NULL;
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

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Wait until the socket (or, for a file channel, its descriptor) has events
 * (ZMQ_POLLIN/OUT) or timeout_ms passes (-1: forever), looking at *stop
 * every slice.  0 ready, -EAGAIN timeout, -EINTR stopped.  The time left is
 * measured on the clock, not counted in slices: a signal that ends a poll
 * early must not shorten the timeout. */
static int wait_for(seed_chan *c, short events, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? 0 : now_ms() + timeout_ms;
	for (;;) {
		if (stopped(c))
			return -EINTR;
		int slice = SLICE_MS;
		if (timeout_ms >= 0) {
			int64_t left = deadline - now_ms();
			if (left < slice)
				slice = left > 0 ? (int)left : 0;
		}
		zmq_pollitem_t it = {.socket = c->sock, .fd = c->sock ? 0 : c->fd, .events = events};
		int n = zmq_poll(&it, 1, slice);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && now_ms() >= deadline)
			return -EAGAIN;
	}
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
		m->data = zmq_msg_data(&c->msg);
		m->len = zmq_msg_size(&c->msg);
		m->offset = 0;
		return 0;
	}
}
