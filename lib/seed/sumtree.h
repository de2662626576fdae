/* seed/sumtree.h: the prioritized sampling core of a replay buffer.
 *
 * A sum tree over a fixed number of slots (capacity, in sequences), filled
 * first in, first out: inserting into a full tree evicts the oldest item.
 * Each stored item has a raw priority p >= 0; the tree keeps p^alpha per slot
 * and samples item i with probability P(i) = p_i^alpha / sum_j p_j^alpha,
 * stratified as in prioritized experience replay (Schaul et al., 2016): the
 * total is cut into B equal segments and one uniform draw falls in each.
 * Importance weights are w_i = ((1/N) / P(i))^beta divided by the largest
 * weight of the batch, N the number of items stored.
 *
 * Items are named by a 64-bit id, the serial number of their insertion
 * (0, 1, 2...): the item's slot is id % capacity, and the id is live while
 * fewer than capacity items were inserted after it.  A priority update for
 * an id no longer live (evicted, or never inserted) is ignored and counted.
 *
 * A priority of exactly 0 is allowed: the item stays stored (it counts in N)
 * but is never sampled.  Negative, NaN and infinite priorities, and those
 * whose p^alpha exceeds SEED_SUMTREE_MAX_LEAF, are refused (-EINVAL) and
 * counted.
 *
 * Sums are in double.  An update recomputes each parent on the leaf's path
 * from its two children instead of adding a difference, so the root is
 * always the pairwise sum of the current leaves and no drift accumulates
 * however many updates are made.  The minimum and maximum raw priority of
 * the stored items are two more trees of the same shape, kept on the same
 * path (O(log N) each).
 *
 * Everything is allocated by seed_sumtree_new(); no other function
 * allocates.  A tree is not thread-safe: one thread at a time.
 */
#ifndef SEED_SUMTREE_H
#define SEED_SUMTREE_H

#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest capacity seed_sumtree_new() takes (2^26 slots, 1.5 GiB). */
#define SEED_SUMTREE_MAX_CAPACITY (1u << 26)
/* The largest p^alpha a slot may hold, so that 2^26 of them sum finitely. */
#define SEED_SUMTREE_MAX_LEAF 1e290

typedef struct seed_sumtree seed_sumtree;

typedef struct seed_sumtree_stats {
	uint64_t capacity; /* slots */
	uint64_t count;    /* items stored, N */
	uint64_t inserted; /* items ever inserted (the next id) */
	uint64_t evicted;  /* items pushed out by later ones */
	uint64_t stale;    /* updates ignored: the id was not live */
	uint64_t refused;  /* priorities refused: negative, non-finite or too large */
	double total;      /* sum of p^alpha over the stored items */
	double min_p;      /* smallest raw priority stored (0 when empty) */
	double max_p;      /* largest raw priority stored (0 when empty) */
	double alpha;
} seed_sumtree_stats;

/* A tree of capacity slots (1 .. SEED_SUMTREE_MAX_CAPACITY) with exponent
 * alpha (finite, >= 0; SEED uses 0.9).  Returns 0 and *out, or -EINVAL for
 * bad arguments (with a message in err, which may be NULL).  Allocation
 * failure aborts (seed_oom). */
int seed_sumtree_new(seed_sumtree **out, uint64_t capacity, double alpha, seed_err *err);
/* Free *tp (NULL or *tp == NULL: nothing) and set *tp to NULL. */
void seed_sumtree_free(seed_sumtree **tp);

/* Store a new item of raw priority p, evicting the oldest item when full.
 * Returns 0 and *id (may be NULL), or -EINVAL (p refused, counted; nothing
 * stored). */
int seed_sumtree_insert(seed_sumtree *t, double p, uint64_t *id);
/* Set the raw priority of item id to p.  Returns 0, -ESTALE when id is not
 * live (ignored, counted) or -EINVAL when p is refused (counted). */
int seed_sumtree_update(seed_sumtree *t, uint64_t id, double p);
/* seed_sumtree_update() for n items; returns how many were applied (the
 * others are counted as stale or refused). */
size_t seed_sumtree_update_many(seed_sumtree *t, size_t n, const uint64_t *ids, const double *p);

/* Whether id is stored; its slot (id % capacity, whether or not live); its
 * raw priority (0 and *p, or -ESTALE). */
int seed_sumtree_live(const seed_sumtree *t, uint64_t id);
uint64_t seed_sumtree_slot(const seed_sumtree *t, uint64_t id);
int seed_sumtree_priority(const seed_sumtree *t, uint64_t id, double *p);
/* The slot whose prefix sum interval [S_i, S_i + p_i^alpha) holds mass
 * (0 <= mass < total, clamped into it), never a slot of p^alpha = 0; -ENOENT
 * when the total is 0. */
int seed_sumtree_find(const seed_sumtree *t, double mass, uint64_t *slot);
void seed_sumtree_stats_get(const seed_sumtree *t, seed_sumtree_stats *st);

/* Sample a batch of b items, stratified, drawing one seed_rng_double() per
 * segment from rng.  Writes ids[b], and where not NULL prob[b] (P(i)) and
 * weight[b] (importance weights with exponent beta >= 0, SEED's 0.6, the
 * largest 1).  An item may be drawn more than once.  Returns 0, -EINVAL (b
 * < 1, bad beta), or -ENOENT when no stored item has a priority above 0. */
int seed_sumtree_sample(const seed_sumtree *t, seed_rng *rng, int b, double beta, uint64_t *ids, double *prob,
                        float *weight);
/* The same for given uniform numbers u[b] in [0, 1) instead of the
 * generator: segment k draws mass (k + u[k]) * total / b (a u[k] outside
 * [0, 1), NaN included, is taken as 0). */
int seed_sumtree_sample_u(const seed_sumtree *t, const double *u, int b, double beta, uint64_t *ids,
                          double *prob, float *weight);

/* The whole state (alpha, counters, every stored raw priority) as bytes:
 * seed_sumtree_save_size() of them, little-endian, with a checksum.
 * seed_sumtree_save() writes them into buf (size bytes) and returns the
 * number written, or -ENOSPC.  seed_sumtree_restore() replaces t's state by
 * the one in buf (the tree's capacity must match) and rebuilds the sums; a
 * truncated, corrupt or mismatched state is refused with -EBADMSG or
 * -EINVAL and a message in err, leaving t unchanged. */
size_t seed_sumtree_save_size(const seed_sumtree *t);
long seed_sumtree_save(const seed_sumtree *t, void *buf, size_t size);
int seed_sumtree_restore(seed_sumtree *t, const void *buf, size_t size, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
