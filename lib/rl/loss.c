/* loss.c: the V-trace actor-critic loss and its gradients (see seed/loss.h).
 *
 * Two passes over the steps.  The first computes, per step, the softmax of
 * the learner logits (kept, with their log-sum-exp), the entropy, and
 * log pi(a|x) - log mu(a|x) (the V-trace log ratio); seed_vtrace then gives
 * the targets and advantages; the second pass forms the loss terms and
 * writes the gradients from the kept probabilities, with no exp of its own.
 * Scratch memory is O(T*B*A): the probabilities, in double like everything
 * else (recomputing them took A of the 3A+2 exps of a step).
 *
 * Gradients, per step with scale s = 1/(T*B) (mean) or 1 (sum), p = softmax(z),
 * H = -sum_j p_j log p_j, a the action taken, A_t the advantage:
 *   d pg_loss / d z_j      = -s A_t (1[j=a] - p_j)
 *   d kl_loss / d z_j      = -s kl_cost (1[j=a] - p_j)
 *   d entropy_loss / d z_j =  s entropy_cost p_j (log p_j + H)
 *   d baseline_loss / d V  = -s baseline_cost (v_t - V(x_t))
 * (dH/dz_j = -p_j (log p_j + H)); v_t and A_t are held constant.
 * A Gaussian policy (seed/loss.h) takes log pi and H from its parameters
 * in the first pass and needs no probabilities: lse[i] holds log pi(u).
 */
#include "seed/loss.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

#include "seed/buf.h"
#include "seed/gaussian.h"
#include "seed/vtrace.h"

void seed_loss_config_default(seed_loss_config *c)
{
	c->baseline_cost = 0.5f;
	c->entropy_cost = 0.01f;
	c->kl_cost = 0.0f;
	c->clip_rho = 1.0f;
	c->clip_pg_rho = 1.0f;
	c->lambda = 1.0f;
	c->reduce = SEED_LOSS_MEAN;
}

/* Log-sum-exp of z[0..A) with the maximum subtracted; also the entropy of
 * softmax(z), computed as log S - sum_j (e_j / S)(z_j - m) so that no
 * probability is ever logged, and the probabilities e_j / S into p[0..A),
 * from the same exponentials. */
static double log_sum_exp(const float *z, int A, double *entropy, double *p)
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
		p[j] = e;
	}
	const double logS = log(S);
	*entropy = logS - Sz / S;
	/* A division, as log_prob's, so that equal logits give equal
	 * probabilities and a ratio of exactly 1. */
	for (int j = 0; j < A; j++)
		p[j] /= S;
	return m + logS;
}

/* log softmax(zb)[a], and softmax(zb)[a] itself into *prob, from the same
 * exponentials. */
static double log_prob(const float *zb, int A, int a, double *prob)
{
	double m = zb[0];
	for (int j = 1; j < A; j++)
		if (zb[j] > m)
			m = zb[j];
	double S = 0, ea = 0;
	for (int j = 0; j < A; j++) {
		const double e = exp((double)zb[j] - m);
		S += e;
		if (j == a)
			ea = e;
	}
	*prob = ea / S;
	return (double)zb[a] - (m + log(S));
}

static int check_config(const seed_loss_config *c, seed_err *err)
{
	if (!(isfinite(c->baseline_cost) && c->baseline_cost >= 0))
		return seed_err_set(err, -EINVAL, "loss: baseline_cost %g must be finite and >= 0",
		                    (double)c->baseline_cost);
	if (!(isfinite(c->entropy_cost) && c->entropy_cost >= 0))
		return seed_err_set(err, -EINVAL, "loss: entropy_cost %g must be finite and >= 0",
		                    (double)c->entropy_cost);
	if (!(isfinite(c->kl_cost) && c->kl_cost >= 0))
		return seed_err_set(err, -EINVAL, "loss: kl_cost %g must be finite and >= 0",
		                    (double)c->kl_cost);
	if (!(c->clip_rho >= 0))
		return seed_err_set(err, -EINVAL, "loss: clip_rho %g must be >= 0 (INFINITY: no clipping)",
		                    (double)c->clip_rho);
	if (!(c->clip_pg_rho >= 0))
		return seed_err_set(err, -EINVAL, "loss: clip_pg_rho %g must be >= 0 (INFINITY: no clipping)",
		                    (double)c->clip_pg_rho);
	if (!(c->lambda >= 0 && c->lambda <= 1))
		return seed_err_set(err, -EINVAL, "loss: lambda %g must be in [0, 1]", (double)c->lambda);
	if (c->reduce != SEED_LOSS_MEAN && c->reduce != SEED_LOSS_SUM)
		return seed_err_set(err, -EINVAL, "loss: unknown reduction %d", (int)c->reduce);
	return 0;
}

