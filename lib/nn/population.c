/* population.c: the forward pass of a population of networks (seed/population.h).
 *
 * The layers are those of a seed_model (model.c's description: the torso,
 * then the fused head of A + 1 outputs), computed here layer by layer on
 * rows sorted by member, because the weights differ per member: cpu.c's
 * forward runs one set of parameters over every row.  The model itself
 * serves as the layout, as the scratch that seed_evo_member_params builds
 * in, and for the low-rank centre.
 *
 * Rows are sorted by member with a counting sort (perm[i] is the row at
 * sorted position i; a member's rows are contiguous, members in order),
 * gathered into the first activation buffer as f32, run through the layers
 * (ping-pong buffers of max_rows x the widest layer), and the head's
 * outputs scattered back to row order.
 *
 * Per layer:
 *   linear, full rank: per member group y = x W_m^T + b_m (BLAS, or the
 *     kernels for the small weight matrices where cpu.c uses them), with
 *     the relu after it fused where cpu.c fuses it;
 *   linear, low rank: y = x C^T over all rows at once (C the centre's
 *     weight), then per member group its bias (stored per member) and its
 *     low-rank correction: for each 2-D parameter tensor inside the layer's
 *     weight (the head holds two: policy/advantage and value), with A and B
 *     from the member's noise slice, y[columns of the tensor] += c_m (x B)
 *     A^T, c_m = sign sigma / sqrt(r): T = x B by the kernels (B^T laid out
 *     as the weight of an r-output layer), then T (c_m A^T) added onto
 *     those columns by the kernels' matmul_acc (both laid out once per
 *     generation);
 *   conv2d: per member group with the member's weight (full rank: its
 *     parameters; low rank: its stored copy of the non-2-D tensors),
 *     transposed for the kernels once per group;
 *   relu, tanh, scale, flatten: on all rows at once.
 *
 * It lives in rl, beside the evolution that builds its members (evo.c), as
 * the layer map has it (a layer includes only those below): it reads the
 * model's layout and calls the kernels through nn's internal headers, and
 * nn knows nothing of genomes or noise tables.
 */
#include "seed/population.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "nn_kernels.h"
#include "seed/blas.h"
#include "seed/buf.h"
#include "seed/policy.h"

/* A 2-D parameter tensor inside a linear layer's weight, for the low-rank
 * correction: rows [row0, row0 + rows) of the layer's outputs, A at noise
 * offset pos_a [rows, r], B at pos_b [n_in, r] within a member's slice. */
typedef struct lr_seg {
	int row0, rows;
	int64_t pos_a, pos_b;
	size_t bt, at; /* B^T [r, n_in] and c A^T [r, rows] in a member's low-rank block */
} lr_seg;

typedef struct pop_layer {
	nnk_conv conv;           /* conv2d */
	size_t w_off, b_off;     /* the layer's w and b in the slab (linear, conv2d) */
	size_t w_small, b_small; /* low rank: places in a member's small vector (conv2d w, b; linear b) */
	lr_seg seg[2];           /* low rank, linear: the 2-D tensors of the weight */
	int nseg;
} pop_layer;

