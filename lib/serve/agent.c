/* agent.c: acting with a model: checks, dtype conversion, forward, choice.
 *
 * Invariants: the model is built for cap rows and the scratch buffers hold
 * cap rows (stage: cap observations in the model's dtype; logits: cap rows
 * of A), so a call of at most cap rows allocates nothing.  Observations in
 * the model's own dtype go straight to the forward pass, which reads any
 * alignment; only the others pass through stage, converted one element at a
 * time by the rules of seed/agent.h and checked before anything is written.
 */
#include "seed/agent.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/buf.h"
#include "seed/gaussian.h"
#include "seed/policy.h"
#include "seed/rng.h"

struct seed_agent {
	seed_model *model;
	seed_dtype obs_dtype; /* the model's: U8 or F32 */
	int obs_rank;
	int64_t obs_shape[SEED_TENSOR_MAX_RANK];
	size_t obs_numel;
	int A;
	int P;      /* floats of policy output a row: A, or 2A for a Gaussian */
	bool gauss; /* a Gaussian policy: Box actions, seed_agent_act_box */
	int cap;    /* rows of the model and the buffers */
	bool greedy;
	bool q;         /* a dueling head: Q values, epsilon-greedy */
	double epsilon; /* a Q agent's epsilon for rows given none */
	seed_rng rng;
	int64_t version;
	void *stage;   /* (cap, obs_numel) converted observations, model dtype */
	float *logits; /* (cap, P) when the caller wants none */
	float *eps;    /* (cap): a Q agent's default epsilon per row */
};

void seed_agent_free(seed_agent **ap)
{
	if (!ap || !*ap)
		return;
	seed_agent *a = *ap;
	seed_model_free(&a->model);
	free(a->stage);
	free(a->logits);
	free(a->eps);
	free(a);
	*ap = NULL;
}

/* (Re)allocate the scratch buffers for cap rows. */
static void alloc_scratch(seed_agent *a, int cap)
{
	free(a->stage);
	free(a->logits);
	free(a->eps);
	a->stage = seed_xmalloc((size_t)cap * a->obs_numel * seed_dtype_size(a->obs_dtype));
	a->logits = seed_xmalloc((size_t)cap * (size_t)a->P * sizeof(float));
	a->eps = seed_xmalloc((size_t)cap * sizeof(float));
	a->cap = cap;
}

int seed_agent_new(seed_agent **out, const char *model_json, seed_dtype obs_dtype, int obs_rank,
                   const int64_t *obs_shape, int num_actions, int max_rows, bool greedy, uint64_t seed,
                   uint64_t stream, seed_err *err)
{
	if (seed_dtype_size(obs_dtype) == 0)
		return seed_err_set(err, -EINVAL, "agent: observation dtype %d is not a dtype",
		                    (int)obs_dtype);
	if (max_rows < 1)
		return seed_err_set(err, -EINVAL, "agent: max_rows %d is not at least 1", max_rows);
	seed_dtype mdt = obs_dtype == SEED_DTYPE_U8 ? SEED_DTYPE_U8 : SEED_DTYPE_F32;
	seed_model *m = NULL;
	int rc = seed_model_new(&m, model_json, mdt, obs_rank, obs_shape, num_actions, max_rows, err);
	if (rc)
		return rc;
	seed_agent *a = seed_xcalloc(1, sizeof *a);
	a->model = m;
	a->obs_dtype = mdt;
	a->obs_rank = obs_rank; /* 1..4: seed_model_new checked it and the shape */
	a->obs_numel = 1;
	for (int d = 0; d < obs_rank; d++) {
		a->obs_shape[d] = obs_shape[d];
		a->obs_numel *= (size_t)obs_shape[d];
	}
	a->A = num_actions;
	a->P = seed_model_policy_width(m);
	a->gauss = seed_model_policy_kind(m) == SEED_POLICY_GAUSSIAN;
	a->greedy = greedy;
	a->q = seed_model_head_kind(m) == SEED_HEAD_DUELING;
	a->epsilon = greedy ? 0.0 : SEED_AGENT_EPSILON;
	seed_rng_init(&a->rng, seed, stream);
	alloc_scratch(a, max_rows);
	*out = a;
	return 0;
}

int seed_agent_load_params(seed_agent *a, const void *data, size_t len, int64_t version, seed_err *err)
{
	size_t want = seed_model_num_params(a->model) * sizeof(float);
	if (len != want || !data)
		return seed_err_set(
		    err, -EINVAL,
		    "params: %zu bytes do not fit the model, which has %zu parameters (%zu bytes "
		    "of f32)",
		    len, seed_model_num_params(a->model), want);
	seed_model_load_params(a->model, data, len);
	a->version = version;
	return 0;
}

