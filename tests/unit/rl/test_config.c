/* tests/unit/rl/test_config.c: training configurations (seed/config.h).
 *
 * The defaults and ranges checked here are the ones seed-config(5) states,
 * copied from the manual by hand: the manual is the reference, so a change
 * of either shows up here.  Error cases are a table: each names the config
 * (or --set) at fault and a part of the message that must name the key.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "seed/config.h"
#include "tap.h"
#include "tmpdir.h"

static const char *MINIMAL = "{\"env\": \"cartpole\", \"model\": {\"torso\": []}}";

static int has(const char *msg, const char *part)
{
	return strstr(msg, part) != NULL;
}

static json_t *parse_json(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	if (!j) {
		printf("# bad JSON in the test: %s\n", text);
		exit(99);
	}
	return j;
}

static const char *srcdir(void)
{
	const char *s = getenv("SEED_SRCDIR");
	return s && *s ? s : ".";
}

/* Every default of seed-config(5), on a config that gives only the two
 * required keys. */
static void t_defaults_are_the_manuals(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_config c;
	seed_err err = {""};
	CHECK(seed_config_parse(root, &c, &err) == 0);
	CHECK(strcmp(c.env, "cartpole") == 0);
	CHECK(strcmp(c.env_options, "{}") == 0);
	CHECK_NEAR(c.discount, 0.99, 1e-7);
	CHECK(c.unroll_length == 20);
	CHECK(c.batch_size == 32);
	CHECK_NEAR(c.max_grad_norm, 40, 0);
	CHECK_NEAR(c.loss.baseline_cost, 0.5, 0);
	CHECK_NEAR(c.loss.entropy_cost, 0.01, 1e-9);
	CHECK_NEAR(c.loss.clip_rho, 1, 0);
	CHECK_NEAR(c.loss.clip_pg_rho, 1, 0);
	CHECK_NEAR(c.loss.lambda, 1, 0);
	CHECK(c.loss.reduce == SEED_LOSS_MEAN);
	CHECK(c.optim.kind == SEED_OPTIM_ADAM);
	CHECK_NEAR(c.lr, 0.0006, 1e-10);
	CHECK(c.lr_decay);
	CHECK_NEAR(c.lr_min, 0, 0);
	CHECK_NEAR(c.optim.beta1, 0.9, 1e-7);
	CHECK_NEAR(c.optim.beta2, 0.999, 1e-7);
	CHECK_NEAR(c.optim.eps, 1e-8, 1e-14);
	CHECK(c.seed == 0);
	CHECK(c.total_frames == 5000000);
	CHECK(isnan(c.target_return));
	CHECK(c.return_window == 100);
	CHECK_NEAR(c.checkpoint_interval, 30, 0);
	CHECK(c.checkpoint_failure == SEED_CONFIG_CKPT_STOP);
	CHECK_NEAR(c.metrics_interval, 1, 0);
	CHECK(c.actors == 2 && c.envs_per_actor == 64);
	CHECK(c.infer_max_batch == 256 && c.infer_timeout_us == 500 && c.infer_hwm == 64);
	CHECK(c.eval_episodes == 100);
	CHECK(c.eval_max_episode_steps == 27000);
	CHECK_NEAR(c.periodic_eval.interval, 0, 0);
	CHECK(c.periodic_eval.episodes == 20 && isnan(c.periodic_eval.target));
	/* Written back, so the saved config says what was trained. */
	CHECK(json_integer_value(seed_config_get(c.root, "unroll_length")) == 20);
	CHECK(strcmp(json_string_value(seed_config_get(c.root, "loss.reduce")), "mean") == 0);
	CHECK(strcmp(json_string_value(seed_config_get(c.root, "checkpoint_failure")), "stop") == 0);
	CHECK(json_is_null(seed_config_get(c.root, "target_return")));
	CHECK(json_integer_value(seed_config_get(c.root, "infer.hwm")) == 64);
	CHECK(json_integer_value(seed_config_get(c.root, "periodic_eval.episodes")) == 20);
	CHECK(json_is_null(seed_config_get(c.root, "periodic_eval.target")));
	seed_config_free(&c);
	CHECK(c.root == NULL && c.model == NULL);
	seed_config_free(&c); /* a zeroed config is fine */
}

/* RMSProp's own defaults (eps 0.01, decay 0.99, style tf). */
static void t_rmsprop_defaults(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_err err;
	CHECK(seed_config_set(root, "optimizer.kind=rmsprop", &err) == 0);
	seed_config c;
	CHECK(seed_config_parse(root, &c, &err) == 0);
	CHECK(c.optim.kind == SEED_OPTIM_RMSPROP);
	CHECK_NEAR(c.optim.eps, 0.01, 1e-9);
	CHECK_NEAR(c.optim.decay, 0.99, 1e-7);
	CHECK(c.optim.rmsprop_style == SEED_RMSPROP_TF);
	seed_config_free(&c);
}

/* Values given are taken, of every type. */
static void t_values_are_taken(void)
{
	json_t *root =
	    parse_json("{\"env\": \"catch\", \"env_options\": {\"rows\": 5}, \"model\": {\"torso\": []},"
	               " \"discount\": 0.5, \"unroll_length\": 7, \"target_return\": 475,"
	               " \"checkpoint_failure\": \"continue\", \"optimizer\": {\"lr_decay\": false,"
	               " \"lr\": 0.25}, \"loss\": {\"reduce\": \"sum\", \"clip_rho\": null},"
	               " \"periodic_eval\": {\"interval\": 7.5, \"episodes\": 3, \"target\": -21},"
	               " \"seed\": 9007199254740993}");
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(strcmp(c.env, "catch") == 0);
	CHECK(strcmp(c.env_options, "{\"rows\":5}") == 0);
	CHECK_NEAR(c.discount, 0.5, 0);
	CHECK(c.unroll_length == 7);
	CHECK_NEAR(c.target_return, 475, 0);
	CHECK(c.checkpoint_failure == SEED_CONFIG_CKPT_CONTINUE);
	CHECK(!c.lr_decay);
	CHECK_NEAR(c.lr, 0.25, 0);
	CHECK(c.loss.reduce == SEED_LOSS_SUM);
	CHECK_NEAR(c.loss.clip_rho, 1, 0); /* null: the default */
	CHECK(c.seed == 9007199254740993u);
	CHECK_NEAR(c.periodic_eval.interval, 7.5, 0);
	CHECK(c.periodic_eval.episodes == 3);
	CHECK_NEAR(c.periodic_eval.target, -21, 0);
	CHECK_NEAR(json_number_value(seed_config_get(c.root, "periodic_eval.target")), -21, 0);
	seed_config_free(&c);
}

