/* evo_frame.c: a generation as a generation frame and back (seed/evo_frame.h).
 *
 * The structure (kinds, dtypes, shapes, ranges, the algorithm's name) is the
 * frame schema's, checked by seed_frame_validate; check_gen checks the
 * values the schema cannot, on both sides, with the same messages.
 */
#include "seed/evo_frame.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"

#define GEN "generation frame: field "

/* The frame's tensors, in the order read_frame leaves them in. */
#define NT 7
static const char *const field_names[NT] = {"genome",   "episodes", "sign",  "centre",
                                            "obs_mean", "obs_var",  "sigmas"};

/* The frame's names of the algorithms (seed_evo_algo_name's), kept here so
 * that the frame's spelling is fixed by the protocol, in one place. */
static const char *const algo_names[] = {[SEED_EVO_ES] = "es",
                                         [SEED_EVO_GA] = "ga",
                                         [SEED_EVO_RS] = "rs",
                                         [SEED_EVO_SNES] = "snes",
                                         [SEED_EVO_ARS] = "ars"};
#define NALGO ((int)(sizeof algo_names / sizeof algo_names[0]))

/* The rules of seed/evo_frame.h on g (arrays readable, aligned). */
static int check_gen(const seed_evo_gen *g, seed_err *err)
{
	if ((int)g->algo < 0 || (int)g->algo >= NALGO || !algo_names[g->algo])
		return seed_err_set(err, -EINVAL, GEN "'algorithm': %d is not an algorithm", (int)g->algo);
	if (g->generation < 0)
		return seed_err_set(err, -EINVAL, GEN "'generation': %" PRId64 ", expected >= 0",
		                    g->generation);
	if (g->phase != 0 && g->phase != 1)
		return seed_err_set(err, -EINVAL, GEN "'phase': %d, expected 0 or 1", g->phase);
	if (g->noise_seed > (uint64_t)INT64_MAX)
		return seed_err_set(err, -EINVAL, GEN "'noise_seed': %" PRIu64 ", expected below 2^63",
		                    g->noise_seed);
	if (g->noise_size < 1 || g->noise_size > INT32_MAX)
		return seed_err_set(err, -EINVAL, GEN "'noise_size': %" PRId64 ", expected in [1, 2^31 - 1]",
		                    g->noise_size);
	if (!isfinite(g->sigma) || g->sigma < 0)
		return seed_err_set(err, -EINVAL, GEN "'sigma': %g, expected a finite value >= 0", g->sigma);
	if (g->rank < 0)
		return seed_err_set(err, -EINVAL, GEN "'rank': %d, expected >= 0", g->rank);
	if (!isfinite(g->action_noise) || g->action_noise < 0)
		return seed_err_set(err, -EINVAL, GEN "'action_noise': %g, expected a finite value >= 0",
		                    g->action_noise);
	if (g->obs_dim < 0 || g->obs_dim > INT32_MAX)
		return seed_err_set(err, -EINVAL,
		                    GEN "'obs_mean': obs_dim %" PRId64 ", expected in [0, 2^31)", g->obs_dim);
	if ((g->obs_dim > 0) != (g->obs_mean != NULL))
		return seed_err_set(err, -EINVAL,
		                    GEN "'obs_mean': %s with obs_dim %" PRId64
		                        " (obs_mean and obs_var come with obs_dim > 0)",
		                    g->obs_mean ? "present" : "missing", g->obs_dim);
	if ((g->obs_dim > 0) != (g->obs_var != NULL))
		return seed_err_set(err, -EINVAL,
		                    GEN "'obs_var': %s with obs_dim %" PRId64
		                        " (obs_mean and obs_var come with obs_dim > 0)",
		                    g->obs_var ? "present" : "missing", g->obs_dim);
	for (int64_t j = 0; j < g->obs_dim; j++) {
		if (!isfinite(g->obs_mean[j]))
			return seed_err_set(err, -EINVAL,
			                    GEN "'obs_mean': element %" PRId64 " is %g, expected finite", j,
			                    (double)g->obs_mean[j]);
		if (!isfinite(g->obs_var[j]) || g->obs_var[j] < 0)
			return seed_err_set(err, -EINVAL,
			                    GEN "'obs_var': element %" PRId64
			                        " is %g, expected a finite value >= 0",
			                    j, (double)g->obs_var[j]);
	}
	if (g->members < 1 || g->genome_len < 1 || !g->genome || !g->episodes)
		return seed_err_set(err, -EINVAL,
		                    GEN "'genome': %d members of %d keys, expected at least 1 of 1",
		                    g->members, g->genome_len);
	bool centred = seed_evo_algo_centred(g->algo), snes = g->algo == SEED_EVO_SNES;
	const char *name = algo_names[g->algo];
	if (centred && g->genome_len != 1)
		return seed_err_set(err, -EINVAL,
		                    GEN "'genome': %d columns, expected 1 for %s (each member's noise key)",
		                    g->genome_len, name);
	if (centred && !g->sign)
		return seed_err_set(err, -EINVAL, GEN "'sign': missing (%s needs each member's sign)", name);
	if (centred && (!g->centre || g->num_params < 1))
		return seed_err_set(err, -EINVAL, GEN "'centre': missing (%s needs the centre)", name);
	if (!centred && g->sign)
		return seed_err_set(err, -EINVAL,
		                    GEN "'sign': only es, snes and ars generations have signs, not %s", name);
	if (!centred && g->centre)
		return seed_err_set(err, -EINVAL,
		                    GEN "'centre': only es, snes and ars generations have a centre, not %s",
		                    name);
	if (snes && !g->sigmas)
		return seed_err_set(err, -EINVAL, GEN "'sigmas': missing (snes needs each parameter's std)");
	if (!snes && g->sigmas)
		return seed_err_set(err, -EINVAL, GEN "'sigmas': only snes generations have sigmas, not %s",
		                    name);
	if (snes && g->rank != 0)
		return seed_err_set(
		    err, -EINVAL, GEN "'rank': %d, expected 0 for snes (per-parameter sigmas are full rank)",
		    g->rank);
	for (size_t i = 0; snes && i < g->num_params; i++)
		if (!isfinite(g->sigmas[i]) || g->sigmas[i] < 0)
			return seed_err_set(err, -EINVAL,
			                    GEN "'sigmas': element %zu is %g, expected a finite value >= 0",
			                    i, (double)g->sigmas[i]);
	for (int m = 0; m < g->members; m++) {
		const int64_t *row = g->genome + (size_t)m * (size_t)g->genome_len;
		if (row[0] < 0)
			return seed_err_set(err, -EINVAL,
			                    GEN "'genome': member %d: first key %" PRId64 ", expected >= 0",
			                    m, row[0]);
		bool pad = false;
		for (int k = 1; k < g->genome_len; k++) {
			if (row[k] < -1)
				return seed_err_set(err, -EINVAL,
				                    GEN
				                    "'genome': member %d: key %" PRId64
				                    " at column %d (keys are >= 0, -1 pads a shorter genome)",
				                    m, row[k], k);
			if (pad && row[k] != -1)
				return seed_err_set(err, -EINVAL,
				                    GEN "'genome': member %d: key %" PRId64
				                        " at column %d after -1 (padding ends a genome)",
				                    m, row[k], k);
			pad = row[k] == -1;
		}
		if (g->episodes[m] < 1)
			return seed_err_set(err, -EINVAL,
			                    GEN "'episodes': member %d wants %" PRId32 ", expected >= 1", m,
			                    g->episodes[m]);
		if (centred && g->sign[m] != 1.0f && g->sign[m] != -1.0f)
			return seed_err_set(err, -EINVAL, GEN "'sign': member %d: %g, expected +1 or -1", m,
			                    (double)g->sign[m]);
	}
	return 0;
}

