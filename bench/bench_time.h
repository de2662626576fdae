/* bench_time.h: the median timing the micro-benchmarks share
 * (nn_bench, population_bench, dnnl_bench).
 *
 * A program includes it once: its definitions are static.  bench_repeats
 * (--repeats) is how many runs a figure is the median of; bench_clock is
 * the wall clock, or with --cpu-time the thread's CPU time, which the
 * other processes of a busy machine do not inflate by taking the core away
 * (they still share its caches).
 */
#ifndef SEED_BENCH_TIME_H
#define SEED_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static int bench_repeats = 7;
static clockid_t bench_clock = CLOCK_MONOTONIC;

static inline double bench_now(void)
{
	struct timespec t;
	clock_gettime(bench_clock, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median seconds per call of fn(ctx): one call to warm up (first-touched
 * pages, caches, a library's primitives built on first use), then the calls
 * a run takes to last at least 20 ms, then bench_repeats such runs. */
static inline double bench_time_it(void (*fn)(void *), void *ctx)
{
	fn(ctx);
	int calls = 1;
	for (;;) {
		double t0 = bench_now();
		for (int i = 0; i < calls; i++)
			fn(ctx);
		double dt = bench_now() - t0;
		if (dt >= 0.02)
			break;
		calls = dt > 0 ? (int)(calls * 0.025 / dt) + 1 : calls * 10;
	}
	double *runs = malloc((size_t)bench_repeats * sizeof *runs);
	if (!runs)
		abort();
	for (int r = 0; r < bench_repeats; r++) {
		double t0 = bench_now();
		for (int i = 0; i < calls; i++)
			fn(ctx);
		runs[r] = (bench_now() - t0) / calls;
	}
	qsort(runs, (size_t)bench_repeats, sizeof *runs, bench_cmp_double);
	double med = runs[bench_repeats / 2];
	free(runs);
	return med;
}

#endif
