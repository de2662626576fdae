/* cmd/seed-eval.c: play episodes locally and print a JSON summary.
 *
 * seed-eval steps a vector of K environments with a policy, collects the
 * return and length of exactly N finished episodes, and prints one JSON
 * object on stdout.  No server is involved.
 *
 * Structure: a policy is a callback from a batch of observations to a batch
 * of actions (eval_policy); the policies on offer are a table (policies[]),
 * so a policy backed by a checkpoint slots in beside "random" with its own
 * options.  play() owns the loop and the buffers; what happens to each step
 * besides counting episodes (rendering, recording frames) belongs there.
 *
 * Which episodes count: all K envs step together; after each step the
 * episodes that ended are taken in env order (env 0 first) until N are in,
 * so the result depends only on the environment, its options, K, the
 * policy and the seed.
 *
 * A run directory as --checkpoint stands for what seed-train reports as
 * the run's result: DIR/best where the run evaluates periodically and has
 * kept a best, else its last checkpoint (resolve_checkpoint); --last plays
 * the last one whatever.  The summary names the path played.
 *
 * No evaluation runs forever: an episode that reaches --max-episode-steps
 * (default 27,000, the Atari convention's 108K frames at frame skip 4) is
 * cut there, ends as truncated and counts, and the summary says how many
 * were cut.  A Seed environment gets the cap as its time limit (max_steps)
 * where its own is longer or none, so the cut is the environment's own
 * truncation (its last picture, a recurrent state's reset); seed-gym cuts a
 * Gymnasium environment's episode itself and marks the rows it cut.  Every
 * --stats-interval seconds a line on stderr says how far play has come.
 *
 * A checkpoint of a Q model (a dueling head, R2D2's) plays epsilon-greedily
 * (seed_agent(3)): --epsilon, else the checkpoint config's
 * r2d2.eval_epsilon, else 1e-3 (SEED RL's evaluation epsilon); --greedy
 * means 0.  The summary then says which epsilon it played with.
 *
 * Pictures (--render, --record) are render.c's: play() hands env 0's steps
 * to a render_view, and keeps stepping past N episodes while a GIF still
 * waits for episodes of env 0 (which leaves the summary unchanged).
 *
 * An environment gym:ID is Gymnasium's ID, stepped by a seed-gym(1) child
 * in its offline mode (seed_gym_envs, seed/env_gym.h): the same loop,
 * policies and summary,
 * and with --render or --record seed-gym sends env 0's pictures
 * (render_mode "rgb_array"), which render.c draws like a class's.
 */
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "render.h"
#include "seed/agent.h"
#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/checkpoint.h"
#include "seed/env.h"
#include "seed/env_gym.h"
#include "seed/gaussian.h"
#include "seed/gif.h"
#include "seed/nn.h"
#include "seed/rng.h"

/* ---- policies ------------------------------------------------------------- */

/* A policy: a batch of observations in, a batch of actions out. */
typedef struct eval_policy {
	const char *name;
	/* Write actions[0..count) in [0, num_actions) for the observations obs
	 * ([count][obs bytes], env i in row i), or for a Box space box[count][A],
	 * each within the bounds.  0, or a negative code with a message in err. */
	int (*act)(struct eval_policy *p, const void *obs, int count, int32_t *actions, float *box,
	           seed_err *err);
	/* What the step after the last act returned (NULL: nothing to keep):
	 * a recurrent policy's next inputs. */
	void (*stepped)(struct eval_policy *p, int count, const float *reward, const uint8_t *term,
	                const uint8_t *trunc);
	void (*free)(struct eval_policy *p);
	void *ctx;
	double epsilon; /* a Q model's exploration; NaN for other policies */
} eval_policy;

typedef struct eval_options {
	const char *env;
	const char *env_options;
	const char *policy;
	const char *checkpoint;
	const char *device; /* --device; NULL: the CPU */
	int greedy;
	int max_episode_steps; /* --max-episode-steps; 0: no cap */
	double epsilon;        /* --epsilon; NaN: not given */
	long long episodes;
	int envs;
	uint64_t seed;
} eval_options;

/* Uniform random actions from one generator on a stream apart from the
 * environments' (their streams are 0 .. K-1).  A Box space is sampled as
 * Gymnasium's Box.sample does: uniform where both bounds are finite, a
 * standard normal where neither is, and an exponential step from the
 * finite one where one is. */
typedef struct random_policy {
	seed_rng rng;
	uint32_t num_actions;
	const seed_env_spec *spec;
} random_policy;

static float box_sample(seed_rng *rng, float lo, float hi)
{
	if (isfinite(lo) && isfinite(hi))
		return (float)seed_rng_uniform(rng, lo, hi);
	if (!isfinite(lo) && !isfinite(hi))
		return (float)seed_rng_normal(rng);
	double e = -log(1 - seed_rng_double(rng)); /* exponential, mean 1 */
	return isfinite(lo) ? (float)(lo + e) : (float)(hi - e);
}

