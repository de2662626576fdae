/* replay.c: the prioritized sequence replay (seed/replay.h).
 *
 * Storage: one allocation, made when the layout is fixed, holding for each
 * of the NARR arrays (the unroll per-step fields in seed_frame_unroll_fields
 * order, then state, previous action, env, run, actor) capacity rows of row[a] bytes each;
 * an item's rows are at its sum tree slot (key % capacity).  The sum tree
 * (seed/sumtree.h) holds the priorities, the FIFO order and the keys.
 *
 * Snapshot: a header (below), the sum tree's own saved state, then for
 * each array in order the rows of the stored items from the oldest key to
 * the newest, and last an FNV-1a 64 checksum of every byte before it.
 */
#include "seed/replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/bytes.h"
#include "seed/buf.h"
#include "seed/sumtree.h"

enum { A_STATE = SEED_UNROLL_NFIELDS, A_PREV, A_ENV, A_RUN, A_ACTOR, NARR };

#define SNAP_MAGIC "SEEDRPL1"
/* magic 8, version u32, header bytes u32, capacity u64, alpha f64, steps,
 * num_actions, obs dtype, obs rank, S, has_layout (u32 each), obs_shape
 * 6 x i64, inserted, sampled, samples, updated, bad_layout, rng s[4], tree
 * bytes, item count (u64 each): version 1; version 2 adds the layout's
 * frame skip and a zero (u32 each).  A layout of frame skip 1 (every
 * unroll before unrolls said their skip, every one of an environment
 * without a skip) and no layout are written as version 1, so that a
 * snapshot has one form and older builds read those; version 2 is for a
 * skip of 2 or more. */
#define SNAP_HEADER_V1 (8 + 4 + 4 + 8 + 8 + 6 * 4 + SEED_TENSOR_MAX_RANK * 8 + 5 * 8 + 4 * 8 + 8 + 8)
#define SNAP_HEADER (SNAP_HEADER_V1 + 4 + 4)

struct seed_replay {
	seed_replay_opts o;
	seed_sumtree *tree;
	seed_rng rng;
	bool has_layout;
	seed_replay_layout layout;
	size_t obs_bytes;
	size_t row[NARR];
	unsigned char *arr[NARR];
	void *mem;
	size_t bytes;
	uint64_t sampled, samples, updated, bad_layout;
	unsigned char *snap; /* header + tree state, for snapshots */
	size_t snap_size;
	unsigned char trailer[8];
	uint64_t *ids; /* scratch for sampling: max_k of each */
	double *prob;
	float *weight;
	size_t max_k;
};

int seed_replay_new(seed_replay **out, const seed_replay_opts *o, seed_err *err)
{
	if (o->capacity < 1 || o->capacity > SEED_SUMTREE_MAX_CAPACITY)
		return seed_err_set(err, -EINVAL, "replay: capacity %llu: need 1 to %u",
		                    (unsigned long long)o->capacity, SEED_SUMTREE_MAX_CAPACITY);
	if (o->min_size < 1 || o->min_size > o->capacity)
		return seed_err_set(err, -EINVAL, "replay: minimum size %llu: need 1 to the capacity %llu",
		                    (unsigned long long)o->min_size, (unsigned long long)o->capacity);
	if (!isfinite(o->beta) || o->beta < 0)
		return seed_err_set(err, -EINVAL, "replay: beta %g: need a finite value >= 0", o->beta);
	if (!isfinite(o->samples_per_insert) || o->samples_per_insert < 0)
		return seed_err_set(err, -EINVAL, "replay: samples per insert %g: need a finite value >= 0",
		                    o->samples_per_insert);
	if (!isfinite(o->tolerance) || o->tolerance < 0)
		return seed_err_set(err, -EINVAL, "replay: rate tolerance %g: need a finite value >= 0",
		                    o->tolerance);
	seed_replay *r = seed_xcalloc(1, sizeof *r);
	r->o = *o;
	int rc = seed_sumtree_new(&r->tree, o->capacity, o->alpha, err);
	if (rc) {
		free(r);
		return rc;
	}
	seed_rng_init(&r->rng, o->seed, 0);
	*out = r;
	return 0;
}

void seed_replay_free(seed_replay **rp)
{
	if (!rp || !*rp)
		return;
	seed_replay *r = *rp;
	seed_sumtree_free(&r->tree);
	free(r->mem);
	free(r->snap);
	free(r->ids);
	free(r->prob);
	free(r->weight);
	free(r);
	*rp = NULL;
}

/* ---- layout -------------------------------------------------------------- */