int64_t seed_agent_policy_version(const seed_agent *a)
{
	return a->version;
}

void seed_agent_set_policy_version(seed_agent *a, int64_t version)
{
	a->version = version;
}

seed_model *seed_agent_model(seed_agent *a)
{
	return a->model;
}

int seed_agent_num_actions(const seed_agent *a)
{
	return a->A;
}

int seed_agent_policy_width(const seed_agent *a)
{
	return a->P;
}

bool seed_agent_box(const seed_agent *a)
{
	return a->gauss;
}

seed_dtype seed_agent_obs_dtype(const seed_agent *a)
{
	return a->obs_dtype;
}

size_t seed_agent_obs_bytes(const seed_agent *a)
{
	return a->obs_numel * seed_dtype_size(a->obs_dtype);
}

int seed_agent_capacity(const seed_agent *a)
{
	return a->cap;
}

seed_model_head seed_agent_head(const seed_agent *a)
{
	return a->q ? SEED_HEAD_DUELING : SEED_HEAD_ACTOR_CRITIC;
}

int seed_agent_set_epsilon(seed_agent *a, double epsilon, seed_err *err)
{
	if (!(epsilon >= 0 && epsilon <= 1)) /* NaN fails too */
		return seed_err_set(err, -EINVAL, "agent: epsilon %g is not in [0, 1]", epsilon);
	a->epsilon = epsilon;
	return 0;
}

double seed_agent_epsilon(const seed_agent *a)
{
	return a->epsilon;
}

/* ---- observations ------------------------------------------------------ */

static void shape_str(char *buf, size_t len, int rank, const int64_t *shape)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64, i ? "," : "", shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* Whether obs is [rows, obs_shape...] on the CPU in a known dtype. */
static int check_obs(const seed_agent *a, int rows, const seed_tensor *obs, seed_err *err)
{
	if (rows < 1)
		return seed_err_set(err, -EINVAL, "observations: %d rows (at least 1)", rows);
	if (!obs || !obs->data)
		return seed_err_set(err, -EINVAL, "observations: none given");
	if (!seed_tensor_on_cpu(obs))
		return seed_err_set(err, -EINVAL, "observations: on device %s, not in host memory",
		                    seed_device_name(obs->device));
	if (seed_dtype_size(obs->dtype) == 0)
		return seed_err_set(err, -EINVAL, "observations: dtype %d is not a dtype", (int)obs->dtype);
	int64_t want[SEED_TENSOR_MAX_RANK] = {rows};
	for (int d = 0; d < a->obs_rank; d++)
		want[d + 1] = a->obs_shape[d];
	bool same = obs->rank == a->obs_rank + 1;
	for (int d = 0; same && d < obs->rank; d++)
		same = obs->shape[d] == want[d];
	if (!same) {
		char got[128], exp[128];
		shape_str(got, sizeof got,
		          obs->rank >= 0 && obs->rank <= SEED_TENSOR_MAX_RANK ? obs->rank : 0, obs->shape);
		shape_str(exp, sizeof exp, a->obs_rank + 1, want);
		return seed_err_set(err, -EINVAL, "observations: shape %s, but the model takes %s (%d rows)",
		                    got, exp, rows);
	}
	return 0;
}

/* Element i of src (any alignment) as the widest type of its kind. */
static int64_t int_at(const uint8_t *src, seed_dtype dt, size_t i)
{
	switch (dt) {
	case SEED_DTYPE_U8:
		return src[i];
	case SEED_DTYPE_I8:
		return (int8_t)src[i];
	case SEED_DTYPE_I32: {
		int32_t v;
		memcpy(&v, src + 4 * i, 4);
		return v;
	}
	default: {
		int64_t v;
		memcpy(&v, src + 8 * i, 8);
		return v;
	}
	}
}

static double float_at(const uint8_t *src, seed_dtype dt, size_t i)
{
	if (dt == SEED_DTYPE_F32) {
		float v;
		memcpy(&v, src + 4 * i, 4);
		return v;
	}
	double v;
	memcpy(&v, src + 8 * i, 8);
	return v;
}

static int refuse_int(const seed_agent *a, seed_dtype dt, size_t i, int64_t v, const char *rule,
                      seed_err *err)
{
	return seed_err_set(
	    err, -ERANGE,
	    "observations: row %zu, element %zu: %s value %" PRId64 " does not convert to the "
	    "model's %s (%s)",
	    i / a->obs_numel, i % a->obs_numel, seed_dtype_name(dt), v, seed_dtype_name(a->obs_dtype), rule);
}

