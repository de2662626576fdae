/* popnet.c: the forward pass of a population of networks, each member's
 * weights its own (seed/popnet.h).
 *
 * The layers are those of a seed_model (model.c's description: the torso,
 * then the fused head of head_out outputs), computed here layer by layer on
 * rows sorted by member, because the weights differ per member: cpu.c's
 * forward runs one set of parameters over every row.  The model itself
 * serves as the layout, as the scratch that the members' builder (lib/evo's
 * population.c) builds in, and for the low-rank centre.
 *
 * Rows are sorted by member with a counting sort (perm[i] is the row at
 * sorted position i; a member's rows are contiguous, members in order),
 * gathered into the first activation buffer as f32, normalised with the
 * popnet's observation statistics when the model has "obs_norm" (model_
 * layout.c's model_obs_norm_apply, the loop seed_model_forward runs, given
 * the popnet's mean and var instead of the slab's), run through the layers
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
 *     weight (the head holds two: policy/advantage and value; one, the
 *     policy, when a critic torso has the value), with A and B
 *     from the member's slice, y[columns of the tensor] += c_m (x B) A^T,
 *     c_m = scale_m / sqrt(r): T = x B by the kernels (B^T laid out as the
 *     weight of an r-output layer), then T (c_m A^T) added onto those
 *     columns by the kernels' matmul_acc (both laid out once per
 *     generation, seed_popnet_lowrank_member);
 *   conv2d: per member group with the member's weight (full rank: its
 *     parameters; low rank: its stored copy of the non-2-D tensors),
 *     transposed for the kernels once per group;
 *   relu, tanh, scale, flatten: on all rows at once.
 *
 * It lives in nn because it reads the model's private layer map and calls
 * the kernels through nn's internal headers; it knows nothing of genomes,
 * keys or noise tables: lib/evo's population.c turns a generation into the
 * members' weights (full rank) or slices (low rank) it is given.
 */
#include "seed/popnet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "nn_kernels.h"
#include "seed/blas.h"
#include "seed/buf.h"
#include "seed/policy.h"

/* A 2-D parameter tensor inside a linear layer's weight, for the low-rank
 * correction: rows [row0, row0 + rows) of the layer's outputs, A at
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

struct seed_popnet {
	seed_model *model; /* layout, scratch, the centre in low rank */
	const nnk_ops *k;
	int max_rows, A;
	size_t P, obs_numel, obs_bytes, widest;
	pop_layer *pl; /* [model->nlayers] */
	/* "obs_norm": the statistics every member normalises with (D each,
	 * seed_popnet_obs_norm), not the obs_norm.* tensors of any slab;
	 * NULL without "obs_norm". */
	float *norm_mean, *norm_var;
	/* The members. */
	bool ready, lowrank;
	int M, rank;
	float *members;    /* full rank: (M, P) */
	size_t cap_floats; /* floats members holds (kept between generations) */
	size_t small;      /* low rank: floats of the non-2-D tensors */
	size_t *small_of;  /* low rank: [ntensors] offset in the small vector, or SIZE_MAX for 2-D */
	float *msmall;     /* low rank: (M, small) each member's non-2-D tensors */
	size_t lrsize;     /* low rank: floats of a member's block of B^T and c A^T */
	float *mlr;        /* low rank: (M, lrsize) those blocks, c = scale / sqrt(r) */
	float *T;          /* low rank: (max_rows, r) x B for a group */
	/* Work buffers for max_rows rows. */
	int32_t *perm; /* (max_rows) row at sorted position */
	int *start;    /* (M + 1) first sorted position of each member */
	size_t cap_members;
	float *buf[2]; /* (max_rows, widest) */
	float *wt;     /* conv2d weight transposed (k k C, Fp) */
	float *head;   /* (max_rows, A) logits in sorted order */
	float *zeros;  /* (widest) a zero bias for the kernels where none is wanted */
};

int seed_popnet_new(seed_popnet **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
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
	seed_popnet *p = seed_xcalloc(1, sizeof *p);
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
	if (m->norm.on) {
		p->norm_mean = seed_xmalloc((size_t)m->norm.D * sizeof *p->norm_mean);
		p->norm_var = seed_xmalloc((size_t)m->norm.D * sizeof *p->norm_var);
		seed_popnet_obs_norm(p, 0, NULL, NULL, NULL);
	}
	*out = p;
	return 0;
}

void seed_popnet_drop(seed_popnet *p)
{
	free(p->msmall);
	free(p->mlr);
	free(p->T);
	p->msmall = p->mlr = p->T = NULL;
	p->ready = false;
	p->M = 0;
}

