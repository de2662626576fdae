/* config.c: loading, overriding and checking training configurations
 * (seed/config.h, seed-config(5)).
 *
 * One table, keys[] below, is the whole vocabulary: a row per key gives its
 * dotted name, type, place in struct seed_config, default, range and one
 * line of meaning.  The unknown-key check, parsing, writing the resolved
 * values back (what --print-config prints and checkpoints record) and
 * seed_config_describe (the key list seed-config(5) is tested against) all
 * read the rows; what a row cannot say, the checks across keys, is
 * check_across() after it.  A parse reads every row into the struct and
 * writes back only when everything has been checked, so a failed parse
 * leaves the object as it was.
 */
#include "seed/config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
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

/* ---- the table ------------------------------------------------------------ */

enum type {
	T_SECTION,    /* an object holding the rows named "NAME.*" */
	T_INT,        /* int */
	T_I64,        /* int64_t */
	T_U64,        /* uint64_t (from 0 to 2^63-1: JSON integers are signed) */
	T_FLOAT,      /* float */
	T_DOUBLE,     /* double */
	T_OPT_DOUBLE, /* double; null or left out: NAN, none */
	T_BOOL,       /* bool */
	T_CHOICE,     /* an enum: one of the names of choices, as a string */
	T_STRING,     /* const char *, pointing into root */
	T_OBJECT,     /* char *, the object as compact JSON text (owned) */
	T_ANY,        /* any JSON value, not read */
};

/* When a row's resolved value is written back into the configuration: a
 * run records the settings of its own algorithm and optimizer kind, not
 * the defaults of the others. */
enum when {
	W_NEVER,   /* left as given (or absent) */
	W_ALWAYS,  /* always */
	W_ABSENT,  /* only when absent (env_options: {}) */
	W_ADAM,    /* optimizer.kind adam */
	W_RMSPROP, /* optimizer.kind rmsprop */
	W_R2D2,    /* algorithm r2d2 */
	W_PPO,     /* algorithm ppo */
	W_EVO,     /* algorithm es, ga or rs */
};

enum {
	F_REQUIRED = 1, /* T_STRING, T_OBJECT: no default; refused as "'KEY' (DOC) is required" */
	F_ONE_LINE = 2, /* T_STRING: no newline */
	F_KNOWN = 4,    /* T_CHOICE: refused as "'KEY' = 'VALUE' (known: a, b)" */
};

struct choice {
	const char *name;
	int value;
};

/* One key.  The defaults of rows are those of seed-config(5) (a test holds
 * the manual to this table); dflt_of, where set, changes the default with
 * rows read before it, and dflt_note says how, for the manual. */
struct key {
	const char *name; /* dotted for a key inside a section: "optimizer.lr" */
	enum type type;
	size_t off;                   /* in seed_config */
	double dflt;                  /* numbers; T_BOOL 0 or 1; T_CHOICE the value */
	double lo, hi;                /* T_FLOAT, T_DOUBLE, T_OPT_DOUBLE */
	int64_t min, max;             /* T_INT, T_I64, T_U64 */
	const struct choice *choices; /* T_CHOICE, ending with a NULL name */
	double (*dflt_of)(const seed_config *c, double dflt);
	const char *dflt_note;
	enum when when;
	unsigned flags;
	const char *doc; /* one line of meaning */
};

#define AT(f) offsetof(seed_config, f)
#define SECTION(n, d) .name = n, .type = T_SECTION, .when = W_NEVER, .doc = d
#define INT(n, f, dv, mn, mx, w, d)                                                                          \
	.name = n, .type = T_INT, .off = AT(f), .dflt = dv, .min = mn, .max = mx, .when = w, .doc = d
#define I64(n, f, dv, mn, mx, w, d)                                                                          \
	.name = n, .type = T_I64, .off = AT(f), .dflt = dv, .min = mn, .max = mx, .when = w, .doc = d
#define U64(n, f, dv, w, d)                                                                                  \
	.name = n, .type = T_U64, .off = AT(f), .dflt = dv, .min = 0, .max = INT64_MAX, .when = w, .doc = d
#define FLT(n, f, dv, l, h, w, d)                                                                            \
	.name = n, .type = T_FLOAT, .off = AT(f), .dflt = dv, .lo = l, .hi = h, .when = w, .doc = d
#define DBL(n, f, dv, l, h, w, d)                                                                            \
	.name = n, .type = T_DOUBLE, .off = AT(f), .dflt = dv, .lo = l, .hi = h, .when = w, .doc = d
