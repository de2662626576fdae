/* config.c: loading, overriding and checking training configurations
 * (seed/config.h, seed-config(5)).
 *
 * One table, config_keys[] (config_keys.c), is the whole vocabulary: a row
 * per key gives its dotted name, type, place in struct seed_config,
 * default, range and one line of meaning.  The unknown-key check, parsing,
 * writing the resolved values back (what --print-config prints and
 * checkpoints record) and seed_config_describe (the key list
 * seed-config(5) is tested against) all read the rows; what a row cannot
 * say, the checks across keys, is check_across() here.  A parse reads
 * every row into the struct and writes back only when everything has been
 * checked, so a failed parse leaves the object as it was.
 */
#include "seed/config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_internal.h"
#include "seed/buf.h"

int seed_config_load(const char *name, const char *const *dirs, json_t **root, seed_err *err)
{
	bool is_path = strchr(name, '/') || strstr(name, ".json");
	char path[4096], tried[1024] = "";
	size_t at = 0;
	for (int i = 0; is_path ? i < 1 : dirs && dirs[i]; i++) {
		if (is_path)
			snprintf(path, sizeof path, "%s", name);
		else
			snprintf(path, sizeof path, "%s/%s.json", dirs[i], name);
		if (!is_path && at < sizeof tried)
			at += (size_t)snprintf(tried + at, sizeof tried - at, "%s%s", i ? ", " : "", dirs[i]);
		if (access(path, R_OK) != 0) {
			if (is_path)
				return seed_err_set(err, -errno, "%s: %s", path, strerror(errno));
			continue;
		}
		json_error_t je;
		json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			return seed_err_set(err, -SEED_EOPTION, "%s:%d:%d: %s", path, je.line, je.column,
			                    je.text);
		if (!json_is_object(j)) {
			json_decref(j);
			return seed_err_set(err, -SEED_EOPTION, "%s: a configuration is a JSON object", path);
		}
		*root = j;
		return 0;
	}
	return seed_err_set(err, -ENOENT, "no preset called '%s' (looked in %s)", name,
	                    *tried ? tried : "no directory");
}

int seed_config_resolve(const json_t *base, const char *name_or_path, const char *const *dirs,
                        const char *const *sets, int nsets, seed_config *c, seed_err *err)
{
	memset(c, 0, sizeof *c);
	json_t *root = NULL;
	int rc = 0;
	if (base && json_is_object(base))
		root = json_deep_copy(base);
	else if (base)
		rc = seed_err_set(err, -SEED_EOPTION, "the checkpoint's configuration is not a JSON object");
	else
		rc = seed_config_load(name_or_path, dirs, &root, err);
	for (int i = 0; rc == 0 && i < nsets; i++)
		if (seed_config_set(root, sets[i], err))
			rc = -EINVAL; /* a malformed assignment: the caller's usage error */
	if (rc == 0)
		rc = seed_config_parse(root, c, err);
	if (rc)
		json_decref(root);
	return rc;
}

