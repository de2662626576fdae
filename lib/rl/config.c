/* config.c: loading, overriding and checking training configurations
 * (seed/config.h, seed-config(5)).
 *
 * The key tables below are the whole vocabulary: check_keys refuses
 * anything else.  parse() reads with typed getters that name the dotted key
 * in every message, and only when everything has been checked writes the
 * resolved values back, so a failed parse leaves the object as it was.
 */
#include "seed/config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seed/buf.h"

int seed_config_load(const char *name, const char *const *dirs, json_t **root, seed_err *err)
{
	bool is_path = strchr(name, '/') || strstr(name, ".json");
	char path[4096], tried[1024] = "";
	size_t at = 0;
	for (int i = 0; is_path ? i < 1 : dirs && dirs[i]; i++) {
		if (is_path)
			snprintf(path, sizeof path, "%s", name);
		else
			snprintf(path, sizeof path, "%s/%s.json", dirs[i], name);
		if (!is_path && at < sizeof tried)
			at += (size_t)snprintf(tried + at, sizeof tried - at, "%s%s", i ? ", " : "", dirs[i]);
		if (access(path, R_OK) != 0) {
			if (is_path)
				return seed_err_set(err, -errno, "%s: %s", path, strerror(errno));
			continue;
		}
		json_error_t je;
		json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			return seed_err_set(err, -SEED_EOPTION, "%s:%d:%d: %s", path, je.line, je.column,
			                    je.text);
		if (!json_is_object(j)) {
			json_decref(j);
			return seed_err_set(err, -SEED_EOPTION, "%s: a configuration is a JSON object", path);
		}
		*root = j;
		return 0;
	}
	return seed_err_set(err, -ENOENT, "no preset called '%s' (looked in %s)", name,
	                    *tried ? tried : "no directory");
}

int seed_config_resolve(const json_t *base, const char *name_or_path, const char *const *dirs,
                        const char *const *sets, int nsets, seed_config *c, seed_err *err)
{
	memset(c, 0, sizeof *c);
	json_t *root = NULL;
	int rc = 0;
	if (base && json_is_object(base))
		root = json_deep_copy(base);
	else if (base)
		rc = seed_err_set(err, -SEED_EOPTION, "the checkpoint's configuration is not a JSON object");
	else
		rc = seed_config_load(name_or_path, dirs, &root, err);
	for (int i = 0; rc == 0 && i < nsets; i++)
		if (seed_config_set(root, sets[i], err))
			rc = -EINVAL; /* a malformed assignment: the caller's usage error */
	if (rc == 0)
		rc = seed_config_parse(root, c, err);
	if (rc)
		json_decref(root);
	return rc;
}

