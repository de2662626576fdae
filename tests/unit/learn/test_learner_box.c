/* tests/unit/learn/test_learner_box.c: the learners in a Box action space.
 *
 * PPO and V-trace with a Gaussian policy on synthetic Box unrolls where the
 * reward of a step is its raw action (every step ends its episode): the
 * policy's mean must rise from 0 and the value move toward the behaviour
 * policy's expected reward.  Then what a learner refuses: a policy that does
 * not suit the action space, a Gaussian policy with a core, r2d2 in a Box
 * space, unrolls of the other action space and non-finite actions.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/checkpoint.h"
#include "seed/config.h"
#include "seed/frame.h"
#include "seed/learner.h"
#include "seed/nn.h"
#include "seed/rng.h"
#include "tap.h"
#include "tmpdir.h"

static const seed_env_spec BOX = {.obs_dtype = SEED_DTYPE_F32,
                                  .obs_rank = 1,
                                  .obs_shape = {2},
                                  .action_space = SEED_ACTIONS_BOX,
                                  .num_actions = 1,
                                  .action_low = {-2},
                                  .action_high = {2}};

static const seed_env_spec DISCRETE = {
    .obs_dtype = SEED_DTYPE_F32, .obs_rank = 1, .obs_shape = {2}, .num_actions = 2};

static const char *GAUSS = "{\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": \"tanh\"}], "
                           "\"policy\": {\"type\": \"gaussian\"}}";

static int config(seed_config *c, const char *algorithm, const char *model, const char *extra, seed_err *err)
{
	char text[1024];
	snprintf(text, sizeof text,
	         "{\"env\": \"pendulum\", \"algorithm\": \"%s\", \"model\": %s, \"unroll_length\": 8, "
	         "\"batch_size\": 8, \"discount\": 0.9, \"seed\": 5, \"optimizer\": {\"lr\": 0.01, "
	         "\"lr_decay\": false}%s}",
	         algorithm, model, extra ? extra : "");
	json_t *root = json_loads(text, 0, NULL);
	if (!root) {
		printf("# bad test config: %s\n", text);
		exit(99);
	}
	int rc = seed_config_parse(root, c, err);
	if (rc)
		json_decref(root);
	return rc;
}

enum { BF = 8, T1 = 9 };

/* Box unrolls: raw actions u ~ N(0, 1) (the behaviour policy: mean 0,
 * log-std 0), the reward of a step its action (arriving with the next
 * step), every step after the first ending its episode. */
struct unrolls {
	int32_t env[BF];
	float obs[BF * T1 * 2];
	float action[BF * T1], params[BF * T1 * 2];
	int32_t version[BF * T1];
	float reward[BF * T1], final_value[BF * T1];
	uint8_t terminated[BF * T1], truncated[BF * T1];
	seed_frame f;
};

