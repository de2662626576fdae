/* model.c: a model: the object, its accessors, copies, and the public
 * forward and backward.
 *
 * This is the description half of lib/nn (cpu.c computes), in three files:
 * model_parse.c reads the JSON into layers with their shapes,
 * model_layout.c lays the parameters out in one slab and the gradients in
 * another (llm.c style: one allocation each, carved per tensor in the order
 * seed/nn.h gives) and initialises them, and this file builds the object
 * from those two, copies and loads parameters.  The policy and value heads
 * are one linear layer with Ph+1 outputs (their weights are adjacent in the
 * slab), so inference does one matrix product for both (unless a critic
 * torso feeds the value head: then it is a layer of its own); a dueling head is
 * the same layer (advantage and value streams), its outputs combined into
 * Q values by the backend.  Everything sized by the batch belongs to the
 * backend (model_internal.h), so that a CUDA twin replaces only that.  The
 * public forward and backward functions are here too: they check their
 * arguments and call the model's backend (m->ops), chosen by
 * seed_model_set_device; the host's copy of the slabs is kept coherent
 * with a device's (model_internal.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_internal.h"
#include "seed/buf.h"

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

/* The widest row any batch buffer holds, in floats: observations, layer
 * outputs (the critic torso's too), and a core's inputs and gates (4H). */
static size_t widest_row(const seed_model *m)
{
	size_t w = m->obs_numel;
	for (int i = 0; i < m->nlayers; i++)
		if (m->layers[i].numel_out > w)
			w = m->layers[i].numel_out;
	for (int i = 0; i < m->ncritic; i++)
		if (m->critic[i].numel_out > w)
			w = m->critic[i].numel_out;
	if (m->core.H) {
		if ((size_t)m->core.I > w)
			w = (size_t)m->core.I;
		if ((size_t)m->core.H * 4 > w)
			w = (size_t)m->core.H * 4;
	}
	return w;
}

void seed_model_init(seed_model *m, seed_rng *rng)
{
	host_slab(m, false); /* only what the initialisation writes is written */
	m->params_at = m->ops->pull ? SLAB_HOST : SLAB_SYNCED;
	model_init_layers(m, rng);
}

/* ---- construction ------------------------------------------------------ */

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
	for (int i = 0; m->critic && i < m->ncritic; i++)
		free(m->critic[i].scale);
	free(m->critic);
	free(m->params);
	free(m->grads);
	free(m->tensors);
	free(m->names);
	free(m);
	*mp = NULL;
}

/* The arguments' checks, before the description is read. */
static int check_args(seed_dtype obs_dtype, int obs_rank, const int64_t *obs_shape, int num_actions,
                      int max_batch, const char *json, size_t *obs_numel, seed_err *err)
{
	if (obs_dtype != SEED_DTYPE_F32 && obs_dtype != SEED_DTYPE_U8)
		return seed_err_set(err, -EINVAL, "model: observations must be f32 or u8, not %s",
		                    seed_dtype_name(obs_dtype));
	if (obs_rank < 1 || obs_rank > 4 || !obs_shape)
		return seed_err_set(err, -EINVAL, "model: observation rank %d is not in 1..4", obs_rank);
	size_t n = 1;
	for (int d = 0; d < obs_rank; d++) {
		if (obs_shape[d] < 1 || obs_shape[d] > (1 << 24))
			return seed_err_set(err, -EINVAL, "model: observation dimension %d is %lld", d,
			                    (long long)obs_shape[d]);
		n *= (size_t)obs_shape[d];
	}
	if (n > (size_t)1 << 28)
		return seed_err_set(err, -EINVAL, "model: observations of %zu values are too large", n);
	if (num_actions < 1 || num_actions > (1 << 20))
		return seed_err_set(err, -EINVAL, "model: num_actions %d is not in 1..%d", num_actions,
		                    1 << 20);
	if (max_batch < 1 || max_batch > (1 << 20))
		return seed_err_set(err, -EINVAL, "model: max_batch %d is not in 1..%d", max_batch, 1 << 20);
	if (!json)
		return seed_err_set(err, -EINVAL, "model: no description");
	*obs_numel = n;
	return 0;
}

/* The description (model_parse.c), the parameters' layout
 * (model_layout.c), then the CPU backend. */
int seed_model_new(seed_model **out, const char *json, seed_dtype obs_dtype, int obs_rank,
                   const int64_t *obs_shape, int num_actions, int max_batch, seed_err *err)
{
	size_t obs_numel = 0;
	int rc = check_args(obs_dtype, obs_rank, obs_shape, num_actions, max_batch, json, &obs_numel, err);
	if (rc)
		return rc;
	seed_model *m = seed_xcalloc(1, sizeof *m);
	m->obs_dtype = obs_dtype;
	m->obs_rank = obs_rank;
	memcpy(m->obs_shape, obs_shape, (size_t)obs_rank * sizeof *obs_shape);
	m->obs_numel = obs_numel;
	m->A = num_actions;
	m->max_batch = max_batch;
	if ((rc = model_parse(m, json, err)) < 0)
		goto fail;
	/* Batches of activations must fit BLAS's int dimensions. */
	size_t widest = widest_row(m);
	if ((size_t)max_batch * widest > INT_MAX) {
		rc = seed_err_set(err, -EINVAL, "model: max_batch %d x %zu values per row is too large",
		                  max_batch, widest);
		goto fail;
	}
	if ((rc = model_layout(m, err)) < 0)
		goto fail;
	/* Last, so that a bad description fails without needing a BLAS. */
	m->ops = &nn_cpu_ops;
	if ((rc = m->ops->create(&m->be, m, err)) < 0)
		goto fail;
	*out = m;
	return 0;
fail:
	seed_model_free(&m);
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

seed_model_policy seed_model_policy_kind(const seed_model *m)
{
	return m->policy.kind;
}

int seed_model_obs_norm_dim(const seed_model *m)
{
	return m->norm.on ? m->norm.D : 0;
}

const char *seed_model_policy_name(seed_model_policy kind)
{
	return kind == SEED_POLICY_GAUSSIAN ? "gaussian" : "categorical";
}

int seed_model_policy_width(const seed_model *m)
{
	return m->policy.P;
}

int seed_model_squash(const seed_model *m, seed_squash *out)
{
	if (m->policy.kind != SEED_POLICY_GAUSSIAN)
		return -EINVAL;
	*out = m->policy.squash;
	return 0;
}

int seed_model_max_batch(const seed_model *m)
{
	return m->max_batch;
}

size_t seed_model_obs_bytes(const seed_model *m)
{
	return m->obs_numel * seed_dtype_size(m->obs_dtype);
}

/* Append to buf (len bytes) at n, counting what did not fit, as snprintf. */
#define PUT(...)                                                                                             \
	do {                                                                                                 \
		int w_ = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, __VA_ARGS__);             \
		n += (size_t)(w_ > 0 ? w_ : 0);                                                              \
	} while (0)

