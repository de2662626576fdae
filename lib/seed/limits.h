/* seed/limits.h: the most bytes a frame can take, for the message bounds
 * of the sockets that carry it (seed_chan_opts.max_msg, ZMQ_MAXMSGSIZE).
 *
 * Each bound is the sum of the frame's tensor payloads at the given sizes
 * (seed-frames(7) has the fields and dtypes) plus SEED_LIMIT_SLACK bytes
 * for the map keys, tensor headers, scalars and strings (an error frame's
 * message, a params frame's run).  A frame that holds more cannot be a
 * frame of those sizes, so a socket may refuse it before reading it.  The
 * arithmetic saturates at INT64_MAX; no bound is below the slack.
 */
#ifndef SEED_LIMITS_H
#define SEED_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SEED_LIMIT_SLACK 65536

/* A step frame of k envs (final_obs included) with obs_bytes per row. */
int64_t seed_limit_step(int64_t k, int64_t obs_bytes);
/* An action or error frame answering a half of k envs. */
int64_t seed_limit_action(int64_t k);
/* An unroll frame of b rows of t1 steps (unroll_length + overlap) of
 * obs_bytes observations, a actions and s floats of recurrent state a row
 * (0: none); an episode frame of b rows fits too. */
int64_t seed_limit_unroll(int64_t b, int64_t t1, int64_t obs_bytes, int64_t a, int64_t s);
/* What a learner sends seed-replay: a priority frame of n keys (i64) and
 * priorities (f32); a sample frame fits too. */
int64_t seed_limit_priority(int64_t n);
/* A params frame of p float parameters with a model description of
 * model_bytes bytes of JSON. */
int64_t seed_limit_params(int64_t p, int64_t model_bytes);

#ifdef __cplusplus
}
#endif
#endif
