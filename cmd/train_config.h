/* cmd/train_config.h: the training configuration shared by seed-learn, seed-train
 * and seed-eval.
 *
 * A configuration is one JSON object (a preset file under examples/presets,
 * or the config saved in a run directory).  Its keys are checked: an unknown
 * key is an error naming it, so a typo never silently changes nothing.
 * Values given with --set KEY=JSON (dotted keys reach into objects) are
 * applied on top.  The whole object is kept, so checkpoints record exactly
 * what was trained.
 */
#ifndef SEED_CMD_TRAIN_CONFIG_H
#define SEED_CMD_TRAIN_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/loss.h"
#include "seed/optim.h"

typedef struct train_config {
	json_t *root; /* the whole object (owned) */
	const char *env;
	char *env_options; /* JSON text */
	char *model;       /* JSON text */
	uint64_t seed;
	float discount;
	int unroll_length, batch_size;
	seed_optim_config optim;
	float lr, lr_min;
	bool lr_decay;
	float max_grad_norm; /* 0: no clipping */
	seed_loss_config loss;
	int64_t total_frames;
	double target_return; /* NAN: none */
	int return_window;
	double checkpoint_interval, metrics_interval;
	int actors, envs_per_actor, infer_max_batch, infer_timeout_us;
	int infer_hwm; /* frames queued on the unroll channel, at each end */
	int eval_episodes;
} train_config;

/* Find a preset by name (examples/presets/NAME.json in the installed data
 * directory, or beside the source tree) or take a path; parse it into
 * *root.  Errors name the file. */
int config_load_file(const char *name_or_path, json_t **root, seed_err *err);
/* Apply "KEY=JSON" (the value may also be a bare word, taken as a string). */
int config_set(json_t *root, const char *assignment, seed_err *err);
/* Check every key and fill c from root (which c then owns). */
int config_parse(json_t *root, train_config *c, seed_err *err);
/* The value at a dotted key of root (e.g. "optimizer.lr"), or NULL. */
json_t *config_get(json_t *root, const char *key);
void config_free(train_config *c);

#endif
