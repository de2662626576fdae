/* tests/cli/qcheckpoint.c: a checkpoint of a freshly initialised model, for the
 * command-line tests of programs that play one (seed-infer, seed-eval)
 * while no learner writes Q-model checkpoints.
 *
 *   qcheckpoint DIR ENV MODEL_JSON SEED [CONFIG_JSON]
 *
 * builds MODEL_JSON (seed_model(3)) for ENV's observations and actions,
 * initialises it with seed_model_init from seed_rng_init(SEED, 0), and saves
 * it into run directory DIR with env ENV (options {}), the model, the
 * config CONFIG_JSON (default null) and policy version 1.  Exit status 1 and
 * a message on stderr on any error. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "seed/checkpoint.h"
#include "seed/env.h"
#include "seed/nn.h"
#include "seed/rng.h"

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "qcheckpoint: %s: %s\n", what, msg);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: qcheckpoint DIR ENV MODEL_JSON SEED [CONFIG_JSON]\n");
		return 2;
	}
	const char *dir = argv[1], *env = argv[2], *model_json = argv[3];
	uint64_t seed = strtoull(argv[4], NULL, 10);
	seed_err err = {{0}};
	seed_envs *envs = NULL;
	if (seed_envs_new(&envs, env, NULL, 1, 0, &err) < 0)
		return die(env, err.msg);
	const seed_env_spec *spec = seed_envs_spec(envs);
	seed_model *m = NULL;
	if (seed_model_new(&m, model_json, spec->obs_dtype, spec->obs_rank, spec->obs_shape,
	                   spec->num_actions, 1, &err) < 0)
		return die("MODEL_JSON", err.msg);
	seed_rng rng;
	seed_rng_init(&rng, seed, 0);
	seed_model_init(m, &rng);
	int n = seed_model_num_tensors(m);
	seed_checkpoint_tensor *ts = calloc((size_t)n, sizeof *ts);
	if (!ts)
		return die("memory", "out of memory");
	for (int i = 0; i < n; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		ts[i].name = p->name;
		ts[i].tensor =
		    seed_tensor_view(seed_model_params(m) + p->offset, SEED_DTYPE_F32, p->rank, p->shape);
	}
	json_error_t je;
	json_t *model = json_loads(model_json, 0, &je), *config = NULL, *options = json_object();
	if (!model)
		return die("MODEL_JSON", je.text);
	if (argc == 6 && !(config = json_loads(argv[5], JSON_DECODE_ANY, &je)))
		return die("CONFIG_JSON", je.text);
	seed_checkpoint ck = {.config = config,
	                      .env = env,
	                      .env_options = options,
	                      .model = model,
	                      .step = 1,
	                      .policy_version = 1,
	                      .rng = rng,
	                      .ntensors = (size_t)n,
	                      .tensors = ts};
	int rc = seed_checkpoint_save(dir, &ck, &err);
	json_decref(model);
	json_decref(config);
	json_decref(options);
	free(ts);
	seed_model_free(&m);
	seed_envs_free(&envs);
	return rc < 0 ? die(dir, err.msg) : 0;
}
