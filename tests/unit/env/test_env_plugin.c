/* tests/unit/env/test_env_plugin.c: environment plugins (lib/env/env_plugin.c).
 *
 * The plugins are built from tests/unit/env/plugin_probe.c by Makefile.am into
 * PROBE_DIR: probe.so (classes "probe" and "probe-faulty") and one shared
 * object per fault the loader must refuse.  Each faulty plugin must give its
 * error code and a message naming its file and the problem, and the process
 * must go on: after every refusal a good plugin still loads and steps.  The
 * probe class's every step is known in advance (obs = [t, action, -1],
 * reward = action, terminated at t = 5).
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "seed/env.h"
#include "seed/env_plugin.h"
#include "tap.h"
#include "tmpdir.h"

static char probe_path[PATH_MAX];

static const char *so(const char *name)
{
	static char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s/%s.so", PROBE_DIR, name);
	return buf;
}

/* seed_env_lookup(name) must fail with code and a message holding both
 * needles (the second may be NULL). */
static void expect_lookup_error(const char *name, int code, const char *needle, const char *needle2)
{
	const seed_env_class *c = NULL;
	seed_err err = {{0}};
	int rc = seed_env_lookup(name, &c, &err);
	CHECK_MSG(rc == code, "%s: returned %d, not %d (%s)", name, rc, code, err.msg);
	CHECK_MSG(c == NULL, "%s: wrote a class", name);
	CHECK_MSG(strstr(err.msg, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err.msg, needle);
	if (needle2)
		CHECK_MSG(strstr(err.msg, needle2) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err.msg,
		          needle2);
}

/* The good plugin still works: the process goes on after a refusal. */
static void check_probe_steps(const char *name)
{
	seed_envs *e = NULL;
	seed_err err = {{0}};
	int rc = seed_envs_new(&e, name, NULL, 2, 7, &err);
	CHECK_MSG(rc == 0, "%s: %s", name, err.msg);
	if (rc)
		return;
	const seed_env_spec *s = seed_envs_spec(e);
	CHECK(s->obs_dtype == SEED_DTYPE_F32 && s->obs_rank == 1 && s->obs_shape[0] == 3);
	CHECK(s->num_actions == 4 && s->max_steps == 100);
	float obs[2][3], reward[2];
	uint8_t term[2], trunc[2];
	seed_envs_reset(e, obs);
	CHECK(obs[0][0] == 0 && obs[1][2] == 0);
	for (int t = 1; t <= 5; t++) {
		int32_t act[2] = {t % 4, 3};
		CHECK(seed_envs_step(e, 0, 2, act, obs, reward, term, trunc, NULL, NULL, NULL) == 0);
		CHECK(reward[0] == (float)(t % 4) && reward[1] == 3);
		CHECK(term[0] == (t == 5) && term[1] == (t == 5) && !trunc[0] && !trunc[1]);
		if (t < 5)
			CHECK(obs[0][0] == (float)t && obs[0][1] == (float)(t % 4) && obs[0][2] == -1);
		else /* reset in the same call: the next episode's first obs */
			CHECK(obs[0][0] == 0 && obs[0][1] == 0 && obs[0][2] == 0);
	}
	int32_t bad[1] = {4};
	CHECK(seed_envs_step(e, 0, 1, bad, obs, reward, term, trunc, NULL, NULL, NULL) == -EINVAL);
	seed_envs_free(&e);
}

static void t_builtin_first(void)
{
	const seed_env_class *c = NULL;
	seed_err err;
	CHECK(seed_env_lookup("cartpole", &c, &err) == 0);
	CHECK(c == seed_env_find("cartpole"));
	CHECK(seed_env_class_file(c) == NULL);
}

static void t_path_and_name(void)
{
	char name[PATH_MAX + 16];
	snprintf(name, sizeof name, "%s:probe", so("probe"));
	const seed_env_class *c = NULL;
	seed_err err = {{0}};
	CHECK_MSG(seed_env_lookup(name, &c, &err) == 0, "%s", err.msg);
	CHECK(c && strcmp(c->name, "probe") == 0);
	CHECK(c && seed_env_class_file(c) && strcmp(seed_env_class_file(c), probe_path) == 0);
	/* Not in the registry: a plugin's names never shadow or clash. */
	CHECK(seed_env_find("probe") == NULL);
	check_probe_steps(name);

	/* The same file by another path: loaded once, the same class. */
	char other[PATH_MAX + 32];
	snprintf(other, sizeof other, "%s/./probe.so:probe", PROBE_DIR);
	const seed_env_class *c2 = NULL;
	CHECK_MSG(seed_env_lookup(other, &c2, &err) == 0, "%s", err.msg);
	CHECK(c2 == c);
	const seed_env_plugin *t = NULL;
	CHECK(seed_env_plugin_load(so("probe"), &t, &err) == 0);
	CHECK(t && t->abi_version == SEED_ENV_ABI_VERSION && t->classes[0] == c && t->classes[2] == NULL);
}

static void t_path_errors(void)
{
	char name[PATH_MAX + 16];
	/* Two classes: PATH.so alone is ambiguous. */
	expect_lookup_error(so("probe"), -ENOENT, "probe, probe-faulty", "name one");
	snprintf(name, sizeof name, "%s:nope", so("probe"));
	expect_lookup_error(name, -ENOENT, "no environment called \"nope\"", "probe, probe-faulty");
	snprintf(name, sizeof name, "%s:probe", so("absent"));
	expect_lookup_error(name, -ENOENT, so("absent"), "No such file");
	expect_lookup_error("", -ENOENT, "empty", NULL);
	expect_lookup_error("no/such", -ENOENT, "\"no/such\"", "PATH.so:NAME");
}

static void t_search_path(void)
{
	const seed_env_class *c = NULL;
	seed_err err = {{0}};
	unsetenv("SEED_ENV_PATH");
	expect_lookup_error("probe", -ENOENT, "SEED_ENV_PATH", "not set");
	/* Empty entries and directories without the file are passed over. */
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "/nonexistent::%s", PROBE_DIR);
	setenv("SEED_ENV_PATH", path, 1);
	CHECK_MSG(seed_env_lookup("probe", &c, &err) == 0, "%s", err.msg);
	CHECK(c && strcmp(c->name, "probe") == 0 && seed_env_class_file(c) &&
	      strcmp(seed_env_class_file(c), probe_path) == 0);
	check_probe_steps("probe");
	/* NAME.so must exist: a class of another file is not searched for. */
	expect_lookup_error("probe-faulty", -ENOENT, "no probe-faulty.so in SEED_ENV_PATH=", PROBE_DIR);
	/* Built-ins come first, whatever the path holds. */
	CHECK(seed_env_lookup("cartpole", &c, &err) == 0 && c == seed_env_find("cartpole"));
	unsetenv("SEED_ENV_PATH");
}