static int random_act(eval_policy *p, const void *obs, int count, int32_t *actions, float *box, seed_err *err)
{
	random_policy *r = p->ctx;
	const seed_env_spec *s = r->spec;
	if (s->action_space == SEED_ACTIONS_BOX)
		for (int i = 0; i < count; i++)
			for (int j = 0; j < s->num_actions; j++)
				box[i * s->num_actions + j] =
				    box_sample(&r->rng, s->action_low[j], s->action_high[j]);
	else
		for (int i = 0; i < count; i++)
			actions[i] = (int32_t)seed_rng_below(&r->rng, r->num_actions);
	return 0;
}

static void random_free(eval_policy *p)
{
	free(p->ctx);
}

static int random_new(eval_policy *p, const eval_options *o, const seed_env_spec *spec, seed_err *err)
{
	random_policy *r = seed_xmalloc(sizeof *r);
	seed_rng_init(&r->rng, o->seed, UINT64_MAX);
	r->num_actions = (uint32_t)spec->num_actions;
	r->spec = spec;
	p->act = random_act;
	p->free = random_free;
	p->ctx = r;
	p->epsilon = NAN;
	return 0;
}

/* A trained policy from a checkpoint: an agent (seed_agent(3)) acting on
 * the batch, sampling from its policy (or the most likely action with
 * --greedy) with a generator on a stream apart from the environments'.
 * A recurrent model's state, previous rewards and actions are kept here
 * per environment, as seed-infer keeps them: zeros and no action at
 * first, the state reset where an episode begins. */
typedef struct model_policy {
	seed_agent *agent;
	seed_dtype obs_dtype;
	int obs_rank;
	int64_t obs_shape[SEED_TENSOR_MAX_RANK]; /* [count, obs...] */
	int S;                                   /* floats of state a row; 0: none */
	float *state[2];                         /* (count, S) each: in and out, swapped */
	float *reward;                           /* (count) */
	int32_t *prev;                           /* (count) */
	uint8_t *reset;                          /* (count) */
	/* A Gaussian policy (Box actions): its raw samples (count, A), mapped
	 * into the environment's bounds by the model's squash. */
	const seed_env_spec *spec;
	float *raw;
	seed_squash squash;
} model_policy;

static int model_act(eval_policy *p, const void *obs, int count, int32_t *actions, float *box, seed_err *err)
{
	model_policy *m = p->ctx;
	m->obs_shape[0] = count;
	seed_tensor t = seed_tensor_view((void *)obs, m->obs_dtype, m->obs_rank, m->obs_shape);
	if (m->raw) {
		int rc = seed_agent_act_box(m->agent, count, &t, NULL, m->raw, NULL, NULL, err);
		if (rc == 0)
			seed_gaussian_to_env(count, m->spec->num_actions, m->raw, m->spec->action_low,
			                     m->spec->action_high, m->squash, box);
		return rc;
	}
	if (m->S == 0)
		return seed_agent_act(m->agent, count, &t, actions, NULL, NULL, err);
	seed_agent_core c = {.prev_reward = m->reward,
	                     .prev_action = m->prev,
	                     .reset = m->reset,
	                     .state = m->state[0],
	                     .state_out = m->state[1]};
	int rc = seed_agent_act_core(m->agent, count, &t, &c, actions, NULL, NULL, err);
	if (rc == 0) {
		float *in = m->state[0];
		m->state[0] = m->state[1];
		m->state[1] = in;
		memcpy(m->prev, actions, (size_t)count * sizeof *actions);
	}
	return rc;
}

static void model_stepped(eval_policy *p, int count, const float *reward, const uint8_t *term,
                          const uint8_t *trunc)
{
	model_policy *m = p->ctx;
	if (m->S == 0)
		return;
	memcpy(m->reward, reward, (size_t)count * sizeof *reward);
	for (int i = 0; i < count; i++)
		m->reset[i] = term[i] || trunc[i];
}

static void model_free(eval_policy *p)
{
	model_policy *m = p->ctx;
	seed_agent_free(&m->agent);
	free(m->state[0]);
	free(m->state[1]);
	free(m->reward);
	free(m->prev);
	free(m->reset);
	free(m->raw);
	free(m);
}

static seed_checkpoint *checkpoint; /* loaded before the envs: it names them */

/* A Q model's evaluation epsilon when --epsilon is not given: --greedy's 0,
 * the checkpoint config's r2d2.eval_epsilon, or EVAL_EPSILON.  A value
 * there that is not one is -EBADMSG: what the checkpoint holds is bad (as
 * for a checkpoint without its model), not the command (status 1). */
#define EVAL_EPSILON 1e-3
/* The step cap of an evaluation episode: the Atari convention's 108,000
 * frames (ALE v5's limit), 27,000 agent steps at frame skip 4; the same
 * number of decisions for environments without frame skip. */
