/* cmd/cli.c: shared command-line behaviour of the Seed programs. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

const char *cli_prog = "seed";
volatile sig_atomic_t cli_stop;
static const char *cli_usage_line = "";

void cli_init(int argc, char **argv, const char *usage)
{
	(void)argc;
	const char *p = argv[0] ? strrchr(argv[0], '/') : NULL;
	cli_prog = p ? p + 1 : (argv[0] ? argv[0] : "seed");
	/* libtool's uninstalled wrappers run "lt-NAME": report NAME. */
	if (strncmp(cli_prog, "lt-", 3) == 0)
		cli_prog += 3;
	cli_usage_line = usage;
}

static void on_signal(int sig)
{
	if (cli_stop) {
		/* Second signal: the user insists. */
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
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	fprintf(stderr, "usage: %s %s\nTry '%s --help' for more information.\n", cli_prog, cli_usage_line,
	        cli_prog);
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

void cli_help(const char *text)
{
	fputs(text, stdout);
	exit(0);
}

long long cli_int(const char *opt, const char *arg, long long min, long long max)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end)
		cli_usage_error("%s: '%s' is not an integer", opt, arg);
	if (v < min || v > max)
		cli_usage_error("%s: %lld is out of range [%lld, %lld]", opt, v, min, max);
	return v;
}

uint64_t cli_u64(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	if (arg[0] == '-')
		cli_usage_error("%s: '%s' must not be negative", opt, arg);
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end)
		cli_usage_error("%s: '%s' is not an unsigned integer", opt, arg);
	return (uint64_t)v;
}

double cli_double(const char *opt, const char *arg, double min, double max)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || *end || isnan(v))
		cli_usage_error("%s: '%s' is not a number", opt, arg);
	if (v < min || v > max)
		cli_usage_error("%s: %g is out of range [%g, %g]", opt, v, min, max);
	return v;
}

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