/* The algorithm and R2D2's and the replay's defaults (seed-config(5)):
 * a V-trace config by default, which records neither object; an r2d2 one
 * writes both back whole. */
static void t_r2d2_and_replay_defaults(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_config c;
	seed_err err = {""};
	CHECK(seed_config_parse(root, &c, &err) == 0);
	CHECK(c.algorithm == SEED_CONFIG_VTRACE);
	CHECK(strcmp(json_string_value(seed_config_get(c.root, "algorithm")), "vtrace") == 0);
	CHECK(!seed_config_get(c.root, "r2d2") && !seed_config_get(c.root, "replay"));
	CHECK(strcmp(seed_config_algorithm_name(SEED_CONFIG_R2D2), "r2d2") == 0);
	seed_config_free(&c);

	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=r2d2", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_R2D2);
	CHECK(c.r2d2.burn_in == 0 && c.r2d2.n_step == 5 && c.r2d2.target_update_period == 2500);
	CHECK_NEAR(c.r2d2.eta, 0.9, 1e-7);
	CHECK_NEAR(c.r2d2.value_rescale_eps, 1e-3, 1e-10);
	CHECK_NEAR(c.r2d2.epsilon_base, 0.4, 0);
	CHECK_NEAR(c.r2d2.epsilon_alpha, 7, 0);
	CHECK_NEAR(c.r2d2.eval_epsilon, 1e-3, 0);
	CHECK(c.replay.capacity == 100000 && c.replay.min_size == 1000);
	CHECK_NEAR(c.replay.alpha, 0.9, 0);
	CHECK_NEAR(c.replay.beta, 0.6, 0);
	CHECK_NEAR(c.replay.samples_per_insert, 1, 0);
	CHECK_NEAR(c.replay.tolerance, 1024, 0);
	CHECK(json_integer_value(seed_config_get(c.root, "r2d2.target_update_period")) == 2500);
	CHECK(json_integer_value(seed_config_get(c.root, "replay.min_size")) == 1000);
	seed_config_free(&c);

	/* Values given are taken; burn_in up to unroll_length - 1. */
	root = parse_json(MINIMAL);
	const char *sets[] = {"algorithm=r2d2",
	                      "unroll_length=10",
	                      "r2d2.burn_in=9",
	                      "r2d2.n_step=3",
	                      "r2d2.target_update_period=1",
	                      "replay.capacity=64",
	                      "replay.min_size=64",
	                      "replay.samples_per_insert=0"};
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
		CHECK(seed_config_set(root, sets[i], &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.unroll_length == 10 && c.r2d2.burn_in == 9 && c.r2d2.n_step == 3);
	CHECK(c.r2d2.target_update_period == 1 && c.replay.capacity == 64 && c.replay.min_size == 64);
	CHECK_NEAR(c.replay.samples_per_insert, 0, 0);
	seed_config_free(&c);
}

/* PPO's defaults (seed-config(5), CleanRL's), written back only for a ppo
 * run; a V-trace run does not check that minibatches divide its batch. */
static void t_ppo_defaults(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_config c;
	seed_err err = {""};
	CHECK(seed_config_set(root, "unroll_length=5", &err) == 0);
	CHECK(seed_config_set(root, "batch_size=3", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(!seed_config_get(c.root, "ppo"));
	seed_config_free(&c);

	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=ppo", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_PPO);
	CHECK(strcmp(seed_config_algorithm_name(SEED_CONFIG_PPO), "ppo") == 0);
	CHECK(c.ppo.epochs == 4 && c.ppo.minibatches == 4);
	CHECK_NEAR(c.ppo.clip, 0.2, 1e-7);
	CHECK(c.ppo.clip_value && c.ppo.normalize_advantages);
	CHECK_NEAR(c.ppo.value_clip, 0.2, 1e-7);
	CHECK_NEAR(c.ppo.value_cost, 0.5, 0);
	CHECK_NEAR(c.ppo.entropy_cost, 0.01, 1e-9);
	CHECK_NEAR(c.ppo.lambda, 0.95, 1e-7);
	CHECK(json_integer_value(seed_config_get(c.root, "ppo.minibatches")) == 4);
	CHECK(json_is_true(seed_config_get(c.root, "ppo.clip_value")));
	CHECK_NEAR(json_number_value(seed_config_get(c.root, "ppo.lambda")), 0.95, 0);
	CHECK(strcmp(json_string_value(seed_config_get(c.root, "algorithm")), "ppo") == 0);
	seed_config_free(&c);

	/* Values given are taken. */
	root = parse_json(MINIMAL);
	const char *sets[] = {"algorithm=ppo",        "unroll_length=8",   "batch_size=3",
	                      "ppo.epochs=10",        "ppo.minibatches=6", "ppo.clip=0.1",
	                      "ppo.clip_value=false", "ppo.value_clip=10", "ppo.value_cost=1",
	                      "ppo.entropy_cost=0",   "ppo.lambda=1",      "ppo.normalize_advantages=false"};
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
		CHECK(seed_config_set(root, sets[i], &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.ppo.epochs == 10 && c.ppo.minibatches == 6 && !c.ppo.clip_value &&
	      !c.ppo.normalize_advantages);
	CHECK_NEAR(c.ppo.clip, 0.1, 1e-7);
	CHECK_NEAR(c.ppo.value_clip, 10, 0);
	CHECK_NEAR(c.ppo.value_cost, 1, 0);
	CHECK_NEAR(c.ppo.entropy_cost, 0, 0);
	CHECK_NEAR(c.ppo.lambda, 1, 0);
	seed_config_free(&c);
}

/* Neuroevolution's defaults (seed-config(5)), written back only for an
 * es, ga, rs, snes or ars run; sigma's default follows the algorithm. */
static void t_evolution_defaults(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(!seed_config_get(c.root, "evolution"));
	seed_config_free(&c);

	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=es", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_ES && SEED_CONFIG_IS_EVO(c.algorithm));
	CHECK(!SEED_CONFIG_IS_EVO(SEED_CONFIG_PPO) && !SEED_CONFIG_IS_EVO(SEED_CONFIG_VTRACE));
	CHECK(strcmp(seed_config_algorithm_name(SEED_CONFIG_ES), "es") == 0);
	CHECK(strcmp(seed_config_algorithm_name(SEED_CONFIG_GA), "ga") == 0);
	CHECK(strcmp(seed_config_algorithm_name(SEED_CONFIG_RS), "rs") == 0);
	const seed_config_evolution *e = &c.evolution;
	CHECK(e->population == 256 && e->episodes == 1 && e->rank == 0);
	CHECK_NEAR(e->sigma, 0.02, 1e-12);
	CHECK(e->noise_seed == 0 && e->noise_size == 16777216);
	CHECK_NEAR(e->lr, 0.01, 1e-9);
	CHECK_NEAR(e->l2, 0.005, 1e-9);
	CHECK(e->truncation == 20 && e->elite_candidates == 10 && e->elite_episodes == 30);
	CHECK(e->episode_cap == 0 && e->greedy);
	CHECK_NEAR(e->generation_deadline, 60, 0);
	CHECK(json_integer_value(seed_config_get(c.root, "evolution.population")) == 256);
	CHECK_NEAR(json_number_value(seed_config_get(c.root, "evolution.sigma")), 0.02, 0);
	CHECK(json_is_true(seed_config_get(c.root, "evolution.greedy")));
	CHECK(strcmp(json_string_value(seed_config_get(c.root, "algorithm")), "es") == 0);
	seed_config_free(&c);

	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=ga", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_GA);
	CHECK_NEAR(c.evolution.sigma, 0.002, 1e-12);
	CHECK(c.evolution.population == 1000 && c.evolution.truncation == 20);
	seed_config_free(&c);

	/* A population smaller than the default truncation and candidates
	 * takes them down with it. */
	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=rs", &err) == 0);
	CHECK(seed_config_set(root, "evolution.population=5", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_RS);
	CHECK(c.evolution.truncation == 5 && c.evolution.elite_candidates == 5);
	seed_config_free(&c);

	/* Values given are taken, a noise seed past 2^53 exactly. */
	root = parse_json(MINIMAL);
	const char *sets[] = {"algorithm=ga",
	                      "evolution.population=64",
	                      "evolution.episodes_per_member=3",
	                      "evolution.sigma=0.5",
	                      "evolution.rank=4",
	                      "evolution.noise_seed=9007199254740993",
	                      "evolution.noise_size=1000",
	                      "evolution.lr=0.1",
	                      "evolution.l2=0",
	                      "evolution.truncation=7",
	                      "evolution.elite_candidates=0",
	                      "evolution.elite_episodes=5",
	                      "evolution.episode_cap=200",
	                      "evolution.generation_deadline=2.5",
	                      "evolution.greedy=false"};
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
		CHECK(seed_config_set(root, sets[i], &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	e = &c.evolution;
	CHECK(e->population == 64 && e->episodes == 3 && e->rank == 4);
	CHECK_NEAR(e->sigma, 0.5, 0);
	CHECK(e->noise_seed == UINT64_C(9007199254740993) && e->noise_size == 1000);
	CHECK_NEAR(e->lr, 0.1, 1e-8);
	CHECK_NEAR(e->l2, 0, 0);
	CHECK(e->truncation == 7 && e->elite_candidates == 0 && e->elite_episodes == 5);
	CHECK(e->episode_cap == 200 && !e->greedy);
	CHECK_NEAR(e->generation_deadline, 2.5, 0);
	CHECK(json_integer_value(seed_config_get(c.root, "evolution.noise_seed")) == 9007199254740993LL);
	CHECK(json_is_false(seed_config_get(c.root, "evolution.greedy")));
	seed_config_free(&c);

	/* snes and ars: their own defaults of sigma and lr; the new keys. */
	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=snes", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_SNES && SEED_CONFIG_IS_EVO(c.algorithm));
	CHECK_NEAR(c.evolution.sigma, 0.01, 1e-12);
	CHECK_NEAR(c.evolution.lr, 1, 0);
	CHECK(c.evolution.lr_sigma == 0 && c.evolution.top == 0 && c.evolution.reward_shift == 0);
	CHECK(c.evolution.temperature == 0 && c.evolution.centre_init == SEED_CONFIG_CENTRE_MODEL);
	CHECK_NEAR(json_number_value(seed_config_get(c.root, "evolution.temperature")), 0, 0);
	CHECK(json_is_string(seed_config_get(c.root, "evolution.centre_init")) &&
	      strcmp(json_string_value(seed_config_get(c.root, "evolution.centre_init")), "model") == 0);
	seed_config_free(&c);

	/* snes's temperature and a centre at zero (NeuroEvoBench's Breakout),
	 * given as --set gives them, read and written back. */
	root = parse_json(MINIMAL);
	const char *snes[] = {"algorithm=snes", "evolution.temperature=30", "evolution.centre_init=zero"};
	for (size_t i = 0; i < sizeof snes / sizeof *snes; i++)
		CHECK(seed_config_set(root, snes[i], &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK_NEAR(c.evolution.temperature, 30, 0);
	CHECK(c.evolution.centre_init == SEED_CONFIG_CENTRE_ZERO);
	CHECK_NEAR(json_number_value(seed_config_get(c.root, "evolution.temperature")), 30, 0);
	CHECK(json_is_string(seed_config_get(c.root, "evolution.centre_init")) &&
	      strcmp(json_string_value(seed_config_get(c.root, "evolution.centre_init")), "zero") == 0);
	seed_config_free(&c);
	/* es and ars take a centre at zero too; "model" is every algorithm's. */
	const char *zero_ok[][2] = {{"algorithm=es", "evolution.centre_init=zero"},
	                            {"algorithm=ars", "evolution.centre_init=zero"},
	                            {"algorithm=ga", "evolution.centre_init=model"}};
	for (size_t i = 0; i < sizeof zero_ok / sizeof *zero_ok; i++) {
		root = parse_json(MINIMAL);
		CHECK(seed_config_set(root, zero_ok[i][0], &err) == 0);
		CHECK(seed_config_set(root, zero_ok[i][1], &err) == 0);
		CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s: %s", zero_ok[i][0], err.msg);
		CHECK(c.evolution.centre_init ==
		      (i < 2 ? SEED_CONFIG_CENTRE_ZERO : SEED_CONFIG_CENTRE_MODEL));
		seed_config_free(&c);
	}
	root = parse_json(MINIMAL);
	const char *ars[] = {"algorithm=ars", "evolution.top=4", "evolution.reward_shift=5",
	                     "evolution.lr_sigma=0.2"};
	for (size_t i = 0; i < sizeof ars / sizeof *ars; i++)
		CHECK(seed_config_set(root, ars[i], &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.algorithm == SEED_CONFIG_ARS && c.evolution.top == 4);
	CHECK_NEAR(c.evolution.sigma, 0.03, 1e-12);
	CHECK_NEAR(c.evolution.lr, 0.02, 1e-8);
	CHECK_NEAR(c.evolution.reward_shift, 5, 0);
	CHECK_NEAR(c.evolution.lr_sigma, 0.2, 1e-8);
	seed_config_free(&c);

	/* The old name of episodes_per_member is read, and written back with
	 * the new; both at once are refused. */
	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "algorithm=es", &err) == 0);
	CHECK(seed_config_set(root, "evolution.episodes=8", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.evolution.episodes == 8);
	CHECK(json_integer_value(seed_config_get(c.root, "evolution.episodes_per_member")) == 8);
	CHECK(seed_config_get(c.root, "evolution.episodes") == NULL);
	seed_config_free(&c);
	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "evolution.episodes=8", &err) == 0);
	CHECK(seed_config_set(root, "evolution.episodes_per_member=2", &err) == 0);
	CHECK(seed_config_parse(root, &c, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "'episodes' is the old name of 'episodes_per_member'"), "%s", err.msg);
	json_decref(root);
}

/* The table's defaults for the optimizer, the loss and PPO are those of
 * the libraries that run them (seed_optim_config_default,
 * seed_loss_config_default, seed_ppo_config_default), field by field. */
static void t_defaults_are_the_libraries(void)
{
	for (int kind = SEED_OPTIM_ADAM; kind <= SEED_OPTIM_RMSPROP; kind++) {
		json_t *root = parse_json(MINIMAL);
		seed_err err = {""};
		if (kind == SEED_OPTIM_RMSPROP)
			CHECK(seed_config_set(root, "optimizer.kind=rmsprop", &err) == 0);
		CHECK(seed_config_set(root, "algorithm=ppo", &err) == 0);
		seed_config c;
		CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
		seed_optim_config o;
		seed_optim_config_default(&o, (seed_optim_kind)kind);
		CHECK(c.optim.kind == o.kind && c.optim.rmsprop_style == o.rmsprop_style);
		CHECK(c.optim.beta1 == o.beta1 && c.optim.beta2 == o.beta2 && c.optim.eps == o.eps);
		CHECK(c.optim.decay == o.decay && c.optim.momentum == o.momentum);
		CHECK(c.optim.weight_decay == o.weight_decay &&
		      c.optim.decoupled_weight_decay == o.decoupled_weight_decay);
		seed_loss_config l;
		seed_loss_config_default(&l);
		CHECK(c.loss.baseline_cost == l.baseline_cost && c.loss.entropy_cost == l.entropy_cost);
		CHECK(c.loss.kl_cost == l.kl_cost && c.loss.clip_rho == l.clip_rho);
		CHECK(c.loss.clip_pg_rho == l.clip_pg_rho && c.loss.lambda == l.lambda &&
		      c.loss.reduce == l.reduce);
		seed_ppo_config p;
		seed_ppo_config_default(&p);
		CHECK(c.ppo.epochs == p.epochs && c.ppo.minibatches == p.minibatches && c.ppo.clip == p.clip);
		CHECK(c.ppo.clip_value == p.clip_value && c.ppo.value_clip == p.value_clip);
		CHECK(c.ppo.value_cost == p.value_cost && c.ppo.entropy_cost == p.entropy_cost);
		CHECK(c.ppo.lambda == p.lambda && c.ppo.normalize_advantages == p.normalize_advantages);
		seed_config_free(&c);
	}
}

/* null is the default, for a key of every type and for a whole object
 * (seed-config(5)), and the default is written back. */
static void t_null_is_the_default(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_err err = {""};
	const char *sets[] = {"optimizer=null", "loss.reduce=null",        "loss.lambda=null",
	                      "infer.hwm=null", "env_options=null",        "seed=null",
	                      "algorithm=null", "checkpoint_failure=null", "periodic_eval=null"};
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
		CHECK(seed_config_set(root, sets[i], &err) == 0);
	seed_config c;
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.optim.kind == SEED_OPTIM_ADAM && c.lr_decay);
	CHECK_NEAR(c.lr, 0.0006, 1e-10);
	CHECK(c.loss.reduce == SEED_LOSS_MEAN && c.infer_hwm == 64 && c.seed == 0);
	CHECK_NEAR(c.loss.lambda, 1, 0);
	CHECK(strcmp(c.env_options, "{}") == 0 && c.algorithm == SEED_CONFIG_VTRACE);
	CHECK(c.checkpoint_failure == SEED_CONFIG_CKPT_STOP && c.periodic_eval.episodes == 20);
	CHECK(json_is_true(seed_config_get(c.root, "optimizer.lr_decay")));
	CHECK(strcmp(json_string_value(seed_config_get(c.root, "loss.reduce")), "mean") == 0);
	CHECK(json_is_object(seed_config_get(c.root, "env_options")));
	CHECK(json_integer_value(seed_config_get(c.root, "periodic_eval.episodes")) == 20);
	seed_config_free(&c);
}

/* "summary": an optional string of one line, kept as given and not
 * written in when absent. */
static void t_summary(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.summary == NULL && !seed_config_get(c.root, "summary"));
	seed_config_free(&c);
	root = parse_json(MINIMAL);
	CHECK(seed_config_set(root, "summary=\"CartPole, MLP of 64\"", &err) == 0);
	CHECK_MSG(seed_config_parse(root, &c, &err) == 0, "%s", err.msg);
	CHECK(c.summary && strcmp(c.summary, "CartPole, MLP of 64") == 0);
	char *t = seed_config_text(c.root, "summary", &err);
	CHECK(t && strcmp(t, "CartPole, MLP of 64") == 0);
	free(t);
	seed_config_free(&c);
}

/* ---- seed-config(5) and the table ----------------------------------------- */

#define MAX_ENTRIES 256

/* The entries of seed-config(5)'s KEYS section: for each ".TP" whose tag is
 * ".B NAME", the dotted name (NAME inside the ".RS" of an object's entry is
 * OBJECT.NAME) and the text that opens it, up to the next request, with
 * \- and \(dq read as - and ". */
static int manual_entries(char names[][64], char texts[][512])
{
	char path[4200], line[1024], section[64] = "";
	snprintf(path, sizeof path, "%s/man/seed-config.5", srcdir());
	FILE *f = fopen(path, "r");
	CHECK_MSG(f != NULL, "cannot read %s", path);
	if (!f)
		return 0;
	int n = 0, depth = 0, in_keys = 0, after_tp = 0, open = -1;
	while (fgets(line, sizeof line, f) && n < MAX_ENTRIES) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '.' && open >= 0) {
			size_t at = strlen(texts[open]);
			snprintf(texts[open] + at, 512 - at, "%s%s", at ? " " : "", line);
			continue;
		}
		open = -1;
		if (strncmp(line, ".SH", 3) == 0)
			in_keys = strcmp(line, ".SH KEYS") == 0;
		else if (strcmp(line, ".RS") == 0)
			depth++;
		else if (strcmp(line, ".RE") == 0)
			depth--;
		else if (in_keys && after_tp && strncmp(line, ".B ", 3) == 0) {
			if (depth == 0)
				snprintf(section, sizeof section, "%.40s", line + 3);
			snprintf(names[n], 64, "%s%s%.40s", depth ? section : "", depth ? "." : "", line + 3);
			texts[n][0] = '\0';
			open = n++;
		}
		after_tp = in_keys && strcmp(line, ".TP") == 0;
	}
	fclose(f);
	for (int i = 0; i < n; i++) {
		char *t = texts[i], *w = t;
		for (char *r = t; *r;)
			if (strncmp(r, "\\-", 2) == 0)
				*w++ = '-', r += 2;
			else if (strncmp(r, "\\(dq", 4) == 0)
				*w++ = '"', r += 4;
			else
				*w++ = *r++;
		*w = '\0';
	}
	return n;
}

/* seed-config(5) documents every key of the table and no other, each
 * opening with the table's type, default and range. */
static void t_manual_is_the_table(void)
{
	static char names[MAX_ENTRIES][64], texts[MAX_ENTRIES][512];
	int n = manual_entries(names, texts);
	CHECK_MSG(n > 50, "only %d entries read from seed-config(5)", n);
	char *list = seed_config_describe();
	int rows = 0;
	char *save = NULL;
	for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save), rows++) {
		char *syn = strchr(line, '\t');
		CHECK(syn && strchr(syn + 1, '\t'));
		if (!syn || !strchr(syn + 1, '\t'))
			continue;
		*syn++ = '\0';
		*strchr(syn, '\t') = '\0';
		int at = -1;
		for (int i = 0; i < n && at < 0; i++)
			if (strcmp(names[i], line) == 0)
				at = i;
		CHECK_MSG(at >= 0, "seed-config(5) has no entry for '%s'", line);
		if (at < 0)
			continue;
		size_t len = strlen(syn);
		char next = texts[at][strlen(texts[at]) < len ? 0 : len];
		CHECK_MSG(strncmp(texts[at], syn, len) == 0 && strchr(".,:;", next),
		          "seed-config(5) opens '%s' with \"%.*s\", the table says \"%s\"", line,
		          (int)len + 1, texts[at], syn);
		names[at][0] = '\0'; /* found once */
	}
	for (int i = 0; i < n; i++)
		CHECK_MSG(names[i][0] == '\0', "seed-config(5) documents '%s' twice or without a row",
		          names[i]);
	CHECK_MSG(rows == n, "%d rows, %d entries in the manual", rows, n);
	free(list);
}

/* ---- refused configurations: one named case each ------------------------ */

static const struct bad_case {
	const char *name;
	const char *set; /* applied to MINIMAL; NULL: json is the whole config */
	const char *json;
	const char *want1, *want2;
} bad_cases[] = {
    {"unknown_top_key", "optimizr.lr=1", NULL, "unknown key 'optimizr'", NULL},
    {"unknown_nested_key", "loss.entropy=1", NULL, "unknown key 'loss.entropy'", NULL},
    {"unknown_infer_key", "infer.batch=1", NULL, "unknown key 'infer.batch'", NULL},
    {"env_missing", NULL, "{\"model\": {\"torso\": []}}", "'env'", "required"},
    {"env_not_string", "env=3", NULL, "'env'", NULL},
    {"model_missing", NULL, "{\"env\": \"cartpole\"}", "'model'", "required"},
    {"env_options_not_object", "env_options=[1]", NULL, "'env_options'", "object"},
    {"summary_not_string", "summary=3", NULL, "'summary'", "must be a string"},
    {"summary_two_lines", "summary=\"one\\ntwo\"", NULL, "'summary'", "one line"},
    {"dotted_top_key", NULL, "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"optimizer.lr\": 1}",
     "unknown key 'optimizer.lr'", NULL},
    {"optimizer_not_object", "optimizer=3", NULL, "'optimizer'", "object"},
    {"number_as_string", "discount=\"0.9\"", NULL, "'discount'", "number"},
    {"bare_word_is_a_string", "batch_size=many", NULL, "'batch_size'", "number"},
    {"integer_fractional", "unroll_length=2.5", NULL, "'unroll_length'", "integer"},
    {"bool_as_number", "optimizer.lr_decay=1", NULL, "'optimizer.lr_decay'", "true or false"},
    {"discount_above_1", "discount=1.5", NULL, "'discount' = 1.5", "[0, 1]"},
    {"lr_negative", "optimizer.lr=-1", NULL, "'optimizer.lr' = -1", "out of range"},
    {"unroll_length_zero", "unroll_length=0", NULL, "'unroll_length' = 0", "out of range"},
    {"batch_size_too_big", "batch_size=2000000", NULL, "'batch_size'", "out of range"},
    {"hwm_zero", "infer.hwm=0", NULL, "'infer.hwm' = 0", "out of range"},
    {"beta1_one", "optimizer.beta1=1", NULL, "'optimizer.beta1'", "out of range"},
    {"lambda_above_1", "loss.lambda=2", NULL, "'loss.lambda'", "out of range"},
    {"optimizer_kind_unknown", "optimizer.kind=sgd", NULL, "'optimizer.kind' = 'sgd'", "adam, rmsprop"},
    {"reduce_unknown", "loss.reduce=median", NULL, "'loss.reduce'", "\"mean\" or \"sum\""},
    {"style_unknown", "optimizer.style=jax", NULL, "'optimizer.style'", "\"tf\" or \"torch\""},
    {"checkpoint_failure_unknown", "checkpoint_failure=retry", NULL, "'checkpoint_failure'",
     "\"stop\" or \"continue\""},
    {"periodic_eval_not_object", "periodic_eval=10", NULL, "'periodic_eval'", "object"},
    {"periodic_eval_unknown_key", "periodic_eval.every=10", NULL, "unknown key 'periodic_eval.every'", NULL},
    {"periodic_eval_interval_negative", "periodic_eval.interval=-1", NULL, "'periodic_eval.interval' = -1",
     "out of range"},
    {"periodic_eval_episodes_zero", "periodic_eval.episodes=0", NULL, "'periodic_eval.episodes' = 0",
     "out of range"},
    {"periodic_eval_target_string", "periodic_eval.target=high", NULL, "'periodic_eval.target'", "number"},
    {"eval_max_episode_steps_negative", "eval_max_episode_steps=-1", NULL, "'eval_max_episode_steps' = -1",
     "out of range"},
    {"algorithm_unknown", "algorithm=dqn", NULL, "'algorithm'",
     "\"vtrace\", \"r2d2\", \"ppo\", \"es\", \"ga\", \"rs\", \"snes\" or \"ars\""},
    {"evolution_not_object", "evolution=[]", NULL, "'evolution'", "object"},
    {"evolution_unknown_key", "evolution.popsize=10", NULL, "unknown key 'evolution.popsize'", NULL},
    {"population_zero", "evolution.population=0", NULL, "'evolution.population' = 0", "out of range"},
    {"population_odd_es", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"es\", "
     "\"evolution\": {\"population\": 7}}",
     "'evolution.population' = 7 must be even", "antithetic"},
    {"episodes_zero", "evolution.episodes_per_member=0", NULL, "'evolution.episodes_per_member' = 0",
     "out of range"},
    {"sigma_negative", "evolution.sigma=-0.1", NULL, "'evolution.sigma' = -0.1", "out of range"},
    {"sigma_zero_es", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"es\", "
     "\"evolution\": {\"sigma\": 0}}",
     "'evolution.sigma' = 0", "more than 0"},
    {"sigma_string", "evolution.sigma=small", NULL, "'evolution.sigma'", "number"},
    {"rank_negative", "evolution.rank=-1", NULL, "'evolution.rank' = -1", "out of range"},
    {"noise_seed_negative", "evolution.noise_seed=-1", NULL, "'evolution.noise_seed' = -1", "out of range"},
    {"noise_size_zero", "evolution.noise_size=0", NULL, "'evolution.noise_size' = 0", "out of range"},
    {"noise_size_past_int32", "evolution.noise_size=2147483648", NULL, "'evolution.noise_size'",
     "out of range"},
    {"noise_size_fractional", "evolution.noise_size=1.5", NULL, "'evolution.noise_size'", "integer"},
    {"evo_lr_negative", "evolution.lr=-1", NULL, "'evolution.lr' = -1", "out of range"},
    {"l2_negative", "evolution.l2=-0.5", NULL, "'evolution.l2' = -0.5", "out of range"},
    {"truncation_past_population", "evolution.truncation=300", NULL, "'evolution.truncation' = 300",
     "more than 'evolution.population' = 256"},
    {"elite_candidates_past_population", "evolution.elite_candidates=257", NULL,
     "'evolution.elite_candidates' = 257", "more than 'evolution.population' = 256"},
    {"elite_episodes_zero", "evolution.elite_episodes=0", NULL, "'evolution.elite_episodes' = 0",
     "out of range"},
    {"episode_cap_negative", "evolution.episode_cap=-5", NULL, "'evolution.episode_cap' = -5",
     "out of range"},
    {"deadline_negative", "evolution.generation_deadline=-1", NULL, "'evolution.generation_deadline' = -1",
     "out of range"},
    {"greedy_not_bool", "evolution.greedy=1", NULL, "'evolution.greedy'", "true or false"},
    {"temperature_negative", "evolution.temperature=-1", NULL, "'evolution.temperature' = -1",
     "out of range"},
    {"temperature_string", "evolution.temperature=hot", NULL, "'evolution.temperature'", "number"},
    {"temperature_es", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"es\", "
     "\"evolution\": {\"temperature\": 30}}",
     "'evolution.temperature' = 30 is snes's", "algorithm es takes none"},
    {"temperature_ga", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"ga\", "
     "\"evolution\": {\"temperature\": 0.5}}",
     "'evolution.temperature' = 0.5 is snes's", "algorithm ga"},
    {"centre_init_unknown", "evolution.centre_init=ones", NULL, "'evolution.centre_init' = 'ones'",
     "known: model, zero"},
    {"centre_init_number", "evolution.centre_init=0", NULL, "'evolution.centre_init'", "a string"},
    {"centre_init_zero_ga", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"ga\", "
     "\"evolution\": {\"centre_init\": \"zero\"}}",
     "'evolution.centre_init' = 'zero'", "algorithm ga has no centre"},
    {"centre_init_zero_rs", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"rs\", "
     "\"evolution\": {\"centre_init\": \"zero\"}}",
     "'evolution.centre_init' = 'zero'", "algorithm rs has no centre"},
    {"ppo_not_object", "ppo=1", NULL, "'ppo'", "object"},
    {"ppo_unknown_key", "ppo.clip_coef=0.2", NULL, "unknown key 'ppo.clip_coef'", NULL},
    {"ppo_epochs_zero", "ppo.epochs=0", NULL, "'ppo.epochs' = 0", "out of range"},
    {"ppo_minibatches_fractional", "ppo.minibatches=1.5", NULL, "'ppo.minibatches'", "integer"},
    {"ppo_clip_negative", "ppo.clip=-0.2", NULL, "'ppo.clip' = -0.2", "out of range"},
    {"ppo_lambda_above_1", "ppo.lambda=1.01", NULL, "'ppo.lambda'", "out of range"},
    {"ppo_value_cost_string", "ppo.value_cost=half", NULL, "'ppo.value_cost'", "number"},
    {"ppo_clip_value_not_bool", "ppo.clip_value=1", NULL, "'ppo.clip_value'", "true or false"},
    {"ppo_normalize_not_bool", "ppo.normalize_advantages=\"yes\"", NULL, "'ppo.normalize_advantages'",
     "true or false"},
    {"ppo_minibatches_not_dividing", NULL,
     "{\"env\": \"cartpole\", \"model\": {\"torso\": []}, \"algorithm\": \"ppo\", \"unroll_length\": 5, "
     "\"batch_size\": 3, \"ppo\": {\"minibatches\": 4}}",
     "'ppo.minibatches' = 4 does not divide the 15 transitions", "'unroll_length' 5 x 'batch_size' 3"},
    {"r2d2_not_object", "r2d2=3", NULL, "'r2d2'", "object"},
    {"r2d2_unknown_key", "r2d2.burnin=1", NULL, "unknown key 'r2d2.burnin'", NULL},
    {"burn_in_whole_unroll", "r2d2.burn_in=20", NULL, "'r2d2.burn_in' = 20",
     "less than 'unroll_length' = 20"},
    {"burn_in_negative", "r2d2.burn_in=-1", NULL, "'r2d2.burn_in'", "out of range"},
    {"n_step_zero", "r2d2.n_step=0", NULL, "'r2d2.n_step'", "out of range"},
    {"target_update_period_zero", "r2d2.target_update_period=0", NULL, "'r2d2.target_update_period'",
     "out of range"},
    {"eta_above_1", "r2d2.eta=1.5", NULL, "'r2d2.eta'", "out of range"},
    {"value_rescale_eps_negative", "r2d2.value_rescale_eps=-0.1", NULL, "'r2d2.value_rescale_eps'",
     "out of range"},
    {"replay_not_object", "replay=[]", NULL, "'replay'", "object"},
    {"replay_unknown_key", "replay.size=1", NULL, "unknown key 'replay.size'", NULL},
    {"capacity_zero", "replay.capacity=0", NULL, "'replay.capacity'", "out of range"},
    {"min_size_past_capacity", "replay.capacity=10", NULL, "'replay.min_size' = 1000",
     "more than 'replay.capacity' = 10"},
    {"samples_per_insert_negative", "replay.samples_per_insert=-1", NULL, "'replay.samples_per_insert'",
     "out of range"},
};

static void run_bad_case(const struct bad_case *b)
{
	json_t *root = parse_json(b->json ? b->json : MINIMAL);
	seed_err err = {""};
	if (b->set)
		CHECK(seed_config_set(root, b->set, &err) == 0);
	char *before = json_dumps(root, JSON_SORT_KEYS);
	seed_config c;
	memset(&c, 0xab, sizeof c);
	int rc = seed_config_parse(root, &c, &err);
	CHECK_MSG(rc == -SEED_EOPTION, "rc %d", rc);
	CHECK_MSG(has(err.msg, b->want1) && (!b->want2 || has(err.msg, b->want2)), "message: %s", err.msg);
	/* A failed parse changes nothing and owns nothing. */
	char *after = json_dumps(root, JSON_SORT_KEYS);
	CHECK(strcmp(before, after) == 0);
	CHECK(c.root == NULL && c.model == NULL && c.env_options == NULL);
	free(before);
	free(after);
	json_decref(root);
}

static void t_bad_configs(void)
{
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		int failed_before = tap_case_failed;
		tap_case_failed = 0;
		run_bad_case(&bad_cases[i]);
		char name[128];
		snprintf(name, sizeof name, "bad_%s", bad_cases[i].name);
		tap_result(name);
		tap_case_failed = failed_before;
	}
}