static int mul_size(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Bytes of one row of each array; 0 on overflow or a bad layout. */
static size_t rows_of(const seed_replay_layout *l, size_t row[NARR], size_t *obs_bytes)
{
	if (l->steps < 1 || l->num_actions < 1 || l->state_size < 0 || l->obs_rank < 0 ||
	    l->obs_rank > SEED_TENSOR_MAX_RANK - 2 || seed_dtype_size(l->obs_dtype) == 0 || l->frame_skip < 0)
		return 0;
	size_t ob = seed_dtype_size(l->obs_dtype), steps = (size_t)l->steps, total = 0;
	for (int i = 0; i < l->obs_rank; i++)
		if (l->obs_shape[i] < 1 || mul_size(ob, (size_t)l->obs_shape[i], &ob))
			return 0;
	for (int f = 0; f < SEED_UNROLL_NFIELDS; f++) {
		const seed_unroll_field *u = &seed_frame_unroll_fields[f];
		size_t e = u->extent == SEED_UNROLL_PER_OBS ? ob : seed_dtype_size(u->dtype);
		if (u->extent == SEED_UNROLL_PER_ACTION && mul_size(e, (size_t)l->num_actions, &e))
			return 0;
		if (mul_size(e, steps, &row[f]))
			return 0;
	}
	row[A_STATE] = 4 * (size_t)l->state_size;
	row[A_PREV] = l->state_size ? 4 : 0; /* with a state, the action before step 0 */
	row[A_ENV] = row[A_RUN] = row[A_ACTOR] = 4;
	for (int a = 0; a < NARR; a++)
		if (__builtin_add_overflow(total, row[a], &total))
			return 0;
	if (obs_bytes)
		*obs_bytes = ob;
	return total;
}

size_t seed_replay_item_bytes(const seed_replay_layout *l)
{
	size_t row[NARR];
	return rows_of(l, row, NULL);
}

size_t seed_replay_bytes(const seed_replay_layout *l, uint64_t capacity)
{
	size_t item = seed_replay_item_bytes(l), n;
	if (!item || capacity > SIZE_MAX || mul_size(item, (size_t)capacity, &n))
		return 0;
	return n;
}

static bool same_layout(const seed_replay_layout *a, const seed_replay_layout *b)
{
	if (a->steps != b->steps || a->num_actions != b->num_actions || a->obs_dtype != b->obs_dtype ||
	    a->obs_rank != b->obs_rank || a->state_size != b->state_size ||
	    (a->frame_skip > 1 ? a->frame_skip : 1) != (b->frame_skip > 1 ? b->frame_skip : 1))
		return false;
	for (int i = 0; i < a->obs_rank; i++)
		if (a->obs_shape[i] != b->obs_shape[i])
			return false;
	return true;
}

static void layout_str(char *buf, size_t size, const seed_replay_layout *l)
{
	size_t o = (size_t)snprintf(buf, size, "T+1 %d, obs %s [", l->steps, seed_dtype_name(l->obs_dtype));
	for (int i = 0; i < l->obs_rank && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)l->obs_shape[i]);
	if (o < size)
		o += (size_t)snprintf(buf + o, size - o, "], A %d, S %d", l->num_actions, l->state_size);
	if (o < size && l->frame_skip > 1)
		snprintf(buf + o, size - o, ", frame skip %d", l->frame_skip);
}

int seed_replay_layout_of(const seed_frame *f, seed_replay_layout *l, seed_err *err)
{
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	if (f->type != SEED_FRAME_UNROLL || !obs || obs->rank < 2)
		return seed_err_set(err, -SEED_EFRAME, "replay: a %s frame, expected an unroll frame",
		                    seed_frame_type_name(f->type));
	/* Items and sequences frames hold discrete actions (seed-frames(7)). */
	const seed_tensor *act = seed_frame_tensor(f, "action");
	if (act && act->dtype == SEED_DTYPE_F32)
		return seed_err_set(err, -SEED_EFRAME,
		                    "unroll frame: field 'action': f32, a Box action space; the replay "
		                    "holds discrete actions (i32) only");
	seed_replay_layout n = {.steps = (int)obs->shape[1],
	                        .num_actions = (int)seed_frame_int(f, "num_actions", 0),
	                        .obs_dtype = obs->dtype,
	                        .obs_rank = obs->rank - 2};
	for (int i = 0; i < n.obs_rank; i++)
		n.obs_shape[i] = obs->shape[2 + i];
	const seed_tensor *st = seed_frame_tensor(f, "state");
	n.state_size = st && st->rank == 2 ? (int)st->shape[1] : 0;
	n.frame_skip = (int)seed_frame_int(f, "frame_skip", 1);
	*l = n;
	return 0;
}

