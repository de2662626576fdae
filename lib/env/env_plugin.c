/* env_plugin.c: environment classes from shared libraries, and the one
 * function that turns an environment name into a class (seed_env_lookup).
 *
 * A plugin is dlopen()ed with RTLD_NOW (an undefined symbol fails the load
 * itself, with the dynamic loader's message, instead of killing the process
 * at the first call) and RTLD_LOCAL (plugins do not see each other's
 * symbols); its table seed_env_plugin_table is checked before any of its
 * code is called, and a plugin that fails is dlclose()d.  Loaded plugins are
 * kept in a list for the life of the process, keyed by their real path, and
 * never unloaded: vectors hold pointers to their classes.  One mutex guards
 * the list; the list only grows.
 */
#include "seed/env_plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "seed/buf.h"

/* A plugin exporting more classes than this is taken as a table without
 * its terminating NULL. */
#define MAX_CLASSES 4096

typedef struct loaded {
	char *path; /* realpath() of the file */
	void *handle;
	const seed_env_plugin *table;
} loaded;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static loaded *plugins; /* [nplugins], guarded by lock */
static int nplugins;
static size_t cap_plugins;

/* Class names: what a registry key may hold (lower case, no spaces, no ':'
 * or '/', which name files). */
static bool good_name(const char *s)
{
	if (!s[0])
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		      *s == '.'))
			return false;
	return true;
}

/* "a, b, c" of the plugin's class names, cut to fit. */
static void class_list(const seed_env_plugin *t, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; t->classes[i] && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", t->classes[i]->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* The checks of seed/env_plugin.h, on a table not yet trusted. */
static int check_table(const char *path, const seed_env_plugin *t, seed_err *err)
{
	if (t->abi_version != SEED_ENV_ABI_VERSION)
		return seed_err_set(err, -ELIBBAD,
		                    "%s: built for Seed's environment plugin ABI version %u, but this Seed's "
		                    "is %d: rebuild the plugin against this Seed's headers",
		                    path, (unsigned)t->abi_version, SEED_ENV_ABI_VERSION);
	if (t->class_size != sizeof(seed_env_class))
		return seed_err_set(err, -ELIBBAD,
		                    "%s: its seed_env_class is %u bytes, this Seed's is %zu (ABI version %d "
		                    "both): rebuild the plugin against this Seed's headers",
		                    path, (unsigned)t->class_size, sizeof(seed_env_class),
		                    SEED_ENV_ABI_VERSION);
	if (!t->classes || !t->classes[0])
		return seed_err_set(err, -ELIBBAD, "%s: its table lists no environment classes", path);
	int n = 0;
	for (; t->classes[n]; n++) {
		if (n == MAX_CLASSES)
			return seed_err_set(
			    err, -ELIBBAD,
			    "%s: its class list has more than %d entries (no NULL at the end?)", path,
			    MAX_CLASSES);
		const seed_env_class *c = t->classes[n];
		if (!c->name)
			return seed_err_set(err, -ELIBBAD, "%s: class %d has no name", path, n);
		if (!good_name(c->name))
			return seed_err_set(
			    err, -ELIBBAD,
			    "%s: class %d: bad name \"%.64s\" (lower case letters, digits, '_', "
			    "'-' and '.' only, at least one)",
			    path, n, c->name);
		const char *missing = !c->configure              ? "configure"
		                      : !c->reset                ? "reset"
		                      : !c->step && !c->step_box ? "step"
		                                                 : NULL;
		if (missing)
			return seed_err_set(
			    err, -ELIBBAD,
			    "%s: class \"%s\" has no %s function (configure, reset and step or "
			    "step_box are required)",
			    path, c->name, missing);
		if (c->state_size > SEED_ENV_PLUGIN_MAX_STATE)
			return seed_err_set(
			    err, -ELIBBAD,
			    "%s: class \"%s\" asks for %zu bytes of state per environment, more "
			    "than the %u allowed",
			    path, c->name, c->state_size, SEED_ENV_PLUGIN_MAX_STATE);
		for (int j = 0; j < n; j++)
			if (strcmp(t->classes[j]->name, c->name) == 0)
				return seed_err_set(err, -ELIBBAD, "%s: two classes are called \"%s\"", path,
				                    c->name);
	}
	return 0;
}

static int load_locked(const char *path, const seed_env_plugin **out, seed_err *err)
{
	char real[PATH_MAX];
	struct stat st;
	if (stat(path, &st) < 0 || !realpath(path, real))
		return seed_err_set(err, errno == ENOENT ? -ENOENT : -ELIBBAD, "%s: %s", path,
		                    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return seed_err_set(err, -ELIBBAD, "%s: not a regular file", path);
	for (int i = 0; i < nplugins; i++)
		if (strcmp(plugins[i].path, real) == 0) {
			*out = plugins[i].table;
			return 0;
		}

	dlerror();
	void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		return seed_err_set(err, -ELIBBAD, "%s: cannot load the plugin: %s", path,
		                    why ? why : "unknown error");
	}
	dlerror();
	const seed_env_plugin *t = dlsym(h, SEED_ENV_PLUGIN_SYMBOL);
	if (!t) {
		dlclose(h);
		return seed_err_set(err, -ELIBBAD,
		                    "%s: not a Seed environment plugin: it exports no %s (define it with "
		                    "SEED_ENV_PLUGIN, <seed/env_plugin.h>)",
		                    path, SEED_ENV_PLUGIN_SYMBOL);
	}
	int rc = check_table(path, t, err);
	if (rc < 0) {
		dlclose(h);
		return rc;
	}
	plugins = seed_xgrow(plugins, &cap_plugins, (size_t)nplugins + 1, sizeof *plugins);
	plugins[nplugins].path = seed_xmalloc(strlen(real) + 1);
	strcpy(plugins[nplugins].path, real);
	plugins[nplugins].handle = h;
	plugins[nplugins].table = t;
	nplugins++;
	*out = t;
	return 0;
}

int seed_env_plugin_load(const char *path, const seed_env_plugin **out, seed_err *err)
{
	if (!path || !path[0])
		return seed_err_set(err, -ENOENT, "no plugin file named (an empty path)");
	pthread_mutex_lock(&lock);
	int rc = load_locked(path, out, err);
	pthread_mutex_unlock(&lock);
	return rc;
}

const char *seed_env_class_file(const seed_env_class *cls)
{
	const char *file = NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nplugins && !file; i++)
		for (int j = 0; plugins[i].table->classes[j]; j++)
			if (plugins[i].table->classes[j] == cls) {
				file = plugins[i].path;
				break;
			}
	pthread_mutex_unlock(&lock);
	return file;
}