/* ---- --set: dotted keys -------------------------------------------------- */

static void t_set_dotted_keys(void)
{
	json_t *root = parse_json(MINIMAL);
	seed_err err = {""};
	CHECK(seed_config_set(root, "optimizer.lr=0.01", &err) == 0); /* creates "optimizer" */
	CHECK(seed_config_set(root, "optimizer.lr=0.02", &err) == 0); /* the last one wins */
	CHECK(seed_config_set(root, "env_options.max_steps=200", &err) == 0);
	CHECK(seed_config_set(root, "env=catch", &err) == 0);          /* a bare word: a string */
	CHECK(seed_config_set(root, "target_return=null", &err) == 0); /* JSON null */
	CHECK(seed_config_set(root, "model={\"torso\": [{\"type\": \"relu\"}]}", &err) == 0);
	CHECK_NEAR(json_real_value(seed_config_get(root, "optimizer.lr")), 0.02, 0);
	CHECK(json_integer_value(seed_config_get(root, "env_options.max_steps")) == 200);
	CHECK(strcmp(json_string_value(seed_config_get(root, "env")), "catch") == 0);
	CHECK(json_is_null(seed_config_get(root, "target_return")));
	CHECK(json_is_array(seed_config_get(root, "model.torso")));
	CHECK(seed_config_get(root, "optimizer.nothing") == NULL);
	CHECK(seed_config_get(root, "env.deeper") == NULL); /* env is a string */
	json_decref(root);
}

