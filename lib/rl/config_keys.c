/* config_keys.c: the training configuration's vocabulary (seed/config.h,
 * seed-config(5)): one row per key, its dotted name, type, place in struct
 * seed_config, default, range and one line of meaning (config_internal.h
 * says what a row holds; config.c reads, checks and writes by the rows).
 * seed-config(5) is tested against this table.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "config_internal.h"

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

static const struct choice algorithms[] = {
    {"vtrace", SEED_CONFIG_VTRACE}, {"r2d2", SEED_CONFIG_R2D2}, {"ppo", SEED_CONFIG_PPO},
    {"es", SEED_CONFIG_ES},         {"ga", SEED_CONFIG_GA},     {"rs", SEED_CONFIG_RS},
    {"snes", SEED_CONFIG_SNES},     {"ars", SEED_CONFIG_ARS},   {NULL, 0}};
static const struct choice optim_kinds[] = {
    {"adam", SEED_OPTIM_ADAM}, {"rmsprop", SEED_OPTIM_RMSPROP}, {NULL, 0}};
static const struct choice rmsprop_styles[] = {
    {"tf", SEED_RMSPROP_TF}, {"torch", SEED_RMSPROP_TORCH}, {NULL, 0}};
static const struct choice reductions[] = {{"mean", SEED_LOSS_MEAN}, {"sum", SEED_LOSS_SUM}, {NULL, 0}};
static const struct choice centre_inits[] = {
    {"model", SEED_CONFIG_CENTRE_MODEL}, {"zero", SEED_CONFIG_CENTRE_ZERO}, {NULL, 0}};
static const struct choice ckpt_policies[] = {
    {"stop", SEED_CONFIG_CKPT_STOP}, {"continue", SEED_CONFIG_CKPT_CONTINUE}, {NULL, 0}};

/* Choices are read and written through an int. */
_Static_assert(sizeof(seed_config_algorithm) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_optim_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_rmsprop_style) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_loss_reduce) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_config_ckpt_policy) == sizeof(int), "enum size");
_Static_assert(sizeof(seed_config_centre_init) == sizeof(int), "enum size");

/* Defaults that depend on rows read before. */
static double rmsprop_eps(const seed_config *c, double dflt)
{
	return c->optim.kind == SEED_OPTIM_RMSPROP ? 0.01 : dflt;
}

static double ga_population(const seed_config *c, double dflt)
{
	return c->algorithm == SEED_CONFIG_GA ? 1000 : dflt;
}

static double evo_sigma(const seed_config *c, double dflt)
{
	switch (c->algorithm) {
	case SEED_CONFIG_GA:
		return 0.002;
	case SEED_CONFIG_SNES:
		return 0.01;
	case SEED_CONFIG_ARS:
		return 0.03;
	default:
		return dflt;
	}
}

static double evo_lr(const seed_config *c, double dflt)
{
	return c->algorithm == SEED_CONFIG_SNES ? 1 : c->algorithm == SEED_CONFIG_ARS ? 0.02 : dflt;
}

static double at_most_population(const seed_config *c, double dflt)
{
	return c->evolution.population < dflt ? c->evolution.population : dflt;
}

/* Every key, in the order they are read (a default may depend on a row
 * above it) and written back.  Sections precede their rows. */
const struct key config_keys[] = {
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
    {INT("evolution.episodes_per_member", evolution.episodes, 1, 1, 1 << 20, W_EVO,
         "episodes of each member a round (its fitness: their mean)")},
    {DBL("evolution.sigma", evolution.sigma, 0.02, 0, 1e6, W_EVO,
         "es's and ars's perturbation std, snes's first stds, ga's mutation power"),
     .dflt_of = evo_sigma, .dflt_note = "ga: 0.002; snes: 0.01; ars: 0.03"},
    {INT("evolution.rank", evolution.rank, 0, 0, 1 << 16, W_EVO, "0: full-rank noise; r: rank-r noise")},
    {U64("evolution.noise_seed", evolution.noise_seed, 0, W_EVO, "the seed of the shared noise table")},
    {I64("evolution.noise_size", evolution.noise_size, 1 << 24, 1, INT32_MAX, W_EVO,
         "floats of the shared noise table")},
    {FLT("evolution.lr", evolution.lr, 0.01, 0, 10, W_EVO,
         "es's Adam learning rate, snes's centre learning rate, ars's step size"),
     .dflt_of = evo_lr, .dflt_note = "snes: 1; ars: 0.02"},
    {FLT("evolution.lr_sigma", evolution.lr_sigma, 0, 0, 10, W_EVO,
         "snes's learning rate of the stds; 0: (3 + ln P) / (5 sqrt P)")},
    {DBL("evolution.temperature", evolution.temperature, 0, 0, 1e6, W_EVO,
         "snes's weights: > 0 softmax(-temperature x) over ranks x in [-0.5, 0.5]; 0 rank utilities")},
    {CHOICE("evolution.centre_init", evolution.centre_init, centre_inits, SEED_CONFIG_CENTRE_MODEL, W_EVO,
            "where es's, snes's and ars's centre starts: the model's initialisation or zero"),
     .flags = F_KNOWN},
    {INT("evolution.top", evolution.top, 0, 0, 1 << 20, W_EVO,
         "ars's pairs (directions) of an update, best by max(r+, r-); 0: all")},
    {DBL("evolution.reward_shift", evolution.reward_shift, 0, -1e6, 1e6, W_EVO,
         "fitness is the mean return less this times the mean episode length")},
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
    {BOOL("evolution.common_episodes", evolution.common_episodes, 0, W_EVO,
          "every member's k-th episode of a round from the same seed (common random numbers)")},
    {DBL("evolution.action_noise", evolution.action_noise, 0, 0, 1e6, W_EVO,
         "std of the noise added to Box members' mean actions")},
    /* Training, stopping and reporting. */
    {U64("seed", seed, 0, W_ALWAYS, "the seed of the model's initialisation (and of the run's programs)")},
    {FLT("discount", discount, 0.99, 0, 1, W_ALWAYS, "the discount of future rewards")},
    {BOOL("normalize_reward", normalize_reward, 0, W_ALWAYS,
          "scale rewards by a running deviation of discounted returns (Gymnasium's NormalizeReward)")},
    {FLT("reward_clip", reward_clip, 10, 1e-6, 1e30, W_ALWAYS, "scaled rewards are clipped to +-this")},
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

const size_t config_nkeys = sizeof config_keys / sizeof config_keys[0];

const char *seed_config_algorithm_name(seed_config_algorithm a)
{
	for (int i = 0; algorithms[i].name; i++)
		if (algorithms[i].value == (int)a)
			return algorithms[i].name;
	return "vtrace";
}
