/* envs/cartpole.c: CartPole-v1, exactly as Gymnasium 1.x computes it.
 *
 * The state is four float64 numbers (x, x_dot, theta, theta_dot), stepped
 * with the explicit Euler integrator; the observation is the state rounded
 * to float32.  Every expression below follows the operation order of
 * gymnasium/envs/classic_control/cartpole.py (CartPoleEnv.step), and the
 * build uses -ffp-contract=off, so that with the same libm (sin, cos) the
 * trajectories agree bit for bit; tests/unit/env/test_env.c checks that against
 * trajectories recorded with Gymnasium (tests/golden/cartpole_ref.py).
 *
 * Episode end: terminated when x leaves [-2.4, 2.4] or theta leaves
 * [-12 degrees, 12 degrees] (12 * 2 * pi / 360 radians); truncated after 500
 * steps (the class default max_steps, Gymnasium's TimeLimit for v1).
 * Reward 1 on every step, the terminating one included.  Like Gymnasium,
 * stepping on after termination gives reward 0 (steps_beyond_terminated);
 * the vector resets at termination, so only direct use of the class sees it.
 *
 * Options: "init_state": [x, x_dot, theta, theta_dot] starts every episode
 * from that exact state instead of uniform draws in [-0.05, 0.05) (for
 * replaying recorded trajectories); "sutton_barto_reward": true gives
 * Gymnasium's sutton_barto_reward (0 per step, -1 on termination);
 * "mask_velocity": true observes only the cart position and the pole angle
 * (f32[2]: x, theta), a partially observed task that a policy without
 * memory cannot solve well (the velocities must be inferred from successive
 * observations); the dynamics are unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "seed/buf.h"

/* Gymnasium's constants, combined the way its __init__ combines them. */
static const double gravity = 9.8;
static const double masscart = 1.0;
static const double masspole = 0.1;
static const double length = 0.5; /* half the pole's length */
static const double force_mag = 10.0;
static const double tau = 0.02; /* seconds between state updates */
#define TOTAL_MASS (masspole + masscart)
#define POLEMASS_LENGTH (masspole * length)
#define THETA_THRESHOLD (12 * 2 * M_PI / 360)
#define X_THRESHOLD 2.4

typedef struct cartpole_config {
	bool has_init;
	double init[4];
	bool sutton_barto;
	bool mask_velocity;
} cartpole_config;

typedef struct cartpole_state {
	double x, x_dot, theta, theta_dot;
	/* Gymnasium's steps_beyond_terminated: None while fell is false. */
	bool fell;
	int64_t steps_beyond_terminated;
} cartpole_state;

static int cartpole_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"init_state", "sutton_barto_reward", "mask_velocity", NULL};
	cartpole_config c = {0};
	int rc = seed_env_options_check(options, "cartpole", known, err);
	if (rc == 0)
		rc = seed_env_option_bool(options, "cartpole", "sutton_barto_reward", &c.sutton_barto, err);
	if (rc == 0)
		rc = seed_env_option_bool(options, "cartpole", "mask_velocity", &c.mask_velocity, err);
	if (rc < 0)
		return rc;
	json_t *init = json_object_get(options, "init_state");
	if (init) {
		if (!json_is_array(init) || json_array_size(init) != 4)
			return seed_err_set(err, -SEED_EOPTION,
			                    "cartpole: option \"init_state\" must be an array of 4 numbers "
			                    "[x, x_dot, theta, theta_dot]");
		for (size_t i = 0; i < 4; i++) {
			json_t *v = json_array_get(init, i);
			if (!json_is_number(v) || !isfinite(json_number_value(v)))
				return seed_err_set(
				    err, -SEED_EOPTION,
				    "cartpole: option \"init_state\": element %zu is not a finite number", i);
			c.init[i] = json_number_value(v);
		}
		c.has_init = true;
	}
	cartpole_config *p = seed_xmalloc(sizeof *p);
	*p = c;
	*config = p;
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = c.mask_velocity ? 2 : 4;
	spec->num_actions = 2;
	spec->max_steps = 500;
	spec->rgb_width = 600; /* Gymnasium's rgb_array size */
	spec->rgb_height = 400;
	return 0;
}