static int check_batch(const seed_loss_batch *in, seed_err *err)
{
	if (in->T < 1 || in->B < 1 || in->A < 1)
		return seed_err_set(err, -EINVAL, "loss: batch shape T=%d B=%d A=%d must be positive", in->T,
		                    in->B, in->A);
	const bool box = in->box_actions != NULL;
	if (!in->logits || !in->behaviour_logits || (!box && !in->actions) || !in->rewards ||
	    !in->discounts || !in->values || !in->bootstrap_value)
		return seed_err_set(err, -EINVAL, "loss: batch has a NULL array");
	const size_t n = (size_t)in->T * (size_t)in->B;
	for (size_t i = 0; box && i < n * (size_t)in->A; i++)
		if (!isfinite(in->box_actions[i]))
			return seed_err_set(
			    err, -EINVAL, "loss: raw sample %zu at step t=%zu, sequence b=%zu is not finite",
			    i % (size_t)in->A, i / (size_t)in->A / (size_t)in->B,
			    i / (size_t)in->A % (size_t)in->B);
	for (size_t i = 0; !box && i < n; i++)
		if (in->actions[i] < 0 || in->actions[i] >= in->A)
			return seed_err_set(
			    err, -EINVAL, "loss: action %d at step t=%zu, sequence b=%zu is outside [0, %d)",
			    (int)in->actions[i], i / (size_t)in->B, i % (size_t)in->B, in->A);
	return 0;
}

size_t seed_loss_workspace_size(int T, int B, int A)
{
	size_t n = (size_t)T * (size_t)B;
	return (2 + (size_t)A) * n * sizeof(double) + 3 * n * sizeof(float);
}

int seed_loss_vtrace(const seed_loss_config *cfg, const seed_loss_batch *in, seed_loss_stats *stats,
                     float *dlogits, float *dvalues, seed_err *err)
{
	return seed_loss_vtrace_ws(cfg, in, NULL, stats, dlogits, dvalues, err);
}

