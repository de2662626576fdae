/* seed/config.h: training configurations (seed-config(5)), for seed-learn,
 * seed-train, seed-eval and a C user's own learner.
 *
 * A configuration is one JSON object (a preset file, or the config saved in
 * a run directory).  Its keys are checked: an unknown key is an error naming
 * it, so a typo never silently changes nothing; so are a value of the wrong
 * type and one out of its range.  Values given as "KEY=JSON" (dotted keys
 * reach into objects) are applied on top before parsing.  Parsing writes
 * every resolved default back into the object, and the parsed config keeps
 * the whole object, so a checkpoint records exactly what was trained.
 *
 * Nothing here reads the environment or knows where presets are installed:
 * the caller names the directories to search.
 */
#ifndef SEED_CONFIG_H
#define SEED_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/checkpoint.h"
#include "seed/error.h"
#include "seed/loss.h"
#include "seed/optim.h"
#include "seed/ppo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct json_t json_t;

/* What a learner does when a checkpoint cannot be written (config key
 * "checkpoint_failure"). */
typedef enum seed_config_ckpt_policy {
	SEED_CONFIG_CKPT_STOP = 0, /* "stop": stop training, exit with an error */
	SEED_CONFIG_CKPT_CONTINUE, /* "continue": warn, train on, try again later */
} seed_config_ckpt_policy;

/* The learning algorithm (config key "algorithm"). */
typedef enum seed_config_algorithm {
	SEED_CONFIG_VTRACE = 0, /* "vtrace": actor-critic on unrolls from seed-infer (IMPALA) */
	SEED_CONFIG_R2D2,       /* "r2d2": Q-learning on sequences sampled from seed-replay */
	SEED_CONFIG_PPO,        /* "ppo": PPO's clipped surrogate on unrolls from seed-infer */
	SEED_CONFIG_ES,         /* "es": evolution strategies (OpenAI's) on episodes from seed-infer */
	SEED_CONFIG_GA,         /* "ga": a genetic algorithm (Uber's deep GA) on episodes */
	SEED_CONFIG_RS,         /* "rs": random search, every member fresh from the initialisation */
	SEED_CONFIG_SNES,       /* "snes": separable natural evolution strategies */
	SEED_CONFIG_ARS,        /* "ars": augmented random search (V2-t) */
} seed_config_algorithm;

/* Whether a is one of the neuroevolution algorithms (es, ga, rs, snes, ars). */
#define SEED_CONFIG_IS_EVO(a)                                                                                \
	((a) == SEED_CONFIG_ES || (a) == SEED_CONFIG_GA || (a) == SEED_CONFIG_RS ||                          \
	 (a) == SEED_CONFIG_SNES || (a) == SEED_CONFIG_ARS)

/* Where the centre of es, snes and ars starts (config key
 * "evolution.centre_init"). */
typedef enum seed_config_centre_init {
	SEED_CONFIG_CENTRE_MODEL = 0, /* "model": the model's own initialisation */
	SEED_CONFIG_CENTRE_ZERO,      /* "zero": every trainable parameter 0 (NeuroEvoBench's) */
} seed_config_centre_init;

/* Neuroevolution's settings (config object "evolution", for algorithms es,
 * ga, rs, snes and ars; seed/evo.h and doc/evolution.md).  The defaults are
 * those of seed-config(5); sigma's and lr's depend on the algorithm. */
