/* seed/replay.h: a prioritized replay of whole sequences (seed-replay's store).
 *
 * An item is one row of an unroll frame: its T+1 steps of every per-step
 * field of seed_frame_unroll_fields, its recurrent state (S floats, when
 * the frame has `state`, with the action before step 0, `prev_action`: -1
 * when the frame has none), and its env, run and actor.  The first unroll
 * inserted fixes the layout (T+1, the observation's dtype and shape, A, S,
 * the frame skip);
 * an unroll of another layout is refused (-SEED_EFRAME, nothing stored).
 *
 * Capacity is in sequences, filled first in, first out: inserting into a
 * full replay evicts the oldest item.  The memory for every item is
 * allocated once, when the layout is fixed (seed_replay_bytes says how
 * much); nothing allocates afterwards, so memory stays within capacity.
 *
 * Sampling is the sum tree's (seed/sumtree.h): P(i) = p_i^alpha / sum_j
 * p_j^alpha, stratified, importance weights ((1/N) / P(i))^beta over their
 * batch maximum.  An item's key is its sum tree id (the serial number of
 * its insertion).  An unroll's optional `priority` field (f32 [B]) gives
 * its rows' first priorities; without it every row enters with the largest
 * priority stored (1 when the replay is empty), as in prioritized
 * experience replay.
 *
 * The rate limiter (Reverb's SampleToInsertRatio).  With R sampled
 * sequences per inserted one (R > 0), tolerance E >= 0 and minimum size M,
 * let c = R * M and diff = R * inserted - sampled (both counts since the
 * start; a sample of K sequences adds K to sampled).  Then
 *   an insert is taken      while diff <= c + E          (or R = 0);
 *   a sample of K answered  while size >= M and diff - K >= c - E
 *                           (size >= M alone when R = 0).
 * Both are blocked only if c + E < diff < c - E + K, which cannot happen
 * while K <= 2E: a request for more (or for more than the capacity) can
 * never be answered and is refused (SEED_REPLAY_NEVER).  An insert of B rows
 * may overshoot c + E by R * B; samples bring diff back.
 *
 * Snapshots (seed_replay_save / seed_replay_restore): the layout, the
 * options that must match (capacity, alpha), the counters, the sampling
 * generator's state, the sum tree's state and the stored items, in one
 * little-endian byte string with a checksum; seed-replay(1) documents the
 * format.
 *
 * Threads: a replay belongs to one thread at a time; nothing is global.
 */
#ifndef SEED_REPLAY_H
#define SEED_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/frame.h"
#include "seed/fsutil.h"
#include "seed/rng.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_replay seed_replay;

typedef struct seed_replay_opts {
	uint64_t capacity;         /* sequences, 1 .. SEED_SUMTREE_MAX_CAPACITY */
	double alpha;              /* priority exponent (SEED: 0.9) */
	double beta;               /* importance weight exponent (SEED: 0.6) */
	uint64_t min_size;         /* items stored before sampling starts, 1 .. capacity */
	double samples_per_insert; /* R; 0: no rate limiter */
	double tolerance;          /* E, in sequences, >= 0 */
	uint64_t seed;             /* the sampling generator's seed */
	size_t max_bytes;          /* the most memory the items may take; 0: no bound */
} seed_replay_opts;

/* The layout every item has, fixed by the first unroll. */
typedef struct seed_replay_layout {
	int steps;       /* T+1, >= 1 */
	int num_actions; /* A, >= 1 */
	seed_dtype obs_dtype;
	int obs_rank; /* of one observation */
	int64_t obs_shape[SEED_TENSOR_MAX_RANK];
	int state_size; /* S; 0: none */
	/* The unrolls' frame skip (their field frame_skip, seed-frames(7));
	 * 0 means 1.  Sequences frames carry it on when it is above 1. */
	int frame_skip;
} seed_replay_layout;

typedef struct seed_replay_stats {
	uint64_t capacity, size; /* items: room, stored */
	uint64_t inserted;       /* items ever inserted */
	uint64_t evicted;        /* items pushed out by later ones */
	uint64_t sampled;        /* items sampled (with repeats) */
	uint64_t samples;        /* batches sampled */
	uint64_t updated;        /* priorities updated */
	uint64_t stale;          /* priority updates ignored: the key was not live */
	uint64_t refused;        /* priorities refused: negative or not finite */
	uint64_t bad_layout;     /* unrolls refused for their layout */
	size_t bytes;            /* memory held for the items (0 until the layout is fixed) */
	bool has_layout;
} seed_replay_stats;

/* A replay of options o (copied).  Nothing is allocated for items until the
 * first insert fixes the layout.  Errors: -EINVAL for bad options (err says
 * which).  Allocation failure aborts (seed_oom). */
int seed_replay_new(seed_replay **out, const seed_replay_opts *o, seed_err *err);
/* Free *rp (NULL or *rp NULL: nothing) and set *rp to NULL. */
void seed_replay_free(seed_replay **rp);

/* The layout of unroll frame f (validated), into *l; -SEED_EFRAME if f is
 * not an unroll frame, or is a Box one (f32 actions: the replay holds
 * discrete actions only). */