#define OPT_DBL(n, f, w, d)                                                                                  \
	.name = n, .type = T_OPT_DOUBLE, .off = AT(f), .lo = -1e300, .hi = 1e300, .when = w, .doc = d
#define BOOL(n, f, dv, w, d) .name = n, .type = T_BOOL, .off = AT(f), .dflt = dv, .when = w, .doc = d
#define CHOICE(n, f, cs, dv, w, d)                                                                           \
	.name = n, .type = T_CHOICE, .off = AT(f), .choices = cs, .dflt = dv, .when = w, .doc = d
#define STRING(n, f, fl, d) .name = n, .type = T_STRING, .off = AT(f), .flags = fl, .when = W_NEVER, .doc = d
#define OBJECT(n, f, fl, w, d) .name = n, .type = T_OBJECT, .off = AT(f), .flags = fl, .when = w, .doc = d
#define ANY(n, d) .name = n, .type = T_ANY, .when = W_NEVER, .doc = d

static const struct choice algorithms[] = {{"vtrace", SEED_CONFIG_VTRACE},
                                           {"r2d2", SEED_CONFIG_R2D2},
                                           {"ppo", SEED_CONFIG_PPO},
                                           {"es", SEED_CONFIG_ES},
                                           {"ga", SEED_CONFIG_GA},
                                           {"rs", SEED_CONFIG_RS},
                                           {NULL, 0}};
static const struct choice optim_kinds[] = {
    {"adam", SEED_OPTIM_ADAM}, {"rmsprop", SEED_OPTIM_RMSPROP}, {NULL, 0}};
static const struct choice rmsprop_styles[] = {
    {"tf", SEED_RMSPROP_TF}, {"torch", SEED_RMSPROP_TORCH}, {NULL, 0}};
static const struct choice reductions[] = {{"mean", SEED_LOSS_MEAN}, {"sum", SEED_LOSS_SUM}, {NULL, 0}};
static const struct choice ckpt_policies[] = {
    {"stop", SEED_CONFIG_CKPT_STOP}, {"continue", SEED_CONFIG_CKPT_CONTINUE}, {NULL, 0}};

/* Choices are read and written through an int. */
_Static_assert(sizeof(seed_config_algorithm) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_optim_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_rmsprop_style) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_loss_reduce) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_config_ckpt_policy) == sizeof(int), "enum size");

/* Defaults that depend on rows read before. */
static double rmsprop_eps(const seed_config *c, double dflt)
{
	return c->optim.kind == SEED_OPTIM_RMSPROP ? 0.01 : dflt;
}

static double ga_population(const seed_config *c, double dflt)
{
	return c->algorithm == SEED_CONFIG_GA ? 1000 : dflt;
}

static double ga_sigma(const seed_config *c, double dflt)
{
	return c->algorithm == SEED_CONFIG_GA ? 0.002 : dflt;
}

static double at_most_population(const seed_config *c, double dflt)
{
	return c->evolution.population < dflt ? c->evolution.population : dflt;
}

/* Every key, in the order they are read (a default may depend on a row
 * above it) and written back.  Sections precede their rows. */