static int refuse_float(const seed_agent *a, seed_dtype dt, size_t i, double v, const char *rule,
                        seed_err *err)
{
	return seed_err_set(err, -ERANGE,
	                    "observations: row %zu, element %zu: %s value %.17g does not convert to the "
	                    "model's %s (%s)",
	                    i / a->obs_numel, i % a->obs_numel, seed_dtype_name(dt), v,
	                    seed_dtype_name(a->obs_dtype), rule);
}

static const char rule_f32_int[] = "integers must be exact in f32";
static const char rule_f32_f64[] = "f64 values must be finite and at most FLT_MAX in magnitude";
static const char rule_u8[] = "values must be integers in [0, 255]";

/* n values of obs (another dtype than the model's) into dst, in the
 * model's dtype. */
static int convert(const seed_agent *a, const seed_tensor *obs, size_t n, void *out, seed_err *err)
{
	const uint8_t *src = obs->data;
	seed_dtype dt = obs->dtype;
	bool is_float = dt == SEED_DTYPE_F32 || dt == SEED_DTYPE_F64;
	if (a->obs_dtype == SEED_DTYPE_F32) {
		float *dst = out;
		if (dt == SEED_DTYPE_U8) {
			for (size_t i = 0; i < n; i++)
				dst[i] = (float)src[i];
		} else if (dt == SEED_DTYPE_F64) {
			for (size_t i = 0; i < n; i++) {
				double v = float_at(src, dt, i);
				if (!(fabs(v) <= FLT_MAX)) /* NaN fails too */
					return refuse_float(a, dt, i, v, rule_f32_f64, err);
				dst[i] = (float)v;
			}
		} else {
			for (size_t i = 0; i < n; i++) {
				int64_t v = int_at(src, dt, i);
				float f = (float)v;
				/* 2^63 is past int64's range: a value that rounds
				 * there was not exact. */
				if (f >= 0x1p63f || (int64_t)f != v)
					return refuse_int(a, dt, i, v, rule_f32_int, err);
				dst[i] = f;
			}
		}
		return 0;
	}
	uint8_t *dst = out;
	for (size_t i = 0; i < n; i++) {
		if (is_float) {
			double v = float_at(src, dt, i);
			if (!(v >= 0 && v <= 255 && v == floor(v)))
				return refuse_float(a, dt, i, v, rule_u8, err);
			dst[i] = (uint8_t)v;
		} else {
			int64_t v = int_at(src, dt, i);
			if (v < 0 || v > 255)
				return refuse_int(a, dt, i, v, rule_u8, err);
			dst[i] = (uint8_t)v;
		}
	}
	return 0;
}

/* Check obs, make room for rows, and point *x at rows observations in the
 * model's dtype. */
static int prepare(seed_agent *a, int rows, const seed_tensor *obs, const void **x, seed_err *err)
{
	int rc = check_obs(a, rows, obs, err);
	if (rc)
		return rc;
	if (rows > a->cap) {
		if ((rc = seed_model_reserve(a->model, rows, err)) < 0)
			return rc;
		alloc_scratch(a, rows);
	}
	if (obs->dtype == a->obs_dtype) {
		*x = obs->data;
		return 0;
	}
	if ((rc = convert(a, obs, (size_t)rows * a->obs_numel, a->stage, err)) < 0)
		return rc;
	*x = a->stage;
	return 0;
}

int seed_agent_convert(const seed_agent *a, int rows, const seed_tensor *obs, void *dst, seed_err *err)
{
	int rc = check_obs(a, rows, obs, err);
	if (rc)
		return rc;
	if (!dst)
		return seed_err_set(err, -EINVAL, "agent: no buffer to convert into");
	if (obs->dtype == a->obs_dtype) {
		memcpy(dst, obs->data, (size_t)rows * seed_agent_obs_bytes(a));
		return 0;
	}
	return convert(a, obs, (size_t)rows * a->obs_numel, dst, err);
}

/* ---- acting ------------------------------------------------------------ */

/* The forward pass of one step of rows observations x: without a core the
 * plain one; with one, from the state and inputs in c. */
