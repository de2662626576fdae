/* bench/sumtree_bench.c: throughput of the replay sum tree (seed_sumtree).
 *
 *   bench/sumtree_bench [CAPACITY [OPS]]   (defaults 1048576 and 2000000)
 *
 * On one tree of CAPACITY slots (alpha 0.9): OPS insertions from empty (the
 * tree fills, then wraps and evicts), OPS / 64 stratified batches of 64
 * (beta 0.6, with probabilities and weights), and OPS priority updates of
 * random live ids.  Prints one line: insertions/s, batches/s, updates/s.
 * Built by `make bench`; bench/sumtree.sh runs it several times.
 */
#include <stdio.h>
#include <stdlib.h>

#include "seed/clock.h"
#include "seed/sumtree.h"

int main(int argc, char **argv)
{
	unsigned long long cap = argc > 1 ? strtoull(argv[1], NULL, 10) : 1u << 20;
	long ops = argc > 2 ? strtol(argv[2], NULL, 10) : 2000000;
	seed_sumtree *t;
	seed_err err = {{0}};
	if (ops < 64 || seed_sumtree_new(&t, cap, 0.9, &err) != 0) {
		fprintf(stderr, "sumtree_bench: %s\n", ops < 64 ? "OPS: need >= 64" : err.msg);
		return 2;
	}
	seed_rng rng;
	seed_rng_init(&rng, 1, 0);
	uint64_t ids[64], sink = 0;
	double prob[64];
	float w[64];

	double t0 = seed_now_s();
	for (long i = 0; i < ops; i++)
		seed_sumtree_insert(t, 1e-3 + seed_rng_double(&rng), NULL);
	double t1 = seed_now_s();
	long batches = ops / 64;
	for (long i = 0; i < batches; i++) {
		seed_sumtree_sample(t, &rng, 64, 0.6, ids, prob, w);
		sink += ids[i % 64];
	}
	double t2 = seed_now_s();
	seed_sumtree_stats st;
	seed_sumtree_stats_get(t, &st);
	uint64_t first = st.inserted - st.count;
	for (long i = 0; i < ops; i++)
		seed_sumtree_update(t, first + seed_rng_u64(&rng) % st.count, seed_rng_double(&rng));
	double t3 = seed_now_s();
	printf("capacity %llu insert %.0f/s sample64 %.0f batches/s update %.0f/s (check %llu)\n", cap,
	       ops / (t1 - t0), batches / (t2 - t1), ops / (t3 - t2), (unsigned long long)(sink % 10));
	seed_sumtree_free(&t);
	return 0;
}
