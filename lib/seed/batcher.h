/* seed/batcher.h: the inference server's batching window.
 *
 * Requests (one per actor half, K rows each) join the open batch; the batch
 * is ready when it holds max_rows rows, when its deadline (timeout after
 * the first request) has passed, or when no other half is expected to ask
 * before the deadline (the caller counts those: seed_sessions_expected).
 * The observations of every request are gathered into one matrix, rows in
 * request order, for one forward pass; the final observations of truncated
 * episodes into a second one, to be valued in one more pass.
 *
 * Buffers grow geometrically and are kept between batches: after the first
 * few batches, adding a request copies its rows and allocates nothing.
 *
 * Threads: a seed_batcher belongs to one thread.
 */
#ifndef SEED_BATCHER_H
#define SEED_BATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A routing id, as ZeroMQ's ROUTER gives it (at most 255 bytes). */
#define SEED_BATCHER_MAX_ID 256

typedef struct seed_batch_req {
	void *owner;  /* the caller's (a session) */
	int64_t row0; /* its first row in the batch */
	int rows;
	size_t idlen; /* where to send the answer */
	unsigned char id[SEED_BATCHER_MAX_ID];
} seed_batch_req;

/* Read the fields; change them only through the functions below. */
typedef struct seed_batcher {
	int max_rows;
	double timeout;             /* seconds */
	double deadline;            /* of the open batch */
	int n;                      /* requests */
	int64_t rows;               /* rows of all requests */
	size_t row_bytes;           /* of an observation; 0 while none are gathered */
	seed_batch_req *req;        /* (n) */
	unsigned char *obs;         /* (rows, row_bytes) */
	int nfinal;                 /* final observations */
	unsigned char *final_obs;   /* (nfinal, row_bytes) */
	int *final_req, *final_row; /* (nfinal): whose each one is */
	/* private: capacities */
	size_t cap_req, cap_obs, cap_final, cap_final_obs;
} seed_batcher;

/* An empty batcher.  Errors: -EINVAL for max_rows < 1 or a negative or
 * non-finite timeout (seconds).  Allocation failure aborts. */
int seed_batcher_new(seed_batcher **out, int max_rows, double timeout, seed_err *err);
/* Free b (NULL is fine); *b becomes NULL. */
void seed_batcher_free(seed_batcher **b);

/* Add a request of `rows` rows for owner, answered to id (idlen <=
 * SEED_BATCHER_MAX_ID bytes).  obs (rows, row_bytes) is copied into the
 * batch's matrix; NULL gathers nothing (a policy that does not look).  The
 * first request opens the batch at now: deadline = now + timeout.  Returns
 * the request's index, or -EINVAL when row_bytes differs from the other
 * requests' (their rows could not share one matrix), rows < 1 or idlen is
 * too long; nothing is added then. */
int seed_batcher_add(seed_batcher *b, void *owner, const void *id, size_t idlen, int rows, const void *obs,
                     size_t row_bytes, double now);

/* Add the final observation of row `row` of request `req` (row_bytes bytes,
 * as the batch's rows). */
void seed_batcher_add_final(seed_batcher *b, int req, int row, const void *obs);

/* Whether the open batch should run now: it holds a request and has
 * max_rows rows, or its deadline has passed, or `expected` (halves not in
 * the batch that may still ask before the deadline) is 0. */
bool seed_batcher_ready(const seed_batcher *b, double now, size_t expected);

/* Empty the batch (its buffers are kept). */
void seed_batcher_clear(seed_batcher *b);

#ifdef __cplusplus
}
#endif
#endif
