/* bench/mujoco_bench.c: single-core throughput of MuJoCo's tasks through
 * seed_envs_step_box.
 *
 * Usage: bench/mujoco_bench [ENV [K [STEPS]]]   (defaults: halfcheetah 16 20000)
 *
 * Steps K instances of one vector (one thread) with uniform random actions
 * within the bounds, drawn beforehand (so the figure is the environment's
 * cost, not the policy's), until STEPS env-steps are done, and prints
 * env-steps per second, the episodes ended and the unstable steps.  Built
 * only with MuJoCo (make bench/mujoco_bench); not run by make check: it is a
 * measurement, not a test.
 */
#include <stdio.h>
#include <stdlib.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/env.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "halfcheetah";
	int k = argc > 2 ? atoi(argv[2]) : 16;
	long long total = argc > 3 ? atoll(argv[3]) : 20000;
	if (k < 1 || total < 1) {
		fprintf(stderr, "usage: mujoco_bench [ENV [K [STEPS]]]\n");
		return 2;
	}
	seed_envs *e;
	seed_err err;
	int rc = seed_envs_new(&e, name, NULL, k, 1, &err);
	if (rc < 0) {
		fprintf(stderr, "mujoco_bench: %s\n", err.msg);
		return 1;
	}
	const seed_env_spec *spec = seed_envs_spec(e);
	if (spec->action_space != SEED_ACTIONS_BOX) {
		fprintf(stderr, "mujoco_bench: %s has no Box action space\n", name);
		seed_envs_free(&e);
		return 1;
	}
	int a = spec->num_actions;
	size_t ob = seed_env_spec_obs_bytes(spec);
	enum { NACT = 64 };
	void *obs = seed_xaligned((size_t)k * ob);
	void *fin = seed_xaligned((size_t)k * ob);
	float *act = seed_xmalloc((size_t)k * NACT * (size_t)a * sizeof *act);
	float *rew = seed_xmalloc((size_t)k * sizeof *rew), *ret = seed_xmalloc((size_t)k * sizeof *ret);
	uint8_t *term = seed_xmalloc((size_t)k), *trunc = seed_xmalloc((size_t)k);
	int32_t *len = seed_xmalloc((size_t)k * sizeof *len);
	seed_rng rng;
	seed_rng_init(&rng, 2, 0);
	for (size_t i = 0; i < (size_t)k * NACT * (size_t)a; i++) {
		int j = (int)(i % (size_t)a);
		act[i] = (float)seed_rng_uniform(&rng, spec->action_low[j], spec->action_high[j]);
	}

	seed_envs_reset(e, obs);
	long long steps = 0, episodes = 0;
	double t0 = seed_now_s();
	for (int r = 0; steps < total; r++) {
		rc = seed_envs_step_box(e, 0, k, act + (size_t)k * (size_t)a * (size_t)(r % NACT), obs, rew,
		                        term, trunc, fin, ret, len);
		if (rc < 0) {
			fprintf(stderr, "mujoco_bench: step: %d\n", rc);
			return 1;
		}
		for (int i = 0; i < k; i++)
			episodes += term[i] | trunc[i];
		steps += k;
	}
	double t = seed_now_s() - t0;
	printf("%s K=%d: %.0f env-steps/s (%lld steps, %lld episodes, %lld unstable, %.2f s)\n", name, k,
	       (double)steps / t, steps, episodes, (long long)seed_envs_unstable(e), t);
	free(obs);
	free(fin);
	free(act);
	free(rew);
	free(ret);
	free(term);
	free(trunc);
	free(len);
	seed_envs_free(&e);
	return 0;
}
