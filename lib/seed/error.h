/* seed/error.h: error codes shared by every libseed module.
 *
 * Functions in libseed return 0 on success or a negative errno-style code
 * (-EINVAL, -ENOMEM, ...) or one of the SEED_E* codes below.  Out-parameters
 * are written only on success.  libseed never prints and never exits,
 * except in one place: when memory runs out, seed_oom (seed/buf.h) prints
 * one line and aborts.
 * Where a human-readable reason matters (bad frames, bad options), the
 * function also takes a `seed_err` that receives a message naming what was
 * wrong and where.
 */
#ifndef SEED_ERROR_H
#define SEED_ERROR_H

#include <errno.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Codes of our own, below every errno value. */
enum {
	SEED_EFRAME = 10001,   /* a frame is malformed (not msgpack, wrong field...) */
	SEED_ETYPE = 10002,    /* unknown frame type */
	SEED_EVERSION = 10003, /* unsupported protocol version */
	SEED_EOPTION = 10004,  /* bad option value (environment, model, config) */
	SEED_EEOF = 10005,     /* end of a recorded stream */
};

/* A message buffer for errors that need words.  Fixed size so that it can
 * live on the stack; messages longer than this are cut. */
typedef struct seed_err {
	char msg[512];
} seed_err;

/* Format into err (may be NULL: then nothing happens) and return code, so
 * that callers can write `return seed_err_set(err, -EINVAL, "...", ...)`. */
int seed_err_set(seed_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A static description of code (negative errno or -SEED_E*). */
const char *seed_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
