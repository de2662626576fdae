/* nn.c: actor-critic models: JSON description, parameters, forward, backward.
 *
 * Layout (llm.c style): one allocation of parameters and one of gradients,
 * carved per tensor (see seed/nn.h for the order); one buffer of activations
 * per layer, sized for max_batch rows, kept from forward for backward.
 * The policy and value heads are one linear layer with A+1 outputs (their
 * weights are adjacent in the slab), so inference does one matrix product
 * for both.
 *
 * Shapes in comments are per batch: (B, ...) with B rows.  Matrix products
 * go to BLAS (seed_blas_sgemm); element-wise work and the convolution's
 * forward and weight gradient to nn_kernels (direct, SIMD: faster than
 * im2col + sgemm for these narrow shapes); the convolution's input gradient
 * (needed only when it is not the first layer) is sgemm + col2im.
 */
#include "seed/nn.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_kernels.h"
#include "seed/blas.h"
#include "seed/buf.h"

enum layer_kind { L_LINEAR, L_CONV2D, L_RELU, L_TANH, L_FLATTEN };
static const char *const kind_names[] = {"linear", "conv2d", "relu", "tanh", "flatten"};
enum init_kind { INIT_ORTHOGONAL, INIT_PYTORCH };

typedef struct layer {
	enum layer_kind kind;
	int rank_in, rank_out; /* per-row shapes */
	int64_t shape_in[4], shape_out[4];
	size_t numel_in, numel_out;
	/* linear: n_in -> n_out; conv2d: (H, W, C) -> (OH, OW, F) with k x k */
	int n_in, n_out;
	int H, W, C, F, k, OH, OW;
	float gain;     /* orthogonal init gain of the weight */
	float *w, *b;   /* linear (n_out, n_in), (n_out); conv2d (F, k, k, C), (F) */
	float *dw, *db; /* gradients, same shapes */
	float *out;     /* (B, numel_out); flatten: the input itself */
	nnk_conv conv;  /* conv2d: the shapes, for the kernels */
} layer;

struct seed_model {
	seed_dtype obs_dtype;
	int obs_rank;
	int64_t obs_shape[4];
	size_t obs_numel;
	int A, max_batch;
	int last_B; /* rows of the last forward; 0 before the first */
	enum init_kind init;
	int nlayers; /* the torso's layers, then the fused head */
	layer *layers;
	float *params, *grads; /* (nparams) each */
	size_t nparams;
	seed_model_param *tensors;
	int ntensors;
	char *names;    /* the tensors' names, back to back */
	float *input;   /* (B, obs_numel) the observations as f32 */
	float *gbuf[2]; /* (B, max numel) ping-pong gradients for backward */
	float *dcol;    /* (B * OH * OW, k * k * C) for conv2d input gradients */
	float *wt;      /* (k * k * C, Fp) a conv2d weight transposed for the kernels */
	float *head;    /* (B, A + 1) gradient of the fused head's output */
	const nnk_ops *k;
};

/* ---- JSON -------------------------------------------------------------- */

static int bad(seed_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(seed_err *err, const char *fmt, ...)
{
	if (err) {
		char msg[sizeof err->msg];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		seed_err_set(err, 0, "model: %s", msg);
	}
	return -SEED_EOPTION;
}

static void shape_str(char *buf, size_t len, int rank, const int64_t *shape)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* A positive integer member `key` of layer i, at most max. */
static int get_count(const json_t *obj, int i, const char *type, const char *key, long long max, int *out,
                     seed_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (!v)
		return bad(err, "torso[%d] (%s): key \"%s\" is missing", i, type, key);
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
		return bad(err, "torso[%d] (%s): key \"%s\" must be an integer in 1..%lld", i, type, key,
		           max);
	*out = (int)json_integer_value(v);
	return 0;
}

/* Only the keys in `allowed` (NULL-terminated) and "type". */
static int check_keys(const json_t *obj, int i, const char *type, const char *const *allowed, seed_err *err)
{
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		(void)v;
		int ok = strcmp(key, "type") == 0;
		for (int j = 0; allowed[j] && !ok; j++)
			ok = strcmp(key, allowed[j]) == 0;
		if (!ok)
			return bad(err, "torso[%d] (%s): unknown key \"%s\"", i, type, key);
	}
	return 0;
}

