/* seed/chan.h: endpoints that carry frames, over ZeroMQ or files.
 *
 * An endpoint is a string:
 *   tcp://HOST:PORT, ipc://PATH, inproc://NAME   a ZeroMQ socket
 *   @URL  bind to URL;  >URL  connect to URL     (override the default)
 *   -                                             stdin (reading) / stdout
 *   anything else                                 a file of recorded frames
 * Each program documents whether it binds or connects by default.
 *
 * A channel moves whole frames (one ZeroMQ message, or one msgpack object in
 * a file).  Sending on a ZeroMQ channel blocks while the peer's queue is full
 * (the high-water mark): that is Seed's backpressure, nothing is dropped.
 * Blocking calls give up when *stop becomes non-zero (a signal flag), so a
 * program stuck behind a slow consumer still stops on SIGINT.
 *
 * Bounds and security (every socket that faces a network should have both):
 * max_msg bounds what a peer may send (ZMQ_MAXMSGSIZE: a bigger message
 * drops that peer's connection, the socket goes on serving the others);
 * curve_key makes a bound socket a CURVE server (clients are then judged by
 * the context's ZAP handler, seed_zap_start in seed/curve.h) and, with
 * curve_server, a connecting socket a CURVE client.  tcp:// and ipc://
 * sockets are watched by a monitor thread that counts failed handshakes
 * (seed_chan_refused) and says them through opts->log.
 *
 * Threads: a channel belongs to one thread (its monitor thread touches only
 * its own socket, the counter and the log callback).
 */
#ifndef SEED_CHAN_H
#define SEED_CHAN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/curve.h"
#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum seed_chan_kind {
	SEED_CHAN_PUSH,   /* send only; file: write */
	SEED_CHAN_PULL,   /* receive only; file: read */
	SEED_CHAN_PUB,    /* send only; file: write */
	SEED_CHAN_SUB,    /* receive only (subscribed to everything); file: read */
	SEED_CHAN_DEALER, /* both ways; ZeroMQ only */
	SEED_CHAN_ROUTER, /* both ways, with the peer's routing id; ZeroMQ only */
} seed_chan_kind;

/* Called from a channel's monitor thread with one line about a failed
 * handshake; at most one line every SEED_CHAN_LOG_INTERVAL seconds for each
 * kind of failure (keys refused, no keys on one side, a failed key
 * exchange, other) on each channel; the failures in between are counted in
 * a later line. */
typedef void seed_chan_log_fn(void *arg, const char *msg);
#define SEED_CHAN_LOG_INTERVAL 5

/* Send-only kinds (PUSH, PUB) hear nothing but subscriptions from their
 * peers: without max_msg, they take this bound. */
#define SEED_CHAN_SEND_ONLY_MAX_MSG 4096

/* What a conflating SUB (seed_chan_opts.conflate: a receive takes the
 * newest message queued and drops those before it) queues at most when
 * hwm is 0; more wait in the publisher's queue, or are dropped there. */
#define SEED_CHAN_CONFLATE_HWM 4

typedef struct seed_chan_opts {
	bool bind;                   /* default when the endpoint has no @ or > */
	int hwm;                     /* send/receive high-water mark in messages; 0: ZeroMQ's */
	int conflate;                /* SUB: a receive takes the newest message queued */
	volatile sig_atomic_t *stop; /* give up blocking calls when *stop != 0 */
	/* The most bytes a peer's message may have; a bigger one drops the
	 * connection (ZMQ_MAXMSGSIZE).  0: no bound for kinds that receive,
	 * SEED_CHAN_SEND_ONLY_MAX_MSG for PUSH and PUB. */
	int64_t max_msg;
	/* This program's key pair (NULL: no CURVE).  Binding: a CURVE server,
	 * ZAP domain "seed".  Connecting: a CURVE client of curve_server. */
	const seed_curve_key *curve_key;
	const char *curve_server; /* the server's public key (Z85); connecting with curve_key */
	seed_chan_log_fn *log;    /* failed handshakes (NULL: counted only) */
	void *log_arg;
} seed_chan_opts;

typedef struct seed_chan seed_chan;

/* One ZeroMQ context per process, shared by its channels.  NULL on error. */
void *seed_chan_context(void);
void seed_chan_context_free(void **ctx);

