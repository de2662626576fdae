/* tests/fuzz/fuzz_replay.c: a libFuzzer target for replay snapshots.
 *
 * The input is a flag byte and a snapshot's bytes (seed-replay(1) has the
 * format), restored into a replay of capacity 4 and alpha 0.9 (the corpus's)
 * by seed_replay_restore, the same parse seed-replay --resume makes after
 * reading the file.  Both checksums would stop nearly every mutation before
 * the fields behind them, so bit 0 of the flag byte has the target write the
 * right file checksum (the last 8 bytes) and bit 1 the right sum tree
 * checksum (where the header says the tree's state ends: after a header of
 * 192 bytes, version 1, or 200, version 2 with a frame skip) before
 * restoring.
 * Besides "no crash, no leak, no undefined behaviour", it checks:
 *   - a refused snapshot gets -EBADMSG or -EINVAL (-E2BIG for a layout over
 *     the replay's memory bound) and a message, and leaves the replay as it
 *     was;
 *   - an accepted one holds at most the capacity, samples (or says every
 *     priority is 0) when it holds anything, and saving it again gives the
 *     same bytes (the format has one form).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seed/bytes.h"
#include "fuzz/fuzz.h"
#include "seed/replay.h"

#define CAPACITY 4
/* The tree's state starts after the header (192 bytes, or 200 in version
 * 2: the u32 at byte 12 says which); its size is the u64 at byte 176. */
#define HEADER 192
#define HEADER_V2 200
#define TREE_SIZE_AT 176

static seed_replay *fresh(void)
{
	/* max_bytes: a layout stored with no items could otherwise ask for any
	 * memory (seed-replay bounds it by --max-memory). */
	seed_replay_opts o = {
	    .capacity = CAPACITY, .alpha = 0.9, .beta = 0.6, .min_size = 1, .seed = 3, .max_bytes = 1 << 20};
	seed_replay *r = NULL;
	REQUIRE(seed_replay_new(&r, &o, NULL) == 0);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	size_t len = size - 1;
	unsigned char *buf = malloc(len ? len : 1);
	REQUIRE(buf);
	memcpy(buf, data + 1, len);
	size_t hb = len >= HEADER_V2 && seed_le_get32(buf + 12) == HEADER_V2 ? HEADER_V2 : HEADER;
	if ((flags & 2) && len >= hb) {
		uint64_t tb = seed_le_get64(buf + TREE_SIZE_AT);
		if (tb >= 8 && tb <= len - hb)
			seed_le_put64(buf + hb + tb - 8,
			              seed_fnv1a(SEED_FNV1A_INIT, buf + hb, (size_t)tb - 8));
	}
	if ((flags & 1) && len >= 8)
		seed_le_put64(buf + len - 8, seed_fnv1a(SEED_FNV1A_INIT, buf, len - 8));

	seed_replay *r = fresh();
	seed_replay_stats before, after;
	seed_replay_stats_get(r, &before);
	seed_err err = {{0}};
	int rc = seed_replay_restore(r, buf, len, &err);
	seed_replay_stats_get(r, &after);
	if (rc) {
		REQUIRE(rc == -EBADMSG || rc == -EINVAL || rc == -E2BIG);
		REQUIRE_MESSAGE(err);
		REQUIRE(before.size == after.size && before.inserted == after.inserted &&
		        before.sampled == after.sampled && before.updated == after.updated &&
		        before.bytes == after.bytes && before.has_layout == after.has_layout);
		REQUIRE(seed_replay_get_layout(r) == NULL);
	} else {
		REQUIRE(after.size <= CAPACITY && after.capacity == CAPACITY);
		REQUIRE(after.size == (after.inserted < CAPACITY ? after.inserted : CAPACITY) ||
		        !after.has_layout);
		if (after.has_layout && after.size > 0) {
			size_t nb = seed_replay_batch_bytes(r, 3);
			void *mem = aligned_alloc(64, (nb + 63) & ~(size_t)63);
			seed_replay_batch b;
			REQUIRE(mem && seed_replay_batch_carve(r, 3, mem, &b) == 0);
			int s = seed_replay_sample(r, &b, &err);
			REQUIRE(s == 0 || s == -ENOENT);
			for (int k = 0; s == 0 && k < 3; k++)
				REQUIRE(b.key[k] >= 0 && (uint64_t)b.key[k] < after.inserted &&
				        (uint64_t)b.key[k] >= after.inserted - after.size &&
				        b.weight[k] > 0 && b.weight[k] <= 1);
			free(mem);
			/* Restore again: sampling moved the generator and the counters. */
			REQUIRE(seed_replay_restore(r, buf, len, &err) == 0);
		}
		seed_fs_part parts[SEED_REPLAY_SNAPSHOT_PARTS];
		size_t n;
		REQUIRE(seed_replay_snapshot_parts(r, parts, &n, &err) == 0);
		size_t total = 0;
		for (size_t i = 0; i < n; i++) {
			REQUIRE(total + parts[i].len <= len &&
			        memcmp(buf + total, parts[i].data, parts[i].len) == 0);
			total += parts[i].len;
		}
		REQUIRE(total == len);
	}
	seed_replay_free(&r);
	free(buf);
	return 0;
}
