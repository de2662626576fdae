/* cmd/cli.c: shared command-line behaviour of the Seed programs. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "seed/buf.h"

const char *cli_prog = "seed";
volatile sig_atomic_t cli_stop;
/* The program's synopsis for usage errors, from its seed_opts (cli_parse). */
static seed_opts cli_spec = {.usage = ""};

static void set_prog(int argc, char **argv)
{
	const char *a0 = argc > 0 ? argv[0] : NULL;
	const char *p = a0 ? strrchr(a0, '/') : NULL;
	cli_prog = p ? p + 1 : (a0 ? a0 : "seed");
	/* libtool's uninstalled wrappers run "lt-NAME": report NAME. */
	if (strncmp(cli_prog, "lt-", 3) == 0)
		cli_prog += 3;
}

int cli_parse(const seed_opts *spec, int argc, char **argv)
{
	set_prog(argc, argv);
	cli_spec = *spec;
	int first;
	seed_err err;
	int rc = seed_opts_parse(spec, argc, argv, &first, &err);
	if (rc == SEED_OPTS_HELP) {
		seed_buf b = {0};
		seed_opts_help(spec, cli_prog, &b);
		fwrite(b.data, 1, b.len, stdout);
		seed_buf_free(&b);
		if (fflush(stdout) != 0)
			exit(1);
		exit(0);
	}
	if (rc == SEED_OPTS_VERSION)
		cli_version();
	if (rc == -EFAULT)
		cli_die("%s", err.msg); /* the program's own table is wrong: a bug */
	if (rc)
		cli_usage_error("%s", err.msg);
	return first;
}

/* The first stop signal taken (0 before): an atomic, so that of two
 * handlers running at once exactly one sees the other's signal.  Two can:
 * a signal whose handler frame is set up when the process is stopped runs
 * after a second one delivered on resuming (nested above it, or on
 * another thread), and with a plain read both saw 0 and the second signal
 * was lost. */
static atomic_int first_stop;

static void on_signal(int sig)
{
	/* A repeated SIGTERM is the same request again: timeout, Slurm,
	 * systemd and seed-train's supervisors signal a process and its group
	 * together, and the program must still finish what it writes on the
	 * way out (the learner's checkpoint).  Any other second signal (a
	 * second Ctrl-C, SIGINT after SIGTERM or SIGTERM after SIGINT): the
	 * user insists, and the signal whose handler runs second ends the
	 * process by its default action. */
	int first = 0;
	if (!atomic_compare_exchange_strong(&first_stop, &first, sig) &&
	    !(sig == SIGTERM && first == SIGTERM)) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	cli_stop = sig;
}

void cli_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* SIGTERM first: once SIGINT is no longer ignored, both are caught
	 * (tests/cli/helpers.bash's wait_for_handler relies on it under
	 * valgrind, which catches every signal itself). */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	seed_buf b = {0};
	seed_opts_usage(&cli_spec, cli_prog, &b);
	fwrite(b.data, 1, b.len, stderr);
	seed_buf_free(&b);
	exit(2);
}

void cli_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(1);
}

void cli_config_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(2);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void cli_version(void)
{
	printf("%s (seed) %s\n", cli_prog, PACKAGE_VERSION);
	exit(0);
}
