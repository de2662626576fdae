/* cmd/secure.c: the CURVE options shared by the programs (see secure.h).
 *
 * Process-wide state, as the options are: the key pair and the server's
 * public key read once, the one ZAP handler of the program's context, and
 * whether the warning about an unencrypted network endpoint was given. */
#include "secure.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "seed/curve.h"

struct cli_curve_opts cli_curve;

static seed_curve_key key, server;
static bool have_key, warned;
static seed_zap *zap;

/* Called from monitor and ZAP threads: one line, not interleaved with
 * another thread's. */
static void log_cb(void *arg, const char *msg)
{
	flockfile(stderr);
	cli_warn("%s", msg);
	funlockfile(stderr);
}

void cli_curve_load(void)
{
	seed_err err;
	if (!cli_curve.key && (cli_curve.server || cli_curve.allow))
		cli_usage_error("%s needs --curve-key (this program's own key pair)",
		                cli_curve.server ? "--curve-server" : "--curve-allow");
	if (!cli_curve.key)
		return;
	if (!seed_curve_available())
		cli_die("--curve-key: this libzmq was built without CURVE");
	if (seed_curve_read(cli_curve.key, &key, true, &err))
		cli_die("--curve-key: %s", err.msg);
	if (cli_curve.server && seed_curve_read(cli_curve.server, &server, false, &err))
		cli_die("--curve-server: %s", err.msg);
	have_key = true;
}

static bool binds(const char *endpoint, bool dflt)
{
	return endpoint[0] == '@' ? true : endpoint[0] == '>' ? false : dflt;
}

void cli_curve_chan(void *ctx, seed_chan_opts *o, const char *endpoint, const char *what)
{
	const char *url = endpoint[0] == '@' || endpoint[0] == '>' ? endpoint + 1 : endpoint;
	if (!strstr(url, "://"))
		return; /* a file or -: nothing crosses a network */
	o->log = log_cb;
	if (!have_key) {
		if (!warned && seed_chan_leaves_host(endpoint)) {
			cli_warn(
			    "%s %s: no CURVE keys: frames cross the network in the clear and any host that "
			    "reaches the port may connect (see seed-keygen(1), --curve-key)",
			    what, url);
			warned = true;
		}
		return;
	}
	o->curve_key = &key;
	if (binds(endpoint, o->bind)) {
		if (!cli_curve.allow)
			cli_usage_error(
			    "%s %s: binding with --curve-key needs --curve-allow DIR (the clients' "
			    "public keys)",
			    what, url);
		seed_err err;
		if (!zap && seed_zap_start(&zap, ctx, cli_curve.allow, log_cb, NULL, &err))
			cli_die("--curve-allow: %s", err.msg);
	} else {
		if (!cli_curve.server)
			cli_usage_error("%s %s: connecting with --curve-key needs --curve-server FILE (the "
			                "server's public key)",
			                what, url);
		o->curve_server = server.pub;
	}
}

void cli_curve_stop(void)
{
	seed_zap_stop(&zap);
}

void cli_curve_report(seed_chan *const *chans, int n, bool quiet)
{
	uint64_t refused = 0;
	for (int i = 0; i < n; i++)
		if (chans[i] && seed_chan_bound(chans[i]))
			refused += seed_chan_refused(chans[i]);
	if (refused == 0 && (quiet || !have_key))
		return;
	fprintf(stderr,
	        "%s: refused %" PRIu64 " peer%s (failed handshakes: no CURVE keys, another server key, "
	        "or a public key not in --curve-allow)\n",
	        cli_prog, refused, refused == 1 ? "" : "s");
}