#define EVAL_MAX_EPISODE_STEPS 27000
static int q_epsilon(const eval_options *o, double *eps, seed_err *err)
{
	if (!isnan(o->epsilon)) {
		*eps = o->epsilon;
		return 0;
	}
	*eps = o->greedy ? 0.0 : EVAL_EPSILON;
	json_t *r2d2 = json_object_get(checkpoint->config, "r2d2");
	json_t *v = json_object_get(r2d2, "eval_epsilon");
	if (o->greedy || !v)
		return 0;
	double e = json_number_value(v);
	if (!json_is_number(v) || !(e >= 0 && e <= 1))
		return seed_err_set(err, -EBADMSG,
		                    "%s: the config's r2d2.eval_epsilon is not a number in [0, 1]; give "
		                    "--epsilon",
		                    o->checkpoint);
	*eps = e;
	return 0;
}

static int model_new(eval_policy *p, const eval_options *o, const seed_env_spec *spec, seed_err *err)
{
	if (!checkpoint->model)
		return seed_err_set(err, -EBADMSG, "%s: the checkpoint does not describe its model",
		                    o->checkpoint);
	if (spec->obs_rank + 1 > SEED_TENSOR_MAX_RANK)
		return seed_err_set(err, -EINVAL, "observations of rank %d are too many dimensions",
		                    spec->obs_rank);
	char *json = json_dumps(checkpoint->model, JSON_COMPACT);
	model_policy *m = seed_xcalloc(1, sizeof *m);
	int rc = seed_agent_new(&m->agent, json, spec->obs_dtype, spec->obs_rank, spec->obs_shape,
	                        spec->num_actions, o->envs, o->greedy, o->seed, UINT64_MAX, err);
	free(json);
	if (rc == 0)
		rc = seed_checkpoint_load_model(checkpoint, seed_agent_model(m->agent), err);
	if (rc == 0 && o->device)
		rc = seed_model_set_device(seed_agent_model(m->agent), o->device, err);
	if (rc) {
		seed_agent_free(&m->agent);
		free(m);
		return rc;
	}
	seed_agent_set_policy_version(m->agent, checkpoint->policy_version);
	p->epsilon = NAN;
	bool box = spec->action_space == SEED_ACTIONS_BOX;
	if (box != seed_agent_box(m->agent)) {
		seed_agent_free(&m->agent);
		free(m);
		return seed_err_set(
		    err, -EINVAL,
		    box ? "%s: the environment's actions are Box; the checkpoint's policy is not "
		          "Gaussian"
		        : "%s: the environment's actions are discrete; the checkpoint's policy is "
		          "Gaussian",
		    o->checkpoint);
	}
	if (box) {
		m->spec = spec;
		seed_model_squash(seed_agent_model(m->agent), &m->squash);
		rc = seed_gaussian_check_bounds(spec->num_actions, spec->action_low, spec->action_high,
		                                m->squash, err);
		if (rc) {
			seed_agent_free(&m->agent);
			free(m);
			return rc;
		}
		m->raw = seed_xmalloc((size_t)o->envs * (size_t)spec->num_actions * sizeof *m->raw);
	}
	if (seed_agent_head(m->agent) == SEED_HEAD_DUELING) {
		double eps;
		rc = q_epsilon(o, &eps, err);
		if (rc == 0)
			rc = seed_agent_set_epsilon(m->agent, eps, err);
		if (rc) {
			seed_agent_free(&m->agent);
			free(m);
			return rc;
		}
		p->epsilon = eps;
	}
	m->obs_dtype = spec->obs_dtype;
	m->obs_rank = spec->obs_rank + 1;
	for (int d = 0; d < spec->obs_rank; d++)
		m->obs_shape[d + 1] = spec->obs_shape[d];
	m->S = seed_agent_state_floats(m->agent);
	if (m->S > 0) {
		size_t k = (size_t)o->envs;
		m->state[0] = seed_xcalloc(k * (size_t)m->S, sizeof(float));
		m->state[1] = seed_xcalloc(k * (size_t)m->S, sizeof(float));
		m->reward = seed_xcalloc(k, sizeof(float));
		m->prev = seed_xmalloc(k * sizeof(int32_t));
		m->reset = seed_xcalloc(k, 1);
		for (size_t i = 0; i < k; i++)
			m->prev[i] = -1;
	}
	p->act = model_act;
	p->stepped = model_stepped;
	p->free = model_free;
	p->ctx = m;
	return 0;
}

static const struct {
	const char *name;
	int (*init)(eval_policy *p, const eval_options *o, const seed_env_spec *spec, seed_err *err);
} policies[] = {
    {"random", random_new},
    {"checkpoint", model_new},
};

/* ---- playing -------------------------------------------------------------- */

/* The environments played: Seed's own (local), or Gymnasium's through
 * seed-gym (gym), one of the two. */
typedef struct eval_envs {
	seed_envs *local;
	seed_gym_envs *gym;
	const seed_env_spec *spec;
	int k;
	/* Local envs whose time limit is the evaluation's cap (it was below
	 * their own or they had none): every truncation is a cut. */
	bool local_capped;
} eval_envs;