static void cartpole_free_config(void *config)
{
	free(config);
}

static void observe(const cartpole_config *c, const cartpole_state *s, float *obs)
{
	if (c->mask_velocity) {
		obs[0] = (float)s->x;
		obs[1] = (float)s->theta;
		return;
	}
	obs[0] = (float)s->x;
	obs[1] = (float)s->x_dot;
	obs[2] = (float)s->theta;
	obs[3] = (float)s->theta_dot;
}

static void cartpole_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	const cartpole_config *c = config;
	cartpole_state *s = state;
	if (c->has_init) {
		s->x = c->init[0];
		s->x_dot = c->init[1];
		s->theta = c->init[2];
		s->theta_dot = c->init[3];
	} else {
		/* np_random.uniform(low=-0.05, high=0.05, size=(4,)), in order. */
		s->x = seed_rng_uniform(rng, -0.05, 0.05);
		s->x_dot = seed_rng_uniform(rng, -0.05, 0.05);
		s->theta = seed_rng_uniform(rng, -0.05, 0.05);
		s->theta_dot = seed_rng_uniform(rng, -0.05, 0.05);
	}
	s->fell = false;
	s->steps_beyond_terminated = 0;
	observe(c, s, obs);
}

static void cartpole_step(const void *config, void *state, seed_rng *rng, int action, void *obs,
                          float *reward, bool *terminated)
{
	const cartpole_config *c = config;
	cartpole_state *s = state;
	double x = s->x, x_dot = s->x_dot, theta = s->theta, theta_dot = s->theta_dot;
	double force = action == 1 ? force_mag : -force_mag;
	double costheta = cos(theta);
	double sintheta = sin(theta);

	/* Same grouping as Gymnasium: Python evaluates left to right. */
	double temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS;
	double thetaacc = (gravity * sintheta - costheta * temp) /
	                  (length * (4.0 / 3.0 - masspole * (costheta * costheta) / TOTAL_MASS));
	double xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;

	/* kinematics_integrator == "euler" */
	x = x + tau * x_dot;
	x_dot = x_dot + tau * xacc;
	theta = theta + tau * theta_dot;
	theta_dot = theta_dot + tau * thetaacc;
	s->x = x;
	s->x_dot = x_dot;
	s->theta = theta;
	s->theta_dot = theta_dot;

	bool term =
	    x < -X_THRESHOLD || x > X_THRESHOLD || theta < -THETA_THRESHOLD || theta > THETA_THRESHOLD;
	float r;
	if (!term) {
		r = c->sutton_barto ? 0.0f : 1.0f;
	} else if (!s->fell) {
		/* Pole just fell. */
		s->fell = true;
		s->steps_beyond_terminated = 0;
		r = c->sutton_barto ? -1.0f : 1.0f;
	} else {
		/* Stepping an ended episode: Gymnasium warns and gives 0. */
		s->steps_beyond_terminated++;
		r = c->sutton_barto ? -1.0f : 0.0f;
	}
	observe(c, s, obs);
	*reward = r;
	*terminated = term;
}

/* Two lines: the pole above the cart on a track spanning [-2.4, 2.4], and
 * the state in numbers. */
static int cartpole_render_text(const void *config, const void *state, char *buf, size_t len)
{
	const cartpole_state *s = state;
	enum { W = 49 };
	char pole[W + 1], track[W + 1];
	memset(pole, ' ', W);
	memset(track, '-', W);
	track[0] = track[W - 1] = '|';
	double u = (s->x + X_THRESHOLD) / (2 * X_THRESHOLD) * (W - 1);
	int at = u < 0 ? 0 : u > W - 1 ? W - 1 : (int)lround(u);
	track[at] = '#';
	double deg = s->theta * 180 / M_PI;
	pole[at] = deg > 4 ? '/' : deg < -4 ? '\\' : '|';
	int n = W;
	while (n > 0 && pole[n - 1] == ' ')
		n--;
	pole[n] = '\0';
	track[W] = '\0';
	return snprintf(buf, len, "%s\n%s\nx=%+.4f x_dot=%+.4f theta=%+.2fdeg theta_dot=%+.4f\n", pole, track,
	                s->x, s->x_dot, deg, s->theta_dot);
}