/* Parse torso layer i into L, given its input shape (already in L). */
static int parse_layer(const json_t *obj, int i, layer *L, seed_err *err)
{
	char shp[96];
	if (!json_is_object(obj))
		return bad(err, "torso[%d]: must be an object like {\"type\": \"linear\", \"out\": 64}", i);
	const json_t *t = json_object_get(obj, "type");
	if (!t)
		return bad(err, "torso[%d]: key \"type\" is missing", i);
	const char *type = json_string_value(t);
	int kind = -1;
	for (int j = 0; type && j < (int)(sizeof kind_names / sizeof kind_names[0]); j++)
		if (strcmp(type, kind_names[j]) == 0)
			kind = j;
	if (kind < 0)
		return bad(err, "torso[%d]: key \"type\" must be one of linear, conv2d, relu, tanh, flatten",
		           i);
	L->kind = (enum layer_kind)kind;
	shape_str(shp, sizeof shp, L->rank_in, L->shape_in);
	int rc;
	switch (L->kind) {
	case L_LINEAR: {
		static const char *const keys[] = {"out", NULL};
		if ((rc = check_keys(obj, i, type, keys, err)) < 0)
			return rc;
		if ((rc = get_count(obj, i, type, "out", 1 << 20, &L->n_out, err)) < 0)
			return rc;
		if (L->rank_in != 1)
			return bad(err,
			           "torso[%d] (linear): input has shape %s: put a flatten layer before it", i,
			           shp);
		L->n_in = (int)L->shape_in[0];
		L->rank_out = 1;
		L->shape_out[0] = L->n_out;
		break;
	}
	case L_CONV2D: {
		static const char *const keys[] = {"filters", "kernel", NULL};
		if ((rc = check_keys(obj, i, type, keys, err)) < 0)
			return rc;
		if (L->rank_in != 3)
			return bad(err, "torso[%d] (conv2d): input has shape %s, not [H,W,C]", i, shp);
		L->H = (int)L->shape_in[0];
		L->W = (int)L->shape_in[1];
		L->C = (int)L->shape_in[2];
		if ((rc = get_count(obj, i, type, "filters", 1 << 16, &L->F, err)) < 0)
			return rc;
		if ((rc = get_count(obj, i, type, "kernel", L->H < L->W ? L->H : L->W, &L->k, err)) < 0)
			return rc;
		L->OH = L->H - L->k + 1;
		L->OW = L->W - L->k + 1;
		L->rank_out = 3;
		L->shape_out[0] = L->OH;
		L->shape_out[1] = L->OW;
		L->shape_out[2] = L->F;
		break;
	}
	case L_RELU:
	case L_TANH:
	case L_FLATTEN: {
		static const char *const keys[] = {NULL};
		if ((rc = check_keys(obj, i, type, keys, err)) < 0)
			return rc;
		if (L->kind == L_FLATTEN) {
			L->rank_out = 1;
			L->shape_out[0] = (int64_t)L->numel_in;
		} else {
			L->rank_out = L->rank_in;
			memcpy(L->shape_out, L->shape_in, sizeof L->shape_out);
		}
		break;
	}
	}
	L->numel_out = 1;
	for (int d = 0; d < L->rank_out; d++)
		L->numel_out *= (size_t)L->shape_out[d];
	if (L->numel_out > (size_t)1 << 28)
		return bad(err, "torso[%d] (%s): output of %zu values per row is too large", i, type,
		           L->numel_out);
	return 0;
}

/* ---- parameters -------------------------------------------------------- */

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