static seed_frame *unrolls_make(struct unrolls *u, uint64_t seed)
{
	memset(u, 0, sizeof *u);
	seed_rng rng;
	seed_rng_init(&rng, seed, 1);
	for (int b = 0; b < BF; b++) {
		u->env[b] = b;
		for (int t = 0; t < T1; t++) {
			int i = b * T1 + t;
			u->obs[2 * i] = (float)seed_rng_uniform(&rng, -1, 1);
			u->obs[2 * i + 1] = (float)seed_rng_uniform(&rng, -1, 1);
			u->action[i] = (float)seed_rng_normal(&rng);
			u->terminated[i] = t > 0;
		}
		for (int t = 1; t < T1; t++)
			u->reward[b * T1 + t] = u->action[b * T1 + t - 1];
	}
	seed_frame *f = &u->f;
	int64_t B = BF, T = T1;
	seed_frame_init(f, SEED_FRAME_UNROLL);
	seed_frame_set_int(f, "run", 0);
	seed_frame_set_int(f, "actor", 0);
	seed_frame_set_int(f, "num_actions", 1);
	seed_frame_set_tensor(f, "env", seed_tensor_view(u->env, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(f, "obs", seed_tensor_view(u->obs, SEED_DTYPE_F32, 3, (int64_t[]){B, T, 2}));
	seed_frame_set_tensor(f, "action",
	                      seed_tensor_view(u->action, SEED_DTYPE_F32, 3, (int64_t[]){B, T, 1}));
	seed_frame_set_tensor(f, "reward", seed_tensor_view(u->reward, SEED_DTYPE_F32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "terminated",
	                      seed_tensor_view(u->terminated, SEED_DTYPE_U8, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "truncated",
	                      seed_tensor_view(u->truncated, SEED_DTYPE_U8, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "final_value",
	                      seed_tensor_view(u->final_value, SEED_DTYPE_F32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "policy_version",
	                      seed_tensor_view(u->version, SEED_DTYPE_I32, 2, (int64_t[]){B, T}));
	seed_frame_set_tensor(f, "logits",
	                      seed_tensor_view(u->params, SEED_DTYPE_F32, 3, (int64_t[]){B, T, 2}));
	return f;
}

/* The mean over the frame's observations of the policy's mean and of V. */
static void policy_on(seed_learner *L, const struct unrolls *u, double *mean, double *v)
{
	enum { N = BF * T1 };
	float params[N * 2], values[N];
	seed_model *m = seed_learner_model(L);
	CHECK(seed_model_policy_width(m) == 2);
	seed_model_forward(m, N, u->obs, params, values);
	*mean = *v = 0;
	for (int i = 0; i < N; i++) {
		*mean += (double)params[2 * i] / N;
		*v += (double)values[i] / N;
	}
}

/* Rewarded for larger actions, the policy's mean rises; the value, whose
 * target is the behaviour's expected reward (0), stays near it. */
static void learns(const char *algorithm, const char *extra, double min_rise)
{
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, algorithm, GAUSS, extra, &err) == 0, "%s", err.msg);
	seed_learner *L = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &BOX, &err) == 0, "%s: %s", algorithm, err.msg);
	if (!L) {
		seed_config_free(&c);
		return;
	}
	struct unrolls u;
	double m0, v0, m1, v1;
	unrolls_make(&u, 3);
	policy_on(L, &u, &m0, &v0);
	for (int k = 0; k < 20; k++)
		CHECK_MSG(seed_learner_feed(L, unrolls_make(&u, 3 + (uint64_t)k), &err) == 1, "%s: %s",
		          algorithm, err.msg);
	const seed_learner_status *st = seed_learner_get_status(L);
	CHECK(st->updates == 20 && st->skipped == 0 && isfinite(st->loss.total));
	policy_on(L, &u, &m1, &v1);
	CHECK_MSG(fabs(m0) < 0.05 && m1 - m0 > min_rise, "%s: mean %g -> %g", algorithm, m0, m1);
	CHECK_MSG(fabs(v1) < 0.5, "%s: V %g -> %g", algorithm, v0, v1);
	seed_learner_free(&L);
	seed_config_free(&c);
}

static void t_ppo_learns(void)
{
	learns("ppo", ", \"ppo\": {\"epochs\": 2, \"minibatches\": 4, \"entropy_cost\": 0}", 0.1);
}

static void t_vtrace_learns(void)
{
	learns("vtrace", NULL, 0.1);
}

/* Frames of the other action space, and non-finite raw samples. */
static void t_refused_frames(void)
{
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, "vtrace", GAUSS, NULL, &err) == 0, "%s", err.msg);
	seed_learner *L = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &BOX, &err) == 0, "%s", err.msg);
	struct unrolls u;
	seed_frame *f = unrolls_make(&u, 1);
	u.action[5] = INFINITY;
	CHECK(seed_learner_feed(L, f, &err) < 0);
	CHECK_MSG(strstr(err.msg, "field 'action'") && strstr(err.msg, "is not finite"), "%s", err.msg);
	/* The same frame with discrete actions. */
	f = unrolls_make(&u, 1);
	int32_t disc[BF * T1] = {0};
	int64_t B = BF, T = T1;
	seed_frame_set_tensor(f, "action", seed_tensor_view(disc, SEED_DTYPE_I32, 2, (int64_t[]){B, T}));
	float logits[BF * T1 * 1] = {0};
	seed_frame_set_tensor(f, "logits", seed_tensor_view(logits, SEED_DTYPE_F32, 3, (int64_t[]){B, T, 1}));
	CHECK(seed_learner_feed(L, f, &err) < 0);
	CHECK_MSG(strstr(err.msg, "discrete actions, but environment 'pendulum' has Box ones"), "%s",
	          err.msg);
	CHECK(seed_learner_get_status(L)->updates == 0);
	seed_learner_free(&L);
	seed_config_free(&c);
}

