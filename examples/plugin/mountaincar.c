/* mountaincar.c: Gymnasium's MountainCar-v0 as a Seed environment plugin.
 *
 * A complete plugin, built outside Seed's tree with nothing but Seed's
 * installed headers and library (see README and Makefile beside it):
 *
 *     cc -shared -fPIC -O2 -ffp-contract=off $(pkg-config --cflags seed) \
 *         mountaincar.c -o mountaincar.so $(pkg-config --libs seed) -lm
 *     seed-eval --env ./mountaincar.so:mountaincar --episodes 10
 *
 * The dynamics are gymnasium/envs/classic_control/mountain_car.py's
 * (MountainCarEnv.step) operation for operation, in float64: the velocity
 * changes by (action - 1) * force + cos(3 * position) * (-gravity) and is
 * clipped to [-0.07, 0.07]; the position moves by the new velocity and is
 * clipped to [-1.2, 0.6]; at the left wall a velocity pointing left is set
 * to 0.  The episode terminates when the position reaches 0.5 with a
 * velocity >= 0 (goal_velocity 0, v0's default) and is truncated after 200
 * steps (v0's TimeLimit, the class default max_steps).  Reward -1 on every
 * step, the terminating one included.  The observation is the state rounded
 * to float32: f32[2], position and velocity.  Actions: 0 push left, 1 no
 * push, 2 push right.  A reset draws the position uniformly from [-0.6,
 * -0.4) with velocity 0 (Gymnasium's bounds; the draws come from Seed's
 * generator, not numpy's).  Built with -ffp-contract=off (no fused
 * multiply-add), with the same libm the trajectories agree with Gymnasium's
 * bit for bit (tests/golden/mountaincar_ref.py in Seed's tree checks them).
 *
 * Options: "init_state": [position, velocity] starts every episode from that
 * exact state (for replaying recorded trajectories), as cartpole's option
 * of that name does; "max_steps" as for every class.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <seed/buf.h>
#include <seed/env_plugin.h>

/* MountainCarEnv.__init__'s constants. */
static const double min_position = -1.2;
static const double max_position = 0.6;
static const double max_speed = 0.07;
static const double goal_position = 0.5;
static const double goal_velocity = 0;
static const double force = 0.001;
static const double gravity = 0.0025;

typedef struct mountaincar_config {
	bool has_init;
	double init[2]; /* position, velocity */
} mountaincar_config;

typedef struct mountaincar_state {
	double position, velocity;
} mountaincar_state;

static int mountaincar_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"init_state", NULL};
	mountaincar_config c = {0};
	c.init[0] = NAN;
	int rc = seed_env_options_check(options, "mountaincar", known, err);
	if (rc == 0)
		rc = seed_env_option_doubles(options, "mountaincar", "init_state", 2, c.init, err);
	if (rc < 0)
		return rc;
	c.has_init = !isnan(c.init[0]);
	mountaincar_config *p = seed_xmalloc(sizeof *p);
	*p = c;
	*config = p;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = 2;
	spec->num_actions = 3;
	spec->max_steps = 200;
	return 0;
}

static void mountaincar_free_config(void *config)
{
	free(config);
}

static void observe(const mountaincar_state *s, float *obs)
{
	obs[0] = (float)s->position;
	obs[1] = (float)s->velocity;
}

static void mountaincar_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	const mountaincar_config *c = config;
	mountaincar_state *s = state;
	if (c->has_init) {
		s->position = c->init[0];
		s->velocity = c->init[1];
	} else {
		/* np_random.uniform(low=-0.6, high=-0.4), velocity 0. */
		s->position = seed_rng_uniform(rng, -0.6, -0.4);
		s->velocity = 0;
	}
	observe(s, obs);
}

static double clip(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static void mountaincar_step(const void *config, void *state, seed_rng *rng, int action, void *obs,
                             float *reward, bool *terminated)
{
	mountaincar_state *s = state;
	double position = s->position, velocity = s->velocity;
	/* velocity += (action - 1) * force + cos(3 * position) * (-gravity):
	 * the right-hand side first, then the addition. */
	velocity = velocity + ((action - 1) * force + cos(3 * position) * (-gravity));
	velocity = clip(velocity, -max_speed, max_speed);
	position = position + velocity;
	position = clip(position, min_position, max_position);
	if (position == min_position && velocity < 0)
		velocity = 0;
	s->position = position;
	s->velocity = velocity;
	observe(s, obs);
	*reward = -1.0f;
	*terminated = position >= goal_position && velocity >= goal_velocity;
}

static const seed_env_class mountaincar = {
    .name = "mountaincar",
    .summary = "MountainCar-v0 as in Gymnasium: rock an underpowered car up to the flag",
    .configure = mountaincar_configure,
    .free_config = mountaincar_free_config,
    .state_size = sizeof(mountaincar_state),
    .reset = mountaincar_reset,
    .step = mountaincar_step,
};

SEED_ENV_PLUGIN(&mountaincar);