void seed_model_init(seed_model *m, seed_rng *rng)
{
	for (int i = 0; i < m->nlayers; i++) {
		layer *L = &m->layers[i];
		if (i == m->nlayers - 1) {
			/* The heads are separate tensors with their own gains. */
			init_rows(m, L->w, L->b, m->A, L->n_in, 0.01f, rng);
			init_rows(m, L->w + (size_t)m->A * L->n_in, L->b + m->A, 1, L->n_in, 1.0f, rng);
		} else if (L->kind == L_LINEAR) {
			init_rows(m, L->w, L->b, L->n_out, L->n_in, L->gain, rng);
		} else if (L->kind == L_CONV2D) {
			init_rows(m, L->w, L->b, L->F, L->k * L->k * L->C, L->gain, rng);
		}
	}
}

/* ---- construction ------------------------------------------------------ */

static float *falloc(size_t n)
{
	float *p = seed_xaligned(n * sizeof(float));
	memset(p, 0, n * sizeof(float));
	return p;
}

/* Activations and scratch for m->max_batch rows. */
static void alloc_activations(seed_model *m)
{
	size_t B = (size_t)m->max_batch, widest = m->obs_numel, dcol = 0;
	m->input = falloc(B * m->obs_numel);
	const float *prev = m->input;
	for (int i = 0; i < m->nlayers; i++) {
		layer *L = &m->layers[i];
		if (L->kind == L_FLATTEN)
			L->out = (float *)prev;
		else
			L->out = falloc(B * L->numel_out);
		if (L->kind == L_CONV2D && i > 0) {
			size_t cols = B * (size_t)L->OH * L->OW * (size_t)(L->k * L->k * L->C);
			if (cols > dcol)
				dcol = cols;
		}
		if (L->numel_out > widest)
			widest = L->numel_out;
		prev = L->out;
	}
	m->gbuf[0] = falloc(B * widest);
	m->gbuf[1] = falloc(B * widest);
	if (dcol)
		m->dcol = falloc(dcol);
	m->head = falloc(B * (size_t)m->layers[m->nlayers - 1].n_out);
}

static void free_activations(seed_model *m)
{
	for (int i = 0; i < m->nlayers; i++) {
		if (m->layers[i].kind != L_FLATTEN)
			free(m->layers[i].out);
		m->layers[i].out = NULL;
	}
	free(m->input);
	free(m->gbuf[0]);
	free(m->gbuf[1]);
	free(m->dcol);
	free(m->head);
	m->input = m->gbuf[0] = m->gbuf[1] = m->dcol = m->head = NULL;
}

void seed_model_free(seed_model **mp)
{
	if (!mp || !*mp)
		return;
	seed_model *m = *mp;
	free_activations(m);
	free(m->layers);
	free(m->params);
	free(m->grads);
	free(m->tensors);
	free(m->names);
	free(m->wt);
	free(m);
	*mp = NULL;
}

