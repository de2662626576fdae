/* test_sumtree.c: seed_sumtree against prioritized sampling worked from its
 * definitions (tests/golden/sumtree_golden.h from tests/golden/sumtree_ref.py, numpy,
 * no tree), a chi-square test of the sampling distribution, FIFO eviction and
 * stale updates, refused priorities, weights below a float's range,
 * capacities 1 and 2^20 (the root against
 * a fresh sum after many updates), save and restore (truncated and corrupt
 * states refused), and no allocation after seed_sumtree_new(). */
#include "seed/sumtree.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "sumtree_golden.h"
#include "tap.h"

#define NGOLDEN ((int)(sizeof sumtree_golden / sizeof sumtree_golden[0]))

static seed_sumtree *make(uint64_t capacity, double alpha)
{
	seed_sumtree *t = NULL;
	seed_err err = {{0}};
	int rc = seed_sumtree_new(&t, capacity, alpha, &err);
	if (rc != 0) {
		printf("# seed_sumtree_new: %s\n", err.msg);
		exit(1);
	}
	return t;
}

/* The same ids, P(i) to 1e-12 relative and weights to float rounding, for
 * the reference's uniform numbers. */
static void t_golden(void)
{
	for (int c = 0; c < NGOLDEN; c++) {
		const struct sumtree_golden *g = &sumtree_golden[c];
		seed_sumtree *t = make(g->capacity, g->alpha);
		for (int i = 0; i < g->n_insert; i++)
			CHECK(seed_sumtree_insert(t, g->insert[i], NULL) == 0);
		for (int i = 0; i < g->n_update; i++)
			seed_sumtree_update(t, g->upd_id[i], g->upd_p[i]);
		uint64_t ids[64];
		double prob[64];
		float w[64];
		CHECK(g->b <= 64);
		int rc = seed_sumtree_sample_u(t, g->u, g->b, g->beta, ids, prob, w);
		CHECK_MSG(rc == 0, "%s: rc %d", g->name, rc);
		int bad = 0;
		for (int k = 0; k < g->b && !bad; k++) {
			if (ids[k] != g->ids[k] || fabs(prob[k] - g->prob[k]) > 1e-12 * g->prob[k] ||
			    fabs(w[k] - g->weight[k]) > 1e-6 * g->weight[k]) {
				CHECK_MSG(0, "%s[%d]: id %llu P %.17g w %.9g, want %llu %.17g %.9g", g->name,
				          k, (unsigned long long)ids[k], prob[k], w[k],
				          (unsigned long long)g->ids[k], g->prob[k], g->weight[k]);
				bad = 1;
			}
		}
		seed_sumtree_free(&t);
		CHECK(t == NULL);
	}
}

/* 1e-6 upper quantile of chi-square with df degrees of freedom, by
 * Wilson and Hilferty's cube-root normal approximation (z = 4.7534, the
 * standard normal's 1e-6 upper quantile; within a few percent for df > 10,
 * well inside the margin the test needs). */
static double chi2_quantile_1e6(int df)
{
	double z = 4.753424, a = 2.0 / (9.0 * df);
	return df * pow(1 - a + z * sqrt(a), 3);
}

/* Over 64 x 5000 seeded draws, counts per item against N P(i): the chi-square
 * statistic must stay below the 1e-6 quantile.  Stratified draws vary less
 * than independent ones, so the multinomial quantile is conservative: the
 * chance of a false failure is at most about 1e-6 (and the seed is fixed).
 * Items of priority 0 must never be drawn. */