static const struct key keys[] = {
    /* What to learn. */
    {STRING("env", env, F_REQUIRED, "the environment's name")},
    {OBJECT("model", model, F_REQUIRED, W_NEVER, "an object with a torso")},
    {ANY("description", "free text for people; no program reads it")},
    {STRING("summary", summary, F_ONE_LINE, "one line saying what the configuration trains, for people")},
    /* V-trace's optimizer and loss. */
    {SECTION("optimizer", "the optimizer and its learning rate")},
    {CHOICE("optimizer.kind", optim.kind, optim_kinds, SEED_OPTIM_ADAM, W_ALWAYS, "the optimizer"),
     .flags = F_KNOWN},
    {FLT("optimizer.lr", lr, 6e-4, 0, 10, W_ALWAYS, "the learning rate")},
    {FLT("optimizer.lr_min", lr_min, 0, 0, 10, W_ALWAYS, "the floor of the decay")},
    {BOOL("optimizer.lr_decay", lr_decay, 1, W_ALWAYS, "decay the learning rate linearly over total_frames")},
    {FLT("optimizer.beta1", optim.beta1, 0.9, 0, 0.999999, W_ADAM, "Adam's decay of the first moment")},
    {FLT("optimizer.beta2", optim.beta2, 0.999, 0, 0.999999, W_ADAM, "Adam's decay of the second moment")},
    {FLT("optimizer.decay", optim.decay, 0.99, 0, 0.999999, W_RMSPROP, "RMSProp's decay of the mean square")},
    {FLT("optimizer.momentum", optim.momentum, 0, 0, 0.999999, W_RMSPROP, "RMSProp's momentum")},
    {CHOICE("optimizer.style", optim.rmsprop_style, rmsprop_styles, SEED_RMSPROP_TF, W_RMSPROP,
            "RMSProp as TensorFlow 1 or as PyTorch computes it")},
    {FLT("optimizer.eps", optim.eps, 1e-8, 0, 1, W_ALWAYS, "the epsilon of the denominator"),
     .dflt_of = rmsprop_eps, .dflt_note = "rmsprop: 0.01"},
    {SECTION("loss", "the V-trace actor-critic loss")},
    {FLT("loss.baseline_cost", loss.baseline_cost, 0.5, 0, 1e6, W_ALWAYS, "the weight of the value loss")},
    {FLT("loss.entropy_cost", loss.entropy_cost, 0.01, 0, 1e6, W_ALWAYS, "the weight of the entropy bonus")},
    {FLT("loss.clip_rho", loss.clip_rho, 1, 0, INFINITY, W_ALWAYS,
         "V-trace's rho-bar for the value targets")},
    {FLT("loss.clip_pg_rho", loss.clip_pg_rho, 1, 0, INFINITY, W_ALWAYS,
         "rho-bar for the policy-gradient advantages")},
    {FLT("loss.lambda", loss.lambda, 1, 0, 1, W_ALWAYS, "the scale of the trace coefficients")},
    {CHOICE("loss.reduce", loss.reduce, reductions, SEED_LOSS_MEAN, W_ALWAYS,
            "how the terms of the T x B steps are combined")},
    /* The inference server and the evaluations of seed-train. */
    {SECTION("infer", "the inference server's batching")},
    {INT("infer.max_batch", infer_max_batch, 256, 1, 1 << 24, W_ALWAYS,
         "environment rows that make a batch")},
    {INT("infer.timeout_us", infer_timeout_us, 500, 0, 60000000, W_ALWAYS,
         "microseconds before a batch is answered anyway")},
    {INT("infer.hwm", infer_hwm, 64, 1, 1 << 20, W_ALWAYS, "frames queued on each side of the unroll link")},
    {SECTION("periodic_eval", "evaluations during training, run by seed-train")},
    {DBL("periodic_eval.interval", periodic_eval.interval, 0, 0, 1e9, W_ALWAYS,
         "seconds between evaluations; 0: none")},
    {INT("periodic_eval.episodes", periodic_eval.episodes, 20, 1, 1 << 30, W_ALWAYS, "episodes of each")},
    {OPT_DBL("periodic_eval.target", periodic_eval.target, W_ALWAYS, "a mean return that ends the run")},
    {OBJECT("env_options", env_options, 0, W_ABSENT, "the environment's options")},
    /* The algorithm and its settings. */
    {CHOICE("algorithm", algorithm, algorithms, SEED_CONFIG_VTRACE, W_ALWAYS, "the learning algorithm")},
    {SECTION("r2d2", "R2D2's settings")},
    {INT("r2d2.burn_in", r2d2.burn_in, 0, 0, 10000, W_R2D2, "steps without gradient before training")},
    {INT("r2d2.n_step", r2d2.n_step, 5, 1, 10000, W_R2D2, "n of the n-step double-Q targets")},
    {INT("r2d2.target_update_period", r2d2.target_update_period, 2500, 1, INT32_MAX, W_R2D2,
         "updates between copies into the target network")},
    {FLT("r2d2.eta", r2d2.eta, 0.9, 0, 1, W_R2D2, "the priority's mix of max and mean |delta|")},
    {FLT("r2d2.value_rescale_eps", r2d2.value_rescale_eps, 1e-3, 0, 1, W_R2D2, "eps of the value rescaling")},
    {DBL("r2d2.epsilon_base", r2d2.epsilon_base, 0.4, 0, 1, W_R2D2, "base of the actors' epsilons")},
    {DBL("r2d2.epsilon_alpha", r2d2.epsilon_alpha, 7, 0, 1000, W_R2D2, "exponent of the actors' epsilons")},
    {DBL("r2d2.eval_epsilon", r2d2.eval_epsilon, 1e-3, 0, 1, W_R2D2, "the epsilon of evaluation")},
    {SECTION("replay", "the replay seed-train starts for r2d2")},
    {I64("replay.capacity", replay.capacity, 100000, 1, INT64_C(1) << 32, W_R2D2, "sequences kept")},
    {I64("replay.min_size", replay.min_size, 1000, 1, INT64_C(1) << 32, W_R2D2,
         "sequences stored before the first sample")},
    {DBL("replay.alpha", replay.alpha, 0.9, 0, 100, W_R2D2, "the priority exponent")},
    {DBL("replay.beta", replay.beta, 0.6, 0, 100, W_R2D2, "the importance weight exponent")},
    {DBL("replay.samples_per_insert", replay.samples_per_insert, 1, 0, 1e9, W_R2D2,
         "sampled sequences per inserted one; 0: no limiter")},
    {DBL("replay.tolerance", replay.tolerance, 1024, 0, 1e15, W_R2D2, "the limiter's drift either way")},
    {SECTION("ppo", "PPO's settings")},
    {INT("ppo.epochs", ppo.epochs, 4, 1, 10000, W_PPO, "passes over each batch")},
    {INT("ppo.minibatches", ppo.minibatches, 4, 1, 1 << 24, W_PPO, "minibatches per pass")},
    {FLT("ppo.clip", ppo.clip, 0.2, 0, 1e6, W_PPO, "epsilon of the clipped ratio")},
    {BOOL("ppo.clip_value", ppo.clip_value, 1, W_PPO, "clip the value loss")},
    {FLT("ppo.value_clip", ppo.value_clip, 0.2, 0, 1e30, W_PPO, "the range of that clip")},
    {FLT("ppo.value_cost", ppo.value_cost, 0.5, 0, 1e6, W_PPO, "the weight of the value loss")},
    {FLT("ppo.entropy_cost", ppo.entropy_cost, 0.01, 0, 1e6, W_PPO, "the weight of the entropy bonus")},
    {FLT("ppo.lambda", ppo.lambda, 0.95, 0, 1, W_PPO, "GAE's lambda")},
    {BOOL("ppo.normalize_advantages", ppo.normalize_advantages, 1, W_PPO,
          "normalise each minibatch's advantages")},
    {SECTION("evolution", "neuroevolution's settings")},
    {INT("evolution.population", evolution.population, 256, 1, 1 << 20, W_EVO, "members of a round"),
     .dflt_of = ga_population, .dflt_note = "ga: 1000"},
    {INT("evolution.episodes", evolution.episodes, 1, 1, 1 << 20, W_EVO, "episodes of each member a round")},
    {DBL("evolution.sigma", evolution.sigma, 0.02, 0, 1e6, W_EVO,
         "es's perturbation std, ga's mutation power"),
     .dflt_of = ga_sigma, .dflt_note = "ga: 0.002"},
    {INT("evolution.rank", evolution.rank, 0, 0, 1 << 16, W_EVO, "0: full-rank noise; r: rank-r noise")},
    {U64("evolution.noise_seed", evolution.noise_seed, 0, W_EVO, "the seed of the shared noise table")},
    {I64("evolution.noise_size", evolution.noise_size, 1 << 24, 1, INT32_MAX, W_EVO,
         "floats of the shared noise table")},
    {FLT("evolution.lr", evolution.lr, 0.01, 0, 10, W_EVO, "es's Adam learning rate")},
    {FLT("evolution.l2", evolution.l2, 0.005, 0, 1e6, W_EVO, "es's L2 weight decay coefficient")},
    {INT("evolution.truncation", evolution.truncation, 20, 1, 1 << 20, W_EVO, "ga's parents"),
     .dflt_of = at_most_population, .dflt_note = "or the population, if smaller"},
    {INT("evolution.elite_candidates", evolution.elite_candidates, 10, 0, 1 << 20, W_EVO,
         "top members re-evaluated for the elite"),
     .dflt_of = at_most_population, .dflt_note = "or the population, if smaller"},
    {INT("evolution.elite_episodes", evolution.elite_episodes, 30, 1, 1 << 20, W_EVO,
         "episodes of each re-evaluation")},
    {INT("evolution.episode_cap", evolution.episode_cap, 0, 0, INT32_MAX, W_EVO,
         "steps after which an episode is truncated; 0: none")},
    {DBL("evolution.generation_deadline", evolution.generation_deadline, 60, 0, 1e9, W_EVO,
         "seconds after which a round ends incomplete; 0: none")},
    {BOOL("evolution.greedy", evolution.greedy, 1, W_EVO, "members act greedily, else sample")},
    /* Training, stopping and reporting. */
    {U64("seed", seed, 0, W_ALWAYS, "the seed of the model's initialisation (and of the run's programs)")},
    {FLT("discount", discount, 0.99, 0, 1, W_ALWAYS, "the discount of future rewards")},
    {INT("unroll_length", unroll_length, 20, 1, 10000, W_ALWAYS, "steps per unroll")},
    {INT("batch_size", batch_size, 32, 1, 1 << 20, W_ALWAYS, "unrolls per update")},
    {FLT("max_grad_norm", max_grad_norm, 40, 0, 1e30, W_ALWAYS, "the global norm gradients are clipped to")},
    {I64("total_frames", total_frames, 5000000, 1, INT64_MAX / 2, W_ALWAYS, "the frame budget")},
    {OPT_DBL("target_return", target_return, W_ALWAYS, "a mean return that stops the learner")},
    {INT("return_window", return_window, 100, 1, 1000000, W_ALWAYS, "episodes the mean return covers")},
    {DBL("checkpoint_interval", checkpoint_interval, 30, 0, 1e9, W_ALWAYS, "seconds between checkpoints")},
    {DBL("metrics_interval", metrics_interval, 1, 0, 1e9, W_ALWAYS, "seconds between metrics lines")},
    {CHOICE("checkpoint_failure", checkpoint_failure, ckpt_policies, SEED_CONFIG_CKPT_STOP, W_ALWAYS,
            "what a checkpoint that cannot be written does")},
    /* The local topology of seed-train. */
    {INT("actors", actors, 2, 1, 100000, W_ALWAYS, "actor processes")},
    {INT("envs_per_actor", envs_per_actor, 64, 1, 1 << 20, W_ALWAYS, "environments per actor")},
    {INT("eval_episodes", eval_episodes, 100, 1, 1 << 30, W_ALWAYS, "episodes of the final evaluation")},
    {INT("eval_max_episode_steps", eval_max_episode_steps, 27000, 0, INT32_MAX, W_ALWAYS,
         "the step cap of an evaluation episode (0: none)")},
};