static void refused(const char *algorithm, const char *model, const seed_env_spec *spec, const char *msg)
{
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, algorithm, model, NULL, &err) == 0, "%s", err.msg);
	seed_learner *L = NULL;
	CHECK(seed_learner_new(&L, &c, spec, &err) == -EINVAL && !L);
	CHECK_MSG(strstr(err.msg, msg), "%s: '%s' lacks '%s'", algorithm, err.msg, msg);
	seed_config_free(&c);
}

static void t_refused_models(void)
{
	refused("ppo", "{\"torso\": []}", &BOX, "the model needs a Gaussian policy");
	refused("vtrace", GAUSS, &DISCRETE, "the model's policy is Gaussian, for Box action spaces");
	refused("vtrace",
	        "{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 4}, \"policy\": {\"type\": "
	        "\"gaussian\"}}",
	        &BOX, "a Gaussian policy with a recurrent core");
	refused("r2d2", "{\"torso\": [], \"head\": \"dueling\"}", &BOX,
	        "algorithm r2d2 learns Q values of discrete actions");
}

/* normalize_reward: the learner scales the batch's rewards (so its loss
 * differs from an unscaled twin's on the same batch), and the statistics
 * go into the checkpoint (count 1e-4 + T * B a batch) and come back. */
static void t_reward_scaling(void)
{
	const char *tmp = tmpdir_new();
	char dir[4200], dir2[4200];
	snprintf(dir, sizeof dir, "%s/run", tmp);
	snprintf(dir2, sizeof dir2, "%s/run2", tmp);
	seed_config c, plain;
	seed_err err = {""};
	CHECK_MSG(config(&c, "vtrace", GAUSS, ", \"normalize_reward\": true, \"reward_clip\": 5", &err) == 0,
	          "%s", err.msg);
	CHECK(config(&plain, "vtrace", GAUSS, NULL, &err) == 0);
	seed_learner *L = NULL, *P = NULL, *R = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &BOX, &err) == 0, "%s", err.msg);
	CHECK(seed_learner_new(&P, &plain, &BOX, &err) == 0);
	CHECK(seed_learner_new(&R, &c, &BOX, &err) == 0);
	if (!L || !P || !R)
		return;
	CHECK_MSG(seed_learner_open_dir(L, dir, &err) == 0, "%s", err.msg);
	struct unrolls u;
	for (int k = 0; k < 2; k++) {
		CHECK(seed_learner_feed(L, unrolls_make(&u, 40 + (uint64_t)k), &err) == 1);
		CHECK(seed_learner_feed(P, unrolls_make(&u, 40 + (uint64_t)k), &err) == 1);
	}
	CHECK(seed_learner_get_status(L)->loss.total != seed_learner_get_status(P)->loss.total);
	CHECK_MSG(seed_learner_save(L, true, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &ck, &err) == 0, "%s", err.msg);
	const seed_tensor *t = ck ? seed_checkpoint_get(ck, "learner.reward_rms") : NULL;
	CHECK(t && t->dtype == SEED_DTYPE_F64 && t->rank == 1 && t->shape[0] == 3);
	double s[3] = {0};
	if (t)
		memcpy(s, t->data, sizeof s);
	CHECK_MSG(fabs(s[0] - (1e-4 + 2 * (T1 - 1) * BF)) < 1e-9 && s[2] > 0, "count %g var %g", s[0], s[2]);
	CHECK_MSG(ck && seed_learner_restore(R, ck, &err) == 0, "%s", err.msg);
	CHECK(seed_learner_open_dir(R, dir2, &err) == 0);
	CHECK(seed_learner_save(R, true, &err) == 0);
	seed_checkpoint *ck2 = NULL;
	CHECK(seed_checkpoint_load(dir2, &ck2, &err) == 0);
	const seed_tensor *t2 = ck2 ? seed_checkpoint_get(ck2, "learner.reward_rms") : NULL;
	CHECK(t && t2 && memcmp(t->data, t2->data, 3 * sizeof(double)) == 0);
	seed_checkpoint_free(&ck);
	seed_checkpoint_free(&ck2);
	seed_learner_free(&L);
	seed_learner_free(&P);
	seed_learner_free(&R);
	seed_config_free(&c);
	seed_config_free(&plain);
	/* r2d2 takes no reward scaling. */
	CHECK(config(&c, "r2d2", "{\"torso\": [], \"head\": \"dueling\"}", ", \"normalize_reward\": true",
	             &err) == 0);
	CHECK(seed_learner_new(&L, &c, &DISCRETE, &err) == -EINVAL && !L);
	CHECK_MSG(strstr(err.msg, "normalize_reward is for the policy-gradient learners"), "%s", err.msg);
	seed_config_free(&c);
	tmpdir_remove(tmp);
}