static void t_chi_square(void)
{
	enum { K = 40, B = 64, ROUNDS = 5000 };
	const double alpha = 0.9;
	seed_sumtree *t = make(K, alpha);
	double p[K], expect[K], total = 0;
	long count[K] = {0};
	for (int i = 0; i < K; i++) {
		p[i] = i % 7 == 3 ? 0 : 0.2 + (i * 37 % 11);
		CHECK(seed_sumtree_insert(t, p[i], NULL) == 0);
		total += p[i] > 0 ? pow(p[i], alpha) : 0;
	}
	seed_rng rng;
	seed_rng_init(&rng, 12, 1);
	uint64_t ids[B];
	for (int r = 0; r < ROUNDS; r++) {
		CHECK(seed_sumtree_sample(t, &rng, B, 0.6, ids, NULL, NULL) == 0);
		for (int k = 0; k < B; k++)
			count[ids[k]]++;
	}
	double chi2 = 0;
	int df = -1;
	for (int i = 0; i < K; i++) {
		if (p[i] == 0) {
			CHECK_MSG(count[i] == 0, "item %d of priority 0 drawn %ld times", i, count[i]);
			continue;
		}
		expect[i] = (double)B * ROUNDS * pow(p[i], alpha) / total;
		chi2 += (count[i] - expect[i]) * (count[i] - expect[i]) / expect[i];
		df++;
	}
	double limit = chi2_quantile_1e6(df);
	printf("# chi-square %.2f with %d degrees of freedom, 1e-6 quantile %.2f\n", chi2, df, limit);
	CHECK(chi2 < limit);
	/* And it can fail: the same counts against uniform probabilities. */
	double chi2u = 0, n = 0;
	for (int i = 0; i < K; i++)
		n += p[i] > 0;
	for (int i = 0; i < K; i++)
		if (p[i] > 0) {
			double e = B * ROUNDS / n;
			chi2u += (count[i] - e) * (count[i] - e) / e;
		}
	CHECK_MSG(chi2u > limit, "uniform alternative not rejected: %.2f", chi2u);
	seed_sumtree_free(&t);
}

static void t_fifo_and_stale(void)
{
	seed_sumtree *t = make(4, 1.0);
	uint64_t id;
	for (int i = 0; i < 6; i++) {
		CHECK(seed_sumtree_insert(t, 1.0 + i, &id) == 0);
		CHECK(id == (uint64_t)i);
		CHECK(seed_sumtree_slot(t, id) == (uint64_t)i % 4);
	}
	/* Ids 0 and 1 were evicted, oldest first; 2..5 remain. */
	for (uint64_t k = 0; k < 8; k++)
		CHECK_MSG(seed_sumtree_live(t, k) == (k >= 2 && k <= 5), "id %llu", (unsigned long long)k);
	seed_sumtree_stats st;
	seed_sumtree_stats_get(t, &st);
	CHECK(st.count == 4 && st.inserted == 6 && st.evicted == 2 && st.capacity == 4);
	CHECK(st.total == 3 + 4 + 5 + 6);
	CHECK(st.min_p == 3 && st.max_p == 6);
	/* Updates of evicted or future ids change nothing and are counted. */
	CHECK(seed_sumtree_update(t, 0, 100) == -ESTALE);
	CHECK(seed_sumtree_update(t, 1, 100) == -ESTALE);
	CHECK(seed_sumtree_update(t, 6, 100) == -ESTALE);
	CHECK(seed_sumtree_update(t, 4, 0.5) == 0);
	const uint64_t ids[3] = {0, 5, 2};
	const double ps[3] = {7, 8, -1};
	CHECK(seed_sumtree_update_many(t, 3, ids, ps) == 1);
	seed_sumtree_stats_get(t, &st);
	CHECK(st.stale == 4 && st.refused == 1);
	CHECK(st.total == 3 + 4 + 0.5 + 8);
	CHECK(st.min_p == 0.5 && st.max_p == 8);
	double p;
	CHECK(seed_sumtree_priority(t, 4, &p) == 0 && p == 0.5);
	CHECK(seed_sumtree_priority(t, 1, &p) == -ESTALE);
	/* The next insertion evicts id 2 (slot 2), the oldest. */
	CHECK(seed_sumtree_insert(t, 2, &id) == 0 && id == 6 && seed_sumtree_slot(t, id) == 2);
	CHECK(!seed_sumtree_live(t, 2) && seed_sumtree_live(t, 3));
	seed_sumtree_stats_get(t, &st);
	CHECK(st.total == 2 + 4 + 0.5 + 8 && st.min_p == 0.5 && st.evicted == 3);
	seed_sumtree_free(&t);
}

