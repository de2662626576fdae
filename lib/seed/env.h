/* seed/env.h: the environment interface, and vectors of environments.
 *
 * An environment class (seed_env_class) describes one kind of environment:
 * it parses its options, sizes its per-instance state, and resets, steps and
 * renders one instance.  The vector (seed_envs) holds K instances of one
 * class with one random generator each (stream = env index, so env i behaves
 * the same whatever K is), applies the time limit, resets ended episodes
 * automatically, and writes straight into caller-owned buffers.
 *
 * Built-in classes are in the registry from the start (cartpole, catch, ...;
 * seed_env_class_at lists them); a program may add its own with
 * seed_env_register, and shared libraries (plugins, seed/env_plugin.h)
 * provide more to every program by name: `PATH.so:NAME`, or a bare NAME
 * found in SEED_ENV_PATH (seed_env_lookup).  man seed_env(3) shows how to
 * write a class and a plugin.
 *
 * Episodes follow Gymnasium's conventions: `terminated` is a real end of the
 * episode (no bootstrapping from the value), `truncated` is the time limit
 * (elapsed steps >= max_steps, like Gymnasium's TimeLimit wrapper); both can
 * be 1 on the same step.  Unlike Gymnasium's vector environments, the reset
 * of an ended episode happens in the same call that ended it: the obs row
 * then holds the next episode's first observation and final_obs the last
 * observation of the episode that ended.
 *
 * Threads: a seed_envs belongs to one thread at a time; distinct vectors may
 * be stepped concurrently.  The registry must be set up (seed_env_register)
 * before threads start using it.
 */
#ifndef SEED_ENV_H
#define SEED_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/error.h"
#include "seed/rng.h"
#include "seed/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEED_ENV_MAX_OBS_RANK 4
/* Most real numbers in one action of a Box space. */
#define SEED_ENV_MAX_ACTION_DIM 64

/* What the environment acts on: integers 0 .. num_actions-1 (a Discrete
 * space) or num_actions real numbers each within [action_low[i],
 * action_high[i]] (a Box space, Gymnasium's name; bounds may be infinite).
 * A Box class steps with step_box; the bounds say what the environment
 * expects, but actions outside them reach it unchanged (Gymnasium's MuJoCo
 * tasks charge a control cost on the raw action): mapping a policy's
 * output into the bounds (clipping, squashing) is the policy's business. */
typedef enum seed_action_space {
	SEED_ACTIONS_DISCRETE = 0,
	SEED_ACTIONS_BOX,
} seed_action_space;

typedef struct seed_env_spec {
	seed_dtype obs_dtype; /* SEED_DTYPE_F32 or SEED_DTYPE_U8 */
	int obs_rank;
	int64_t obs_shape[SEED_ENV_MAX_OBS_RANK];
	seed_action_space action_space;
	int num_actions;                            /* discrete: actions 0 .. num_actions-1; Box: the
	                                               dimension A, 1 .. SEED_ENV_MAX_ACTION_DIM */
	float action_low[SEED_ENV_MAX_ACTION_DIM];  /* Box only: [0, A) used */
	float action_high[SEED_ENV_MAX_ACTION_DIM]; /* low <= high, no NaN */
	int max_steps;                              /* truncation after this many steps; 0: none */
	/* The size render_rgb draws best, in pixels (1 .. SEED_ENV_MAX_RGB);
	 * 0 x 0 when the class draws no pictures (the vector sets that). */
	int rgb_width, rgb_height;
} seed_env_spec;

#define SEED_ENV_MAX_RGB 4096 /* largest picture side, in pixels */

/* Elements and bytes of one observation. */
int64_t seed_env_spec_obs_numel(const seed_env_spec *s);
size_t seed_env_spec_obs_bytes(const seed_env_spec *s);

/* jansson's JSON value (include <jansson.h> to look inside). */
typedef struct json_t json_t;

/* What step_box returns when the simulation went unstable (a non-finite
 * state, or the physics engine gave up on it): the vector then ends the
 * episode as truncated (below, seed_envs_step_box). */
#define SEED_ENV_UNSTABLE 1

/* One kind of environment.  configure, reset, and step (Discrete) or
 * step_box (Box) are required; the other callbacks may be NULL.
 * The vector calls them from one thread at a time per instance; config is
 * shared read-only by all instances of a vector. */
