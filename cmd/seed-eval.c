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
 * in its offline mode (gymenvs.c): the same loop, policies and summary,
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

#include "cli.h"
#include "gymenvs.h"
#include "render.h"
#include "seed/agent.h"
#include "seed/buf.h"
#include "seed/env.h"
#include "seed/checkpoint.h"
#include "seed/gif.h"
#include "seed/nn.h"
#include "seed/rng.h"

/* ---- policies ------------------------------------------------------------- */

/* A policy: a batch of observations in, a batch of actions out. */
typedef struct eval_policy {
	const char *name;
	/* Write actions[0..count) in [0, num_actions) for the observations obs
	 * ([count][obs bytes], env i in row i).  0, or a negative code with a
	 * message in err. */
	int (*act)(struct eval_policy *p, const void *obs, int count, int32_t *actions, seed_err *err);
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
	double epsilon; /* --epsilon; NaN: not given */
	long long episodes;
	int envs;
	uint64_t seed;
} eval_options;

/* Uniform random actions from one generator on a stream apart from the
 * environments' (their streams are 0 .. K-1). */
typedef struct random_policy {
	seed_rng rng;
	uint32_t num_actions;
} random_policy;

static int random_act(eval_policy *p, const void *obs, int count, int32_t *actions, seed_err *err)
{
	random_policy *r = p->ctx;
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
} model_policy;

static int model_act(eval_policy *p, const void *obs, int count, int32_t *actions, seed_err *err)
{
	model_policy *m = p->ctx;
	m->obs_shape[0] = count;
	seed_tensor t = seed_tensor_view((void *)obs, m->obs_dtype, m->obs_rank, m->obs_shape);
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
	free(m);
}

static seed_checkpoint *checkpoint; /* loaded before the envs: it names them */

/* A Q model's evaluation epsilon when --epsilon is not given: --greedy's 0,
 * the checkpoint config's r2d2.eval_epsilon, or EVAL_EPSILON. */
#define EVAL_EPSILON 1e-3
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
		return seed_err_set(err, -EINVAL,
		                    "%s: the config's r2d2.eval_epsilon is not a number in [0, 1]; give "
		                    "--epsilon",
		                    o->checkpoint);
	*eps = e;
	return 0;
}

static int model_new(eval_policy *p, const eval_options *o, const seed_env_spec *spec, seed_err *err)
{
	if (!checkpoint->model)
		return seed_err_set(err, -EINVAL, "%s: the checkpoint does not describe its model",
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
	gym_envs *gym;
	const seed_env_spec *spec;
	int k;
} eval_envs;

/* Step envs with policy until n episodes have ended; their returns and
 * lengths go to ret[0..n) and len[0..n) in the order they ended.  view (may
 * be NULL) sees env 0's steps. */
static int play(eval_envs *envs, eval_policy *policy, long long n, double *ret, double *len,
                render_view *view, seed_err *err)
{
	const int k = envs->k;
	const size_t ob = seed_env_spec_obs_bytes(envs->spec);
	void *obs = seed_xmalloc((size_t)k * ob);
	int32_t *actions = seed_xmalloc((size_t)k * sizeof *actions);
	float *reward = seed_xmalloc((size_t)k * sizeof *reward);
	uint8_t *term = seed_xmalloc((size_t)k);
	uint8_t *trunc = seed_xmalloc((size_t)k);
	float *ep_return = seed_xmalloc((size_t)k * sizeof *ep_return);
	int32_t *ep_length = seed_xmalloc((size_t)k * sizeof *ep_length);
	int rc = 0;
	long long done = 0;

	if (envs->local)
		seed_envs_reset(envs->local, obs);
	else
		gym_envs_reset(envs->gym, obs);
	if (view)
		rc = render_view_reset(view, err);
	while (rc == 0 && (done < n || render_view_wants_more(view))) {
		if (cli_stop) {
			rc = seed_err_set(err, -EINTR, "interrupted after %lld of %lld episodes", done, n);
			break;
		}
		rc = policy->act(policy, obs, k, actions, err);
		if (rc < 0)
			break;
		if (envs->gym) {
			rc = gym_envs_step(envs->gym, actions, obs, reward, term, trunc, ep_return, ep_length,
			                   err);
			if (rc == -EINTR)
				seed_err_set(err, rc, "interrupted after %lld of %lld episodes", done, n);
			if (rc < 0)
				break;
		} else if ((rc = seed_envs_step(envs->local, 0, k, actions, obs, reward, term, trunc, NULL,
		                                ep_return, ep_length)) < 0) {
			seed_err_set(err, rc, "policy %s chose an action out of range", policy->name);
			break;
		}
		if (policy->stepped)
			policy->stepped(policy, k, reward, term, trunc);
		if (view && (rc = render_view_step(view, reward[0], term[0], trunc[0], err)) < 0)
			break;
		for (int i = 0; i < k && done < n; i++) {
			if (term[i] || trunc[i]) {
				ret[done] = ep_return[i];
				len[done] = ep_length[i];
				done++;
			}
		}
	}
	free(obs);
	free(actions);
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
		char shape[64] = "?";
		int actions = 0, max_steps = 0;
		json_t *empty = json_object();
		void *config = NULL;
		seed_env_spec spec;
		seed_err err;
		if (c->configure(empty, &config, &spec, &err) == 0) {
			int used = snprintf(shape, sizeof shape, "%s[", seed_dtype_name(spec.obs_dtype));
			for (int d = 0; d < spec.obs_rank && used < (int)sizeof shape; d++)
				used += snprintf(shape + used, sizeof shape - (size_t)used, "%s%" PRId64,
				                 d ? "," : "", spec.obs_shape[d]);
			if (used < (int)sizeof shape)
				snprintf(shape + used, sizeof shape - (size_t)used, "]");
			actions = spec.num_actions;
			max_steps = spec.max_steps;
			if (c->free_config)
				c->free_config(config);
		}
		json_decref(empty);
		printf("%-12s obs %-14s actions %-3d max_steps %-5d %s\n", c->name, shape, actions, max_steps,
		       c->summary ? c->summary : "");
	}
}

