/* sumtree.c: the prioritized sampling core of a replay buffer
 * (seed/sumtree.h).
 *
 * Layout: leaves = the smallest power of two >= capacity; three arrays of
 * 2 * leaves doubles, heap-ordered (node 1 the root, node k's children 2k
 * and 2k + 1, slot i at leaves + i): sum holds p^alpha, lo and hi the raw
 * priorities for the minimum and the maximum.  Slots not holding an item
 * hold 0 in sum, +inf in lo and -inf in hi, so they count in none.
 *
 * Invariants: next items were ever inserted; the stored ones are the ids
 * [next - count, next), count = min(next, capacity), in slots id % capacity;
 * since slots fill in order, slots [0, count) hold items.  Every inner node
 * is exactly op(children) of the current leaves (recomputed, never patched
 * by a difference), so the root has the rounding of one pairwise sum.
 */
#include "seed/sumtree.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/bytes.h"
#include "seed/buf.h"

struct seed_sumtree {
	uint64_t capacity, leaves;
	uint64_t next, stale, refused;
	double alpha;
	double *sum; // (2 * leaves) p^alpha
	double *lo;  // (2 * leaves) raw p, +inf where empty
	double *hi;  // (2 * leaves) raw p, -inf where empty
};

int seed_sumtree_new(seed_sumtree **out, uint64_t capacity, double alpha, seed_err *err)
{
	if (capacity < 1 || capacity > SEED_SUMTREE_MAX_CAPACITY)
		return seed_err_set(err, -EINVAL, "sum tree: capacity %llu: need 1 to %u",
		                    (unsigned long long)capacity, SEED_SUMTREE_MAX_CAPACITY);
	if (!isfinite(alpha) || alpha < 0)
		return seed_err_set(err, -EINVAL, "sum tree: alpha %g: need a finite value >= 0", alpha);
	uint64_t leaves = 1;
	while (leaves < capacity)
		leaves *= 2;
	seed_sumtree *t = seed_xcalloc(1, sizeof *t);
	double *mem = seed_xmalloc(3 * 2 * leaves * sizeof *mem);
	t->capacity = capacity;
	t->leaves = leaves;
	t->alpha = alpha;
	t->sum = mem;
	t->lo = mem + 2 * leaves;
	t->hi = mem + 4 * leaves;
	for (uint64_t k = 0; k < 2 * leaves; k++) {
		t->sum[k] = 0;
		t->lo[k] = INFINITY;
		t->hi[k] = -INFINITY;
	}
	*out = t;
	return 0;
}

void seed_sumtree_free(seed_sumtree **tp)
{
	if (!tp || !*tp)
		return;
	free((*tp)->sum);
	free(*tp);
	*tp = NULL;
}

static uint64_t count_of(const seed_sumtree *t)
{
	return t->next < t->capacity ? t->next : t->capacity;
}

/* p^alpha for an accepted p, or -1 for a refused one.  0 stays 0 whatever
 * alpha (pow(0, 0) would be 1, and an item of priority 0 must never be
 * drawn). */
static double leaf_of(double alpha, double p)
{
	if (!isfinite(p) || p < 0)
		return -1;
	if (p == 0)
		return 0;
	double v = pow(p, alpha);
	return isfinite(v) && v <= SEED_SUMTREE_MAX_LEAF ? v : -1;
}

/* Put leaf value v and raw priority p in slot and recompute the path. */
static void set_slot(seed_sumtree *t, uint64_t slot, double v, double p)
{
	uint64_t k = t->leaves + slot;
	t->sum[k] = v;
	t->lo[k] = p;
	t->hi[k] = p;
	for (k /= 2; k >= 1; k /= 2) {
		t->sum[k] = t->sum[2 * k] + t->sum[2 * k + 1];
		t->lo[k] = fmin(t->lo[2 * k], t->lo[2 * k + 1]);
		t->hi[k] = fmax(t->hi[2 * k], t->hi[2 * k + 1]);
	}
}

int seed_sumtree_insert(seed_sumtree *t, double p, uint64_t *id)
{
	double v = leaf_of(t->alpha, p);
	if (v < 0) {
		t->refused++;
		return -EINVAL;
	}
	uint64_t n = t->next++;
	set_slot(t, n % t->capacity, v, p);
	if (id)
		*id = n;
	return 0;
}

int seed_sumtree_live(const seed_sumtree *t, uint64_t id)
{
	return id < t->next && t->next - id <= t->capacity;
}

uint64_t seed_sumtree_slot(const seed_sumtree *t, uint64_t id)
{
	return id % t->capacity;
}

int seed_sumtree_update(seed_sumtree *t, uint64_t id, double p)
{
	if (!seed_sumtree_live(t, id)) {
		t->stale++;
		return -ESTALE;
	}
	double v = leaf_of(t->alpha, p);
	if (v < 0) {
		t->refused++;
		return -EINVAL;
	}
	set_slot(t, id % t->capacity, v, p);
	return 0;
}