static void t_refused(void)
{
	seed_sumtree *t = make(8, 2.0);
	uint64_t id = 77;
	CHECK(seed_sumtree_insert(t, NAN, &id) == -EINVAL && id == 77);
	CHECK(seed_sumtree_insert(t, -1e-300, NULL) == -EINVAL);
	CHECK(seed_sumtree_insert(t, INFINITY, NULL) == -EINVAL);
	CHECK(seed_sumtree_insert(t, 1e200, NULL) == -EINVAL); /* (1e200)^2 overflows */
	CHECK(seed_sumtree_insert(t, 3, &id) == 0 && id == 0);
	CHECK(seed_sumtree_update(t, 0, -INFINITY) == -EINVAL);
	seed_sumtree_stats st;
	seed_sumtree_stats_get(t, &st);
	CHECK(st.refused == 5 && st.count == 1 && st.total == 9 && st.max_p == 3);
	seed_sumtree_free(&t);
	seed_sumtree_free(&t);
	seed_sumtree_free(NULL);
}

static void t_zero_priority(void)
{
	seed_sumtree *t = make(16, 0.0);
	uint64_t ids[8];
	double prob[8];
	float w[8];
	seed_rng rng;
	seed_rng_init(&rng, 3, 0);
	CHECK(seed_sumtree_sample(t, &rng, 8, 0.6, ids, NULL, NULL) == -ENOENT); /* empty */
	for (int i = 0; i < 16; i++)
		CHECK(seed_sumtree_insert(t, 0, NULL) == 0);
	CHECK(seed_sumtree_sample(t, &rng, 8, 0.6, ids, NULL, NULL) == -ENOENT); /* all zero */
	CHECK(seed_sumtree_update(t, 13, 1e-300) == 0);
	/* Even u next to 1 in every segment lands on the one positive item:
	 * alpha 0 makes it 1, and the zeros after it are never taken. */
	const double u[8] = {0, 0.5, 0.9999999999999999, 0.25, 0.999, 0.75, 0.9999999999999999, 0.1};
	CHECK(seed_sumtree_sample_u(t, u, 8, 0.6, ids, prob, w) == 0);
	for (int k = 0; k < 8; k++)
		CHECK(ids[k] == 13 && prob[k] == 1 && w[k] == 1);
	uint64_t slot;
	CHECK(seed_sumtree_find(t, 1e9, &slot) == 0 && slot == 13);
	CHECK(seed_sumtree_find(t, -1, &slot) == 0 && slot == 13);
	seed_sumtree_free(&t);
}

/* Priorities 1e-300 and 1 (alpha 1, beta 0.6, N 2), one drawn in each half:
 * by hand, the weights are 1 for the rare item and (1e-300)^0.6 = 1e-180
 * for the other, below any float: it is given as FLT_MIN, not 0. */
static void t_weight_underflow(void)
{
	seed_sumtree *t = make(2, 1.0);
	CHECK(seed_sumtree_insert(t, 1e-300, NULL) == 0 && seed_sumtree_insert(t, 1, NULL) == 0);
	const double u[2] = {0, 0.5};
	uint64_t ids[2];
	double prob[2];
	float w[2];
	CHECK(seed_sumtree_sample_u(t, u, 2, 0.6, ids, prob, w) == 0);
	CHECK(ids[0] == 0 && ids[1] == 1);
	CHECK(w[0] == 1 && w[1] == FLT_MIN);
	/* Priorities 1e-30 apart stay exact: (1e-30)^0.6 = 1e-18. */
	CHECK(seed_sumtree_update(t, 0, 1e-30) == 0);
	CHECK(seed_sumtree_sample_u(t, u, 2, 0.6, ids, prob, w) == 0);
	CHECK(ids[0] == 0 && ids[1] == 1 && w[0] == 1);
	CHECK_NEAR(w[1], 1e-18, 1e-24);
	seed_sumtree_free(&t);
}

