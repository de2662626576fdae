/* evo_gen.c: the generation's side of seed/evo.h: algorithm names, the
 * checks of a generation, the noise a member's key stands for (scaled by
 * one sigma, or by SNES's per-parameter sigmas), a member's parameters,
 * and fitness shaping (centered ranks).  What evo.c (the
 * algorithms' rounds) and population.c (a population's members) both
 * build members with.
 */
#include "evo_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/rng.h"

/* ---- names, checks, members ------------------------------------------------ */

const char *seed_evo_algo_name(seed_evo_algo a)
{
	switch (a) {
	case SEED_EVO_ES:
		return "es";
	case SEED_EVO_GA:
		return "ga";
	case SEED_EVO_RS:
		return "rs";
	case SEED_EVO_SNES:
		return "snes";
	case SEED_EVO_ARS:
		return "ars";
	}
	return "?";
}

int seed_evo_algo_parse(const char *s, seed_evo_algo *a)
{
	static const seed_evo_algo all[] = {SEED_EVO_ES, SEED_EVO_GA, SEED_EVO_RS, SEED_EVO_SNES,
	                                    SEED_EVO_ARS};
	for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
		if (strcmp(s, seed_evo_algo_name(all[i])) == 0) {
			*a = all[i];
			return 0;
		}
	return -EINVAL;
}

bool evo_algo_ok(seed_evo_algo a)
{
	return a == SEED_EVO_ES || a == SEED_EVO_GA || a == SEED_EVO_RS || a == SEED_EVO_SNES ||
	       a == SEED_EVO_ARS;
}

bool seed_evo_algo_centred(seed_evo_algo a)
{
	return a == SEED_EVO_ES || a == SEED_EVO_SNES || a == SEED_EVO_ARS;
}

/* Row m of g's genome: keys >= 0 then only -1, the first a key. */
static int check_row(const seed_evo_gen *g, int m, seed_err *err)
{
	const int64_t *row = g->genome + (size_t)m * (size_t)g->genome_len;
	if (row[0] < 0)
		return seed_err_set(err, -EINVAL,
		                    "generation: member %d: genome[0] is %lld, not a key (>= 0)", m,
		                    (long long)row[0]);
	bool pad = false;
	for (int k = 1; k < g->genome_len; k++) {
		if (row[k] < -1 || (pad && row[k] != -1))
			return seed_err_set(
			    err, -EINVAL,
			    "generation: member %d: genome[%d] is %lld (keys >= 0, then only -1)", m, k,
			    (long long)row[k]);
		pad = pad || row[k] == -1;
	}
	return 0;
}

/* The fields of g that do not depend on the members. */
static int check_head(const seed_evo_gen *g, seed_err *err)
{
	if (!evo_algo_ok(g->algo))
		return seed_err_set(err, -EINVAL, "generation: unknown algorithm %d", (int)g->algo);
	if (g->phase != 0 && g->phase != 1)
		return seed_err_set(err, -EINVAL, "generation: phase %d is not 0 or 1", g->phase);
	const char *name = seed_evo_algo_name(g->algo);
	bool centred = seed_evo_algo_centred(g->algo);
	if (g->phase == 1 && centred)
		return seed_err_set(err, -EINVAL, "generation: %s has no phase 1", name);
	if (g->generation < 0)
		return seed_err_set(err, -EINVAL, "generation: generation %lld is negative",
		                    (long long)g->generation);
	if (g->noise_size < 1 || g->noise_size > SEED_NOISE_MAX_SIZE)
		return seed_err_set(err, -EINVAL, "generation: noise_size %lld is not in [1, %lld]",
		                    (long long)g->noise_size, (long long)SEED_NOISE_MAX_SIZE);
	if (!(isfinite(g->sigma) && g->sigma >= 0))
		return seed_err_set(err, -EINVAL, "generation: sigma %g must be finite and >= 0", g->sigma);
	if (g->rank < 0)
		return seed_err_set(err, -EINVAL, "generation: rank %d is negative", g->rank);
	if (g->members < 1)
		return seed_err_set(err, -EINVAL, "generation: members %d must be at least 1", g->members);
	if (g->genome_len < 1 || !g->genome)
		return seed_err_set(err, -EINVAL, "generation: no genome (genome_len %d)", g->genome_len);
	if (!g->episodes)
		return seed_err_set(err, -EINVAL, "generation: no episodes");
	if (centred) {
		if (g->genome_len != 1)
			return seed_err_set(err, -EINVAL, "generation: %s genome_len %d is not 1", name,
			                    g->genome_len);
		if (!g->sign || !g->centre)
			return seed_err_set(err, -EINVAL, "generation: %s needs sign and centre", name);
	}
	if (g->algo == SEED_EVO_SNES) {
		if (!g->sigmas)
			return seed_err_set(err, -EINVAL, "generation: snes needs sigmas");
		if (g->rank != 0)
			return seed_err_set(err, -EINVAL,
			                    "generation: snes needs rank 0 (per-parameter sigmas), not %d",
			                    g->rank);
	} else if (g->sigmas) {
		return seed_err_set(err, -EINVAL, "generation: sigmas only go with snes, not %s", name);
	}
	return 0;
}

