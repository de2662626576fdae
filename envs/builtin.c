/* envs/builtin.c: the table of built-in environment classes.
 *
 * The registry (lib/env/env.c) lists these first, in this order, before any
 * class added with seed_env_register.  One line per class.
 */
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
    NULL,
};