static void t_capacity_one(void)
{
	seed_sumtree *t = make(1, 0.9);
	uint64_t id, ids[3];
	double prob[3];
	float w[3];
	for (int i = 0; i < 5; i++) {
		CHECK(seed_sumtree_insert(t, 1 + i, &id) == 0 && id == (uint64_t)i);
		CHECK(seed_sumtree_slot(t, id) == 0);
	}
	CHECK(seed_sumtree_live(t, 4) && !seed_sumtree_live(t, 3));
	CHECK(seed_sumtree_update(t, 3, 1) == -ESTALE);
	seed_rng rng;
	seed_rng_init(&rng, 1, 1);
	CHECK(seed_sumtree_sample(t, &rng, 3, 0.6, ids, prob, w) == 0);
	for (int k = 0; k < 3; k++)
		CHECK(ids[k] == 4 && prob[k] == 1 && w[k] == 1);
	seed_sumtree_stats st;
	seed_sumtree_stats_get(t, &st);
	CHECK(st.count == 1 && st.evicted == 4 && st.min_p == 5 && st.max_p == 5);
	CHECK_NEAR(st.total, pow(5, 0.9), 1e-15 * st.total);
	seed_sumtree_free(&t);
}

/* 2^20 slots, filled and wrapped, then 4M updates: the root against a
 * compensated (Kahan) sum of the leaves in long double, to 1e-12 relative.
 * The tree recomputes parents rather than adding differences, so its error
 * is that of one pairwise sum (about 20 roundings, ~2e-15); the tolerance
 * leaves a wide margin and catches any drift. */
static void t_capacity_2e20(void)
{
	const uint64_t cap = 1u << 20;
	const double alpha = 0.9;
	seed_sumtree *t = make(cap, alpha);
	seed_rng rng;
	seed_rng_init(&rng, 2020, 0);
	for (uint64_t i = 0; i < cap + 1000; i++)
		CHECK(seed_sumtree_insert(t, 1e-3 + 10 * seed_rng_double(&rng), NULL) == 0);
	for (long j = 0; j < 4000000; j++) {
		uint64_t id = 1000 + (seed_rng_u64(&rng) % cap);
		/* Priorities spanning 12 orders of magnitude, the hard case for a
		 * running sum. */
		double p = pow(10, 6 * seed_rng_double(&rng) - 6) * (j % 1000 == 0 ? 1e6 : 1);
		seed_sumtree_update(t, id, p);
	}
	long double s = 0, c = 0;
	double lo = INFINITY, hi = -INFINITY;
	for (uint64_t id = 1000; id < cap + 1000; id++) {
		double p;
		CHECK(seed_sumtree_priority(t, id, &p) == 0);
		long double y = (long double)pow(p, alpha) - c, z = s + y;
		c = (z - s) - y;
		s = z;
		lo = fmin(lo, p);
		hi = fmax(hi, p);
	}
	seed_sumtree_stats st;
	seed_sumtree_stats_get(t, &st);
	double rel = fabs(st.total - (double)s) / (double)s;
	printf("# 2^20 slots after 4M updates: root %.17g, fresh sum %.17Lg, relative %.2g\n", st.total, s,
	       rel);
	CHECK(rel < 1e-12);
	CHECK(st.min_p == lo && st.max_p == hi);
	CHECK(st.count == cap && st.evicted == 1000 && st.stale == 0);
	uint64_t slot;
	CHECK(seed_sumtree_find(t, st.total, &slot) == 0 && slot < cap);
	uint64_t ids[64];
	double prob[64];
	float w[64];
	CHECK(seed_sumtree_sample(t, &rng, 64, 0.6, ids, prob, w) == 0);
	float wmax = 0;
	for (int k = 0; k < 64; k++) {
		CHECK(seed_sumtree_live(t, ids[k]));
		double p;
		seed_sumtree_priority(t, ids[k], &p);
		CHECK_NEAR(prob[k], pow(p, alpha) / (double)s, 1e-12 * prob[k]);
		wmax = fmaxf(wmax, w[k]);
	}
	CHECK(wmax == 1);
	seed_sumtree_free(&t);
}

static seed_sumtree *filled(uint64_t cap, int n, uint64_t seed)
{
	seed_sumtree *t = make(cap, 0.9);
	seed_rng rng;
	seed_rng_init(&rng, seed, 0);
	for (int i = 0; i < n; i++)
		seed_sumtree_insert(t, i % 5 == 0 ? 0 : 3 * seed_rng_double(&rng), NULL);
	seed_sumtree_update(t, 0, 1);     /* stale once n > cap */
	seed_sumtree_insert(t, -1, NULL); /* refused */
	return t;
}

