/* tests/unit/core/test_opts.c: the table-driven option parser (seed/opts.h).
 *
 * A table of command lines, each with what the parser must make of it: the
 * values stored (written as one line, "env=cartpole envs=4 ..."), the
 * operands left, or the exact error message.  The expected values and
 * messages are worked by hand from the rules in seed_opts(3); the help text
 * is checked against a golden text laid out by hand (and its line widths
 * checked independently below).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/opts.h"
#include "seed/rng.h"
#include "tap.h"

/* ---- the program under test: a table of every kind -------------------------- */

static struct {
	const char *env, *out;
	int64_t envs, retry;
	uint64_t seed;
	double lr;
	bool quiet, greedy;
	seed_opt_strs sets;
} v;

static const seed_opt table[] = {
    {.name = "env",
     .letter = 'e',
     .kind = SEED_OPT_STR,
     .dest = &v.env,
     .arg = "NAME",
     .help = "environment"},
    {.name = "envs", .letter = 'k', .kind = SEED_OPT_INT, .dest = &v.envs, .arg = "K", .min = 1, .max = 64},
    {.name = "seed", .letter = 's', .kind = SEED_OPT_U64, .dest = &v.seed, .arg = "S"},
    {.name = "lr", .kind = SEED_OPT_NUM, .dest = &v.lr, .lo = 0, .hi = 10},
    {.name = "retry-ms", .kind = SEED_OPT_INT, .dest = &v.retry, .arg = "MS"},
    {.name = "set", .kind = SEED_OPT_STRS, .dest = &v.sets, .arg = "KEY=VALUE"},
    {.name = "out", .letter = 'O', .kind = SEED_OPT_STR, .dest = &v.out, .arg = "FILE"},
    {.name = "quiet", .letter = 'q', .kind = SEED_OPT_FLAG, .dest = &v.quiet},
    {.name = "greedy", .letter = 'g', .kind = SEED_OPT_FLAG, .dest = &v.greedy},
    {0},
};

static const seed_opts spec = {.usage = "[OPTION]... [FILE]...", .opts = table, .max_operands = 2};

/* The state after parsing, as one line. */
static void describe(char *buf, size_t cap, int argc, char **argv, int first)
{
	int n = snprintf(buf, cap,
	                 "env=%s envs=%" PRId64 " seed=%" PRIu64 " lr=%g retry=%" PRId64
	                 " out=%s quiet=%d greedy=%d sets=[",
	                 v.env ? v.env : "-", v.envs, v.seed, v.lr, v.retry, v.out ? v.out : "-", v.quiet,
	                 v.greedy);
	for (int i = 0; i < v.sets.n; i++)
		n += snprintf(buf + n, cap - (size_t)n, "%s%s", i ? "," : "", v.sets.v[i]);
	n += snprintf(buf + n, cap - (size_t)n, "] ops=[");
	for (int i = first; i < argc; i++)
		n += snprintf(buf + n, cap - (size_t)n, "%s%s", i > first ? "," : "", argv[i]);
	snprintf(buf + n, cap - (size_t)n, "]");
}

/* Defaults before every case; "-" prints for an unset string. */
#define D_ENV "env=- envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0"

typedef struct parse_case {
	const char *name;
	const char *words[12]; /* argv[1..], NULL-terminated */
	int rc;
	const char *want; /* describe() on success, the error message on failure */
} parse_case;

