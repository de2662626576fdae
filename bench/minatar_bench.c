/* bench/minatar_bench.c: steps per second of each MinAtar game on one core.
 *
 * Usage: bench/minatar_bench [STEPS]   (default 2000000 steps per game)
 *
 * One instance per game, default options, uniform random actions; an ended
 * episode is reset in the loop, as the vector would.  Each step writes the
 * observation, so the figure includes that.  Prints one line per game.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "seed/clock.h"

#include "../envs/minatar.h"

int main(int argc, char **argv)
{
	long steps = 2000000;
	if (argc > 2 || (argc == 2 && (steps = strtol(argv[1], NULL, 10)) <= 0)) {
		fprintf(stderr, "usage: %s [STEPS]\n", argv[0]);
		return 2;
	}
	const seed_env_class *games[] = {&seed_env_minatar_breakout, &seed_env_minatar_asterix,
	                                 &seed_env_minatar_freeway, &seed_env_minatar_seaquest,
	                                 &seed_env_minatar_space_invaders};
	for (size_t g = 0; g < sizeof games / sizeof games[0]; g++) {
		const seed_env_class *cls = games[g];
		json_t *options = json_object();
		void *config = NULL;
		seed_env_spec spec;
		seed_err err;
		if (cls->configure(options, &config, &spec, &err)) {
			fprintf(stderr, "%s: %s\n", argv[0], err.msg);
			return 1;
		}
		json_decref(options);
		void *state = calloc(1, cls->state_size);
		uint8_t *obs = malloc((size_t)(spec.obs_shape[0] * spec.obs_shape[1] * spec.obs_shape[2]));
		seed_rng env_rng, policy_rng;
		seed_rng_init(&env_rng, 1, 0);
		seed_rng_init(&policy_rng, 1, 1);

		long episodes = 0;
		double t0 = seed_now_s();
		cls->reset(config, state, &env_rng, obs);
		for (long i = 0; i < steps; i++) {
			float r;
			bool done;
			int a = (int)seed_rng_below(&policy_rng, (uint32_t)spec.num_actions);
			cls->step(config, state, &env_rng, a, obs, &r, &done);
			if (done) {
				cls->reset(config, state, &env_rng, obs);
				episodes++;
			}
		}
		double dt = seed_now_s() - t0;
		printf("%-24s %10.0f steps/s  (%ld steps, %ld episodes, %.2f s)\n", cls->name,
		       (double)steps / dt, steps, episodes, dt);
		free(obs);
		free(state);
		cls->free_config(config);
	}
	return 0;
}