struct seed_population {
	seed_model *model; /* layout, scratch, the centre in low rank */
	const nnk_ops *k;
	int max_rows, A;
	size_t P, obs_numel, obs_bytes, widest;
	pop_layer *pl; /* [model->nlayers] */
	/* The generation. */
	bool ready, lowrank;
	int M, rank;
	const seed_noise *noise;
	float *members;    /* full rank: (M, P) */
	size_t cap_floats; /* floats members holds (kept between generations) */
	size_t small;      /* low rank: floats of the non-2-D tensors */
	size_t *small_of;  /* low rank: [ntensors] offset in the small vector, or SIZE_MAX for 2-D */
	float *msmall;     /* low rank: (M, small) each member's non-2-D tensors */
	size_t lrsize;     /* low rank: floats of a member's block of B^T and c A^T */
	float *mlr;        /* low rank: (M, lrsize) those blocks, c = sign sigma / sqrt(r) */
	float *T;          /* low rank: (max_rows, r) x B for a group */
	/* Work buffers for max_rows rows. */
	int32_t *perm; /* (max_rows) row at sorted position */
	int *start;    /* (M + 1) first sorted position of each member */
	size_t cap_members;
	float *buf[2]; /* (max_rows, widest) */
	float *wt;     /* conv2d weight transposed (k k C, Fp) */
	float *head;   /* (max_rows, A) logits in sorted order */
	float *zeros;  /* (widest) a zero bias for the kernels where none is wanted */
	/* GA: the parents built by the last phase-0 set (their genomes, padded
	 * with -1 to cache_L, and weights), for the next rounds' parents and
	 * candidates; valid for the table, sigma and rank they were built with. */
	int ncache, cache_L;
	int64_t *cache_g; /* (ncache, cache_L) */
	int *cache_len;   /* (ncache) */
	float *cache_w;   /* (ncache, P) */
	uint64_t cache_seed;
	int64_t cache_size;
	double cache_sigma;
	int cache_rank;
};

int seed_population_new(seed_population **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
                        const int64_t *obs_shape, int num_actions, int max_rows, seed_err *err)
{
	if (max_rows < 1)
		return seed_err_set(err, -EINVAL, "population: max_rows %d must be at least 1", max_rows);
	seed_model *m = NULL;
	int rc = seed_model_new(&m, model_json, obs_dtype, obs_rank, obs_shape, num_actions, 1, err);
	if (rc)
		return rc;
	if (m->core.H) {
		seed_model_free(&m);
		return seed_err_set(err, -EINVAL,
		                    "population: a model with a recurrent core cannot be evolved here");
	}
	seed_population *p = seed_xcalloc(1, sizeof *p);
	p->model = m;
	p->k = nnk_best();
	p->max_rows = max_rows;
	p->A = m->A;
	p->P = m->nparams;
	p->obs_numel = m->obs_numel;
	p->obs_bytes = seed_model_obs_bytes(m);
	p->widest = m->obs_numel;
	p->pl = seed_xcalloc((size_t)m->nlayers, sizeof *p->pl);
	size_t wt = 1;
	for (int i = 0; i < m->nlayers; i++) {
		const layer *L = &m->layers[i];
		pop_layer *q = &p->pl[i];
		if (L->numel_out > p->widest)
			p->widest = L->numel_out;
		if (L->w) {
			q->w_off = (size_t)(L->w - m->params);
			q->b_off = (size_t)(L->b - m->params);
		}
		if (L->kind == L_CONV2D) {
			q->conv = (nnk_conv){.H = L->H,
			                     .W = L->W,
			                     .C = L->C,
			                     .k = L->k,
			                     .F = L->F,
			                     .OH = L->OH,
			                     .OW = L->OW,
			                     .S = L->S,
			                     .pt = L->pt,
			                     .pl = L->pl};
			size_t w = (size_t)(L->k * L->k * L->C) * (size_t)nnk_fpad(p->k, L->F);
			if (w > wt)
				wt = w;
		}
	}
	size_t R = (size_t)max_rows;
	p->buf[0] = seed_xaligned(R * p->widest * sizeof(float));
	p->buf[1] = seed_xaligned(R * p->widest * sizeof(float));
	p->wt = seed_xaligned(wt * sizeof(float));
	memset(p->wt, 0, wt * sizeof(float));
	p->head = seed_xmalloc(R * (size_t)p->A * sizeof(float));
	p->zeros = seed_xcalloc(p->widest, sizeof(float));
	p->perm = seed_xmalloc(R * sizeof *p->perm);
	p->small_of = seed_xmalloc((size_t)m->ntensors * sizeof *p->small_of);
	*out = p;
	return 0;
}

/* Forget the generation; the full-rank members' buffer is kept for the
 * next one (a generation's worth of pages is not faulted in again). */
static void drop_generation(seed_population *p)
{
	free(p->msmall);
	free(p->mlr);
	free(p->T);
	p->msmall = p->mlr = p->T = NULL;
	p->ready = false;
	p->M = 0;
}