static void t_save_restore(void)
{
	seed_sumtree *a = filled(16, 23, 5), *b = make(16, 0.5);
	size_t size = seed_sumtree_save_size(a);
	CHECK(size == 56 + 16 * 8 + 8);
	unsigned char *buf = malloc(size + 1), *buf2 = malloc(size + 1);
	CHECK(seed_sumtree_save(a, buf, size - 1) == -ENOSPC);
	CHECK(seed_sumtree_save(a, buf, size) == (long)size);
	seed_err err = {{0}};
	CHECK(seed_sumtree_restore(b, buf, size, &err) == 0);
	seed_sumtree_stats sa, sb;
	seed_sumtree_stats_get(a, &sa);
	seed_sumtree_stats_get(b, &sb);
	CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
	CHECK(sb.alpha == 0.9 && sb.stale == 1 && sb.refused == 1 && sb.inserted == 23);
	/* The same samples from the same generator. */
	seed_rng r1, r2;
	seed_rng_init(&r1, 9, 9);
	r2 = r1;
	uint64_t i1[32], i2[32];
	float w1[32], w2[32];
	CHECK(seed_sumtree_sample(a, &r1, 32, 0.6, i1, NULL, w1) == 0);
	CHECK(seed_sumtree_sample(b, &r2, 32, 0.6, i2, NULL, w2) == 0);
	CHECK(memcmp(i1, i2, sizeof i1) == 0 && memcmp(w1, w2, sizeof w1) == 0);
	/* Saved again, the same bytes. */
	CHECK(seed_sumtree_save(b, buf2, size) == (long)size && memcmp(buf, buf2, size) == 0);

	/* Every truncation, every flipped byte, and one byte too many: refused,
	 * with a message, and b unchanged. */
	int refused = 0, cases = 0;
	for (size_t n = 0; n < size; n++, cases++)
		refused += seed_sumtree_restore(b, buf, n, &err) == -EBADMSG;
	for (size_t i = 0; i < size; i++) {
		for (int bit = 0; bit < 8; bit++, cases++) {
			buf[i] ^= (unsigned char)(1u << bit);
			int rc = seed_sumtree_restore(b, buf, size, &err);
			refused += rc == -EBADMSG || rc == -EINVAL;
			buf[i] ^= (unsigned char)(1u << bit);
		}
	}
	buf[size] = 0;
	refused += seed_sumtree_restore(b, buf, size + 1, &err) == -EBADMSG;
	cases++;
	CHECK_MSG(refused == cases, "%d of %d bad states refused", refused, cases);
	CHECK(err.msg[0] != '\0');
	printf("# %d truncated or corrupt states refused; last: %s\n", refused, err.msg);
	CHECK(seed_sumtree_save(b, buf2, size) == (long)size && memcmp(buf, buf2, size) == 0);

	/* A state of another capacity is refused by name. */
	seed_sumtree *c = make(8, 0.9);
	CHECK(seed_sumtree_restore(c, buf, size, &err) == -EINVAL);
	CHECK(strstr(err.msg, "capacity") != NULL);
	/* A valid checksum over a bad priority: refused too. */
	size_t small = seed_sumtree_save_size(c);
	CHECK(seed_sumtree_insert(c, 2, NULL) == 0);
	small = seed_sumtree_save_size(c);
	unsigned char s3[128];
	CHECK(small <= sizeof s3 && seed_sumtree_save(c, s3, sizeof s3) == (long)small);
	const double neg = -2;
	uint64_t bits;
	memcpy(&bits, &neg, sizeof bits);
	for (int i = 0; i < 8; i++)
		s3[56 + i] = (unsigned char)(bits >> (8 * i));
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < small - 8; i++)
		h = (h ^ s3[i]) * 0x100000001b3u;
	for (int i = 0; i < 8; i++)
		s3[small - 8 + i] = (unsigned char)(h >> (8 * i));
	CHECK(seed_sumtree_restore(c, s3, small, &err) == -EBADMSG);
	CHECK(strstr(err.msg, "priority") != NULL);
	/* An empty tree round-trips. */
	seed_sumtree *e = make(8, 0.9), *f = filled(8, 3, 1);
	unsigned char s4[128];
	long ne = seed_sumtree_save(e, s4, sizeof s4);
	CHECK(ne == 64 && seed_sumtree_restore(f, s4, (size_t)ne, &err) == 0);
	seed_sumtree_stats_get(f, &sb);
	CHECK(sb.count == 0 && sb.total == 0 && sb.min_p == 0 && sb.max_p == 0);
	seed_sumtree_free(&a);
	seed_sumtree_free(&b);
	seed_sumtree_free(&c);
	seed_sumtree_free(&e);
	seed_sumtree_free(&f);
	free(buf);
	free(buf2);
}