int seed_replay_set_layout(seed_replay *r, const seed_replay_layout *l, seed_err *err)
{
	char a[200], b[200];
	if (r->has_layout) {
		if (same_layout(&r->layout, l))
			return 0;
		layout_str(a, sizeof a, l);
		layout_str(b, sizeof b, &r->layout);
		return seed_err_set(err, -EINVAL, "replay: layout %s, but the replay holds %s", a, b);
	}
	size_t row[NARR], ob;
	size_t item = rows_of(l, row, &ob), bytes = seed_replay_bytes(l, r->o.capacity);
	layout_str(a, sizeof a, l);
	if (!item || !bytes)
		return seed_err_set(err, -E2BIG, "replay: layout %s: %llu items do not fit in memory", a,
		                    (unsigned long long)r->o.capacity);
	if (r->o.max_bytes && bytes > r->o.max_bytes)
		return seed_err_set(err, -E2BIG,
		                    "replay: layout %s: %llu items take %zu bytes, more than the %zu allowed",
		                    a, (unsigned long long)r->o.capacity, bytes, r->o.max_bytes);
	/* Each array 64-byte aligned. */
	size_t total = 0, off[NARR];
	for (int k = 0; k < NARR; k++) {
		off[k] = total;
		total += (row[k] * (size_t)r->o.capacity + 63) & ~(size_t)63;
	}
	void *mem = seed_xaligned(total);
	/* Touch it now, so that the memory is really held from the start. */
	memset(mem, 0, total);
	r->mem = mem;
	r->bytes = total;
	r->obs_bytes = ob;
	for (int k = 0; k < NARR; k++) {
		r->row[k] = row[k];
		r->arr[k] = (unsigned char *)mem + off[k];
	}
	r->layout = *l;
	r->layout.frame_skip = l->frame_skip > 1 ? l->frame_skip : 1;
	r->has_layout = true;
	return 0;
}

const seed_replay_layout *seed_replay_get_layout(const seed_replay *r)
{
	return r->has_layout ? &r->layout : NULL;
}

/* ---- insert -------------------------------------------------------------- */

int seed_replay_insert(seed_replay *r, const seed_frame *f, int64_t *first_key, seed_err *err)
{
	seed_replay_layout l;
	int rc = seed_replay_layout_of(f, &l, err);
	if (rc)
		return rc;
	if (r->has_layout && !same_layout(&l, &r->layout)) {
		char a[200], b[200];
		layout_str(a, sizeof a, &l);
		layout_str(b, sizeof b, &r->layout);
		r->bad_layout++;
		return seed_err_set(err, -SEED_EFRAME, "unroll frame: layout %s, but the replay holds %s", a,
		                    b);
	}
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t B = obs->shape[0];
	const seed_tensor *pt = seed_frame_tensor(f, "priority");
	const seed_value *pv = seed_frame_get(f, "priority");
	if (pv && (!pt || pt->dtype != SEED_DTYPE_F32 || pt->rank != 1 || pt->shape[0] != B))
		return seed_err_set(err, -SEED_EFRAME, "unroll frame: field 'priority': expected f32 [%lld]",
		                    (long long)B);
	if (pt)
		for (int64_t b = 0; b < B; b++) {
			float p;
			memcpy(&p, (const char *)pt->data + 4 * b, 4);
			/* What the sum tree takes: p^alpha finite and at most its
			 * largest leaf (checked here, so that no row is stored when
			 * one is refused). */
			if (!isfinite(p) || p < 0 ||
			    (p > 0 && !(pow(p, r->o.alpha) <= SEED_SUMTREE_MAX_LEAF)))
				return seed_err_set(
				    err, -SEED_EFRAME,
				    "unroll frame: field 'priority': row %lld is %g, expected a "
				    "finite value >= 0 (whose power alpha is at most %g)",
				    (long long)b, (double)p, SEED_SUMTREE_MAX_LEAF);
		}
	if (!r->has_layout && (rc = seed_replay_set_layout(r, &l, err)) != 0)
		return rc;
	const unsigned char *src[NARR] = {0};
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
		src[k] = seed_frame_tensor(f, seed_frame_unroll_fields[k].name)->data;
	const seed_tensor *st = seed_frame_tensor(f, "state");
	src[A_STATE] = st ? st->data : NULL;
	const seed_tensor *pa = seed_frame_tensor(f, "prev_action");
	src[A_PREV] = pa ? pa->data : NULL; /* absent: -1, none */
	src[A_ENV] = seed_frame_tensor(f, "env")->data;
	uint32_t run = (uint32_t)seed_frame_int(f, "run", 0), actor = (uint32_t)seed_frame_int(f, "actor", 0);
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	double dflt = ts.count ? ts.max_p : 1.0;
	for (int64_t b = 0; b < B; b++) {
		double p = dflt;
		if (pt) {
			float pf;
			memcpy(&pf, (const char *)pt->data + 4 * b, 4);
			p = pf;
		}
		uint64_t id;
		if (seed_sumtree_insert(r->tree, p, &id) != 0)
			/* Only a default priority (the largest stored) can get here,
			 * and the tree took it once already. */
			return seed_err_set(err, -EINVAL, "replay: the sum tree refused priority %g", p);
		if (b == 0 && first_key)
			*first_key = (int64_t)id;
		size_t slot = (size_t)seed_sumtree_slot(r->tree, id);
		for (int k = 0; k <= A_ENV; k++)
			if (r->row[k] && src[k])
				memcpy(r->arr[k] + slot * r->row[k], src[k] + (size_t)b * r->row[k],
				       r->row[k]);
		if (r->row[A_PREV] && !src[A_PREV]) {
			int32_t none = -1;
			memcpy(r->arr[A_PREV] + 4 * slot, &none, 4);
		}
		memcpy(r->arr[A_RUN] + 4 * slot, &run, 4);
		memcpy(r->arr[A_ACTOR] + 4 * slot, &actor, 4);
	}
	return 0;
}