void seed_population_free(seed_population **pp)
{
	if (!pp || !*pp)
		return;
	seed_population *p = *pp;
	drop_generation(p);
	free(p->members);
	free(p->cache_g);
	free(p->cache_len);
	free(p->cache_w);
	seed_model_free(&p->model);
	free(p->pl);
	free(p->buf[0]);
	free(p->buf[1]);
	free(p->wt);
	free(p->head);
	free(p->zeros);
	free(p->perm);
	free(p->start);
	free(p->small_of);
	free(p);
	*pp = NULL;
}

size_t seed_population_obs_bytes(const seed_population *p)
{
	return p->obs_bytes;
}

size_t seed_population_num_params(const seed_population *p)
{
	return p->P;
}

int seed_population_num_actions(const seed_population *p)
{
	return p->A;
}

/* Low rank: where each tensor's noise and stored copy live, and each
 * linear layer's 2-D tensors. */
static void lowrank_layout(seed_population *p, int r)
{
	const seed_model *m = p->model;
	int64_t pos = 0;
	size_t small = 0;
	for (int t = 0; t < m->ntensors; t++) {
		const seed_model_param *tp = &m->tensors[t];
		if (tp->rank == 2) {
			p->small_of[t] = SIZE_MAX;
			pos += (tp->shape[0] + tp->shape[1]) * r;
		} else {
			p->small_of[t] = small;
			small += tp->numel;
			pos += (int64_t)tp->numel;
		}
	}
	p->small = small;
	p->lrsize = 0;
	for (int i = 0; i < m->nlayers; i++) {
		const layer *L = &m->layers[i];
		pop_layer *q = &p->pl[i];
		q->nseg = 0;
		if (!L->w)
			continue;
		int64_t at = 0;
		for (int t = 0; t < m->ntensors; t++) {
			const seed_model_param *tp = &m->tensors[t];
			int64_t len = tp->rank == 2 ? (tp->shape[0] + tp->shape[1]) * r : (int64_t)tp->numel;
			if (tp->offset == q->b_off)
				q->b_small = p->small_of[t];
			if (tp->offset == q->w_off && tp->rank != 2)
				q->w_small = p->small_of[t];
			/* A 2-D tensor whose rows lie in this linear layer's weight. */
			if (L->kind == L_LINEAR && tp->rank == 2 && tp->offset >= q->w_off &&
			    tp->offset < q->w_off + (size_t)L->n_out * (size_t)L->n_in && q->nseg < 2) {
				lr_seg *s = &q->seg[q->nseg++];
				s->row0 = (int)((tp->offset - q->w_off) / (size_t)L->n_in);
				s->rows = (int)tp->shape[0];
				s->pos_a = at;
				s->pos_b = at + tp->shape[0] * r;
				s->bt = p->lrsize;
				s->at = s->bt + (size_t)L->n_in * (size_t)r;
				p->lrsize = s->at + (size_t)s->rows * (size_t)r;
			}
			at += len;
		}
	}
}