char *seed_config_text(json_t *root, const char *key, seed_err *err)
{
	json_t *v = key ? seed_config_get(root, key) : root;
	if (!v) {
		seed_err_set(err, -ENOENT, "the configuration has no key '%s'", key);
		return NULL;
	}
	if (json_is_string(v))
		return strcpy(seed_xmalloc(strlen(json_string_value(v)) + 1), json_string_value(v));
	char *text = json_dumps(v, key ? JSON_COMPACT | JSON_ENCODE_ANY : JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		seed_oom(0);
	return text;
}

int seed_config_set(json_t *root, const char *assignment, seed_err *err)
{
	const char *eq = strchr(assignment, '=');
	if (!eq || eq == assignment)
		return seed_err_set(err, -SEED_EOPTION, "--set %s: expected KEY=VALUE", assignment);
	char key[256];
	size_t klen = (size_t)(eq - assignment);
	if (klen >= sizeof key)
		return seed_err_set(err, -SEED_EOPTION, "--set: key too long (%zu bytes)", klen);
	memcpy(key, assignment, klen);
	key[klen] = '\0';
	/* Refuse an empty part before creating any object, so that a bad key
	 * changes nothing. */
	if (key[0] == '.' || key[klen - 1] == '.' || strstr(key, ".."))
		return seed_err_set(err, -SEED_EOPTION, "--set %s: empty part in the key", assignment);
	/* jansson takes only UTF-8 keys: setting another fails, which would
	 * drop the value silently or, for a part that names an object, free
	 * the object about to be filled. */
	json_t *k = json_stringn(key, klen);
	if (!k)
		return seed_err_set(err, -SEED_EOPTION, "--set %s: the key is not UTF-8", assignment);
	json_decref(k);
	json_t *obj = root;
	char *part = key;
	for (;;) {
		char *dot = strchr(part, '.');
		if (dot)
			*dot = '\0';
		if (!dot)
			break;
		json_t *child = json_object_get(obj, part);
		if (child && !json_is_object(child))
			return seed_err_set(err, -SEED_EOPTION, "--set %s: '%s' is not an object", assignment,
			                    part);
		if (!child) {
			child = json_object();
			json_object_set_new(obj, part, child);
		}
		obj = child;
		part = dot + 1;
	}
	json_error_t je;
	json_t *v = json_loads(eq + 1, JSON_DECODE_ANY, &je);
	if (!v)
		v = json_string(eq + 1); /* a bare word is a string */
	if (!v)
		return seed_err_set(err, -SEED_EOPTION, "--set %s: the value is not UTF-8", assignment);
	json_object_set_new(obj, part, v);
	return 0;
}

/* ---- reading a row -------------------------------------------------------- */

#define TRY(x)                                                                                               \
	do {                                                                                                 \
		int rc_ = (x);                                                                               \
		if (rc_)                                                                                     \
			return rc_;                                                                          \
	} while (0)

/* Typed getters of the value v of key name (NULL or null: the default),
 * with range checks; 0 or -SEED_EOPTION. */
static int get_num(const json_t *v, const char *name, double dflt, double lo, double hi, double *out,
                   seed_err *err)
{
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_number(v))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be a number", name);
	double x = json_number_value(v);
	if (!(x >= lo && x <= hi))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' = %g is out of range [%g, %g]", name, x,
		                    lo, hi);
	*out = x;
	return 0;
}

static int get_int(const json_t *v, const char *name, int64_t dflt, int64_t lo, int64_t hi, int64_t *out,
                   seed_err *err)
{
	/* JSON integers exactly: through a double, seeds past 2^53 would
	 * silently become other seeds. */
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < lo || x > hi)
			return seed_err_set(err, -SEED_EOPTION,
			                    "config: '%s' = %lld is out of range [%lld, %lld]", name,
			                    (long long)x, (long long)lo, (long long)hi);
		*out = x;
		return 0;
	}
	double x;
	TRY(get_num(v, name, (double)dflt, (double)lo, (double)hi, &x, err));
	if (x != floor(x))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be an integer", name);
	*out = v && !json_is_null(v) ? (int64_t)x : dflt;
	return 0;
}

static int get_bool(const json_t *v, const char *name, bool dflt, bool *out, seed_err *err)
{
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be true or false", name);
	*out = json_is_true(v);
	return 0;
}

/* choices' names as a list: "\"a\", \"b\" or \"c\"" (quoted), "a, b, c"
 * (not), with " (default)" after the one whose value is dflt if mark. */
static void choice_list(const struct choice *cs, bool quoted, bool mark, int dflt, char *out, size_t n)
{
	size_t at = 0;
	out[0] = '\0';
	for (int i = 0; cs[i].name && at < n; i++) {
		const char *sep = i == 0 ? "" : !quoted ? ", " : cs[i + 1].name ? ", " : " or ";
		at += (size_t)snprintf(out + at, n - at, quoted ? "%s\"%s\"%s" : "%s%s%s", sep, cs[i].name,
		                       mark && cs[i].value == dflt ? " (default)" : "");
	}
}