static int step(seed_agent *a, int rows, const void *x, const seed_agent_core *c, float *logits,
                float *values, seed_err *err)
{
	int S = seed_model_state_floats(a->model);
	if (S > 0 && !c)
		return seed_err_set(err, -EINVAL,
		                    "agent: the model has a recurrent core (%d floats of state a row): "
		                    "act with seed_agent_act_core, which carries the state",
		                    S);
	int rc;
	/* One step of a core from the caller's state (unused without one). */
	seed_model_seq sq = {.T = 1, .B = rows, .obs = x};
	if (S > 0) {
		sq.prev_reward = c->prev_reward;
		sq.prev_action = c->prev_action;
		sq.reset = c->reset;
		sq.state0 = c->state;
		sq.state_out = c->state_out;
	}
	if (a->q) {
		/* Q values into logits (the caller's or the scratch), values
		 * their greedy maximum. */
		float *q = logits ? logits : a->logits;
		rc = S == 0 ? seed_model_forward_q(a->model, rows, x, q)
		            : seed_model_forward_seq_q(a->model, &sq, q);
		if (rc == 0 && values)
			for (int r = 0; r < rows; r++) {
				const float *row = q + (size_t)r * (size_t)a->A;
				int32_t best;
				seed_policy_argmax(1, a->A, row, &best);
				values[r] = row[best];
			}
	} else {
		rc = S == 0 ? seed_model_forward(a->model, rows, x, logits, values)
		            : seed_model_forward_seq(a->model, &sq, logits, values);
	}
	if (rc < 0)
		return seed_err_set(err, rc, "agent: the forward pass of %d rows failed", rows);
	return 0;
}

int seed_agent_act_core(seed_agent *a, int rows, const seed_tensor *obs, const seed_agent_core *c,
                        int32_t *actions, float *logits, float *values, seed_err *err)
{
	if (!actions)
		return seed_err_set(err, -EINVAL, "agent: no actions buffer");
	if (a->gauss)
		return seed_err_set(err, -EINVAL,
		                    "agent: the model's policy is Gaussian (Box actions): it acts with "
		                    "seed_agent_act_box");
	const float *eps = c && a->q ? c->epsilon : NULL;
	for (int r = 0; eps && r < rows; r++)
		if (!(eps[r] >= 0 && eps[r] <= 1))
			return seed_err_set(err, -EINVAL, "agent: row %d: epsilon %g is not in [0, 1]", r,
			                    (double)eps[r]);
	const void *x;
	int rc = prepare(a, rows, obs, &x, err);
	if (rc)
		return rc;
	float *lg = logits ? logits : a->logits;
	if ((rc = step(a, rows, x, c, lg, values, err)) < 0)
		return rc;
	if (a->q && (eps || a->epsilon > 0)) {
		if (!eps) {
			for (int r = 0; r < rows; r++)
				a->eps[r] = (float)a->epsilon;
			eps = a->eps;
		}
		seed_policy_epsilon_greedy(rows, a->A, lg, eps, &a->rng, actions);
	} else if (a->greedy || a->q) {
		seed_policy_argmax(rows, a->A, lg, actions);
	} else {
		seed_policy_sample(rows, a->A, lg, &a->rng, actions);
	}
	return 0;
}

int seed_agent_act_box(seed_agent *a, int rows, const seed_tensor *obs, const seed_agent_core *c, float *raw,
                       float *params, float *values, seed_err *err)
{
	if (!raw)
		return seed_err_set(err, -EINVAL, "agent: no actions buffer");
	if (!a->gauss)
		return seed_err_set(err, -EINVAL,
		                    "agent: the model's policy is %s (discrete actions): it acts with "
		                    "seed_agent_act_core",
		                    a->q ? "a Q head" : "categorical");
	const void *x;
	int rc = prepare(a, rows, obs, &x, err);
	if (rc)
		return rc;
	float *pr = params ? params : a->logits;
	if ((rc = step(a, rows, x, c, pr, values, err)) < 0)
		return rc;
	if (a->greedy)
		seed_gaussian_mean(rows, a->A, pr, raw);
	else
		seed_gaussian_sample(rows, a->A, pr, &a->rng, raw);
	return 0;
}

int seed_agent_act(seed_agent *a, int rows, const seed_tensor *obs, int32_t *actions, float *logits,
                   float *values, seed_err *err)
{
	return seed_agent_act_core(a, rows, obs, NULL, actions, logits, values, err);
}

int seed_agent_values_core(seed_agent *a, int rows, const seed_tensor *obs, const seed_agent_core *c,
                           float *values, seed_err *err)
{
	if (!values)
		return seed_err_set(err, -EINVAL, "agent: no values buffer");
	const void *x;
	int rc = prepare(a, rows, obs, &x, err);
	if (rc)
		return rc;
	return step(a, rows, x, c, NULL, values, err);
}

int seed_agent_state_floats(const seed_agent *a)
{
	return seed_model_state_floats(a->model);
}

int seed_agent_values(seed_agent *a, int rows, const seed_tensor *obs, float *values, seed_err *err)
{
	return seed_agent_values_core(a, rows, obs, NULL, values, err);
}
