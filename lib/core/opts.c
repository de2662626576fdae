/* opts.c: the table-driven command-line parser (seed/opts.h).
 *
 * Invariants: the table is checked before any word is read, so a faulty
 * table is reported the same whatever the command line; a destination is
 * written only after its value parsed and passed its range; every message
 * names the option by its long name ("--envs: ...") once the option is
 * known, or as the user wrote it when it is not.
 */
#include "seed/opts.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The two options every program has, outside the tables. */
static const char help_help[] = "show this help and exit";
static const char version_help[] = "show the version and exit";

/* ---- values --------------------------------------------------------------- */

/* strto* skip leading blanks; an option value with them is a typo. */
static bool starts_badly(const char *arg)
{
	return arg[0] == '\0' || isspace((unsigned char)arg[0]);
}

int seed_opts_int(const char *name, const char *arg, int64_t min, int64_t max, int64_t *out, seed_err *err)
{
	if (min == 0 && max == 0) {
		min = INT64_MIN;
		max = INT64_MAX;
	}
	char *end;
	errno = 0;
	long long v = starts_badly(arg) ? 0 : strtoll(arg, &end, 10);
	if (starts_badly(arg) || *end)
		return seed_err_set(err, -EINVAL, "%s: '%s' is not an integer", name, arg);
	if (errno == ERANGE || v < min || v > max)
		return seed_err_set(err, -EINVAL, "%s: %s is out of range [%" PRId64 ", %" PRId64 "]", name,
		                    arg, min, max);
	*out = v;
	return 0;
}

int seed_opts_u64(const char *name, const char *arg, uint64_t *out, seed_err *err)
{
	char *end;
	errno = 0;
	/* strtoull takes "-1" as 2^64 - 1: refuse any sign. */
	bool bad = starts_badly(arg) || arg[0] == '-' || arg[0] == '+';
	unsigned long long v = bad ? 0 : strtoull(arg, &end, 10);
	if (bad || *end)
		return seed_err_set(err, -EINVAL, "%s: '%s' is not an unsigned integer", name, arg);
	if (errno == ERANGE)
		return seed_err_set(err, -EINVAL, "%s: %s is out of range [0, %" PRIu64 "]", name, arg,
		                    UINT64_MAX);
	*out = v;
	return 0;
}

int seed_opts_num(const char *name, const char *arg, double lo, double hi, double *out, seed_err *err)
{
	if (lo == 0 && hi == 0) {
		lo = -DBL_MAX;
		hi = DBL_MAX;
	}
	char *end;
	errno = 0;
	double v = starts_badly(arg) ? 0 : strtod(arg, &end);
	if (starts_badly(arg) || *end || isnan(v))
		return seed_err_set(err, -EINVAL, "%s: '%s' is not a number", name, arg);
	/* ERANGE on underflow gives a tiny number, which is fine; an overflow
	 * gives an infinity, which the range refuses. */
	if (v < lo || v > hi)
		return seed_err_set(err, -EINVAL, "%s: %s is out of range [%g, %g]", name, arg, lo, hi);
	*out = v;
	return 0;
}