static const struct {
	const char *name, *assignment, *want;
} bad_sets[] = {
    {"no_equals", "optimizer.lr", "expected KEY=VALUE"},
    {"empty_key", "=3", "expected KEY=VALUE"},
    {"empty_part", "optimizer..lr=1", "empty part"},
    {"leading_dot", ".lr=1", "empty part"},
    {"trailing_dot", "optimizer.=1", "empty part"},
    {"through_a_number", "discount.x=1", "'discount' is not an object"},
    /* Found by tests/fuzz/fuzz_config.c: the last part was dropped silently, an
     * inner one freed the object being created and wrote into it. */
    {"key_not_utf8", "loss.entrop\x89_cost=0", "the key is not UTF-8"},
    {"inner_part_not_utf8", "opt\xffimizer.lr=1", "the key is not UTF-8"},
};

static void t_set_refuses_bad_keys(void)
{
	for (size_t i = 0; i < sizeof bad_sets / sizeof bad_sets[0]; i++) {
		json_t *root = parse_json(MINIMAL);
		json_object_set_new(root, "discount", json_real(0.5));
		char *before = json_dumps(root, JSON_SORT_KEYS);
		seed_err err = {""};
		int rc = seed_config_set(root, bad_sets[i].assignment, &err);
		CHECK_MSG(rc == -SEED_EOPTION && has(err.msg, bad_sets[i].want) &&
		              has(err.msg, bad_sets[i].assignment),
		          "%s: rc %d, message: %s", bad_sets[i].name, rc, err.msg);
		char *after = json_dumps(root, JSON_SORT_KEYS);
		CHECK_MSG(strcmp(before, after) == 0, "%s changed the config", bad_sets[i].name);
		free(before);
		free(after);
		json_decref(root);
	}
}