#define NKEYS (sizeof keys / sizeof keys[0])

/* ---- reading a row -------------------------------------------------------- */

#define TRY(x)                                                                                               \
	do {                                                                                                 \
		int rc_ = (x);                                                                               \
		if (rc_)                                                                                     \
			return rc_;                                                                          \
	} while (0)

/* Typed getters of the value v of key name (NULL or null: the default),
 * with range checks; 0 or -SEED_EOPTION. */
static int get_num(const json_t *v, const char *name, double dflt, double lo, double hi, double *out,
                   seed_err *err)
{
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_number(v))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be a number", name);
	double x = json_number_value(v);
	if (!(x >= lo && x <= hi))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' = %g is out of range [%g, %g]", name, x,
		                    lo, hi);
	*out = x;
	return 0;
}

static int get_int(const json_t *v, const char *name, int64_t dflt, int64_t lo, int64_t hi, int64_t *out,
                   seed_err *err)
{
	/* JSON integers exactly: through a double, seeds past 2^53 would
	 * silently become other seeds. */
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < lo || x > hi)
			return seed_err_set(err, -SEED_EOPTION,
			                    "config: '%s' = %lld is out of range [%lld, %lld]", name,
			                    (long long)x, (long long)lo, (long long)hi);
		*out = x;
		return 0;
	}
	double x;
	TRY(get_num(v, name, (double)dflt, (double)lo, (double)hi, &x, err));
	if (x != floor(x))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be an integer", name);
	*out = v && !json_is_null(v) ? (int64_t)x : dflt;
	return 0;
}

