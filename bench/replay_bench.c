/* bench/replay_bench.c: throughput of the sequence replay (seed_replay).
 *
 *   bench/replay_bench [CAPACITY [SEQUENCES]]   (defaults 1048576, 2097152)
 *
 * CartPole-size items: f32 observations of 4, 2 actions, T+1 = 21 steps,
 * no state, inserted from unroll frames of 64 rows with first priorities.
 * On one replay of CAPACITY sequences (alpha 0.9, beta 0.6, no rate
 * limiter): SEQUENCES insertions from empty (the replay fills, then evicts
 * the oldest), SEQUENCES / 64 sampled batches of 64 (every field gathered
 * into the batch's buffers, with weights), then as many priority updates
 * of 64 random live keys.  Prints one line: sequences inserted/s, batches
 * sampled/s, priorities updated/s, bytes per stored sequence and per
 * stored env frame (the items' memory and the sum tree's, over
 * CAPACITY * 21).  Built by `make bench`; bench/replay.sh runs it several
 * times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/replay.h"
#include "seed/rng.h"

enum { B = 64, T1 = 21, OBS = 4, A = 2 };

int main(int argc, char **argv)
{
	unsigned long long cap = argc > 1 ? strtoull(argv[1], NULL, 10) : 1u << 20;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 2L << 20;
	seed_replay_opts o = {.capacity = cap, .alpha = 0.9, .beta = 0.6, .min_size = 1, .seed = 1};
	seed_replay *r;
	seed_err err = {{0}};
	if (n < B || seed_replay_new(&r, &o, &err) != 0) {
		fprintf(stderr, "replay_bench: %s\n", n < B ? "SEQUENCES: need >= 64" : err.msg);
		return 2;
	}
	static float obs[B * T1 * OBS], f32[B * T1], logits[B * T1 * A], prio[B];
	static int32_t i32[B * T1], env[B];
	static uint8_t u8[B * T1];
	seed_rng rng;
	seed_rng_init(&rng, 1, 0);
	for (int i = 0; i < B * T1 * OBS; i++)
		obs[i] = seed_rng_float(&rng);
	for (int b = 0; b < B; b++)
		env[b] = b;
	seed_frame f;
	int64_t b64 = B, s2[2] = {B, T1}, s3[3] = {B, T1, OBS}, sa[3] = {B, T1, A};
	seed_frame_init(&f, SEED_FRAME_UNROLL);
	seed_frame_set_int(&f, "run", 1);
	seed_frame_set_int(&f, "actor", 0);
	seed_frame_set_int(&f, "num_actions", A);
	seed_frame_set_tensor(&f, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &b64));
	seed_frame_set_tensor(&f, "priority", seed_tensor_view(prio, SEED_DTYPE_F32, 1, &b64));
	seed_frame_set_tensor(&f, "obs", seed_tensor_view(obs, SEED_DTYPE_F32, 3, s3));
	seed_frame_set_tensor(&f, "action", seed_tensor_view(i32, SEED_DTYPE_I32, 2, s2));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(f32, SEED_DTYPE_F32, 2, s2));
	seed_frame_set_tensor(&f, "terminated", seed_tensor_view(u8, SEED_DTYPE_U8, 2, s2));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view(u8, SEED_DTYPE_U8, 2, s2));
	seed_frame_set_tensor(&f, "final_value", seed_tensor_view(f32, SEED_DTYPE_F32, 2, s2));
	seed_frame_set_tensor(&f, "policy_version", seed_tensor_view(i32, SEED_DTYPE_I32, 2, s2));
	seed_frame_set_tensor(&f, "logits", seed_tensor_view(logits, SEED_DTYPE_F32, 3, sa));
	if (seed_frame_validate(&f, &err)) {
		fprintf(stderr, "replay_bench: %s\n", err.msg);
		return 1;
	}
	/* The layout's memory is allocated and touched before timing. */
	seed_replay_layout l;
	seed_replay_layout_of(&f, &l, NULL);
	if (seed_replay_set_layout(r, &l, &err)) {
		fprintf(stderr, "replay_bench: %s\n", err.msg);
		return 1;
	}

	long frames = n / B;
	double t0 = seed_now_s();
	for (long i = 0; i < frames; i++) {
		for (int b = 0; b < B; b++)
			prio[b] = 1e-3f + seed_rng_float(&rng);
		if (seed_replay_insert(r, &f, NULL, &err)) {
			fprintf(stderr, "replay_bench: %s\n", err.msg);
			return 1;
		}
	}
	double t1 = seed_now_s();
	seed_replay_batch bt;
	void *mem = aligned_alloc(64, seed_replay_batch_bytes(r, B));
	seed_replay_batch_carve(r, B, mem, &bt);
	long batches = frames;
	uint64_t sink = 0;
	for (long i = 0; i < batches; i++) {
		seed_replay_sample(r, &bt, NULL);
		sink += (uint64_t)bt.key[i % B];
	}
	double t2 = seed_now_s();
	seed_replay_stats st;
	seed_replay_stats_get(r, &st);
	int64_t keys[B];
	float p[B];
	uint64_t lo = st.inserted - st.size;
	for (long i = 0; i < batches; i++) {
		for (int k = 0; k < B; k++) {
			keys[k] = (int64_t)(lo + seed_rng_u64(&rng) % st.size);
			p[k] = 1e-3f + seed_rng_float(&rng);
		}
		seed_replay_update(r, B, keys, p);
	}
	double t3 = seed_now_s();
	/* The sum tree: three arrays of 2 * leaves doubles (seed_sumtree(3)). */
	uint64_t leaves = 1;
	while (leaves < cap)
		leaves *= 2;
	double tree = 3.0 * 2 * (double)leaves * 8;
	double per_seq = ((double)st.bytes + tree) / (double)cap;
	printf("inserted %ld sequences: %.0f /s, sampled %ld batches of 64: %.0f /s, updated %ld priorities: "
	       "%.0f "
	       "/s, %zu item bytes + %.1f tree bytes per sequence, %.1f bytes per stored frame (T+1 %d) "
	       "[%llu]\n",
	       frames * B, (double)(frames * B) / (t1 - t0), batches, (double)batches / (t2 - t1),
	       batches * B, (double)(batches * B) / (t3 - t2), seed_replay_item_bytes(&l), tree / (double)cap,
	       per_seq / T1, T1, (unsigned long long)(sink & 1));
	free(mem);
	seed_replay_free(&r);
	return 0;
}