int seed_model_new(seed_model **out, const char *json, seed_dtype obs_dtype, int obs_rank,
                   const int64_t *obs_shape, int num_actions, int max_batch, seed_err *err)
{
	if (obs_dtype != SEED_DTYPE_F32 && obs_dtype != SEED_DTYPE_U8)
		return seed_err_set(err, -EINVAL, "model: observations must be f32 or u8, not %s",
		                    seed_dtype_name(obs_dtype));
	if (obs_rank < 1 || obs_rank > 4 || !obs_shape)
		return seed_err_set(err, -EINVAL, "model: observation rank %d is not in 1..4", obs_rank);
	size_t obs_numel = 1;
	for (int d = 0; d < obs_rank; d++) {
		if (obs_shape[d] < 1 || obs_shape[d] > (1 << 24))
			return seed_err_set(err, -EINVAL, "model: observation dimension %d is %lld", d,
			                    (long long)obs_shape[d]);
		obs_numel *= (size_t)obs_shape[d];
	}
	if (obs_numel > (size_t)1 << 28)
		return seed_err_set(err, -EINVAL, "model: observations of %zu values are too large",
		                    obs_numel);
	if (num_actions < 1 || num_actions > (1 << 20))
		return seed_err_set(err, -EINVAL, "model: num_actions %d is not in 1..%d", num_actions,
		                    1 << 20);
	if (max_batch < 1 || max_batch > (1 << 20))
		return seed_err_set(err, -EINVAL, "model: max_batch %d is not in 1..%d", max_batch, 1 << 20);
	if (!json)
		return seed_err_set(err, -EINVAL, "model: no description");

	json_error_t jerr;
	json_t *root = json_loads(json, 0, &jerr);
	if (!root)
		return bad(err, "not valid JSON: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
	int rc = 0;
	seed_model *m = NULL;
	seed_buf names;
	seed_buf_init(&names);
	if (!json_is_object(root)) {
		rc = bad(err, "the description must be a JSON object with a \"torso\" list");
		goto fail;
	}
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val)
	{
		if (strcmp(key, "torso") != 0 && strcmp(key, "init") != 0) {
			rc = bad(err, "unknown key \"%s\" (expected \"torso\", \"init\")", key);
			goto fail;
		}
	}
	const json_t *torso = json_object_get(root, "torso");
	if (!json_is_array(torso)) {
		rc = bad(err, "key \"torso\" must be a list of layers");
		goto fail;
	}
	enum init_kind init = INIT_ORTHOGONAL;
	const json_t *ji = json_object_get(root, "init");
	if (ji) {
		const char *s = json_string_value(ji);
		if (s && strcmp(s, "orthogonal") == 0)
			init = INIT_ORTHOGONAL;
		else if (s && strcmp(s, "pytorch") == 0)
			init = INIT_PYTORCH;
		else {
			rc = bad(err, "key \"init\" must be \"orthogonal\" or \"pytorch\"");
			goto fail;
		}
	}
	int ntorso = (int)json_array_size(torso);
	if (ntorso > 1000) {
		rc = bad(err, "key \"torso\": %d layers is too many", ntorso);
		goto fail;
	}

	m = seed_xcalloc(1, sizeof *m);
	m->obs_dtype = obs_dtype;
	m->obs_rank = obs_rank;
	memcpy(m->obs_shape, obs_shape, (size_t)obs_rank * sizeof *obs_shape);
	m->obs_numel = obs_numel;
	m->A = num_actions;
	m->max_batch = max_batch;
	m->init = init;
	m->nlayers = ntorso + 1;
	m->layers = seed_xcalloc((size_t)m->nlayers, sizeof *m->layers);
	m->k = nnk_best();

	/* Shapes, layer by layer. */
	int rank = obs_rank;
	int64_t shape[4] = {0};
	memcpy(shape, obs_shape, (size_t)obs_rank * sizeof *shape);
	size_t numel = obs_numel;
	for (int i = 0; i < m->nlayers; i++) {
		layer *L = &m->layers[i];
		L->rank_in = rank;
		memcpy(L->shape_in, shape, sizeof shape);
		L->numel_in = numel;
		L->gain = (float)sqrt(2.0);
		if (i < ntorso) {
			if ((rc = parse_layer(json_array_get(torso, (size_t)i), i, L, err)) < 0)
				goto fail;
		} else {
			if (rank != 1) {
				char shp[96];
				shape_str(shp, sizeof shp, rank, shape);
				rc =
				    bad(err,
				        "the torso's output has shape %s: end the torso with a flatten layer",
				        shp);
				goto fail;
			}
			L->kind = L_LINEAR;
			L->n_in = (int)numel;
			L->n_out = num_actions + 1;
			L->rank_out = 1;
			L->shape_out[0] = L->n_out;
			L->numel_out = (size_t)L->n_out;
		}
		rank = L->rank_out;
		memcpy(shape, L->shape_out, sizeof shape);
		numel = L->numel_out;
	}

	/* Batches of activations must fit BLAS's int dimensions. */
	size_t widest_row = obs_numel;
	for (int i = 0; i < m->nlayers; i++)
		if (m->layers[i].numel_out > widest_row)
			widest_row = m->layers[i].numel_out;
	if ((size_t)max_batch * widest_row > INT_MAX) {
		rc = seed_err_set(err, -EINVAL, "model: max_batch %d x %zu values per row is too large",
		                  max_batch, widest_row);
		goto fail;
	}

	/* Parameters: count, then carve. */
	int ntensors = 4;
	for (int i = 0; i < ntorso; i++)
		if (m->layers[i].kind == L_LINEAR || m->layers[i].kind == L_CONV2D)
			ntensors += 2;
	m->tensors = seed_xcalloc((size_t)ntensors, sizeof *m->tensors);
	size_t off = 0;
	char name[64];
	for (int i = 0; i < ntorso; i++) {
		layer *L = &m->layers[i];
		if (L->kind == L_LINEAR) {
			snprintf(name, sizeof name, "torso.%d.weight", i);
			add_tensor(m, &names, &off, name, 2, (int64_t[]){L->n_out, L->n_in});
			snprintf(name, sizeof name, "torso.%d.bias", i);
			add_tensor(m, &names, &off, name, 1, (int64_t[]){L->n_out});
		} else if (L->kind == L_CONV2D) {
			snprintf(name, sizeof name, "torso.%d.weight", i);
			add_tensor(m, &names, &off, name, 4, (int64_t[]){L->F, L->k, L->k, L->C});
			snprintf(name, sizeof name, "torso.%d.bias", i);
			add_tensor(m, &names, &off, name, 1, (int64_t[]){L->F});
		}
	}
	layer *H = &m->layers[ntorso];
	add_tensor(m, &names, &off, "policy.weight", 2, (int64_t[]){num_actions, H->n_in});
	add_tensor(m, &names, &off, "value.weight", 2, (int64_t[]){1, H->n_in});
	add_tensor(m, &names, &off, "policy.bias", 1, (int64_t[]){num_actions});
	add_tensor(m, &names, &off, "value.bias", 1, (int64_t[]){1});
	if (off > INT_MAX) {
		rc = bad(err, "%zu parameters is too many", off);
		goto fail;
	}
	m->nparams = off;
	m->params = falloc(off);
	m->grads = falloc(off);
	m->names = seed_xmalloc(names.len);
	memcpy(m->names, names.data, names.len);
	for (int t = 0; t < m->ntensors; t++)
		m->tensors[t].name = m->names + (uintptr_t)m->tensors[t].name;
	/* Point each layer at its tensors (weight then bias, in order). */
	int t = 0;
	for (int i = 0; i < ntorso; i++) {
		layer *L = &m->layers[i];
		if (L->kind == L_LINEAR || L->kind == L_CONV2D) {
			L->w = m->params + m->tensors[t].offset;
			L->dw = m->grads + m->tensors[t].offset;
			L->b = m->params + m->tensors[t + 1].offset;
			L->db = m->grads + m->tensors[t + 1].offset;
			t += 2;
		}
	}
	H->w = m->params + m->tensors[t].offset; /* policy.weight, value.weight */
	H->dw = m->grads + m->tensors[t].offset;
	H->b = m->params + m->tensors[t + 2].offset; /* policy.bias, value.bias */
	H->db = m->grads + m->tensors[t + 2].offset;

	/* The transposed convolution weights (independent of the batch). */
	size_t wt = 0;
	for (int i = 0; i < m->nlayers; i++) {
		layer *L = &m->layers[i];
		if (L->kind == L_CONV2D) {
			L->conv = (nnk_conv){L->H, L->W, L->C, L->k, L->F, L->OH, L->OW};
			size_t w = (size_t)(L->k * L->k * L->C) * (size_t)nnk_fpad(m->k, L->F);
			if (w > wt)
				wt = w;
		}
	}
	if (wt)
		m->wt = falloc(wt);
	alloc_activations(m);

	/* Last, so that a bad description fails without needing a BLAS. */
	if ((rc = seed_blas_init(err)) < 0)
		goto fail;
	seed_buf_free(&names);
	json_decref(root);
	*out = m;
	return 0;
fail:
	seed_buf_free(&names);
	seed_model_free(&m);
	json_decref(root);
	return rc;
}