int seed_evo_gen_to_frame(const seed_evo_gen *g, int64_t run, seed_frame *f, seed_err *err)
{
	if (run < 0 || run > (int64_t)UINT32_MAX)
		return seed_err_set(err, -EINVAL, GEN "'run': %" PRId64 ", expected in [0, 2^32)", run);
	int rc = check_gen(g, err);
	if (rc)
		return rc;
	if (g->num_params > (size_t)INT64_MAX / 4)
		return seed_err_set(err, -EINVAL, GEN "'centre': %zu parameters", g->num_params);
	seed_frame_init(f, SEED_FRAME_GENERATION);
	int64_t M = g->members, ML[2] = {g->members, g->genome_len}, P = (int64_t)g->num_params;
	seed_frame_set_int(f, "run", run);
	seed_frame_set_int(f, "generation", g->generation);
	seed_frame_set_int(f, "phase", g->phase);
	seed_frame_set_str(f, "algorithm", algo_names[g->algo]);
	seed_frame_set_int(f, "noise_seed", (int64_t)g->noise_seed);
	seed_frame_set_int(f, "noise_size", g->noise_size);
	seed_frame_set_float(f, "sigma", g->sigma);
	seed_frame_set_int(f, "rank", g->rank);
	seed_frame_set_tensor(f, "genome", seed_tensor_view((void *)g->genome, SEED_DTYPE_I64, 2, ML));
	seed_frame_set_tensor(f, "episodes", seed_tensor_view((void *)g->episodes, SEED_DTYPE_I32, 1, &M));
	if (g->sign)
		seed_frame_set_tensor(f, "sign", seed_tensor_view((void *)g->sign, SEED_DTYPE_F32, 1, &M));
	if (g->centre)
		seed_frame_set_tensor(f, "centre",
		                      seed_tensor_view((void *)g->centre, SEED_DTYPE_F32, 1, &P));
	if (g->sigmas)
		seed_frame_set_tensor(f, "sigmas",
		                      seed_tensor_view((void *)g->sigmas, SEED_DTYPE_F32, 1, &P));
	if (g->action_noise > 0)
		seed_frame_set_float(f, "action_noise", g->action_noise);
	if (g->obs_dim > 0) {
		seed_frame_set_tensor(f, "obs_mean",
		                      seed_tensor_view((void *)g->obs_mean, SEED_DTYPE_F32, 1, &g->obs_dim));
		seed_frame_set_tensor(f, "obs_var",
		                      seed_tensor_view((void *)g->obs_var, SEED_DTYPE_F32, 1, &g->obs_dim));
	}
	rc = seed_frame_validate(f, err);
	if (rc)
		seed_frame_clear(f);
	return rc;
}