/* ---- presets and files --------------------------------------------------- */

static void t_presets(void)
{
	char data[4096], missing[4096];
	snprintf(data, sizeof data, "%s/tests/golden/data/presets", srcdir());
	snprintf(missing, sizeof missing, "%s/no-such-dir", srcdir());
	const char *dirs[] = {missing, data, NULL};
	json_t *root = NULL;
	seed_err err = {""};
	/* Found in the second directory of the list. */
	CHECK_MSG(seed_config_load("tiny", dirs, &root, &err) == 0, "%s", err.msg);
	CHECK(root && json_integer_value(json_object_get(root, "unroll_length")) == 4);
	json_decref(root);
	root = NULL;
	/* Not found: the message lists where it looked. */
	int rc = seed_config_load("no-such-preset", dirs, &root, &err);
	CHECK(rc == -ENOENT && root == NULL);
	CHECK_MSG(has(err.msg, "no preset called 'no-such-preset'") && has(err.msg, missing) &&
	              has(err.msg, data),
	          "%s", err.msg);
	/* A path is a path, not a preset name. */
	char path[4200];
	snprintf(path, sizeof path, "%s/tiny.json", data);
	CHECK(seed_config_load(path, NULL, &root, &err) == 0 && root);
	json_decref(root);
	snprintf(path, sizeof path, "%s/absent.json", data);
	CHECK(seed_config_load(path, dirs, &root, &err) == -ENOENT && has(err.msg, path));
}

