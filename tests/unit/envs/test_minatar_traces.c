/* tests/unit/envs/test_minatar_traces.c: our MinAtar games against the original, step
 * for step.
 *
 * tests/golden/minatar_traces.py ran the original Python games with their
 * random numbers taken from a copy of Seed's generator, drawn in the order
 * our games draw them, and recorded per episode the length, the return and a
 * digest of every observation, reward and end flag (tests/golden/minatar_traces.h).
 * Here the same seeds drive our classes and the same policies; every episode
 * must match exactly.  A mismatch names the option set and the episode.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../envs/minatar.h"
#include "minatar_traces.h"
#include "tap.h"

static const seed_env_class *find_class(const char *name)
{
	const seed_env_class *all[] = {&seed_env_minatar_breakout, &seed_env_minatar_asterix,
	                               &seed_env_minatar_freeway, &seed_env_minatar_seaquest,
	                               &seed_env_minatar_space_invaders};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}

/* ---- the digest (as in the generator) ---------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t weight[1000];

static void init_weights(void)
{
	uint64_t x = 0;
	for (int i = 0; i < 1000; i++)
		weight[i] = splitmix64(&x);
}

static uint64_t digest(const uint8_t *obs, int n)
{
	uint64_t d = 0;
	for (int i = 0; i < n; i++)
		d += obs[i] * weight[i];
	return d;
}

static uint64_t fold(uint64_t h, uint64_t v)
{
	return h * 0x100000001b3ULL + v;
}

/* ---- the generator's heuristic policies, on u8 [10][10][nc] --------------- */

struct view {
	const uint8_t *obs;
	int nc;
};

static int at(struct view v, int y, int x, int c)
{
	return v.obs[minatar_at(y, x, c, v.nc)];
}

/* The first cell (row-major) of channel c; false (and 0, 0) if none. */
static bool first_cell(struct view v, int c, int *y, int *x)
{
	*y = *x = 0;
	for (int yy = 0; yy < 10; yy++)
		for (int xx = 0; xx < 10; xx++)
			if (at(v, yy, xx, c)) {
				*y = yy, *x = xx;
				return true;
			}
	return false;
}

static int count_cells(struct view v, int c)
{
	int n = 0;
	for (int y = 0; y < 10; y++)
		for (int x = 0; x < 10; x++)
			n += at(v, y, x, c);
	return n;
}

static int clamp9(int x)
{
	return x < 0 ? 0 : x > 9 ? 9 : x;
}

static int breakout_policy(struct view v, double u, int a)
{
	if (u < 0.1)
		return a;
	int by, bx, ty, tx, py, px;
	first_cell(v, 1, &by, &bx);
	first_cell(v, 2, &ty, &tx);
	first_cell(v, 0, &py, &px);
	int d = bx > tx ? 1 : bx < tx ? -1 : 0;
	int x = bx;
	if (by > ty) {
		for (int i = 0; i < 8 - by; i++) {
			x += d;
			if (x < 0 || x > 9) {
				x = clamp9(x);
				d = -d;
			}
		}
	}
	return x < px ? 1 : x > px ? 3 : 0;
}

static int space_invaders_policy(struct view v, double u, int a)
{
	if (u < 0.1)
		return a;
	int py, pos;
	first_cell(v, 0, &py, &pos);
	bool danger[10];
	for (int x = 0; x < 10; x++) {
		danger[x] = false;
		for (int y = 4; y < 9; y++)
			danger[x] = danger[x] || at(v, y, x, 5);
	}
	if (danger[pos]) {
		if (pos > 0 && !danger[pos - 1])
			return 1;
		if (pos < 9 && !danger[pos + 1])
			return 3;
		return pos > 0 ? 1 : 3;
	}
	/* Nearest column with an alien (ties: the smaller column). */
	int target = -1, best = 100, n = 0, low_y = -1, low_x = -1;
	for (int y = 0; y < 10; y++) {
		for (int x = 0; x < 10; x++) {
			if (!at(v, y, x, 1))
				continue;
			n++;
			int dist = abs(x - pos);
			if (dist < best || (dist == best && x < target))
				best = dist, target = x;
			if (y > low_y)
				low_y = y, low_x = x;
		}
	}
	if (n <= 4) {
		int d = count_cells(v, 2) ? -1 : 1;
		target = clamp9(low_x + d * ((9 - low_y) / n));
	}
	int step = target < pos ? -1 : target > pos ? 1 : 0;
	if (step && danger[pos + step])
		return 0;
	return step < 0 ? 1 : step > 0 ? 3 : 5;
}

static bool seaquest_threat(struct view v, int y, int x)
{
	if (y < 1 || y > 8)
		return false;
	for (int xx = x - 3 < 0 ? 0 : x - 3; xx <= (x + 3 > 9 ? 9 : x + 3); xx++)
		for (int c = 4; c <= 6; c++)
			if (at(v, y, xx, c))
				return true;
	return false;
}