int seed_model_reserve(seed_model *m, int max_batch, seed_err *err)
{
	if (max_batch <= m->max_batch)
		return 0;
	size_t widest_row = m->obs_numel;
	for (int i = 0; i < m->nlayers; i++)
		if (m->layers[i].numel_out > widest_row)
			widest_row = m->layers[i].numel_out;
	if (max_batch > (1 << 20) || (size_t)max_batch * widest_row > INT_MAX)
		return seed_err_set(err, -EINVAL, "model: max_batch %d x %zu values per row is too large",
		                    max_batch, widest_row);
	free_activations(m);
	m->max_batch = max_batch;
	m->last_B = 0;
	alloc_activations(m);
	return 0;
}

/* ---- accessors --------------------------------------------------------- */

float *seed_model_params(seed_model *m)
{
	return m->params;
}

float *seed_model_grads(seed_model *m)
{
	return m->grads;
}

size_t seed_model_num_params(const seed_model *m)
{
	return m->nparams;
}

int seed_model_num_tensors(const seed_model *m)
{
	return m->ntensors;
}

const seed_model_param *seed_model_param_at(const seed_model *m, int i)
{
	return i >= 0 && i < m->ntensors ? &m->tensors[i] : NULL;
}

const seed_model_param *seed_model_param_find(const seed_model *m, const char *name)
{
	for (int i = 0; i < m->ntensors; i++)
		if (strcmp(m->tensors[i].name, name) == 0)
			return &m->tensors[i];
	return NULL;
}