/* ---- rate limiter -------------------------------------------------------- */

static double diff_of(const seed_replay *r)
{
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	return r->o.samples_per_insert * (double)ts.inserted - (double)r->sampled;
}

bool seed_replay_insert_ready(const seed_replay *r)
{
	double R = r->o.samples_per_insert;
	if (R == 0)
		return true;
	return diff_of(r) <= R * (double)r->o.min_size + r->o.tolerance;
}

int seed_replay_sample_ready(const seed_replay *r, int K)
{
	double R = r->o.samples_per_insert;
	if (K < 1 || (R > 0 && (double)K > 2 * r->o.tolerance))
		return SEED_REPLAY_NEVER;
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	if (ts.count < r->o.min_size)
		return SEED_REPLAY_WAIT;
	if (R > 0 && diff_of(r) - K < R * (double)r->o.min_size - r->o.tolerance)
		return SEED_REPLAY_WAIT;
	return SEED_REPLAY_READY;
}

/* ---- sample -------------------------------------------------------------- */

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

size_t seed_replay_batch_bytes(const seed_replay *r, int K)
{
	if (!r->has_layout || K < 1)
		return 0;
	size_t n = 0;
	for (int k = 0; k < NARR; k++)
		n += align64(r->row[k] * (size_t)K);
	return n + align64(8 * (size_t)K) + align64(4 * (size_t)K) + align64(8 * (size_t)K);
}

int seed_replay_batch_carve(const seed_replay *r, int K, void *mem, seed_replay_batch *b)
{
	if (!r->has_layout || K < 1)
		return -EINVAL;
	unsigned char *p = mem;
	void *arr[NARR];
	for (int k = 0; k < NARR; k++) {
		arr[k] = p;
		p += align64(r->row[k] * (size_t)K);
	}
	memset(b, 0, sizeof *b);
	b->K = K;
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
		b->field[k] = arr[k];
	b->state = r->layout.state_size ? arr[A_STATE] : NULL;
	b->prev_action = r->layout.state_size ? arr[A_PREV] : NULL;
	b->env = arr[A_ENV];
	b->run = arr[A_RUN];
	b->actor = arr[A_ACTOR];
	b->key = (int64_t *)p;
	p += align64(8 * (size_t)K);
	b->weight = (float *)p;
	p += align64(4 * (size_t)K);
	b->prob = (double *)p;
	return 0;
}

/* The sampling scratch (ids, prob, weight) for K rows: one capacity. */
static void grow_scratch(seed_replay *r, int K)
{
	size_t cap = r->max_k, cap2 = r->max_k;
	r->ids = seed_xgrow(r->ids, &cap, (size_t)K, sizeof *r->ids);
	r->prob = seed_xgrow(r->prob, &cap2, (size_t)K, sizeof *r->prob);
	r->weight = seed_xgrow(r->weight, &r->max_k, (size_t)K, sizeof *r->weight);
}

int seed_replay_sample(seed_replay *r, seed_replay_batch *b, seed_err *err)
{
	if (!r->has_layout || b->K < 1)
		return seed_err_set(err, -EINVAL, "replay: no layout yet, or a batch of %d", b->K);
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	if (ts.count < r->o.min_size)
		return seed_err_set(err, -EAGAIN, "replay: %llu sequences stored, sampling starts at %llu",
		                    (unsigned long long)ts.count, (unsigned long long)r->o.min_size);
	int K = b->K;
	grow_scratch(r, K);
	int rc = seed_sumtree_sample(r->tree, &r->rng, K, r->o.beta, r->ids, r->prob, r->weight);
	if (rc == -ENOENT)
		return seed_err_set(err, -ENOENT, "replay: every stored priority is 0");
	if (rc)
		return seed_err_set(err, rc, "replay: sampling failed");
	for (int i = 0; i < K; i++) {
		size_t slot = (size_t)seed_sumtree_slot(r->tree, r->ids[i]);
		unsigned char *dst[NARR] = {[A_STATE] = (unsigned char *)b->state,
		                            [A_PREV] = (unsigned char *)b->prev_action,
		                            [A_ENV] = (unsigned char *)b->env,
		                            [A_RUN] = (unsigned char *)b->run,
		                            [A_ACTOR] = (unsigned char *)b->actor};
		for (int k = 0; k < SEED_UNROLL_NFIELDS; k++)
			dst[k] = b->field[k];
		for (int k = 0; k < NARR; k++)
			if (r->row[k])
				memcpy(dst[k] + (size_t)i * r->row[k], r->arr[k] + slot * r->row[k],
				       r->row[k]);
		b->key[i] = (int64_t)r->ids[i];
		b->weight[i] = r->weight[i];
		if (b->prob)
			b->prob[i] = r->prob[i];
	}
	r->sampled += (uint64_t)K;
	r->samples++;
	return 0;
}

