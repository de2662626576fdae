/* model.c: a model's description: JSON, layers and shapes, parameters.
 *
 * This is the description half of lib/nn (cpu.c computes): it parses the
 * JSON into layers with their shapes, lays the parameters out in one slab
 * and the gradients in another (llm.c style: one allocation each, carved per
 * tensor in the order seed/nn.h gives), initialises them, and copies and
 * loads them.  The policy and value heads are one linear layer with A+1
 * outputs (their weights are adjacent in the slab), so inference does one
 * matrix product for both; a dueling head is the same layer (advantage and
 * value streams), its outputs combined into Q values by the backend.  Everything sized by the batch belongs
 * to the backend (model_internal.h), so that a CUDA twin replaces only that.
 * The public forward and backward functions are here too: they check their
 * arguments and call the model's backend (m->ops), chosen by
 * seed_model_set_device; the host's copy of the slabs is kept coherent
 * with a device's (model_internal.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_internal.h"
#include "seed/buf.h"
#include "seed/lstm.h"

static const char *const kind_names[] = {"linear", "conv2d", "relu", "tanh", "flatten", "scale"};

/* The most values a scale layer's "by" may hold. */
#define SCALE_MAX 65536

/* The largest conv2d kernel and stride. */
#define CONV_MAX 4096

/* The most units a core may have (its recurrent kernel is H x 4H). */
#define CORE_MAX_UNITS 4096

/* Bring a slab's current values to the host (the gradients' when grads),
 * from a backend with a copy of its own; the copy stays current.  m is
 * const to its callers: the values do not change, only where they are. */
static void host_slab(const seed_model *cm, bool grads)
{
	seed_model *m = (seed_model *)cm;
	enum slab_at *at = grads ? &m->grads_at : &m->params_at;
	if (m->ops->pull && *at == SLAB_DEVICE) {
		m->ops->pull(m, grads);
		*at = SLAB_SYNCED;
	}
}

/* An optimizer state bound to the device back to its host array, before
 * the device's copy goes (a new backend, a move). */
static void host_state(seed_model *m)
{
	if (m->ostate && m->ostate_at == SLAB_DEVICE && m->ops->pull_state)
		m->ops->pull_state(m);
	m->ostate_at = SLAB_HOST;
}

/* The host's copy of a slab is (or may become) the newer one. */
static void host_writes(seed_model *m, bool grads)
{
	if (m->ops->pull)
		*(grads ? &m->grads_at : &m->params_at) = SLAB_HOST;
}

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

/* A conv2d's "padding": absent or "valid" (none), "same", or the rows and
 * columns of zeros on every side, 0..k-1 (with k or more, some outputs
 * would see only zeros).  Sets L->pad and L->same; L->k is known. */
static int parse_padding(const json_t *obj, int i, layer *L, seed_err *err)
{
	const json_t *v = json_object_get(obj, "padding");
	const char *s = json_string_value(v);
	L->pad = 0;
	L->same = false;
	if (!v || (s && strcmp(s, "valid") == 0))
		return 0;
	if (s && strcmp(s, "same") == 0) {
		L->same = true;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= L->k)
		return bad(err,
		           "torso[%d] (conv2d): key \"padding\" must be \"valid\", \"same\" or an integer "
		           "in 0..%d (less than the kernel, %d)",
		           i, L->k - 1, L->k);
	L->pad = (int)json_integer_value(v);
	return 0;
}