static int get_choice(const struct key *k, const json_t *v, int *out, seed_err *err)
{
	if (!v || json_is_null(v)) {
		*out = (int)k->dflt;
		return 0;
	}
	const char *s = json_string_value(v);
	for (int i = 0; s && k->choices[i].name; i++)
		if (strcmp(s, k->choices[i].name) == 0) {
			*out = k->choices[i].value;
			return 0;
		}
	char list[256];
	choice_list(k->choices, !(k->flags & F_KNOWN), false, 0, list, sizeof list);
	if (!(k->flags & F_KNOWN))
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be %s", k->name, list);
	if (!s)
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be a string", k->name);
	return seed_err_set(err, -SEED_EOPTION, "config: '%s' = '%s' (known: %s)", k->name, s, list);
}

/* The text and JSON kinds: a string into root, an object as JSON text. */
static int get_text(const struct key *k, const json_t *v, void *p, seed_err *err)
{
	bool given = v && !json_is_null(v);
	bool ok = k->type == T_STRING ? json_is_string(v) : json_is_object(v);
	if ((k->flags & F_REQUIRED) && !ok)
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' (%s) is required", k->name, k->doc);
	if (given && !ok)
		return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be %s", k->name,
		                    k->type == T_STRING ? "a string" : "an object");
	if (k->type == T_STRING) {
		const char *s = given ? json_string_value(v) : NULL;
		if (s && (k->flags & F_ONE_LINE) && strchr(s, '\n'))
			return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be one line", k->name);
		*(const char **)p = s;
	} else {
		char *text = given ? json_dumps(v, JSON_COMPACT) : strcpy(seed_xmalloc(3), "{}");
		if (!text)
			seed_oom(0);
		*(char **)p = text;
	}
	return 0;
}

/* Read row k from its value v (NULL: absent) into c. */
static int read_row(const struct key *k, const json_t *v, seed_config *c, seed_err *err)
{
	void *p = (char *)c + k->off;
	double dflt = k->dflt_of ? k->dflt_of(c, k->dflt) : k->dflt, d = 0;
	int64_t i = 0;
	switch (k->type) {
	case T_SECTION:
		if (v && !json_is_null(v) && !json_is_object(v))
			return seed_err_set(err, -SEED_EOPTION, "config: '%s' must be an object", k->name);
		return 0;
	case T_INT:
	case T_I64:
	case T_U64:
		TRY(get_int(v, k->name, (int64_t)dflt, k->min, k->max, &i, err));
		if (k->type == T_INT)
			*(int *)p = (int)i;
		else if (k->type == T_I64)
			*(int64_t *)p = i;
		else
			*(uint64_t *)p = (uint64_t)i;
		return 0;
	case T_FLOAT:
	case T_DOUBLE:
		TRY(get_num(v, k->name, dflt, k->lo, k->hi, &d, err));
		if (k->type == T_FLOAT)
			*(float *)p = (float)d;
		else
			*(double *)p = d;
		return 0;
	case T_OPT_DOUBLE:
		if (!v || json_is_null(v)) {
			*(double *)p = NAN;
			return 0;
		}
		return get_num(v, k->name, 0, k->lo, k->hi, (double *)p, err);
	case T_BOOL:
		return get_bool(v, k->name, dflt != 0, (bool *)p, err);
	case T_CHOICE:
		return get_choice(k, v, (int *)p, err);
	case T_STRING:
	case T_OBJECT:
		return get_text(k, v, p, err);
	case T_ANY:
		return 0;
	}
	return 0;
}

/* The row called name, or NULL. */
static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

/* Every key of root, and of its sections, has a row. */
static int check_known(const json_t *root, seed_err *err)
{
	const char *k, *sub;
	json_t *v, *sv;
	json_object_foreach((json_t *)root, k, v)
	{
		const struct key *row = strchr(k, '.') ? NULL : find_key(k);
		if (!row)
			return seed_err_set(err, -SEED_EOPTION, "config: unknown key '%s'", k);
		if (row->type != T_SECTION || !json_is_object(v))
			continue;
		json_object_foreach(v, sub, sv)
		{
			char name[128];
			int len = snprintf(name, sizeof name, "%s.%s", k, sub);
			if (len >= (int)sizeof name || strchr(sub, '.') || !find_key(name))
				return seed_err_set(err, -SEED_EOPTION, "config: unknown key '%s.%s'", k,
				                    sub);
		}
	}
	return 0;
}