size_t seed_sumtree_update_many(seed_sumtree *t, size_t n, const uint64_t *ids, const double *p)
{
	size_t done = 0;
	for (size_t i = 0; i < n; i++)
		done += seed_sumtree_update(t, ids[i], p[i]) == 0;
	return done;
}

int seed_sumtree_priority(const seed_sumtree *t, uint64_t id, double *p)
{
	if (!seed_sumtree_live(t, id))
		return -ESTALE;
	*p = t->lo[t->leaves + id % t->capacity];
	return 0;
}

/* Descend from the root: go left when mass falls in the left subtree, or
 * when the right one holds nothing (rounding can carry mass past the last
 * positive leaf); otherwise subtract the left sum and go right.  A node of
 * positive sum has a child of positive sum, so the walk ends on a positive
 * leaf. */
int seed_sumtree_find(const seed_sumtree *t, double mass, uint64_t *slot)
{
	if (!(t->sum[1] > 0))
		return -ENOENT;
	if (!(mass >= 0))
		mass = 0;
	uint64_t k = 1;
	while (k < t->leaves) {
		double left = t->sum[2 * k], right = t->sum[2 * k + 1];
		if ((mass < left && left > 0) || !(right > 0)) {
			k = 2 * k;
		} else {
			mass -= left;
			k = 2 * k + 1;
		}
	}
	*slot = k - t->leaves;
	return 0;
}

void seed_sumtree_stats_get(const seed_sumtree *t, seed_sumtree_stats *st)
{
	uint64_t n = count_of(t);
	st->capacity = t->capacity;
	st->count = n;
	st->inserted = t->next;
	st->evicted = t->next - n;
	st->stale = t->stale;
	st->refused = t->refused;
	st->total = t->sum[1];
	st->min_p = n ? t->lo[1] : 0;
	st->max_p = n ? t->hi[1] : 0;
	st->alpha = t->alpha;
}

/* The id stored in slot (slots [0, count) hold items; the newest of the
 * ids congruent to slot that are < next). */
static uint64_t id_of_slot(const seed_sumtree *t, uint64_t slot)
{
	uint64_t last = t->next - 1;
	uint64_t r = last % t->capacity;
	return slot <= r ? last - (r - slot) : last - r - (t->capacity - slot);
}

/* Both samplers: u[k] when u is given, else a seed_rng_double() from rng. */
static int sample(const seed_sumtree *t, const double *u, seed_rng *rng, int b, double beta, uint64_t *ids,
                  double *prob, float *weight)
{
	if (b < 1 || !isfinite(beta) || beta < 0)
		return -EINVAL;
	double total = t->sum[1];
	if (!(total > 0))
		return -ENOENT;
	double n = (double)count_of(t), wmax = 0;
	for (int k = 0; k < b; k++) {
		double uk = u ? u[k] : seed_rng_double(rng);
		if (!(uk >= 0 && uk < 1))
			uk = 0;
		uint64_t slot;
		seed_sumtree_find(t, (k + uk) * total / b, &slot);
		double pk = t->sum[t->leaves + slot] / total;
		ids[k] = id_of_slot(t, slot);
		if (prob)
			prob[k] = pk;
		/* ((1/N) / P)^beta, largest for the least likely item drawn. */
		if (weight)
			wmax = fmax(wmax, pow(1.0 / (n * pk), beta));
	}
	if (weight) {
		for (int k = 0; k < b; k++) {
			double pk = t->sum[t->leaves + ids[k] % t->capacity] / total;
			/* Priorities far apart give ratios beyond a float's range:
			 * those weights are FLT_MIN, not 0 (nor subnormal), so every
			 * row drawn keeps a positive weight. */
			float wk = (float)(pow(1.0 / (n * pk), beta) / wmax);
			weight[k] = wk >= FLT_MIN ? wk : FLT_MIN;
		}
	}
	return 0;
}

int seed_sumtree_sample_u(const seed_sumtree *t, const double *u, int b, double beta, uint64_t *ids,
                          double *prob, float *weight)
{
	return sample(t, u, NULL, b, beta, ids, prob, weight);
}

int seed_sumtree_sample(const seed_sumtree *t, seed_rng *rng, int b, double beta, uint64_t *ids, double *prob,
                        float *weight)
{
	return sample(t, NULL, rng, b, beta, ids, prob, weight);
}

/* ---- save and restore ---------------------------------------------------
 *
 *   0  "SEEDSUMT"          8 bytes
 *   8  version 1, 0        two u32
 *  16  capacity            u64
 *  24  alpha               f64 bits as u64
 *  32  next, stale, refused  three u64
 *  56  raw p of slots [0, count)   f64 bits as u64 each
 *  end FNV-1a 64 of every byte before it
 *
 * All little-endian, whatever the host. */
