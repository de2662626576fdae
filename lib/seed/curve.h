/* seed/curve.h: CURVE key files and the ZAP handler that says which clients
 * may connect.
 *
 * ZeroMQ's CURVE mechanism (CurveZMQ: Curve25519 keys, every message
 * encrypted and authenticated) secures Seed's sockets.  A key is 32 bytes,
 * written as 40 characters of Z85.  Keys live in small text files:
 *
 *   NAME.key   this program's key pair (mode 0600):
 *                # comment lines and blank lines are skipped
 *                public-key = <40 Z85 characters>
 *                secret-key = <40 Z85 characters>
 *   NAME.pub   a public key alone: the line public-key = ...
 *
 * A socket that binds with a key pair is a CURVE server; the ZAP handler
 * (one per ZeroMQ context, on inproc://zeromq.zap.01) accepts a client only
 * when its public key is one of the .pub files of an allow directory, read
 * once when the handler starts.  A socket that connects with a key pair and
 * the server's public key is a CURVE client.
 *
 * Threads: the key functions may be called from any thread; the handler
 * runs in a thread of its own and calls its log callback from there.
 */
#ifndef SEED_CURVE_H
#define SEED_CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Z85 characters in a key (32 bytes). */
#define SEED_CURVE_Z85_LEN 40

/* A key pair, or a public key alone (sec[0] == 0), as NUL-ended Z85. */
typedef struct seed_curve_key {
	char pub[SEED_CURVE_Z85_LEN + 1];
	char sec[SEED_CURVE_Z85_LEN + 1];
} seed_curve_key;

/* Whether this libzmq was built with CURVE. */
bool seed_curve_available(void);

/* A new key pair from the system's random generator.  -ENOTSUP when
 * libzmq has no CURVE. */
int seed_curve_keypair(seed_curve_key *k, seed_err *err);

/* Write k as NAME.key (public and secret key, mode 0600) and NAME.pub (the
 * public key, mode 0644).  Each file appears whole or not at all (written
 * beside its target, synced, then linked or renamed into place).  Without
 * force, an existing NAME.key or NAME.pub is -EEXIST and nothing is
 * written; with force both are replaced. */
int seed_curve_write(const char *name, const seed_curve_key *k, bool force, seed_err *err);

/* Read a key file into *k.  need_secret: the file must be a .key file
 * holding a secret key that matches its public key, and must not be
 * readable by group or others (-EPERM, as ssh refuses such keys).  Without
 * need_secret, only the public key is read (from a .pub or a .key file)
 * and k->sec is left empty.  Errors (-EINVAL) name the file and line: an
 * unknown name, a key that is not 40 Z85 characters, a missing key. */
int seed_curve_read(const char *path, seed_curve_key *k, bool need_secret, seed_err *err);

/* The ZAP handler: answers the context's CURVE servers (the sockets that
 * seed_chan opens binding with a key pair) with 200 for a client whose
 * public key is in the allow set and 400 for any other; requests of other
 * mechanisms (NULL, PLAIN), which only sockets without CURVE could make,
 * are accepted as ZeroMQ would without a handler. */
typedef struct seed_zap seed_zap;

/* Called from the handler's thread for a refused client, at most once a
 * second (the clients refused in between are counted in the next message).
 * msg names the client's address and its public key. */
typedef void seed_zap_log_fn(void *arg, const char *msg);

/* Read every *.pub file of allow_dir (other files are ignored; a .pub file
 * that does not parse is an error naming it, and a directory without any
 * is -ENOENT), bind the handler on ctx and start its thread.  Only one
 * handler may run per context (-EADDRINUSE).  Start it before any CURVE
 * server socket of ctx binds.  log may be NULL. */
int seed_zap_start(seed_zap **out, void *ctx, const char *allow_dir, seed_zap_log_fn *log, void *arg,
                   seed_err *err);
/* Stop the thread and close its socket (before zmq_ctx_term); NULL is fine. */
void seed_zap_stop(seed_zap **z);
/* The number of public keys allowed. */
size_t seed_zap_allowed(const seed_zap *z);
/* Clients the handler refused so far (any thread). */
uint64_t seed_zap_refused(const seed_zap *z);

#ifdef __cplusplus
}
#endif
#endif