/* What no row can say: the checks across keys. */
static int check_across(const seed_config *c, seed_err *err)
{
	const seed_config_evolution *e = &c->evolution;
	bool centred = c->algorithm == SEED_CONFIG_ES || c->algorithm == SEED_CONFIG_SNES ||
	               c->algorithm == SEED_CONFIG_ARS;
	const char *an = seed_config_algorithm_name(c->algorithm);
	if (centred && e->population % 2)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.population' = %d must be even for algorithm %s "
		                    "(its members are antithetic pairs)",
		                    e->population, an);
	if (centred && !(e->sigma > 0))
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.sigma' = 0 leaves algorithm %s nothing to explore: "
		                    "it must be more than 0",
		                    an);
	if (c->algorithm == SEED_CONFIG_SNES && e->rank != 0)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.rank' = %d: algorithm snes keeps a std per "
		                    "parameter, which low-rank noise cannot carry: it must be 0",
		                    e->rank);
	if (SEED_CONFIG_IS_EVO(c->algorithm) && c->algorithm != SEED_CONFIG_SNES && e->temperature != 0)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.temperature' = %g is snes's (the weights of its "
		                    "update); algorithm %s takes none: it must be 0",
		                    e->temperature, an);
	if (SEED_CONFIG_IS_EVO(c->algorithm) && !centred && e->centre_init != SEED_CONFIG_CENTRE_MODEL)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.centre_init' = 'zero' is for es, snes and ars; "
		                    "algorithm %s has no centre (its members start from the model's "
		                    "initialisation): it must be 'model'",
		                    an);
	if (e->top > e->population / 2)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.top' = %d is more than the %d pairs of "
		                    "'evolution.population' = %d",
		                    e->top, e->population / 2, e->population);
	if (e->truncation > e->population)
		return seed_err_set(
		    err, -SEED_EOPTION,
		    "config: 'evolution.truncation' = %d is more than 'evolution.population' = %d",
		    e->truncation, e->population);
	if (e->elite_candidates > e->population)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'evolution.elite_candidates' = %d is more than "
		                    "'evolution.population' = %d",
		                    e->elite_candidates, e->population);
	if (c->algorithm == SEED_CONFIG_PPO &&
	    (int64_t)c->unroll_length * c->batch_size % c->ppo.minibatches != 0)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'ppo.minibatches' = %d does not divide the %lld transitions "
		                    "of a batch ('unroll_length' %d x 'batch_size' %d)",
		                    c->ppo.minibatches, (long long)c->unroll_length * c->batch_size,
		                    c->unroll_length, c->batch_size);
	if (c->r2d2.burn_in >= c->unroll_length)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'r2d2.burn_in' = %d leaves no step to train on: it must be "
		                    "less than 'unroll_length' = %d",
		                    c->r2d2.burn_in, c->unroll_length);
	if (c->replay.min_size > c->replay.capacity)
		return seed_err_set(err, -SEED_EOPTION,
		                    "config: 'replay.min_size' = %lld is more than 'replay.capacity' = %lld",
		                    (long long)c->replay.min_size, (long long)c->replay.capacity);
	return 0;
}

/* ---- writing back --------------------------------------------------------- */

static bool written(const struct key *k, const seed_config *c)
{
	switch (k->when) {
	case W_ALWAYS:
	case W_ABSENT:
		return true;
	case W_ADAM:
		return c->optim.kind == SEED_OPTIM_ADAM;
	case W_RMSPROP:
		return c->optim.kind == SEED_OPTIM_RMSPROP;
	case W_R2D2:
		return c->algorithm == SEED_CONFIG_R2D2;
	case W_PPO:
		return c->algorithm == SEED_CONFIG_PPO;
	case W_EVO:
		return SEED_CONFIG_IS_EVO(c->algorithm);
	case W_NEVER:
		break;
	}
	return false;
}

/* A number as JSON with the digits a float holds (0.99, not
 * 0.99000000953674316); null for what JSON cannot hold (none, infinity). */
static json_t *jf(double x)
{
	if (!isfinite(x))
		return json_null();
	char buf[32];
	snprintf(buf, sizeof buf, "%.7g", x);
	return json_real(strtod(buf, NULL));
}

