/* batcher.c: the batching window and its gathered observations
 * (seed/batcher.h).
 *
 * Invariants: req[0..n) are in arrival order with row0 the running sum of
 * rows; obs holds rows * row_bytes bytes when row_bytes > 0; capacities
 * only grow, by doubling, so the cost of adding is amortised O(rows).
 */
#include "seed/batcher.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"

int seed_batcher_new(seed_batcher **out, int max_rows, double timeout, seed_err *err)
{
	if (max_rows < 1 || !(timeout >= 0) || !isfinite(timeout))
		return seed_err_set(err, -EINVAL, "batcher: max rows %d and timeout %g s: need >= 1 and >= 0",
		                    max_rows, timeout);
	seed_batcher *b = seed_xcalloc(1, sizeof *b);
	b->max_rows = max_rows;
	b->timeout = timeout;
	*out = b;
	return 0;
}

void seed_batcher_free(seed_batcher **bp)
{
	if (!bp || !*bp)
		return;
	seed_batcher *b = *bp;
	free(b->req);
	free(b->obs);
	free(b->final_obs);
	free(b->final_req);
	free(b->final_row);
	free(b);
	*bp = NULL;
}

int seed_batcher_add(seed_batcher *b, void *owner, const void *id, size_t idlen, int rows, const void *obs,
                     size_t row_bytes, double now)
{
	if (idlen > SEED_BATCHER_MAX_ID || rows < 1)
		return -EINVAL;
	if (b->n > 0 && b->row_bytes != (obs ? row_bytes : 0))
		return -EINVAL;
	if (b->n == 0) {
		b->deadline = now + b->timeout;
		b->row_bytes = obs ? row_bytes : 0;
	}
	b->req = seed_xgrow(b->req, &b->cap_req, (size_t)b->n + 1, sizeof *b->req);
	if (obs) {
		size_t at = (size_t)b->rows * row_bytes, n = (size_t)rows * row_bytes;
		b->obs = seed_xgrow(b->obs, &b->cap_obs, at + n, 1);
		memcpy(b->obs + at, obs, n);
	}
	seed_batch_req *r = &b->req[b->n];
	r->owner = owner;
	r->row0 = b->rows;
	r->rows = rows;
	r->idlen = idlen;
	memcpy(r->id, id, idlen);
	b->rows += rows;
	return b->n++;
}

void seed_batcher_add_final(seed_batcher *b, int req, int row, const void *obs)
{
	/* final_req and final_row grow together: one capacity */
	size_t cap = b->cap_final, need = (size_t)b->nfinal + 1;
	b->final_req = seed_xgrow(b->final_req, &cap, need, sizeof *b->final_req);
	b->final_row = seed_xgrow(b->final_row, &b->cap_final, need, sizeof *b->final_row);
	b->final_obs = seed_xgrow(b->final_obs, &b->cap_final_obs, need * b->row_bytes, 1);
	memcpy(b->final_obs + (size_t)b->nfinal * b->row_bytes, obs, b->row_bytes);
	b->final_req[b->nfinal] = req;
	b->final_row[b->nfinal] = row;
	b->nfinal++;
}

bool seed_batcher_ready(const seed_batcher *b, double now, size_t expected)
{
	return b->n > 0 && (b->rows >= b->max_rows || now >= b->deadline || expected == 0);
}

void seed_batcher_clear(seed_batcher *b)
{
	b->n = 0;
	b->rows = 0;
	b->nfinal = 0;
}
