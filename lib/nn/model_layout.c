/* model_layout.c: a model's parameters: their layout and initialisation.
 *
 * Once model_parse.c has the layers and their shapes, the parameters are
 * laid out in one slab and the gradients in another (llm.c style: one
 * allocation each, carved per tensor in the order seed/nn.h gives: the
 * observation statistics when "obs_norm" asks for them (first, so that
 * the trainable parameters are one range after them), the torso's weight
 * and bias per layer with parameters, the core's kernel,
 * recurrent kernel and bias, then the heads' weights and biases, adjacent
 * so that the fused head is one matrix product), and each layer pointed at
 * its tensors.  The initialisation schemes ("init") are here too.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "seed/buf.h"
#include "seed/lstm.h"

/* Append a tensor to the table (names go to a buffer, fixed up later). */
static void add_tensor(seed_model *m, seed_buf *names, size_t *off, const char *name, int rank,
                       const int64_t *shape)
{
	seed_model_param *p = &m->tensors[m->ntensors++];
	p->name = (const char *)(uintptr_t)names->len; /* an index until names settle */
	seed_buf_append(names, name, strlen(name) + 1);
	p->rank = rank;
	p->numel = 1;
	for (int d = 0; d < rank; d++) {
		p->shape[d] = shape[d];
		p->numel *= (size_t)shape[d];
	}
	p->offset = *off;
	*off += p->numel;
}

static float *falloc(size_t n)
{
	float *p = seed_xaligned(n * sizeof(float));
	memset(p, 0, n * sizeof(float));
	return p;
}

/* The weight and bias of each linear/conv2d layer among the first n of
 * layers, named <list>.<i>.weight, <list>.<i>.bias. */
static void layout_list(seed_model *m, seed_buf *names, size_t *off, const char *list, const layer *layers,
                        int n)
{
	char name[64];
	for (int i = 0; i < n; i++) {
		const layer *L = &layers[i];
		if (L->kind != L_LINEAR && L->kind != L_CONV2D)
			continue;
		snprintf(name, sizeof name, "%s.%d.weight", list, i);
		if (L->kind == L_LINEAR)
			add_tensor(m, names, off, name, 2, (int64_t[]){L->n_out, L->n_in});
		else
			add_tensor(m, names, off, name, 4, (int64_t[]){L->F, L->k, L->k, L->C});
		snprintf(name, sizeof name, "%s.%d.bias", list, i);
		add_tensor(m, names, off, name, 1, (int64_t[]){L->kind == L_LINEAR ? L->n_out : L->F});
	}
}

/* The parametric layers among the first n of layers. */
static int count_parametric(const layer *layers, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += layers[i].kind == L_LINEAR || layers[i].kind == L_CONV2D;
	return k;
}

/* The tensors' table: the observation statistics, the torso's, the critic torso's, the core's, the
 * heads', policy.log_std (names into names, offsets into the slab); the
 * slab's length into *nparams. */