/* Step envs with policy until n episodes have ended; their returns and
 * lengths go to ret[0..n) and len[0..n) in the order they ended, and *cut
 * counts those of them the evaluation's step cap ended.  view (may be NULL)
 * sees env 0's steps.  Every stats_interval seconds (0: never) a line on
 * stderr says how many episodes and steps are done. */
static int play(eval_envs *envs, eval_policy *policy, long long n, double *ret, double *len, long long *cut,
                double stats_interval, render_view *view, seed_err *err)
{
	const int k = envs->k;
	const size_t ob = seed_env_spec_obs_bytes(envs->spec);
	void *obs = seed_xmalloc((size_t)k * ob);
	int32_t *actions = seed_xmalloc((size_t)k * sizeof *actions);
	const bool box = envs->spec->action_space == SEED_ACTIONS_BOX;
	float *box_act =
	    box ? seed_xmalloc((size_t)k * (size_t)envs->spec->num_actions * sizeof *box_act) : NULL;
	float *reward = seed_xmalloc((size_t)k * sizeof *reward);
	uint8_t *term = seed_xmalloc((size_t)k);
	uint8_t *trunc = seed_xmalloc((size_t)k);
	uint8_t *capped = seed_xcalloc((size_t)k, 1);
	float *ep_return = seed_xmalloc((size_t)k * sizeof *ep_return);
	int32_t *ep_length = seed_xmalloc((size_t)k * sizeof *ep_length);
	int rc = 0;
	long long done = 0, steps = 0;
	const double t0 = seed_now_s();
	double next_stats = stats_interval > 0 ? t0 + stats_interval : 0;
	*cut = 0;

	if (envs->local)
		seed_envs_reset(envs->local, obs);
	else
		seed_gym_envs_reset(envs->gym, obs);
	if (view)
		rc = render_view_reset(view, err);
	while (rc == 0 && (done < n || render_view_wants_more(view))) {
		if (cli_stop) {
			rc = seed_err_set(err, -EINTR, "interrupted after %lld of %lld episodes", done, n);
			break;
		}
		rc = policy->act(policy, obs, k, actions, box_act, err);
		if (rc < 0)
			break;
		if (box && envs->local) {
			if ((rc = seed_envs_step_box(envs->local, 0, k, box_act, obs, reward, term, trunc,
			                             NULL, ep_return, ep_length)) < 0) {
				seed_err_set(err, rc, "policy %s chose a non-finite action", policy->name);
				break;
			}
			if (envs->local_capped)
				memcpy(capped, trunc, (size_t)k);
		} else if (envs->gym) {
			rc = box ? seed_gym_envs_step_box(envs->gym, box_act, obs, reward, term, trunc,
			                                  capped, ep_return, ep_length, err)
			         : seed_gym_envs_step(envs->gym, actions, obs, reward, term, trunc, capped,
			                              ep_return, ep_length, err);
			if (rc == -EINTR)
				seed_err_set(err, rc, "interrupted after %lld of %lld episodes", done, n);
			if (rc < 0)
				break;
		} else if ((rc = seed_envs_step(envs->local, 0, k, actions, obs, reward, term, trunc, NULL,
		                                ep_return, ep_length)) < 0) {
			seed_err_set(err, rc, "policy %s chose an action out of range", policy->name);
			break;
		} else if (envs->local_capped) {
			memcpy(capped, trunc, (size_t)k);
		}
		steps += k;
		if (policy->stepped)
			policy->stepped(policy, k, reward, term, trunc);
		if (view && (rc = render_view_step(view, reward[0], term[0], trunc[0], err)) < 0)
			break;
		for (int i = 0; i < k && done < n; i++) {
			if (term[i] || trunc[i]) {
				ret[done] = ep_return[i];
				len[done] = ep_length[i];
				*cut += capped[i] != 0;
				done++;
			}
		}
		if (next_stats > 0 && done < n) {
			double now = seed_now_s();
			if (now >= next_stats) {
				cli_warn("%lld of %lld episodes done (%lld cut at the step cap), %lld steps, "
				         "%.0f s",
				         done, n, *cut, steps, now - t0);
				while (next_stats <= now)
					next_stats += stats_interval;
			}
		}
	}
	free(obs);
	free(capped);
	free(actions);
	free(box_act);
	free(reward);
	free(term);
	free(trunc);
	free(ep_return);
	free(ep_length);
	return rc;
}

/* ---- statistics and output ------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* {"mean", "std" (population: divided by n), "median", "min", "max"} of
 * x[0..n), n >= 1; sorts x. */