void seed_opt_strs_free(seed_opt_strs *s)
{
	if (!s)
		return;
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* ---- the table ------------------------------------------------------------ */

static bool takes_arg(const seed_opt *o)
{
	return o->kind != SEED_OPT_FLAG;
}

static const char *arg_name(const seed_opt *o)
{
	if (o->arg)
		return o->arg;
	switch (o->kind) {
	case SEED_OPT_INT:
	case SEED_OPT_U64:
		return "N";
	case SEED_OPT_NUM:
		return "X";
	default:
		return "VALUE";
	}
}

static int check_table(const seed_opts *spec, seed_err *err)
{
	if (!spec || !spec->opts)
		return seed_err_set(err, -EFAULT, "option table: missing");
	for (const seed_opt *o = spec->opts; o->name; o++) {
		if (!*o->name || o->name[0] == '-' || strchr(o->name, '='))
			return seed_err_set(err, -EFAULT, "option table: bad name '%s'", o->name);
		if (strcmp(o->name, "help") == 0 || strcmp(o->name, "version") == 0 || o->letter == 'h' ||
		    o->letter == 'V')
			return seed_err_set(err, -EFAULT,
			                    "option table: --%s: --help/-h and --version/-V are built in",
			                    o->name);
		if (o->letter && (o->letter == '-' || !isgraph((unsigned char)o->letter)))
			return seed_err_set(err, -EFAULT, "option table: --%s: bad letter", o->name);
		if (!o->dest)
			return seed_err_set(err, -EFAULT, "option table: --%s: no destination", o->name);
		if ((unsigned)o->kind > SEED_OPT_STRS)
			return seed_err_set(err, -EFAULT, "option table: --%s: unknown kind %d", o->name,
			                    (int)o->kind);
		if (o->kind == SEED_OPT_INT && o->min > o->max)
			return seed_err_set(err, -EFAULT, "option table: --%s: empty range", o->name);
		if (o->kind == SEED_OPT_NUM && !(o->lo <= o->hi))
			return seed_err_set(err, -EFAULT, "option table: --%s: empty range", o->name);
		for (const seed_opt *p = spec->opts; p < o; p++) {
			if (strcmp(p->name, o->name) == 0)
				return seed_err_set(err, -EFAULT, "option table: --%s twice", o->name);
			if (o->letter && p->letter == o->letter)
				return seed_err_set(err, -EFAULT, "option table: -%c for --%s and --%s",
				                    o->letter, p->name, o->name);
		}
	}
	return 0;
}

/* ---- parsing -------------------------------------------------------------- */

static int store_value(const seed_opt *o, const char *value, seed_err *err);

/* Store value (NULL for a flag) into o's destination; mark o seen. */
static int store(const seed_opt *o, const char *value, seed_err *err)
{
	int rc = store_value(o, value, err);
	if (rc == 0 && o->seen)
		*o->seen = true;
	return rc;
}

static int store_value(const seed_opt *o, const char *value, seed_err *err)
{
	char name[128];
	snprintf(name, sizeof name, "--%s", o->name);
	switch (o->kind) {
	case SEED_OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case SEED_OPT_INT:
		return seed_opts_int(name, value, o->min, o->max, o->dest, err);
	case SEED_OPT_U64:
		return seed_opts_u64(name, value, o->dest, err);
	case SEED_OPT_NUM:
		return seed_opts_num(name, value, o->lo, o->hi, o->dest, err);
	case SEED_OPT_STR:
		*(const char **)o->dest = value;
		return 0;
	case SEED_OPT_STRS: {
		seed_opt_strs *s = o->dest;
		s->v = seed_xrealloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
		s->v[s->n++] = value;
		return 0;
	}
	}
	return -EFAULT;
}

/* The option a long word names (word without "--", up to n bytes): the
 * exact name, else the one name it is a prefix of.  NULL with err set. */
static const seed_opt *find_long(const seed_opts *spec, const char *word, size_t n, int *builtin,
                                 seed_err *err)
{
	*builtin = 0;
	if (n == 0) {
		seed_err_set(err, -EINVAL, "unknown option '--%s'", word);
		return NULL;
	}
	const seed_opt *match = NULL;
	int matches = 0;
	static const char *const builtins[] = {"help", "version"};
	for (int b = 0; b < 2; b++)
		if (strlen(builtins[b]) == n && strncmp(builtins[b], word, n) == 0) {
			*builtin = b ? SEED_OPTS_VERSION : SEED_OPTS_HELP;
			return NULL;
		}
	for (const seed_opt *o = spec->opts; o->name; o++) {
		if (strncmp(o->name, word, n) != 0)
			continue;
		if (strlen(o->name) == n)
			return o;
		match = o;
		matches++;
	}
	int bmatch = 0;
	for (int b = 0; b < 2; b++)
		if (n > 0 && strncmp(builtins[b], word, n) == 0) {
			bmatch = b ? SEED_OPTS_VERSION : SEED_OPTS_HELP;
			matches++;
		}
	if (matches == 1 && bmatch) {
		*builtin = bmatch;
		return NULL;
	}
	if (matches == 1)
		return match;
	if (matches == 0) {
		seed_err_set(err, -EINVAL, "unknown option '--%.*s'", (int)n, word);
		return NULL;
	}
	/* Name the candidates, so the user sees what to type. */
	char list[256] = "";
	size_t used = 0;
	for (const seed_opt *o = spec->opts; o->name && used < sizeof list; o++)
		if (strncmp(o->name, word, n) == 0)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s", used ? ", " : "",
			                         o->name);
	for (int b = 0; b < 2 && used < sizeof list; b++)
		if (strncmp(builtins[b], word, n) == 0)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s", used ? ", " : "",
			                         builtins[b]);
	seed_err_set(err, -EINVAL, "--%.*s: ambiguous option (%s)", (int)n, word, list);
	return NULL;
}