static int seaquest_policy(struct view v, double u, int a)
{
	int sy, sx, dy, dx, b;
	first_cell(v, 0, &sy, &sx);
	int divers = count_cells(v, 8), oxygen = count_cells(v, 7);
	if (sy > 0 && ((divers >= 1 && oxygen <= 4) || divers == 6))
		return u < 0.9 ? 2 : a;
	if (u < 0.2)
		b = a;
	else if (seaquest_threat(v, sy, sx))
		b = sy < 8 && !seaquest_threat(v, sy + 1, sx)   ? 4
		    : sy > 1 && !seaquest_threat(v, sy - 1, sx) ? 2
		                                                : 5;
	else if (first_cell(v, 9, &dy, &dx))
		b = dy != sy ? (dy > sy ? 4 : 2) : (dx > sx ? 3 : 1);
	else if (sy <= 1)
		b = 4;
	else
		b = a;
	return b == 2 && sy == 1 && divers == 0 ? 0 : b;
}

static int heuristic(const char *env, struct view v, double u, int a)
{
	if (strcmp(env, "minatar-breakout") == 0)
		return breakout_policy(v, u, a);
	if (strcmp(env, "minatar-freeway") == 0)
		return u < 0.8 ? 2 : a;
	if (strcmp(env, "minatar-space-invaders") == 0)
		return space_invaders_policy(v, u, a);
	if (strcmp(env, "minatar-seaquest") == 0)
		return seaquest_policy(v, u, a);
	return a;
}

/* ---- replay ----------------------------------------------------------------------- */

static void replay(const struct minatar_trace *t)
{
	const seed_env_class *cls = find_class(t->env);
	CHECK_MSG(cls != NULL, "%s", t->env);
	if (!cls)
		return;
	json_t *options = json_loads(t->options, 0, NULL);
	void *config = NULL;
	seed_env_spec spec;
	seed_err err;
	int rc = cls->configure(options, &config, &spec, &err);
	json_decref(options);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	int n = (int)(spec.obs_shape[0] * spec.obs_shape[1] * spec.obs_shape[2]);
	struct view v = {.obs = NULL, .nc = (int)spec.obs_shape[2]};
	uint8_t *obs = malloc((size_t)n);
	v.obs = obs;
	void *state = calloc(1, cls->state_size);
	seed_rng env_rng, policy_rng;
	seed_rng_init(&env_rng, t->seed, 0);
	seed_rng_init(&policy_rng, t->seed, 1);

	int mismatches = 0;
	for (int ep = 0; ep < t->episodes; ep++) {
		cls->reset(config, state, &env_rng, obs);
		uint64_t h = fold(0, digest(obs, n));
		int length = 0, ret = 0;
		bool done = false;
		while (!done && length < 100000) {
			int action;
			if (t->heuristic) {
				double u = seed_rng_double(&policy_rng);
				action = heuristic(t->env, v, u, (int)seed_rng_below(&policy_rng, 6));
			} else {
				action = (int)seed_rng_below(&policy_rng, (uint32_t)spec.num_actions);
			}
			float r;
			cls->step(config, state, &env_rng, action, obs, &r, &done);
			h = fold(h, digest(obs, n));
			h = fold(h, (uint64_t)r * 1000003u + done);
			ret += (int)r;
			length++;
		}
		const struct minatar_trace_episode *want = &t->episode[ep];
		if (length != want->length || ret != want->ret || h != want->digest) {
			/* Later episodes follow from this one: report the first. */
			if (mismatches++ == 0)
				printf("# %s %s%s: episode %d: length %d return %d digest %016llx, expected "
				       "%d %d "
				       "%016llx\n",
				       t->env, t->options, t->heuristic ? " (heuristic policy)" : "", ep,
				       length, ret, (unsigned long long)h, want->length, want->ret,
				       (unsigned long long)want->digest);
		}
	}
	CHECK_MSG(mismatches == 0, "%d of %d episodes differ", mismatches, t->episodes);
	free(state);
	free(obs);
	cls->free_config(config);
}

static void replay_game(const char *env)
{
	int sets = 0;
	for (size_t i = 0; i < sizeof minatar_traces / sizeof minatar_traces[0]; i++) {
		if (strcmp(minatar_traces[i].env, env) == 0) {
			replay(&minatar_traces[i]);
			sets++;
		}
	}
	CHECK(sets == 3);
}

static void t_breakout(void)
{
	replay_game("minatar-breakout");
}
static void t_asterix(void)
{
	replay_game("minatar-asterix");
}
static void t_freeway(void)
{
	replay_game("minatar-freeway");
}
static void t_seaquest(void)
{
	replay_game("minatar-seaquest");
}
static void t_space_invaders(void)
{
	replay_game("minatar-space-invaders");
}

int main(void)
{
	init_weights();
	TAP_RUN(t_breakout);
	TAP_RUN(t_asterix);
	TAP_RUN(t_freeway);
	TAP_RUN(t_seaquest);
	TAP_RUN(t_space_invaders);
	return tap_done();
}