int seed_model_num_actions(const seed_model *m)
{
	return m->A;
}

int seed_model_max_batch(const seed_model *m)
{
	return m->max_batch;
}

size_t seed_model_obs_bytes(const seed_model *m)
{
	return m->obs_numel * seed_dtype_size(m->obs_dtype);
}

int seed_model_summary(const seed_model *m, char *buf, size_t len)
{
	char tmp[96];
	size_t n = 0;
#define PUT(...)                                                                                             \
	do {                                                                                                 \
		int w_ = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, __VA_ARGS__);             \
		n += (size_t)(w_ > 0 ? w_ : 0);                                                              \
	} while (0)
	shape_str(tmp, sizeof tmp, m->obs_rank, m->obs_shape);
	PUT("%s%s", seed_dtype_name(m->obs_dtype), tmp);
	for (int i = 0; i < m->nlayers - 1; i++) {
		const layer *L = &m->layers[i];
		if (L->kind == L_LINEAR)
			PUT(" linear(%d)", L->n_out);
		else if (L->kind == L_CONV2D)
			PUT(" conv2d(%d,k%d)", L->F, L->k);
		else
			PUT(" %s", kind_names[L->kind]);
	}
	PUT(" | heads %d+1 | %zu params", m->A, m->nparams);
#undef PUT
	return (int)n;
}

/* ---- forward ----------------------------------------------------------- */

/* wt (k*k*C, Fp) = w (F, k*k*C) transposed, zeros in the padding: the
 * layout the convolution kernels read (NNK_W filters in one vector). */
static void transpose_weights(const seed_model *m, const layer *L, float *wt)
{
	int kk = L->k * L->k * L->C, Fp = nnk_fpad(m->k, L->F);
	memset(wt, 0, (size_t)kk * Fp * sizeof *wt);
	for (int f = 0; f < L->F; f++)
		for (int j = 0; j < kk; j++)
			wt[(size_t)j * Fp + f] = L->w[(size_t)f * kk + j];
}