static const seed_opt *find_short(const seed_opts *spec, char c)
{
	for (const seed_opt *o = spec->opts; o->name; o++)
		if (o->letter == c)
			return o;
	return NULL;
}

/* The value of option o that takes one: inline (not NULL) or else the next
 * word, which then counts as an option word.  0, or -EINVAL with the
 * message when the words ran out. */
static int value_of(const seed_opt *o, const char *inline_value, int argc, char **argv, int *i, char **opts,
                    int *nopts, const char **value, seed_err *err)
{
	if (inline_value) {
		*value = inline_value;
		return 0;
	}
	if (*i + 1 >= argc)
		return seed_err_set(err, -EINVAL, "--%s: needs a value (%s)", o->name, arg_name(o));
	*value = argv[++*i];
	opts[(*nopts)++] = argv[*i];
	return 0;
}

static int parse_words(const seed_opts *spec, int argc, char **argv, char **opts, int *nopts, char **ops,
                       int *nops, seed_err *err)
{
	bool only_operands = false;
	for (int i = 1; i < argc; i++) {
		char *w = argv[i];
		if (only_operands || w[0] != '-' || w[1] == '\0') {
			ops[(*nops)++] = w;
			continue;
		}
		opts[(*nopts)++] = w;
		if (strcmp(w, "--") == 0) {
			only_operands = true;
			continue;
		}
		if (w[1] == '-') {
			const char *name = w + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			int builtin;
			const seed_opt *o = find_long(spec, name, n, &builtin, err);
			if (builtin)
				return builtin;
			if (!o)
				return -EINVAL;
			const char *value = NULL;
			if (!takes_arg(o) && eq)
				return seed_err_set(err, -EINVAL, "--%s: takes no value", o->name);
			int rc = takes_arg(o) ? value_of(o, eq ? eq + 1 : NULL, argc, argv, &i, opts, nopts,
			                                 &value, err)
			                      : 0;
			if (rc == 0)
				rc = store(o, value, err);
			if (rc)
				return rc;
			continue;
		}
		/* A cluster of short options: flags, then at most one that
		 * takes the rest of the word or the next word as its value. */
		for (const char *p = w + 1; *p; p++) {
			if (*p == 'h')
				return SEED_OPTS_HELP;
			if (*p == 'V')
				return SEED_OPTS_VERSION;
			const seed_opt *o = find_short(spec, *p);
			if (!o) {
				if (isprint((unsigned char)*p))
					return seed_err_set(err, -EINVAL, "unknown option '-%c'", *p);
				return seed_err_set(err, -EINVAL, "unknown option '%s'", w);
			}
			if (!takes_arg(o)) {
				store(o, NULL, err);
				continue;
			}
			const char *value = NULL;
			int rc = value_of(o, p[1] ? p + 1 : NULL, argc, argv, &i, opts, nopts, &value, err);
			if (rc == 0)
				rc = store(o, value, err);
			if (rc)
				return rc;
			break;
		}
	}
	if (spec->max_operands >= 0 && *nops > spec->max_operands)
		return seed_err_set(err, -EINVAL, "unexpected argument '%s'", ops[spec->max_operands]);
	return 0;
}

int seed_opts_parse(const seed_opts *spec, int argc, char **argv, int *first, seed_err *err)
{
	int rc = check_table(spec, err);
	if (rc)
		return rc;
	if (argc < 1) {
		*first = argc < 0 ? 0 : argc;
		return 0;
	}
	/* Options keep their words in order, then the operands: getopt's
	 * permutation, so argv stays a valid argument vector. */
	char **words = seed_xmalloc((size_t)argc * 2 * sizeof *words);
	char **opts = words, **ops = words + argc;
	int nopts = 0, nops = 0;
	rc = parse_words(spec, argc, argv, opts, &nopts, ops, &nops, err);
	if (rc == 0) {
		memcpy(argv + 1, opts, (size_t)nopts * sizeof *argv);
		memcpy(argv + 1 + nopts, ops, (size_t)nops * sizeof *argv);
		*first = 1 + nopts;
	}
	free(words);
	return rc;
}

/* ---- help ----------------------------------------------------------------- */

#define HELP_WIDTH 80
/* The help column never moves further right than this; longer option
 * names push their help to two spaces after them. */
#define HELP_MAX_COL 30