/* Each faulty plugin: refused with its file and its problem named. */
static void t_faulty_plugins(void)
{
	static const struct {
		const char *file, *needle;
	} cases[] = {
	    {"probe_abi", "ABI version 999"},
	    {"probe_size", "rebuild the plugin"},
	    {"probe_notable", "exports no seed_env_plugin_table"},
	    {"probe_undefined", "probe_nowhere_defined"},
	    {"probe_nostep", "\"probe\" has no step function"},
	    {"probe_noclass", "lists no environment classes"},
	    {"probe_badname", "bad name \"Bad Name\""},
	    {"probe_twice", "two classes are called \"probe\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char name[PATH_MAX + 16];
		snprintf(name, sizeof name, "%s:probe", so(cases[i].file));
		expect_lookup_error(name, -ELIBBAD, so(cases[i].file), cases[i].needle);
		/* Through seed_envs_new, as the programs call it: the same. */
		seed_envs *e = NULL;
		seed_err err = {{0}};
		CHECK(seed_envs_new(&e, name, NULL, 1, 0, &err) == -ELIBBAD && e == NULL);
		CHECK_MSG(strstr(err.msg, cases[i].needle) != NULL, "%s", err.msg);
		const seed_env_plugin *t = NULL;
		CHECK(seed_env_plugin_load(so(cases[i].file), &t, &err) == -ELIBBAD && t == NULL);
	}
	char name[PATH_MAX + 16];
	snprintf(name, sizeof name, "%s:probe", so("probe"));
	check_probe_steps(name);
}

static void t_not_a_library(void)
{
	const char *dir = tmpdir_new();
	char file[PATH_MAX + 16];
	snprintf(file, sizeof file, "%s/text.so", dir);
	FILE *f = fopen(file, "w");
	fputs("not an ELF file\n", f);
	fclose(f);
	expect_lookup_error(file, -ELIBBAD, file, "cannot load the plugin");
	expect_lookup_error(dir, -ENOENT, "no environment called", NULL);
	char sub[PATH_MAX + 8];
	snprintf(sub, sizeof sub, "%s/d.so", dir);
	CHECK(mkdir(sub, 0700) == 0);
	expect_lookup_error(sub, -ELIBBAD, sub, "not a regular file");
	tmpdir_remove(dir);
}

/* A spec the class fills in badly: refused when the vector is made, the
 * plugin's file and the class named. */
static void t_bad_specs(void)
{
	static const struct {
		const char *fault, *needle;
		int code;
	} cases[] = {
	    {"shape", "bad observation shape: dimension 1 is 0", -EINVAL},
	    {"actions", "0 actions", -EINVAL},
	    {"rank", "observation rank 5", -EINVAL},
	    {"dtype", "dtype must be f32 or u8", -EINVAL},
	    {"silent", "configure failed (returned -22)", -EINVAL},
	    {"positive", "configure failed (returned 1)", -EINVAL},
	};
	char name[PATH_MAX + 32], who[PATH_MAX + 32];
	snprintf(name, sizeof name, "%s:probe-faulty", so("probe"));
	snprintf(who, sizeof who, "%s:probe-faulty: ", probe_path);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char opts[64];
		snprintf(opts, sizeof opts, "{\"fault\": \"%s\"}", cases[i].fault);
		seed_envs *e = NULL;
		seed_err err = {{0}};
		int rc = seed_envs_new(&e, name, opts, 3, 0, &err);
		CHECK_MSG(rc == cases[i].code && e == NULL, "%s: %d %s", cases[i].fault, rc, err.msg);
		CHECK_MSG(strstr(err.msg, who) == err.msg, "%s: \"%s\" does not start with \"%s\"",
		          cases[i].fault, err.msg, who);
		CHECK_MSG(strstr(err.msg, cases[i].needle) != NULL, "%s: \"%s\" lacks \"%s\"", cases[i].fault,
		          err.msg, cases[i].needle);
	}
	/* The class's own option errors pass through unchanged. */
	seed_envs *e = NULL;
	seed_err err = {{0}};
	CHECK(seed_envs_new(&e, name, "{\"faults\": 1}", 1, 0, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "probe-faulty: unknown option \"faults\"") != NULL, "%s", err.msg);
	/* And without a fault it is a good class. */
	CHECK(seed_envs_new(&e, name, "{\"fault\": \"none\"}", 1, 0, &err) == 0);
	seed_envs_free(&e);
}

