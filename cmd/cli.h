/* cmd/cli.h: what every Seed program shares on its command line.
 *
 * Programs describe their options in a seed_opts table (seed/opts.h) and call
 * cli_parse; these helpers keep the behaviour the same everywhere: --help
 * prints the help generated from the table to stdout and exits 0, --version
 * prints "PROG (seed) VERSION", misuse prints "PROG: what was wrong" and the
 * short usage on stderr and exits 2, runtime failures print "PROG: what: why"
 * and exit 1, and SIGINT/SIGTERM set a flag the main loop polls (a second
 * signal ends the program at once).
 */
#ifndef SEED_CMD_CLI_H
#define SEED_CMD_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "seed/opts.h"

/* The program name used in messages (set by cli_parse from argv[0]). */
extern const char *cli_prog;
/* Set to the signal number by SIGINT/SIGTERM once cli_catch_signals ran. */
extern volatile sig_atomic_t cli_stop;

/* Remember the program name (argv[0]) and its options, then parse argv by
 * spec (seed_opts_parse): --help and --version print and exit 0, a misuse is
 * a usage error (exit 2).  Returns the index of the first operand in the
 * permuted argv (argc when there is none). */
int cli_parse(const seed_opts *spec, int argc, char **argv);
/* Catch SIGINT and SIGTERM into cli_stop; ignore SIGPIPE. */
void cli_catch_signals(void);

/* "PROG: message" on stderr, then the usage line and a hint; exit 2. */
noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: message" on stderr; exit 1. */
noreturn void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: message" on stderr; exit 2: a configuration that cannot work (an
 * unknown environment or option, a value out of range), which a supervisor
 * must not restart as it would a crash (seed-train(1)). */
noreturn void cli_config_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: message" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "PROG (seed) VERSION" to stdout and exit 0. */
noreturn void cli_version(void);

#endif
