/* envs/builtin.c: the table of built-in environment classes.
 *
 * The registry (lib/env/env.c) lists these first, in this order, before any
 * class added with seed_env_register.  One line per class; MuJoCo's tasks
 * only where configure found MuJoCo (HAVE_MUJOCO).
 */
#include "config.h"

#include "builtin.h"

const seed_env_class *const seed_env_builtins[] = {
    &seed_env_cartpole,
    &seed_env_catch,
    &seed_env_minatar_breakout,
    &seed_env_minatar_asterix,
    &seed_env_minatar_freeway,
    &seed_env_minatar_seaquest,
    &seed_env_minatar_space_invaders,
    &seed_env_pendulum,
#ifdef HAVE_MUJOCO
    &seed_env_halfcheetah,
    &seed_env_hopper,
    &seed_env_walker2d,
    &seed_env_ant,
    &seed_env_humanoid,
#endif
    NULL,
};