static json_t *summary(double *x, long long n)
{
	double mean = 0;
	for (long long i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	double var = 0;
	for (long long i = 0; i < n; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= (double)n;
	qsort(x, (size_t)n, sizeof *x, cmp_double);
	double median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", "mean", mean, "std", sqrt(var), "median", median, "min",
	                 x[0], "max", x[n - 1]);
}

/* One line per environment: name, observation, actions, time limit and
 * summary, in registry order. */
static void list_envs(void)
{
	const seed_env_class *c;
	for (int i = 0; (c = seed_env_class_at(i)); i++) {
		char shape[64] = "?", actions[24] = "?";
		int max_steps = 0;
		json_t *empty = json_object();
		void *config = NULL;
		seed_env_spec spec;
		memset(&spec, 0, sizeof spec);
		seed_err err;
		if (c->configure(empty, &config, &spec, &err) == 0) {
			int used = snprintf(shape, sizeof shape, "%s[", seed_dtype_name(spec.obs_dtype));
			for (int d = 0; d < spec.obs_rank && used < (int)sizeof shape; d++)
				used += snprintf(shape + used, sizeof shape - (size_t)used, "%s%" PRId64,
				                 d ? "," : "", spec.obs_shape[d]);
			if (used < (int)sizeof shape)
				snprintf(shape + used, sizeof shape - (size_t)used, "]");
			/* A Box space shows as its action's tensor: f32[A]. */
			snprintf(actions, sizeof actions,
			         spec.action_space == SEED_ACTIONS_BOX ? "f32[%d]" : "%d", spec.num_actions);
			max_steps = spec.max_steps;
			if (c->free_config)
				c->free_config(config);
		}
		json_decref(empty);
		printf("%-12s obs %-14s actions %-6s max_steps %-5d %s\n", c->name, shape, actions, max_steps,
		       c->summary ? c->summary : "");
	}
}

/* ---- which checkpoint ----------------------------------------------------- */

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(seed_xmalloc(n), s, n);
}

/* Whether the run in directory dir (its path without a trailing slash,
 * dlen bytes of it) evaluates periodically: periodic_eval.interval above 0
 * in DIR/config.json, the configuration seed-train runs it with, or, where
 * there is none, in the config of DIR/checkpoint.json.  Neither there: no.
 * A file there that is not JSON is an error naming it. */
static int run_evaluates(const char *dir, int dlen, bool *yes, seed_err *err)
{
	char file[PATH_MAX];
	json_error_t je;
	json_t *config = NULL, *doc = NULL;
	*yes = false;
	snprintf(file, sizeof file, "%.*s/config.json", dlen, dir);
	if (access(file, F_OK) == 0) {
		config = doc = json_load_file(file, 0, &je);
	} else {
		snprintf(file, sizeof file, "%.*s/checkpoint.json", dlen, dir);
		if (access(file, F_OK) != 0)
			return 0;
		doc = json_load_file(file, 0, &je);
		config = json_object_get(doc, "config");
	}
	if (!doc)
		return seed_err_set(err, -EBADMSG,
		                    "%s: %s (line %d); it says whether %.*s/best is the run's result "
		                    "(--last plays the last checkpoint)",
		                    file, je.text, je.line, dlen, dir);
	json_t *interval = json_object_get(json_object_get(config, "periodic_eval"), "interval");
	*yes = json_number_value(interval) > 0;
	json_decref(doc);
	return 0;
}

/* What --checkpoint path plays, as a malloc'd path: for a run directory,
 * what seed-train's final evaluation plays and reports (seed-train(1)):
 * DIR/best, where the run evaluates periodically (run_evaluates) and
 * DIR/best holds a checkpoint, else DIR, its last checkpoint.  With last,
 * and for a file, path itself.  Errors: those of run_evaluates. */
static int resolve_checkpoint(const char *path, bool last, char **out, seed_err *err)
{
	struct stat st;
	*out = NULL;
	if (last || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		*out = xstrdup(path);
		return 0;
	}
	int dlen = (int)strlen(path);
	while (dlen > 1 && path[dlen - 1] == '/')
		dlen--;
	char best[PATH_MAX];
	snprintf(best, sizeof best, "%.*s/best/checkpoint.json", dlen, path);
	bool evaluates = false;
	if (access(best, F_OK) == 0) {
		int rc = run_evaluates(path, dlen, &evaluates, err);
		if (rc < 0)
			return rc;
	}
	if (!evaluates) {
		*out = xstrdup(path);
		return 0;
	}
	snprintf(best, sizeof best, "%.*s/best", dlen, path);
	*out = xstrdup(best);
	return 0;
}

/* Options JSON (NULL: {}) with max_steps set to cap, malloc'd; the options
 * were taken by seed_envs_new already, so they are a JSON object. */