int seed_replay_batch_frame(const seed_replay *r, const seed_replay_batch *b, seed_frame *f)
{
	if (!r->has_layout)
		return -EINVAL;
	const seed_replay_layout *l = &r->layout;
	seed_frame_init(f, SEED_FRAME_SEQUENCES);
	int64_t K = b->K;
	int rc = seed_frame_set_int(f, "num_actions", l->num_actions);
	rc |= seed_frame_set_tensor(f, "env", seed_tensor_view(b->env, SEED_DTYPE_I32, 1, &K));
	rc |= seed_frame_set_tensor(f, "run", seed_tensor_view(b->run, SEED_DTYPE_I32, 1, &K));
	rc |= seed_frame_set_tensor(f, "actor", seed_tensor_view(b->actor, SEED_DTYPE_I32, 1, &K));
	if (l->state_size)
		rc |= seed_frame_set_tensor(
		    f, "state", seed_tensor_view(b->state, SEED_DTYPE_F32, 2, (int64_t[]){K, l->state_size}));
	if (l->state_size)
		rc |= seed_frame_set_tensor(f, "prev_action",
		                            seed_tensor_view(b->prev_action, SEED_DTYPE_I32, 1, &K));
	for (int k = 0; k < SEED_UNROLL_NFIELDS; k++) {
		const seed_unroll_field *u = &seed_frame_unroll_fields[k];
		int64_t shape[SEED_TENSOR_MAX_RANK] = {K, l->steps};
		int rank = 2;
		seed_dtype dt = u->dtype;
		if (u->extent == SEED_UNROLL_PER_ACTION)
			shape[rank++] = l->num_actions;
		if (u->extent == SEED_UNROLL_PER_OBS) {
			dt = l->obs_dtype;
			for (int i = 0; i < l->obs_rank; i++)
				shape[rank++] = l->obs_shape[i];
		}
		rc |= seed_frame_set_tensor(f, u->name, seed_tensor_view(b->field[k], dt, rank, shape));
	}
	rc |= seed_frame_set_tensor(f, "key", seed_tensor_view(b->key, SEED_DTYPE_I64, 1, &K));
	rc |= seed_frame_set_tensor(f, "weight", seed_tensor_view(b->weight, SEED_DTYPE_F32, 1, &K));
	if (l->frame_skip > 1)
		rc |= seed_frame_set_int(f, "frame_skip", l->frame_skip);
	return rc ? -ENOSPC : 0;
}

/* ---- priorities ---------------------------------------------------------- */

size_t seed_replay_update(seed_replay *r, size_t n, const int64_t *keys, const float *priorities)
{
	size_t applied = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t key;
		float p;
		memcpy(&key, keys + i, sizeof key); /* frame data may be unaligned */
		memcpy(&p, priorities + i, sizeof p);
		if (key >= 0 && seed_sumtree_update(r->tree, (uint64_t)key, p) == 0)
			applied++;
		else if (key < 0)
			seed_sumtree_update(r->tree, UINT64_MAX, p); /* counted as stale */
	}
	r->updated += applied;
	return applied;
}

int seed_replay_update_frame(seed_replay *r, const seed_frame *f, size_t *applied, seed_err *err)
{
	const seed_tensor *k = seed_frame_tensor(f, "key"), *p = seed_frame_tensor(f, "priority");
	if (f->type != SEED_FRAME_PRIORITY || !k || !p)
		return seed_err_set(err, -SEED_EFRAME, "replay: a %s frame, expected a priority frame",
		                    seed_frame_type_name(f->type));
	size_t n = seed_replay_update(r, (size_t)k->shape[0], k->data, p->data);
	if (applied)
		*applied = n;
	return 0;
}

int seed_replay_priority(const seed_replay *r, int64_t key, double *p)
{
	if (key < 0)
		return -ESTALE;
	return seed_sumtree_priority(r->tree, (uint64_t)key, p);
}

void seed_replay_stats_get(const seed_replay *r, seed_replay_stats *st)
{
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	*st = (seed_replay_stats){.capacity = ts.capacity,
	                          .size = ts.count,
	                          .inserted = ts.inserted,
	                          .evicted = ts.evicted,
	                          .sampled = r->sampled,
	                          .samples = r->samples,
	                          .updated = r->updated,
	                          .stale = ts.stale,
	                          .refused = ts.refused,
	                          .bad_layout = r->bad_layout,
	                          .bytes = r->bytes,
	                          .has_layout = r->has_layout};
}

/* ---- snapshots ----------------------------------------------------------- */