void seed_popnet_free(seed_popnet **pp)
{
	if (!pp || !*pp)
		return;
	seed_popnet *p = *pp;
	seed_popnet_drop(p);
	free(p->members);
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
	free(p->norm_mean);
	free(p->norm_var);
	free(p);
	*pp = NULL;
}

seed_model *seed_popnet_model(seed_popnet *p)
{
	return p->model;
}

size_t seed_popnet_obs_bytes(const seed_popnet *p)
{
	return p->obs_bytes;
}

size_t seed_popnet_num_params(const seed_popnet *p)
{
	return p->P;
}

int seed_popnet_num_actions(const seed_popnet *p)
{
	return p->A;
}

int seed_popnet_obs_norm(seed_popnet *p, int64_t D, const float *mean, const float *var, seed_err *err)
{
	int want = seed_model_obs_norm_dim(p->model);
	if (D < 0)
		return seed_err_set(err, -EINVAL, "population: observation statistics of %lld features",
		                    (long long)D);
	if ((D > 0) != (mean != NULL) || (D > 0) != (var != NULL))
		return seed_err_set(err, -EINVAL,
		                    "population: observation statistics of %lld features with mean %s and "
		                    "var %s (both for D > 0, neither for D 0)",
		                    (long long)D, mean ? "given" : "NULL", var ? "given" : "NULL");
	if (D == 0) {
		/* The identity: mean 0, var 1 (then only eps moves the values). */
		for (int j = 0; j < want; j++) {
			p->norm_mean[j] = 0.0f;
			p->norm_var[j] = 1.0f;
		}
		return 0;
	}
	if (want == 0)
		return seed_err_set(err, -EINVAL,
		                    "population: observation statistics of %lld features for a model "
		                    "without \"obs_norm\"",
		                    (long long)D);
	if (D != want)
		return seed_err_set(err, -EINVAL,
		                    "population: observation statistics of %lld features, the model's "
		                    "\"obs_norm\" has D = %d",
		                    (long long)D, want);
	for (int64_t j = 0; j < D; j++) {
		if (!isfinite(mean[j]))
			return seed_err_set(err, -EINVAL, "population: obs_norm mean[%lld] is %g, not finite",
			                    (long long)j, (double)mean[j]);
		if (!(isfinite(var[j]) && var[j] >= 0))
			return seed_err_set(err, -EINVAL,
			                    "population: obs_norm var[%lld] is %g, expected finite and >= 0",
			                    (long long)j, (double)var[j]);
	}
	memcpy(p->norm_mean, mean, (size_t)D * sizeof *mean);
	memcpy(p->norm_var, var, (size_t)D * sizeof *var);
	return 0;
}

/* Forget the members and make room for M of them. */
static void begin(seed_popnet *p, int M)
{
	seed_popnet_drop(p);
	p->start = seed_xgrow(p->start, &p->cap_members, (size_t)M + 1, sizeof *p->start);
	p->M = M;
}

float *seed_popnet_full(seed_popnet *p, int M)
{
	begin(p, M);
	p->lowrank = false;
	p->rank = 0;
	size_t need = (size_t)M * p->P;
	if (need > p->cap_floats) {
		/* Exactly what is needed, not seed_xgrow's doubling: the
		 * members' weights may take gigabytes, and none are kept. */
		free(p->members);
		p->members = seed_xmalloc(need * sizeof(float));
		p->cap_floats = need;
	}
	return p->members;
}

/* Low rank: where each tensor's slice and stored copy live, and each
 * linear layer's 2-D tensors. */
static void lowrank_layout(seed_popnet *p, int r)
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

void seed_popnet_lowrank(seed_popnet *p, int M, int r, const float *centre)
{
	begin(p, M);
	p->lowrank = true;
	p->rank = r;
	lowrank_layout(p, r);
	p->msmall = seed_xmalloc((size_t)M * p->small * sizeof(float));
	p->mlr = seed_xmalloc((size_t)M * p->lrsize * sizeof(float));
	p->T = seed_xmalloc((size_t)p->max_rows * (size_t)r * sizeof(float));
	memcpy(p->model->params, centre, p->P * sizeof(float));
}