#define SAVE_HEADER 56
#define SAVE_VERSION 1

size_t seed_sumtree_save_size(const seed_sumtree *t)
{
	return SAVE_HEADER + 8 * count_of(t) + 8;
}

long seed_sumtree_save(const seed_sumtree *t, void *buf, size_t size)
{
	size_t need = seed_sumtree_save_size(t);
	if (size < need)
		return -ENOSPC;
	unsigned char *p = buf;
	memcpy(p, "SEEDSUMT", 8);
	seed_le_put64(p + 8, SAVE_VERSION);
	seed_le_put64(p + 16, t->capacity);
	seed_le_put64(p + 24, seed_f64_bits(t->alpha));
	seed_le_put64(p + 32, t->next);
	seed_le_put64(p + 40, t->stale);
	seed_le_put64(p + 48, t->refused);
	uint64_t n = count_of(t);
	for (uint64_t i = 0; i < n; i++)
		seed_le_put64(p + SAVE_HEADER + 8 * i, seed_f64_bits(t->lo[t->leaves + i]));
	seed_le_put64(p + need - 8, seed_fnv1a(SEED_FNV1A_INIT, p, need - 8));
	return (long)need;
}

int seed_sumtree_restore(seed_sumtree *t, const void *buf, size_t size, seed_err *err)
{
	const unsigned char *p = buf;
	if (size < SAVE_HEADER + 8)
		return seed_err_set(err, -EBADMSG,
		                    "sum tree state: %zu bytes, shorter than its %d-byte header", size,
		                    SAVE_HEADER + 8);
	if (memcmp(p, "SEEDSUMT", 8) != 0)
		return seed_err_set(err, -EBADMSG, "sum tree state: no SEEDSUMT magic at byte 0");
	uint64_t version = seed_le_get64(p + 8);
	if (version != SAVE_VERSION)
		return seed_err_set(err, -EBADMSG, "sum tree state: version %llu, this library reads %d",
		                    (unsigned long long)version, SAVE_VERSION);
	uint64_t capacity = seed_le_get64(p + 16), next = seed_le_get64(p + 32);
	if (capacity != t->capacity)
		return seed_err_set(err, -EINVAL, "sum tree state: capacity %llu, the tree has %llu",
		                    (unsigned long long)capacity, (unsigned long long)t->capacity);
	uint64_t n = next < capacity ? next : capacity;
	size_t need = SAVE_HEADER + 8 * n + 8;
	if (size != need)
		return seed_err_set(err, -EBADMSG, "sum tree state: %zu bytes, %llu items need %zu", size,
		                    (unsigned long long)n, need);
	if (seed_le_get64(p + need - 8) != seed_fnv1a(SEED_FNV1A_INIT, p, need - 8))
		return seed_err_set(err, -EBADMSG, "sum tree state: checksum mismatch (corrupt)");
	double alpha = seed_bits_f64(seed_le_get64(p + 24));
	if (!isfinite(alpha) || alpha < 0)
		return seed_err_set(err, -EBADMSG, "sum tree state: alpha %g at byte 24", alpha);
	for (uint64_t i = 0; i < n; i++) {
		double q = seed_bits_f64(seed_le_get64(p + SAVE_HEADER + 8 * i));
		if (leaf_of(alpha, q) < 0)
			return seed_err_set(
			    err, -EBADMSG, "sum tree state: slot %llu priority %g at byte %llu",
			    (unsigned long long)i, q, (unsigned long long)(SAVE_HEADER + 8 * i));
	}
	/* Valid: replace the state and rebuild every inner node from the
	 * leaves (an exact rebuild). */
	t->alpha = alpha;
	t->next = next;
	t->stale = seed_le_get64(p + 40);
	t->refused = seed_le_get64(p + 48);
	for (uint64_t i = 0; i < t->leaves; i++) {
		uint64_t k = t->leaves + i;
		if (i < n) {
			double q = seed_bits_f64(seed_le_get64(p + SAVE_HEADER + 8 * i));
			t->sum[k] = leaf_of(alpha, q);
			t->lo[k] = t->hi[k] = q;
		} else {
			t->sum[k] = 0;
			t->lo[k] = INFINITY;
			t->hi[k] = -INFINITY;
		}
	}
	for (uint64_t k = t->leaves - 1; k >= 1; k--) {
		t->sum[k] = t->sum[2 * k] + t->sum[2 * k + 1];
		t->lo[k] = fmin(t->lo[2 * k], t->lo[2 * k + 1]);
		t->hi[k] = fmax(t->hi[2 * k], t->hi[2 * k + 1]);
	}
	return 0;
}