/* Full rank, ES: each member as seed_evo_member_params builds it. */
static int build_es(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, seed_err *err)
{
	for (int m = 0; m < g->members; m++) {
		int rc = seed_evo_member_params(noise, p->model, g, m, p->members + (size_t)m * p->P, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* A member's genome for sorting by parent: its keys but the last. */
typedef struct genome_ref {
	const int64_t *row;
	int len; /* keys before the first -1 */
	int m;
} genome_ref;

static int cmp_parent(const void *a, const void *b)
{
	const genome_ref *x = a, *y = b;
	int nx = x->len - 1, ny = y->len - 1;
	for (int k = 0; k < nx && k < ny; k++)
		if (x->row[k] != y->row[k])
			return x->row[k] < y->row[k] ? -1 : 1;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return x->m - y->m;
}

/* The most parents a GA set keeps for the next (a truncation is tens). */
#define POP_CACHE 64

/* The cached parent whose genome is row[0..n), or -1. */
static int cache_find(const seed_population *p, const int64_t *row, int n)
{
	for (int j = 0; j < p->ncache; j++) {
		if (p->cache_len[j] != n)
			continue;
		const int64_t *c = p->cache_g + (size_t)j * (size_t)p->cache_L;
		int k = 0;
		while (k < n && c[k] == row[k])
			k++;
		if (k == n)
			return j;
	}
	return -1;
}

/* init (P floats) = init(key). */
static void build_init(seed_population *p, int64_t key, float *init)
{
	seed_rng rng;
	seed_rng_init(&rng, (uint64_t)key, SEED_EVO_INIT_STREAM);
	seed_model_init(p->model, &rng);
	memcpy(init, seed_model_params(p->model), p->P * sizeof *init);
}

/* Full rank, GA and RS: the members' parameters exactly as
 * seed_evo_member_params builds them (init(genome[0]), then the mutations
 * in order), but each parent once: members are sorted by their genome
 * without its last key (a GA round's children share a handful of
 * parents, its first round and RS's members share nothing), the parent's
 * parameters are built once, then each member is its parent plus its last
 * mutation.  A parent comes, in order of preference, from the parents the
 * last phase-0 set built (a phase-1 round's candidates are their children),
 * from one of those plus one key (a phase-0 round's parents are the last
 * round's members), or from its initialisation (once per run of equal
 * first keys: an orthogonal initialisation is a QR per layer) and all its
 * mutations.  The float operations are those of seed_evo_member_params, in
 * the same order, so the parameters are the same to the bit. */
static int build_genomes(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, seed_err *err)
{
	int M = g->members, L = g->genome_len;
	size_t P = p->P;
	float sigma = (float)g->sigma;
	if (p->cache_seed != g->noise_seed || p->cache_size != g->noise_size || p->cache_sigma != g->sigma ||
	    p->cache_rank != g->rank || g->algo != SEED_EVO_GA)
		p->ncache = 0; /* built with another table, sigma or rank */
	/* A phase-0 GA set keeps its parents for the next sets. */
	bool keep = g->algo == SEED_EVO_GA && g->phase == 0;
	int cap = keep ? (M < POP_CACHE ? M : POP_CACHE) : 0, nnew = 0;
	genome_ref *refs = seed_xmalloc((size_t)M * sizeof *refs);
	float *init = seed_xmalloc(P * sizeof *init), *parent = seed_xmalloc(P * sizeof *parent);
	int64_t *new_g = cap ? seed_xmalloc((size_t)cap * (size_t)L * sizeof *new_g) : NULL;
	int *new_len = cap ? seed_xmalloc((size_t)cap * sizeof *new_len) : NULL;
	float *new_w = cap ? seed_xmalloc((size_t)cap * P * sizeof *new_w) : NULL;
	for (int m = 0; m < M; m++) {
		const int64_t *row = g->genome + (size_t)m * (size_t)L;
		int n = 0;
		while (n < L && row[n] >= 0)
			n++;
		refs[m] = (genome_ref){row, n, m};
	}
	qsort(refs, (size_t)M, sizeof *refs, cmp_parent);
	bool have_init = false;
	int64_t init_key = -1;
	const genome_ref *last = NULL;
	int rc = 0;
	for (int i = 0; i < M && !rc; i++) {
		const genome_ref *r = &refs[i];
		float *out = p->members + (size_t)r->m * P;
		if (g->algo == SEED_EVO_RS || r->len == 1) {
			/* The initialisation itself (RS ignores further keys). */
			if (!have_init || init_key != r->row[0]) {
				build_init(p, r->row[0], init);
				have_init = true;
				init_key = r->row[0];
			}
			memcpy(out, init, P * sizeof *out);
			continue;
		}
		int k = r->len - 1; /* the parent's keys: row[0..k) */
		if (!last || cmp_parent(&(genome_ref){last->row, last->len, 0},
		                        &(genome_ref){r->row, r->len, 0}) != 0) {
			int j = cache_find(p, r->row, k);
			if (j >= 0) {
				memcpy(parent, p->cache_w + (size_t)j * P, P * sizeof *parent);
			} else if (k >= 2 && (j = cache_find(p, r->row, k - 1)) >= 0) {
				memcpy(parent, p->cache_w + (size_t)j * P, P * sizeof *parent);
				rc = seed_evo_add_noise(noise, p->model, g->rank, (uint64_t)r->row[k - 1],
				                        sigma, parent, err);
			} else {
				if (!have_init || init_key != r->row[0]) {
					build_init(p, r->row[0], init);
					have_init = true;
					init_key = r->row[0];
				}
				memcpy(parent, init, P * sizeof *parent);
				for (int q = 1; q < k && !rc; q++)
					rc = seed_evo_add_noise(noise, p->model, g->rank, (uint64_t)r->row[q],
					                        sigma, parent, err);
			}
			if (!rc && nnew < cap) {
				int64_t *cg = new_g + (size_t)nnew * (size_t)L;
				for (int q = 0; q < L; q++)
					cg[q] = q < k ? r->row[q] : -1;
				new_len[nnew] = k;
				memcpy(new_w + (size_t)nnew * P, parent, P * sizeof *new_w);
				nnew++;
			}
			last = r;
		}
		memcpy(out, parent, P * sizeof *out);
		if (!rc)
			rc = seed_evo_add_noise(noise, p->model, g->rank, (uint64_t)r->row[k], sigma, out,
			                        err);
	}
	if (!rc && keep && nnew > 0) {
		free(p->cache_g);
		free(p->cache_len);
		free(p->cache_w);
		p->cache_g = new_g;
		p->cache_len = new_len;
		p->cache_w = new_w;
		p->ncache = nnew;
		p->cache_L = L;
		p->cache_seed = g->noise_seed;
		p->cache_size = g->noise_size;
		p->cache_sigma = g->sigma;
		p->cache_rank = g->rank;
	} else {
		free(new_g);
		free(new_len);
		free(new_w);
	}
	free(refs);
	free(init);
	free(parent);
	return rc;
}

int seed_population_set(seed_population *p, const seed_noise *noise, const seed_evo_gen *g, seed_err *err)
{
	drop_generation(p);
	int rc = seed_evo_gen_check(g, err);
	if (rc)
		return rc;
	if (g->num_params != p->P)
		return seed_err_set(err, -EINVAL,
		                    "population: the generation has %zu parameters, the model %zu",
		                    g->num_params, p->P);
	if (seed_noise_seed(noise) != g->noise_seed || seed_noise_size(noise) != g->noise_size)
		return seed_err_set(
		    err, -EINVAL,
		    "population: the noise table is (seed %llu, size %lld), the generation wants (seed "
		    "%llu, size %lld)",
		    (unsigned long long)seed_noise_seed(noise), (long long)seed_noise_size(noise),
		    (unsigned long long)g->noise_seed, (long long)g->noise_size);
	int M = g->members;
	p->start = seed_xgrow(p->start, &p->cap_members, (size_t)M + 1, sizeof *p->start);
	p->noise = noise;
	p->rank = g->rank;
	p->lowrank = g->algo == SEED_EVO_ES && g->rank > 0;
	if (!p->lowrank) {
		size_t need = (size_t)M * p->P;
		if (need > p->cap_floats) {
			/* Exactly what is needed, not seed_xgrow's doubling: the
			 * members' weights may take gigabytes, and none are kept. */
			free(p->members);
			p->members = seed_xmalloc(need * sizeof(float));
			p->cap_floats = need;
		}
		rc = g->algo == SEED_EVO_ES ? build_es(p, noise, g, err) : build_genomes(p, noise, g, err);
		if (rc) {
			drop_generation(p);
			return rc;
		}
		p->M = M;
		p->ready = true;
		return 0;
	}
	/* Low rank: the centre into the model, each member's non-2-D tensors,
	 * its noise slice and coefficient. */
	int r = g->rank;
	int64_t Q = seed_evo_noise_len(p->model, r);
	if (Q > seed_noise_size(noise))
		return seed_err_set(
		    err, -EINVAL, "population: a noise slice of %lld floats is longer than the table (%lld)",
		    (long long)Q, (long long)seed_noise_size(noise));
	lowrank_layout(p, r);
	p->msmall = seed_xmalloc((size_t)M * p->small * sizeof(float));
	p->mlr = seed_xmalloc((size_t)M * p->lrsize * sizeof(float));
	p->T = seed_xmalloc((size_t)p->max_rows * (size_t)r * sizeof(float));
	const seed_model *mo = p->model;
	memcpy(mo->params, g->centre, p->P * sizeof(float));
	float inv = (float)(1.0 / sqrt((double)r));
	for (int m = 0; m < M; m++) {
		int64_t at = seed_noise_index(noise, (uint64_t)g->genome[m], Q);
		const float *slice = seed_noise_data(noise) + at, *src = slice;
		float scale = g->sign[m] * (float)g->sigma, c = scale * inv;
		float *ms = p->msmall + (size_t)m * p->small;
		/* As seed_evo_add_noise: centre + scale * eps for full slices. */
		for (int t = 0; t < mo->ntensors; t++) {
			const seed_model_param *tp = &mo->tensors[t];
			if (tp->rank == 2) {
				src += (tp->shape[0] + tp->shape[1]) * r;
				continue;
			}
			float *o = ms + p->small_of[t];
			const float *cen = g->centre + tp->offset;
			for (size_t i = 0; i < tp->numel; i++)
				o[i] = cen[i] + scale * src[i];
			src += tp->numel;
		}
		/* B^T and c A^T of each 2-D tensor in a linear layer, laid out
		 * for the kernels (contiguous rows of n_in, and of the tensor's
		 * rows). */
		float *blk = p->mlr + (size_t)m * p->lrsize;
		for (int i = 0; i < mo->nlayers; i++) {
			const pop_layer *q = &p->pl[i];
			int n_in = mo->layers[i].n_in;
			for (int sgi = 0; sgi < q->nseg; sgi++) {
				const lr_seg *sg = &q->seg[sgi];
				const float *A = slice + sg->pos_a, *B = slice + sg->pos_b;
				float *bt = blk + sg->bt, *a_t = blk + sg->at;
				for (int k = 0; k < r; k++) {
					for (int j = 0; j < n_in; j++)
						bt[(size_t)k * n_in + j] = B[(size_t)j * r + k];
					for (int o = 0; o < sg->rows; o++)
						a_t[(size_t)k * sg->rows + o] = c * A[(size_t)o * r + k];
				}
			}
		}
	}
	p->M = M;
	p->ready = true;
	return 0;
}

/* Whether a linear layer goes to the kernels rather than BLAS (cpu.c's
 * linear_direct, the same rule). */
static bool linear_direct(const seed_population *p, const layer *L)
{
	return p->k->linear_fast && L->n_in >= 256 && (size_t)L->n_in * L->n_out <= ((size_t)1 << 18);
}

/* y (n, n_out) = x (n, n_in) w^T + b (b NULL: no bias), then max(y, 0)
 * with relu. */
static void linear(const seed_population *p, const layer *L, int n, const float *x, const float *w,
                   const float *b, float *y, bool relu)
{
	if (linear_direct(p, L)) {
		(relu ? p->k->linear_fwd_relu : p->k->linear_fwd)(
		    (size_t)n, (size_t)L->n_in, (size_t)L->n_out, x, w, b ? b : p->zeros, y);
		return;
	}
	seed_blas_sgemm(false, true, n, L->n_out, L->n_in, 1.0f, x, L->n_in, w, L->n_in, 0.0f, y, L->n_out);
	if (b)
		p->k->bias_add((size_t)n, (size_t)L->n_out, b, y);
	if (relu)
		p->k->relu_fwd((size_t)n * (size_t)L->n_out, y, y);
}

static void scale_apply(const layer *L, size_t n, const float *x, float *y)
{
	if (L->nscale == 1) {
		for (size_t e = 0; e < n; e++)
			y[e] = x[e] * L->scale[0];
		return;
	}
	size_t d = (size_t)L->nscale;
	for (size_t e = 0; e < n; e += d)
		for (size_t j = 0; j < d; j++)
			y[e + j] = x[e + j] * L->scale[j];
}

/* The member's weight and bias of layer i (full rank: its parameters; low
 * rank: its stored non-2-D tensors, for conv2d). */
static const float *member_w(const seed_population *p, int i, int m)
{
	if (p->lowrank)
		return p->msmall + (size_t)m * p->small + p->pl[i].w_small;
	return p->members + (size_t)m * p->P + p->pl[i].w_off;
}

static const float *member_b(const seed_population *p, int i, int m)
{
	if (p->lowrank)
		return p->msmall + (size_t)m * p->small + p->pl[i].b_small;
	return p->members + (size_t)m * p->P + p->pl[i].b_off;
}

/* Low rank: y (the n rows of member m, n_out) += b_m + c_m (x B) A^T per
 * 2-D tensor of the layer: T = x B by the kernels (B^T is a weight of r
 * outputs), then T (c A^T) added onto the tensor's columns of y by the
 * kernels too (a product of shared dimension r). */
static void lowrank_correct(seed_population *p, int i, int m, int n, const float *x, float *y)
{
	const layer *L = &p->model->layers[i];
	const pop_layer *q = &p->pl[i];
	int r = p->rank, nout = L->n_out;
	const float *blk = p->mlr + (size_t)m * p->lrsize;
	p->k->bias_add((size_t)n, (size_t)nout, member_b(p, i, m), y);
	for (int s = 0; s < q->nseg; s++) {
		const lr_seg *sg = &q->seg[s];
		p->k->linear_fwd((size_t)n, (size_t)L->n_in, (size_t)r, x, blk + sg->bt, p->zeros, p->T);
		p->k->matmul_acc((size_t)n, (size_t)r, (size_t)sg->rows, p->T, blk + sg->at, y + sg->row0,
		                 (size_t)nout);
	}
}

/* Whether layer i computes the relu after it too (as cpu.c fuses it): a
 * conv2d, or a full-rank linear layer, followed by a relu.  (A low-rank
 * linear layer's relu must wait for the corrections.) */
static bool fuses_relu(const seed_population *p, int i)
{
	const seed_model *m = p->model;
	return i + 1 < m->nlayers && m->layers[i + 1].kind == L_RELU &&
	       (m->layers[i].kind == L_CONV2D || (m->layers[i].kind == L_LINEAR && !p->lowrank));
}

/* Layer i over the n sorted rows of x into y (relu: with the relu after it,
 * fuses_relu). */
static void layer_forward(seed_population *p, int i, int n, const float *x, float *y, bool relu)
{
	const layer *L = &p->model->layers[i];
	size_t total = (size_t)n * L->numel_out;
	const int *st = p->start;
	switch (L->kind) {
	case L_LINEAR:
		if (p->lowrank) {
			linear(p, L, n, x, L->w, NULL, y, false); /* the members' biases come after */
			for (int m = 0; m < p->M; m++)
				if (st[m + 1] > st[m])
					lowrank_correct(p, i, m, st[m + 1] - st[m],
					                x + (size_t)st[m] * L->n_in,
					                y + (size_t)st[m] * L->n_out);
			break;
		}
		for (int m = 0; m < p->M; m++)
			if (st[m + 1] > st[m])
				linear(p, L, st[m + 1] - st[m], x + (size_t)st[m] * L->n_in,
				       member_w(p, i, m), member_b(p, i, m), y + (size_t)st[m] * L->n_out,
				       relu);
		break;
	case L_CONV2D: {
		int kk = L->k * L->k * L->C, Fp = nnk_fpad(p->k, L->F);
		for (int m = 0; m < p->M; m++) {
			if (st[m + 1] == st[m])
				continue;
			const float *w = member_w(p, i, m);
			for (int f = 0; f < L->F; f++)
				for (int j = 0; j < kk; j++)
					p->wt[(size_t)j * Fp + f] = w[(size_t)f * kk + j];
			(relu ? p->k->conv_fwd_relu : p->k->conv_fwd)(
			    &p->pl[i].conv, st[m + 1] - st[m], x + (size_t)st[m] * L->numel_in, p->wt,
			    member_b(p, i, m), y + (size_t)st[m] * L->numel_out);
		}
		break;
	}
	case L_RELU:
		p->k->relu_fwd(total, x, y);
		break;
	case L_TANH:
		p->k->tanh_fwd(total, x, y);
		break;
	case L_SCALE:
		scale_apply(L, total, x, y);
		break;
	case L_FLATTEN:
		break; /* never called: rows are flat already */
	}
}

int seed_population_forward(seed_population *p, int rows, const void *obs, const int32_t *member,
                            float *logits, seed_err *err)
{
	if (!p->ready)
		return seed_err_set(err, -EINVAL, "population: no generation set");
	if (rows < 1 || rows > p->max_rows)
		return seed_err_set(err, -EINVAL, "population: %d rows is not in [1, %d]", rows, p->max_rows);
	int M = p->M;
	int *st = p->start;
	memset(st, 0, ((size_t)M + 1) * sizeof *st);
	for (int r = 0; r < rows; r++) {
		if (member[r] < 0 || member[r] >= M)
			return seed_err_set(err, -EINVAL, "population: row %d: member %d is not in [0, %d)",
			                    r, (int)member[r], M);
		st[member[r] + 1]++;
	}
	for (int m = 0; m < M; m++)
		st[m + 1] += st[m];
	/* Counting sort, stable: start[m] is advanced while placing, then
	 * restored by walking back one member. */
	for (int r = 0; r < rows; r++)
		p->perm[st[member[r]]++] = r;
	for (int m = M; m > 0; m--)
		st[m] = st[m - 1];
	st[0] = 0;
	/* Gather as f32. */
	float *x = p->buf[0];
	const seed_model *mo = p->model;
	for (int i = 0; i < rows; i++) {
		const unsigned char *src = (const unsigned char *)obs + (size_t)p->perm[i] * p->obs_bytes;
		float *dst = x + (size_t)i * p->obs_numel;
		if (mo->obs_dtype == SEED_DTYPE_U8)
			p->k->u8_to_f32(p->obs_numel, src, dst);
		else
			memcpy(dst, src, p->obs_bytes);
	}
	int cur = 0;
	for (int i = 0; i < mo->nlayers; i++) {
		if (mo->layers[i].kind == L_FLATTEN)
			continue; /* a row's values are already in HWC order */
		bool relu = fuses_relu(p, i);
		layer_forward(p, i, rows, p->buf[cur], p->buf[1 - cur], relu);
		cur = 1 - cur;
		i += relu;
	}
	/* The head's A + 1 outputs: logits, or Q values for a dueling head. */
	const float *h = p->buf[cur];
	int A = p->A;
	for (int i = 0; i < rows; i++) {
		const float *hr = h + (size_t)i * (size_t)(A + 1);
		float *lr = logits + (size_t)p->perm[i] * (size_t)A;
		if (mo->head == SEED_HEAD_DUELING) {
			/* Q = V + Adv - mean Adv, as cpu.c computes it. */
			double sum = 0;
			for (int a = 0; a < A; a++)
				sum += hr[a];
			float base = (float)((double)hr[A] - sum / A);
			for (int a = 0; a < A; a++)
				lr[a] = hr[a] + base;
		} else {
			memcpy(lr, hr, (size_t)A * sizeof *lr);
		}
	}
	return 0;
}

int seed_population_act(seed_population *p, int rows, const void *obs, const int32_t *member, bool greedy,
                        seed_rng *rng, int32_t *actions, seed_err *err)
{
	int rc = seed_population_forward(p, rows, obs, member, p->head, err);
	if (rc)
		return rc;
	if (greedy || !rng)
		seed_policy_argmax(rows, p->A, p->head, actions);
	else
		seed_policy_sample(rows, p->A, p->head, rng, actions);
	return 0;
}
