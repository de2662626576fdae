/* env.c: the registry of environment classes and the vector of environments.
 *
 * The vector owns everything its instances need, allocated once in
 * seed_envs_new: one slab of per-instance state (a 64-byte aligned stride
 * per env so instances never share a cache line), one seed_rng per env
 * (stream = env index), and the running return and length of each episode.
 * Classes that draw pictures get a second slab: the last state of each
 * env's most recently ended episode, copied just before the reset, so that
 * the final picture of an episode can still be drawn after step returns.
 * Stepping allocates nothing and touches only the rows it steps.
 */
#include "seed/env.h"

#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../envs/builtin.h"
#include "seed/buf.h"
#include "seed/env_gym.h"
#include "seed/env_plugin.h"

/* ---- registry ------------------------------------------------------------ */

/* Classes added with seed_env_register, after the built-ins. */
static const seed_env_class **registered;
static int nregistered;
static size_t cap_registered;

static int nbuiltins(void)
{
	int n = 0;
	while (seed_env_builtins[n])
		n++;
	return n;
}

const seed_env_class *seed_env_class_at(int i)
{
	if (i < 0)
		return NULL;
	int nb = nbuiltins();
	if (i < nb)
		return seed_env_builtins[i];
	i -= nb;
	return i < nregistered ? registered[i] : NULL;
}