char *seed_config_text(json_t *root, const char *key, seed_err *err)
{
	json_t *v = key ? seed_config_get(root, key) : root;
	if (!v) {
		seed_err_set(err, -ENOENT, "the configuration has no key '%s'", key);
		return NULL;
	}
	if (json_is_string(v))
		return strcpy(seed_xmalloc(strlen(json_string_value(v)) + 1), json_string_value(v));
	char *text = json_dumps(v, key ? JSON_COMPACT | JSON_ENCODE_ANY : JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		seed_oom(0);
	return text;
}

int seed_config_set(json_t *root, const char *assignment, seed_err *err)
{
	const char *eq = strchr(assignment, '=');
	if (!eq || eq == assignment)
		return seed_err_set(err, -SEED_EOPTION, "--set %s: expected KEY=VALUE", assignment);
	char key[256];
	size_t klen = (size_t)(eq - assignment);
	if (klen >= sizeof key)
		return seed_err_set(err, -SEED_EOPTION, "--set: key too long (%zu bytes)", klen);
	memcpy(key, assignment, klen);
	key[klen] = '\0';
	/* Refuse an empty part before creating any object, so that a bad key
	 * changes nothing. */
	if (key[0] == '.' || key[klen - 1] == '.' || strstr(key, ".."))
		return seed_err_set(err, -SEED_EOPTION, "--set %s: empty part in the key", assignment);
	/* jansson takes only UTF-8 keys: setting another fails, which would
	 * drop the value silently or, for a part that names an object, free
	 * the object about to be filled. */
	json_t *k = json_stringn(key, klen);
	if (!k)
		return seed_err_set(err, -SEED_EOPTION, "--set %s: the key is not UTF-8", assignment);
	json_decref(k);
	json_t *obj = root;
	char *part = key;
	for (;;) {
		char *dot = strchr(part, '.');
		if (dot)
			*dot = '\0';
		if (!dot)
			break;
		json_t *child = json_object_get(obj, part);
		if (child && !json_is_object(child))
			return seed_err_set(err, -SEED_EOPTION, "--set %s: '%s' is not an object", assignment,
			                    part);
		if (!child) {
			child = json_object();
			json_object_set_new(obj, part, child);
		}
		obj = child;
		part = dot + 1;
	}
	json_error_t je;
	json_t *v = json_loads(eq + 1, JSON_DECODE_ANY, &je);
	if (!v)
		v = json_string(eq + 1); /* a bare word is a string */
	if (!v)
		return seed_err_set(err, -SEED_EOPTION, "--set %s: the value is not UTF-8", assignment);
	json_object_set_new(obj, part, v);
	return 0;
}

/* Key tables: everything a configuration may hold, for the unknown-key check. */
static const char *top_keys[] = {"env",
                                 "env_options",
                                 "model",
                                 "seed",
                                 "discount",
                                 "unroll_length",
                                 "batch_size",
                                 "optimizer",
                                 "max_grad_norm",
                                 "loss",
                                 "total_frames",
                                 "target_return",
                                 "return_window",
                                 "checkpoint_interval",
                                 "checkpoint_failure",
                                 "metrics_interval",
                                 "actors",
                                 "envs_per_actor",
                                 "infer",
                                 "eval_episodes",
                                 "eval_max_episode_steps",
                                 "periodic_eval",
                                 "description",
                                 "algorithm",
                                 "r2d2",
                                 "replay",
                                 "ppo",
                                 "evolution",
                                 NULL};
static const char *optim_keys[] = {"kind", "lr",    "lr_decay", "lr_min", "beta1", "beta2",
                                   "eps",  "decay", "momentum", "style",  NULL};
static const char *loss_keys[] = {"baseline_cost", "entropy_cost", "clip_rho", "clip_pg_rho",
                                  "lambda",        "reduce",       NULL};
static const char *infer_keys[] = {"max_batch", "timeout_us", "hwm", NULL};
static const char *periodic_eval_keys[] = {"interval", "episodes", "target", NULL};
static const char *r2d2_keys[] = {
    "burn_in",      "n_step",        "target_update_period", "eta", "value_rescale_eps",
    "epsilon_base", "epsilon_alpha", "eval_epsilon",         NULL};
static const char *ppo_keys[] = {"epochs",       "minibatches", "clip",   "clip_value",
                                 "value_clip",   "value_cost",  "lambda", "normalize_advantages",
                                 "entropy_cost", NULL};
static const char *evolution_keys[] = {"population",
                                       "episodes",
                                       "sigma",
                                       "rank",
                                       "noise_seed",
                                       "noise_size",
                                       "lr",
                                       "l2",
                                       "truncation",
                                       "elite_candidates",
                                       "elite_episodes",
                                       "episode_cap",
                                       "generation_deadline",
                                       "greedy",
                                       NULL};
static const char *replay_keys[] = {"capacity",           "min_size",  "alpha", "beta",
                                    "samples_per_insert", "tolerance", NULL};

static int check_keys(const json_t *obj, const char **keys, const char *where, seed_err *err)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		bool ok = false;
		for (int i = 0; keys[i]; i++)
			ok |= strcmp(keys[i], k) == 0;
		if (!ok)
			return seed_err_set(err, -SEED_EOPTION, "config: unknown key '%s%s%s'", where,
			                    *where ? "." : "", k);
	}
	return 0;
}

/* Typed getters with defaults and range checks; 0 or -SEED_EOPTION. */
static int get_num(const json_t *obj, const char *where, const char *key, double dflt, double lo, double hi,
                   double *out, seed_err *err)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_number(v))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s%s%s' must be a number", where,
		                    *where ? "." : "", key);
	double x = json_number_value(v);
	if (!(x >= lo && x <= hi))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s%s%s' = %g is out of range [%g, %g]",
		                    where, *where ? "." : "", key, x, lo, hi);
	*out = x;
	return 0;
}

static int get_int(const json_t *obj, const char *where, const char *key, int64_t dflt, int64_t lo,
                   int64_t hi, int64_t *out, seed_err *err)
{
	/* JSON integers exactly: through a double, seeds past 2^53 would
	 * silently become other seeds. */
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < lo || x > hi)
			return seed_err_set(
			    err, -SEED_EOPTION, "config: '%s%s%s' = %lld is out of range [%lld, %lld]", where,
			    *where ? "." : "", key, (long long)x, (long long)lo, (long long)hi);
		*out = x;
		return 0;
	}
	double x;
	int rc = get_num(obj, where, key, (double)dflt, (double)lo, (double)hi, &x, err);
	if (rc)
		return rc;
	if (x != floor(x))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s%s%s' must be an integer", where,
		                    *where ? "." : "", key);
	*out = v && !json_is_null(v) ? (int64_t)x : dflt;
	return 0;
}

static int get_bool(const json_t *obj, const char *where, const char *key, bool dflt, bool *out,
                    seed_err *err)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s%s%s' must be true or false", where,
		                    *where ? "." : "", key);
	*out = json_is_true(v);
	return 0;
}

/* A float as JSON with the digits it was written with (0.99, not
 * 0.99000000953674316). */