static int get_bool(const json_t *v, const char *name, bool dflt, bool *out, seed_err *err)
{
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be true or false", name);
	*out = json_is_true(v);
	return 0;
}

/* choices' names as a list: "\"a\", \"b\" or \"c\"" (quoted), "a, b, c"
 * (not), with " (default)" after the one whose value is dflt if mark. */
static void choice_list(const struct choice *cs, bool quoted, bool mark, int dflt, char *out, size_t n)
{
	size_t at = 0;
	out[0] = '\0';
	for (int i = 0; cs[i].name && at < n; i++) {
		const char *sep = i == 0 ? "" : !quoted ? ", " : cs[i + 1].name ? ", " : " or ";
		at += (size_t)snprintf(out + at, n - at, quoted ? "%s\"%s\"%s" : "%s%s%s", sep, cs[i].name,
		                       mark && cs[i].value == dflt ? " (default)" : "");
	}
}

static int get_choice(const struct key *k, const json_t *v, int *out, seed_err *err)
{
	if (!v || json_is_null(v)) {
		*out = (int)k->dflt;
		return 0;
	}
	const char *s = json_string_value(v);
	for (int i = 0; s && k->choices[i].name; i++)
		if (strcmp(s, k->choices[i].name) == 0) {
			*out = k->choices[i].value;
			return 0;
		}
	char list[256];
	choice_list(k->choices, !(k->flags & F_KNOWN), false, 0, list, sizeof list);
	if (!(k->flags & F_KNOWN))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be %s", k->name, list);
	if (!s)
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be a string", k->name);
	return seed_err_set(err, -SEED_EOPTION, "config: '%s' = '%s' (known: %s)", k->name, s, list);
}