/* SNES's sigmas: every one finite and >= 0 (none for another algorithm). */
static int check_sigmas(const seed_evo_gen *g, seed_err *err)
{
	for (size_t i = 0; g->sigmas && i < g->num_params; i++)
		if (!(isfinite(g->sigmas[i]) && g->sigmas[i] >= 0))
			return seed_err_set(err, -EINVAL,
			                    "generation: sigmas[%zu] is %g, must be finite and >= 0", i,
			                    (double)g->sigmas[i]);
	return 0;
}

/* The optional fields of Box members and observation statistics. */
static int check_extras(const seed_evo_gen *g, seed_err *err)
{
	if (!(isfinite(g->action_noise) && g->action_noise >= 0))
		return seed_err_set(err, -EINVAL, "generation: action_noise %g must be finite and >= 0",
		                    g->action_noise);
	if (g->obs_dim < 0)
		return seed_err_set(err, -EINVAL, "generation: obs_dim %lld is negative",
		                    (long long)g->obs_dim);
	bool want = g->obs_dim > 0;
	if (want != (g->obs_mean != NULL) || want != (g->obs_var != NULL))
		return seed_err_set(err, -EINVAL,
		                    "generation: obs_dim %lld with obs_mean %s and obs_var %s (both for "
		                    "obs_dim > 0, neither for 0)",
		                    (long long)g->obs_dim, g->obs_mean ? "given" : "NULL",
		                    g->obs_var ? "given" : "NULL");
	for (int64_t j = 0; j < g->obs_dim; j++) {
		if (!isfinite(g->obs_mean[j]))
			return seed_err_set(err, -EINVAL, "generation: obs_mean[%lld] is %g, not finite",
			                    (long long)j, (double)g->obs_mean[j]);
		if (!(isfinite(g->obs_var[j]) && g->obs_var[j] >= 0))
			return seed_err_set(err, -EINVAL,
			                    "generation: obs_var[%lld] is %g, must be finite and >= 0",
			                    (long long)j, (double)g->obs_var[j]);
	}
	return 0;
}

int seed_evo_gen_check(const seed_evo_gen *g, seed_err *err)
{
	int rc = check_head(g, err);
	if (!rc)
		rc = check_sigmas(g, err);
	if (!rc)
		rc = check_extras(g, err);
	if (rc)
		return rc;
	for (int m = 0; m < g->members; m++) {
		if ((rc = check_row(g, m, err)))
			return rc;
		if (g->episodes[m] < 1)
			return seed_err_set(err, -EINVAL,
			                    "generation: member %d: episodes %d must be at least 1", m,
			                    (int)g->episodes[m]);
		if (seed_evo_algo_centred(g->algo) && g->sign[m] != 1.0f && g->sign[m] != -1.0f)
			return seed_err_set(err, -EINVAL, "generation: member %d: sign %g is not +1 or -1", m,
			                    (double)g->sign[m]);
	}
	return 0;
}

int64_t seed_evo_noise_len(const seed_model *model, int rank)
{
	if (rank <= 0)
		return (int64_t)seed_model_num_params(model);
	int64_t q = 0;
	for (int t = 0; t < seed_model_num_tensors(model); t++) {
		const seed_model_param *p = seed_model_param_at(model, t);
		if (p->rank == 2)
			q += (p->shape[0] + p->shape[1]) * (int64_t)rank;
		else
			q += (int64_t)p->numel;
	}
	return q;
}

int seed_evo_add_noise(const seed_noise *noise, const seed_model *model, int rank, uint64_t key, float scale,
                       float *out, seed_err *err)
{
	int64_t len = seed_evo_noise_len(model, rank);
	int64_t at = seed_noise_index(noise, key, len);
	if (at < 0)
		return seed_err_set(err, -EINVAL,
		                    "evolution: a noise slice of %lld floats is longer than the table (%lld)",
		                    (long long)len, (long long)seed_noise_size(noise));
	const float *src = seed_noise_data(noise) + at;
	if (rank <= 0) {
		size_t P = seed_model_num_params(model);
		for (size_t i = 0; i < P; i++)
			out[i] += scale * src[i];
		return 0;
	}
	float inv = (float)(1.0 / sqrt((double)rank));
	for (int t = 0; t < seed_model_num_tensors(model); t++) {
		const seed_model_param *p = seed_model_param_at(model, t);
		float *o = out + p->offset;
		if (p->rank != 2) {
			for (size_t i = 0; i < p->numel; i++)
				o[i] += scale * src[i];
			src += p->numel;
			continue;
		}
		int64_t d0 = p->shape[0], d1 = p->shape[1];
		const float *A = src, *B = src + d0 * rank;
		for (int64_t i = 0; i < d0; i++)
			for (int64_t j = 0; j < d1; j++) {
				float s = 0.0f;
				for (int k = 0; k < rank; k++)
					s += A[i * rank + k] * B[j * rank + k];
				o[i * d1 + j] += scale * (s * inv);
			}
		src += (d0 + d1) * rank;
	}
	return 0;
}