static void t_bad_files(void)
{
	const char *dir = tmpdir_new();
	char path[4200];
	seed_err err = {""};
	json_t *root = NULL;
	snprintf(path, sizeof path, "%s/broken.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"env\": \"cartpole\",\n \"model\": }\n", f);
	fclose(f);
	CHECK(seed_config_load(path, NULL, &root, &err) == -SEED_EOPTION);
	CHECK_MSG(has(err.msg, path) && has(err.msg, ":2:"), "%s", err.msg); /* the line */
	snprintf(path, sizeof path, "%s/array.json", dir);
	f = fopen(path, "w");
	fputs("[1, 2]\n", f);
	fclose(f);
	CHECK(seed_config_load(path, NULL, &root, &err) == -SEED_EOPTION);
	CHECK_MSG(has(err.msg, "a configuration is a JSON object"), "%s", err.msg);
	snprintf(path, sizeof path, "%s/twice.json", dir);
	f = fopen(path, "w");
	fputs("{\"env\": \"a\", \"env\": \"b\"}\n", f);
	fclose(f);
	CHECK(seed_config_load(path, NULL, &root, &err) == -SEED_EOPTION);
	CHECK_MSG(has(err.msg, "duplicate"), "%s", err.msg);
	CHECK(root == NULL);
	tmpdir_remove(dir);
}