static void layout_tensors(seed_model *m, seed_buf *names, size_t *nparams)
{
	int ntorso = m->nlayers - 1, ncritic = m->ncritic ? m->ncritic - 1 : 0;
	int ntensors = 5 + 2 * count_parametric(m->layers, ntorso) + 2 * count_parametric(m->critic, ncritic);
	if (m->core.H)
		ntensors += 3;
	if (m->norm.on)
		ntensors += 3;
	m->tensors = seed_xcalloc((size_t)ntensors, sizeof *m->tensors);
	size_t off = 0;
	char name[64];
	if (m->norm.on) {
		add_tensor(m, names, &off, "obs_norm.mean", 1, (int64_t[]){m->norm.D});
		add_tensor(m, names, &off, "obs_norm.var", 1, (int64_t[]){m->norm.D});
		add_tensor(m, names, &off, "obs_norm.count", 1, (int64_t[]){1});
	}
	layout_list(m, names, &off, "torso", m->layers, ntorso);
	layout_list(m, names, &off, "critic_torso", m->critic, ncritic);
	const model_core *c = &m->core;
	if (c->H) {
		/* Keras's names and layout: kernel (I, 4H), recurrent_kernel
		 * (H, 4H), bias (4H), gates in the order i, f, c, o. */
		add_tensor(m, names, &off, "core.kernel", 2, (int64_t[]){c->I, 4 * (int64_t)c->H});
		add_tensor(m, names, &off, "core.recurrent_kernel", 2, (int64_t[]){c->H, 4 * (int64_t)c->H});
		add_tensor(m, names, &off, "core.bias", 1, (int64_t[]){4 * (int64_t)c->H});
	}
	const layer *H = &m->layers[ntorso];
	/* The value head reads the critic torso's output when there is one. */
	int vin = m->ncritic ? m->critic[m->ncritic - 1].n_in : H->n_in, Ph = m->policy.Ph;
	/* A dueling head's advantage stream takes the policy's place. */
	const char *aname = m->head == SEED_HEAD_DUELING ? "advantage" : "policy";
	snprintf(name, sizeof name, "%s.weight", aname);
	add_tensor(m, names, &off, name, 2, (int64_t[]){Ph, H->n_in});
	add_tensor(m, names, &off, "value.weight", 2, (int64_t[]){1, vin});
	snprintf(name, sizeof name, "%s.bias", aname);
	add_tensor(m, names, &off, name, 1, (int64_t[]){Ph});
	add_tensor(m, names, &off, "value.bias", 1, (int64_t[]){1});
	if (m->policy.kind == SEED_POLICY_GAUSSIAN && !m->policy.state_std)
		add_tensor(m, names, &off, "policy.log_std", 1, (int64_t[]){m->A});
	*nparams = off;
}

/* Point the first n of layers at their tensors from tensor *t on (weight
 * then bias, in order). */
static void point_list(seed_model *m, layer *layers, int n, int *t)
{
	for (int i = 0; i < n; i++) {
		layer *L = &layers[i];
		if (L->kind == L_LINEAR || L->kind == L_CONV2D) {
			L->w = m->params + m->tensors[*t].offset;
			L->dw = m->grads + m->tensors[*t].offset;
			L->b = m->params + m->tensors[*t + 1].offset;
			L->db = m->grads + m->tensors[*t + 1].offset;
			*t += 2;
		}
	}
}

/* Point each layer at its tensors (weight then bias, in order). */
static void point_layers(seed_model *m)
{
	int ntorso = m->nlayers - 1, t = 0;
	if (m->norm.on) {
		m->norm.mean = m->params + m->tensors[0].offset;
		m->norm.var = m->params + m->tensors[1].offset;
		m->norm.count = m->params + m->tensors[2].offset;
		t = 3;
	}
	point_list(m, m->layers, ntorso, &t);
	if (m->ncritic)
		point_list(m, m->critic, m->ncritic - 1, &t);
	model_core *c = &m->core;
	if (c->H) {
		c->w = m->params + m->tensors[t].offset;
		c->dw = m->grads + m->tensors[t].offset;
		c->u = m->params + m->tensors[t + 1].offset;
		c->du = m->grads + m->tensors[t + 1].offset;
		c->b = m->params + m->tensors[t + 2].offset;
		c->db = m->grads + m->tensors[t + 2].offset;
		t += 3;
	}
	layer *H = &m->layers[ntorso];
	H->w = m->params + m->tensors[t].offset; /* policy (or advantage) then value weights */
	H->dw = m->grads + m->tensors[t].offset;
	H->b = m->params + m->tensors[t + 2].offset; /* policy.bias, value.bias */
	H->db = m->grads + m->tensors[t + 2].offset;
	if (m->ncritic) {
		/* The value head is a layer of its own on the critic torso. */
		layer *V = &m->critic[m->ncritic - 1];
		V->w = m->params + m->tensors[t + 1].offset;
		V->dw = m->grads + m->tensors[t + 1].offset;
		V->b = m->params + m->tensors[t + 3].offset;
		V->db = m->grads + m->tensors[t + 3].offset;
	}
	if (m->policy.kind == SEED_POLICY_GAUSSIAN && !m->policy.state_std) {
		m->policy.log_std = m->params + m->tensors[t + 4].offset;
		m->policy.dlog_std = m->grads + m->tensors[t + 4].offset;
	}
}

