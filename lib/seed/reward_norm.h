/* seed/reward_norm.h: rewards scaled by a running deviation of discounted
 * returns, as Gymnasium's NormalizeReward wrapper (CleanRL's continuous
 * PPO) scales them.
 *
 * Each environment keeps its discounted return G, updated at every step
 * with Gymnasium's rule
 *
 *   G <- G gamma (1 - terminated) + r
 *
 * (the step's own termination flag: a terminating step's G is its reward
 * alone, and a truncation does not reset G, as the wrapper has it), and a
 * running mean and variance of G (Gymnasium's RunningMeanStd: count 1e-4,
 * mean 0, variance 1 at first, batches merged by the parallel-variance
 * formula) scales every reward to clip(r / sqrt(var + 1e-8), -clip, clip).
 *
 * A learner sees rewards unroll by unroll, not step by step across its
 * environments: here the returns of one batch of unrolls are computed, the
 * running statistics take them as one batch, and then the batch's rewards
 * are scaled with the updated variance.  Environments are told apart by
 * (run, actor, env), the identity of seed-frames(7); consecutive unrolls of
 * one environment continue its G (an unroll's first step is the previous
 * one's last and is not counted again).
 *
 * Threads: an object belongs to one thread at a time.
 */
#ifndef SEED_REWARD_NORM_H
#define SEED_REWARD_NORM_H

#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seed_reward_norm seed_reward_norm;

/* An environment's identity in the frames. */
typedef struct seed_reward_norm_key {
	uint32_t run, actor;
	int32_t env;
} seed_reward_norm_key;

/* A scaler with discount gamma in [0, 1] and clip > 0 (Gymnasium's
 * TransformReward clip in CleanRL: 10).  -EINVAL for other values. */
int seed_reward_norm_new(seed_reward_norm **out, double gamma, double clip, seed_err *err);
/* Free r (NULL is fine) and set *r to NULL. */
void seed_reward_norm_free(seed_reward_norm **r);

/* Scale the rewards of B unrolls of T1 steps, time-major (T1, B): row b
 * is environment keys[b]; its steps 1 .. T1-1 (the transitions' rewards,
 * with their terminated flags) update its G, the batch's returns update the
 * statistics, and those rewards are scaled in place.  Step 0 is left as it
 * is (it belongs to the previous unroll).  Allocates when it meets an
 * environment for the first time. */
void seed_reward_norm_apply(seed_reward_norm *r, int T1, int B, const seed_reward_norm_key *keys,
                            float *reward, const uint8_t *terminated);

/* The running statistics of G: stats[0] count, [1] mean, [2] variance. */
void seed_reward_norm_stats(const seed_reward_norm *r, double stats[3]);
/* Set them (a checkpoint's): -EINVAL unless count > 0, variance >= 0,
 * all finite.  The environments' returns are not part of it: they start
 * again at 0. */
int seed_reward_norm_set_stats(seed_reward_norm *r, const double stats[3], seed_err *err);

#ifdef __cplusplus
}
#endif
#endif