static void t_no_allocation(void)
{
#if COUNT_ALLOCATIONS
	seed_sumtree *t = make(1000, 0.9), *u = make(1000, 0.9);
	unsigned char *buf = malloc(seed_sumtree_save_size(t) + 8 * 1000);
	seed_rng rng;
	seed_rng_init(&rng, 4, 4);
	uint64_t ids[64];
	double prob[64];
	float w[64];
	long before = alloc_count;
	alloc_counting = true;
	for (int i = 0; i < 5000; i++) {
		uint64_t id;
		seed_sumtree_insert(t, seed_rng_double(&rng), &id);
		if (i % 10 == 9) {
			seed_sumtree_sample(t, &rng, 64, 0.6, ids, prob, w);
			for (int k = 0; k < 64; k++)
				seed_sumtree_update(t, ids[k], 2 * prob[k]);
		}
	}
	long n = seed_sumtree_save(t, buf, seed_sumtree_save_size(t) + 8 * 1000);
	seed_sumtree_restore(u, buf, (size_t)n, NULL);
	seed_sumtree_stats st;
	seed_sumtree_stats_get(u, &st);
	alloc_counting = false;
	CHECK_MSG(alloc_count == before, "%ld allocations", alloc_count - before);
	CHECK(st.count == 1000 && st.inserted == 5000);
	free(buf);
	seed_sumtree_free(&t);
	seed_sumtree_free(&u);
#else
	printf("# not glibc, or a sanitizer owns malloc: allocations not counted\n");
#endif
}

static void t_bad_arguments(void)
{
	seed_sumtree *t = NULL;
	seed_err err = {{0}};
	CHECK(seed_sumtree_new(&t, 0, 0.9, &err) == -EINVAL && t == NULL);
	CHECK(strstr(err.msg, "capacity") != NULL);
	CHECK(seed_sumtree_new(&t, SEED_SUMTREE_MAX_CAPACITY + 1ull, 0.9, &err) == -EINVAL);
	CHECK(seed_sumtree_new(&t, 4, NAN, &err) == -EINVAL && strstr(err.msg, "alpha"));
	CHECK(seed_sumtree_new(&t, 4, -0.5, NULL) == -EINVAL && t == NULL);
	t = make(4, 0.9);
	seed_sumtree_insert(t, 1, NULL);
	uint64_t ids[2];
	const double u[2] = {0.5, 0.5};
	CHECK(seed_sumtree_sample_u(t, u, 0, 0.6, ids, NULL, NULL) == -EINVAL);
	CHECK(seed_sumtree_sample_u(t, u, 2, NAN, ids, NULL, NULL) == -EINVAL);
	CHECK(seed_sumtree_sample_u(t, u, 2, -1, ids, NULL, NULL) == -EINVAL);
	CHECK(seed_sumtree_sample_u(t, u, 2, 0.6, ids, NULL, NULL) == 0 && ids[0] == 0 && ids[1] == 0);
	seed_sumtree_free(&t);
}

int main(void)
{
	TAP_RUN(t_golden);
	TAP_RUN(t_chi_square);
	TAP_RUN(t_fifo_and_stale);
	TAP_RUN(t_refused);
	TAP_RUN(t_zero_priority);
	TAP_RUN(t_weight_underflow);
	TAP_RUN(t_capacity_one);
	TAP_RUN(t_capacity_2e20);
	TAP_RUN(t_save_restore);
	TAP_RUN(t_no_allocation);
	TAP_RUN(t_bad_arguments);
	return tap_done();
}
