/* cmd/secure.h: the CURVE options of every program that opens sockets.
 *
 *   --curve-key FILE     this program's key pair (seed-keygen's NAME.key)
 *   --curve-server FILE  the public key (NAME.pub) of the servers it connects to
 *   --curve-allow DIR    the .pub files of the clients allowed to connect to
 *                        the sockets it binds (read once, at start)
 *
 * With --curve-key every ZeroMQ socket of the program uses CURVE: a bound
 * socket is a CURVE server judged by a ZAP handler over the allow
 * directory, a connecting one a client of --curve-server.  Without it, a
 * tcp:// endpoint that leaves the machine is warned about, once.  Failed
 * handshakes are said on stderr (rate-limited, see seed_chan(3)).
 */
#ifndef SEED_CMD_SECURE_H
#define SEED_CMD_SECURE_H

#include <stdbool.h>

#include "seed/chan.h"
#include "seed/opts.h"

/* The options' values (filled by the entries of CLI_CURVE_OPTIONS). */
extern struct cli_curve_opts {
	const char *key, *server, *allow;
} cli_curve;

/* The three entries, for a program's seed_opt table. */
#define CLI_CURVE_OPTIONS                                                                                    \
	{"curve-key",                                                                                        \
	 0,                                                                                                  \
	 SEED_OPT_STR,                                                                                       \
	 &cli_curve.key,                                                                                     \
	 "FILE",                                                                                             \
	 .help = "this program's CURVE key pair (a .key file from seed-keygen): every socket is encrypted"}, \
	    {"curve-server", 0,                                                                              \
	     SEED_OPT_STR,   &cli_curve.server,                                                              \
	     "FILE",         .help = "the public key (.pub) of the servers this program connects to"},       \
	{                                                                                                    \
		"curve-allow", 0, SEED_OPT_STR, &cli_curve.allow, "DIR",                                     \
		    .help =                                                                                  \
		        "the .pub files of the clients allowed to connect to the sockets this program binds" \
	}

/* Read the key files the options name; a bad file ends the program (exit
 * 1), --curve-server or --curve-allow without --curve-key is a usage
 * error.  Call once, after cli_parse. */
void cli_curve_load(void);

/* Fill o's security fields (curve_key, curve_server, log) for a channel on
 * endpoint that binds when o->bind (or the endpoint's '@'/'>' says so).
 * With a key, binding needs --curve-allow (the ZAP handler starts on ctx
 * the first time) and connecting needs --curve-server: a usage error
 * otherwise.  Files are left alone.  what names the option in messages. */
void cli_curve_chan(void *ctx, seed_chan_opts *o, const char *endpoint, const char *what);

/* Stop the ZAP handler; call after the channels are closed, before the
 * context is freed. */
void cli_curve_stop(void);

/* The peers refused by the bound ones of chans[0..n) (NULL entries are
 * skipped; a refusal by the ZAP handler is one of them): "PROG: refused N
 * peers ..." on stderr when CURVE is on or any was refused; quiet prints
 * only the latter. */
void cli_curve_report(seed_chan *const *chans, int n, bool quiet);

#endif
