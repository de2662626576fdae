/* envs/pendulum.c: Pendulum-v1 as Gymnasium computes it, the smallest task
 * with a Box action space.
 *
 * A pendulum hangs from a pivot; the agent applies a torque u (one real
 * number, bounds [-2, 2]) to swing it up and hold it upright.  The state is
 * (theta, theta_dot) in float64, theta = 0 upright; the observation is
 * f32[3] = (cos theta, sin theta, theta_dot).  One step, following
 * gymnasium/envs/classic_control/pendulum.py (PendulumEnv.step) term by
 * term (g = 10, m = 1, l = 1, dt = 0.05):
 *
 *   u        = clip(action, -2, 2)
 *   cost     = norm(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2
 *   theta_dot' = clip(theta_dot + (3 g / (2 l) sin theta + 3 / (m l^2) u) dt, -8, 8)
 *   theta'   = theta + theta_dot' dt
 *   reward   = -cost
 *
 * where norm(x) = ((x + pi) mod 2 pi) - pi with Python's mod (the sign of
 * the divisor).  Never terminates; truncated after 200 steps (the class
 * default max_steps, Gymnasium's TimeLimit for v1).  Reset draws theta
 * uniformly in [-pi, pi) and theta_dot in [-1, 1).  Gymnasium computes u^2
 * in the action's float32 under NumPy 2; here everything is float64, so
 * rewards agree to float32 rounding, not bit for bit.
 *
 * Options: "g" (gravity, default 10), "init_state": [theta, theta_dot] to
 * start every episode from that exact state.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "seed/buf.h"

static const double max_speed = 8.0, max_torque = 2.0, dt = 0.05, mass = 1.0, len = 1.0;

typedef struct pendulum_config {
	double g;
	bool has_init;
	double init[2];
} pendulum_config;

typedef struct pendulum_state {
	double theta, theta_dot;
	double last_u;
} pendulum_state;

static int pendulum_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"g", "init_state", NULL};
	pendulum_config c = {.g = 10.0};
	int rc = seed_env_options_check(options, "pendulum", known, err);
	if (rc == 0)
		rc = seed_env_option_double(options, "pendulum", "g", 0, 1e3, &c.g, err);
	if (rc == 0 && json_object_get(options, "init_state")) {
		rc = seed_env_option_doubles(options, "pendulum", "init_state", 2, c.init, err);
		c.has_init = rc == 0;
	}
	if (rc < 0)
		return rc;
	pendulum_config *p = seed_xmalloc(sizeof *p);
	*p = c;
	*config = p;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = 3;
	spec->action_space = SEED_ACTIONS_BOX;
	spec->num_actions = 1;
	spec->action_low[0] = (float)-max_torque;
	spec->action_high[0] = (float)max_torque;
	spec->max_steps = 200;
	return 0;
}

static void pendulum_free_config(void *config)
{
	free(config);
}

static void observe(const pendulum_state *s, float *obs)
{
	obs[0] = (float)cos(s->theta);
	obs[1] = (float)sin(s->theta);
	obs[2] = (float)s->theta_dot;
}

static void pendulum_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	const pendulum_config *c = config;
	pendulum_state *s = state;
	if (c->has_init) {
		s->theta = c->init[0];
		s->theta_dot = c->init[1];
	} else {
		/* np_random.uniform(low=-high, high=high), high = [pi, 1]. */
		s->theta = seed_rng_uniform(rng, -M_PI, M_PI);
		s->theta_dot = seed_rng_uniform(rng, -1.0, 1.0);
	}
	s->last_u = 0;
	observe(s, obs);
}

/* ((x + pi) % (2 pi)) - pi with Python's %, whose result has the sign of
 * the divisor. */
static double angle_normalize(double x)
{
	double m = fmod(x + M_PI, 2 * M_PI);
	if (m < 0)
		m += 2 * M_PI;
	return m - M_PI;
}

static double clip(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static int pendulum_step(const void *config, void *state, seed_rng *rng, const float *action, void *obs,
                         float *reward, bool *terminated)
{
	(void)rng;
	const pendulum_config *c = config;
	pendulum_state *s = state;
	double th = s->theta, thdot = s->theta_dot;
	double u = clip(action[0], -max_torque, max_torque);
	s->last_u = u;
	double an = angle_normalize(th);
	double costs = an * an + 0.1 * (thdot * thdot) + 0.001 * (u * u);
	double newthdot = thdot + (3 * c->g / (2 * len) * sin(th) + 3.0 / (mass * (len * len)) * u) * dt;
	newthdot = clip(newthdot, -max_speed, max_speed);
	s->theta = th + newthdot * dt;
	s->theta_dot = newthdot;
	observe(s, obs);
	*reward = (float)-costs;
	*terminated = false;
	return 0;
}

static int pendulum_render_text(const void *config, const void *state, char *buf, size_t n)
{
	(void)config;
	const pendulum_state *s = state;
	return snprintf(buf, n, "theta=%+.1fdeg theta_dot=%+.3f torque=%+.3f\n",
	                angle_normalize(s->theta) * 180 / M_PI, s->theta_dot, s->last_u);
}

const seed_env_class seed_env_pendulum = {
    .name = "pendulum",
    .summary = "Pendulum-v1 as in Gymnasium: swing a pendulum up with a torque in [-2, 2] (Box actions)",
    .configure = pendulum_configure,
    .free_config = pendulum_free_config,
    .state_size = sizeof(pendulum_state),
    .reset = pendulum_reset,
    .step_box = pendulum_step,
    .render_text = pendulum_render_text,
};