int seed_replay_layout_of(const seed_frame *f, seed_replay_layout *l, seed_err *err);
/* Bytes of one item of layout l, and of capacity items (0 on overflow). */
size_t seed_replay_item_bytes(const seed_replay_layout *l);
size_t seed_replay_bytes(const seed_replay_layout *l, uint64_t capacity);
/* Fix the layout (allocating the items' memory) without inserting.
 * -EINVAL if one is fixed already and differs, -E2BIG past max_bytes
 * (running out of memory below it aborts: seed_oom). */
int seed_replay_set_layout(seed_replay *r, const seed_replay_layout *l, seed_err *err);
/* The layout (NULL until fixed). */
const seed_replay_layout *seed_replay_get_layout(const seed_replay *r);

/* Insert every row of unroll frame f (validated by the frame decoder).
 * The first insert fixes the layout.  Refused with -SEED_EFRAME and a
 * message, nothing stored: another layout (counted in bad_layout), a
 * `priority` field that is not f32 [B] or holds a negative or non-finite
 * value.  -E2BIG when the first layout's memory is past max_bytes.
 * Does not consult the rate limiter (see seed_replay_insert_ready).
 * Returns 0 and, when first_key is not NULL, the key of row 0 (rows get
 * consecutive keys). */
int seed_replay_insert(seed_replay *r, const seed_frame *f, int64_t *first_key, seed_err *err);

/* Caller buffers for a sampled batch of K sequences, each as in a
 * sequences frame: field[SEED_UNROLL_*] [K, T+1, ...], state [K, S] and
 * prev_action [K] (NULL when S = 0), env, run, actor [K], key [K], weight [K], prob [K] (may be
 * NULL).  seed_replay_batch_bytes() is the size of one allocation that
 * seed_replay_batch_carve() cuts into these (64-byte aligned pieces). */
typedef struct seed_replay_batch {
	int K;
	void *field[SEED_UNROLL_NFIELDS];
	float *state;
	int32_t *prev_action; /* [K] with a state (the action before step 0), else NULL */
	int32_t *env, *run, *actor;
	int64_t *key;
	float *weight;
	double *prob;
} seed_replay_batch;

size_t seed_replay_batch_bytes(const seed_replay *r, int K);
/* Point b's pieces into mem (seed_replay_batch_bytes(r, K) bytes, 64-byte
 * aligned).  -EINVAL before the layout is fixed or for K < 1. */
int seed_replay_batch_carve(const seed_replay *r, int K, void *mem, seed_replay_batch *b);

/* The rate limiter's decisions (see above). */
enum { SEED_REPLAY_READY = 0, SEED_REPLAY_WAIT = 1, SEED_REPLAY_NEVER = 2 };
/* Whether an unroll may be taken now. */
bool seed_replay_insert_ready(const seed_replay *r);
/* Whether a sample of K may be answered now (READY), later (WAIT), or
 * never (NEVER: K < 1, K > capacity, or K > 2E with the limiter on). */
int seed_replay_sample_ready(const seed_replay *r, int K);

/* Sample b->K items into b (carved for this replay), drawing from the
 * replay's generator, and count them.  Does not consult the rate limiter.
 * Errors: -EINVAL (b not carved for this layout), -EAGAIN (fewer than
 * min_size items), -ENOENT (every stored priority is 0). */
int seed_replay_sample(seed_replay *r, seed_replay_batch *b, seed_err *err);

/* Fill f (initialised here) with the sequences frame viewing b: the unroll
 * per-step fields, num_actions, env, run, actor, state when S > 0, key,
 * weight, and frame_skip when the layout's is above 1.  b must outlive f's encoding. */
int seed_replay_batch_frame(const seed_replay *r, const seed_replay_batch *b, seed_frame *f);

/* Set the priorities of n items by key; keys not live (evicted, never
 * inserted) and priorities that are negative or not finite are ignored and
 * counted.  Returns how many were applied. */
size_t seed_replay_update(seed_replay *r, size_t n, const int64_t *keys, const float *priorities);
/* A priority frame {key i64 [N], priority f32 [N]} (validated) applied as
 * above; -SEED_EFRAME if f is not one. */
int seed_replay_update_frame(seed_replay *r, const seed_frame *f, size_t *applied, seed_err *err);

/* The priority of a stored key: 0 and *p, or -ESTALE. */
int seed_replay_priority(const seed_replay *r, int64_t key, double *p);
void seed_replay_stats_get(const seed_replay *r, seed_replay_stats *st);

/* A snapshot as parts of a file (for seed_fs_write_atomic): *nparts (at
 * most SEED_REPLAY_SNAPSHOT_PARTS) pieces, the first two held by the
 * replay (valid until the next call that changes it), the others pointing
 * into the items.  Allocates the header on the first call. */
#define SEED_REPLAY_SNAPSHOT_PARTS 48
int seed_replay_snapshot_parts(seed_replay *r, seed_fs_part *parts, size_t *nparts, seed_err *err);
/* Write a snapshot of r to path atomically (seed_fs_write_atomic). */
int seed_replay_save(seed_replay *r, const char *path, seed_err *err);
/* Replace r's state by the snapshot in buf[0..len): it must have r's
 * capacity and alpha, and the layout r has fixed, if any.  A truncated,
 * corrupt (checksum) or mismatching snapshot is refused with -EBADMSG or
 * -EINVAL and a message, r unchanged. */
int seed_replay_restore(seed_replay *r, const void *buf, size_t len, seed_err *err);
/* seed_replay_restore from a file; messages name the file. */
int seed_replay_load(seed_replay *r, const char *path, seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