/* dx (B, H, W, C) = the sum of the patch gradients dcol (B*OH*OW, k*k*C)
 * over the patches each input is in (the adjoint of gathering patches). */
static void col2im(const layer *L, int B, const float *dcol, float *dx)
{
	size_t run = (size_t)L->k * L->C;
	memset(dx, 0, (size_t)B * L->numel_in * sizeof *dx);
	for (int b = 0; b < B; b++)
		for (int oy = 0; oy < L->OH; oy++)
			for (int ox = 0; ox < L->OW; ox++) {
				for (int ky = 0; ky < L->k; ky++) {
					float *dst = dx + (((size_t)b * L->H + oy + ky) * L->W + ox) * L->C;
					const float *src = dcol + ky * run;
					for (size_t e = 0; e < run; e++)
						dst[e] += src[e];
				}
				dcol += run * L->k;
			}
}

static void layer_forward(const seed_model *m, layer *L, int B, const float *x)
{
	size_t n = (size_t)B * L->numel_out;
	switch (L->kind) {
	case L_LINEAR:
		/* out (B, n_out) = x (B, n_in) W^T + b */
		seed_blas_sgemm(false, true, B, L->n_out, L->n_in, 1.0f, x, L->n_in, L->w, L->n_in, 0.0f,
		                L->out, L->n_out);
		m->k->bias_add((size_t)B, (size_t)L->n_out, L->b, L->out);
		break;
	case L_CONV2D:
		/* out (B, OH, OW, F) = conv(x, W) + b, directly (no patch matrix). */
		transpose_weights(m, L, m->wt);
		m->k->conv_fwd(&L->conv, B, x, m->wt, L->b, L->out);
		break;
	case L_RELU:
		m->k->relu_fwd(n, x, L->out);
		break;
	case L_TANH:
		m->k->tanh_fwd(n, x, L->out);
		break;
	case L_FLATTEN:
		break; /* out is x */
	}
}

int seed_model_forward(seed_model *m, int B, const void *obs, float *logits, float *values)
{
	if (B < 1 || B > m->max_batch || !obs)
		return -EINVAL;
	if (m->obs_dtype == SEED_DTYPE_U8)
		m->k->u8_to_f32((size_t)B * m->obs_numel, obs, m->input);
	else
		memcpy(m->input, obs, (size_t)B * m->obs_numel * sizeof(float));
	const float *x = m->input;
	for (int i = 0; i < m->nlayers; i++) {
		layer_forward(m, &m->layers[i], B, x);
		x = m->layers[i].out;
	}
	/* x is the fused head (B, A+1): logits then value. */
	int A = m->A;
	for (int b = 0; b < B; b++) {
		if (logits)
			memcpy(logits + (size_t)b * A, x + (size_t)b * (A + 1), (size_t)A * sizeof *logits);
		if (values)
			values[b] = x[(size_t)b * (A + 1) + A];
	}
	m->last_B = B;
	return 0;
}

/* ---- backward ---------------------------------------------------------- */

/* Given dy (B, numel_out) and the layer's input x, add parameter gradients
 * and, when dx is not NULL, write dL/dx (B, numel_in) to dx (which may be dy
 * for the element-wise layers). */