typedef struct seed_env_class {
	const char *name;    /* registry key: lower case, no spaces */
	const char *summary; /* one line for listings */
	/* Parse options (a JSON object, never NULL; unknown keys are an error),
	 * allocate *config (may stay NULL), fill spec.  spec->max_steps holds
	 * the class default on return; the vector applies a "max_steps" option
	 * on top, so classes must accept and ignore that key (the helpers
	 * below do).  Errors: -SEED_EOPTION with a message naming the
	 * option; nothing to free then. */
	int (*configure)(const json_t *options, void **config, seed_env_spec *spec, seed_err *err);
	/* Free what configure allocated (config may be NULL); may itself be
	 * NULL when configure never allocates. */
	void (*free_config)(void *config);
	size_t state_size; /* bytes of per-instance state, zeroed once when the vector is made;
	                      reset must set what an episode needs and may keep the rest
	                      (e.g. the last action, for sticky actions) */
	/* Start an episode; write the first observation to obs.  Randomness
	 * only from rng (the instance's own generator). */
	void (*reset)(const void *config, void *state, seed_rng *rng, void *obs);
	/* Apply action (0 <= action < num_actions, checked by the vector);
	 * write the next observation, the reward, and whether the episode
	 * ended (a real end, not a time limit).  The vector resets an
	 * instance as soon as it reports terminated, so step never sees an
	 * ended episode through the vector.  Must not allocate: it runs
	 * millions of times a second. */
	void (*step)(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
	             bool *terminated);
	/* Draw the state as text (lines ending in '\n') into buf; return the
	 * length it needed, like snprintf.  May be NULL (no rendering). */
	int (*render_text)(const void *config, const void *state, char *buf, size_t len);
	/* Draw the state as a picture: rgb is [height][width][3] bytes (red,
	 * green, blue; row 0 at the top), every byte to be written.  Any size
	 * from 1 x 1 to SEED_ENV_MAX_RGB on a side must be drawn (scaled; the
	 * spec's rgb_width x rgb_height is the natural size, which configure
	 * must fill in when this is set).  Return 0, or a negative code.  May
	 * be NULL (no pictures); must not print.  seed_env_grid_rgb draws grid
	 * observations (MinAtar-style planes) in one call.  state may be the
	 * vector's byte copy of the state an episode ended in, taken before
	 * the next reset: the picture must come from the state's own bytes,
	 * not from memory it points to, which that reset reuses. */
	int (*render_rgb)(const void *config, const void *state, uint8_t *rgb, int width, int height);
	/* For a Box space (spec->action_space SEED_ACTIONS_BOX) instead of
	 * step: apply action (A finite floats, checked by the vector; they may
	 * lie outside the bounds), otherwise as step.  Returns 0, or
	 * SEED_ENV_UNSTABLE when the simulation became unstable: what it wrote
	 * is then ignored and the vector truncates the episode.  Must not
	 * allocate. */
	int (*step_box)(const void *config, void *state, seed_rng *rng, const float *action, void *obs,
	                float *reward, bool *terminated);
	/* Release what an instance allocated for itself (a physics engine's
	 * data, say: reset may allocate on an instance's first episode, never
	 * step); called for every instance when the vector is freed, also for
	 * those never reset (their state is then all zero).  May be NULL. */
	void (*free_state)(const void *config, void *state);
} seed_env_class;

/* Add a class to the registry (not copied: must outlive its use).
 * -EEXIST if the name is taken (built-ins included); -EINVAL if cls has no
 * name or lacks configure, reset or step.  Not thread-safe: register before
 * other threads use the registry. */
int seed_env_register(const seed_env_class *cls);
/* The class called name, or NULL. */
const seed_env_class *seed_env_find(const char *name);
/* The i-th registered class (built-ins first, then seed_env_register's in
 * order), or NULL past the end (and for i < 0). */
const seed_env_class *seed_env_class_at(int i);

/* The class an environment name means, as every program resolves --env:
 *   NAME          a registered class (built-ins first); else, when NAME has
 *                 no '/', the class NAME of the plugin NAME.so in the first
 *                 directory of SEED_ENV_PATH (colon-separated; empty entries
 *                 are skipped) that has such a file;
 *   PATH.so:NAME  the class NAME of the plugin in the file PATH.so;
 *   PATH.so       that plugin's class, when it exports exactly one.
 * A relative PATH is relative to the working directory, never searched for.
 * Plugins load with seed_env_plugin_load (seed/env_plugin.h) on first use.
 * Errors, with a message: -ENOENT (no such class or file: the message says
 * where it looked), -ELIBBAD (a plugin that does not load or fails its
 * checks: the message names the file and the problem).  Thread-safe. */
int seed_env_lookup(const char *name, const seed_env_class **out, seed_err *err);

/* Helpers for configure callbacks.  `env` is the class name, used in
 * messages ("cartpole: option \"x\": ...").
 *
 * seed_env_options_check: -SEED_EOPTION if options holds a key that is
 * neither in known (a NULL-terminated list) nor "max_steps"; the message
 * names the key and lists the known ones.
 *
 * seed_env_option_int/_bool: if options has key, check its type (an
 * integer; true or false) and range [min, max], and store it in
 * *out; if it does not, leave *out alone (the caller's default) and return
 * 0.  -SEED_EOPTION with a message naming the key if the value is wrong. */