static json_t *jf(double x)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%.7g", x);
	return json_real(strtod(buf, NULL));
}

#define TRY(x)                                                                                               \
	do {                                                                                                 \
		int rc_ = (x);                                                                               \
		if (rc_)                                                                                     \
			return rc_;                                                                          \
	} while (0)

/* The "evolution" object (seed-config(5)): its defaults, ranges and the
 * checks across keys, for any algorithm (an es/ga/rs run writes it back). */
static int parse_evolution(json_t *root, seed_config *c, seed_err *err)
{
	seed_config_evolution *e = &c->evolution;
	json_t *ev = json_object_get(root, "evolution");
	if (ev && !json_is_object(ev))
		return seed_err_set(err, -SEED_EOPTION, "config: 'evolution' must be an object");
	if (ev)
		TRY(check_keys(ev, evolution_keys, "evolution", err));
	int64_t i64;
	double d;
	bool es = c->algorithm == SEED_CONFIG_ES, ga = c->algorithm == SEED_CONFIG_GA;
	TRY(get_int(ev, "evolution", "population", ga ? 1000 : 256, 1, 1 << 20, &i64, err));
	e->population = (int)i64;
	if (es && e->population % 2)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.population' = %d must be even for algorithm es "
		                    "(its members are antithetic pairs)",
		                    e->population);
	TRY(get_int(ev, "evolution", "episodes", 1, 1, 1 << 20, &i64, err));
	e->episodes = (int)i64;
	TRY(get_num(ev, "evolution", "sigma", ga ? 0.002 : 0.02, 0, 1e6, &e->sigma, err));
	if (es && !(e->sigma > 0))
		return seed_err_set(
		    err, -SEED_EOPTION,
		    "config: 'evolution.sigma' = 0 leaves algorithm es nothing to explore: it "
		    "must be more than 0");
	TRY(get_int(ev, "evolution", "rank", 0, 0, 1 << 16, &i64, err));
	e->rank = (int)i64;
	TRY(get_int(ev, "evolution", "noise_seed", 0, 0, INT64_MAX, &i64, err));
	e->noise_seed = (uint64_t)i64;
	TRY(get_int(ev, "evolution", "noise_size", 1 << 24, 1, INT32_MAX, &e->noise_size, err));
	TRY(get_num(ev, "evolution", "lr", 0.01, 0, 10, &d, err));
	e->lr = (float)d;
	TRY(get_num(ev, "evolution", "l2", 0.005, 0, 1e6, &d, err));
	e->l2 = (float)d;
	TRY(get_int(ev, "evolution", "truncation", e->population < 20 ? e->population : 20, 1, 1 << 20, &i64,
	            err));
	e->truncation = (int)i64;
	if (e->truncation > e->population)
		return seed_err_set(
		    err, -SEED_EOPTION,
		    "config: 'evolution.truncation' = %d is more than 'evolution.population' = %d",
		    e->truncation, e->population);
	TRY(get_int(ev, "evolution", "elite_candidates", e->population < 10 ? e->population : 10, 0, 1 << 20,
	            &i64, err));
	e->elite_candidates = (int)i64;
	if (e->elite_candidates > e->population)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.elite_candidates' = %d is more than "
		                    "'evolution.population' = %d",
		                    e->elite_candidates, e->population);
	TRY(get_int(ev, "evolution", "elite_episodes", 30, 1, 1 << 20, &i64, err));
	e->elite_episodes = (int)i64;
	TRY(get_int(ev, "evolution", "episode_cap", 0, 0, INT32_MAX, &i64, err));
	e->episode_cap = (int)i64;
	TRY(get_num(ev, "evolution", "generation_deadline", 60, 0, 1e9, &e->generation_deadline, err));
	TRY(get_bool(ev, "evolution", "greedy", true, &e->greedy, err));
	return 0;
}

/* Write the evolution settings back into root (an es/ga/rs run). */
static void write_evolution(json_t *root, const seed_config_evolution *e)
{
	json_t *o = json_object_get(root, "evolution");
	if (!o) {
		o = json_object();
		json_object_set_new(root, "evolution", o);
	}
	json_object_set_new(o, "population", json_integer(e->population));
	json_object_set_new(o, "episodes", json_integer(e->episodes));
	json_object_set_new(o, "sigma", jf(e->sigma));
	json_object_set_new(o, "rank", json_integer(e->rank));
	json_object_set_new(o, "noise_seed", json_integer((json_int_t)e->noise_seed));
	json_object_set_new(o, "noise_size", json_integer(e->noise_size));
	json_object_set_new(o, "lr", jf(e->lr));
	json_object_set_new(o, "l2", jf(e->l2));
	json_object_set_new(o, "truncation", json_integer(e->truncation));
	json_object_set_new(o, "elite_candidates", json_integer(e->elite_candidates));
	json_object_set_new(o, "elite_episodes", json_integer(e->elite_episodes));
	json_object_set_new(o, "episode_cap", json_integer(e->episode_cap));
	json_object_set_new(o, "generation_deadline", jf(e->generation_deadline));
	json_object_set_new(o, "greedy", json_boolean(e->greedy));
}