/* The first count of layers (a torso list) into buf at *np, as
 * seed_model_summary writes them. */
static void summary_layers(const layer *layers, int count, char *buf, size_t len, size_t *np)
{
	size_t n = *np;
	for (int i = 0; i < count; i++) {
		const layer *L = &layers[i];
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
			PUT(" %s", model_kind_name(L->kind));
	}
	*np = n;
}

int seed_model_summary(const seed_model *m, char *buf, size_t len)
{
	char tmp[96];
	size_t n = 0;
	model_shape_str(tmp, sizeof tmp, m->obs_rank, m->obs_shape);
	PUT("%s%s", seed_dtype_name(m->obs_dtype), tmp);
	if (m->norm.on)
		PUT(" obs_norm");
	summary_layers(m->layers, m->nlayers - 1, buf, len, &n);
	if (m->core.H)
		PUT(" | lstm(%d)%s%s", m->core.H, m->core.prev_reward ? " +reward" : "",
		    m->core.prev_action ? " +action" : "");
	if (m->ncritic) {
		PUT(" | critic");
		summary_layers(m->critic, m->ncritic - 1, buf, len, &n);
	}
	const model_policy *p = &m->policy;
	if (m->head == SEED_HEAD_DUELING)
		PUT(" | dueling %d+1 -> Q %d | %zu params", m->A, m->A, m->nparams);
	else if (p->kind == SEED_POLICY_GAUSSIAN)
		PUT(" | heads gaussian(%d,%s,%s)+1 | %zu params", m->A, p->state_std ? "state" : "parameter",
		    seed_gaussian_squash_name(p->squash), m->nparams);
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

void seed_model_trainable(const seed_model *m, size_t *first, size_t *count)
{
	/* The statistics are the slab's first 2D + 1 floats. */
	size_t stats = m->norm.on ? 2 * (size_t)m->norm.D + 1 : 0;
	*first = stats;
	*count = m->nparams - stats;
}

/* ---- observation normalisation ------------------------------------------ */

/* Gymnasium's RunningMeanStd.update (gymnasium/wrappers/utils.py): the
 * batch's mean and variance (ddof 0, two passes, as numpy's mean and var),
 * merged by update_mean_var_count_from_moments:
 *   delta = batch_mean - mean,  tot = count + rows,
 *   mean' = mean + delta * rows / tot,
 *   var' = (var * count + batch_var * rows + delta^2 * count * rows / tot) / tot,
 *   count' = tot,
 * all in double from the stored floats, written back as floats. */
int seed_model_obs_norm_update(seed_model *m, int rows, const void *obs)
{
	model_obs_norm *nm = &m->norm;
	if (!nm->on || rows < 1 || !obs)
		return -EINVAL;
	seed_model_params(m); /* the host's statistics, which are then the newer */
	const unsigned char *base = obs;
	size_t D = (size_t)nm->D, R = (size_t)rows;
	double count = nm->count[0], n = (double)rows, tot = count + n;
	/* Columns OBS_COLS at a time, rows in order (each column's sums in
	 * row order, as numpy's), the rows read along their length. */
	enum { OBS_COLS = 64 };
	double sum[OBS_COLS], sq[OBS_COLS];
	for (size_t j0 = 0; j0 < D; j0 += OBS_COLS) {
		size_t w = D - j0 < OBS_COLS ? D - j0 : OBS_COLS;
		memset(sum, 0, sizeof sum);
		memset(sq, 0, sizeof sq);
		for (size_t r = 0; r < R; r++)
			for (size_t j = 0; j < w; j++) {
				float x;
				memcpy(&x, base + (r * D + j0 + j) * sizeof x, sizeof x);
				sum[j] += x;
			}
		for (size_t j = 0; j < w; j++)
			sum[j] /= n; /* the batch's means */
		for (size_t r = 0; r < R; r++)
			for (size_t j = 0; j < w; j++) {
				float x;
				memcpy(&x, base + (r * D + j0 + j) * sizeof x, sizeof x);
				sq[j] += ((double)x - sum[j]) * ((double)x - sum[j]);
			}
		for (size_t j = 0; j < w; j++) {
			double bmean = sum[j], bvar = sq[j] / n;
			double mean = nm->mean[j0 + j], var = nm->var[j0 + j], delta = bmean - mean;
			double m2 = var * count + bvar * n + delta * delta * count * n / tot;
			nm->mean[j0 + j] = (float)(mean + delta * n / tot);
			nm->var[j0 + j] = (float)(m2 / tot);
		}
	}
	nm->count[0] = (float)tot;
	return 0;
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
