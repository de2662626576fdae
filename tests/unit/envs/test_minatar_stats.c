/* tests/unit/envs/test_minatar_stats.c: our MinAtar games against the original, in
 * distribution.
 *
 * The random streams cannot match upstream's numpy ones, so the check is
 * statistical: per game, 10,000 episodes of a uniform random policy with the
 * default options (sticky actions 0.1, ramping on, all 6 actions), one
 * instance playing every episode as upstream's reference run does, and the
 * mean return and mean length must agree with tests/golden/minatar_ref.h (written
 * by tests/golden/minatar_ref.py from the Python package) within 4 standard
 * errors of the difference.  Seeds are fixed, so the test is deterministic.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../envs/minatar.h"
#include "minatar_ref.h"
#include "tap.h"

#define EPISODES 10000
#define SEED 20240602

static const struct {
	const char *ref_name;
	const seed_env_class *cls;
} games[] = {
    {"breakout", &seed_env_minatar_breakout},
    {"asterix", &seed_env_minatar_asterix},
    {"freeway", &seed_env_minatar_freeway},
    {"seaquest", &seed_env_minatar_seaquest},
    {"space_invaders", &seed_env_minatar_space_invaders},
};

/* Mean and standard deviation (n - 1) of x[0..n). */
static void mean_std(const double *x, int n, double *mean, double *std)
{
	double m = 0.0, ss = 0.0;
	for (int i = 0; i < n; i++)
		m += x[i];
	m /= n;
	for (int i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	*mean = m;
	*std = sqrt(ss / (n - 1));
}

/* Our mean against the reference's: |difference| <= 4 standard errors of
 * the difference (exact equality when both spreads are 0). */
static void check_mean(const char *what, const double *x, int n, double ref_mean, double ref_std, int ref_n)
{
	double mean, std;
	mean_std(x, n, &mean, &std);
	double se = sqrt(std * std / n + ref_std * ref_std / ref_n);
	printf("# %s: ours %.4f (sd %.4f), reference %.4f (sd %.4f), difference %.2f standard errors\n", what,
	       mean, std, ref_mean, ref_std, se > 0 ? (mean - ref_mean) / se : 0.0);
	CHECK_MSG(fabs(mean - ref_mean) <= 4.0 * se, "%s: mean %.4f vs reference %.4f, 4 se = %.4f", what,
	          mean, ref_mean, 4.0 * se);
}

static void run_game(int g)
{
	const seed_env_class *cls = games[g].cls;
	const struct minatar_ref *ref = NULL;
	for (size_t i = 0; i < sizeof minatar_ref / sizeof minatar_ref[0]; i++)
		if (strcmp(minatar_ref[i].game, games[g].ref_name) == 0)
			ref = &minatar_ref[i];
	CHECK(ref != NULL);
	if (!ref)
		return;

	json_t *options = json_object();
	void *config = NULL;
	seed_env_spec spec;
	seed_err err;
	int rc = cls->configure(options, &config, &spec, &err);
	json_decref(options);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;

	void *state = calloc(1, cls->state_size); /* zeroed once: a new instance */
	/* u8 [10][10][C]; the vector (lib/env/env.c) is not needed here. */
	uint8_t *obs = malloc((size_t)(spec.obs_shape[0] * spec.obs_shape[1] * spec.obs_shape[2]));
	double *ret = malloc(EPISODES * sizeof *ret);
	double *len = malloc(EPISODES * sizeof *len);
	seed_rng env_rng, policy_rng;
	seed_rng_init(&env_rng, SEED, (uint64_t)g);
	seed_rng_init(&policy_rng, SEED, 100 + (uint64_t)g);

	for (int ep = 0; ep < EPISODES; ep++) {
		cls->reset(config, state, &env_rng, obs);
		double total = 0.0;
		int steps = 0;
		bool done = false;
		while (!done) {
			float r;
			int a = (int)seed_rng_below(&policy_rng, (uint32_t)spec.num_actions);
			cls->step(config, state, &env_rng, a, obs, &r, &done);
			total += r;
			steps++;
		}
		ret[ep] = total;
		len[ep] = steps;
	}
	check_mean("return", ret, EPISODES, ref->return_mean, ref->return_std, ref->episodes);
	check_mean("length", len, EPISODES, ref->length_mean, ref->length_std, ref->episodes);

	free(ret);
	free(len);
	free(obs);
	free(state);
	cls->free_config(config);
}

static void t_breakout(void)
{
	run_game(0);
}
static void t_asterix(void)
{
	run_game(1);
}
static void t_freeway(void)
{
	run_game(2);
}
static void t_seaquest(void)
{
	run_game(3);
}
static void t_space_invaders(void)
{
	run_game(4);
}

int main(void)
{
	TAP_RUN(t_breakout);
	TAP_RUN(t_asterix);
	TAP_RUN(t_freeway);
	TAP_RUN(t_seaquest);
	TAP_RUN(t_space_invaders);
	return tap_done();
}
