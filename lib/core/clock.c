/* clock.c: the monotonic clock (seed/clock.h).
 *
 * Invariant: this is the only place libseed and its programs read
 * CLOCK_MONOTONIC; every other module asks seed_now_s or seed_now_us.
 */
#include "seed/clock.h"

#include <time.h>

static struct timespec now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

double seed_now_s(void)
{
	struct timespec t = now();
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int64_t seed_now_us(void)
{
	struct timespec t = now();
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}