int main(int argc, char **argv)
{
	eval_options o = {.policy = NULL, .episodes = 10, .envs = 1, .seed = 0, .epsilon = NAN};
	render_options ro = {.term_out = stdout, .delay_ms = 50, .gif_episodes = 1, .gif_fps = 15};
	int64_t episodes = o.episodes, envs_n = o.envs, seed = 0, cols = 0, delay = ro.delay_ms,
	        gif_episodes = ro.gif_episodes;
	bool greedy = false, list = false, epsilon_seen = false;
	double epsilon = 0;
	const seed_opt options[] = {
	    {"env", 'e', SEED_OPT_STR, &o.env, "NAME",
	     .help = "environment to play: built in (see --list-envs), PATH.so:CLASS of a plugin, a "
	             "plugin NAME.so found in SEED_ENV_PATH, or gym:ID, Gymnasium's ID through seed-gym"},
	    {"env-options", 'o', SEED_OPT_STR, &o.env_options, "JSON",
	     .help = "environment options as a JSON object, e.g. '{\"max_steps\": 200}' (default {})"},
	    {"policy", 'p', SEED_OPT_STR, &o.policy, "NAME",
	     .help = "how to choose actions: random (uniform over the actions; the default without "
	             "--checkpoint)"},
	    {"checkpoint", 'm', SEED_OPT_STR, &o.checkpoint, "PATH",
	     .help = "play a trained policy: a run directory or a .safetensors checkpoint (--env and "
	             "--env-options default to those it was trained on)"},
	    {"greedy", 'g', SEED_OPT_FLAG, &greedy,
	     .help = "with --checkpoint: the most likely action, not a sample (a Q model: epsilon 0)"},
	    {"device", 0, SEED_OPT_STR, &o.device, "DEV",
	     .help = "with --checkpoint: run the model on DEV: cpu (default), cuda or cuda:N (a GPU, with "
	             "CUDA built in)"},
	    {"epsilon", 0, SEED_OPT_NUM, &epsilon, "X", .lo = 0, .hi = 1,
	     .help = "with a Q-model checkpoint: explore with epsilon X (default: the config's "
	             "r2d2.eval_epsilon, else 0.001)",
	     .seen = &epsilon_seen},
	    {"episodes", 'n', SEED_OPT_INT, &episodes, "N", 1, 10000000,
	     .help = "episodes to finish (default 10)"},
	    {"envs", 'k', SEED_OPT_INT, &envs_n, "K", 1, 65536,
	     .help = "environments stepped side by side (default 1)"},
	    {"seed", 's', SEED_OPT_INT, &seed, "S", 0, INT64_MAX,
	     .help = "seed of the environments and of the policy (default 0)"},
	    {"render", 0, SEED_OPT_FLAG, &ro.term,
	     .help = "draw each step of env 0 on stdout, before the summary: colour pictures and a status "
	             "line"},
	    {"render-width", 0, SEED_OPT_INT, &cols, "COLS", 1, 1000,
	     .help = "picture width in columns (default: fit the terminal, or 80 x 22 cells)"},
	    {"render-delay", 0, SEED_OPT_INT, &delay, "MS", 0, 60000,
	     .help = "pause after each picture (default 50)"},
	    {"record", 0, SEED_OPT_STR, &ro.gif_path, "FILE.gif",
	     .help = "write the first episode of env 0 as an animated GIF"},
	    {"record-episodes", 0, SEED_OPT_INT, &gif_episodes, "N", 1, 1000000,
	     .help = "record N episodes of env 0, one after another (default 1)"},
	    {"record-fps", 0, SEED_OPT_NUM, &ro.gif_fps, "FPS", .lo = SEED_GIF_MIN_FPS,
	     .hi = SEED_GIF_MAX_FPS, .help = "GIF frames a second, 0.01 to 50 (default 15)"},
	    {"list-envs", 'l', SEED_OPT_FLAG, &list, .help = "list the environments and exit"},
	    {0},
	};
	const seed_opts spec = {
	    .usage = "--env NAME [--policy random] [OPTION]...\n"
	             "--checkpoint DIR|FILE [--greedy | --epsilon X] [OPTION]...\n"
	             "--list-envs",
	    .summary = "Play episodes of an environment locally and print one JSON object with the\n"
	               "return and length statistics of exactly N episodes.",
	    .epilogue =
	        "Output: {\"env\", \"policy\", \"episodes\", \"envs\", \"seed\", \"return\": {\"mean\",\n"
	        "\"std\", \"median\", \"min\", \"max\"}, \"length\": {same}}; std is the population\n"
	        "standard deviation (divided by N); with --checkpoint also \"checkpoint\", \"greedy\"\n"
	        "and, for a Q model, \"epsilon\".  The same arguments give the same output.\n"
	        "\n"
	        "Examples: seed-eval --env cartpole --episodes 100 --seed 1 | jq .return.mean\n"
	        "          seed-eval --env catch --episodes 3 --render\n"
	        "          seed-eval --env cartpole --episodes 1 --record cartpole.gif\n"
	        "          seed-eval --env gym:CartPole-v1 --checkpoint run --record cp.gif\n",
	    .opts = options,
	    .max_operands = 0,
	};
	cli_parse(&spec, argc, argv);
	o.episodes = episodes;
	o.envs = (int)envs_n;
	o.seed = (uint64_t)seed;
	o.greedy = greedy;
	if (epsilon_seen)
		o.epsilon = epsilon;
	ro.term_cols = (int)cols;
	ro.delay_ms = (int)delay;
	ro.gif_episodes = gif_episodes;
	if (list) {
		list_envs();
		return 0;
	}
	seed_err err = {""};
	char *ck_env_options = NULL;
	if (o.device && seed_device_check(o.device, &err) < 0)
		cli_die("--device: %s", err.msg);
	if (o.checkpoint) {
		if (o.policy && strcmp(o.policy, "checkpoint") != 0)
			cli_usage_error("--checkpoint plays the checkpoint's policy; drop --policy %s",
			                o.policy);
		o.policy = "checkpoint";
		if (seed_checkpoint_load(o.checkpoint, &checkpoint, &err) < 0)
			cli_die("--checkpoint: %s", err.msg);
		if (!o.env)
			o.env = checkpoint->env;
		if (!o.env_options && checkpoint->env_options && checkpoint->env && o.env &&
		    strcmp(o.env, checkpoint->env) == 0)
			o.env_options = ck_env_options = json_dumps(checkpoint->env_options, JSON_COMPACT);
	} else if (!o.policy) {
		o.policy = "random";
	} else if (strcmp(o.policy, "checkpoint") == 0) {
		cli_usage_error("--policy checkpoint needs --checkpoint PATH");
	}
	if (o.greedy && !o.checkpoint)
		cli_usage_error("--greedy goes with --checkpoint");
	if (o.device && !o.checkpoint)
		cli_usage_error("--device goes with --checkpoint (a random policy has no model to run)");
	if (epsilon_seen && !o.checkpoint)
		cli_usage_error("--epsilon goes with --checkpoint (of a Q model)");
	if (epsilon_seen && o.greedy)
		cli_usage_error("--greedy is epsilon 0: drop --epsilon");
	if (!o.env)
		cli_usage_error("--env is required (see --list-envs)");
	size_t pi = 0;
	while (pi < sizeof policies / sizeof policies[0] && strcmp(policies[pi].name, o.policy) != 0)
		pi++;
	if (pi == sizeof policies / sizeof policies[0])
		cli_usage_error("--policy: unknown policy '%s' (known: random; or --checkpoint PATH)",
		                o.policy);

	eval_envs envs = {.k = o.envs};
	render_source source;
	int rc;
	if (strncmp(o.env, "gym:", 4) == 0) {
		rc = gym_envs_new(&envs.gym, o.env, o.env_options, o.envs, o.seed, ro.term || ro.gif_path,
		                  &err);
		if (rc < 0)
			cli_die("%s", err.msg);
		envs.spec = gym_envs_spec(envs.gym);
		source = (render_source){.name = o.env,
		                         .width = envs.spec->rgb_width,
		                         .height = envs.spec->rgb_height,
		                         .draw = gym_envs_draw,
		                         .ctx = envs.gym};
	} else {
		rc = seed_envs_new(&envs.local, o.env, o.env_options, o.envs, o.seed, &err);
		if (rc == -ENOENT)
			cli_usage_error("--env: %s (see --list-envs)", err.msg);
		if (rc == -SEED_EOPTION)
			cli_usage_error("--env-options: %s", err.msg);
		if (rc < 0)
			cli_die("%s", err.msg);
		envs.spec = seed_envs_spec(envs.local);
		source = render_source_envs(envs.local);
	}

	eval_policy policy = {.name = policies[pi].name};
	rc = policies[pi].init(&policy, &o, envs.spec, &err);
	if (rc < 0)
		cli_die("policy %s: %s", policy.name, err.msg);
	if (epsilon_seen && isnan(policy.epsilon))
		cli_usage_error("--epsilon: the checkpoint's model has an actor-critic head, which samples "
		                "from its policy; epsilon is for Q models (a dueling head)");

	render_view *view = NULL;
	rc = render_view_new(&view, &source, &ro, &err);
	if (rc == -ENOTSUP)
		cli_usage_error("%s: %s", ro.term ? "--render" : "--record", err.msg);
	if (rc < 0)
		cli_die("--record: %s", err.msg);

	cli_catch_signals();
	double *ret = seed_xmalloc((size_t)o.episodes * sizeof *ret);
	double *len = seed_xmalloc((size_t)o.episodes * sizeof *len);
	rc = play(&envs, &policy, o.episodes, ret, len, view, &err);
	if (rc < 0)
		cli_die("%s", err.msg);
	render_view_free(&view);
	if (envs.gym && gym_envs_close(&envs.gym, &err) < 0)
		cli_die("%s", err.msg);

	json_t *out =
	    json_pack("{s:s, s:s, s:I, s:i, s:I, s:o, s:o}", "env", o.env, "policy", policy.name, "episodes",
	              (json_int_t)o.episodes, "envs", o.envs, "seed", (json_int_t)o.seed, "return",
	              summary(ret, o.episodes), "length", summary(len, o.episodes));
	if (o.checkpoint) {
		json_object_set_new(out, "checkpoint", json_string(o.checkpoint));
		json_object_set_new(out, "greedy", json_boolean(o.greedy));
		if (!isnan(policy.epsilon))
			json_object_set_new(out, "epsilon", json_real(policy.epsilon));
	}
	char *text = json_dumps(out, JSON_REAL_PRECISION(10));
	if (!text)
		cli_die("cannot format the summary");
	if (printf("%s\n", text) < 0 || fflush(stdout) != 0)
		cli_die("writing the summary failed");
	free(text);
	json_decref(out);
	free(ret);
	free(len);
	if (policy.free)
		policy.free(&policy);
	seed_envs_free(&envs.local);
	seed_checkpoint_free(&checkpoint);
	free(ck_env_options);
	return 0;
}