/* The class called name (NULL: the only one) of the plugin in path. */
static int from_plugin(const char *path, const char *name, const seed_env_class **out, seed_err *err)
{
	const seed_env_plugin *t;
	int rc = seed_env_plugin_load(path, &t, err);
	if (rc < 0)
		return rc;
	char list[256];
	class_list(t, list, sizeof list);
	if (!name) {
		if (t->classes[1])
			return seed_err_set(err, -ENOENT,
			                    "%s: exports several environments (%s): name one, as %s:NAME",
			                    path, list, path);
		*out = t->classes[0];
		return 0;
	}
	for (int i = 0; t->classes[i]; i++)
		if (strcmp(t->classes[i]->name, name) == 0) {
			*out = t->classes[i];
			return 0;
		}
	return seed_err_set(err, -ENOENT, "%s: no environment called \"%s\" in this plugin (it has: %s)",
	                    path, name, list);
}

static bool ends_with_so(const char *s, size_t n)
{
	return n > 3 && memcmp(s + n - 3, ".so", 3) == 0;
}

int seed_env_lookup(const char *name, const seed_env_class **out, seed_err *err)
{
	if (!name || !name[0])
		return seed_err_set(err, -ENOENT, "no environment named (an empty name)");
	size_t n = strlen(name);

	/* PATH.so and PATH.so:NAME */
	const char *colon = strrchr(name, ':');
	if (colon && ends_with_so(name, (size_t)(colon - name))) {
		size_t plen = (size_t)(colon - name);
		char *path = seed_xmalloc(plen + 1);
		memcpy(path, name, plen);
		path[plen] = '\0';
		int rc = from_plugin(path, colon[1] ? colon + 1 : NULL, out, err);
		free(path);
		return rc;
	}
	if (ends_with_so(name, n))
		return from_plugin(name, NULL, out, err);

	const seed_env_class *c = seed_env_find(name);
	if (c) {
		*out = c;
		return 0;
	}

	/* NAME.so in the directories of SEED_ENV_PATH. */
	const char *dirs = getenv("SEED_ENV_PATH");
	if (strchr(name, '/') || strchr(name, ':'))
		return seed_err_set(
		    err, -ENOENT, "no environment called \"%s\" (a plugin is named PATH.so or PATH.so:NAME)",
		    name);
	if (!dirs || !dirs[0])
		return seed_err_set(
		    err, -ENOENT,
		    "no environment called \"%s\": not built in, and SEED_ENV_PATH (directories "
		    "of plugins) is not set",
		    name);
	size_t dlen = strlen(dirs);
	char *file = seed_xmalloc(dlen + n + 5);
	for (const char *p = dirs; *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			memcpy(file, p, len);
			sprintf(file + len, "/%s.so", name);
			struct stat st;
			if (stat(file, &st) == 0) {
				int rc = from_plugin(file, name, out, err);
				free(file);
				return rc;
			}
		}
		p += len;
		if (*p == ':')
			p++;
	}
	free(file);
	return seed_err_set(err, -ENOENT,
	                    "no environment called \"%s\": not built in, and no %s.so in SEED_ENV_PATH=%s",
	                    name, name, dirs);
}
