/* seed/env_plugin.h: environment classes from shared libraries (plugins).
 *
 * A plugin is a shared library that exports one table, seed_env_plugin_table,
 * naming the ABI version it was built for and its classes (seed/env.h's
 * seed_env_class, unchanged).  Write it with the SEED_ENV_PLUGIN macro:
 *
 *     #include <seed/env_plugin.h>
 *     static const seed_env_class mountaincar = {.name = "mountaincar", ...};
 *     SEED_ENV_PLUGIN(&mountaincar);
 *
 * and build it with `cc -shared -fPIC $(pkg-config --cflags --libs seed)`.
 * Every program then reaches its classes by name (seed_env_lookup in
 * seed/env.h): `PATH.so:NAME`, or a bare NAME found as NAME.so in one of the
 * directories of SEED_ENV_PATH.  man seed_env(3), "PLUGINS".
 *
 * The loader checks what it can before any class runs: the table's ABI
 * version and class size, that every class has a name (lower case letters,
 * digits, '_', '-', '.'), configure, reset and step, names unique in the
 * plugin, a state_size below SEED_ENV_PLUGIN_MAX_STATE; the spec a class
 * fills in is checked each time a vector is made (seed_envs_new).  A plugin
 * that fails a check is unloaded and the error names its file and the
 * problem.  A plugin that loads is never unloaded: its classes stay valid
 * until the process ends.
 *
 * Threads: loading takes a lock of its own, so seed_envs_new may be called
 * from several threads; the classes a plugin exports follow seed/env.h's
 * rules.
 */
#ifndef SEED_ENV_PLUGIN_H
#define SEED_ENV_PLUGIN_H

#include <stdint.h>

#include "seed/env.h"
#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the plugin interface: seed_env_plugin, seed_env_class,
 * seed_env_spec and the meaning of their fields.  It changes whenever one of
 * them changes in a way an already built plugin would misread; a plugin of
 * another version is refused, not run.  Version 2 added Box action spaces
 * (seed_env_spec's action_space and bounds, step_box) and free_state. */
#define SEED_ENV_ABI_VERSION 2

/* Largest state_size a plugin's class may ask for, per instance. */
#define SEED_ENV_PLUGIN_MAX_STATE (64u << 20)

/* What a plugin exports.  abi_version is the first field in every version,
 * so that the loader can always read it. */
typedef struct seed_env_plugin {
	uint32_t abi_version;                 /* SEED_ENV_ABI_VERSION of the headers it was built with */
	uint32_t class_size;                  /* sizeof(seed_env_class) of those headers */
	const seed_env_class *const *classes; /* NULL-terminated, at least one */
} seed_env_plugin;

/* The name of the exported table, for dlsym. */
#define SEED_ENV_PLUGIN_SYMBOL "seed_env_plugin_table"

/* Declared here so that a plugin defines it with this type. */
extern const seed_env_plugin seed_env_plugin_table;

#if defined(__GNUC__)
#define SEED_ENV_PLUGIN_VISIBLE __attribute__((visibility("default")))
#else
#define SEED_ENV_PLUGIN_VISIBLE
#endif

/* Defines the exported table, listing the plugin's classes (pointers to
 * seed_env_class objects of static duration), in a C file of the plugin.
 * C only (the list is a compound literal): a C++ plugin defines
 * seed_env_plugin_table itself, extern "C", with the same three fields. */
#define SEED_ENV_PLUGIN(...)                                                                                 \
	SEED_ENV_PLUGIN_VISIBLE const seed_env_plugin seed_env_plugin_table = {                              \
	    SEED_ENV_ABI_VERSION, (uint32_t)sizeof(seed_env_class),                                          \
	    (const seed_env_class *const[]){__VA_ARGS__, NULL}}

/* Load the plugin in the file path (once: a second call with the same file,
 * by any path, returns the same table) and check it (above).  *out is the
 * table, valid until the process ends.  Errors, with a message naming path:
 * -ENOENT (no such file), -ELIBBAD (the dynamic loader refused it, e.g. an
 * undefined symbol; it exports no seed_env_plugin_table; another ABI
 * version; a faulty class). */
int seed_env_plugin_load(const char *path, const seed_env_plugin **out, seed_err *err);

/* The file (an absolute path) of the plugin that cls came from, or NULL for
 * a class that no plugin loaded by seed_env_plugin_load exports (a built-in,
 * or one added with seed_env_register). */
const char *seed_env_class_file(const seed_env_class *cls);

#ifdef __cplusplus
}
#endif
#endif
