/* cmd/gymenvs.h: a vector of Gymnasium environments for seed-eval, played
 * through seed-gym(1).
 *
 * Seed's own environments are a seed_envs; a gym:ID environment lives in
 * Python, so seed-eval runs seed-gym in its offline mode as a child,
 *
 *   seed-gym --env ID [--env-options JSON] --envs K --seed S
 *            --max-episode-steps N --quiet --actions - --out - [--rgb]
 *
 * (the program named by $SEED_GYM, else seed-gym on PATH, as seed-learn
 * finds it), writes each step's K actions to its stdin as one line and
 * reads the step frame it answers with from its stdout (seed-frames(7)).
 * The first frame, the envs just reset, gives the spec: the observations'
 * dtype and shape and the number of actions.  With rgb, seed-gym adds env
 * 0's pictures to the frames (rgb, and final_rgb where its episode ended;
 * u8 [H, W, 3]), which gym_envs_draw serves to a render_source, scaled to
 * the size asked with seed_env_rgb_scale.
 *
 * seed-gym's own messages (a bad id, an env that cannot draw RGB) go to
 * the same stderr; the errors here then say that seed-gym stopped and with
 * which status.  A gym_envs belongs to one thread.
 */
#ifndef SEED_CMD_GYMENVS_H
#define SEED_CMD_GYMENVS_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/env.h"

typedef struct gym_envs gym_envs;

/* Start seed-gym for env "gym:ID" with K envs seeded from seed, options a
 * JSON object of gymnasium.make's keyword arguments (NULL: none), episodes
 * cut at max_episode_steps steps (0: never), and wait for its first
 * frame.  With rgb, env 0's pictures come with every frame
 * and the spec's rgb_width x rgb_height is their size.  Errors: -ENOENT
 * (seed-gym could not be run), -SEED_EOPTION (it stopped before its first
 * frame: a bad id or option, an env it cannot take or draw; its message is
 * on stderr), -SEED_EFRAME (its first frame is not what was asked for). */
int gym_envs_new(gym_envs **out, const char *env, const char *options, int k, uint64_t seed, bool rgb,
                 int max_episode_steps, seed_err *err);

/* The spec read from the first frame (max_steps 0: not known here). */
const seed_env_spec *gym_envs_spec(const gym_envs *g);

/* The observations of the first frame ([K][obs bytes]). */
void gym_envs_reset(gym_envs *g, void *obs);

/* Step every env with actions[0..K) (each in [0, num_actions)) and take
 * its outputs as seed_envs_step gives them (envs that ended are reset in
 * the same step; ep_return and ep_length the totals of the episodes that
 * ended); capped[i] is 1 where seed-gym's step cap cut env i's episode (it
 * is then truncated), else 0.  Errors: -EINVAL (an action out of range; nothing is sent),
 * -EPIPE or -SEED_EOPTION (seed-gym stopped; its status is said), -EINTR
 * (a signal: cli_stop), -SEED_EFRAME (a frame that does not fit). */
int gym_envs_step(gym_envs *g, const int32_t *actions, void *obs, float *reward, uint8_t *terminated,
                  uint8_t *truncated, uint8_t *capped, float *ep_return, int32_t *ep_length, seed_err *err);

/* A render_source's draw for env 0 (ctx: the gym_envs): the picture of the
 * last frame, or with final the picture its last episode ended in, scaled
 * to width x height.  -ENOTSUP without rgb, -ENOENT for a final picture
 * before any episode ended. */
int gym_envs_draw(void *ctx, bool final, uint8_t *rgb, int width, int height);

/* Close seed-gym's stdin, which ends it, and wait for it: 0, or
 * -SEED_EOPTION when it exited with a status other than 0.  Frees *g and
 * sets it to NULL whatever happened. */
int gym_envs_close(gym_envs **g, seed_err *err);

/* Free without waiting long: seed-gym is sent SIGTERM.  NULL is fine. */
void gym_envs_free(gym_envs **g);

#endif
