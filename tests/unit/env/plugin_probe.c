/* tests/unit/env/plugin_probe.c: environment plugins for tests/unit/env/test_env_plugin.c,
 * one source built into several shared objects (Makefile.am), good and
 * faulty, chosen by a macro:
 *
 *   (none)           probe.so: classes "probe" (f32[3], 4 actions, the
 *                    observation counts steps, reward = action, terminates
 *                    after 5 steps) and "probe-faulty", whose option "fault"
 *                    makes configure fill in a bad spec or fail silently
 *   PROBE_BAD_ABI    an ABI version of 999
 *   PROBE_BAD_SIZE   a class size that is not this Seed's
 *   PROBE_NO_TABLE   no seed_env_plugin_table at all
 *   PROBE_UNDEFINED  calls a function that nothing defines (dlopen fails)
 *   PROBE_NO_STEP    a class without step
 *   PROBE_NO_CLASS   an empty class list
 *   PROBE_BAD_NAME   a class called "Bad Name"
 *   PROBE_TWICE      two classes called "probe"
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "seed/env_plugin.h"

typedef struct probe_state {
	int t;
} probe_state;

static void probe_spec(seed_env_spec *spec)
{
	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = 3;
	spec->num_actions = 4;
	spec->max_steps = 100;
}

static int probe_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	int rc = seed_env_options_check(options, "probe", NULL, err);
	if (rc < 0)
		return rc;
	probe_spec(spec);
	return 0;
}

#ifdef PROBE_UNDEFINED
void probe_nowhere_defined(void); /* in no library at all */
#endif

static void probe_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	probe_state *s = state;
	s->t = 0;
	float *o = obs;
	o[0] = o[1] = o[2] = 0;
#ifdef PROBE_UNDEFINED
	probe_nowhere_defined();
#endif
}

static void probe_step(const void *config, void *state, seed_rng *rng, int action, void *obs, float *reward,
                       bool *terminated)
{
	probe_state *s = state;
	s->t++;
	float *o = obs;
	o[0] = (float)s->t;
	o[1] = (float)action;
	o[2] = -1;
	*reward = (float)action;
	*terminated = s->t >= 5;
}

/* Faults a configure can commit, by the option "fault". */
static int faulty_configure(const json_t *options, void **config, seed_env_spec *spec, seed_err *err)
{
	static const char *const known[] = {"fault", NULL};
	int rc = seed_env_options_check(options, "probe-faulty", known, err);
	if (rc < 0)
		return rc;
	json_t *f = json_object_get(options, "fault");
	const char *fault = f && json_is_string(f) ? json_string_value(f) : "";
	probe_spec(spec);
	if (strcmp(fault, "shape") == 0) {
		spec->obs_rank = 2;
		spec->obs_shape[1] = 0;
	} else if (strcmp(fault, "actions") == 0) {
		spec->num_actions = 0;
	} else if (strcmp(fault, "rank") == 0) {
		spec->obs_rank = 5;
	} else if (strcmp(fault, "dtype") == 0) {
		spec->obs_dtype = SEED_DTYPE_I32;
	} else if (strcmp(fault, "silent") == 0) {
		return -EINVAL; /* and no message */
	} else if (strcmp(fault, "positive") == 0) {
		return 1; /* neither 0 nor an error code */
	}
	return 0;
}

/* Not every variant lists every class. */
#define UNUSED __attribute__((unused))

UNUSED static const seed_env_class probe = {
    .name = "probe",
    .summary = "a test class",
    .configure = probe_configure,
    .state_size = sizeof(probe_state),
    .reset = probe_reset,
#ifndef PROBE_NO_STEP
    .step = probe_step,
#endif
};

UNUSED static const seed_env_class probe_faulty = {
    .name = "probe-faulty",
    .summary = "a test class with a bad spec on request",
    .configure = faulty_configure,
    .state_size = sizeof(probe_state),
    .reset = probe_reset,
    .step = probe_step,
};

UNUSED static const seed_env_class bad_name = {
    .name = "Bad Name",
    .configure = probe_configure,
    .reset = probe_reset,
    .step = probe_step,
};

#if defined(PROBE_BAD_ABI)
SEED_ENV_PLUGIN_VISIBLE const seed_env_plugin seed_env_plugin_table = {
    999, (uint32_t)sizeof(seed_env_class), (const seed_env_class *const[]){&probe, NULL}};
#elif defined(PROBE_BAD_SIZE)
SEED_ENV_PLUGIN_VISIBLE const seed_env_plugin seed_env_plugin_table = {
    SEED_ENV_ABI_VERSION, (uint32_t)sizeof(seed_env_class) - 8,
    (const seed_env_class *const[]){&probe, NULL}};
#elif defined(PROBE_NO_TABLE)
/* Something else exported, so that the library is not empty. */
SEED_ENV_PLUGIN_VISIBLE const seed_env_class *const probe_classes[] = {&probe, &probe_faulty, NULL};
#elif defined(PROBE_NO_CLASS)
SEED_ENV_PLUGIN_VISIBLE const seed_env_plugin seed_env_plugin_table = {
    SEED_ENV_ABI_VERSION, (uint32_t)sizeof(seed_env_class), (const seed_env_class *const[]){NULL}};
#elif defined(PROBE_BAD_NAME)
SEED_ENV_PLUGIN(&probe, &bad_name);
#elif defined(PROBE_TWICE)
SEED_ENV_PLUGIN(&probe, &probe_faulty, &probe);
#else
SEED_ENV_PLUGIN(&probe, &probe_faulty);
#endif