/* The text and JSON kinds: a string into root, an object as JSON text. */
static int get_text(const struct key *k, const json_t *v, void *p, seed_err *err)
{
	bool given = v && !json_is_null(v);
	bool ok = k->type == T_STRING ? json_is_string(v) : json_is_object(v);
	if ((k->flags & F_REQUIRED) && !ok)
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' (%s) is required", k->name, k->doc);
	if (given && !ok)
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be %s", k->name,
		                    k->type == T_STRING ? "a string" : "an object");
	if (k->type == T_STRING) {
		const char *s = given ? json_string_value(v) : NULL;
		if (s && (k->flags & F_ONE_LINE) && strchr(s, '\n'))
			return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be one line", k->name);
		*(const char **)p = s;
	} else {
		char *text = given ? json_dumps(v, JSON_COMPACT) : strcpy(seed_xmalloc(3), "{}");
		if (!text)
			seed_oom(0);
		*(char **)p = text;
	}
	return 0;
}

/* Read row k from its value v (NULL: absent) into c. */
static int read_row(const struct key *k, const json_t *v, seed_config *c, seed_err *err)
{
	void *p = (char *)c + k->off;
	double dflt = k->dflt_of ? k->dflt_of(c, k->dflt) : k->dflt, d = 0;
	int64_t i = 0;
	switch (k->type) {
	case T_SECTION:
		if (v && !json_is_null(v) && !json_is_object(v))
			return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be an object", k->name);
		return 0;
	case T_INT:
	case T_I64:
	case T_U64:
		TRY(get_int(v, k->name, (int64_t)dflt, k->min, k->max, &i, err));
		if (k->type == T_INT)
			*(int *)p = (int)i;
		else if (k->type == T_I64)
			*(int64_t *)p = i;
		else
			*(uint64_t *)p = (uint64_t)i;
		return 0;
	case T_FLOAT:
	case T_DOUBLE:
		TRY(get_num(v, k->name, dflt, k->lo, k->hi, &d, err));
		if (k->type == T_FLOAT)
			*(float *)p = (float)d;
		else
			*(double *)p = d;
		return 0;
	case T_OPT_DOUBLE:
		if (!v || json_is_null(v)) {
			*(double *)p = NAN;
			return 0;
		}
		return get_num(v, k->name, 0, k->lo, k->hi, (double *)p, err);
	case T_BOOL:
		return get_bool(v, k->name, dflt != 0, (bool *)p, err);
	case T_CHOICE:
		return get_choice(k, v, (int *)p, err);
	case T_STRING:
	case T_OBJECT:
		return get_text(k, v, p, err);
	case T_ANY:
		return 0;
	}
	return 0;
}

/* The row called name, or NULL. */
static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* Every key of root, and of its sections, has a row. */
static int check_known(const json_t *root, seed_err *err)
{
	const char *k, *sub;
	json_t *v, *sv;
	json_object_foreach((json_t *)root, k, v)
	{
		const struct key *row = strchr(k, '.') ? NULL : find_key(k);
		if (!row)
			return seed_err_set(err, -SEED_EOPTION, "config: unknown key '%s'", k);
		if (row->type != T_SECTION || !json_is_object(v))
			continue;
		json_object_foreach(v, sub, sv)
		{
			char name[128];
			int len = snprintf(name, sizeof name, "%s.%s", k, sub);
			if (len >= (int)sizeof name || strchr(sub, '.') || !find_key(name))
				return seed_err_set(err, -SEED_EOPTION, "config: unknown key '%s.%s'", k,
				                    sub);
		}
	}
	return 0;
}