/* Row k's resolved value as JSON (a new reference). */
static json_t *row_value(const struct key *k, const seed_config *c)
{
	const void *p = (const char *)c + k->off;
	switch (k->type) {
	case T_INT:
		return json_integer(*(const int *)p);
	case T_I64:
		return json_integer(*(const int64_t *)p);
	case T_U64:
		return json_integer((json_int_t) * (const uint64_t *)p);
	case T_FLOAT:
		return jf(*(const float *)p);
	case T_DOUBLE:
	case T_OPT_DOUBLE:
		return jf(*(const double *)p);
	case T_BOOL:
		return json_boolean(*(const bool *)p);
	case T_CHOICE:
		for (int i = 0; k->choices[i].name; i++)
			if (k->choices[i].value == *(const int *)p)
				return json_string(k->choices[i].name);
		break;
	case T_OBJECT:
		return json_object(); /* W_ABSENT: the default, {} */
	default:
		break;
	}
	return json_null();
}

/* Write every resolved value back, so the saved configuration (and
 * --print-config) says exactly what was trained, defaults included. */
static void write_back(json_t *root, const seed_config *c)
{
	for (size_t i = 0; i < config_nkeys; i++) {
		const struct key *k = &config_keys[i];
		if (k->type == T_SECTION || !written(k, c))
			continue;
		const char *dot = strchr(k->name, '.'), *leaf = dot ? dot + 1 : k->name;
		json_t *obj = root;
		if (dot) {
			char section[64];
			snprintf(section, sizeof section, "%.*s", (int)(dot - k->name), k->name);
			obj = json_object_get(root, section);
			if (!json_is_object(obj)) {
				obj = json_object();
				json_object_set_new(root, section, obj);
			}
		}
		json_t *old = json_object_get(obj, leaf);
		if (k->when == W_ABSENT && old && !json_is_null(old))
			continue;
		json_object_set_new(obj, leaf, row_value(k, c));
	}
}

/* Keys that were renamed: a configuration (a run directory's config.json,
 * a preset of one's own) that says the old name is read as if it said the
 * new one, and written back with the new. */
static const struct {
	const char *section, *old, *new;
} renamed[] = {
    {"evolution", "episodes", "episodes_per_member"},
};

static int rename_old(json_t *root, seed_err *err)
{
	for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++) {
		json_t *sec = json_object_get(root, renamed[i].section);
		json_t *v = json_is_object(sec) ? json_object_get(sec, renamed[i].old) : NULL;
		if (!v)
			continue;
		if (json_object_get(sec, renamed[i].new))
			return seed_err_set(err, -SEED_EOPTION,
			                    "config: both '%s.%s' and '%s.%s' are set ('%s' is the old "
			                    "name of '%s'): keep one",
			                    renamed[i].section, renamed[i].old, renamed[i].section,
			                    renamed[i].new, renamed[i].old, renamed[i].new);
		json_object_set(sec, renamed[i].new, v);
		json_object_del(sec, renamed[i].old);
	}
	return 0;
}

static int parse(json_t *root, seed_config *c, seed_err *err)
{
	memset(c, 0, sizeof *c);
	/* The libraries' own defaults first, for the fields no key sets. */
	seed_optim_config_default(&c->optim, SEED_OPTIM_ADAM);
	seed_loss_config_default(&c->loss);
	seed_ppo_config_default(&c->ppo);
	TRY(rename_old(root, err));
	TRY(check_known(root, err));
	for (size_t i = 0; i < config_nkeys; i++)
		TRY(read_row(&config_keys[i], seed_config_get(root, config_keys[i].name), c, err));
	TRY(check_across(c, err));
	write_back(root, c);
	c->root = root;
	return 0;
}

int seed_config_parse(json_t *root, seed_config *c, seed_err *err)
{
	int rc = parse(root, c, err);
	if (rc) {
		free(c->env_options);
		free(c->model);
		memset(c, 0, sizeof *c);
	}
	return rc;
}

/* ---- the key list of seed-config(5) --------------------------------------- */

/* An integer as the manual writes it: 2^k and 2^k-1 from 2^16 on. */
static void fmt_int(int64_t x, char *out, size_t n)
{
	for (int k = 16; k < 64; k++) {
		uint64_t p = UINT64_C(1) << k;
		if ((uint64_t)x == p || (uint64_t)x == p - 1) {
			snprintf(out, n, "2^%d%s", k, (uint64_t)x == p ? "" : "-1");
			return;
		}
	}
	snprintf(out, n, "%lld", (long long)x);
}

