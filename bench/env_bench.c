/* bench/env_bench.c: single-core throughput of seed_envs_step.
 *
 * Usage: bench/env_bench [ENV [K [SECONDS]]]   (defaults: cartpole 256 2)
 *
 * Steps K environments of one vector with actions drawn beforehand (so the
 * figure is the environment's cost, not the policy's), for about SECONDS,
 * and prints env-steps per second.  Not run by make check: it is a
 * measurement, not a test.
 */
#include <stdio.h>
#include <stdlib.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/env.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "cartpole";
	int k = argc > 2 ? atoi(argv[2]) : 256;
	double seconds = argc > 3 ? atof(argv[3]) : 2.0;
	seed_envs *e;
	seed_err err;
	int rc = seed_envs_new(&e, name, NULL, k, 1, &err);
	if (rc < 0) {
		fprintf(stderr, "env_bench: %s\n", err.msg);
		return 1;
	}
	const seed_env_spec *spec = seed_envs_spec(e);
	size_t ob = seed_env_spec_obs_bytes(spec);
	enum { NACT = 64 };
	void *obs = seed_xaligned((size_t)k * ob);
	void *fin = seed_xaligned((size_t)k * ob);
	int32_t *act = seed_xmalloc((size_t)k * NACT * sizeof *act);
	float *rew = seed_xmalloc((size_t)k * sizeof *rew), *ret = seed_xmalloc((size_t)k * sizeof *ret);
	uint8_t *term = seed_xmalloc((size_t)k), *trunc = seed_xmalloc((size_t)k);
	int32_t *len = seed_xmalloc((size_t)k * sizeof *len);
	seed_rng rng;
	seed_rng_init(&rng, 2, 0);
	for (int i = 0; i < k * NACT; i++)
		act[i] = (int32_t)seed_rng_below(&rng, (uint32_t)spec->num_actions);

	seed_envs_reset(e, obs);
	long long steps = 0, episodes = 0;
	double t0 = seed_now_s(), t;
	do {
		for (int r = 0; r < 100; r++) {
			seed_envs_step(e, 0, k, act + (size_t)k * (size_t)(r % NACT), obs, rew, term, trunc,
			               fin, ret, len);
			for (int i = 0; i < k; i++)
				episodes += term[i] | trunc[i];
		}
		steps += 100LL * k;
		t = seed_now_s() - t0;
	} while (t < seconds);
	printf("%s K=%d: %.0f env-steps/s (%lld steps, %lld episodes, %.2f s)\n", name, k, (double)steps / t,
	       steps, episodes, t);
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