static const parse_case cases[] = {
    /* every kind */
    {"nothing", {NULL}, 0, D_ENV " sets=[] ops=[]"},
    {"string, long",
     {"--env", "cartpole", NULL},
     0,
     "env=cartpole envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"string, long with =",
     {"--env=catch", NULL},
     0,
     "env=catch envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"string, empty with =",
     {"--env=", NULL},
     0,
     "env= envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"string value that looks like an option",
     {"--out", "-", "-e", "--x", NULL},
     0,
     "env=--x envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"int, short, separate",
     {"-k", "4", NULL},
     0,
     "env=- envs=4 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"int, short, attached",
     {"-k64", NULL},
     0,
     "env=- envs=64 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"int without a range takes any int64",
     {"--retry-ms", "-9223372036854775808", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.5 retry=-9223372036854775808 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"u64, the largest",
     {"--seed", "18446744073709551615", NULL},
     0,
     "env=- envs=1 seed=18446744073709551615 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"number, range ends included",
     {"--lr", "10", NULL},
     0,
     "env=- envs=1 seed=0 lr=10 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"number, exponent",
     {"--lr=2.5e-1", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.25 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"flags, clustered",
     {"-qg", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=1 greedy=1 sets=[] ops=[]"},
    {"flags then a value in one cluster",
     {"-qk3", NULL},
     0,
     "env=- envs=3 seed=0 lr=0.5 retry=2000 out=- quiet=1 greedy=0 sets=[] ops=[]"},
    {"a cluster's last letter takes the next word",
     {"-gk", "2", NULL},
     0,
     "env=- envs=2 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=1 sets=[] ops=[]"},
    {"repeatable string",
     {"--set", "a=1", "--set=b=2", "--set", "a=3", NULL},
     0,
     D_ENV " sets=[a=1,b=2,a=3] ops=[]"},
    /* repeated options keep the last value */
    {"repeated int and string: the last wins",
     {"-k", "2", "--envs", "5", "-e", "a", "--env", "b", NULL},
     0,
     "env=b envs=5 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    /* prefixes */
    {"an exact name wins over a longer one",
     {"--env", "x", "--envs", "2", NULL},
     0,
     "env=x envs=2 seed=0 lr=0.5 retry=2000 out=- quiet=0 greedy=0 sets=[] ops=[]"},
    {"a unique prefix",
     {"--qui", "--gr", "--retry=7", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.5 retry=7 out=- quiet=1 greedy=1 sets=[] ops=[]"},
    {"an ambiguous prefix", {"--en", "x", NULL}, -EINVAL, "--en: ambiguous option (--env, --envs)"},
    {"a prefix of two options", {"--s", "1", NULL}, -EINVAL, "--s: ambiguous option (--seed, --set)"},
    {"a prefix of a built-in", {"--he", NULL}, SEED_OPTS_HELP, NULL},
    /* operands */
    {"operands mixed with options keep their order",
     {"a", "-q", "b", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=1 greedy=0 sets=[] ops=[a,b]"},
    {"- is an operand",
     {"-", "-q", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=1 greedy=0 sets=[] ops=[-]"},
    {"-- ends the options",
     {"-q", "--", "-g", "--envs", NULL},
     0,
     "env=- envs=1 seed=0 lr=0.5 retry=2000 out=- quiet=1 greedy=0 sets=[] ops=[-g,--envs]"},
    {"too many operands", {"a", "b", "c", NULL}, -EINVAL, "unexpected argument 'c'"},
    /* errors */
    {"unknown long option", {"--bogus", NULL}, -EINVAL, "unknown option '--bogus'"},
    {"unknown long option with a value", {"--bogus=3", NULL}, -EINVAL, "unknown option '--bogus'"},
    {"unknown short option", {"-x", NULL}, -EINVAL, "unknown option '-x'"},
    {"unknown letter inside a cluster", {"-qz", NULL}, -EINVAL, "unknown option '-z'"},
    {"an empty long name", {"--=3", NULL}, -EINVAL, "unknown option '--=3'"},
    {"missing argument, long", {"--envs", NULL}, -EINVAL, "--envs: needs a value (K)"},
    {"missing argument, short", {"-q", "-k", NULL}, -EINVAL, "--envs: needs a value (K)"},
    {"missing argument, default name", {"--lr", NULL}, -EINVAL, "--lr: needs a value (X)"},
    {"a flag given a value", {"--quiet=yes", NULL}, -EINVAL, "--quiet: takes no value"},
    {"not an integer", {"--envs", "4x", NULL}, -EINVAL, "--envs: '4x' is not an integer"},
    {"an empty integer", {"--envs=", NULL}, -EINVAL, "--envs: '' is not an integer"},
    {"blanks before an integer", {"-k", " 4", NULL}, -EINVAL, "--envs: ' 4' is not an integer"},
    {"int below the range", {"-k", "0", NULL}, -EINVAL, "--envs: 0 is out of range [1, 64]"},
    {"int above the range", {"-k", "65", NULL}, -EINVAL, "--envs: 65 is out of range [1, 64]"},
    {"int past int64",
     {"--retry-ms", "9223372036854775808", NULL},
     -EINVAL,
     "--retry-ms: 9223372036854775808 is out of range [-9223372036854775808, 9223372036854775807]"},
    {"u64 negative", {"-s", "-1", NULL}, -EINVAL, "--seed: '-1' is not an unsigned integer"},
    {"u64 past 2^64",
     {"-s", "18446744073709551616", NULL},
     -EINVAL,
     "--seed: 18446744073709551616 is out of range [0, 18446744073709551615]"},
    {"number below the range", {"--lr", "-1", NULL}, -EINVAL, "--lr: -1 is out of range [0, 10]"},
    {"number NaN", {"--lr", "nan", NULL}, -EINVAL, "--lr: 'nan' is not a number"},
    {"number infinite", {"--lr", "inf", NULL}, -EINVAL, "--lr: inf is out of range [0, 10]"},
    {"number, junk after", {"--lr", "1,5", NULL}, -EINVAL, "--lr: '1,5' is not a number"},
    /* help and version, wherever they are */
    {"--help", {"-q", "--help", "--bogus", NULL}, SEED_OPTS_HELP, NULL},
    {"-h in a cluster", {"-qh", NULL}, SEED_OPTS_HELP, NULL},
    {"--version by prefix", {"--vers", NULL}, SEED_OPTS_VERSION, NULL},
    {"-V", {"-V", NULL}, SEED_OPTS_VERSION, NULL},
    {"--help after an error is not reached",
     {"--bogus", "--help", NULL},
     -EINVAL,
     "unknown option '--bogus'"},
};

static void reset(void)
{
	seed_opt_strs_free(&v.sets);
	memset(&v, 0, sizeof v);
	v.envs = 1;
	v.lr = 0.5;
	v.retry = 2000;
}

static void t_parse_table(void)
{
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const parse_case *pc = &cases[c];
		reset();
		char *argv[16] = {"prog"};
		int argc = 1;
		while (pc->words[argc - 1])
			argv[argc] = (char *)pc->words[argc - 1], argc++;
		int first = -1;
		seed_err err = {""};
		int rc = seed_opts_parse(&spec, argc, argv, &first, &err);
		CHECK_MSG(rc == pc->rc, "%s: rc %d, want %d (%s)", pc->name, rc, pc->rc, err.msg);
		if (rc != pc->rc || !pc->want)
			continue;
		char got[512];
		if (rc == 0)
			describe(got, sizeof got, argc, argv, first);
		else
			snprintf(got, sizeof got, "%s", err.msg);
		CHECK_MSG(strcmp(got, pc->want) == 0, "%s:\n#  got  %s\n#  want %s", pc->name, got, pc->want);
		CHECK(strcmp(argv[0], "prog") == 0);
	}
	reset();
}

/* An error leaves the destinations of later options alone and earlier ones
 * written; a bad value never reaches its destination. */
static void t_error_keeps_destinations(void)
{
	reset();
	char *argv[] = {"prog", "-k", "3", "-k", "99", "-e", "x"};
	int first;
	seed_err err;
	CHECK(seed_opts_parse(&spec, 7, argv, &first, &err) == -EINVAL);
	CHECK(v.envs == 3);
	CHECK(v.env == NULL);
	reset();
}

/* The operands move behind the options, the options keep their order. */
static void t_permutation(void)
{
	reset();
	char *argv[] = {"prog", "in", "-k", "2", "--", "-q", NULL};
	int first;
	seed_err err;
	CHECK(seed_opts_parse(&spec, 6, argv, &first, &err) == 0);
	CHECK(first == 4);
	CHECK(strcmp(argv[1], "-k") == 0 && strcmp(argv[2], "2") == 0 && strcmp(argv[3], "--") == 0);
	CHECK(strcmp(argv[4], "in") == 0 && strcmp(argv[5], "-q") == 0);
	CHECK(!v.quiet);
	reset();
}

static void t_strs_free(void)
{
	seed_opt_strs s = {0};
	seed_opt_strs_free(&s);
	seed_opt_strs_free(NULL);
	const seed_opt t[] = {{.name = "set", .kind = SEED_OPT_STRS, .dest = &s}, {0}};
	const seed_opts sp = {.opts = t, .max_operands = 0};
	char *argv[] = {"prog", "--set", "a", "--set", "b"};
	int first;
	seed_err err;
	CHECK(seed_opts_parse(&sp, 5, argv, &first, &err) == 0);
	CHECK(s.n == 2 && strcmp(s.v[0], "a") == 0 && strcmp(s.v[1], "b") == 0);
	CHECK(first == 5);
	seed_opt_strs_free(&s);
	CHECK(s.n == 0 && s.v == NULL);
}

/* seen tells a default from the same value given: --seed 0. */
static void t_seen(void)
{
	uint64_t seed = 0;
	bool seen = false;
	const seed_opt t[] = {{.name = "seed", .kind = SEED_OPT_U64, .dest = &seed, .seen = &seen}, {0}};
	const seed_opts sp = {.opts = t, .max_operands = 0};
	seed_err err;
	int first;
	char *none[] = {"prog"};
	CHECK(seed_opts_parse(&sp, 1, none, &first, &err) == 0 && !seen);
	char *bad[] = {"prog", "--seed", "x"};
	CHECK(seed_opts_parse(&sp, 3, bad, &first, &err) == -EINVAL && !seen);
	char *zero[] = {"prog", "--seed", "0"};
	CHECK(seed_opts_parse(&sp, 3, zero, &first, &err) == 0 && seen && seed == 0);
}

/* Random command lines from words that exercise every path: the parser
 * answers each with one of its four results, and a good line leaves argv a
 * permutation of itself with the operands last. */
static void t_random_command_lines(void)
{
	static char *const pool[] = {"-",     "--",     "-k",     "-k4",      "--envs=", "--env",   "x",
	                             "--set", "-qg",    "--lr",   "1e3",      "0.5",     "--bogus", "-z",
	                             "--s",   "--=",    "-qk",    "--quiet=", "-O",      "--out",   "-h",
	                             "--ver", "-s-1",   "--seed", "--en",     "--retry", "-gq",     "-e",
	                             "",      "--help", "--lr=",  "-k99"};
	const int npool = (int)(sizeof pool / sizeof pool[0]);
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	for (int n = 0; n < 20000; n++) {
		reset();
		char *argv[10] = {"prog"}, *orig[10];
		int argc = 1 + (int)seed_rng_below(&rng, 9);
		for (int i = 1; i < argc; i++)
			argv[i] = pool[seed_rng_below(&rng, (uint32_t)npool)];
		memcpy(orig, argv, sizeof argv);
		int first = -1;
		seed_err err = {""};
		int rc = seed_opts_parse(&spec, argc, argv, &first, &err);
		bool known = rc == 0 || rc == -EINVAL || rc == SEED_OPTS_HELP || rc == SEED_OPTS_VERSION;
		CHECK_MSG(known, "rc %d", rc);
		CHECK(rc != -EINVAL || err.msg[0] != '\0');
		if (rc != 0)
			continue;
		CHECK(first >= 1 && first <= argc);
		/* The same words, each used once. */
		for (int i = 1; i < argc; i++) {
			int want = 0, got = 0;
			for (int j = 1; j < argc; j++) {
				want += orig[j] == orig[i];
				got += argv[j] == orig[i];
			}
			CHECK(want == got);
		}
		/* The operands keep their order. */
		int k = first;
		for (int i = 1; i < argc && k < argc; i++)
			if (orig[i] == argv[k])
				k++;
		CHECK_MSG(k == argc, "operands out of order");
	}
	reset();
}

/* ---- faulty tables ----------------------------------------------------------- */

static bool flag_a, flag_b;
static int64_t int_a;

typedef struct table_case {
	const char *name;
	seed_opt t[3];
	const char *want;
} table_case;

static const table_case table_cases[] = {
    {"duplicate name",
     {{.name = "a", .kind = SEED_OPT_FLAG, .dest = &flag_a},
      {.name = "a", .kind = SEED_OPT_FLAG, .dest = &flag_b}},
     "option table: --a twice"},
    {"duplicate letter",
     {{.name = "a", .letter = 'x', .kind = SEED_OPT_FLAG, .dest = &flag_a},
      {.name = "b", .letter = 'x', .kind = SEED_OPT_FLAG, .dest = &flag_b}},
     "option table: -x for --a and --b"},
    {"letter h is built in",
     {{.name = "hwm", .letter = 'h', .kind = SEED_OPT_FLAG, .dest = &flag_a}},
     "option table: --hwm: --help/-h and --version/-V are built in"},
    {"--version is built in",
     {{.name = "version", .kind = SEED_OPT_FLAG, .dest = &flag_a}},
     "option table: --version: --help/-h and --version/-V are built in"},
    {"no destination", {{.name = "a", .kind = SEED_OPT_FLAG}}, "option table: --a: no destination"},
    {"empty range",
     {{.name = "a", .kind = SEED_OPT_INT, .dest = &int_a, .min = 2, .max = 1}},
     "option table: --a: empty range"},
    {"name with a dash",
     {{.name = "-a", .kind = SEED_OPT_FLAG, .dest = &flag_a}},
     "option table: bad name '-a'"},
};

static void t_bad_tables(void)
{
	for (size_t c = 0; c < sizeof table_cases / sizeof table_cases[0]; c++) {
		const table_case *tc = &table_cases[c];
		seed_opts sp = {.opts = tc->t, .max_operands = -1};
		char *argv[] = {"prog", NULL};
		int first = 7;
		seed_err err = {""};
		/* Checked before any word: even an empty command line fails. */
		int rc = seed_opts_parse(&sp, 1, argv, &first, &err);
		CHECK_MSG(rc == -EFAULT, "%s: rc %d", tc->name, rc);
		CHECK_MSG(strcmp(err.msg, tc->want) == 0, "%s: got '%s'", tc->name, err.msg);
		CHECK(first == 7);
	}
}

/* ---- help and usage ------------------------------------------------------------ */

static const char *s_name;
static int64_t s_envs, s_retry;
static bool s_quiet;

static const seed_opt help_table[] = {
    {.name = "env",
     .letter = 'e',
     .kind = SEED_OPT_STR,
     .dest = &s_name,
     .arg = "NAME",
     .help = "environment to play"},
    {.name = "envs",
     .letter = 'k',
     .kind = SEED_OPT_INT,
     .dest = &s_envs,
     .arg = "K",
     .min = 1,
     .max = 8,
     .help = "environments stepped side by side in one vector, a help text long enough that it must be "
             "wrapped twice at the eightieth column of the terminal"},
    {.name = "retry-ms",
     .kind = SEED_OPT_INT,
     .dest = &s_retry,
     .arg = "MS",
     .help = "resend after MS ms\n(default 2000)"},
    {.name = "quiet", .letter = 'q', .kind = SEED_OPT_FLAG, .dest = &s_quiet, .help = "no summary"},
    {.name = "a-very-long-option-name", .kind = SEED_OPT_STR, .dest = &s_name, .help = "long"},
    {0},
};

static const seed_opts help_spec = {
    .usage = "--env NAME [OPTION]...\n--list",
    .summary = "Play things.",
    .epilogue = "  Examples: prog -e x\n\nSee prog(1).",
    .opts = help_table,
    .max_operands = 0,
};

/* From tests/golden/opts_help_ref.py (Python's textwrap): the widest left part
 * of at most 28 characters is "      --retry-ms MS" (19), so help starts at
 * column 21; the long name's left part (37) is followed by two spaces; words
 * wrap before column 81. */
static const char help_golden[] =
    "Usage: prog --env NAME [OPTION]...\n"
    "       prog --list\n"
    "Play things.\n"
    "\n"
    "  -e, --env NAME     environment to play\n"
    "  -k, --envs K       environments stepped side by side in one vector, a help\n"
    "                     text long enough that it must be wrapped twice at the\n"
    "                     eightieth column of the terminal\n"
    "      --retry-ms MS  resend after MS ms\n"
    "                     (default 2000)\n"
    "  -q, --quiet        no summary\n"
    "      --a-very-long-option-name VALUE  long\n"
    "  -h, --help         show this help and exit\n"
    "  -V, --version      show the version and exit\n"
    "\n"
    "  Examples: prog -e x\n"
    "\n"
    "See prog(1).\n";

static void t_help(void)
{
	seed_buf b = {0};
	seed_opts_help(&help_spec, "prog", &b);
	seed_buf_append(&b, "", 1);
	const char *got = (const char *)b.data;
	CHECK_MSG(strcmp(got, help_golden) == 0, "got:\n%s", got);
	/* The rule itself, independently of the golden text: no line of the
	 * options is wider than 80 columns. */
	for (const char *p = got; *p;) {
		size_t n = strcspn(p, "\n");
		CHECK_MSG(n <= 80, "line too wide: %.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
	seed_buf_free(&b);
}

static void t_usage(void)
{
	seed_buf b = {0};
	seed_opts_usage(&help_spec, "prog", &b);
	seed_buf_append(&b, "", 1);
	CHECK_MSG(strcmp((const char *)b.data, "usage: prog --env NAME [OPTION]...\n"
	                                       "       prog --list\n"
	                                       "Try 'prog --help' for more information.\n") == 0,
	          "got:\n%s", (const char *)b.data);
	seed_buf_free(&b);
	const seed_opts bare = {.opts = help_table + 5, .max_operands = 0};
	seed_opts_usage(&bare, "prog", &b);
	seed_buf_append(&b, "", 1);
	CHECK(strcmp((const char *)b.data, "usage: prog\nTry 'prog --help' for more information.\n") == 0);
	seed_buf_free(&b);
}

/* The value parsers on their own. */
static void t_value_parsers(void)
{
	int64_t i = 7;
	uint64_t u = 7;
	double x = 7;
	seed_err err;
	CHECK(seed_opts_int("n", "-3", -5, 5, &i, &err) == 0 && i == -3);
	CHECK(seed_opts_int("n", "6", -5, 5, &i, &err) == -EINVAL && i == -3);
	CHECK(strcmp(err.msg, "n: 6 is out of range [-5, 5]") == 0);
	CHECK(seed_opts_int("n", "+4", -5, 5, &i, &err) == 0 && i == 4);
	CHECK(seed_opts_u64("s", "+4", &u, &err) == -EINVAL && u == 7);
	CHECK(strcmp(err.msg, "s: '+4' is not an unsigned integer") == 0);
	CHECK(seed_opts_num("x", "1e-320", 0, 0, &x, &err) == 0 && x > 0 && x < 1e-300);
	CHECK(seed_opts_num("x", "1e999", 0, 0, &x, &err) == -EINVAL);
	CHECK(strcmp(err.msg, "x: 1e999 is out of range [-1.79769e+308, 1.79769e+308]") == 0);
}

int main(void)
{
	TAP_RUN(t_parse_table);
	TAP_RUN(t_error_keeps_destinations);
	TAP_RUN(t_permutation);
	TAP_RUN(t_strs_free);
	TAP_RUN(t_seen);
	TAP_RUN(t_random_command_lines);
	TAP_RUN(t_bad_tables);
	TAP_RUN(t_help);
	TAP_RUN(t_usage);
	TAP_RUN(t_value_parsers);
	return tap_done();
}