/* Open kind on endpoint.  Errors: -EINVAL (bad endpoint for the kind, e.g. a
 * file for a ROUTER), -errno from ZeroMQ or open(2); err names the endpoint. */
int seed_chan_open(seed_chan **out, void *ctx, seed_chan_kind kind, const char *endpoint,
                   const seed_chan_opts *opts, seed_err *err);
/* Close c (NULL is fine), dropping unsent messages after a short linger. */
void seed_chan_close(seed_chan **c);

/* Failed handshakes on c's connections so far (any thread): on a bound
 * socket the peers refused (no CURVE, another server key, a key the ZAP
 * handler refused), on a connecting one the times the server refused this
 * client.  0 for files, inproc:// and a libzmq without handshake events. */
uint64_t seed_chan_refused(const seed_chan *c);

/* Whether endpoint (as given to seed_chan_open) is a tcp:// address that
 * may reach beyond this machine: any host but localhost, 127.0.0.0/8, ::1
 * and the interface lo.  ipc://, inproc://, files: false. */
bool seed_chan_leaves_host(const char *endpoint);

/* Whether the channel is a ZeroMQ socket (else a file). */
bool seed_chan_is_socket(const seed_chan *c);
/* The ZeroMQ socket, for zmq_poll; NULL for files. */
void *seed_chan_socket(seed_chan *c);
/* Whether the channel is a socket that binds (a server). */
bool seed_chan_bound(const seed_chan *c);
/* The endpoint as given (without @ or >). */
const char *seed_chan_endpoint(const seed_chan *c);

/* Send one frame.  ROUTER channels take the peer's routing id first
 * (id/idlen), others ignore it.  Blocks on backpressure until sent or *stop;
 * with dontwait, returns -EAGAIN instead of blocking.  -EINTR when stopped. */
int seed_chan_send(seed_chan *c, const void *id, size_t idlen, const void *data, size_t len, bool dontwait);

/* A received frame: data/len valid until the next recv or close. */
typedef struct seed_chan_msg {
	const void *data;
	size_t len;
	bool envelope;         /* ROUTER: it came in a REQ socket's envelope (refused) */
	unsigned char id[256]; /* ROUTER: the sender's routing id */
	size_t idlen;
	uint64_t offset; /* file: the frame's first byte in the stream; socket: 0 */
} seed_chan_msg;

/* Receive one frame, waiting at most timeout_ms (-1: until one comes or
 * *stop), on a socket or on a non-blocking file that has nothing yet (a
 * blocking file blocks in read(2) until data, its end or a signal).
 * -EAGAIN on timeout, -EINTR when stopped or interrupted by a signal,
 * -SEED_EEOF at the end of a file, -SEED_EFRAME for a file that is not a
 * stream of msgpack objects (or a multi-part ZeroMQ message, which is
 * dropped: a frame is one part). */
int seed_chan_recv(seed_chan *c, seed_chan_msg *m, int timeout_ms, seed_err *err);

/* Wait until a frame can be received on one of the n socket channels cs
 * or timeout_ms passes (0: do not wait; -1: forever), taking nothing: the
 * number of ready channels (> 0), with ready[i] set for each (ready may be
 * NULL), 0 on timeout, -EINTR when interrupted by a signal, -EINVAL for a
 * file channel, or -errno from ZeroMQ.  For a program that waits on a few
 * channels in a loop of its own (seed/loop.h is the general loop). */
int seed_chan_poll(seed_chan *const *cs, int n, int timeout_ms, bool *ready);

/* Answer the sender of `to` (a message received on c): as seed_chan_send
 * to to->id, and, when to->envelope, with the empty delimiter part a REQ
 * socket needs to receive it (then never blocking: -EAGAIN when the queue
 * is full).  Non-ROUTER channels ignore the id.
 * A ROUTER's seed_chan_recv refuses a message of more than one part after
 * the id (a frame is one part) with -SEED_EFRAME, and still sets m->id, and
 * m->envelope when it came from a REQ socket (an empty delimiter part
 * before the frame), so that the caller can answer it with this. */
int seed_chan_reply(seed_chan *c, const seed_chan_msg *to, const void *data, size_t len, bool dontwait);

#ifdef __cplusplus
}
#endif
#endif