static char *with_max_steps(const char *options, int cap)
{
	json_t *o = json_loads(options ? options : "{}", 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	json_object_set_new(o, "max_steps", json_integer(cap));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		cli_die("cannot format the environment options");
	return s;
}

/* ---- the command line ----------------------------------------------------- */

/* The options: main's variables, filled by the table below. */
static struct {
	eval_options o;
	render_options ro;
	int64_t episodes, envs, seed, cols, delay, gif_episodes, max_episode_steps;
	bool greedy, list, epsilon_seen, last;
	double epsilon, stats_interval;
} opt = {
    .o = {.policy = NULL, .episodes = 10, .envs = 1, .seed = 0, .epsilon = NAN},
    .ro = {.delay_ms = 50, .gif_episodes = 1, .gif_fps = 15},
    .episodes = 10,
    .envs = 1,
    .delay = 50,
    .gif_episodes = 1,
    .max_episode_steps = EVAL_MAX_EPISODE_STEPS,
    .stats_interval = 10,
};

static const seed_opt options[] = {
    {"env", 'e', SEED_OPT_STR, &opt.o.env, "NAME",
     .help = "environment to play: built in (see --list-envs), PATH.so:CLASS of a plugin, a "
             "plugin NAME.so found in SEED_ENV_PATH, or gym:ID, Gymnasium's ID through seed-gym"},
    {"env-options", 'o', SEED_OPT_STR, &opt.o.env_options, "JSON",
     .help = "environment options as a JSON object, e.g. '{\"max_steps\": 200}' (default {})"},
    {"policy", 'p', SEED_OPT_STR, &opt.o.policy, "NAME",
     .help = "how to choose actions: random (uniform over the actions; the default without "
             "--checkpoint)"},
    {"checkpoint", 'm', SEED_OPT_STR, &opt.o.checkpoint, "PATH",
     .help = "play a trained policy: a run directory (what the run reports: DIR/best where "
             "seed-train keeps one, else its last checkpoint) or a .safetensors checkpoint (--env "
             "and --env-options default to those it was trained on)"},
    {"last", 0, SEED_OPT_FLAG, &opt.last,
     .help = "with --checkpoint DIR: play the run's last checkpoint, not DIR/best"},
    {"greedy", 'g', SEED_OPT_FLAG, &opt.greedy,
     .help = "with --checkpoint: the most likely action, not a sample (a Q model: epsilon 0)"},
    {"device", 0, SEED_OPT_STR, &opt.o.device, "DEV",
     .help = "with --checkpoint: run the model on DEV: cpu (default), cuda or cuda:N (a GPU, with "
             "CUDA built in)"},
    {"epsilon", 0, SEED_OPT_NUM, &opt.epsilon, "X", .lo = 0, .hi = 1,
     .help = "with a Q-model checkpoint: explore with epsilon X (default: the config's "
             "r2d2.eval_epsilon, else 0.001)",
     .seen = &opt.epsilon_seen},
    {"episodes", 'n', SEED_OPT_INT, &opt.episodes, "N", 1, 10000000,
     .help = "episodes to finish (default 10)"},
    {"envs", 'k', SEED_OPT_INT, &opt.envs, "K", 1, 65536,
     .help = "environments stepped side by side (default 1)"},
    {"seed", 's', SEED_OPT_INT, &opt.seed, "S", 0, INT64_MAX,
     .help = "seed of the environments and of the policy (default 0)"},
    {"max-episode-steps", 0, SEED_OPT_INT, &opt.max_episode_steps, "N", 0, INT32_MAX,
     .help = "cut an episode at N steps, as truncated (default 27000: Atari's 108K frames at "
             "frame skip 4; 0: no cap)"},
    {"stats-interval", 0, SEED_OPT_NUM, &opt.stats_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "say on stderr how far play has come every SEC seconds (default 10; 0: never)"},
    {"render", 0, SEED_OPT_FLAG, &opt.ro.term,
     .help = "draw each step of env 0 on stdout, before the summary: colour pictures and a status "
             "line"},
    {"render-width", 0, SEED_OPT_INT, &opt.cols, "COLS", 1, 1000,
     .help = "picture width in columns (default: fit the terminal, or 80 x 22 cells)"},
    {"render-delay", 0, SEED_OPT_INT, &opt.delay, "MS", 0, 60000,
     .help = "pause after each picture (default 50)"},
    {"record", 0, SEED_OPT_STR, &opt.ro.gif_path, "FILE.gif",
     .help = "write the first episode of env 0 as an animated GIF"},
    {"record-episodes", 0, SEED_OPT_INT, &opt.gif_episodes, "N", 1, 1000000,
     .help = "record N episodes of env 0, one after another (default 1)"},
    {"record-fps", 0, SEED_OPT_NUM, &opt.ro.gif_fps, "FPS", .lo = SEED_GIF_MIN_FPS, .hi = SEED_GIF_MAX_FPS,
     .help = "GIF frames a second, 0.01 to 50 (default 15)"},
    {"list-envs", 'l', SEED_OPT_FLAG, &opt.list, .help = "list the environments and exit"},
    {0},
};
static const seed_opts usage_spec = {
    .usage = "--env NAME [--policy random] [OPTION]...\n"
             "--checkpoint DIR|FILE [--last] [--greedy | --epsilon X] [OPTION]...\n"
             "--list-envs",
    .summary = "Play episodes of an environment locally and print one JSON object with the\n"
               "return and length statistics of exactly N episodes.",
    .epilogue = "Output: {\"env\", \"policy\", \"episodes\", \"envs\", \"seed\", \"return\": {\"mean\",\n"
                "\"std\", \"median\", \"min\", \"max\"}, \"length\": {same}, \"max_episode_steps\",\n"
                "\"truncated\" (episodes cut at the cap)}; std is the population standard\n"
                "deviation (divided by N); with --checkpoint also \"checkpoint\" (the path\n"
                "played), \"step\", \"greedy\" and, for a Q model, \"epsilon\".  The same arguments\n"
                "give the same output.\n"
                "\n"
                "Examples: seed-eval --env cartpole --episodes 100 --seed 1 | jq .return.mean\n"
                "          seed-eval --env catch --episodes 3 --render\n"
                "          seed-eval --env cartpole --episodes 1 --record cartpole.gif\n"
                "          seed-eval --env gym:CartPole-v1 --checkpoint run --record cp.gif\n",
    .opts = options,
    .max_operands = 0,
};

/* The options as eval_options and render_options. */
static void take_options(eval_options *o, render_options *ro)
{
	*o = opt.o;
	*ro = opt.ro;
	ro->term_out = stdout;
	o->episodes = opt.episodes;
	o->envs = (int)opt.envs;
	o->seed = (uint64_t)opt.seed;
	o->greedy = opt.greedy;
	o->max_episode_steps = (int)opt.max_episode_steps;
	if (opt.epsilon_seen)
		o->epsilon = opt.epsilon;
	ro->term_cols = (int)opt.cols;
	ro->delay_ms = (int)opt.delay;
	ro->gif_episodes = opt.gif_episodes;
}

/* Which policy plays (its index in policies[]): with --checkpoint, the
 * checkpoint's, loaded, o->checkpoint then the path played (*played) and
 * the env and its options the checkpoint's where not given (*ck_options);
 * else --policy's.  Misuse is a usage error (status 2). */
static size_t choose_policy(eval_options *o, char **played, char **ck_options)
{
	seed_err err;
	if (o->checkpoint) {
		if (o->policy && strcmp(o->policy, "checkpoint") != 0)
			cli_usage_error("--checkpoint plays the checkpoint's policy; drop --policy %s",
			                o->policy);
		o->policy = "checkpoint";
		if (resolve_checkpoint(o->checkpoint, opt.last, played, &err) < 0)
			cli_die("--checkpoint: %s", err.msg);
		o->checkpoint = *played;
		if (seed_checkpoint_load(o->checkpoint, &checkpoint, &err) < 0)
			cli_die("--checkpoint: %s", err.msg);
		if (!o->env)
			o->env = checkpoint->env;
		if (!o->env_options && checkpoint->env_options && checkpoint->env && o->env &&
		    strcmp(o->env, checkpoint->env) == 0)
			o->env_options = *ck_options = json_dumps(checkpoint->env_options, JSON_COMPACT);
	} else if (!o->policy) {
		o->policy = "random";
	} else if (strcmp(o->policy, "checkpoint") == 0) {
		cli_usage_error("--policy checkpoint needs --checkpoint PATH");
	}
	if (o->greedy && !o->checkpoint)
		cli_usage_error("--greedy goes with --checkpoint");
	if (opt.last && !o->checkpoint)
		cli_usage_error("--last goes with --checkpoint DIR");
	if (o->device && !o->checkpoint)
		cli_usage_error("--device goes with --checkpoint (a random policy has no model to run)");
	if (opt.epsilon_seen && !o->checkpoint)
		cli_usage_error("--epsilon goes with --checkpoint (of a Q model)");
	if (opt.epsilon_seen && o->greedy)
		cli_usage_error("--greedy is epsilon 0: drop --epsilon");
	if (!o->env)
		cli_usage_error("--env is required (see --list-envs)");
	size_t pi = 0;
	while (pi < sizeof policies / sizeof policies[0] && strcmp(policies[pi].name, o->policy) != 0)
		pi++;
	if (pi == sizeof policies / sizeof policies[0])
		cli_usage_error("--policy: unknown policy '%s' (known: random; or --checkpoint PATH)",
		                o->policy);
	return pi;
}

/* Seed's environment o->env with env_options, or die: an unknown
 * environment or bad options are usage errors, others that cannot work
 * configuration errors (status 2 both). */
static void new_local(seed_envs **e, const eval_options *o, const char *env_options)
{
	seed_err err;
	int rc = seed_envs_new(e, o->env, env_options, o->envs, o->seed, &err);
	if (rc == -ENOENT)
		cli_usage_error("--env: %s (see --list-envs)", err.msg);
	if (rc == -SEED_EOPTION)
		cli_usage_error("--env-options: %s", err.msg);
	if (rc == -EINVAL)
		cli_config_error("%s", err.msg);
	if (rc < 0)
		cli_die("%s", err.msg);
}

/* The environments o names, and the source of their pictures (pictures:
 * env 0's are wanted, for --render or --record). */
static void open_envs(eval_envs *envs, const eval_options *o, bool pictures, render_source *source)
{
	*envs = (eval_envs){.k = o->envs};
	if (strncmp(o->env, "gym:", 4) == 0) {
		seed_err err;
		if (seed_gym_envs_new(&envs->gym, o->env, o->env_options, o->envs, o->seed, pictures,
		                      o->max_episode_steps, &cli_stop, &err) < 0)
			cli_die("%s", err.msg);
		envs->spec = seed_gym_envs_spec(envs->gym);
		*source = (render_source){.name = o->env,
		                          .width = envs->spec->rgb_width,
		                          .height = envs->spec->rgb_height,
		                          .draw = seed_gym_envs_draw,
		                          .ctx = envs->gym};
		return;
	}
	new_local(&envs->local, o, o->env_options);
	/* The cap as the time limit, where it is the shorter one. */
	int own = seed_envs_spec(envs->local)->max_steps, cap = o->max_episode_steps;
	if (cap > 0 && (own == 0 || own > cap)) {
		char *capped = with_max_steps(o->env_options, cap);
		seed_envs_free(&envs->local);
		new_local(&envs->local, o, capped);
		free(capped);
		envs->local_capped = true;
	}
	envs->spec = seed_envs_spec(envs->local);
	*source = render_source_envs(envs->local);
}

/* The policy of policies[pi] for the envs' spec, or die: one that cannot
 * work with them (a model that does not fit the environment) is a
 * configuration error (status 2). */
static void make_policy(eval_policy *policy, size_t pi, const eval_options *o, const seed_env_spec *spec)
{
	seed_err err;
	*policy = (eval_policy){.name = policies[pi].name};
	int rc = policies[pi].init(policy, o, spec, &err);
	if (rc == -EINVAL || rc == -SEED_EOPTION || rc == -ENOENT)
		cli_config_error("policy %s: %s", policy->name, err.msg);
	if (rc < 0)
		cli_die("policy %s: %s", policy->name, err.msg);
	if (opt.epsilon_seen && isnan(policy->epsilon))
		cli_usage_error("--epsilon: the checkpoint's model has an actor-critic head, which samples "
		                "from its policy; epsilon is for Q models (a dueling head)");
}

/* The JSON summary on stdout (see the --help epilogue); sorts ret, len. */
static void print_summary(const eval_options *o, const eval_policy *policy, double *ret, double *len,
                          long long cut)
{
	json_t *out =
	    json_pack("{s:s, s:s, s:I, s:i, s:I, s:o, s:o, s:i, s:I}", "env", o->env, "policy", policy->name,
	              "episodes", (json_int_t)o->episodes, "envs", o->envs, "seed", (json_int_t)o->seed,
	              "return", summary(ret, o->episodes), "length", summary(len, o->episodes),
	              "max_episode_steps", o->max_episode_steps, "truncated", (json_int_t)cut);
	if (o->checkpoint) {
		json_object_set_new(out, "checkpoint", json_string(o->checkpoint));
		json_object_set_new(out, "step", json_integer(checkpoint->step));
		json_object_set_new(out, "greedy", json_boolean(o->greedy));
		if (!isnan(policy->epsilon))
			json_object_set_new(out, "epsilon", json_real(policy->epsilon));
	}
	char *text = json_dumps(out, JSON_REAL_PRECISION(10));
	if (!text)
		cli_die("cannot format the summary");
	if (printf("%s\n", text) < 0 || fflush(stdout) != 0)
		cli_die("writing the summary failed");
	free(text);
	json_decref(out);
}

int main(int argc, char **argv)
{
	cli_parse(&usage_spec, argc, argv);
	eval_options o;
	render_options ro;
	take_options(&o, &ro);
	if (opt.list) {
		list_envs();
		return 0;
	}
	seed_err err = {""};
	char *ck_env_options = NULL, *played = NULL;
	if (o.device && seed_device_check(o.device, &err) < 0)
		cli_die("--device: %s", err.msg);
	size_t pi = choose_policy(&o, &played, &ck_env_options);
	eval_envs envs;
	render_source source;
	open_envs(&envs, &o, ro.term || ro.gif_path, &source);
	eval_policy policy;
	make_policy(&policy, pi, &o, envs.spec);

	render_view *view = NULL;
	int rc = render_view_new(&view, &source, &ro, &err);
	if (rc == -ENOTSUP)
		cli_usage_error("%s: %s", ro.term ? "--render" : "--record", err.msg);
	if (rc < 0)
		cli_die("--record: %s", err.msg);

	cli_catch_signals();
	double *ret = seed_xmalloc((size_t)o.episodes * sizeof *ret);
	double *len = seed_xmalloc((size_t)o.episodes * sizeof *len);
	long long cut = 0;
	rc = play(&envs, &policy, o.episodes, ret, len, &cut, ro.term ? 0 : opt.stats_interval, view, &err);
	if (rc < 0)
		cli_die("%s", err.msg);
	render_view_free(&view);
	if (envs.gym && seed_gym_envs_close(&envs.gym, &err) < 0)
		cli_die("%s", err.msg);
	print_summary(&o, &policy, ret, len, cut);
	free(ret);
	free(len);
	if (policy.free)
		policy.free(&policy);
	seed_envs_free(&envs.local);
	seed_checkpoint_free(&checkpoint);
	free(ck_env_options);
	free(played);
	return 0;
}
