/* reward_norm.c: rewards scaled by a running deviation of discounted
 * returns (see seed/reward_norm.h).
 *
 * The environments' returns sit in an open-addressing hash table keyed by
 * (run, actor, env), grown at three quarters full; the statistics are
 * doubles, merged as Gymnasium's RunningMeanStd.update does.
 */
#include "seed/reward_norm.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"

typedef struct slot {
	seed_reward_norm_key key;
	bool used;
	double G;
} slot;

struct seed_reward_norm {
	double gamma, clip;
	double count, mean, var;
	slot *slots;
	size_t cap, n; /* cap a power of two */
	double *batch; /* the returns of one batch */
	size_t cap_batch;
};

int seed_reward_norm_new(seed_reward_norm **out, double gamma, double clip, seed_err *err)
{
	if (!(gamma >= 0 && gamma <= 1) || !(clip > 0))
		return seed_err_set(err, -EINVAL,
		                    "reward_norm: gamma %g (in [0, 1]) or clip %g (> 0) out of range", gamma,
		                    clip);
	seed_reward_norm *r = seed_xcalloc(1, sizeof *r);
	r->gamma = gamma;
	r->clip = clip;
	r->count = 1e-4; /* RunningMeanStd(epsilon=1e-4) */
	r->mean = 0;
	r->var = 1;
	r->cap = 64;
	r->slots = seed_xcalloc(r->cap, sizeof *r->slots);
	*out = r;
	return 0;
}

void seed_reward_norm_free(seed_reward_norm **rp)
{
	if (!rp || !*rp)
		return;
	free((*rp)->slots);
	free((*rp)->batch);
	free(*rp);
	*rp = NULL;
}

static size_t hash(const seed_reward_norm_key *k)
{
	uint64_t h = ((uint64_t)k->run << 32 | k->actor) * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)(uint32_t)k->env * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ (h >> 29));
}

static bool same(const seed_reward_norm_key *a, const seed_reward_norm_key *b)
{
	return a->run == b->run && a->actor == b->actor && a->env == b->env;
}

static slot *find(seed_reward_norm *r, const seed_reward_norm_key *k)
{
	size_t i = hash(k) & (r->cap - 1);
	while (r->slots[i].used && !same(&r->slots[i].key, k))
		i = (i + 1) & (r->cap - 1);
	return &r->slots[i];
}

static slot *get(seed_reward_norm *r, const seed_reward_norm_key *k)
{
	slot *s = find(r, k);
	if (s->used)
		return s;
	if (4 * (r->n + 1) > 3 * r->cap) {
		slot *old = r->slots;
		size_t oc = r->cap;
		r->cap *= 2;
		r->slots = seed_xcalloc(r->cap, sizeof *r->slots);
		for (size_t i = 0; i < oc; i++)
			if (old[i].used)
				*find(r, &old[i].key) = old[i];
		free(old);
		s = find(r, k);
	}
	*s = (slot){.key = *k, .used = true, .G = 0};
	r->n++;
	return s;
}

void seed_reward_norm_apply(seed_reward_norm *r, int T1, int B, const seed_reward_norm_key *keys,
                            float *reward, const uint8_t *terminated)
{
	if (T1 < 2 || B < 1)
		return;
	size_t n = (size_t)(T1 - 1) * (size_t)B;
	r->batch = seed_xgrow(r->batch, &r->cap_batch, n, sizeof *r->batch);
	for (int b = 0; b < B; b++) {
		slot *s = get(r, &keys[b]);
		for (int t = 1; t < T1; t++) {
			size_t i = (size_t)t * (size_t)B + (size_t)b;
			s->G = s->G * r->gamma * (1.0 - (terminated[i] != 0)) + (double)reward[i];
			r->batch[(size_t)(t - 1) * (size_t)B + (size_t)b] = s->G;
		}
	}
	/* RunningMeanStd.update: the batch's mean and variance (ddof 0), then
	 * update_mean_var_count_from_moments. */
	double bm = 0, bv = 0;
	for (size_t i = 0; i < n; i++)
		bm += r->batch[i];
	bm /= (double)n;
	for (size_t i = 0; i < n; i++)
		bv += (r->batch[i] - bm) * (r->batch[i] - bm);
	bv /= (double)n;
	double delta = bm - r->mean, tot = r->count + (double)n;
	double m2 = r->var * r->count + bv * (double)n + delta * delta * r->count * (double)n / tot;
	r->mean += delta * (double)n / tot;
	r->var = m2 / tot;
	r->count = tot;
	double scale = 1 / sqrt(r->var + 1e-8);
	for (int t = 1; t < T1; t++)
		for (int b = 0; b < B; b++) {
			float *x = &reward[(size_t)t * (size_t)B + (size_t)b];
			double y = (double)*x * scale;
			*x = (float)(y < -r->clip ? -r->clip : y > r->clip ? r->clip : y);
		}
}

void seed_reward_norm_stats(const seed_reward_norm *r, double stats[3])
{
	stats[0] = r->count;
	stats[1] = r->mean;
	stats[2] = r->var;
}

int seed_reward_norm_set_stats(seed_reward_norm *r, const double stats[3], seed_err *err)
{
	if (!(stats[0] > 0 && isfinite(stats[0]) && isfinite(stats[1]) && stats[2] >= 0 &&
	      isfinite(stats[2])))
		return seed_err_set(err, -EINVAL,
		                    "reward_norm: statistics count %g, mean %g, variance %g: count > 0, "
		                    "variance >= 0, all finite",
		                    stats[0], stats[1], stats[2]);
	r->count = stats[0];
	r->mean = stats[1];
	r->var = stats[2];
	return 0;
}