typedef struct seed_config_evolution {
	int population;             /* members of an evaluation round; ES: even (ES, RS 256; GA 1000) */
	int episodes;               /* "episodes_per_member": episodes of each member a round (1) */
	double sigma;               /* ES: perturbation std; GA: mutation power */
	int rank;                   /* 0: full-rank noise; r > 0: rank-r noise of 2-D weights (0) */
	uint64_t noise_seed;        /* the noise table's seed (0) */
	int64_t noise_size;         /* its floats (2^24: 64 MiB in every process that plays) */
	float lr, l2;               /* ES: Adam's learning rate (0.01), L2 coefficient (0.005);
	                             * SNES: the centre's learning rate (1); ARS: the step size (0.02) */
	float lr_sigma;             /* SNES: the stds' learning rate; 0: (3 + ln P) / (5 sqrt P) (0) */
	double temperature;         /* SNES: > 0 softmax weights of that temperature; 0 rank utilities (0) */
	int top;                    /* ARS: the pairs (directions) of an update; 0: all (0) */
	double reward_shift;        /* fitness = mean return - reward_shift * mean length (0) */
	int truncation;             /* GA: parents kept (20) */
	int elite_candidates;       /* GA, RS: top candidates re-evaluated; 0: none (10) */
	int elite_episodes;         /* GA, RS: episodes of each re-evaluation (30) */
	int episode_cap;            /* steps after which an episode is reported as truncated; 0 none (0) */
	double generation_deadline; /* seconds after which a round ends incomplete; 0 none (60) */
	bool greedy;                /* members act greedily, else sample their softmax (true) */
	bool common_episodes;       /* every member's k-th episode of a round from one seed (false) */
	double action_noise;        /* Box members: std of the noise added to their mean actions (0) */

	/* es, snes, ars: where the centre starts ("model") */
	seed_config_centre_init centre_init;
} seed_config_evolution;

/* R2D2's settings (config object "r2d2"; SEED RL's agents/r2d2 defaults).
 * A stored sequence is unroll_length + 1 steps: the first burn_in only
 * rebuild the recurrent state, the rest are trained on. */
typedef struct seed_config_r2d2 {
	int burn_in;              /* steps without gradient before training (0) */
	int n_step;               /* n of the n-step targets (5) */
	int target_update_period; /* updates between copies into the target network (2500) */
	float eta;                /* priority mix: eta max|delta| + (1 - eta) mean|delta| (0.9) */
	float value_rescale_eps;  /* eps of h(x) (1e-3) */
	double epsilon_base;      /* acting: epsilon_i = base^(1 + alpha i / (N - 1)) (0.4) */
	double epsilon_alpha;     /* (7) */
	double eval_epsilon;      /* seed-eval's epsilon (1e-3) */
} seed_config_r2d2;

/* seed-replay's settings when seed-train starts one (config object
 * "replay"; seed-replay(1)). */
typedef struct seed_config_replay {
	int64_t capacity, min_size; /* sequences (100000, 1000) */
	double alpha, beta;         /* priority and importance exponents (0.9, 0.6) */
	double samples_per_insert;  /* sampled per inserted sequence; 0: no limiter (1) */
	double tolerance;           /* sequences either way (1024) */
} seed_config_replay;

/* A parsed configuration.  Strings point into root or are owned by the
 * config; everything is freed by seed_config_free. */
typedef struct seed_config {
	json_t *root;        /* the whole object, defaults written in (owned) */
	const char *env;     /* environment name (in root) */
	const char *summary; /* one line for people (in root), or NULL */
	char *env_options;   /* JSON text of env_options */
	char *model;         /* JSON text of model */
	uint64_t seed;
	float discount;
	/* Rewards scaled by a running deviation of discounted returns
	 * (seed/reward_norm.h), then clipped to +-reward_clip. */
	bool normalize_reward;
	float reward_clip;
	int unroll_length, batch_size;
	seed_optim_config optim;
	float lr, lr_min;
	bool lr_decay;
	float max_grad_norm; /* 0: no clipping */
	seed_loss_config loss;
	int64_t total_frames;
	double target_return; /* NAN: none */
	int return_window;
	double checkpoint_interval, metrics_interval; /* seconds; 0: off */
	seed_config_ckpt_policy checkpoint_failure;
	int actors, envs_per_actor, infer_max_batch, infer_timeout_us;
	int infer_hwm; /* frames queued on the unroll channel, at each end */
	int eval_episodes;
	/* The step cap of an evaluation episode (seed-train's, seed-eval
	 * --max-episode-steps): cut there, as truncated; 0: none. */
	int eval_max_episode_steps;
	/* Evaluations during training (config object "periodic_eval"), run by
	 * seed-train, not by the learner: every `interval` seconds (0: none) the
	 * latest checkpoint plays `episodes` episodes as the final evaluation
	 * does; the best is kept, and a mean of at least `target` (NAN: none)
	 * ends the run. */
	struct {
		double interval, target;
		int episodes;
	} periodic_eval;
	seed_config_algorithm algorithm;
	seed_config_r2d2 r2d2;
	seed_config_replay replay;
	/* PPO's settings (config object "ppo"; seed/ppo.h, CleanRL's
	 * defaults); minibatches divides unroll_length * batch_size. */
	seed_ppo_config ppo;
	seed_config_evolution evolution;
} seed_config;