static int parse(json_t *root, seed_config *c, seed_err *err)
{
	memset(c, 0, sizeof *c);
	TRY(check_keys(root, top_keys, "", err));
	json_t *v = json_object_get(root, "env");
	if (!json_is_string(v))
		return seed_err_set(err, -SEED_EOPTION, "config: 'env' (the environment's name) is required");
	c->env = json_string_value(v);
	v = json_object_get(root, "env_options");
	if (v && !json_is_object(v))
		return seed_err_set(err, -SEED_EOPTION, "config: 'env_options' must be an object");
	c->env_options = v ? json_dumps(v, JSON_COMPACT) : strcpy(seed_xmalloc(3), "{}");
	v = json_object_get(root, "model");
	if (!json_is_object(v))
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'model' (an object with a torso) is required");
	c->model = json_dumps(v, JSON_COMPACT);

	int64_t i64;
	double d;
	TRY(get_int(root, "", "seed", 0, 0, INT64_MAX, &i64, err));
	c->seed = (uint64_t)i64;
	TRY(get_num(root, "", "discount", 0.99, 0, 1, &d, err));
	c->discount = (float)d;
	TRY(get_int(root, "", "unroll_length", 20, 1, 10000, &i64, err));
	c->unroll_length = (int)i64;
	TRY(get_int(root, "", "batch_size", 32, 1, 1 << 20, &i64, err));
	c->batch_size = (int)i64;
	TRY(get_num(root, "", "max_grad_norm", 40, 0, 1e30, &d, err));
	c->max_grad_norm = (float)d;
	TRY(get_int(root, "", "total_frames", 5000000, 1, INT64_MAX / 2, &c->total_frames, err));
	v = json_object_get(root, "target_return");
	if (v && !json_is_null(v)) {
		TRY(get_num(root, "", "target_return", 0, -1e300, 1e300, &c->target_return, err));
	} else {
		c->target_return = NAN;
	}
	TRY(get_int(root, "", "return_window", 100, 1, 1000000, &i64, err));
	c->return_window = (int)i64;
	TRY(get_num(root, "", "checkpoint_interval", 30, 0, 1e9, &c->checkpoint_interval, err));
	TRY(get_num(root, "", "metrics_interval", 1, 0, 1e9, &c->metrics_interval, err));
	v = json_object_get(root, "checkpoint_failure");
	if (v && !json_is_null(v)) {
		const char *s = json_string_value(v);
		if (s && strcmp(s, "stop") == 0)
			c->checkpoint_failure = SEED_CONFIG_CKPT_STOP;
		else if (s && strcmp(s, "continue") == 0)
			c->checkpoint_failure = SEED_CONFIG_CKPT_CONTINUE;
		else
			return seed_err_set(err, -SEED_EOPTION,
			                    "config: 'checkpoint_failure' must be \"stop\" or \"continue\"");
	}
	TRY(get_int(root, "", "actors", 2, 1, 100000, &i64, err));
	c->actors = (int)i64;
	TRY(get_int(root, "", "envs_per_actor", 64, 1, 1 << 20, &i64, err));
	c->envs_per_actor = (int)i64;
	TRY(get_int(root, "", "eval_episodes", 100, 1, 1 << 30, &i64, err));
	c->eval_episodes = (int)i64;
	TRY(get_int(root, "", "eval_max_episode_steps", 27000, 0, INT32_MAX, &i64, err));
	c->eval_max_episode_steps = (int)i64;

	v = json_object_get(root, "algorithm");
	if (v && !json_is_null(v)) {
		const char *s = json_string_value(v);
		if (s && strcmp(s, "vtrace") == 0)
			c->algorithm = SEED_CONFIG_VTRACE;
		else if (s && strcmp(s, "r2d2") == 0)
			c->algorithm = SEED_CONFIG_R2D2;
		else if (s && strcmp(s, "ppo") == 0)
			c->algorithm = SEED_CONFIG_PPO;
		else if (s && strcmp(s, "es") == 0)
			c->algorithm = SEED_CONFIG_ES;
		else if (s && strcmp(s, "ga") == 0)
			c->algorithm = SEED_CONFIG_GA;
		else if (s && strcmp(s, "rs") == 0)
			c->algorithm = SEED_CONFIG_RS;
		else
			return seed_err_set(
			    err, -SEED_EOPTION,
			    "config: 'algorithm' must be \"vtrace\", \"r2d2\", \"ppo\", \"es\", "
			    "\"ga\" or \"rs\"");
	}
	TRY(parse_evolution(root, c, err));
	json_t *pp = json_object_get(root, "ppo");
	if (pp && !json_is_object(pp))
		return seed_err_set(err, -SEED_EOPTION, "config: 'ppo' must be an object");
	if (pp)
		TRY(check_keys(pp, ppo_keys, "ppo", err));
	seed_ppo_config_default(&c->ppo);
	TRY(get_int(pp, "ppo", "epochs", c->ppo.epochs, 1, 10000, &i64, err));
	c->ppo.epochs = (int)i64;
	TRY(get_int(pp, "ppo", "minibatches", c->ppo.minibatches, 1, 1 << 24, &i64, err));
	c->ppo.minibatches = (int)i64;
	if (c->algorithm == SEED_CONFIG_PPO &&
	    (int64_t)c->unroll_length * c->batch_size % c->ppo.minibatches != 0)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'ppo.minibatches' = %d does not divide the %lld transitions "
		                    "of a batch ('unroll_length' %d x 'batch_size' %d)",
		                    c->ppo.minibatches, (long long)c->unroll_length * c->batch_size,
		                    c->unroll_length, c->batch_size);
	TRY(get_num(pp, "ppo", "clip", c->ppo.clip, 0, 1e6, &d, err));
	c->ppo.clip = (float)d;
	TRY(get_bool(pp, "ppo", "clip_value", c->ppo.clip_value, &c->ppo.clip_value, err));
	TRY(get_num(pp, "ppo", "value_clip", c->ppo.value_clip, 0, 1e30, &d, err));
	c->ppo.value_clip = (float)d;
	TRY(get_num(pp, "ppo", "value_cost", c->ppo.value_cost, 0, 1e6, &d, err));
	c->ppo.value_cost = (float)d;
	TRY(get_num(pp, "ppo", "entropy_cost", c->ppo.entropy_cost, 0, 1e6, &d, err));
	c->ppo.entropy_cost = (float)d;
	TRY(get_num(pp, "ppo", "lambda", c->ppo.lambda, 0, 1, &d, err));
	c->ppo.lambda = (float)d;
	TRY(get_bool(pp, "ppo", "normalize_advantages", c->ppo.normalize_advantages,
	             &c->ppo.normalize_advantages, err));
	json_t *r2 = json_object_get(root, "r2d2");
	if (r2 && !json_is_object(r2))
		return seed_err_set(err, -SEED_EOPTION, "config: 'r2d2' must be an object");
	if (r2)
		TRY(check_keys(r2, r2d2_keys, "r2d2", err));
	TRY(get_int(r2, "r2d2", "burn_in", 0, 0, 10000, &i64, err));
	c->r2d2.burn_in = (int)i64;
	if (c->r2d2.burn_in >= c->unroll_length)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'r2d2.burn_in' = %d leaves no step to train on: it must be "
		                    "less than 'unroll_length' = %d",
		                    c->r2d2.burn_in, c->unroll_length);
	TRY(get_int(r2, "r2d2", "n_step", 5, 1, 10000, &i64, err));
	c->r2d2.n_step = (int)i64;
	TRY(get_int(r2, "r2d2", "target_update_period", 2500, 1, INT32_MAX, &i64, err));
	c->r2d2.target_update_period = (int)i64;
	TRY(get_num(r2, "r2d2", "eta", 0.9, 0, 1, &d, err));
	c->r2d2.eta = (float)d;
	TRY(get_num(r2, "r2d2", "value_rescale_eps", 1e-3, 0, 1, &d, err));
	c->r2d2.value_rescale_eps = (float)d;
	TRY(get_num(r2, "r2d2", "epsilon_base", 0.4, 0, 1, &c->r2d2.epsilon_base, err));
	TRY(get_num(r2, "r2d2", "epsilon_alpha", 7, 0, 1000, &c->r2d2.epsilon_alpha, err));
	TRY(get_num(r2, "r2d2", "eval_epsilon", 1e-3, 0, 1, &c->r2d2.eval_epsilon, err));

	json_t *rp = json_object_get(root, "replay");
	if (rp && !json_is_object(rp))
		return seed_err_set(err, -SEED_EOPTION, "config: 'replay' must be an object");
	if (rp)
		TRY(check_keys(rp, replay_keys, "replay", err));
	TRY(get_int(rp, "replay", "capacity", 100000, 1, INT64_C(1) << 32, &c->replay.capacity, err));
	TRY(get_int(rp, "replay", "min_size", 1000, 1, INT64_C(1) << 32, &c->replay.min_size, err));
	if (c->replay.min_size > c->replay.capacity)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'replay.min_size' = %lld is more than 'replay.capacity' = %lld",
		                    (long long)c->replay.min_size, (long long)c->replay.capacity);
	TRY(get_num(rp, "replay", "alpha", 0.9, 0, 100, &c->replay.alpha, err));
	TRY(get_num(rp, "replay", "beta", 0.6, 0, 100, &c->replay.beta, err));
	TRY(get_num(rp, "replay", "samples_per_insert", 1, 0, 1e9, &c->replay.samples_per_insert, err));
	TRY(get_num(rp, "replay", "tolerance", 1024, 0, 1e15, &c->replay.tolerance, err));

	json_t *inf = json_object_get(root, "infer");
	if (inf && !json_is_object(inf))
		return seed_err_set(err, -SEED_EOPTION, "config: 'infer' must be an object");
	if (inf)
		TRY(check_keys(inf, infer_keys, "infer", err));
	TRY(get_int(inf, "infer", "max_batch", 256, 1, 1 << 24, &i64, err));
	c->infer_max_batch = (int)i64;
	TRY(get_int(inf, "infer", "timeout_us", 500, 0, 60000000, &i64, err));
	c->infer_timeout_us = (int)i64;
	TRY(get_int(inf, "infer", "hwm", 64, 1, 1 << 20, &i64, err));
	c->infer_hwm = (int)i64;

	json_t *pe = json_object_get(root, "periodic_eval");
	if (pe && !json_is_object(pe))
		return seed_err_set(err, -SEED_EOPTION, "config: 'periodic_eval' must be an object");
	if (pe)
		TRY(check_keys(pe, periodic_eval_keys, "periodic_eval", err));
	TRY(get_num(pe, "periodic_eval", "interval", 0, 0, 1e9, &c->periodic_eval.interval, err));
	TRY(get_int(pe, "periodic_eval", "episodes", 20, 1, 1 << 30, &i64, err));
	c->periodic_eval.episodes = (int)i64;
	v = pe ? json_object_get(pe, "target") : NULL;
	if (v && !json_is_null(v))
		TRY(get_num(pe, "periodic_eval", "target", 0, -1e300, 1e300, &c->periodic_eval.target, err));
	else
		c->periodic_eval.target = NAN;

	json_t *opt = json_object_get(root, "optimizer");
	if (opt && !json_is_object(opt))
		return seed_err_set(err, -SEED_EOPTION, "config: 'optimizer' must be an object");
	if (opt)
		TRY(check_keys(opt, optim_keys, "optimizer", err));
	const char *kind = "adam";
	v = opt ? json_object_get(opt, "kind") : NULL;
	if (v) {
		if (!json_is_string(v))
			return seed_err_set(err, -SEED_EOPTION, "config: 'optimizer.kind' must be a string");
		kind = json_string_value(v);
	}
	if (strcmp(kind, "adam") == 0)
		seed_optim_config_default(&c->optim, SEED_OPTIM_ADAM);
	else if (strcmp(kind, "rmsprop") == 0)
		seed_optim_config_default(&c->optim, SEED_OPTIM_RMSPROP);
	else
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'optimizer.kind' = '%s' (known: adam, rmsprop)", kind);
	TRY(get_num(opt, "optimizer", "lr", 6e-4, 0, 10, &d, err));
	c->lr = (float)d;
	TRY(get_num(opt, "optimizer", "lr_min", 0, 0, 10, &d, err));
	c->lr_min = (float)d;
	TRY(get_bool(opt, "optimizer", "lr_decay", true, &c->lr_decay, err));
	TRY(get_num(opt, "optimizer", "beta1", c->optim.beta1, 0, 0.999999, &d, err));
	c->optim.beta1 = (float)d;
	TRY(get_num(opt, "optimizer", "beta2", c->optim.beta2, 0, 0.999999, &d, err));
	c->optim.beta2 = (float)d;
	TRY(get_num(opt, "optimizer", "eps", c->optim.eps, 0, 1, &d, err));
	c->optim.eps = (float)d;
	TRY(get_num(opt, "optimizer", "decay", c->optim.decay, 0, 0.999999, &d, err));
	c->optim.decay = (float)d;
	TRY(get_num(opt, "optimizer", "momentum", c->optim.momentum, 0, 0.999999, &d, err));
	c->optim.momentum = (float)d;
	v = opt ? json_object_get(opt, "style") : NULL;
	if (v) {
		const char *s = json_string_value(v);
		if (s && strcmp(s, "tf") == 0)
			c->optim.rmsprop_style = SEED_RMSPROP_TF;
		else if (s && strcmp(s, "torch") == 0)
			c->optim.rmsprop_style = SEED_RMSPROP_TORCH;
		else
			return seed_err_set(err, -SEED_EOPTION,
			                    "config: 'optimizer.style' must be \"tf\" or \"torch\"");
	}

	json_t *loss = json_object_get(root, "loss");
	if (loss && !json_is_object(loss))
		return seed_err_set(err, -SEED_EOPTION, "config: 'loss' must be an object");
	if (loss)
		TRY(check_keys(loss, loss_keys, "loss", err));
	seed_loss_config_default(&c->loss);
	TRY(get_num(loss, "loss", "baseline_cost", c->loss.baseline_cost, 0, 1e6, &d, err));
	c->loss.baseline_cost = (float)d;
	TRY(get_num(loss, "loss", "entropy_cost", c->loss.entropy_cost, 0, 1e6, &d, err));
	c->loss.entropy_cost = (float)d;
	TRY(get_num(loss, "loss", "clip_rho", c->loss.clip_rho, 0, INFINITY, &d, err));
	c->loss.clip_rho = (float)d;
	TRY(get_num(loss, "loss", "clip_pg_rho", c->loss.clip_pg_rho, 0, INFINITY, &d, err));
	c->loss.clip_pg_rho = (float)d;
	TRY(get_num(loss, "loss", "lambda", c->loss.lambda, 0, 1, &d, err));
	c->loss.lambda = (float)d;
	v = loss ? json_object_get(loss, "reduce") : NULL;
	if (v) {
		const char *s = json_string_value(v);
		if (s && strcmp(s, "mean") == 0)
			c->loss.reduce = SEED_LOSS_MEAN;
		else if (s && strcmp(s, "sum") == 0)
			c->loss.reduce = SEED_LOSS_SUM;
		else
			return seed_err_set(err, -SEED_EOPTION,
			                    "config: 'loss.reduce' must be \"mean\" or \"sum\"");
	}
	/* Write every resolved value back, so the saved configuration (and
	 * --print-config) says exactly what was trained, defaults included. */
	json_t *o = json_object_get(root, "optimizer");
	if (!o) {
		o = json_object();
		json_object_set_new(root, "optimizer", o);
	}
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "lr", jf(c->lr));
	json_object_set_new(o, "lr_min", jf(c->lr_min));
	json_object_set_new(o, "lr_decay", json_boolean(c->lr_decay));
	if (c->optim.kind == SEED_OPTIM_ADAM) {
		json_object_set_new(o, "beta1", jf(c->optim.beta1));
		json_object_set_new(o, "beta2", jf(c->optim.beta2));
	} else {
		json_object_set_new(o, "decay", jf(c->optim.decay));
		json_object_set_new(o, "momentum", jf(c->optim.momentum));
		json_object_set_new(o, "style",
		                    json_string(c->optim.rmsprop_style == SEED_RMSPROP_TF ? "tf" : "torch"));
	}
	json_object_set_new(o, "eps", jf(c->optim.eps));
	json_t *l = json_object_get(root, "loss");
	if (!l) {
		l = json_object();
		json_object_set_new(root, "loss", l);
	}
	json_object_set_new(l, "baseline_cost", jf(c->loss.baseline_cost));
	json_object_set_new(l, "entropy_cost", jf(c->loss.entropy_cost));
	json_object_set_new(l, "clip_rho", isinf(c->loss.clip_rho) ? json_null() : jf(c->loss.clip_rho));
	json_object_set_new(l, "clip_pg_rho",
	                    isinf(c->loss.clip_pg_rho) ? json_null() : jf(c->loss.clip_pg_rho));
	json_object_set_new(l, "lambda", jf(c->loss.lambda));
	json_object_set_new(l, "reduce", json_string(c->loss.reduce == SEED_LOSS_SUM ? "sum" : "mean"));
	json_t *in = json_object_get(root, "infer");
	if (!in) {
		in = json_object();
		json_object_set_new(root, "infer", in);
	}
	json_object_set_new(in, "max_batch", json_integer(c->infer_max_batch));
	json_object_set_new(in, "timeout_us", json_integer(c->infer_timeout_us));
	json_object_set_new(in, "hwm", json_integer(c->infer_hwm));
	json_t *pe_out = json_object_get(root, "periodic_eval");
	if (!pe_out) {
		pe_out = json_object();
		json_object_set_new(root, "periodic_eval", pe_out);
	}
	json_object_set_new(pe_out, "interval", jf(c->periodic_eval.interval));
	json_object_set_new(pe_out, "episodes", json_integer(c->periodic_eval.episodes));
	json_object_set_new(pe_out, "target",
	                    isnan(c->periodic_eval.target) ? json_null() : jf(c->periodic_eval.target));
	if (!json_object_get(root, "env_options"))
		json_object_set_new(root, "env_options", json_object());
	json_object_set_new(root, "algorithm", json_string(seed_config_algorithm_name(c->algorithm)));
	if (c->algorithm == SEED_CONFIG_R2D2) {
		/* Only an R2D2 run records R2D2's and the replay's settings: a
		 * V-trace run's saved configuration stays as it was. */
		json_t *o2 = json_object_get(root, "r2d2");
		if (!o2) {
			o2 = json_object();
			json_object_set_new(root, "r2d2", o2);
		}
		json_object_set_new(o2, "burn_in", json_integer(c->r2d2.burn_in));
		json_object_set_new(o2, "n_step", json_integer(c->r2d2.n_step));
		json_object_set_new(o2, "target_update_period", json_integer(c->r2d2.target_update_period));
		json_object_set_new(o2, "eta", jf(c->r2d2.eta));
		json_object_set_new(o2, "value_rescale_eps", jf(c->r2d2.value_rescale_eps));
		json_object_set_new(o2, "epsilon_base", jf(c->r2d2.epsilon_base));
		json_object_set_new(o2, "epsilon_alpha", jf(c->r2d2.epsilon_alpha));
		json_object_set_new(o2, "eval_epsilon", jf(c->r2d2.eval_epsilon));
		json_t *o3 = json_object_get(root, "replay");
		if (!o3) {
			o3 = json_object();
			json_object_set_new(root, "replay", o3);
		}
		json_object_set_new(o3, "capacity", json_integer(c->replay.capacity));
		json_object_set_new(o3, "min_size", json_integer(c->replay.min_size));
		json_object_set_new(o3, "alpha", jf(c->replay.alpha));
		json_object_set_new(o3, "beta", jf(c->replay.beta));
		json_object_set_new(o3, "samples_per_insert", jf(c->replay.samples_per_insert));
		json_object_set_new(o3, "tolerance", jf(c->replay.tolerance));
	}
	if (c->algorithm == SEED_CONFIG_PPO) {
		/* Only a PPO run records PPO's settings, as for R2D2's. */
		json_t *o4 = json_object_get(root, "ppo");
		if (!o4) {
			o4 = json_object();
			json_object_set_new(root, "ppo", o4);
		}
		json_object_set_new(o4, "epochs", json_integer(c->ppo.epochs));
		json_object_set_new(o4, "minibatches", json_integer(c->ppo.minibatches));
		json_object_set_new(o4, "clip", jf(c->ppo.clip));
		json_object_set_new(o4, "clip_value", json_boolean(c->ppo.clip_value));
		json_object_set_new(o4, "value_clip", jf(c->ppo.value_clip));
		json_object_set_new(o4, "value_cost", jf(c->ppo.value_cost));
		json_object_set_new(o4, "entropy_cost", jf(c->ppo.entropy_cost));
		json_object_set_new(o4, "lambda", jf(c->ppo.lambda));
		json_object_set_new(o4, "normalize_advantages", json_boolean(c->ppo.normalize_advantages));
	}
	if (SEED_CONFIG_IS_EVO(c->algorithm))
		write_evolution(root, &c->evolution);
	json_object_set_new(root, "seed", json_integer((json_int_t)c->seed));
	json_object_set_new(root, "discount", jf(c->discount));
	json_object_set_new(root, "unroll_length", json_integer(c->unroll_length));
	json_object_set_new(root, "batch_size", json_integer(c->batch_size));
	json_object_set_new(root, "max_grad_norm", jf(c->max_grad_norm));
	json_object_set_new(root, "total_frames", json_integer(c->total_frames));
	json_object_set_new(root, "target_return",
	                    isnan(c->target_return) ? json_null() : jf(c->target_return));
	json_object_set_new(root, "return_window", json_integer(c->return_window));
	json_object_set_new(root, "checkpoint_interval", jf(c->checkpoint_interval));
	json_object_set_new(root, "metrics_interval", jf(c->metrics_interval));
	json_object_set_new(
	    root, "checkpoint_failure",
	    json_string(c->checkpoint_failure == SEED_CONFIG_CKPT_CONTINUE ? "continue" : "stop"));
	json_object_set_new(root, "actors", json_integer(c->actors));
	json_object_set_new(root, "envs_per_actor", json_integer(c->envs_per_actor));
	json_object_set_new(root, "eval_episodes", json_integer(c->eval_episodes));
	json_object_set_new(root, "eval_max_episode_steps", json_integer(c->eval_max_episode_steps));
	c->root = root;
	return 0;
}

const char *seed_config_algorithm_name(seed_config_algorithm a)
{
	switch (a) {
	case SEED_CONFIG_R2D2:
		return "r2d2";
	case SEED_CONFIG_PPO:
		return "ppo";
	case SEED_CONFIG_ES:
		return "es";
	case SEED_CONFIG_GA:
		return "ga";
	case SEED_CONFIG_RS:
		return "rs";
	default:
		return "vtrace";
	}
}

int seed_config_parse(json_t *root, seed_config *c, seed_err *err)
{
	int rc = parse(root, c, err);
	if (rc) {
		free(c->env_options);
		free(c->model);
		memset(c, 0, sizeof *c);
	}
	return rc;
}

/* The value at a dotted key of root, or NULL. */
json_t *seed_config_get(json_t *root, const char *key)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", key);
	json_t *v = root;
	char *save = NULL;
	for (char *part = strtok_r(buf, ".", &save); part && v; part = strtok_r(NULL, ".", &save))
		v = json_is_object(v) ? json_object_get(v, part) : NULL;
	return v;
}

void seed_config_free(seed_config *c)
{
	free(c->env_options);
	free(c->model);
	json_decref(c->root);
	memset(c, 0, sizeof *c);
}