/* seed_config_resolve: a preset or a base object, assignments in order
 * (the last one wins), then the check; a failing step leaves c zeroed.
 * seed_config_text: what --get and --print-config print. */
static void t_resolve_and_text(void)
{
	char data[4096];
	snprintf(data, sizeof data, "%s/tests/golden/data/presets", srcdir());
	const char *dirs[] = {data, NULL};
	const char *sets[] = {"unroll_length=6", "optimizer.lr=0.25", "unroll_length=7"};
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(seed_config_resolve(NULL, "tiny", dirs, sets, 3, &c, &err) == 0, "%s", err.msg);
	CHECK(c.unroll_length == 7 && c.lr == 0.25);
	char *t = seed_config_text(c.root, "unroll_length", &err);
	CHECK(t && strcmp(t, "7") == 0);
	free(t);
	t = seed_config_text(c.root, "env", &err); /* a string as it is, no quotes */
	CHECK(t && strcmp(t, c.env) == 0);
	free(t);
	t = seed_config_text(c.root, NULL, &err); /* the whole, indented and sorted */
	CHECK(t && t[0] == '{' && strstr(t, "\n  \"") && strstr(t, "\"unroll_length\": 7"));
	free(t);
	CHECK(seed_config_text(c.root, "no.such", &err) == NULL && has(err.msg, "'no.such'"));
	/* A base object (a checkpoint's config) is copied, not taken. */
	json_t *base = json_deep_copy(c.root);
	seed_config_free(&c);
	CHECK(seed_config_resolve(base, "ignored-name", dirs, sets, 1, &c, &err) == 0);
	CHECK(c.unroll_length == 6 && json_integer_value(json_object_get(base, "unroll_length")) == 7);
	seed_config_free(&c);
	json_decref(base);
	/* Each step's error is reported; c is zeroed. */
	const char *bad[] = {"optimizer.lr=-1"};
	CHECK(seed_config_resolve(NULL, "tiny", dirs, bad, 1, &c, &err) == -SEED_EOPTION);
	CHECK(has(err.msg, "'optimizer.lr'") && c.root == NULL);
	const char *noeq[] = {"unroll_length"};
	CHECK(seed_config_resolve(NULL, "tiny", dirs, noeq, 1, &c, &err) == -EINVAL && c.root == NULL);
	CHECK(has(err.msg, "unroll_length"));
	CHECK(seed_config_resolve(NULL, "absent", dirs, NULL, 0, &c, &err) == -ENOENT && c.root == NULL);
}

int main(void)
{
	TAP_RUN(t_defaults_are_the_manuals);
	TAP_RUN(t_rmsprop_defaults);
	TAP_RUN(t_values_are_taken);
	TAP_RUN(t_r2d2_and_replay_defaults);
	TAP_RUN(t_ppo_defaults);
	TAP_RUN(t_evolution_defaults);
	TAP_RUN(t_defaults_are_the_libraries);
	TAP_RUN(t_null_is_the_default);
	TAP_RUN(t_summary);
	TAP_RUN(t_manual_is_the_table);
	t_bad_configs();
	TAP_RUN(t_set_dotted_keys);
	TAP_RUN(t_set_refuses_bad_keys);
	TAP_RUN(t_presets);
	TAP_RUN(t_bad_files);
	TAP_RUN(t_resolve_and_text);
	return tap_done();
}
