/* limits.c: upper bounds on frame sizes (seed/limits.h), from the schemas
 * of seed-frames(7).  Every product and sum saturates, so absurd sizes give
 * INT64_MAX (no bound) rather than a wrapped, small one. */
#include "seed/limits.h"

static int64_t add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t mul(int64_t a, int64_t b)
{
	if (a <= 0 || b <= 0)
		return 0;
	return a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t seed_limit_step(int64_t k, int64_t obs_bytes)
{
	/* obs and final_obs [K,...], reward f32, terminated u8, truncated u8,
	 * ep_return f32, ep_length i32: all [K]. */
	return add(SEED_LIMIT_SLACK, mul(k, add(mul(2, obs_bytes), 4 + 1 + 1 + 4 + 4)));
}

int64_t seed_limit_action(int64_t k)
{
	return add(SEED_LIMIT_SLACK, mul(k, 4)); /* action i32[K] */
}

int64_t seed_limit_unroll(int64_t b, int64_t t1, int64_t obs_bytes, int64_t a, int64_t s)
{
	/* Per row and step: obs, action i32, reward f32, terminated u8,
	 * truncated u8, final_value f32, policy_version i32, logits f32[A];
	 * per row: env i32 (and an episode frame's env, return, length,
	 * truncated: 13 bytes), a first replay priority f32, and with a
	 * state its S floats and the previous action i32. */
	int64_t step = add(obs_bytes, add(4 + 4 + 1 + 1 + 4 + 4, mul(4, a)));
	int64_t row = s > 0 ? add(20, add(mul(4, s), 4)) : 20;
	return add(SEED_LIMIT_SLACK, add(mul(mul(b, t1), step), mul(b, row)));
}

int64_t seed_limit_priority(int64_t n)
{
	return add(SEED_LIMIT_SLACK, mul(n, 8 + 4));
}

int64_t seed_limit_params(int64_t p, int64_t model_bytes)
{
	return add(SEED_LIMIT_SLACK, add(mul(p, 4), model_bytes));
}