/* The stored items in key order as at most two runs of slots each:
 * [first, first + n0) and [0, n1). */
static void runs_of(const seed_replay *r, uint64_t *first, uint64_t *n0, uint64_t *n1)
{
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	uint64_t cap = r->o.capacity, start = (ts.inserted - ts.count) % cap;
	*first = start;
	*n0 = ts.count < cap - start ? ts.count : cap - start;
	*n1 = ts.count - *n0;
}

int seed_replay_snapshot_parts(seed_replay *r, seed_fs_part *parts, size_t *nparts, seed_err *err)
{
	bool v2 = r->has_layout && r->layout.frame_skip > 1;
	size_t hb = v2 ? SNAP_HEADER : SNAP_HEADER_V1;
	size_t tree_bytes = seed_sumtree_save_size(r->tree), need = hb + tree_bytes;
	r->snap = seed_xgrow(r->snap, &r->snap_size, need, 1);
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(r->tree, &ts);
	unsigned char *h = r->snap;
	memset(h, 0, hb);
	memcpy(h, SNAP_MAGIC, 8);
	seed_le_put32(h + 8, v2 ? 2 : 1);
	seed_le_put32(h + 12, (uint32_t)hb);
	seed_le_put64(h + 16, r->o.capacity);
	seed_le_put64(h + 24, seed_f64_bits(r->o.alpha));
	const seed_replay_layout *l = &r->layout;
	seed_le_put32(h + 32, r->has_layout ? (uint32_t)l->steps : 0);
	seed_le_put32(h + 36, r->has_layout ? (uint32_t)l->num_actions : 0);
	seed_le_put32(h + 40, r->has_layout ? (uint32_t)l->obs_dtype : 0);
	seed_le_put32(h + 44, r->has_layout ? (uint32_t)l->obs_rank : 0);
	seed_le_put32(h + 48, r->has_layout ? (uint32_t)l->state_size : 0);
	seed_le_put32(h + 52, r->has_layout);
	unsigned char *q = h + 56;
	for (int i = 0; i < SEED_TENSOR_MAX_RANK; i++, q += 8)
		seed_le_put64(q, r->has_layout && i < l->obs_rank ? (uint64_t)l->obs_shape[i] : 0);
	const uint64_t counters[] = {ts.inserted, r->sampled, r->samples, r->updated, r->bad_layout};
	for (size_t i = 0; i < 5; i++, q += 8)
		seed_le_put64(q, counters[i]);
	for (int i = 0; i < 4; i++, q += 8)
		seed_le_put64(q, r->rng.s[i]);
	seed_le_put64(q, tree_bytes);
	seed_le_put64(q + 8, r->has_layout ? ts.count : 0);
	if (v2)
		seed_le_put32(q + 16, (uint32_t)l->frame_skip); /* and a zero word */
	long wrote = seed_sumtree_save(r->tree, h + hb, tree_bytes);
	if (wrote < 0 || (size_t)wrote != tree_bytes)
		return seed_err_set(err, -EIO, "replay: the sum tree's state did not fit");
	size_t n = 0;
	parts[n++] = (seed_fs_part){h, need};
	uint64_t sum = seed_fnv1a(SEED_FNV1A_INIT, h, need);
	if (r->has_layout) {
		uint64_t first, n0, n1;
		runs_of(r, &first, &n0, &n1);
		for (int k = 0; k < NARR; k++) {
			if (!r->row[k])
				continue;
			parts[n] = (seed_fs_part){r->arr[k] + first * r->row[k], n0 * r->row[k]};
			sum = seed_fnv1a(sum, parts[n].data, parts[n].len);
			n++;
			if (n1) {
				parts[n] = (seed_fs_part){r->arr[k], n1 * r->row[k]};
				sum = seed_fnv1a(sum, parts[n].data, parts[n].len);
				n++;
			}
		}
	}
	seed_le_put64(r->trailer, sum);
	parts[n++] = (seed_fs_part){r->trailer, 8};
	*nparts = n;
	return 0;
}

int seed_replay_save(seed_replay *r, const char *path, seed_err *err)
{
	seed_fs_part parts[SEED_REPLAY_SNAPSHOT_PARTS];
	size_t n;
	int rc = seed_replay_snapshot_parts(r, parts, &n, err);
	if (rc)
		return rc;
	return seed_fs_write_atomic(path, parts, n, err);
}

/* A snapshot's identity: magic, version, checksum, and the capacity and
 * alpha it was taken with, which must be r's. */
