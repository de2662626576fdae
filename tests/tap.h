/* tests/tap.h: a tiny TAP producer for the C unit tests.
 *
 * Each test program runs named cases and prints "ok N - name" or
 * "not ok N - name" with the failing checks as comments, then the plan.
 * CHECK records a failure and goes on; the case fails if any check did.
 *
 *   static void t_roundtrip(void) { CHECK(x == 1); CHECK_NEAR(a, b, 1e-6); }
 *   int main(void) { TAP_RUN(t_roundtrip); return tap_done(); }
 */
#ifndef SEED_TESTS_TAP_H
#define SEED_TESTS_TAP_H

#include <math.h>
#include <stdio.h>

static int tap_n, tap_failed_cases, tap_case_failed;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			tap_case_failed = 1;                                         \
		}                                                                    \
	} while (0)

#define CHECK_MSG(cond, ...)                                                         \
	do {                                                                         \
		if (!(cond)) {                                                       \
			printf("# %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                         \
			printf("\n");                                                \
			tap_case_failed = 1;                                         \
		}                                                                    \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                        \
	do {                                                                         \
		double tap_a_ = (double)(a), tap_b_ = (double)(b);                   \
		if (!(fabs(tap_a_ - tap_b_) <= (tol))) {                             \
			printf("# %s:%d: %s = %.9g, %s = %.9g, tolerance %g\n", __FILE__, \
			       __LINE__, #a, tap_a_, #b, tap_b_, (double)(tol));    \
			tap_case_failed = 1;                                         \
		}                                                                    \
	} while (0)

static inline void tap_result(const char *name)
{
	tap_n++;
	printf("%sok %d - %s\n", tap_case_failed ? "not " : "", tap_n, name);
	if (tap_case_failed)
		tap_failed_cases++;
	tap_case_failed = 0;
	fflush(stdout);
}

#define TAP_RUN(fn)                                                                  \
	do {                                                                         \
		tap_case_failed = 0;                                                 \
		fn();                                                                \
		tap_result(#fn);                                                     \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed_cases ? 1 : 0;
}

#endif