/* The frame's scalars into g, its tensors left in *t: the structure checked
 * by the schema. */
static int read_frame(const seed_frame *f, seed_evo_gen *g, const seed_tensor *t[NT], seed_err *err)
{
	if (f->type != SEED_FRAME_GENERATION)
		return seed_err_set(err, -SEED_ETYPE, "%s frame: expected a generation frame",
		                    seed_frame_type_name(f->type));
	int rc = seed_frame_validate(f, err);
	if (rc)
		return rc;
	const char *name;
	size_t len;
	seed_frame_str(f, "algorithm", &name, &len);
	memset(g, 0, sizeof *g);
	/* The schema allows these names only. */
	for (int i = 0; i < NALGO; i++)
		if (algo_names[i] && len == strlen(algo_names[i]) && memcmp(name, algo_names[i], len) == 0)
			g->algo = (seed_evo_algo)i;
	g->generation = seed_frame_int(f, "generation", 0);
	g->phase = (int)seed_frame_int(f, "phase", 0);
	g->noise_seed = (uint64_t)seed_frame_int(f, "noise_seed", 0);
	g->noise_size = seed_frame_int(f, "noise_size", 0);
	g->sigma = seed_frame_float(f, "sigma", 0);
	g->rank = (int)seed_frame_int(f, "rank", 0);
	g->action_noise = seed_frame_float(f, "action_noise", 0);
	for (int i = 0; i < NT; i++)
		t[i] = seed_frame_tensor(f, field_names[i]);
	if (t[0]->shape[0] > INT_MAX || t[0]->shape[1] > INT_MAX)
		return seed_err_set(err, -EINVAL,
		                    GEN "'genome': %" PRId64 " members of %" PRId64 " keys: too many",
		                    t[0]->shape[0], t[0]->shape[1]);
	g->members = (int)t[0]->shape[0];
	g->genome_len = (int)t[0]->shape[1];
	/* The schema: sigmas has the centre's P (alone, a snes frame without a
	 * centre, which check_gen refuses). */
	g->num_params = t[3] ? (size_t)t[3]->shape[0] : t[6] ? (size_t)t[6]->shape[0] : 0;
	g->obs_dim = t[4] ? t[4]->shape[0] : 0; /* the schema: obs_var too, the same D */
	return 0;
}