/* What no row can say: the checks across keys. */
static int check_across(const seed_config *c, seed_err *err)
{
	const seed_config_evolution *e = &c->evolution;
	bool es = c->algorithm == SEED_CONFIG_ES;
	if (es && e->population % 2)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.population' = %d must be even for algorithm es "
		                    "(its members are antithetic pairs)",
		                    e->population);
	if (es && !(e->sigma > 0))
		return seed_err_set(
		    err, -SEED_EOPTION,
		    "config: 'evolution.sigma' = 0 leaves algorithm es nothing to explore: it "
		    "must be more than 0");
	if (e->truncation > e->population)
		return seed_err_set(
		    err, -SEED_EOPTION,
		    "config: 'evolution.truncation' = %d is more than 'evolution.population' = %d",
		    e->truncation, e->population);
	if (e->elite_candidates > e->population)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.elite_candidates' = %d is more than "
		                    "'evolution.population' = %d",
		                    e->elite_candidates, e->population);
	if (c->algorithm == SEED_CONFIG_PPO &&
	    (int64_t)c->unroll_length * c->batch_size % c->ppo.minibatches != 0)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'ppo.minibatches' = %d does not divide the %lld transitions "
		                    "of a batch ('unroll_length' %d x 'batch_size' %d)",
		                    c->ppo.minibatches, (long long)c->unroll_length * c->batch_size,
		                    c->unroll_length, c->batch_size);
	if (c->r2d2.burn_in >= c->unroll_length)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'r2d2.burn_in' = %d leaves no step to train on: it must be "
		                    "less than 'unroll_length' = %d",
		                    c->r2d2.burn_in, c->unroll_length);
	if (c->replay.min_size > c->replay.capacity)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'replay.min_size' = %lld is more than 'replay.capacity' = %lld",
		                    (long long)c->replay.min_size, (long long)c->replay.capacity);
	return 0;
}

/* ---- writing back --------------------------------------------------------- */

static bool written(const struct key *k, const seed_config *c)
{
	switch (k->when) {
	case W_ALWAYS:
	case W_ABSENT:
		return true;
	case W_ADAM:
		return c->optim.kind == SEED_OPTIM_ADAM;
	case W_RMSPROP:
		return c->optim.kind == SEED_OPTIM_RMSPROP;
	case W_R2D2:
		return c->algorithm == SEED_CONFIG_R2D2;
	case W_PPO:
		return c->algorithm == SEED_CONFIG_PPO;
	case W_EVO:
		return SEED_CONFIG_IS_EVO(c->algorithm);
	case W_NEVER:
		break;
	}
	return false;
}

/* A number as JSON with the digits a float holds (0.99, not
 * 0.99000000953674316); null for what JSON cannot hold (none, infinity). */
static json_t *jf(double x)
{
	if (!isfinite(x))
		return json_null();
	char buf[32];
	snprintf(buf, sizeof buf, "%.7g", x);
	return json_real(strtod(buf, NULL));
}

/* Row k's resolved value as JSON (a new reference). */
static json_t *row_value(const struct key *k, const seed_config *c)
{
	const void *p = (const char *)c + k->off;
	switch (k->type) {
	case T_INT:
		return json_integer(*(const int *)p);
	case T_I64:
		return json_integer(*(const int64_t *)p);
	case T_U64:
		return json_integer((json_int_t) * (const uint64_t *)p);
	case T_FLOAT:
		return jf(*(const float *)p);
	case T_DOUBLE:
	case T_OPT_DOUBLE:
		return jf(*(const double *)p);
	case T_BOOL:
		return json_boolean(*(const bool *)p);
	case T_CHOICE:
		for (int i = 0; k->choices[i].name; i++)
			if (k->choices[i].value == *(const int *)p)
				return json_string(k->choices[i].name);
		break;
	case T_OBJECT:
		return json_object(); /* W_ABSENT: the default, {} */
	default:
		break;
	}
	return json_null();
}

/* Write every resolved value back, so the saved configuration (and
 * --print-config) says exactly what was trained, defaults included. */
static void write_back(json_t *root, const seed_config *c)
{
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		if (k->type == T_SECTION || !written(k, c))
			continue;
		const char *dot = strchr(k->name, '.'), *leaf = dot ? dot + 1 : k->name;
		json_t *obj = root;
		if (dot) {
			char section[64];
			snprintf(section, sizeof section, "%.*s", (int)(dot - k->name), k->name);
			obj = json_object_get(root, section);
			if (!json_is_object(obj)) {
				obj = json_object();
				json_object_set_new(root, section, obj);
			}
		}
		json_t *old = json_object_get(obj, leaf);
		if (k->when == W_ABSENT && old && !json_is_null(old))
			continue;
		json_object_set_new(obj, leaf, row_value(k, c));
	}
}

static int parse(json_t *root, seed_config *c, seed_err *err)
{
	memset(c, 0, sizeof *c);
	/* The libraries' own defaults first, for the fields no key sets. */
	seed_optim_config_default(&c->optim, SEED_OPTIM_ADAM);
	seed_loss_config_default(&c->loss);
	seed_ppo_config_default(&c->ppo);
	TRY(check_known(root, err));
	for (size_t i = 0; i < NKEYS; i++)
		TRY(read_row(&keys[i], seed_config_get(root, keys[i].name), c, err));
	TRY(check_across(c, err));
	write_back(root, c);
	c->root = root;
	return 0;
}