static void layer_backward(const seed_model *m, layer *L, int B, const float *x, const float *dy, float *dx)
{
	size_t n = (size_t)B * L->numel_out;
	switch (L->kind) {
	case L_LINEAR:
		/* dW (n_out, n_in) += dy^T x; db += sum_b dy; dx (B, n_in) = dy W */
		seed_blas_sgemm(true, false, L->n_out, L->n_in, B, 1.0f, dy, L->n_out, x, L->n_in, 1.0f,
		                L->dw, L->n_in);
		m->k->col_sum((size_t)B, (size_t)L->n_out, dy, L->db);
		if (dx)
			seed_blas_sgemm(false, false, B, L->n_in, L->n_out, 1.0f, dy, L->n_out, L->w, L->n_in,
			                0.0f, dx, L->n_in);
		break;
	case L_CONV2D: {
		int rows = B * L->OH * L->OW, kk = L->k * L->k * L->C, Fp = nnk_fpad(m->k, L->F);
		/* dW (F, kk) += sum over pixels of dy (outer) patch, computed
		 * transposed in m->wt; db += column sums of dy (rows, F). */
		memset(m->wt, 0, (size_t)kk * Fp * sizeof *m->wt);
		m->k->conv_dw(&L->conv, B, x, dy, m->wt);
		for (int f = 0; f < L->F; f++)
			for (int j = 0; j < kk; j++)
				L->dw[(size_t)f * kk + j] += m->wt[(size_t)j * Fp + f];
		m->k->col_sum((size_t)rows, (size_t)L->F, dy, L->db);
		if (dx) {
			/* dcol (rows, kk) = dy (rows, F) W (F, kk), then scatter. */
			seed_blas_sgemm(false, false, rows, kk, L->F, 1.0f, dy, L->F, L->w, kk, 0.0f, m->dcol,
			                kk);
			col2im(L, B, m->dcol, dx);
		}
		break;
	}
	case L_RELU:
		if (dx)
			m->k->relu_bwd(n, L->out, dy, dx);
		break;
	case L_TANH:
		if (dx)
			m->k->tanh_bwd(n, L->out, dy, dx);
		break;
	case L_FLATTEN:
		if (dx && dx != dy)
			memcpy(dx, dy, n * sizeof *dx);
		break;
	}
}

int seed_model_backward(seed_model *m, int B, const float *dlogits, const float *dvalues)
{
	if (B < 1 || B != m->last_B)
		return -EINVAL;
	int A = m->A;
	float *g = m->head; /* (B, A+1) */
	for (int b = 0; b < B; b++) {
		float *row = g + (size_t)b * (A + 1);
		if (dlogits)
			memcpy(row, dlogits + (size_t)b * A, (size_t)A * sizeof *row);
		else
			memset(row, 0, (size_t)A * sizeof *row);
		row[A] = dvalues ? dvalues[b] : 0.0f;
	}
	for (int i = m->nlayers - 1; i >= 0; i--) {
		layer *L = &m->layers[i];
		const float *x = i > 0 ? m->layers[i - 1].out : m->input;
		float *dx = NULL; /* the first layer's input needs no gradient */
		if (i > 0) {
			/* Element-wise layers work in place; the others write to
			 * the gradient buffer that does not hold dy. */
			if (L->kind == L_RELU || L->kind == L_TANH || L->kind == L_FLATTEN)
				dx = g;
			else
				dx = g == m->gbuf[0] ? m->gbuf[1] : m->gbuf[0];
		}
		layer_backward(m, L, B, x, g, dx);
		g = dx;
	}
	return 0;
}

void seed_model_zero_grad(seed_model *m)
{
	memset(m->grads, 0, m->nparams * sizeof *m->grads);
}

/* ---- copies ------------------------------------------------------------ */

int seed_model_copy_params(seed_model *dst, const seed_model *src)
{
	if (dst->nparams != src->nparams || dst->ntensors != src->ntensors)
		return -EINVAL;
	for (int i = 0; i < src->ntensors; i++) {
		const seed_model_param *a = &src->tensors[i], *b = &dst->tensors[i];
		if (strcmp(a->name, b->name) != 0 || a->rank != b->rank ||
		    memcmp(a->shape, b->shape, (size_t)a->rank * sizeof a->shape[0]) != 0)
			return -EINVAL;
	}
	if (dst != src)
		memcpy(dst->params, src->params, src->nparams * sizeof *src->params);
	return 0;
}

int seed_model_load_params(seed_model *m, const void *data, size_t nbytes)
{
	if (nbytes != m->nparams * sizeof(float) || !data)
		return -EINVAL;
	memcpy(m->params, data, nbytes);
	return 0;
}