/* Gymnasium's picture (CartPoleEnv.render): a 600 x 400 white screen, the
 * track a black line at height 100, a black 50 x 30 cart centred on it at
 * 300 + 125 x, a 10 x 125 pole (colour 202, 152, 101) hinged 7.5 above the
 * cart's centre and turned by theta (clockwise), and the hinge a disc of
 * radius 5 (colour 129, 132, 203), drawn in that order (track last), y up.
 *
 * Each pixel takes the colour of the shape under its centre, mapped back to
 * that 600 x 400 screen, so any size is drawn directly instead of being
 * resampled.  When scaled down so far that the pole or hinge would be less
 * than a pixel wide, or the track fall between pixel centres, they are
 * widened to one pixel so that they never vanish. */
static int cartpole_render_rgb(const void *config, const void *state, uint8_t *rgb, int width, int height)
{
	static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
	static const uint8_t pole_rgb[3] = {202, 152, 101}, axle_rgb[3] = {129, 132, 203};
	const cartpole_state *s = state;
	const double scale = 600 / (2 * X_THRESHOLD); /* 125 pixels per metre */
	const double cart_x = s->x * scale + 600 / 2.0, cart_y = 100;
	const double axle_y = cart_y + 30 / 4.0;
	const double sx = width / 600.0, sy = height / 400.0;
	const double px_size = 1 / (sx < sy ? sx : sy); /* one pixel, in screen units */
	const double pole_half = fmax(5, 0.5 * px_size), axle_r = fmax(5, 0.5 * px_size);
	const double pole_top = scale * (2 * length) - 5;
	const double c = cos(s->theta), sn = sin(s->theta);
	/* The track's rows: those whose centre falls in [100, 101), at least
	 * the one nearest to it. */
	int track0 = (int)floor((400 - 101) * sy - 0.5) + 1, track1 = (int)floor((400 - 100) * sy - 0.5);
	if (track1 < track0)
		track0 = track1 = (int)floor((400 - 100.5) * sy);
	for (int py = 0; py < height; py++) {
		const double gy = 400 - (py + 0.5) / sy;
		const bool track = py >= track0 && py <= track1;
		uint8_t *out = rgb + (size_t)py * (size_t)width * 3;
		for (int px = 0; px < width; px++, out += 3) {
			const double gx = (px + 0.5) / sx;
			const uint8_t *col = white;
			if (fabs(gx - cart_x) <= 25 && fabs(gy - cart_y) <= 15)
				col = black;
			/* Into the pole's frame: turn back by theta. */
			double dx = gx - cart_x, dy = gy - axle_y;
			double lx = dx * c - dy * sn, ly = dx * sn + dy * c;
			if (fabs(lx) <= pole_half && ly >= -5 && ly <= pole_top)
				col = pole_rgb;
			if (dx * dx + dy * dy <= axle_r * axle_r)
				col = axle_rgb;
			if (track)
				col = black;
			memcpy(out, col, 3);
		}
	}
	return 0;
}

const seed_env_class seed_env_cartpole = {
    .name = "cartpole",
    .summary = "CartPole-v1 as in Gymnasium: push a cart left or right to keep its pole up",
    .configure = cartpole_configure,
    .free_config = cartpole_free_config,
    .state_size = sizeof(cartpole_state),
    .reset = cartpole_reset,
    .step = cartpole_step,
    .render_text = cartpole_render_text,
    .render_rgb = cartpole_render_rgb,
};
