/* ppo.c: GAE and the PPO clipped surrogate loss with its gradients (see
 * seed/ppo.h).
 *
 * The loss makes two passes over the rows and allocates nothing: the first
 * takes the mean and the sample std of the advantages (for normalisation);
 * the second computes each row's softmax (exponentials recomputed per
 * gradient element rather than kept: A is small, and it keeps the module
 * free of scratch), its terms and its gradients.  Per row, with scale
 * s = 1/N, p = softmax(z), H = -sum_j p_j log p_j, a the action taken,
 * g = d pg_i / d log pi(a) (-An r, or 0 where the clipped branch is
 * strictly larger):
 *   d pg / d z_j      = s g (1[j=a] - p_j)
 *   d ent / d z_j     = s entropy_cost p_j (log p_j + H)
 *   d value / d v     = s value_cost (v - R), or 0 where w > u
 */
#include "seed/ppo.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "seed/gaussian.h"

void seed_ppo_config_default(seed_ppo_config *c)
{
	c->epochs = 4;
	c->minibatches = 4;
	c->clip = 0.2f;
	c->clip_value = true;
	c->value_clip = 0.2f;
	c->value_cost = 0.5f;
	c->entropy_cost = 0.01f;
	c->lambda = 0.95f;
	c->normalize_advantages = true;
}

static int bad_weight(float x)
{
	return !(x >= 0 && isfinite(x));
}

int seed_ppo_config_check(const seed_ppo_config *c, seed_err *err)
{
	if (!c)
		return seed_err_set(err, -EINVAL, "ppo: no configuration");
	if (c->epochs < 1)
		return seed_err_set(err, -EINVAL, "ppo: epochs = %d, must be at least 1", c->epochs);
	if (c->minibatches < 1)
		return seed_err_set(err, -EINVAL, "ppo: minibatches = %d, must be at least 1",
		                    c->minibatches);
	const struct {
		const char *name;
		float x;
	} w[] = {{"clip", c->clip},
	         {"value_clip", c->value_clip},
	         {"value_cost", c->value_cost},
	         {"entropy_cost", c->entropy_cost}};
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		if (bad_weight(w[i].x))
			return seed_err_set(err, -EINVAL, "ppo: %s = %g, must be finite and >= 0", w[i].name,
			                    (double)w[i].x);
	if (!(c->lambda >= 0 && c->lambda <= 1))
		return seed_err_set(err, -EINVAL, "ppo: lambda = %g, must be in [0, 1]", (double)c->lambda);
	return 0;
}

int seed_ppo_gae(int T, int B, const float *rewards, const float *discounts, const float *values,
                 const float *bootstrap_value, float lambda, float *advantages, float *returns)
{
	if (T < 1 || B < 1 || !rewards || !discounts || !values || !bootstrap_value || !advantages ||
	    !returns || advantages == returns || !(lambda >= 0 && lambda <= 1))
		return -EINVAL;
	for (int b = 0; b < B; b++) {
		double next_v = bootstrap_value[b], next_a = 0;
		for (int t = T - 1; t >= 0; t--) {
			const size_t i = (size_t)t * (size_t)B + (size_t)b;
			const double d = discounts[i], v = values[i];
			const double delta = (double)rewards[i] + d * next_v - v;
			next_a = delta + (double)lambda * d * next_a;
			next_v = v;
			advantages[i] = (float)next_a;
			returns[i] = (float)(next_a + v);
		}
	}
	return 0;
}

/* The maximum of z[0..A), log S with S = sum_j exp(z_j - m), and the
 * entropy of softmax(z) as log S - sum_j (e_j / S)(z_j - m). */
static double log_norm(const float *z, int A, double *m_out, double *entropy)
{
	double m = z[0];
	for (int j = 1; j < A; j++)
		if (z[j] > m)
			m = z[j];
	double S = 0, Sz = 0;
	for (int j = 0; j < A; j++) {
		const double d = (double)z[j] - m, e = exp(d);
		S += e;
		Sz += e * d;
	}
	*m_out = m;
	if (entropy)
		*entropy = log(S) - Sz / S;
	return log(S);
}

