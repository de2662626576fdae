/* optim.c: Adam, RMSProp (TF1 and PyTorch forms), global-norm clipping and
 * linear learning-rate decay over flat float slabs (see seed/optim.h).
 * A model's step (seed_optim_step_model) runs over its trainable range
 * (seed_model_trainable) only: its observation statistics, which no
 * gradient reaches, would otherwise be moved by weight decay.
 *
 * Each update is a static inline kernel over a short run of elements with
 * restrict pointers and a branch-free body.  The drivers call it on blocks
 * of BLOCK elements and then once on the remainder: a loop whose trip count
 * is a compile-time constant needs no scalar epilogue, which is what GCC's
 * default -O2 cost model ("very cheap") insists on before it vectorises.
 * Weight decay is folded into every kernel as p' = keep * p and
 * g' = g + l2 * p', with keep = 1 and l2 = 0 when it is off, so there is
 * one kernel per rule rather than one per option.
 */
#include "seed/optim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/nn.h"

enum { BLOCK = 16 };

struct seed_optim {
	seed_optim_config c;
	size_t n;
	int64_t t; /* steps taken */
	int nslots;
	float *state; /* nslots * n floats, slot i at state + i * n */
	/* The model whose device holds the newer state (seed_optim_step_model
	 * on a GPU), or NULL: the host's is current. */
	seed_model *dev;
};

void seed_optim_config_default(seed_optim_config *c, seed_optim_kind kind)
{
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->beta1 = 0.9f;
	c->beta2 = 0.999f;
	c->eps = kind == SEED_OPTIM_RMSPROP ? 0.01f : 1e-8f;
	c->decay = 0.99f;
	c->momentum = 0.0f;
	c->rmsprop_style = SEED_RMSPROP_TF;
	c->weight_decay = 0.0f;
	c->decoupled_weight_decay = 0;
}

/* x in [0, 1), rejecting NaN. */
static int unit_interval(float x)
{
	return x >= 0 && x < 1;
}

static int check_config(const seed_optim_config *c, size_t n, seed_err *err)
{
	if (c->kind != SEED_OPTIM_ADAM && c->kind != SEED_OPTIM_RMSPROP)
		return seed_err_set(err, -EINVAL, "optim: unknown optimizer kind %d", (int)c->kind);
	if (n == 0)
		return seed_err_set(err, -EINVAL, "optim: no parameters (n = 0)");
	if (!(isfinite(c->eps) && c->eps >= 0))
		return seed_err_set(err, -EINVAL, "optim: eps %g must be finite and >= 0", (double)c->eps);
	if (!(isfinite(c->weight_decay) && c->weight_decay >= 0))
		return seed_err_set(err, -EINVAL, "optim: weight_decay %g must be finite and >= 0",
		                    (double)c->weight_decay);
	if (c->kind == SEED_OPTIM_ADAM) {
		if (!unit_interval(c->beta1) || !unit_interval(c->beta2))
			return seed_err_set(err, -EINVAL, "optim: Adam betas (%g, %g) must be in [0, 1)",
			                    (double)c->beta1, (double)c->beta2);
	} else {
		if (!unit_interval(c->decay))
			return seed_err_set(err, -EINVAL, "optim: RMSProp decay %g must be in [0, 1)",
			                    (double)c->decay);
		if (!unit_interval(c->momentum))
			return seed_err_set(err, -EINVAL, "optim: RMSProp momentum %g must be in [0, 1)",
			                    (double)c->momentum);
		if (c->rmsprop_style != SEED_RMSPROP_TF && c->rmsprop_style != SEED_RMSPROP_TORCH)
			return seed_err_set(err, -EINVAL, "optim: unknown RMSProp style %d",
			                    (int)c->rmsprop_style);
	}
	return 0;
}