static void appendf(seed_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf(seed_buf *out, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		seed_buf_append(out, tmp, (size_t)n);
		return;
	}
	seed_buf_reserve(out, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf((char *)out->data + out->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	out->len += (size_t)n;
}

static void spaces(seed_buf *out, int n)
{
	for (int i = 0; i < n; i++)
		seed_buf_append(out, " ", 1);
}

/* Append text wrapped at HELP_WIDTH, the cursor being at column at, every
 * further line indented to col; '\n' in text starts a new line.  Ends with
 * a newline. */
static void wrap(seed_buf *out, const char *text, int at, int col)
{
	const char *p = text;
	bool line_empty = true;
	while (*p) {
		if (*p == '\n') {
			seed_buf_append(out, "\n", 1);
			spaces(out, col);
			at = col;
			line_empty = true;
			p++;
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		size_t n = strcspn(p, " \n");
		if (!line_empty && at + 1 + (int)n > HELP_WIDTH) {
			seed_buf_append(out, "\n", 1);
			spaces(out, col);
			at = col;
			line_empty = true;
		}
		if (!line_empty) {
			seed_buf_append(out, " ", 1);
			at++;
		}
		seed_buf_append(out, p, n);
		at += (int)n;
		line_empty = false;
		p += n;
	}
	seed_buf_append(out, "\n", 1);
}

/* "  -e, --env NAME" or "      --retry-ms MS". */
static int left_part(char *buf, size_t cap, char letter, const char *name, const char *arg)
{
	int n =
	    letter ? snprintf(buf, cap, "  -%c, --%s", letter, name) : snprintf(buf, cap, "      --%s", name);
	if (arg && n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " %s", arg);
	return n < 0 ? 0 : (n >= (int)cap ? (int)cap - 1 : n);
}

/* Append text as it is, with a final newline if it lacks one. */
static void verbatim(seed_buf *out, const char *text)
{
	size_t n = strlen(text);
	seed_buf_append(out, text, n);
	if (n && text[n - 1] != '\n')
		seed_buf_append(out, "\n", 1);
}

static void synopses(seed_buf *out, const char *first, const char *prog, const char *usage)
{
	const char *p = usage ? usage : "";
	bool one = true;
	do {
		size_t n = strcspn(p, "\n");
		appendf(out, "%s%s%s%.*s\n", one ? first : "       ", prog, n ? " " : "", (int)n, p);
		one = false;
		p += n;
		if (*p == '\n')
			p++;
	} while (*p);
}

void seed_opts_help(const seed_opts *spec, const char *prog, seed_buf *out)
{
	synopses(out, "Usage: ", prog, spec->usage);
	if (spec->summary)
		verbatim(out, spec->summary);
	seed_buf_append(out, "\n", 1);
	char left[256];
	int col = left_part(left, sizeof left, 'V', "version", NULL);
	for (const seed_opt *o = spec->opts; o && o->name; o++) {
		int n = left_part(left, sizeof left, o->letter, o->name, takes_arg(o) ? arg_name(o) : NULL);
		if (n <= HELP_MAX_COL - 2 && n > col)
			col = n;
	}
	col += 2;
	for (int i = 0;; i++) {
		const seed_opt *o = spec->opts ? &spec->opts[i] : NULL;
		if (!o || !o->name)
			break;
		int n = left_part(left, sizeof left, o->letter, o->name, takes_arg(o) ? arg_name(o) : NULL);
		seed_buf_append(out, left, (size_t)n);
		int at = n + 2 > col ? n + 2 : col;
		spaces(out, at - n);
		wrap(out, o->help ? o->help : "", at, col);
	}
	static const struct {
		char letter;
		const char *name, *help;
	} builtins[] = {{'h', "help", help_help}, {'V', "version", version_help}};
	for (int b = 0; b < 2; b++) {
		int n = left_part(left, sizeof left, builtins[b].letter, builtins[b].name, NULL);
		seed_buf_append(out, left, (size_t)n);
		spaces(out, col - n);
		wrap(out, builtins[b].help, col, col);
	}
	/* The epilogue is laid out by its author (examples, tables): verbatim. */
	if (spec->epilogue && *spec->epilogue) {
		seed_buf_append(out, "\n", 1);
		verbatim(out, spec->epilogue);
	}
}

void seed_opts_usage(const seed_opts *spec, const char *prog, seed_buf *out)
{
	synopses(out, "usage: ", prog, spec->usage);
	appendf(out, "Try '%s --help' for more information.\n", prog);
}