int seed_loss_vtrace_ws(const seed_loss_config *cfg, const seed_loss_batch *in, void *workspace,
                        seed_loss_stats *stats, float *dlogits, float *dvalues, seed_err *err)
{
	if (!cfg || !in || !stats)
		return seed_err_set(err, -EINVAL, "loss: NULL %s", !cfg ? "config" : !in ? "batch" : "stats");
	int rc = check_config(cfg, err);
	if (rc == 0)
		rc = check_batch(in, err);
	if (rc)
		return rc;

	const int T = in->T, B = in->B, A = in->A;
	const size_t n = (size_t)T * (size_t)B;
	const double s = cfg->reduce == SEED_LOSS_MEAN ? 1.0 / (double)n : 1.0;

	/* Scratch: per-step log-sum-exp, entropy and probabilities in double
	 * for the second pass; log ratios, targets and advantages as float for
	 * seed_vtrace. */
	void *own = workspace ? NULL : seed_xmalloc(seed_loss_workspace_size(T, B, A));
	double *lse = workspace ? workspace : own, *ent = lse + n, *prob = ent + n; /* prob: (T, B, A) */
	float *log_rhos = (float *)(prob + n * (size_t)A), *vs = log_rhos + n, *adv = vs + n;

	double sum_kl = 0, sum_rho = 0, n_clipped = 0;
	const bool box = in->box_actions != NULL;
	const size_t W = box ? 2 * (size_t)A : (size_t)A; /* parameters per step */
	for (size_t i = 0; box && i < n; i++) {
		/* A Gaussian's: lse[i] holds log pi(u) itself. */
		const float *u = in->box_actions + i * (size_t)A;
		lse[i] = seed_gaussian_row_log_prob(A, in->logits + i * W, u, &ent[i]);
		const double lr =
		    lse[i] - seed_gaussian_row_log_prob(A, in->behaviour_logits + i * W, u, NULL);
		const double rho = exp(lr);
		log_rhos[i] = (float)lr;
		sum_kl -= lr;
		sum_rho += rho;
		n_clipped += rho > cfg->clip_rho;
	}
	for (size_t i = 0; !box && i < n; i++) {
		const float *z = in->logits + i * (size_t)A, *zb = in->behaviour_logits + i * (size_t)A;
		const int a = in->actions[i];
		lse[i] = log_sum_exp(z, A, &ent[i], prob + i * (size_t)A);
		const double logpi = (double)z[a] - lse[i];
		double mu;
		const double logmu = log_prob(zb, A, a, &mu);
		const double lr = logpi - logmu;
		log_rhos[i] = (float)lr;
		sum_kl -= lr;
		/* pi/mu from the probabilities at hand, one exp fewer; exp(lr)
		 * where one of them has lost precision to underflow (logits
		 * hundreds apart), since lr itself stays exact there. */
		const double pa = prob[i * (size_t)A + (size_t)a];
		const double rho = pa >= DBL_MIN && mu >= DBL_MIN ? pa / mu : exp(lr);
		sum_rho += rho;
		n_clipped += rho > cfg->clip_rho;
	}

	rc = seed_vtrace(T, B, log_rhos, in->discounts, in->rewards, in->values, in->bootstrap_value,
	                 cfg->clip_rho, cfg->clip_pg_rho, cfg->lambda, vs, adv);
	if (rc) {
		/* Unreachable after the checks above; kept so that a future change
		 * to seed_vtrace's contract cannot go unnoticed. */
		free(own);
		return seed_err_set(err, rc, "loss: seed_vtrace failed");
	}

	const double ec = cfg->entropy_cost, bc = cfg->baseline_cost, kc = cfg->kl_cost;
	double pg = 0, base = 0, sum_ent = 0, sum_vs = 0, sum_v = 0, sum_adv = 0;
	for (size_t i = 0; i < n; i++) {
		const float *z = in->logits + i * W;
		const int a = box ? 0 : in->actions[i];
		const double A_t = adv[i], v = in->values[i], err_v = (double)vs[i] - v;
		pg -= A_t * (box ? lse[i] : (double)z[a] - lse[i]);
		base += err_v * err_v;
		sum_ent += ent[i];
		sum_vs += vs[i];
		sum_v += v;
		sum_adv += A_t;
		if (dvalues)
			dvalues[i] = (float)(-s * bc * err_v);
		if (dlogits && box) {
			float *dz = dlogits + i * W;
			memset(dz, 0, W * sizeof *dz);
			seed_gaussian_row_backward(A, z, in->box_actions + i * (size_t)A, -s * (A_t + kc),
			                           -s * ec, dz);
		} else if (dlogits) {
			float *dz = dlogits + i * (size_t)A;
			const double *pi = prob + i * (size_t)A;
			const double w = -s * (A_t + kc);
			for (int j = 0; j < A; j++) {
				const double logp = (double)z[j] - lse[i], p = pi[j];
				dz[j] = (float)(w * ((j == a) - p) + s * ec * p * (logp + ent[i]));
			}
		}
	}

	const double inv_n = 1.0 / (double)n;
	seed_loss_stats st;
	st.pg_loss = s * pg;
	st.baseline_loss = s * bc * 0.5 * base;
	st.entropy_loss = -s * ec * sum_ent;
	st.kl_loss = s * kc * sum_kl;
	st.total = st.pg_loss + st.baseline_loss + st.entropy_loss + st.kl_loss;
	st.entropy = sum_ent * inv_n;
	st.kl = sum_kl * inv_n;
	st.mean_rho = sum_rho * inv_n;
	st.clipped_rho_fraction = n_clipped * inv_n;
	st.mean_vs = sum_vs * inv_n;
	st.mean_value = sum_v * inv_n;
	st.mean_pg_advantage = sum_adv * inv_n;
	*stats = st;

	free(own);
	return 0;
}