int seed_env_options_check(const json_t *options, const char *env, const char *const *known, seed_err *err);
int seed_env_option_int(const json_t *options, const char *env, const char *key, long long min, long long max,
                        long long *out, seed_err *err);
int seed_env_option_bool(const json_t *options, const char *env, const char *key, bool *out, seed_err *err);
/* seed_env_option_double: like seed_env_option_int for a finite number
 * (an integer is fine) in [min, max]. */
int seed_env_option_double(const json_t *options, const char *env, const char *key, double min, double max,
                           double *out, seed_err *err);
/* seed_env_option_doubles: if options has key, check that it is an array
 * of exactly n finite numbers and store them in out[0..n); if it does not,
 * leave out alone and return 0.  -SEED_EOPTION naming the key (and the
 * element) otherwise.  For options such as an initial state. */
int seed_env_option_doubles(const json_t *options, const char *env, const char *key, int n, double *out,
                            seed_err *err);

typedef struct seed_envs seed_envs;

/* K instances of the class called name (any name seed_env_lookup takes:
 * built-in, PATH.so:NAME, or found in SEED_ENV_PATH), seeded from seed.  options is a JSON
 * object as text (NULL or "" means {}); besides the class's own options it
 * may hold "max_steps" (time limit, an integer >= 0; 0 disables it; the
 * class's default otherwise).  Instance i draws from seed_rng stream i of
 * seed.  All memory is allocated here, none while stepping.  Errors:
 * -ENOENT (no such environment), -ELIBBAD (a plugin that does not load or
 * fails its checks), -SEED_EOPTION (bad options: not JSON, not an object,
 * unknown key, bad value), -EINVAL (num < 1, or the class filled in an
 * impossible spec: for a plugin's class the message names its file); err
 * says which. */
int seed_envs_new(seed_envs **out, const char *name, const char *options, int num, uint64_t seed,
                  seed_err *err);
/* Frees e (NULL is fine) and sets *e to NULL. */
void seed_envs_free(seed_envs **e);

/* The spec with the time limit in force (the "max_steps" option applied). */
const seed_env_spec *seed_envs_spec(const seed_envs *e);
/* The spec of the class called name with options (as seed_envs_new takes
 * them) into *spec, from one instance made and freed: what a learner
 * probes before it sees a frame.  A Gymnasium environment ("gym:ID"),
 * which lives in seed-gym(1), is asked of seed-gym: seed_env_gym_spec
 * (seed/env_gym.h).
 * Errors: those of seed_envs_new or seed_env_gym_spec, *spec then
 * untouched. */
int seed_env_probe(const char *name, const char *options, seed_env_spec *spec, seed_err *err);
int seed_envs_num(const seed_envs *e);
const seed_env_class *seed_envs_class(const seed_envs *e);

/* Reset every env and write the K first observations to obs
 * ([K][obs_bytes]).  Episode counters restart; the random generators go on
 * from where they were.  Must be called once before the first step. */
void seed_envs_reset(seed_envs *e, void *obs);

/* Start a new episode of env i at once, abandoning the one under way (no
 * end is reported: the next step of env i is its new episode's first):
 * writes its first observation to obs ([obs_bytes]) and zeroes its
 * episode counters.  What an actor does when the server asks it to
 * (seed-frames(7), an action frame's reset).  -EINVAL: no env i, or the
 * vector was never reset. */
int seed_envs_restart(seed_envs *e, int i, void *obs);

/* seed_envs_restart from a seed: env i's random generator starts again
 * from seed first (seed_rng_init(seed, 0)), so the new episode (its start
 * and every random draw of the environment in it) is the same whichever
 * env of whichever vector plays it with the same actions: an action frame's
 * reset_seed (seed-frames(7)), for a population's common episodes; what a
 * class keeps across episodes by design stays (MinAtar's last action, which
 * its sticky actions may repeat at the first step).  The generator goes on
 * from there afterwards.  -EINVAL as seed_envs_restart. */
int seed_envs_restart_seeded(seed_envs *e, int i, uint64_t seed, void *obs);

/* Step envs first .. first+count-1 with actions[0..count).  Outputs are
 * indexed from 0 (row i is env first+i): obs [count][obs], reward,
 * terminated, truncated (0/1), and, where not NULL, ep_return and ep_length:
 * the episode's return and length so far, including this step.
 * An env whose episode ended (terminated or truncated) is reset: its obs row
 * holds the first observation of the next episode, its ep_* rows the totals
 * of the episode that ended, and, where final_obs is not NULL, its final_obs
 * row the last observation of the ended episode (other rows untouched).
 * Returns -EINVAL (bad range, action out of range, or never reset; nothing
 * is stepped).  Allocates nothing. */