/* A model with "obs_norm": an update first takes steps 0 .. T-1 of every
 * unroll into the statistics (each observation once), so after one update
 * the count is 1e-4 + T * B and the mean is those observations' (the first
 * update almost replaces the initial 0). */
static void t_obs_norm(void)
{
	static const char *model = "{\"obs_norm\": true, \"torso\": [{\"type\": \"linear\", \"out\": 8}, "
	                           "{\"type\": \"tanh\"}], \"policy\": {\"type\": \"gaussian\"}}";
	seed_config c;
	seed_err err = {""};
	CHECK_MSG(config(&c, "ppo", model, ", \"ppo\": {\"epochs\": 1, \"minibatches\": 2}", &err) == 0, "%s",
	          err.msg);
	seed_learner *L = NULL;
	CHECK_MSG(seed_learner_new(&L, &c, &BOX, &err) == 0, "%s", err.msg);
	if (!L)
		return;
	struct unrolls u;
	CHECK(seed_learner_feed(L, unrolls_make(&u, 9), &err) == 1);
	seed_model *m = seed_learner_model(L);
	const seed_model_param *mean = seed_model_param_find(m, "obs_norm.mean"),
	                       *count = seed_model_param_find(m, "obs_norm.count");
	CHECK(mean && count);
	if (mean && count) {
		double want[2] = {0, 0};
		for (int b = 0; b < BF; b++)
			for (int t = 0; t < T1 - 1; t++)
				for (int k = 0; k < 2; k++)
					want[k] += u.obs[(b * T1 + t) * 2 + k];
		const float *p = seed_model_params(m);
		float n = (float)((T1 - 1) * BF);
		CHECK_MSG(p[count->offset] == 1e-4f + n, "count %.9g", (double)p[count->offset]);
		for (int k = 0; k < 2; k++) {
			double w = want[k] / n * n / (n + 1e-4); /* merged with the initial mean 0 */
			CHECK_MSG(fabs(p[mean->offset + (size_t)k] - w) < 1e-6, "mean[%d] %.9g, want %.9g", k,
			          (double)p[mean->offset + (size_t)k], w);
		}
	}
	seed_learner_free(&L);
	seed_config_free(&c);
}

int main(void)
{
	TAP_RUN(t_ppo_learns);
	TAP_RUN(t_vtrace_learns);
	TAP_RUN(t_refused_frames);
	TAP_RUN(t_refused_models);
	TAP_RUN(t_reward_scaling);
	TAP_RUN(t_obs_norm);
	return tap_done();
}