int seed_optim_new(seed_optim **out, const seed_optim_config *c, size_t n, seed_err *err)
{
	if (!out || !c)
		return seed_err_set(err, -EINVAL, "optim: NULL %s", !out ? "output" : "config");
	int rc = check_config(c, n, err);
	if (rc)
		return rc;
	int nslots = c->kind == SEED_OPTIM_ADAM ? 2 : c->momentum > 0 ? 2 : 1;
	if (n > SIZE_MAX / sizeof(float) / (size_t)nslots)
		return seed_err_set(err, -EINVAL, "optim: %zu parameters is too many", n);
	seed_optim *o = seed_xcalloc(1, sizeof *o);
	o->c = *c;
	o->n = n;
	o->nslots = nslots;
	o->state = seed_xaligned((size_t)nslots * n * sizeof(float));
	seed_optim_reset(o);
	*out = o;
	return 0;
}

void seed_optim_free(seed_optim **o)
{
	if (!o || !*o)
		return;
	free((*o)->state);
	free(*o);
	*o = NULL;
}

/* The state's current values to the host, which may write them. */
static void state_to_host(seed_optim *o)
{
	if (o->dev)
		seed_model_device_state(o->dev, o->state);
	o->dev = NULL;
}

void seed_optim_reset(seed_optim *o)
{
	state_to_host(o);
	memset(o->state, 0, (size_t)o->nslots * o->n * sizeof(float));
	/* TF1's RMSPropOptimizer initialises its mean square to ones. */
	if (o->c.kind == SEED_OPTIM_RMSPROP && o->c.rmsprop_style == SEED_RMSPROP_TF)
		for (size_t i = 0; i < o->n; i++)
			o->state[i] = 1.0f;
	o->t = 0;
}

size_t seed_optim_numel(const seed_optim *o)
{
	return o->n;
}

int64_t seed_optim_steps(const seed_optim *o)
{
	return o->t;
}

int seed_optim_set_steps(seed_optim *o, int64_t steps)
{
	if (steps < 0)
		return -EINVAL;
	o->t = steps;
	return 0;
}

size_t seed_optim_state_size(const seed_optim *o)
{
	return (size_t)o->nslots * o->n;
}

float *seed_optim_state(seed_optim *o)
{
	state_to_host(o);
	return o->state;
}

int seed_optim_slots(const seed_optim *o)
{
	return o->nslots;
}

const char *seed_optim_slot_name(const seed_optim *o, int i)
{
	static const char *const adam[] = {"adam_m", "adam_v"};
	static const char *const rms[] = {"rmsprop_ms", "rmsprop_mom"};
	if (i < 0 || i >= o->nslots)
		return NULL;
	return o->c.kind == SEED_OPTIM_ADAM ? adam[i] : rms[i];
}

/* ---- kernels: len elements, no aliasing between the arrays ---- */

/* Per-step scalars shared by the kernels. */
struct coef {
	float keep, l2; /* weight decay: p' = keep p, g' = g + l2 p' */
	float a, b;     /* Adam beta1, 1 - beta1; RMSProp decay, 1 - decay */
	float a2, b2;   /* Adam beta2, 1 - beta2 */
	float step;     /* Adam lr / (1 - beta1^t); RMSProp lr */
	float bc2s;     /* Adam sqrt(1 - beta2^t) */
	float eps, mu;  /* eps; RMSProp momentum */
};

static inline void adam_kernel(size_t len, float *restrict p, const float *restrict g, float *restrict m,
                               float *restrict v, const struct coef k)
{
	for (size_t i = 0; i < len; i++) {
		const float pi = k.keep * p[i];
		const float gi = g[i] + k.l2 * pi;
		const float mi = k.a * m[i] + k.b * gi;
		const float vi = k.a2 * v[i] + k.b2 * (gi * gi);
		m[i] = mi;
		v[i] = vi;
		p[i] = pi - k.step * (mi / (sqrtf(vi) / k.bc2s + k.eps));
	}
}

static inline void rms_tf_kernel(size_t len, float *restrict p, const float *restrict g, float *restrict ms,
                                 const struct coef k)
{
	for (size_t i = 0; i < len; i++) {
		const float pi = k.keep * p[i];
		const float gi = g[i] + k.l2 * pi;
		const float s = ms[i] + k.b * (gi * gi - ms[i]);
		ms[i] = s;
		p[i] = pi - k.step * gi / sqrtf(s + k.eps);
	}
}