int seed_envs_step(seed_envs *e, int first, int count, const int32_t *actions, void *obs, float *reward,
                   uint8_t *terminated, uint8_t *truncated, void *final_obs, float *ep_return,
                   int32_t *ep_length);

/* seed_envs_step for a Box space: actions is [count][A] floats (A the
 * spec's num_actions), every one finite.  Besides seed_envs_step's
 * outputs: a step the class reports unstable (SEED_ENV_UNSTABLE), or that
 * leaves a non-finite reward or f32 observation, ends the episode as
 * truncated with reward 0, its final_obs row the last observation of the
 * episode that was finite (the one before that step), and counts one
 * unstable step (seed_envs_unstable): nothing non-finite leaves the
 * vector.  -EINVAL (nothing stepped): not a Box space, a non-finite
 * action, or as seed_envs_step.  seed_envs_step on a Box space is
 * -EINVAL too.  Allocates nothing. */
int seed_envs_step_box(seed_envs *e, int first, int count, const float *actions, void *obs, float *reward,
                       uint8_t *terminated, uint8_t *truncated, void *final_obs, float *ep_return,
                       int32_t *ep_length);
/* Steps that seed_envs_step_box truncated as unstable since the vector was
 * made. */
int64_t seed_envs_unstable(const seed_envs *e);

/* Draw env i as text; returns the length needed (like snprintf) or -EINVAL
 * (no env i), -ENOTSUP (the class cannot render). */
int seed_envs_render_text(const seed_envs *e, int i, char *buf, size_t len);

/* Draw env i as a picture of width x height pixels into rgb
 * ([height][width][3] bytes, row 0 at the top).  The spec's rgb_width x
 * rgb_height is the natural size; other sizes are scaled by the class.
 * 0, or -EINVAL (no env i, a side outside 1 .. SEED_ENV_MAX_RGB), -ENOTSUP
 * (the class draws no pictures), or the class's own error; rgb is then
 * unspecified. */
int seed_envs_render_rgb(const seed_envs *e, int i, uint8_t *rgb, int width, int height);

/* Like seed_envs_render_rgb, for the last state of the episode of env i
 * that ended most recently (the state whose observation went to final_obs),
 * since the vector has already reset env i when step returns.  -ENOENT if
 * no episode of env i has ended since the last seed_envs_reset. */
int seed_envs_render_rgb_final(const seed_envs *e, int i, uint8_t *rgb, int width, int height);

/* Why the last render_rgb called on this thread failed, in a sentence, or
 * NULL.  A class whose pictures depend on something a code cannot name (a
 * library this build lacks, a rendering context the machine cannot make)
 * leaves the sentence with seed_env_rgb_set_why before it returns its
 * error; seed_envs_render_rgb and seed_envs_render_rgb_final clear it
 * before they call the class, so it never outlives the next call. */
const char *seed_env_rgb_why(void);
void seed_env_rgb_set_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Draw a grid observation obs, u8 [rows][cols][channels] of 0/1 planes (any
 * non-zero byte is set), into rgb [height][width][3]: a cell shows the
 * colour of the highest channel set in it (later channels on top, as
 * MinAtar's display), black where none is.  colors is [channels][3], or
 * NULL for seed_env_grid_palette's colours.  Pixel (x, y) shows cell
 * (y * rows / height, x * cols / width), so any size works and multiples of
 * the grid give equal cells.  -EINVAL for a dimension < 1, channels > 256
 * or a side above SEED_ENV_MAX_RGB.  A class whose observation is such a
 * grid renders with its observation function and one call of this. */
int seed_env_grid_rgb(const uint8_t *obs, int rows, int cols, int channels, const uint8_t (*colors)[3],
                      uint8_t *rgb, int width, int height);

/* Scale a picture src [sh][sw][3] to dst [dh][dw][3] (red, green, blue;
 * row 0 at the top), for pictures that come at one size only (a Gymnasium
 * environment's).  Each axis on its own: where dst is at least as large,
 * pixel x shows source pixel x * sw / dw (nearest, so equal sizes copy and
 * multiples repeat pixels); where it is smaller, pixel x is the mean of the
 * source pixels floor(x * sw / dw) .. ceil((x + 1) * sw / dw) - 1, so that
 * thin lines fade rather than vanish.  Means are rounded half up.  -EINVAL
 * for a side outside 1 .. SEED_ENV_MAX_RGB; allocates nothing. */
int seed_env_rgb_scale(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh);

/* MinAtar's colours for a grid of n channels (its GUI's: seaborn's
 * "cubehelix" palette of n colours, i.e. matplotlib's cubehelix colour map
 * at (c + 1) / (n + 1) for channel c, as 8-bit values the way matplotlib
 * converts them).  Writes colors[0..n); -EINVAL unless 1 <= n <= 256. */
int seed_env_grid_palette(int n, uint8_t (*colors)[3]);

#ifdef __cplusplus
}
#endif
#endif