int seed_evo_gen_from_frame(const seed_frame *f, seed_evo_gen *g, seed_err *err)
{
	seed_evo_gen x;
	const seed_tensor *t[NT];
	int rc = read_frame(f, &x, t, err);
	if (rc)
		return rc;
	for (int i = 0; i < NT; i++)
		if (t[i] && (uintptr_t)t[i]->data % seed_dtype_size(t[i]->dtype) != 0)
			return seed_err_set(err, -EINVAL,
			                    GEN
			                    "'%s': data at an address not aligned for %s (a decoded frame: "
			                    "read it with seed_evo_gen_from_frame_copy)",
			                    field_names[i], seed_dtype_name(t[i]->dtype));
	x.genome = t[0]->data;
	x.episodes = t[1]->data;
	x.sign = t[2] ? t[2]->data : NULL;
	x.centre = t[3] ? t[3]->data : NULL;
	x.obs_mean = t[4] ? t[4]->data : NULL;
	x.obs_var = t[5] ? t[5]->data : NULL;
	x.sigmas = t[6] ? t[6]->data : NULL;
	rc = check_gen(&x, err);
	if (rc == 0)
		*g = x;
	return rc;
}

int seed_evo_gen_from_frame_copy(const seed_frame *f, seed_evo_gen_copy *c, seed_err *err)
{
	seed_evo_gen x;
	const seed_tensor *t[NT];
	int rc = read_frame(f, &x, t, err);
	if (rc)
		return rc;
	/* The arrays one after the other, each at an offset aligned for
	 * its dtype (8 bytes suffices for all of them). */
	size_t off[NT], total = 0;
	for (int i = 0; i < NT; i++) {
		off[i] = total;
		if (t[i])
			total += (seed_tensor_nbytes(t[i]) + 7) & ~(size_t)7;
	}
	/* Into fresh memory: c keeps its generation if the checks fail. */
	unsigned char *mem = seed_xmalloc(total ? total : 1);
	for (int i = 0; i < NT; i++)
		if (t[i])
			memcpy(mem + off[i], t[i]->data, seed_tensor_nbytes(t[i]));
	x.genome = (const int64_t *)(void *)(mem + off[0]);
	x.episodes = (const int32_t *)(void *)(mem + off[1]);
	x.sign = t[2] ? (const float *)(void *)(mem + off[2]) : NULL;
	x.centre = t[3] ? (const float *)(void *)(mem + off[3]) : NULL;
	x.obs_mean = t[4] ? (const float *)(void *)(mem + off[4]) : NULL;
	x.obs_var = t[5] ? (const float *)(void *)(mem + off[5]) : NULL;
	x.sigmas = t[6] ? (const float *)(void *)(mem + off[6]) : NULL;
	rc = check_gen(&x, err);
	if (rc) {
		free(mem);
		return rc;
	}
	free(c->mem);
	c->mem = mem;
	c->cap = total;
	c->gen = x;
	return 0;
}

void seed_evo_gen_copy_free(seed_evo_gen_copy *c)
{
	if (!c)
		return;
	free(c->mem);
	memset(c, 0, sizeof *c);
}