/* Only the keys in `allowed` (NULL-terminated) and "type". */
static int check_keys(const json_t *obj, int i, const char *type, const char *const *allowed, seed_err *err)
{
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
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
		return bad(
		    err, "torso[%d]: key \"type\" must be one of linear, conv2d, relu, tanh, flatten, scale",
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
		static const char *const keys[] = {"filters", "kernel", "stride", "padding", NULL};
		if ((rc = check_keys(obj, i, type, keys, err)) < 0)
			return rc;
		if (L->rank_in != 3)
			return bad(err, "torso[%d] (conv2d): input has shape %s, not [H,W,C]", i, shp);
		L->H = (int)L->shape_in[0];
		L->W = (int)L->shape_in[1];
		L->C = (int)L->shape_in[2];
		if ((rc = get_count(obj, i, type, "filters", 1 << 16, &L->F, err)) < 0)
			return rc;
		if ((rc = get_count(obj, i, type, "kernel", CONV_MAX, &L->k, err)) < 0)
			return rc;
		L->S = 1; /* the keys' defaults: the layer as it was before them */
		if (json_object_get(obj, "stride") &&
		    (rc = get_count(obj, i, type, "stride", CONV_MAX, &L->S, err)) < 0)
			return rc;
		if ((rc = parse_padding(obj, i, L, err)) < 0)
			return rc;
		if (L->same) {
			/* TensorFlow's and PyTorch's "same": ceil(H / S) outputs,
			 * the padding they need split with the odd row or column
			 * at the bottom or right. */
			L->OH = (L->H + L->S - 1) / L->S;
			L->OW = (L->W + L->S - 1) / L->S;
			int ph = (L->OH - 1) * L->S + L->k - L->H, pw = (L->OW - 1) * L->S + L->k - L->W;
			L->pt = ph > 0 ? ph / 2 : 0;
			L->pl = pw > 0 ? pw / 2 : 0;
		} else {
			long long hp = (long long)L->H + 2LL * L->pad, wp = (long long)L->W + 2LL * L->pad;
			if (L->k > hp || L->k > wp)
				return bad(err,
				           "torso[%d] (conv2d): key \"kernel\" is %d, larger than the padded "
				           "input %lldx%lld (input %s, padding %d)",
				           i, L->k, hp, wp, shp, L->pad);
			L->pt = L->pl = L->pad;
			L->OH = (int)((hp - L->k) / L->S + 1);
			L->OW = (int)((wp - L->k) / L->S + 1);
		}
		L->rank_out = 3;
		L->shape_out[0] = L->OH;
		L->shape_out[1] = L->OW;
		L->shape_out[2] = L->F;
		break;
	}
	case L_SCALE: {
		/* "by": one factor, or one per element of the last dimension
		 * (features of a vector, channels of an image). */
		static const char *const keys[] = {"by", NULL};
		if ((rc = check_keys(obj, i, type, keys, err)) < 0)
			return rc;
		const json_t *by = json_object_get(obj, "by");
		int64_t last = L->rank_in > 0 ? L->shape_in[L->rank_in - 1] : 1;
		size_t n = json_is_array(by) ? json_array_size(by) : 1;
		if (!by || !(json_is_number(by) || (json_is_array(by) && (n == 1 || (int64_t)n == last))))
			return bad(err,
			           "torso[%d] (scale): key \"by\" must be a number or an array of 1 or %lld "
			           "numbers (the input's last dimension; input shape %s)",
			           i, (long long)last, shp);
		if (n > SCALE_MAX)
			return bad(err, "torso[%d] (scale): key \"by\" has %zu values, more than %d", i, n,
			           SCALE_MAX);
		L->scale = seed_xmalloc(n * sizeof *L->scale);
		L->nscale = (int)n;
		for (size_t j = 0; j < n; j++) {
			const json_t *e = json_is_array(by) ? json_array_get(by, j) : by;
			double x = json_number_value(e);
			if (!json_is_number(e) || !isfinite(x) || fabs(x) > 1e30)
				return bad(
				    err,
				    "torso[%d] (scale): \"by\"[%zu] must be a finite number of magnitude at "
				    "most 1e30",
				    i, j);
			L->scale[j] = (float)x;
		}
		L->rank_out = L->rank_in;
		memcpy(L->shape_out, L->shape_in, sizeof L->shape_out);
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

/* A boolean member `key` of the core, false when absent. */
static int get_flag(const json_t *obj, const char *key, bool *out, seed_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (v && !json_is_boolean(v))
		return bad(err, "core: key \"%s\" must be true or false", key);
	*out = v && json_is_true(v);
	return 0;
}

/* Parse the "core" object into c, on a torso output of D values per row. */
static int parse_core(const json_t *obj, int D, int A, model_core *c, seed_err *err)
{
	if (!json_is_object(obj))
		return bad(err, "key \"core\" must be an object like {\"type\": \"lstm\", \"units\": 64}");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		if (strcmp(key, "type") != 0 && strcmp(key, "units") != 0 &&
		    strcmp(key, "prev_reward") != 0 && strcmp(key, "prev_action") != 0)
			return bad(err,
			           "core: unknown key \"%s\" (expected \"type\", \"units\", \"prev_reward\", "
			           "\"prev_action\")",
			           key);
	}
	const json_t *t = json_object_get(obj, "type");
	if (!t)
		return bad(err, "core: key \"type\" is missing");
	if (!json_is_string(t) || strcmp(json_string_value(t), "lstm") != 0)
		return bad(err, "core: key \"type\" must be \"lstm\"");
	const json_t *u = json_object_get(obj, "units");
	if (!u)
		return bad(err, "core (lstm): key \"units\" is missing");
	if (!json_is_integer(u) || json_integer_value(u) < 1 || json_integer_value(u) > CORE_MAX_UNITS)
		return bad(err, "core (lstm): key \"units\" must be an integer in 1..%d", CORE_MAX_UNITS);
	int rc;
	if ((rc = get_flag(obj, "prev_reward", &c->prev_reward, err)) < 0 ||
	    (rc = get_flag(obj, "prev_action", &c->prev_action, err)) < 0)
		return rc;
	c->H = (int)json_integer_value(u);
	c->D = D;
	c->I = D + (c->prev_reward ? 1 : 0) + (c->prev_action ? A : 0);
	return 0;
}

/* The widest row any batch buffer holds, in floats: observations, layer
 * outputs, and a core's inputs and gates (4H). */
static size_t widest_row(const seed_model *m)
{
	size_t w = m->obs_numel;
	for (int i = 0; i < m->nlayers; i++)
		if (m->layers[i].numel_out > w)
			w = m->layers[i].numel_out;
	if (m->core.H) {
		if ((size_t)m->core.I > w)
			w = (size_t)m->core.I;
		if ((size_t)m->core.H * 4 > w)
			w = (size_t)m->core.H * 4;
	}
	return w;
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
	host_slab(m, false); /* only what init_rows writes is written */
	m->params_at = m->ops->pull ? SLAB_HOST : SLAB_SYNCED;
	for (int i = 0; i < m->nlayers; i++) {
		layer *L = &m->layers[i];
		if (i == m->nlayers - 1) {
			/* The core, between the torso and the heads: Keras's
			 * LSTMCell initialisation whatever "init" says, as
			 * SEED's agents have it. */
			if (m->core.H)
				seed_lstm_init(m->core.I, m->core.H, m->core.w, m->core.u, m->core.b, rng);
			/* The heads are separate tensors with their own gains:
			 * a policy's 0.01 starts near the uniform policy; a
			 * dueling head's advantages estimate returns, as the
			 * value does, and get the value's gain 1. */
			float again = m->head == SEED_HEAD_DUELING ? 1.0f : 0.01f;
			init_rows(m, L->w, L->b, m->A, L->n_in, again, rng);
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

void seed_model_free(seed_model **mp)
{
	if (!mp || !*mp)
		return;
	seed_model *m = *mp;
	if (m->ops)
		m->ops->destroy(&m->be);
	for (int i = 0; m->layers && i < m->nlayers; i++)
		free(m->layers[i].scale);
	free(m->layers);
	free(m->params);
	free(m->grads);
	free(m->tensors);
	free(m->names);
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
		if (strcmp(key, "torso") != 0 && strcmp(key, "init") != 0 && strcmp(key, "head") != 0 &&
		    strcmp(key, "core") != 0) {
			rc = bad(err, "unknown key \"%s\" (expected \"torso\", \"core\", \"init\", \"head\")",
			         key);
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
	seed_model_head head = SEED_HEAD_ACTOR_CRITIC;
	const json_t *jh = json_object_get(root, "head");
	if (jh) {
		const char *s = json_string_value(jh);
		if (s && strcmp(s, "actor-critic") == 0)
			head = SEED_HEAD_ACTOR_CRITIC;
		else if (s && strcmp(s, "dueling") == 0)
			head = SEED_HEAD_DUELING;
		else {
			rc = bad(err, "key \"head\" must be \"actor-critic\" or \"dueling\"");
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
	m->head = head;
	m->nlayers = ntorso + 1;
	m->layers = seed_xcalloc((size_t)m->nlayers, sizeof *m->layers);

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
			const json_t *jc = json_object_get(root, "core");
			if (jc) {
				if ((rc = parse_core(jc, (int)numel, num_actions, &m->core, err)) < 0)
					goto fail;
				/* The heads read the core's output h. */
				numel = (size_t)m->core.H;
				L->shape_in[0] = m->core.H;
				L->numel_in = numel;
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
	size_t widest = widest_row(m);
	if ((size_t)max_batch * widest > INT_MAX) {
		rc = seed_err_set(err, -EINVAL, "model: max_batch %d x %zu values per row is too large",
		                  max_batch, widest);
		goto fail;
	}

	/* Parameters: count, then carve. */
	int ntensors = 4;
	for (int i = 0; i < ntorso; i++)
		if (m->layers[i].kind == L_LINEAR || m->layers[i].kind == L_CONV2D)
			ntensors += 2;
	if (m->core.H)
		ntensors += 3;
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
	model_core *c = &m->core;
	if (c->H) {
		/* Keras's names and layout: kernel (I, 4H), recurrent_kernel
		 * (H, 4H), bias (4H), gates in the order i, f, c, o. */
		add_tensor(m, &names, &off, "core.kernel", 2, (int64_t[]){c->I, 4 * (int64_t)c->H});
		add_tensor(m, &names, &off, "core.recurrent_kernel", 2, (int64_t[]){c->H, 4 * (int64_t)c->H});
		add_tensor(m, &names, &off, "core.bias", 1, (int64_t[]){4 * (int64_t)c->H});
	}
	layer *H = &m->layers[ntorso];
	/* A dueling head's advantage stream takes the policy's place. */
	const char *aname = head == SEED_HEAD_DUELING ? "advantage" : "policy";
	snprintf(name, sizeof name, "%s.weight", aname);
	add_tensor(m, &names, &off, name, 2, (int64_t[]){num_actions, H->n_in});
	add_tensor(m, &names, &off, "value.weight", 2, (int64_t[]){1, H->n_in});
	snprintf(name, sizeof name, "%s.bias", aname);
	add_tensor(m, &names, &off, name, 1, (int64_t[]){num_actions});
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
	if (c->H) {
		c->w = m->params + m->tensors[t].offset;
		c->dw = m->grads + m->tensors[t].offset;
		c->u = m->params + m->tensors[t + 1].offset;
		c->du = m->grads + m->tensors[t + 1].offset;
		c->b = m->params + m->tensors[t + 2].offset;
		c->db = m->grads + m->tensors[t + 2].offset;
		t += 3;
	}
	H->w = m->params + m->tensors[t].offset; /* policy (or advantage) then value weights */
	H->dw = m->grads + m->tensors[t].offset;
	H->b = m->params + m->tensors[t + 2].offset; /* policy.bias, value.bias */
	H->db = m->grads + m->tensors[t + 2].offset;

	/* Last, so that a bad description fails without needing a BLAS. */
	m->ops = &nn_cpu_ops;
	if ((rc = m->ops->create(&m->be, m, err)) < 0)
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
	size_t widest = widest_row(m);
	if (max_batch > (1 << 20) || (size_t)max_batch * widest > INT_MAX)
		return seed_err_set(err, -EINVAL, "model: max_batch %d x %zu values per row is too large",
		                    max_batch, widest);
	/* The new state first, so that a failure leaves m as it was. */
	int old = m->max_batch;
	m->max_batch = max_batch;
	nn_backend *be;
	host_slab(m, false);
	host_slab(m, true);
	host_state(m);
	int rc = m->ops->create(&be, m, err);
	if (rc < 0) {
		m->max_batch = old;
		return rc;
	}
	m->ops->destroy(&m->be);
	m->be = be;
	m->last_B = 0;
	/* A new device copy: the host's is the current one. */
	host_writes(m, false);
	host_writes(m, true);
	return 0;
}

/* ---- accessors --------------------------------------------------------- */

float *seed_model_params(seed_model *m)
{
	host_slab(m, false);
	host_writes(m, false);
	return m->params;
}

const float *seed_model_params_read(const seed_model *m)
{
	host_slab(m, false);
	return m->params;
}

float *seed_model_grads(seed_model *m)
{
	host_slab(m, true);
	host_writes(m, true);
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

seed_model_head seed_model_head_kind(const seed_model *m)
{
	return m->head;
}

int seed_model_state_floats(const seed_model *m)
{
	return 2 * m->core.H;
}

const char *seed_model_head_name(seed_model_head head)
{
	return head == SEED_HEAD_DUELING ? "dueling" : "actor-critic";
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
		else if (L->kind == L_CONV2D) {
			/* The keys at their defaults print as before them. */
			PUT(" conv2d(%d,k%d", L->F, L->k);
			if (L->S != 1)
				PUT(",s%d", L->S);
			if (L->same)
				PUT(",same");
			else if (L->pad)
				PUT(",p%d", L->pad);
			PUT(")");
		} else
			PUT(" %s", kind_names[L->kind]);
	}
	if (m->core.H)
		PUT(" | lstm(%d)%s%s", m->core.H, m->core.prev_reward ? " +reward" : "",
		    m->core.prev_action ? " +action" : "");
	if (m->head == SEED_HEAD_DUELING)
		PUT(" | dueling %d+1 -> Q %d | %zu params", m->A, m->A, m->nparams);
	else
		PUT(" | heads %d+1 | %zu params", m->A, m->nparams);
#undef PUT
	return (int)n;
}

void seed_model_zero_grad(seed_model *m)
{
	memset(m->grads, 0, m->nparams * sizeof *m->grads);
	if (m->ops->zero_grad) {
		m->ops->zero_grad(m);
		m->grads_at = SLAB_SYNCED;
	}
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
	if (dst != src) {
		host_slab(src, false);
		memcpy(dst->params, src->params, src->nparams * sizeof *src->params);
		host_writes(dst, false);
	}
	return 0;
}

int seed_model_load_params(seed_model *m, const void *data, size_t nbytes)
{
	if (nbytes != m->nparams * sizeof(float) || !data)
		return -EINVAL;
	memcpy(m->params, data, nbytes);
	host_writes(m, false);
	return 0;
}

/* ---- forward and backward: checks, then the backend -------------------- */

/* Whether s is a batch of sequences forward can run. */
static bool seq_ok(const seed_model *m, const seed_model_seq *s)
{
	return s && s->obs && s->T >= 1 && s->B >= 1 && (int64_t)s->T * s->B <= m->max_batch;
}

static int forward(seed_model *m, const seed_model_seq *s, float *logits, float *values, float *q)
{
	m->last_B = 0;
	int rc = m->ops->forward(m, s, logits, values, q);
	if (rc < 0)
		return rc;
	m->last_B = s->T * s->B;
	m->last_T = s->T;
	return 0;
}

int seed_model_forward(seed_model *m, int B, const void *obs, float *logits, float *values)
{
	seed_model_seq s = {.T = 1, .B = B, .obs = obs};
	return seed_model_forward_seq(m, &s, logits, values);
}

int seed_model_forward_q(seed_model *m, int B, const void *obs, float *q)
{
	seed_model_seq s = {.T = 1, .B = B, .obs = obs};
	return seed_model_forward_seq_q(m, &s, q);
}

int seed_model_forward_seq(seed_model *m, const seed_model_seq *s, float *logits, float *values)
{
	if (!seq_ok(m, s) || m->head != SEED_HEAD_ACTOR_CRITIC)
		return -EINVAL;
	return forward(m, s, logits, values, NULL);
}

int seed_model_forward_seq_q(seed_model *m, const seed_model_seq *s, float *q)
{
	if (!seq_ok(m, s) || !q || m->head != SEED_HEAD_DUELING)
		return -EINVAL;
	return forward(m, s, NULL, NULL, q);
}

/* Whether a plain backward of B rows follows the last forward: the same
 * rows and, with a core, one step (a sequence needs the _seq backward). */
static bool rows_ok(const seed_model *m, int B)
{
	return B >= 1 && B == m->last_B && (!m->core.H || m->last_T == 1);
}

int seed_model_backward(seed_model *m, int B, const float *dlogits, const float *dvalues)
{
	if (!rows_ok(m, B) || m->head != SEED_HEAD_ACTOR_CRITIC)
		return -EINVAL;
	return m->ops->backward(m, dlogits, dvalues, NULL);
}

int seed_model_backward_seq(seed_model *m, const float *dlogits, const float *dvalues)
{
	if (m->last_B < 1 || m->head != SEED_HEAD_ACTOR_CRITIC)
		return -EINVAL;
	return m->ops->backward(m, dlogits, dvalues, NULL);
}

int seed_model_backward_q(seed_model *m, int B, const float *dq)
{
	if (!rows_ok(m, B) || m->head != SEED_HEAD_DUELING)
		return -EINVAL;
	return m->ops->backward(m, NULL, NULL, dq);
}

int seed_model_backward_seq_q(seed_model *m, const float *dq)
{
	if (m->last_B < 1 || m->head != SEED_HEAD_DUELING)
		return -EINVAL;
	return m->ops->backward(m, NULL, NULL, dq);
}

/* ---- the optimizer on the device ---------------------------------------- */

int seed_model_device_update(seed_model *m, const seed_model_update *u, float *state)
{
	if (!m->ops->update)
		return -ENOTSUP;
	if (state != m->ostate || u->nslots != m->ostate_slots) {
		/* Another optimizer's state: the one bound before is dropped,
		 * not copied back (its owner may be gone). */
		m->ostate = state;
		m->ostate_slots = u->nslots;
		m->ostate_at = SLAB_HOST;
	}
	return m->ops->update(m, u);
}

void seed_model_device_state(seed_model *m, float *state)
{
	if (state == m->ostate)
		host_state(m);
}

int seed_model_device_grad_sumsq(seed_model *m, double *sumsq)
{
	return m->ops->grad_sumsq ? m->ops->grad_sumsq(m, sumsq) : -ENOTSUP;
}

int seed_model_device_scale_grads(seed_model *m, float s)
{
	return m->ops->scale_grads ? m->ops->scale_grads(m, s) : -ENOTSUP;
}

/* ---- devices ----------------------------------------------------------- */

#ifdef HAVE_CUDA
/* The CUDA backend's module, loaded once (never unloaded: the CUDA runtime
 * does not like being unloaded): $SEED_CUDA_MODULE if set, else
 * seed-cuda.so beside libseed (the build tree's lib/.libs) or in its seed/
 * folder (installed: $(pkglibdir)).  Loading it loads the CUDA runtime and
 * cuBLAS, which programs that never ask for a GPU do not pay for. */
static struct {
	pthread_once_t once;
	const nn_backend_ops *ops;
	nn_cuda_probe_fn *probe;
	char why[400];
} cuda_mod = {.once = PTHREAD_ONCE_INIT};

static void cuda_load_once(void)
{
	char paths[3][1024];
	int n = 0;
	const char *env = getenv("SEED_CUDA_MODULE");
	Dl_info info;
	if (env && *env)
		snprintf(paths[n++], sizeof paths[0], "%s", env);
	else if (dladdr((void *)seed_model_set_device, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		int dir = slash ? (int)(slash - info.dli_fname) : 1;
		const char *base = slash ? info.dli_fname : ".";
		snprintf(paths[n++], sizeof paths[0], "%.*s/seed-cuda.so", dir, base);
		snprintf(paths[n++], sizeof paths[0], "%.*s/seed/seed-cuda.so", dir, base);
	}
	void *h = NULL;
	for (int i = 0; i < n && !h; i++) {
		h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!h && (i == 0 || access(paths[i], F_OK) == 0)) {
			/* Say why the first (or an existing) module failed. */
			const char *e = dlerror();
			snprintf(cuda_mod.why, sizeof cuda_mod.why, "loading the CUDA backend: %s",
			         e ? e : paths[i]);
		}
	}
	if (!h) {
		if (!cuda_mod.why[0])
			snprintf(cuda_mod.why, sizeof cuda_mod.why,
			         "the CUDA backend (seed-cuda.so) is not beside libseed nor in its seed/ "
			         "folder (set SEED_CUDA_MODULE)");
		return;
	}
	cuda_mod.ops = (const nn_backend_ops *)dlsym(h, "nn_cuda_ops");
	cuda_mod.probe = (nn_cuda_probe_fn *)(uintptr_t)dlsym(h, "nn_cuda_probe");
	if (!cuda_mod.ops || !cuda_mod.probe) {
		cuda_mod.ops = NULL;
		snprintf(cuda_mod.why, sizeof cuda_mod.why,
		         "loading the CUDA backend: the module lacks nn_cuda_ops or nn_cuda_probe");
	}
}

/* Whether the module is loaded (else cuda_mod.why says why not). */
static bool cuda_load(const nn_backend_ops **ops, nn_cuda_probe_fn **probe)
{
	pthread_once(&cuda_mod.once, cuda_load_once);
	if (!cuda_mod.ops)
		return false;
	*ops = cuda_mod.ops;
	*probe = cuda_mod.probe;
	return true;
}
#endif

/* Parse "cpu", "cuda" or "cuda:N" into ops and *ordinal. */
static int parse_device(const char *device, const nn_backend_ops **ops, int *ordinal, seed_err *err)
{
	*ordinal = 0;
	if (!device || strcmp(device, "cpu") == 0) {
		*ops = &nn_cpu_ops;
		return 0;
	}
	if (strncmp(device, "cuda", 4) == 0 && (device[4] == 0 || device[4] == ':')) {
		if (device[4] == ':') {
			const char *p = device + 5;
			long n = 0;
			if (!*p)
				goto bad;
			for (; *p; p++) {
				if (*p < '0' || *p > '9' || n > 100000)
					goto bad;
				n = n * 10 + (*p - '0');
			}
			*ordinal = (int)n;
		}
#ifdef HAVE_CUDA
		nn_cuda_probe_fn *probe;
		if (!cuda_load(ops, &probe))
			return seed_err_set(err, -ENODEV, "device '%s': %s", device, cuda_mod.why);
		return probe(*ordinal, device, err);
#else
		return seed_err_set(err, -ENODEV,
		                    "device '%s': this build of Seed has no CUDA backend (configure "
		                    "--enable-cuda with the CUDA Toolkit installed)",
		                    device);
#endif
	}
bad:
	return seed_err_set(err, -EINVAL, "device '%s': must be cpu, cuda or cuda:N (N a device number)",
	                    device);
}

int seed_device_check(const char *device, seed_err *err)
{
	const nn_backend_ops *ops;
	int ordinal;
	return parse_device(device, &ops, &ordinal, err);
}

int seed_model_set_device(seed_model *m, const char *device, seed_err *err)
{
	const nn_backend_ops *ops;
	int ordinal, rc = parse_device(device, &ops, &ordinal, err);
	if (rc < 0)
		return rc;
	if (ops == m->ops && ordinal == m->ordinal)
		return 0;
	/* The current values to the host, then the new backend, which takes
	 * them from there. */
	host_slab(m, false);
	host_slab(m, true);
	host_state(m);
	int old = m->ordinal;
	m->ordinal = ordinal;
	nn_backend *be;
	if ((rc = ops->create(&be, m, err)) < 0) {
		m->ordinal = old;
		return rc;
	}
	m->ops->destroy(&m->be);
	m->be = be;
	m->ops = ops;
	snprintf(m->device, sizeof m->device, "%s:%d", ops->name, ordinal);
	m->last_B = 0;
	m->params_at = m->grads_at = ops->pull ? SLAB_HOST : SLAB_SYNCED;
	return 0;
}

const char *seed_model_device(const seed_model *m)
{
	return m->ops == &nn_cpu_ops ? "cpu" : m->device;
}