/* The keys a configuration may hold, one line each in the order parsing
 * reads them: "NAME\tSYNOPSIS\tMEANING\n", NAME dotted inside an object
 * ("optimizer.lr"), SYNOPSIS the type, default and range as seed-config(5)
 * opens the key's entry ("Number, default 0.0006, from 0 to 10"), MEANING
 * one line.  A new string (free it); it is made from the same table that
 * seed_config_parse reads, so a test holds the manual to it. */
char *seed_config_describe(void);

/* "vtrace", "r2d2", "ppo", "es", "ga" or "rs". */
const char *seed_config_algorithm_name(seed_config_algorithm a);

/* Load a configuration into *root (a new reference).  name_or_path is a
 * path when it holds a '/' or ends in ".json"; otherwise a preset name,
 * looked up as DIR/NAME.json in each directory of the NULL-terminated list
 * dirs, in order.  Errors (-SEED_EOPTION with the file, line and column,
 * or -ENOENT): the file cannot be read, is not JSON, is not a JSON object,
 * or no directory holds the preset (the message lists them). */
int seed_config_load(const char *name_or_path, const char *const *dirs, json_t **root, seed_err *err);

/* Apply "KEY=VALUE" to root: VALUE is JSON, or else a bare word taken as a
 * string; a dotted KEY reaches into objects, creating missing ones.  Types
 * and ranges are checked later, by seed_config_parse.  -SEED_EOPTION, with
 * the assignment in the message, for a missing '=' or key, an empty part
 * of the key, a key that is not UTF-8, or a part that names a value that
 * is not an object; root is then unchanged. */
int seed_config_set(json_t *root, const char *assignment, seed_err *err);

/* Check every key of root and fill c.  On success c owns root (seed_config_free
 * releases it) and root holds every resolved value; on failure
 * (-SEED_EOPTION, the message naming the key, e.g. "'optimizer.lr' = -1 is
 * out of range [0, 10]") root is unchanged and still the caller's, and c
 * is zeroed. */
int seed_config_parse(json_t *root, seed_config *c, seed_err *err);

/* A run's configuration in one call: a copy of base (a checkpoint's
 * "config", borrowed) when base is not NULL, else the file or preset
 * name_or_path (seed_config_load over dirs); then sets[0 .. nsets) applied
 * in order (seed_config_set); then checked into c (seed_config_parse).
 * Errors: those of loading and checking, with their messages, and -EINVAL
 * for an assignment seed_config_set refuses (a malformed one: to a program,
 * a usage error); c is zeroed and nothing is kept. */
int seed_config_resolve(const json_t *base, const char *name_or_path, const char *const *dirs,
                        const char *const *sets, int nsets, seed_config *c, seed_err *err);

/* Save checkpoint ck into run directory dir (seed_checkpoint_save) with
 * the run's configuration filled in from c: the resolved configuration,
 * env, env_options and model (ck's own values for those are replaced).
 * The one place both trainers, the learner and the evolver, assemble what
 * a checkpoint says about its run.  Errors: those of
 * seed_checkpoint_save. */
int seed_config_checkpoint_save(const seed_config *c, const char *dir, seed_checkpoint *ck, seed_err *err);

/* The text of the value at a dotted key of root (a string as it is, any
 * other value as compact JSON), or with key NULL the whole configuration
 * as indented JSON with sorted keys: what --get and --print-config print.
 * A new string (free it), or NULL with -ENOENT in err for a missing key. */
char *seed_config_text(json_t *root, const char *key, seed_err *err);

/* The value at a dotted key of root ("optimizer.lr"), borrowed, or NULL. */
json_t *seed_config_get(json_t *root, const char *key);

/* Free what c owns (a zeroed config is fine) and zero it. */
void seed_config_free(seed_config *c);

#ifdef __cplusplus
}
#endif
#endif