static inline void rms_tf_mom_kernel(size_t len, float *restrict p, const float *restrict g,
                                     float *restrict ms, float *restrict mom, const struct coef k)
{
	for (size_t i = 0; i < len; i++) {
		const float pi = k.keep * p[i];
		const float gi = g[i] + k.l2 * pi;
		const float s = ms[i] + k.b * (gi * gi - ms[i]);
		const float u = k.mu * mom[i] + k.step * gi / sqrtf(s + k.eps);
		ms[i] = s;
		mom[i] = u;
		p[i] = pi - u;
	}
}

static inline void rms_torch_kernel(size_t len, float *restrict p, const float *restrict g,
                                    float *restrict ms, const struct coef k)
{
	for (size_t i = 0; i < len; i++) {
		const float pi = k.keep * p[i];
		const float gi = g[i] + k.l2 * pi;
		const float s = k.a * ms[i] + k.b * (gi * gi);
		ms[i] = s;
		p[i] = pi - k.step * (gi / (sqrtf(s) + k.eps));
	}
}

static inline void rms_torch_mom_kernel(size_t len, float *restrict p, const float *restrict g,
                                        float *restrict ms, float *restrict mom, const struct coef k)
{
	for (size_t i = 0; i < len; i++) {
		const float pi = k.keep * p[i];
		const float gi = g[i] + k.l2 * pi;
		const float s = k.a * ms[i] + k.b * (gi * gi);
		const float u = k.mu * mom[i] + gi / (sqrtf(s) + k.eps);
		ms[i] = s;
		mom[i] = u;
		p[i] = pi - k.step * u;
	}
}

/* Run KERNEL(len, p, g, slots..., k) over [0, n) in blocks of BLOCK. */
#define BLOCKED(n, KERNEL, ...)                                                                              \
	do {                                                                                                 \
		size_t i_ = 0;                                                                               \
		for (; i_ + BLOCK <= (n); i_ += BLOCK)                                                       \
			KERNEL(BLOCK, __VA_ARGS__);                                                          \
		if (i_ < (n))                                                                                \
			KERNEL((n)-i_, __VA_ARGS__);                                                         \
	} while (0)

/* The coefficients of step t = o->t + 1 at learning rate lr. */
static struct coef coefs(const seed_optim *o, float lr)
{
	const seed_optim_config *c = &o->c;
	const int64_t t = o->t + 1;
	struct coef k = {0};
	k.eps = c->eps;
	if (c->decoupled_weight_decay) {
		k.keep = (float)(1.0 - (double)lr * c->weight_decay);
		k.l2 = 0;
	} else {
		k.keep = 1;
		k.l2 = c->weight_decay;
	}
	if (c->kind == SEED_OPTIM_ADAM) {
		k.a = c->beta1;
		k.b = (float)(1.0 - c->beta1);
		k.a2 = c->beta2;
		k.b2 = (float)(1.0 - c->beta2);
		k.step = (float)((double)lr / (1.0 - pow(c->beta1, (double)t)));
		k.bc2s = (float)sqrt(1.0 - pow(c->beta2, (double)t));
	} else {
		k.a = c->decay;
		k.b = (float)(1.0 - c->decay);
		k.mu = c->momentum;
		k.step = lr;
	}
	return k;
}

/* One step over the floats [first, first + n) of the slabs params and
 * grads (o->n floats each) and of each state slot: the rest untouched. */
static void step_range(seed_optim *o, float *params, const float *grads, float lr, size_t first, size_t n)
{
	state_to_host(o);
	const seed_optim_config *c = &o->c;
	const struct coef k = coefs(o, lr);
	float *s0 = o->state + first, *s1 = o->nslots > 1 ? o->state + o->n + first : NULL;
	params += first;
	grads += first;
	if (c->kind == SEED_OPTIM_ADAM) {
		BLOCKED(n, adam_kernel, params + i_, grads + i_, s0 + i_, s1 + i_, k);
	} else if (c->rmsprop_style == SEED_RMSPROP_TF) {
		if (s1)
			BLOCKED(n, rms_tf_mom_kernel, params + i_, grads + i_, s0 + i_, s1 + i_, k);
		else
			BLOCKED(n, rms_tf_kernel, params + i_, grads + i_, s0 + i_, k);
	} else {
		if (s1)
			BLOCKED(n, rms_torch_mom_kernel, params + i_, grads + i_, s0 + i_, s1 + i_, k);
		else
			BLOCKED(n, rms_torch_kernel, params + i_, grads + i_, s0 + i_, k);
	}
	o->t++;
}

