/* seed-keygen: make a CURVE key pair for Seed's encrypted sockets.
 *
 *   seed-keygen NAME     writes NAME.key (public and secret key, mode 0600)
 *                        and NAME.pub (the public key), prints the public key
 *
 * Option parsing and output only: the keys come from libzmq
 * (zmq_curve_keypair, the system's random generator) and the files are
 * written by seed_curve_write (seed/curve.h), each whole or not at all.
 */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "seed/curve.h"
#include "seed/opts.h"

static struct {
	bool force;
} opt;

static const seed_opt options[] = {
    {"force", 0, SEED_OPT_FLAG, &opt.force, .help = "replace NAME.key and NAME.pub if they exist"},
    {0},
};

static const seed_opts spec = {
    .usage = "[--force] NAME",
    .summary = "Write a new CURVE key pair: NAME.key (public and secret key, mode 0600) and\n"
               "NAME.pub (the public key, to give to the peers); print the public key.",
    .epilogue = "Give NAME.key to this program's --curve-key, NAME.pub to its peers'\n"
                "--curve-server (when it is a server) or copy it into their --curve-allow\n"
                "directory (when it is a client).  See seed-keygen(1).\n",
    .opts = options,
    .max_operands = 1,
};

int main(int argc, char **argv)
{
	int first = cli_parse(&spec, argc, argv);
	if (first >= argc)
		cli_usage_error("a NAME is required (the key files are NAME.key and NAME.pub)");
	const char *name = argv[first];
	seed_curve_key k;
	seed_err err;
	if (seed_curve_keypair(&k, &err))
		cli_die("%s", err.msg);
	if (seed_curve_write(name, &k, opt.force, &err))
		cli_die("%s", err.msg);
	printf("%s\n", k.pub);
	return fflush(stdout) == 0 ? 0 : 1;
}
