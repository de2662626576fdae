/* seed/opts.h: one table-driven command-line parser for every Seed program.
 *
 * A program describes its options in a table of seed_opt (long name, short
 * letter, kind, where the value goes, argument name, range, help text) and
 * hands it, with its synopsis, summary and epilogue, to seed_opts_parse.
 * The same table generates the --help text (seed_opts_help) and the short
 * usage printed on misuse (seed_opts_usage), so the wording of errors, the
 * layout of the help and the meaning of -h/--help and -V/--version are the
 * same in every program.  The letters all programs share are listed in
 * seed_opts(3).
 *
 * Syntax (as GNU getopt_long): --name VALUE, --name=VALUE, an unambiguous
 * prefix of a long name (an exact name always wins), -k VALUE, -kVALUE,
 * clustered flags (-qg); options and operands may be mixed; "--" ends the
 * options and "-" alone is an operand.  An option given twice keeps the
 * last value, except SEED_OPT_STRS, which keeps every one in order.
 *
 * Invariants: the parser never prints and never exits; it writes a
 * destination only when its option is given with a good value; string
 * values point into argv (no copies).  Threads: no global state.
 */
#ifndef SEED_OPTS_H
#define SEED_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/buf.h"
#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum seed_opt_kind {
	SEED_OPT_FLAG, /* no argument; dest is bool *, set to true */
	SEED_OPT_INT,  /* dest is int64_t *, a decimal integer in [min, max] */
	SEED_OPT_U64,  /* dest is uint64_t *, a decimal integer in [0, 2^64) */
	SEED_OPT_NUM,  /* dest is double *, a number in [lo, hi] (never NaN) */
	SEED_OPT_STR,  /* dest is const char **, pointing into argv */
	SEED_OPT_STRS, /* dest is seed_opt_strs *: every value, in order */
} seed_opt_kind;

/* The values of a repeatable option.  Zero-initialise before parsing; free
 * the array with seed_opt_strs_free (the strings belong to argv). */
typedef struct seed_opt_strs {
	const char **v;
	int n;
} seed_opt_strs;

typedef struct seed_opt {
	const char *name; /* long name without "--"; NULL ends the table */
	char letter;      /* short letter, or 0 for none */
	seed_opt_kind kind;
	void *dest;       /* where the value goes (type by kind) */
	const char *arg;  /* argument name in help and errors; NULL: N, X or VALUE */
	int64_t min, max; /* SEED_OPT_INT: the range; both 0: any int64_t */
	double lo, hi;    /* SEED_OPT_NUM: the range; both 0: any finite number */
	const char *help; /* one paragraph, wrapped by seed_opts_help; '\n' breaks */
	bool *seen;       /* optional: set to true when the option is given */
} seed_opt;

typedef struct seed_opts {
	const char *usage;    /* the synopsis after the program's name; several
	                       * synopses separated by '\n' */
	const char *summary;  /* what the program does, under the synopsis */
	const char *epilogue; /* paragraphs after the options in --help, or NULL */
	const seed_opt *opts; /* the table, ended by an entry whose name is NULL */
	int max_operands;     /* operands the program takes at most; -1: any */
} seed_opts;

/* What seed_opts_parse found besides options to store. */
enum {
	SEED_OPTS_HELP = 1,    /* -h or --help: print seed_opts_help, exit 0 */
	SEED_OPTS_VERSION = 2, /* -V or --version: print the version, exit 0 */
};

/* Parse argv[1 .. argc) by spec: store every option's value in its dest and
 * move the operands, in their order, to the end of argv, *first being the
 * index of the first (argc when there is none).  -h/--help and -V/--version
 * are understood without being in the table: parsing stops at the first of
 * them and returns SEED_OPTS_HELP or SEED_OPTS_VERSION (argv and *first are
 * then unspecified).  Returns 0 when the command line is good.
 * Errors: -EINVAL for a misuse, with err saying what was wrong ("--envs: 0
 * is out of range [1, 64]", "unknown option '--bogus'"; seed_opts(3) lists
 * the wordings) and dests of earlier options already written; -EFAULT for a
 * faulty table (a duplicate name or letter, a NULL dest, h or V, an empty
 * range), with err naming the entry.  Allocation: SEED_OPT_STRS arrays (and a
 * scratch array of argc pointers, freed before returning). */
int seed_opts_parse(const seed_opts *spec, int argc, char **argv, int *first, seed_err *err);

/* Append the --help text of prog to out: "Usage: prog SYNOPSIS" (a line per
 * synopsis), the summary, the options with their help aligned and wrapped at
 * 80 columns (-h and -V last), then the epilogue. */
void seed_opts_help(const seed_opts *spec, const char *prog, seed_buf *out);

/* Append the short usage for a misuse: "usage: prog SYNOPSIS" (a line per
 * synopsis) and "Try 'prog --help' for more information.". */
void seed_opts_usage(const seed_opts *spec, const char *prog, seed_buf *out);

/* The value parsers of the kinds above, for values that come from elsewhere
 * (a program's own checks): name is what errors call the value.  0 with
 * *out set, or -EINVAL with err in the parser's wording.  min == max == 0
 * (lo == hi == 0) means any value, as in the table. */
int seed_opts_int(const char *name, const char *arg, int64_t min, int64_t max, int64_t *out, seed_err *err);
int seed_opts_u64(const char *name, const char *arg, uint64_t *out, seed_err *err);
int seed_opts_num(const char *name, const char *arg, double lo, double hi, double *out, seed_err *err);

/* Free a repeatable option's array (NULL or empty is fine); s is then empty. */
void seed_opt_strs_free(seed_opt_strs *s);

#ifdef __cplusplus
}
#endif
#endif