int seed_optim_step(seed_optim *o, float *restrict params, const float *restrict grads, float lr)
{
	if (!o || !params || !grads || (const float *)params == grads || !(isfinite(lr) && lr >= 0))
		return -EINVAL;
	step_range(o, params, grads, lr, 0, o->n);
	return 0;
}

int seed_optim_step_model(seed_optim *o, seed_model *m, float lr)
{
	if (!o || !m || o->n != seed_model_num_params(m) || !(isfinite(lr) && lr >= 0))
		return -EINVAL;
	const struct coef k = coefs(o, lr);
	const seed_optim_config *c = &o->c;
	seed_model_update u = {.rule = c->kind == SEED_OPTIM_ADAM            ? 0
	                               : c->rmsprop_style == SEED_RMSPROP_TF ? 1
	                                                                     : 2,
	                       .nslots = o->nslots,
	                       .keep = k.keep,
	                       .l2 = k.l2,
	                       .a = k.a,
	                       .b = k.b,
	                       .a2 = k.a2,
	                       .b2 = k.b2,
	                       .step = k.step,
	                       .bc2s = k.bc2s,
	                       .eps = k.eps,
	                       .mu = k.mu};
	if (o->dev && o->dev != m)
		state_to_host(o); /* bound to another model's device */
	/* The device steps the whole slab: no model with statistics (its
	 * untrainable range) goes to a device (seed/nn.h). */
	size_t first, count;
	seed_model_trainable(m, &first, &count);
	int rc = first ? -ENOTSUP : seed_model_device_update(m, &u, o->state);
	if (rc == -ENOTSUP) { /* on the CPU: the trainable range only */
		step_range(o, seed_model_params(m), seed_model_grads(m), lr, first, count);
		return 0;
	}
	if (rc < 0)
		return rc;
	o->dev = m;
	o->t++;
	return 0;
}

double seed_optim_clip_model(seed_model *m, float max_norm)
{
	double sum;
	int rc = seed_model_device_grad_sumsq(m, &sum);
	if (rc == -ENOTSUP)
		return seed_optim_clip_global_norm(seed_model_grads(m), seed_model_num_params(m), max_norm);
	if (rc < 0)
		return NAN;
	const double norm = sqrt(sum);
	if (max_norm > 0 && isfinite(max_norm) && isfinite(norm) && norm > max_norm &&
	    seed_model_device_scale_grads(m, (float)((double)max_norm / norm)) < 0)
		return NAN;
	return norm;
}

double seed_optim_clip_global_norm(float *g, size_t n, float max_norm)
{
	/* BLOCK independent partial sums: vectorisable without reassociating
	 * any one sum, and deterministic for a given n. */
	double acc[BLOCK] = {0};
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (int j = 0; j < BLOCK; j++)
			acc[j] += (double)g[i + j] * (double)g[i + j];
	for (int j = 0; i < n; i++, j++)
		acc[j] += (double)g[i] * (double)g[i];
	double sum = 0;
	for (int j = 0; j < BLOCK; j++)
		sum += acc[j];
	const double norm = sqrt(sum);
	if (max_norm > 0 && isfinite(max_norm) && isfinite(norm) && norm > max_norm) {
		const float scale = (float)((double)max_norm / norm);
		for (i = 0; i < n; i++)
			g[i] *= scale;
	}
	return norm;
}

float seed_optim_lr_linear(float lr0, int64_t t, int64_t total, float lr_min)
{
	double lr = lr0;
	if (total > 0) {
		double frac = t <= 0 ? 1.0 : t >= total ? 0.0 : 1.0 - (double)t / (double)total;
		lr = (double)lr0 * frac;
	}
	return (float)(lr > lr_min ? lr : lr_min);
}