/* A number as the manual writes it: %g, with 1e6 for 1e+06. */
static void fmt_num(double x, char *out, size_t n)
{
	char g[32];
	snprintf(g, sizeof g, "%g", x);
	char *e = strchr(g, 'e');
	if (!e) {
		snprintf(out, n, "%s", g);
		return;
	}
	int exp = atoi(e + 1);
	*e = '\0';
	snprintf(out, n, "%se%d", g, exp);
}

/* Row k's type, default and range, as seed-config(5) opens its entry. */
static void synopsis(const struct key *k, char *out, size_t n)
{
	char d[64], lo[32], hi[32], list[256], note[80] = "";
	if (k->dflt_note)
		snprintf(note, sizeof note, " (%s)", k->dflt_note);
	switch (k->type) {
	case T_SECTION:
		snprintf(out, n, "Object");
		return;
	case T_INT:
	case T_I64:
	case T_U64:
		fmt_int((int64_t)k->dflt, d, sizeof d);
		fmt_int(k->min, lo, sizeof lo);
		fmt_int(k->max, hi, sizeof hi);
		snprintf(out, n, "Integer, default %s%s, from %s to %s", d, note, lo, hi);
		return;
	case T_FLOAT:
	case T_DOUBLE:
		fmt_num(k->dflt, d, sizeof d);
		fmt_num(k->lo, lo, sizeof lo);
		fmt_num(k->hi, hi, sizeof hi);
		if (isinf(k->hi))
			snprintf(out, n, "Number, default %s%s, %s or more", d, note, lo);
		else
			snprintf(out, n, "Number, default %s%s, from %s to %s", d, note, lo, hi);
		return;
	case T_OPT_DOUBLE:
		snprintf(out, n, "Number or null (default: none)");
		return;
	case T_BOOL:
		snprintf(out, n, k->dflt != 0 ? "true (default) or false" : "true or false (default)");
		return;
	case T_CHOICE:
		choice_list(k->choices, true, true, (int)k->dflt, list, sizeof list);
		snprintf(out, n, "%s", list);
		return;
	case T_STRING:
		snprintf(out, n, "String, %s", k->flags & F_REQUIRED ? "required" : "optional");
		return;
	case T_OBJECT:
		snprintf(out, n, "Object, %s", k->flags & F_REQUIRED ? "required" : "default {}");
		return;
	case T_ANY:
		snprintf(out, n, "Any JSON value, optional");
		return;
	}
}

char *seed_config_describe(void)
{
	seed_buf b = {0};
	for (size_t i = 0; i < config_nkeys; i++) {
		char line[512], syn[320];
		synopsis(&config_keys[i], syn, sizeof syn);
		int len =
		    snprintf(line, sizeof line, "%s\t%s\t%s\n", config_keys[i].name, syn, config_keys[i].doc);
		seed_buf_append(&b, line, (size_t)len);
	}
	seed_buf_append(&b, "", 1);
	return (char *)b.data;
}

/* The value at a dotted key of root, or NULL. */
json_t *seed_config_get(json_t *root, const char *key)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", key);
	json_t *v = root;
	char *save = NULL;
	for (char *part = strtok_r(buf, ".", &save); part && v; part = strtok_r(NULL, ".", &save))
		v = json_is_object(v) ? json_object_get(v, part) : NULL;
	return v;
}

void seed_config_free(seed_config *c)
{
	free(c->env_options);
	free(c->model);
	json_decref(c->root);
	memset(c, 0, sizeof *c);
}

int seed_config_checkpoint_save(const seed_config *c, const char *dir, seed_checkpoint *ck, seed_err *err)
{
	json_t *env_opts = json_loads(c->env_options, 0, NULL);
	json_t *model = json_loads(c->model, 0, NULL);
	ck->config = c->root;
	ck->env = c->env;
	ck->env_options = env_opts;
	ck->model = model;
	int rc = seed_checkpoint_save(dir, ck, err);
	json_decref(env_opts);
	json_decref(model);
	ck->env_options = ck->model = NULL;
	return rc;
}