static void t_option_doubles(void)
{
	seed_err err = {{0}};
	double out[2] = {7, 8};
	json_t *o = json_loads("{\"s\": [0.5, -2], \"n\": [1, \"x\"], \"l\": [1, 2, 3], \"v\": 3}", 0, NULL);
	CHECK(seed_env_option_doubles(o, "t", "absent", 2, out, &err) == 0 && out[0] == 7 && out[1] == 8);
	CHECK(seed_env_option_doubles(o, "t", "s", 2, out, &err) == 0 && out[0] == 0.5 && out[1] == -2);
	out[0] = 7;
	CHECK(seed_env_option_doubles(o, "t", "n", 2, out, &err) == -SEED_EOPTION && out[0] == 7);
	CHECK_MSG(strstr(err.msg, "t: option \"n\": element 1 is not a finite number") != NULL, "%s",
	          err.msg);
	CHECK(seed_env_option_doubles(o, "t", "l", 2, out, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "\"l\" must be an array of 2 numbers") != NULL, "%s", err.msg);
	CHECK(seed_env_option_doubles(o, "t", "v", 2, out, &err) == -SEED_EOPTION && out[0] == 7);
	json_decref(o);
}

int main(void)
{
	if (!realpath(so("probe"), probe_path)) {
		printf("Bail out! %s: %s (built by make check)\n", so("probe"), strerror(errno));
		return 99;
	}
	TAP_RUN(t_builtin_first);
	TAP_RUN(t_path_and_name);
	TAP_RUN(t_path_errors);
	TAP_RUN(t_search_path);
	TAP_RUN(t_faulty_plugins);
	TAP_RUN(t_not_a_library);
	TAP_RUN(t_bad_specs);
	TAP_RUN(t_option_doubles);
	return tap_done();
}