static int snap_check_header(const seed_replay *r, const unsigned char *h, size_t len, seed_err *err)
{
	if (len < SNAP_HEADER_V1 + 8 || memcmp(h, SNAP_MAGIC, 8) != 0)
		return seed_err_set(err, -EBADMSG, "not a replay snapshot (%zu bytes, no '%s' header)", len,
		                    SNAP_MAGIC);
	uint32_t v = seed_le_get32(h + 8), hb = seed_le_get32(h + 12);
	if (!(v == 1 && hb == SNAP_HEADER_V1) && !(v == 2 && hb == SNAP_HEADER))
		return seed_err_set(err, -EBADMSG, "snapshot version %u, this build reads versions 1 and 2",
		                    v);
	if (len < hb + 8)
		return seed_err_set(err, -EBADMSG, "not a replay snapshot (%zu bytes, no '%s' header)", len,
		                    SNAP_MAGIC);
	if (seed_fnv1a(SEED_FNV1A_INIT, h, len - 8) != seed_le_get64(h + len - 8))
		return seed_err_set(err, -EBADMSG, "snapshot checksum does not match: the file is corrupt");
	uint64_t cap = seed_le_get64(h + 16);
	if (cap != r->o.capacity)
		return seed_err_set(err, -EINVAL, "snapshot of capacity %llu, but --capacity is %llu",
		                    (unsigned long long)cap, (unsigned long long)r->o.capacity);
	if (seed_le_get64(h + 24) != seed_f64_bits(r->o.alpha)) {
		double a;
		uint64_t bits = seed_le_get64(h + 24);
		memcpy(&a, &bits, 8);
		return seed_err_set(err, -EINVAL, "snapshot of alpha %.17g, but alpha is %.17g", a,
		                    r->o.alpha);
	}
	return 0;
}

/* The layout a snapshot holds (bytes 32 to 56 + 8 max rank, and in a
 * version 2 header, of hb bytes, the frame skip after the item count), if
 * any: *has says whether it holds one, l is it, checked against r's if r
 * has one. */
static int snap_layout(const seed_replay *r, const unsigned char *h, uint32_t hb, seed_replay_layout *l,
                       bool *has, seed_err *err)
{
	uint32_t has_word = seed_le_get32(h + 52);
	uint32_t skip = hb == SNAP_HEADER ? seed_le_get32(h + SNAP_HEADER_V1) : 1;
	*has = has_word != 0;
	if (hb == SNAP_HEADER && seed_le_get32(h + SNAP_HEADER_V1 + 4) != 0)
		return seed_err_set(err, -EBADMSG, "snapshot word at byte %d is %u, expected 0",
		                    SNAP_HEADER_V1 + 4, seed_le_get32(h + SNAP_HEADER_V1 + 4));
	/* Unused fields are 0, so that a snapshot has one form (restoring and
	 * saving again gives the same bytes). */
	if (has_word > 1)
		return seed_err_set(err, -EBADMSG, "snapshot layout flag %u at byte 52, expected 0 or 1",
		                    has_word);
	for (int i = *has ? (int)seed_le_get32(h + 44) : 0; i < SEED_TENSOR_MAX_RANK && i >= 0; i++)
		if (seed_le_get64(h + 56 + 8 * i) != 0)
			return seed_err_set(err, -EBADMSG,
			                    "snapshot observation dimension %d is set past the rank", i);
	/* Version 2 is for a layout of frame skip 2 or more only; the rest is
	 * version 1, so that a snapshot has one form. */
	if (hb == SNAP_HEADER && (!*has || skip < 2 || skip > INT32_MAX))
		return seed_err_set(err, -EBADMSG,
		                    "snapshot version 2 %s frame skip %u: version 2 is for a layout of frame "
		                    "skip 2 or more",
		                    *has ? "with" : "without a layout, with", skip);
	if (!*has) {
		for (int k = 32; k < 52; k += 4)
			if (seed_le_get32(h + k) != 0)
				return seed_err_set(err, -EBADMSG,
				                    "snapshot without a layout has layout fields set");
		return 0;
	}
	l->frame_skip = (int)skip;
	l->steps = (int)seed_le_get32(h + 32);
	l->num_actions = (int)seed_le_get32(h + 36);
	l->obs_dtype = (seed_dtype)seed_le_get32(h + 40);
	l->obs_rank = (int)seed_le_get32(h + 44);
	l->state_size = (int)seed_le_get32(h + 48);
	if (seed_le_get32(h + 32) > INT32_MAX || seed_le_get32(h + 36) > INT32_MAX ||
	    seed_le_get32(h + 48) > INT32_MAX || seed_le_get32(h + 44) > SEED_TENSOR_MAX_RANK - 2)
		return seed_err_set(err, -EBADMSG, "snapshot layout out of range");
	for (int i = 0; i < l->obs_rank; i++) {
		uint64_t d = seed_le_get64(h + 56 + 8 * i);
		if (d < 1 || d > INT32_MAX)
			return seed_err_set(err, -EBADMSG, "snapshot observation dimension %d is %llu", i,
			                    (unsigned long long)d);
		l->obs_shape[i] = (int64_t)d;
	}
	if (!seed_replay_item_bytes(l))
		return seed_err_set(err, -EBADMSG, "snapshot layout is not valid");
	if (r->has_layout && !same_layout(l, &r->layout)) {
		char a[200], b[200];
		layout_str(a, sizeof a, l);
		layout_str(b, sizeof b, &r->layout);
		return seed_err_set(err, -EINVAL, "snapshot layout %s, but the replay holds %s", a, b);
	}
	return 0;
}