int model_layout(seed_model *m, seed_err *err)
{
	seed_buf names;
	seed_buf_init(&names);
	size_t off;
	layout_tensors(m, &names, &off);
	if (off > INT_MAX) {
		seed_buf_free(&names);
		return seed_err_set(err, -SEED_EOPTION, "model: %zu parameters is too many", off);
	}
	m->nparams = off;
	m->params = falloc(off);
	m->grads = falloc(off);
	m->names = seed_xmalloc(names.len);
	memcpy(m->names, names.data, names.len);
	for (int t = 0; t < m->ntensors; t++)
		m->tensors[t].name = m->names + (uintptr_t)m->tensors[t].name;
	seed_buf_free(&names);
	point_layers(m);
	/* Statistics of zero variance would blow every observation up to the
	 * clip: they start at their initial values, not at zero. */
	model_init_obs_norm(m);
	return 0;
}

/* ---- observation normalisation ------------------------------------------ */

/* Gymnasium's RunningMeanStd (gymnasium/wrappers/utils.py) starts at mean
 * 0, var 1 and count 1e-4, so that the first update almost replaces them
 * (its weight is 1e-4 / (1e-4 + rows)) without a case for the empty
 * statistics; stored so (the float nearest 1e-4). */
void model_init_obs_norm(seed_model *m)
{
	model_obs_norm *nm = &m->norm;
	if (!nm->on)
		return;
	for (int j = 0; j < nm->D; j++) {
		nm->mean[j] = 0.0f;
		nm->var[j] = 1.0f;
	}
	nm->count[0] = 1e-4f;
}

/* Columns whose mean and standard deviation are computed once per call
 * (forward never allocates: they live on the stack). */
#define NORM_COLS 64

void model_obs_norm_apply(const model_obs_norm *nm, const float *mean, const float *var, size_t n, float *x)
{
	size_t D = (size_t)nm->D;
	double c = nm->clip, mu[NORM_COLS], sd[NORM_COLS];
	for (size_t j0 = 0; j0 < D; j0 += NORM_COLS) {
		size_t w = D - j0 < NORM_COLS ? D - j0 : NORM_COLS;
		for (size_t j = 0; j < w; j++) {
			mu[j] = mean[j0 + j];
			sd[j] = sqrt((double)var[j0 + j] + nm->eps);
		}
		for (size_t e = j0; e < n; e += D)
			for (size_t j = 0; j < w; j++) {
				double y = ((double)x[e + j] - mu[j]) / sd[j];
				/* NaN stays NaN, as numpy's clip keeps it. */
				x[e + j] = (float)(y < -c ? -c : y > c ? c : y);
			}
	}
}

/* ---- initialisation ---------------------------------------------------- */

/* Orthogonal rows x cols matrix times gain (torch.nn.init.orthogonal_):
 * a standard normal matrix, made tall by transposing if needed, then the Q
 * of its QR factorisation with R's diagonal made positive.  Modified
 * Gram-Schmidt in double, run twice per column ("twice is enough"), gives
 * that Q directly. */