const seed_env_class *seed_env_find(const char *name)
{
	if (!name)
		return NULL;
	const seed_env_class *c;
	for (int i = 0; (c = seed_env_class_at(i)); i++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int seed_env_register(const seed_env_class *cls)
{
	if (!cls || !cls->name || !cls->name[0] || !cls->configure || !cls->reset ||
	    (!cls->step && !cls->step_box))
		return -EINVAL;
	if (seed_env_find(cls->name))
		return -EEXIST;
	registered = seed_xgrow(registered, &cap_registered, (size_t)nregistered + 1, sizeof *registered);
	registered[nregistered++] = cls;
	return 0;
}

/* ---- option helpers ------------------------------------------------------ */

int seed_env_options_check(const json_t *options, const char *env, const char *const *known, seed_err *err)
{
	json_t *obj = (json_t *)options; /* jansson's iterators take no const */
	for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		const char *key = json_object_iter_key(it);
		if (strcmp(key, "max_steps") == 0)
			continue;
		int ok = 0;
		for (int i = 0; known && known[i]; i++)
			if (strcmp(key, known[i]) == 0)
				ok = 1;
		if (ok)
			continue;
		char list[256] = "";
		size_t used = 0;
		for (int i = 0; known && known[i]; i++) {
			int n = snprintf(list + used, sizeof list - used, "%s, ", known[i]);
			if (n < 0 || (size_t)n >= sizeof list - used)
				break;
			used += (size_t)n;
		}
		return seed_err_set(err, -SEED_EOPTION, "%s: unknown option \"%s\" (known: %smax_steps)", env,
		                    key, list);
	}
	return 0;
}

int seed_env_option_int(const json_t *options, const char *env, const char *key, long long min, long long max,
                        long long *out, seed_err *err)
{
	json_t *v = json_object_get(options, key);
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return seed_err_set(err, -SEED_EOPTION,
		                    "%s: option \"%s\" must be an integer in [%lld, %lld]", env, key, min,
		                    max);
	long long x = json_integer_value(v);
	if (x < min || x > max)
		return seed_err_set(err, -SEED_EOPTION, "%s: option \"%s\" is %lld, not in [%lld, %lld]", env,
		                    key, x, min, max);
	*out = x;
	return 0;
}

int seed_env_option_bool(const json_t *options, const char *env, const char *key, bool *out, seed_err *err)
{
	json_t *v = json_object_get(options, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return seed_err_set(err, -SEED_EOPTION, "%s: option \"%s\" must be true or false", env, key);
	*out = json_is_true(v);
	return 0;
}

int seed_env_option_double(const json_t *options, const char *env, const char *key, double min, double max,
                           double *out, seed_err *err)
{
	json_t *v = json_object_get(options, key);
	if (!v)
		return 0;
	double x = json_number_value(v);
	if (!json_is_number(v) || !isfinite(x))
		return seed_err_set(err, -SEED_EOPTION, "%s: option \"%s\" must be a number in [%g, %g]", env,
		                    key, min, max);
	if (x < min || x > max)
		return seed_err_set(err, -SEED_EOPTION, "%s: option \"%s\" is %g, not in [%g, %g]", env, key,
		                    x, min, max);
	*out = x;
	return 0;
}

int seed_env_option_doubles(const json_t *options, const char *env, const char *key, int n, double *out,
                            seed_err *err)
{
	json_t *v = json_object_get(options, key);
	if (!v)
		return 0;
	if (!json_is_array(v) || json_array_size(v) != (size_t)n)
		return seed_err_set(err, -SEED_EOPTION, "%s: option \"%s\" must be an array of %d numbers",
		                    env, key, n);
	for (int i = 0; i < n; i++) {
		json_t *x = json_array_get(v, (size_t)i);
		if (!json_is_number(x) || !isfinite(json_number_value(x)))
			return seed_err_set(err, -SEED_EOPTION,
			                    "%s: option \"%s\": element %d is not a finite number", env, key,
			                    i);
	}
	for (int i = 0; i < n; i++)
		out[i] = json_number_value(json_array_get(v, (size_t)i));
	return 0;
}

/* ---- spec ----------------------------------------------------------------- */

int64_t seed_env_spec_obs_numel(const seed_env_spec *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->obs_rank; i++)
		n *= s->obs_shape[i];
	return n;
}

size_t seed_env_spec_obs_bytes(const seed_env_spec *s)
{
	return (size_t)seed_env_spec_obs_numel(s) * seed_dtype_size(s->obs_dtype);
}

/* ---- vector --------------------------------------------------------------- */

struct seed_envs {
	const seed_env_class *cls;
	void *config;
	seed_env_spec spec;
	int num;
	bool was_reset;
	size_t obs_bytes;
	size_t stride;      /* bytes between instances in state */
	uint8_t *state;     /* [num][stride], 64-byte aligned */
	seed_rng *rng;      /* [num] */
	double *ep_return;  /* [num] running return of the current episode */
	int32_t *ep_length; /* [num] steps taken in the current episode */
	/* Only for classes with render_rgb, else NULL: */
	uint8_t *final_state; /* [num][stride] last state of the last ended episode */
	bool *has_final;      /* [num] final_state row i is valid */
	/* Only for a Box space, else NULL: */
	uint8_t *last_obs; /* [num][obs_bytes] each env's latest observation */
	int64_t unstable;  /* steps truncated as unstable */
};

/* Check the spec a class filled in, so that a faulty plugin fails at
 * creation instead of corrupting memory while stepping.  who names the
 * class in messages (with its plugin's file, for a plugin's class). */
static int check_spec(const seed_env_class *cls, const char *who, const seed_env_spec *s, seed_err *err)
{
	if (s->obs_dtype != SEED_DTYPE_F32 && s->obs_dtype != SEED_DTYPE_U8)
		return seed_err_set(err, -EINVAL, "%s: observation dtype must be f32 or u8", who);
	if (s->obs_rank < 1 || s->obs_rank > SEED_ENV_MAX_OBS_RANK)
		return seed_err_set(err, -EINVAL, "%s: observation rank %d not in [1, %d]", who, s->obs_rank,
		                    SEED_ENV_MAX_OBS_RANK);
	int64_t n = 1;
	for (int i = 0; i < s->obs_rank; i++) {
		if (s->obs_shape[i] < 1 || s->obs_shape[i] > (INT64_C(1) << 31) / n)
			return seed_err_set(err, -EINVAL,
			                    "%s: bad observation shape: dimension %d is %" PRId64
			                    " (each at least 1, 2^31 elements in all at most)",
			                    who, i, s->obs_shape[i]);
		n *= s->obs_shape[i];
	}
	if (s->action_space == SEED_ACTIONS_DISCRETE) {
		if (s->num_actions < 1)
			return seed_err_set(err, -EINVAL, "%s: %d actions (at least 1 needed)", who,
			                    s->num_actions);
		if (!cls->step)
			return seed_err_set(err, -EINVAL, "%s: discrete actions but no step function", who);
	} else if (s->action_space == SEED_ACTIONS_BOX) {
		if (s->num_actions < 1 || s->num_actions > SEED_ENV_MAX_ACTION_DIM)
			return seed_err_set(err, -EINVAL, "%s: Box actions of dimension %d (1 to %d)", who,
			                    s->num_actions, SEED_ENV_MAX_ACTION_DIM);
		if (!cls->step_box)
			return seed_err_set(err, -EINVAL, "%s: Box actions but no step_box function", who);
		for (int i = 0; i < s->num_actions; i++)
			if (!(s->action_low[i] <= s->action_high[i]))
				return seed_err_set(err, -EINVAL,
				                    "%s: Box action %d has bounds [%g, %g] (low <= high, "
				                    "no NaN)",
				                    who, i, (double)s->action_low[i],
				                    (double)s->action_high[i]);
	} else {
		return seed_err_set(err, -EINVAL, "%s: unknown action space %d", who, (int)s->action_space);
	}
	if (s->max_steps < 0)
		return seed_err_set(err, -EINVAL, "%s: negative default max_steps", who);
	if (cls->render_rgb && (s->rgb_width < 1 || s->rgb_width > SEED_ENV_MAX_RGB || s->rgb_height < 1 ||
	                        s->rgb_height > SEED_ENV_MAX_RGB))
		return seed_err_set(err, -EINVAL,
		                    "%s: draws pictures but its natural size %d x %d is not in [1, %d]", who,
		                    s->rgb_width, s->rgb_height, SEED_ENV_MAX_RGB);
	return 0;
}

int seed_envs_new(seed_envs **out, const char *name, const char *options, int num, uint64_t seed,
                  seed_err *err)
{
	const seed_env_class *cls;
	int rc = seed_env_lookup(name, &cls, err);
	if (rc < 0)
		return rc;
	/* Messages about a plugin's class name its file. */
	const char *file = seed_env_class_file(cls);
	char who[PATH_MAX + 64];
	snprintf(who, sizeof who, "%s%s%s", file ? file : "", file ? ":" : "", cls->name);
	if (num < 1)
		return seed_err_set(err, -EINVAL, "%s: number of environments must be >= 1, not %d", who,
		                    num);

	json_t *opts;
	if (!options || !options[0]) {
		opts = json_object();
	} else {
		json_error_t je;
		opts = json_loads(options, JSON_REJECT_DUPLICATES, &je);
		if (!opts)
			return seed_err_set(err, -SEED_EOPTION,
			                    "%s: options are not valid JSON: %s (line %d, column %d)",
			                    cls->name, je.text, je.line, je.column);
		if (!json_is_object(opts)) {
			json_decref(opts);
			return seed_err_set(err, -SEED_EOPTION, "%s: options must be a JSON object",
			                    cls->name);
		}
	}
	long long max_steps = -1;
	rc = seed_env_option_int(opts, cls->name, "max_steps", 0, INT_MAX, &max_steps, err);
	seed_env_spec spec;
	memset(&spec, 0, sizeof spec);
	void *config = NULL;
	if (rc == 0) {
		if (err)
			err->msg[0] = '\0';
		rc = cls->configure(opts, &config, &spec, err);
		/* A class that fails without saying why (or returns a positive
		 * code, not in the contract: what it made is freed) still gets
		 * a message, and a negative code. */
		if (rc > 0 && config && cls->free_config)
			cls->free_config(config);
		if (rc != 0 && (!err || !err->msg[0] || rc > 0))
			rc = seed_err_set(err, rc < 0 ? rc : -EINVAL, "%s: configure failed (returned %d)",
			                  who, rc);
	}
	json_decref(opts);
	if (rc < 0)
		return rc;
	rc = check_spec(cls, who, &spec, err);
	if (rc < 0) {
		if (cls->free_config)
			cls->free_config(config);
		return rc;
	}
	if (max_steps >= 0)
		spec.max_steps = (int)max_steps;
	if (!cls->render_rgb)
		spec.rgb_width = spec.rgb_height = 0;

	seed_envs *e = seed_xcalloc(1, sizeof *e);
	e->cls = cls;
	e->config = config;
	e->spec = spec;
	e->num = num;
	e->obs_bytes = seed_env_spec_obs_bytes(&spec);
	e->stride = (cls->state_size + 63) / 64 * 64;
	e->state = seed_xaligned(e->stride * (size_t)num);
	memset(e->state, 0, e->stride * (size_t)num);
	e->rng = seed_xmalloc((size_t)num * sizeof *e->rng);
	for (int i = 0; i < num; i++)
		seed_rng_init(&e->rng[i], seed, (uint64_t)i);
	e->ep_return = seed_xcalloc((size_t)num, sizeof *e->ep_return);
	e->ep_length = seed_xcalloc((size_t)num, sizeof *e->ep_length);
	if (cls->render_rgb) {
		e->final_state = seed_xaligned(e->stride * (size_t)num);
		memset(e->final_state, 0, e->stride * (size_t)num);
		e->has_final = seed_xcalloc((size_t)num, sizeof *e->has_final);
	}
	if (spec.action_space == SEED_ACTIONS_BOX)
		e->last_obs = seed_xcalloc((size_t)num, e->obs_bytes);
	*out = e;
	return 0;
}

void seed_envs_free(seed_envs **ep)
{
	if (!ep || !*ep)
		return;
	seed_envs *e = *ep;
	if (e->cls->free_state)
		for (int i = 0; i < e->num; i++)
			e->cls->free_state(e->config, e->state + (size_t)i * e->stride);
	if (e->cls->free_config)
		e->cls->free_config(e->config);
	free(e->state);
	free(e->rng);
	free(e->ep_return);
	free(e->ep_length);
	free(e->final_state);
	free(e->has_final);
	free(e->last_obs);
	free(e);
	*ep = NULL;
}

const seed_env_spec *seed_envs_spec(const seed_envs *e)
{
	return &e->spec;
}

int seed_env_probe(const char *name, const char *options, seed_env_spec *spec, seed_err *err)
{
	if (strncmp(name, "gym:", 4) == 0)
		return seed_env_gym_spec(name, options, spec, err);
	seed_envs *probe;
	int rc = seed_envs_new(&probe, name, options, 1, 0, err);
	if (rc)
		return rc;
	*spec = probe->spec;
	seed_envs_free(&probe);
	return 0;
}

int seed_envs_num(const seed_envs *e)
{
	return e->num;
}

const seed_env_class *seed_envs_class(const seed_envs *e)
{
	return e->cls;
}

static inline void reset_one(seed_envs *e, int i, void *obs)
{
	/* State is zeroed once, at creation, not here: some games keep what
	 * must survive episodes (MinAtar's sticky last action). */
	void *st = e->state + (size_t)i * e->stride;
	e->cls->reset(e->config, st, &e->rng[i], obs);
	if (e->last_obs)
		memcpy(e->last_obs + (size_t)i * e->obs_bytes, obs, e->obs_bytes);
	e->ep_return[i] = 0;
	e->ep_length[i] = 0;
}

void seed_envs_reset(seed_envs *e, void *obs)
{
	for (int i = 0; i < e->num; i++)
		reset_one(e, i, (uint8_t *)obs + (size_t)i * e->obs_bytes);
	if (e->has_final)
		memset(e->has_final, 0, (size_t)e->num * sizeof *e->has_final);
	e->was_reset = true;
}

int seed_envs_restart(seed_envs *e, int i, void *obs)
{
	if (!e->was_reset || i < 0 || i >= e->num)
		return -EINVAL;
	reset_one(e, i, obs);
	return 0;
}

int seed_envs_restart_seeded(seed_envs *e, int i, uint64_t seed, void *obs)
{
	if (!e->was_reset || i < 0 || i >= e->num)
		return -EINVAL;
	seed_rng_init(&e->rng[i], seed, 0);
	reset_one(e, i, obs);
	return 0;
}

/* What every step does after the class stepped env k (row i of the
 * outputs) to observation o with reward r: the episode's totals, the
 * time limit (or a forced truncation), and the reset of an ended episode. */
static inline void end_step(seed_envs *e, int i, int k, uint8_t *o, float r, bool term, bool force_trunc,
                            float *reward, uint8_t *terminated, uint8_t *truncated, void *final_obs,
                            float *ep_return, int32_t *ep_length)
{
	const size_t ob = e->obs_bytes;
	const int32_t max_steps = e->spec.max_steps;
	double ret = e->ep_return[k] + r;
	int32_t len = e->ep_length[k] + 1;
	bool trunc = force_trunc || (max_steps > 0 && len >= max_steps);
	reward[i] = r;
	terminated[i] = term;
	truncated[i] = trunc;
	if (ep_return)
		ep_return[i] = (float)ret;
	if (ep_length)
		ep_length[i] = len;
	if (term || trunc) {
		if (final_obs)
			memcpy((uint8_t *)final_obs + (size_t)i * ob, o, ob);
		if (e->final_state) {
			memcpy(e->final_state + (size_t)k * e->stride, e->state + (size_t)k * e->stride,
			       e->cls->state_size);
			e->has_final[k] = true;
		}
		reset_one(e, k, o);
	} else {
		e->ep_return[k] = ret;
		e->ep_length[k] = len;
	}
}

int seed_envs_step(seed_envs *e, int first, int count, const int32_t *actions, void *obs, float *reward,
                   uint8_t *terminated, uint8_t *truncated, void *final_obs, float *ep_return,
                   int32_t *ep_length)
{
	if (!e->was_reset || first < 0 || count < 0 || first > e->num - count ||
	    e->spec.action_space != SEED_ACTIONS_DISCRETE)
		return -EINVAL;
	const int na = e->spec.num_actions;
	for (int i = 0; i < count; i++)
		if (actions[i] < 0 || actions[i] >= na)
			return -EINVAL;

	const seed_env_class *cls = e->cls;
	const size_t ob = e->obs_bytes;
	for (int i = 0; i < count; i++) {
		const int k = first + i;
		uint8_t *o = (uint8_t *)obs + (size_t)i * ob;
		float r = 0;
		bool term = false;
		cls->step(e->config, e->state + (size_t)k * e->stride, &e->rng[k], actions[i], o, &r, &term);
		end_step(e, i, k, o, r, term, false, reward, terminated, truncated, final_obs, ep_return,
		         ep_length);
	}
	return 0;
}

static bool all_finite(const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

int seed_envs_step_box(seed_envs *e, int first, int count, const float *actions, void *obs, float *reward,
                       uint8_t *terminated, uint8_t *truncated, void *final_obs, float *ep_return,
                       int32_t *ep_length)
{
	if (!e->was_reset || first < 0 || count < 0 || first > e->num - count ||
	    e->spec.action_space != SEED_ACTIONS_BOX)
		return -EINVAL;
	const int na = e->spec.num_actions;
	if (!all_finite(actions, (size_t)count * (size_t)na))
		return -EINVAL;

	const seed_env_class *cls = e->cls;
	const size_t ob = e->obs_bytes;
	const bool f32 = e->spec.obs_dtype == SEED_DTYPE_F32;
	for (int i = 0; i < count; i++) {
		const int k = first + i;
		uint8_t *o = (uint8_t *)obs + (size_t)i * ob;
		uint8_t *last = e->last_obs + (size_t)k * ob;
		float r = 0;
		bool term = false;
		int st = cls->step_box(e->config, e->state + (size_t)k * e->stride, &e->rng[k],
		                       actions + (size_t)i * (size_t)na, o, &r, &term);
		bool unstable = st == SEED_ENV_UNSTABLE || !isfinite(r) ||
		                (f32 && !all_finite((const float *)(const void *)o, ob / sizeof(float)));
		if (unstable) {
			/* The last finite observation stands for the episode's end. */
			memcpy(o, last, ob);
			r = 0;
			term = false;
			e->unstable++;
		}
		end_step(e, i, k, o, r, term, unstable, reward, terminated, truncated, final_obs, ep_return,
		         ep_length);
		memcpy(last, o, ob);
	}
	return 0;
}

int64_t seed_envs_unstable(const seed_envs *e)
{
	return e->unstable;
}

int seed_envs_render_text(const seed_envs *e, int i, char *buf, size_t len)
{
	if (i < 0 || i >= e->num)
		return -EINVAL;
	if (!e->cls->render_text)
		return -ENOTSUP;
	return e->cls->render_text(e->config, e->state + (size_t)i * e->stride, buf, len);
}

/* The sentence of seed_env_rgb_set_why, one per thread: the class and its
 * caller run on the same one. */
static _Thread_local char rgb_why[512];

const char *seed_env_rgb_why(void)
{
	return rgb_why[0] ? rgb_why : NULL;
}

void seed_env_rgb_set_why(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rgb_why, sizeof rgb_why, fmt, ap);
	va_end(ap);
}

static int render_rgb(const seed_envs *e, const uint8_t *state, uint8_t *rgb, int width, int height)
{
	rgb_why[0] = '\0';
	if (!e->cls->render_rgb)
		return -ENOTSUP;
	if (width < 1 || width > SEED_ENV_MAX_RGB || height < 1 || height > SEED_ENV_MAX_RGB)
		return -EINVAL;
	return e->cls->render_rgb(e->config, state, rgb, width, height);
}

int seed_envs_render_rgb(const seed_envs *e, int i, uint8_t *rgb, int width, int height)
{
	if (i < 0 || i >= e->num)
		return -EINVAL;
	return render_rgb(e, e->state + (size_t)i * e->stride, rgb, width, height);
}

int seed_envs_render_rgb_final(const seed_envs *e, int i, uint8_t *rgb, int width, int height)
{
	if (i < 0 || i >= e->num)
		return -EINVAL;
	if (!e->cls->render_rgb)
		return -ENOTSUP;
	if (!e->has_final[i])
		return -ENOENT;
	return render_rgb(e, e->final_state + (size_t)i * e->stride, rgb, width, height);
}