void seed_popnet_lowrank_member(seed_popnet *p, int m, const float *slice, float scale)
{
	const seed_model *mo = p->model;
	int r = p->rank;
	float inv = (float)(1.0 / sqrt((double)r)), c = scale * inv;
	const float *src = slice;
	float *ms = p->msmall + (size_t)m * p->small;
	/* Each non-2-D tensor: centre + scale * its slice, in full. */
	for (int t = 0; t < mo->ntensors; t++) {
		const seed_model_param *tp = &mo->tensors[t];
		if (tp->rank == 2) {
			src += (tp->shape[0] + tp->shape[1]) * r;
			continue;
		}
		float *o = ms + p->small_of[t];
		const float *cen = mo->params + tp->offset;
		for (size_t i = 0; i < tp->numel; i++)
			o[i] = cen[i] + scale * src[i];
		src += tp->numel;
	}
	/* B^T and c A^T of each 2-D tensor in a linear layer, laid out for
	 * the kernels (contiguous rows of n_in, and of the tensor's rows). */
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

void seed_popnet_ready(seed_popnet *p)
{
	p->ready = true;
}

/* Whether a linear layer goes to the kernels rather than BLAS (cpu.c's
 * linear_direct, the same rule). */
static bool linear_direct(const seed_popnet *p, const layer *L)
{
	return p->k->linear_fast && L->n_in >= 256 && (size_t)L->n_in * L->n_out <= ((size_t)1 << 18);
}

/* y (n, n_out) = x (n, n_in) w^T + b (b NULL: no bias), then max(y, 0)
 * with relu. */
static void linear(const seed_popnet *p, const layer *L, int n, const float *x, const float *w,
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
static const float *member_w(const seed_popnet *p, int i, int m)
{
	if (p->lowrank)
		return p->msmall + (size_t)m * p->small + p->pl[i].w_small;
	return p->members + (size_t)m * p->P + p->pl[i].w_off;
}

static const float *member_b(const seed_popnet *p, int i, int m)
{
	if (p->lowrank)
		return p->msmall + (size_t)m * p->small + p->pl[i].b_small;
	return p->members + (size_t)m * p->P + p->pl[i].b_off;
}

/* Low rank: y (the n rows of member m, n_out) += b_m + c_m (x B) A^T per
 * 2-D tensor of the layer: T = x B by the kernels (B^T is a weight of r
 * outputs), then T (c A^T) added onto the tensor's columns of y by the
 * kernels too (a product of shared dimension r). */
static void lowrank_correct(seed_popnet *p, int i, int m, int n, const float *x, float *y)
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
static bool fuses_relu(const seed_popnet *p, int i)
{
	const seed_model *m = p->model;
	return i + 1 < m->nlayers && m->layers[i + 1].kind == L_RELU &&
	       (m->layers[i].kind == L_CONV2D || (m->layers[i].kind == L_LINEAR && !p->lowrank));
}

/* Layer i over the n sorted rows of x into y (relu: with the relu after it,
 * fuses_relu). */
static void layer_forward(seed_popnet *p, int i, int n, const float *x, float *y, bool relu)
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

int seed_popnet_forward(seed_popnet *p, int rows, const void *obs, const int32_t *member, float *logits,
                        seed_err *err)
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
	/* Normalised as seed_model_forward does it, with the popnet's
	 * statistics (the members' obs_norm.* tensors are not read). */
	if (mo->norm.on)
		model_obs_norm_apply(&mo->norm, p->norm_mean, p->norm_var, (size_t)rows * p->obs_numel, x);
	int cur = 0;
	for (int i = 0; i < mo->nlayers; i++) {
		if (mo->layers[i].kind == L_FLATTEN)
			continue; /* a row's values are already in HWC order */
		bool relu = fuses_relu(p, i);
		layer_forward(p, i, rows, p->buf[cur], p->buf[1 - cur], relu);
		cur = 1 - cur;
		i += relu;
	}
	/* The head's outputs: logits, Q values for a dueling head, or a
	 * Gaussian's means (its first A; the log-stds and the value, which
	 * a critic torso would compute, are not needed to act). */
	const float *h = p->buf[cur];
	int A = p->A, w = head_out(mo);
	for (int i = 0; i < rows; i++) {
		const float *hr = h + (size_t)i * (size_t)w;
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

int seed_popnet_act(seed_popnet *p, int rows, const void *obs, const int32_t *member, bool greedy,
                    seed_rng *rng, int32_t *actions, seed_err *err)
{
	if (p->model->policy.kind != SEED_POLICY_CATEGORICAL)
		return seed_err_set(err, -EINVAL,
		                    "population: a gaussian policy's actions are real numbers: take its "
		                    "means from seed_popnet_forward");
	int rc = seed_popnet_forward(p, rows, obs, member, p->head, err);
	if (rc)
		return rc;
	if (greedy || !rng)
		seed_policy_argmax(rows, p->A, p->head, actions);
	else
		seed_policy_sample(rows, p->A, p->head, rng, actions);
	return 0;
}
