/* seed/env_gym.h: Gymnasium environments ("gym:ID"), reached through
 * seed-gym(1).
 *
 * A Gymnasium environment lives in Python, in seed-gym, the bridge actor;
 * no seed_envs can make one.  Seed reaches it one way, by running seed-gym
 * as a child (the program named by $SEED_GYM, else seed-gym on PATH; its
 * messages go to this process's standard error), in one of two modes:
 *
 *   --spec     seed_env_gym_spec (and so seed_env_probe): the environment's
 *              spec, printed as one JSON object, for a learner that probes
 *              before it sees a frame;
 *   offline    seed_gym_envs: a vector of K environments stepped from this
 *              process, for seed-eval(1):
 *
 *     seed-gym --env ID [--env-options JSON] --envs K --seed S
 *              --max-episode-steps N --quiet --actions - --out - [--rgb]
 *
 *   each step's K actions go to its stdin as one line and the step frame
 *   it answers with is read from its stdout (seed-frames(7)).  The first
 *   frame, the envs just reset, gives the spec: the observations' dtype and
 *   shape and the number of actions, and for a Box action space (a frame
 *   with action_low and action_high) its A bounds.  A Box's line holds
 *   the K * A numbers, env by env, each with %.9g (the same float32 read
 *   back).  With rgb, seed-gym adds env 0's
 *   pictures to the frames (rgb, and final_rgb where its episode ended;
 *   u8 [H, W, 3]), which seed_gym_envs_draw scales to the size asked.
 *
 * A seed-gym that cannot be run is -ENOENT in both modes, with the same
 * words.  A seed_gym_envs belongs to one thread; its process ignores
 * SIGPIPE (as the programs do), so that a seed-gym that stopped is an
 * error here rather than the end of the process.
 */
#ifndef SEED_ENV_GYM_H
#define SEED_ENV_GYM_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "seed/env.h"
#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The spec of Gymnasium environment name ("gym:ID") with options, as
 * `seed-gym --env ID --env-options JSON --spec` prints it: a Box action
 * space is "action_space": "box" with "action_low" and "action_high",
 * num_actions bounds each, a number or the string "inf" or "-inf" (JSON
 * has no infinity); without "action_space", Discrete.  Errors:
 * -SEED_EOPTION when seed-gym says the environment cannot work with Seed
 * (its status 2) or prints no valid spec, -ENOENT when seed-gym cannot be
 * run, -EIO when it fails otherwise; err names the command. */
int seed_env_gym_spec(const char *name, const char *options, seed_env_spec *spec, seed_err *err);

typedef struct seed_gym_envs seed_gym_envs;

/* Start seed-gym for env "gym:ID" with k envs seeded from seed, options a
 * JSON object of gymnasium.make's keyword arguments (NULL: none), episodes
 * cut at max_episode_steps steps (0: never), and wait for its first frame.
 * With rgb, env 0's pictures come with every frame and the spec's
 * rgb_width x rgb_height is their size.  Reads and writes give up with
 * -EINTR once *stop is non-zero (a signal flag; NULL: never).  Errors:
 * -ENOENT (seed-gym could not be run), -SEED_EOPTION (it stopped before its
 * first frame: a bad id or option, an env it cannot take or draw; its
 * message is on stderr), -SEED_EFRAME (its first frame is not what was
 * asked for), -EINTR, other -errno (a pipe or fork failed). */
int seed_gym_envs_new(seed_gym_envs **out, const char *env, const char *options, int k, uint64_t seed,
                      bool rgb, int max_episode_steps, volatile sig_atomic_t *stop, seed_err *err);

/* The spec read from the first frame (max_steps 0: not known here); a
 * frame with action_low and action_high makes it a Box of num_actions
 * (A) real numbers with those bounds. */
const seed_env_spec *seed_gym_envs_spec(const seed_gym_envs *g);

/* The observations of the first frame ([K][obs bytes]). */
void seed_gym_envs_reset(seed_gym_envs *g, void *obs);

/* Step every env with actions[0..K) (each in [0, num_actions)) and take
 * its outputs as seed_envs_step gives them (envs that ended are reset in
 * the same step; ep_return and ep_length the totals of the episodes that
 * ended); capped[i] is 1 where seed-gym's step cap cut env i's episode (it
 * is then truncated), else 0.  Errors: -EINVAL (an action out of range, or
 * a Box space; nothing is sent), -SEED_EOPTION (seed-gym stopped; its
 * status is said), -EINTR (*stop), -SEED_EFRAME (a frame that does not
 * fit, or whose action space is not the first frame's). */
int seed_gym_envs_step(seed_gym_envs *g, const int32_t *actions, void *obs, float *reward,
                       uint8_t *terminated, uint8_t *truncated, uint8_t *capped, float *ep_return,
                       int32_t *ep_length, seed_err *err);

/* seed_gym_envs_step for a Box space: actions is [K][A] floats (A the
 * spec's num_actions), every one finite; they reach the environments as
 * they are, not clipped to the bounds.  Outputs and errors as
 * seed_gym_envs_step's; -EINVAL (nothing is sent) for a non-finite action
 * or a Discrete space. */
int seed_gym_envs_step_box(seed_gym_envs *g, const float *actions, void *obs, float *reward,
                           uint8_t *terminated, uint8_t *truncated, uint8_t *capped, float *ep_return,
                           int32_t *ep_length, seed_err *err);

/* Env 0's picture (ctx: the seed_gym_envs) of the last frame, or with
 * final the picture its last episode ended in, scaled to width x height
 * (seed_env_rgb_scale) into rgb.  -ENOTSUP without rgb, -ENOENT for a
 * final picture before any episode ended.  The shape of a picture
 * source's draw, so a viewer can take it as it takes a seed_envs'. */
int seed_gym_envs_draw(void *ctx, bool final, uint8_t *rgb, int width, int height);

/* Close seed-gym's stdin, which ends it, and wait for it: 0, or
 * -SEED_EOPTION when it exited with a status other than 0.  Frees *g and
 * sets it to NULL whatever happened (NULL is fine). */
int seed_gym_envs_close(seed_gym_envs **g, seed_err *err);

/* Free without waiting long: seed-gym is sent SIGTERM.  NULL is fine. */
void seed_gym_envs_free(seed_gym_envs **g);

#ifdef __cplusplus
}
#endif
#endif
