/* config_internal.h: the key table of seed/config.h, shared by config.c
 * (which reads, checks and writes configurations by it) and config_keys.c
 * (the table itself, one row per key); private to lib/rl. */
#ifndef SEED_RL_CONFIG_INTERNAL_H
#define SEED_RL_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/config.h"

enum type {
	T_SECTION,    /* an object holding the rows named "NAME.*" */
	T_INT,        /* int */
	T_I64,        /* int64_t */
	T_U64,        /* uint64_t (from 0 to 2^63-1: JSON integers are signed) */
	T_FLOAT,      /* float */
	T_DOUBLE,     /* double */
	T_OPT_DOUBLE, /* double; null or left out: NAN, none */
	T_BOOL,       /* bool */
	T_CHOICE,     /* an enum: one of the names of choices, as a string */
	T_STRING,     /* const char *, pointing into root */
	T_OBJECT,     /* char *, the object as compact JSON text (owned) */
	T_ANY,        /* any JSON value, not read */
};

/* When a row's resolved value is written back into the configuration: a
 * run records the settings of its own algorithm and optimizer kind, not
 * the defaults of the others. */
enum when {
	W_NEVER,   /* left as given (or absent) */
	W_ALWAYS,  /* always */
	W_ABSENT,  /* only when absent (env_options: {}) */
	W_ADAM,    /* optimizer.kind adam */
	W_RMSPROP, /* optimizer.kind rmsprop */
	W_R2D2,    /* algorithm r2d2 */
	W_PPO,     /* algorithm ppo */
	W_EVO,     /* algorithm es, ga or rs */
};

enum {
	F_REQUIRED = 1, /* T_STRING, T_OBJECT: no default; refused as "'KEY' (DOC) is required" */
	F_ONE_LINE = 2, /* T_STRING: no newline */
	F_KNOWN = 4,    /* T_CHOICE: refused as "'KEY' = 'VALUE' (known: a, b)" */
};

struct choice {
	const char *name;
	int value;
};

/* One key.  The defaults of rows are those of seed-config(5) (a test holds
 * the manual to this table); dflt_of, where set, changes the default with
 * rows read before it, and dflt_note says how, for the manual. */
struct key {
	const char *name; /* dotted for a key inside a section: "optimizer.lr" */
	enum type type;
	size_t off;                   /* in seed_config */
	double dflt;                  /* numbers; T_BOOL 0 or 1; T_CHOICE the value */
	double lo, hi;                /* T_FLOAT, T_DOUBLE, T_OPT_DOUBLE */
	int64_t min, max;             /* T_INT, T_I64, T_U64 */
	const struct choice *choices; /* T_CHOICE, ending with a NULL name */
	double (*dflt_of)(const seed_config *c, double dflt);
	const char *dflt_note;
	enum when when;
	unsigned flags;
	const char *doc; /* one line of meaning */
};

/* Every key, in the order they are read (a default may depend on a row
 * above it) and written back (config_keys.c). */
extern const struct key config_keys[];
extern const size_t config_nkeys;

#endif
