/* seed/clock.h: the one clock of libseed and its programs.
 *
 * Every duration, deadline, timeout, rate and phase time in Seed is read
 * from the monotonic clock (CLOCK_MONOTONIC: never set back, its origin
 * unspecified), through these two functions, so that times taken in
 * different modules compare.  Wall-clock time (a timestamp for a person or
 * a file format) is not theirs.
 *
 * Threads: both are safe to call from any thread; neither fails (a
 * system's CLOCK_MONOTONIC always exists on the platforms Seed builds
 * for) nor allocates.  A call costs a few tens of nanoseconds (the vDSO).
 */
#ifndef SEED_CLOCK_H
#define SEED_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock, to the nanosecond the double keeps. */
double seed_now_s(void);
/* Microseconds on the same clock: seed_now_s() * 1e6, as an integer. */
int64_t seed_now_us(void);

#ifdef __cplusplus
}
#endif
#endif