/* The snapshot's sum tree (tree_bytes at tree), checked against the
 * header's alpha and insertions. */
static int snap_tree(const seed_replay *r, const unsigned char *tree_at, uint64_t tree_bytes,
                     uint64_t inserted, seed_sumtree **out, seed_err *err)
{
	seed_sumtree *tree = NULL;
	int rc = seed_sumtree_new(&tree, r->o.capacity, r->o.alpha, err);
	if (rc)
		return rc;
	rc = seed_sumtree_restore(tree, tree_at, (size_t)tree_bytes, err);
	seed_sumtree_stats ts;
	seed_sumtree_stats_get(tree, &ts);
	if (!rc && seed_f64_bits(ts.alpha) != seed_f64_bits(r->o.alpha))
		rc = seed_err_set(err, -EBADMSG, "snapshot: the sum tree's alpha %.17g is not the header's",
		                  ts.alpha);
	if (!rc && ts.inserted != inserted)
		rc = seed_err_set(err, -EBADMSG,
		                  "snapshot: the sum tree holds %llu insertions, the header %llu",
		                  (unsigned long long)ts.inserted, (unsigned long long)inserted);
	if (rc) {
		seed_sumtree_free(&tree);
		return rc;
	}
	*out = tree;
	return 0;
}

/* The items after the tree at p into r's arrays, in the ring's order. */
static void snap_items(seed_replay *r, const unsigned char *p)
{
	uint64_t first, n0, n1;
	runs_of(r, &first, &n0, &n1);
	for (int k = 0; k < NARR; k++) {
		if (!r->row[k])
			continue;
		memcpy(r->arr[k] + first * r->row[k], p, n0 * r->row[k]);
		p += n0 * r->row[k];
		memcpy(r->arr[k], p, n1 * r->row[k]);
		p += n1 * r->row[k];
	}
}

int seed_replay_restore(seed_replay *r, const void *buf, size_t len, seed_err *err)
{
	const unsigned char *h = buf;
	int rc = snap_check_header(r, h, len, err);
	if (rc)
		return rc;
	uint64_t cap = seed_le_get64(h + 16);
	uint32_t hb = seed_le_get32(h + 12); /* SNAP_HEADER, or a version 1's */
	seed_replay_layout l = {0};
	bool has;
	if ((rc = snap_layout(r, h, hb, &l, &has, err)))
		return rc;
	const unsigned char *q = h + 56 + 8 * SEED_TENSOR_MAX_RANK;
	uint64_t inserted = seed_le_get64(q), sampled = seed_le_get64(q + 8), samples = seed_le_get64(q + 16),
	         updated = seed_le_get64(q + 24), bad = seed_le_get64(q + 32);
	seed_rng rng;
	for (int i = 0; i < 4; i++)
		rng.s[i] = seed_le_get64(q + 40 + 8 * i);
	uint64_t tree_bytes = seed_le_get64(q + 72), count = seed_le_get64(q + 80);
	uint64_t want_count = inserted < cap ? inserted : cap;
	if (count != (has ? want_count : 0))
		return seed_err_set(err, -EBADMSG, "snapshot holds %llu items, expected %llu",
		                    (unsigned long long)count, (unsigned long long)(has ? want_count : 0));
	size_t item = has ? seed_replay_item_bytes(&l) : 0, items_bytes;
	if (tree_bytes > len || mul_size(item, (size_t)count, &items_bytes) || items_bytes > len ||
	    hb + tree_bytes + items_bytes + 8 != len)
		return seed_err_set(err, -EBADMSG, "snapshot of %zu bytes, its header says otherwise", len);
	seed_sumtree *tree = NULL;
	if ((rc = snap_tree(r, h + hb, tree_bytes, inserted, &tree, err)))
		return rc;
	if (has && !r->has_layout && (rc = seed_replay_set_layout(r, &l, err))) {
		seed_sumtree_free(&tree);
		return rc;
	}
	seed_sumtree_free(&r->tree);
	r->tree = tree;
	r->rng = rng;
	r->sampled = sampled;
	r->samples = samples;
	r->updated = updated;
	r->bad_layout = bad;
	if (has)
		snap_items(r, h + hb + tree_bytes);
	return 0;
}

int seed_replay_load(seed_replay *r, const char *path, seed_err *err)
{
	void *data;
	size_t len;
	int rc = seed_fs_read(path, 0, &data, &len, err);
	if (rc)
		return rc;
	seed_err e = {{0}};
	rc = seed_replay_restore(r, data, len, &e);
	free(data);
	if (rc)
		return seed_err_set(err, rc, "%s: %s", path, e.msg);
	return 0;
}