const float *evo_noise_slice(const seed_noise *noise, uint64_t key, int64_t P)
{
	int64_t at = seed_noise_index(noise, key, P);
	return at < 0 ? NULL : seed_noise_data(noise) + at;
}

int evo_add_noise_scaled(const seed_noise *noise, int64_t P, uint64_t key, float sign, const float *sigmas,
                         float *out, seed_err *err)
{
	const float *eps = evo_noise_slice(noise, key, P);
	if (!eps)
		return seed_err_set(err, -EINVAL,
		                    "evolution: a noise slice of %lld floats is longer than the table (%lld)",
		                    (long long)P, (long long)seed_noise_size(noise));
	for (int64_t i = 0; i < P; i++)
		out[i] += (sign * sigmas[i]) * eps[i];
	return 0;
}

/* The parameters of a genome (GA, RS) into out: init(genome[0]) then, for
 * GA, the mutations until -1. */
int evo_build_genome(const seed_noise *noise, seed_model *model, seed_evo_algo algo, double sigma, int rank,
                     const int64_t *genome, int len, float *out, seed_err *err)
{
	seed_rng r;
	seed_rng_init(&r, (uint64_t)genome[0], SEED_EVO_INIT_STREAM);
	seed_model_init(model, &r);
	memcpy(out, seed_model_params(model), seed_model_num_params(model) * sizeof *out);
	if (algo != SEED_EVO_GA)
		return 0;
	for (int k = 1; k < len && genome[k] >= 0; k++) {
		int rc = seed_evo_add_noise(noise, model, rank, (uint64_t)genome[k], (float)sigma, out, err);
		if (rc)
			return rc;
	}
	return 0;
}

int evo_check_table(const seed_noise *noise, uint64_t seed, int64_t size, seed_err *err)
{
	if (seed_noise_seed(noise) != seed || seed_noise_size(noise) != size)
		return seed_err_set(
		    err, -EINVAL,
		    "evolution: the noise table is (seed %llu, size %lld), the generation wants (seed %llu, "
		    "size %lld)",
		    (unsigned long long)seed_noise_seed(noise), (long long)seed_noise_size(noise),
		    (unsigned long long)seed, (long long)size);
	return 0;
}

int seed_evo_member_params(const seed_noise *noise, seed_model *model, const seed_evo_gen *g, int m,
                           float *out, seed_err *err)
{
	int rc = check_head(g, err);
	if (rc)
		return rc;
	if (m < 0 || m >= g->members)
		return seed_err_set(err, -EINVAL, "evolution: member %d is not in [0, %d)", m, g->members);
	if ((rc = evo_check_table(noise, g->noise_seed, g->noise_size, err)))
		return rc;
	if (g->num_params != seed_model_num_params(model))
		return seed_err_set(err, -EINVAL,
		                    "evolution: the generation has %zu parameters, the model %zu",
		                    g->num_params, seed_model_num_params(model));
	if ((rc = check_row(g, m, err)))
		return rc;
	const int64_t *row = g->genome + (size_t)m * (size_t)g->genome_len;
	if (seed_evo_algo_centred(g->algo)) {
		float sign = g->sign[m];
		if (sign != 1.0f && sign != -1.0f)
			return seed_err_set(err, -EINVAL, "generation: member %d: sign %g is not +1 or -1", m,
			                    (double)sign);
		if ((rc = check_sigmas(g, err)))
			return rc;
		memcpy(out, g->centre, g->num_params * sizeof *out);
		if (g->algo == SEED_EVO_SNES) /* full rank (check_head) */
			return evo_add_noise_scaled(noise, (int64_t)g->num_params, (uint64_t)row[0], sign,
			                            g->sigmas, out, err);
		return seed_evo_add_noise(noise, model, g->rank, (uint64_t)row[0], sign * (float)g->sigma,
		                          out, err);
	}
	return evo_build_genome(noise, model, g->algo, g->sigma, g->rank, row, g->genome_len, out, err);
}

void seed_evo_centered_ranks(const double *fitness, int n, float *shaped)
{
	if (n <= 0)
		return;
	if (n == 1) {
		shaped[0] = 0.0f;
		return;
	}
	/* Insertion of indices sorted by fitness would be O(n^2); n is a
	 * population (thousands at most), so sort an index array. */
	int *idx = seed_xmalloc((size_t)n * sizeof *idx);
	for (int i = 0; i < n; i++)
		idx[i] = i;
	/* Shell sort (no qsort context for the fitness array). */
	for (int gap = n / 2; gap > 0; gap /= 2)
		for (int i = gap; i < n; i++) {
			int v = idx[i], j = i;
			while (j >= gap && fitness[idx[j - gap]] > fitness[v]) {
				idx[j] = idx[j - gap];
				j -= gap;
			}
			idx[j] = v;
		}
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && fitness[idx[j + 1]] == fitness[idx[i]])
			j++;
		double rank = (i + j) / 2.0; /* the mean of positions i..j */
		for (int k = i; k <= j; k++)
			shaped[idx[k]] = (float)(rank / (n - 1) - 0.5);
		i = j + 1;
	}
	free(idx);
}