int seed_ppo_loss(const seed_ppo_config *cfg, const seed_ppo_batch *b, seed_ppo_stats *st, float *dlogits,
                  float *dvalues, seed_err *err)
{
	if (!cfg || !b || !st)
		return seed_err_set(err, -EINVAL, "ppo loss: NULL configuration, batch or stats");
	int rc = seed_ppo_config_check(cfg, err);
	if (rc)
		return rc;
	const int N = b->N, A = b->A;
	if (N < 1 || A < 1)
		return seed_err_set(err, -EINVAL, "ppo loss: N = %d, A = %d: both must be at least 1", N, A);
	const bool box = b->box_actions != NULL;
	if (!b->logits || !b->behaviour_logits || (!box && !b->actions) || !b->advantages || !b->returns ||
	    !b->old_values || !b->values)
		return seed_err_set(err, -EINVAL, "ppo loss: a NULL array in the batch");
	for (int i = 0; i < N && !box; i++)
		if (b->actions[i] < 0 || b->actions[i] >= A)
			return seed_err_set(err, -EINVAL, "ppo loss: action %d at row %d is outside [0, %d)",
			                    (int)b->actions[i], i, A);
	for (size_t i = 0; box && i < (size_t)N * (size_t)A; i++)
		if (!isfinite(b->box_actions[i]))
			return seed_err_set(err, -EINVAL, "ppo loss: raw sample %zu (row %zu) is not finite",
			                    i, i / (size_t)A);
	const size_t W = box ? 2 * (size_t)A : (size_t)A; /* parameters per row */

	/* Pass 1: the advantages' mean and sample std. */
	double mean_a = 0, sd = 0;
	for (int i = 0; i < N; i++)
		mean_a += b->advantages[i];
	mean_a /= N;
	for (int i = 0; i < N; i++)
		sd += ((double)b->advantages[i] - mean_a) * ((double)b->advantages[i] - mean_a);
	sd = N > 1 ? sqrt(sd / (N - 1)) : 0;

	const double s = 1.0 / N, lo = 1.0 - (double)cfg->clip, hi = 1.0 + (double)cfg->clip;
	const double vc = cfg->value_clip;
	double pg = 0, val = 0, ent = 0, kl = 0, clipped = 0, ratio_sum = 0, v_sum = 0, r_sum = 0;
	for (int i = 0; i < N; i++) {
		const float *z = b->logits + (size_t)i * W;
		const float *zb = b->behaviour_logits + (size_t)i * W;
		const float *x = box ? b->box_actions + (size_t)i * (size_t)A : NULL;
		const int a = box ? 0 : b->actions[i];
		double m = 0, lse = 0, H, logp, logmu;
		if (box) {
			logp = seed_gaussian_row_log_prob(A, z, x, &H);
			logmu = seed_gaussian_row_log_prob(A, zb, x, NULL);
		} else {
			double mb;
			lse = log_norm(z, A, &m, &H);
			const double lseb = log_norm(zb, A, &mb, NULL);
			logp = (double)z[a] - m - lse;
			logmu = (double)zb[a] - mb - lseb;
		}
		const double logr = logp - logmu, r = exp(logr);
		double adv = b->advantages[i];
		if (cfg->normalize_advantages)
			adv = N > 1 ? (adv - mean_a) / (sd + 1e-8) : 0.0;
		const double rclip = r < lo ? lo : r > hi ? hi : r;
		const double l1 = -adv * r, l2 = -adv * rclip;
		pg += l1 >= l2 ? l1 : l2;
		const double g = l1 >= l2 ? -adv * r : 0.0;
		ent += H;
		kl += (r - 1) - logr;
		clipped += fabs(r - 1) > (double)cfg->clip;
		ratio_sum += r;

		const double v = b->values[i], R = b->returns[i], vo = b->old_values[i];
		const double u = (v - R) * (v - R);
		double dv = v - R, vl = u;
		if (cfg->clip_value) {
			const double dvo = v - vo, vcl = vo + (dvo < -vc ? -vc : dvo > vc ? vc : dvo);
			const double w = (vcl - R) * (vcl - R);
			if (w > u) {
				vl = w;
				dv = 0;
			}
		}
		val += vl;
		v_sum += v;
		r_sum += R;
		if (dvalues)
			dvalues[i] = (float)(s * (double)cfg->value_cost * dv);
		if (dlogits && box) {
			float *dz = dlogits + (size_t)i * W;
			memset(dz, 0, W * sizeof *dz);
			seed_gaussian_row_backward(A, z, x, s * g, -s * (double)cfg->entropy_cost, dz);
		} else if (dlogits) {
			float *dz = dlogits + (size_t)i * (size_t)A;
			for (int j = 0; j < A; j++) {
				const double lp = (double)z[j] - m - lse, p = exp(lp);
				const double d =
				    g * ((j == a) - p) + (double)cfg->entropy_cost * p * (lp + H);
				dz[j] = (float)(s * d);
			}
		}
	}
	seed_ppo_stats o = {0};
	o.pg_loss = pg * s;
	o.value_loss = (double)cfg->value_cost * 0.5 * val * s;
	o.entropy = ent * s;
	o.entropy_loss = -(double)cfg->entropy_cost * o.entropy;
	o.total = o.pg_loss + o.value_loss + o.entropy_loss;
	o.approx_kl = kl * s;
	o.clip_fraction = clipped * s;
	o.mean_ratio = ratio_sum * s;
	o.mean_value = v_sum * s;
	o.mean_return = r_sum * s;
	o.mean_advantage = mean_a;
	*st = o;
	return 0;
}