static void orthogonal(float *w, int rows, int cols, float gain, seed_rng *rng)
{
	int tall = rows >= cols;
	int n = tall ? rows : cols, mcols = tall ? cols : rows;
	double *q = seed_xmalloc((size_t)n * mcols * sizeof *q); /* column-major n x mcols */
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			double z = seed_rng_normal(rng); /* row-major draw order, as PyTorch */
			if (tall)
				q[(size_t)c * n + r] = z;
			else
				q[(size_t)r * n + c] = z;
		}
	for (int j = 0; j < mcols; j++) {
		double *v = q + (size_t)j * n;
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < j; i++) {
				const double *u = q + (size_t)i * n;
				double d = 0;
				for (int e = 0; e < n; e++)
					d += u[e] * v[e];
				for (int e = 0; e < n; e++)
					v[e] -= d * u[e];
			}
		double norm = 0;
		for (int e = 0; e < n; e++)
			norm += v[e] * v[e];
		norm = sqrt(norm);
		for (int e = 0; e < n; e++)
			v[e] = norm > 0 ? v[e] / norm : 0;
	}
	for (int j = 0; j < mcols; j++)
		for (int e = 0; e < n; e++) {
			float x = (float)(gain * q[(size_t)j * n + e]);
			if (tall)
				w[(size_t)e * cols + j] = x;
			else
				w[(size_t)j * cols + e] = x;
		}
	free(q);
}

static void uniform(float *x, size_t n, double bound, seed_rng *rng)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)seed_rng_uniform(rng, -bound, bound);
}

/* Initialise a (rows, fan_in) weight and its (rows) bias. */
static void init_rows(const seed_model *m, float *w, float *b, int rows, int fan_in, float gain,
                      seed_rng *rng)
{
	if (m->init == INIT_ORTHOGONAL) {
		orthogonal(w, rows, fan_in, gain, rng);
		memset(b, 0, (size_t)rows * sizeof *b);
	} else {
		double bound = 1.0 / sqrt((double)fan_in);
		uniform(w, (size_t)rows * fan_in, bound, rng);
		uniform(b, (size_t)rows, bound, rng);
	}
}

/* The linear and conv2d layers among the first n of layers, orthogonal
 * with the torso's gain. */
static void init_list(seed_model *m, layer *layers, int n, seed_rng *rng)
{
	for (int i = 0; i < n; i++) {
		layer *L = &layers[i];
		if (L->kind == L_LINEAR)
			init_rows(m, L->w, L->b, L->n_out, L->n_in, L->gain, rng);
		else if (L->kind == L_CONV2D)
			init_rows(m, L->w, L->b, L->F, L->k * L->k * L->C, L->gain, rng);
	}
}

/* Draws in slab order: the torso, the critic torso, the core, the policy
 * (or advantages), the value. */
void model_init_layers(seed_model *m, seed_rng *rng)
{
	init_list(m, m->layers, m->nlayers - 1, rng);
	if (m->ncritic)
		init_list(m, m->critic, m->ncritic - 1, rng);
	/* The core, between the torso and the heads: Keras's LSTMCell
	 * initialisation whatever "init" says, as SEED's agents have it. */
	if (m->core.H)
		seed_lstm_init(m->core.I, m->core.H, m->core.w, m->core.u, m->core.b, rng);
	/* The heads are separate tensors with their own gains: a policy's
	 * 0.01 starts near the uniform policy (a Gaussian's means near 0); a
	 * dueling head's advantages estimate returns, as the value does, and
	 * get the value's gain 1. */
	const layer *H = &m->layers[m->nlayers - 1];
	const model_policy *p = &m->policy;
	float again = m->head == SEED_HEAD_DUELING ? 1.0f : 0.01f;
	init_rows(m, H->w, H->b, p->Ph, H->n_in, again, rng);
	const layer *V = m->ncritic ? &m->critic[m->ncritic - 1] : NULL;
	if (V)
		init_rows(m, V->w, V->b, 1, V->n_in, 1.0f, rng);
	else
		init_rows(m, H->w + (size_t)p->Ph * H->n_in, H->b + p->Ph, 1, H->n_in, 1.0f, rng);
	/* The statistics: fixed values, no draws, so that every other
	 * parameter is what it would be without "obs_norm". */
	model_init_obs_norm(m);
	/* A Gaussian's log-stds start at log_std_init: the parameter's, or
	 * ("state") the biases of the head's log-std outputs, so that every
	 * row starts with the same spread. */
	if (p->kind == SEED_POLICY_GAUSSIAN) {
		float *ls = p->state_std ? H->b + m->A : p->log_std;
		for (int i = 0; i < m->A; i++)
			ls[i] = p->log_std_init;
	}
}
