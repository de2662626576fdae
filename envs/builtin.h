/* envs/builtin.h: the environment classes compiled into libseed.
 *
 * One declaration per class, defined in envs/<name>.c; envs/builtin.c lists
 * them for the registry.  Adding a built-in environment: write its class in
 * a new file under envs/, declare it here, add one line to the table in builtin.c
 * and the source to Makefile.am.
 */
#ifndef SEED_ENVS_BUILTIN_H
#define SEED_ENVS_BUILTIN_H

#include "seed/env.h"

extern const seed_env_class seed_env_cartpole;
extern const seed_env_class seed_env_catch;
extern const seed_env_class seed_env_minatar_breakout;
extern const seed_env_class seed_env_minatar_asterix;
extern const seed_env_class seed_env_minatar_freeway;
extern const seed_env_class seed_env_minatar_seaquest;
extern const seed_env_class seed_env_minatar_space_invaders;
extern const seed_env_class seed_env_pendulum;
/* MuJoCo's locomotion tasks (envs/mujoco.c), listed when built with MuJoCo. */
extern const seed_env_class seed_env_halfcheetah;
extern const seed_env_class seed_env_hopper;
extern const seed_env_class seed_env_walker2d;
extern const seed_env_class seed_env_ant;
extern const seed_env_class seed_env_humanoid;

/* The built-in classes in listing order, ending with NULL. */
extern const seed_env_class *const seed_env_builtins[];

#endif