const char *seed_config_algorithm_name(seed_config_algorithm a)
{
	for (int i = 0; algorithms[i].name; i++)
		if (algorithms[i].value == (int)a)
			return algorithms[i].name;
	return "vtrace";
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

/* ---- the key list of seed-config(5) --------------------------------------- */

/* An integer as the manual writes it: 2^k and 2^k-1 from 2^16 on. */
static void fmt_int(int64_t x, char *out, size_t n)
{
	for (int k = 16; k < 64; k++) {
		uint64_t p = UINT64_C(1) << k;
		if ((uint64_t)x == p || (uint64_t)x == p - 1) {
			snprintf(out, n, "2^%d%s", k, (uint64_t)x == p ? "" : "-1");
			return;
		}
	}
	snprintf(out, n, "%lld", (long long)x);
}

/* A number as the manual writes it: %g, with 1e6 for 1e+06. */
static void fmt_num(double x, char *out, size_t n)
{
	char g[32];
	snprintf(g, sizeof g, "%g", x);
	char *e = strchr(g, 'e');
	if (!e) {
		snprintf(out, n, "%s", g);
		return;
	}
	int exp = atoi(e + 1);
	*e = '\0';
	snprintf(out, n, "%se%d", g, exp);
}

/* Row k's type, default and range, as seed-config(5) opens its entry. */
static void synopsis(const struct key *k, char *out, size_t n)
{
	char d[64], lo[32], hi[32], list[256], note[80] = "";
	if (k->dflt_note)
		snprintf(note, sizeof note, " (%s)", k->dflt_note);
	switch (k->type) {
	case T_SECTION:
		snprintf(out, n, "Object");
		return;
	case T_INT:
	case T_I64:
	case T_U64:
		fmt_int((int64_t)k->dflt, d, sizeof d);
		fmt_int(k->min, lo, sizeof lo);
		fmt_int(k->max, hi, sizeof hi);
		snprintf(out, n, "Integer, default %s%s, from %s to %s", d, note, lo, hi);
		return;
	case T_FLOAT:
	case T_DOUBLE:
		fmt_num(k->dflt, d, sizeof d);
		fmt_num(k->lo, lo, sizeof lo);
		fmt_num(k->hi, hi, sizeof hi);
		if (isinf(k->hi))
			snprintf(out, n, "Number, default %s%s, %s or more", d, note, lo);
		else
			snprintf(out, n, "Number, default %s%s, from %s to %s", d, note, lo, hi);
		return;
	case T_OPT_DOUBLE:
		snprintf(out, n, "Number or null (default: none)");
		return;
	case T_BOOL:
		snprintf(out, n, k->dflt != 0 ? "true (default) or false" : "true or false (default)");
		return;
	case T_CHOICE:
		choice_list(k->choices, true, true, (int)k->dflt, list, sizeof list);
		snprintf(out, n, "%s", list);
		return;
	case T_STRING:
		snprintf(out, n, "String, %s", k->flags & F_REQUIRED ? "required" : "optional");
		return;
	case T_OBJECT:
		snprintf(out, n, "Object, %s", k->flags & F_REQUIRED ? "required" : "default {}");
		return;
	case T_ANY:
		snprintf(out, n, "Any JSON value, optional");
		return;
	}
}

char *seed_config_describe(void)
{
	seed_buf b = {0};
	for (size_t i = 0; i < NKEYS; i++) {
		char line[512], syn[320];
		synopsis(&keys[i], syn, sizeof syn);
		int len = snprintf(line, sizeof line, "%s\t%s\t%s\n", keys[i].name, syn, keys[i].doc);
		seed_buf_append(&b, line, (size_t)len);
	}
	seed_buf_append(&b, "", 1);
	return (char *)b.data;
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

int seed_config_checkpoint_save(const seed_config *c, const char *dir, seed_checkpoint *ck, seed_err *err)
{
	json_t *env_opts = json_loads(c->env_options, 0, NULL);
	json_t *model = json_loads(c->model, 0, NULL);
	ck->config = c->root;
	ck->env = c->env;
	ck->env_options = env_opts;
	ck->model = model;
	int rc = seed_checkpoint_save(dir, ck, err);
	json_decref(env_opts);
	json_decref(model);
	ck->env_options = ck->model = NULL;
	return rc;
}
