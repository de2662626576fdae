/* seed-infer: the central inference server.
 *
 * Option parsing and wiring: the service itself (sessions per actor half,
 * the batching window, acting, unroll assembly, error frames) is
 * seed_serve(3).  This program opens the channels (ROUTER for the actors,
 * PUSH for unrolls, SUB for a learner's parameters), loads a checkpoint
 * when asked, feeds parameters to the service, runs the receive loop and
 * prints statistics.
 *
 * The unroll channel is a PUSH socket with a bounded queue: when the
 * consumer falls behind, sends block, the server stops answering, and the
 * actors wait (SEED's backpressure).  Nothing is dropped silently.
 */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/frame.h"
#include "seed/serve.h"

static const char usage[] = "--bind ENDPOINT (--policy random | --model SOURCE) [OPTION]...";

static const char help[] =
    "Usage: seed-infer --bind ENDPOINT (--policy random | --model SOURCE) [OPTION]...\n"
    "Serve actions to Seed actors from one batched policy; assemble their unrolls.\n"
    "\n"
    "  -b, --bind ENDPOINT       where actors connect (binds; tcp://, ipc://; '>' to connect)\n"
    "  -p, --policy random       uniform random actions\n"
    "  -m, --model SOURCE        a model: a learner's parameter endpoint (connects; the newest\n"
    "                            parameters are used as they come), or a checkpoint (DIR or FILE)\n"
    "  -g, --greedy              take the most likely action instead of sampling\n"
    "  -B, --max-batch N         answer once N env rows are waiting (default 256)\n"
    "  -t, --timeout-us T        ... or T microseconds after the first request (default 500)\n"
    "  -u, --unrolls ENDPOINT    push unrolls and episode frames here (binds; or a file, or -)\n"
    "  -T, --unroll-length T     steps per unroll, plus one overlapping step (default 20)\n"
    "      --hwm N               unroll frames queued before sends block (default 64)\n"
    "  -s, --seed S              seed for the policy's sampling (default 0)\n"
    "      --stats-interval SEC  print statistics on stderr every SEC seconds (default 10; 0: never)\n"
    "      --idle-expiry SEC     forget an actor half silent for SEC seconds (default 60)\n"
    "      --max-halves N        keep at most N actor halves, evicting the longest idle (default 4096)\n"
    "      --max-memory MIB      ... holding at most MIB MiB in all (default 1024)\n"
    "      --max-envs K          refuse step frames of more than K environments (default 65536)\n"
    "      --max-actions A       ... or more than A actions (default 65536)\n"
    "      --max-obs-bytes N     ... or observations of more than N bytes each (default 4194304)\n"
    "  -q, --quiet               no statistics and no summary on stderr\n"
    "  -h, --help                show this help and exit\n"
    "  -V, --version             show the version and exit\n"
    "\n"
    "See seed-infer(1) and seed-frames(7).\n";

enum { OPT_HWM = 256, OPT_STATS, OPT_EXPIRY, OPT_HALVES, OPT_MEMORY, OPT_ENVS, OPT_ACTIONS, OPT_OBS };

static const struct option options[] = {
    {"bind", required_argument, NULL, 'b'},
    {"policy", required_argument, NULL, 'p'},
    {"model", required_argument, NULL, 'm'},
    {"greedy", no_argument, NULL, 'g'},
    {"max-batch", required_argument, NULL, 'B'},
    {"timeout-us", required_argument, NULL, 't'},
    {"unrolls", required_argument, NULL, 'u'},
    {"unroll-length", required_argument, NULL, 'T'},
    {"hwm", required_argument, NULL, OPT_HWM},
    {"seed", required_argument, NULL, 's'},
    {"stats-interval", required_argument, NULL, OPT_STATS},
    {"idle-expiry", required_argument, NULL, OPT_EXPIRY},
    {"max-halves", required_argument, NULL, OPT_HALVES},
    {"max-memory", required_argument, NULL, OPT_MEMORY},
    {"max-envs", required_argument, NULL, OPT_ENVS},
    {"max-actions", required_argument, NULL, OPT_ACTIONS},
    {"max-obs-bytes", required_argument, NULL, OPT_OBS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	cli_warn("%s", msg);
}

/* The checkpoint's parameters into a model the service built. */
static int load_cb(void *ctx, seed_model *m, int64_t *version, seed_err *err)
{
	const seed_checkpoint *ck = ctx;
	*version = ck->policy_version;
	return seed_checkpoint_load_model(ck, m, err);
}

static void report(const seed_serve_stats *st, seed_serve_stats *last, double dt, bool final)
{
	if (dt <= 0)
		return;
	int64_t db = st->batches - last->batches;
	fprintf(stderr,
	        "%s: %s%.0f env steps/s, %.1f rows/batch, %.2f MB/s of unrolls, %" PRId64 " steps, %" PRId64
	        " unrolls, %" PRId64 " episodes, %" PRId64 " bad frames, %" PRId64 " resends, %" PRId64
	        " gaps, %" PRId64 " halves, %" PRId64 " evicted\n",
	        cli_prog, final ? "done: " : "", (double)(st->steps - last->steps) / dt,
	        db ? (double)(st->rows - last->rows) / (double)db : 0.0,
	        (double)(st->unroll_bytes - last->unroll_bytes) / dt / 1e6, st->steps, st->unrolls,
	        st->episodes, st->bad, st->resends, st->gaps, st->halves, st->evicted);
	*last = *st;
}

int main(int argc, char **argv)
{
	cli_init(argc, argv, usage);
	const char *bind = NULL, *policy = NULL, *unrolls = NULL, *model = NULL;
	int hwm = 64;
	double stats_interval = 10;
	bool quiet = false;
	seed_serve_opts so = {.max_batch = 256,
	                      .timeout = 500e-6,
	                      .T = 20,
	                      .idle_expiry = 60,
	                      .max_halves = 4096,
	                      .max_bytes = (size_t)1024 << 20,
	                      .max_envs = 65536,
	                      .max_actions = 65536,
	                      .max_row_bytes = (size_t)4 << 20,
	                      .warn = warn_cb};
	int o;
	while ((o = getopt_long(argc, argv, "b:p:m:gB:t:u:T:s:qhV", options, NULL)) != -1) {
		switch (o) {
		case 'b':
			bind = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'm':
			model = optarg;
			break;
		case 'g':
			so.greedy = true;
			break;
		case 'B':
			so.max_batch = (int)cli_int("--max-batch", optarg, 1, 1 << 24);
			break;
		case 't':
			so.timeout = 1e-6 * (double)cli_int("--timeout-us", optarg, 0, 60000000);
			break;
		case 'u':
			unrolls = optarg;
			break;
		case 'T':
			so.T = (int)cli_int("--unroll-length", optarg, 1, 100000);
			break;
		case OPT_HWM:
			hwm = (int)cli_int("--hwm", optarg, 1, 1 << 20);
			break;
		case 's':
			so.seed = cli_u64("--seed", optarg);
			break;
		case OPT_STATS:
			stats_interval = cli_double("--stats-interval", optarg, 0, 1e9);
			break;
		case OPT_EXPIRY:
			so.idle_expiry = cli_double("--idle-expiry", optarg, 0.001, 1e9);
			break;
		case OPT_HALVES:
			so.max_halves = (size_t)cli_int("--max-halves", optarg, 1, 1 << 30);
			break;
		case OPT_MEMORY:
			so.max_bytes = (size_t)cli_int("--max-memory", optarg, 1, 1 << 30) << 20;
			break;
		case OPT_ENVS:
			so.max_envs = (int)cli_int("--max-envs", optarg, 1, 1 << 30);
			break;
		case OPT_ACTIONS:
			so.max_actions = (int)cli_int("--max-actions", optarg, 1, 1 << 30);
			break;
		case OPT_OBS:
			so.max_row_bytes = (size_t)cli_int("--max-obs-bytes", optarg, 1, 1 << 30);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			cli_help(help);
		case 'V':
			cli_version();
		default:
			cli_usage_error("unknown option");
		}
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!bind)
		cli_usage_error("--bind is required");
	if (!policy == !model)
		cli_usage_error("give one of --policy random and --model SOURCE");
	if (policy && strcmp(policy, "random") != 0)
		cli_usage_error("--policy: unknown policy '%s' (known: random; or use --model)", policy);
	cli_catch_signals();

	void *ctx = seed_chan_context();
	if (!ctx)
		cli_die("cannot create a ZeroMQ context");
	seed_err err;
	seed_chan *actors = NULL, *uch = NULL, *params = NULL;
	seed_checkpoint *ckpt = NULL;
	seed_chan_opts aopts = {.bind = true, .hwm = 0, .stop = &cli_stop};
	if (seed_chan_open(&actors, ctx, SEED_CHAN_ROUTER, bind, &aopts, &err))
		cli_die("%s", err.msg);
	so.model = model != NULL;
	char *json = NULL;
	if (model && (strstr(model, "://") || model[0] == '@' || model[0] == '>')) {
		seed_chan_opts popts = {.bind = false, .conflate = 1, .stop = &cli_stop};
		if (seed_chan_open(&params, ctx, SEED_CHAN_SUB, model, &popts, &err))
			cli_die("--model: %s", err.msg);
	} else if (model) {
		if (seed_checkpoint_load(model, &ckpt, &err))
			cli_die("--model: %s", err.msg);
		if (!ckpt->model)
			cli_die("--model %s: the checkpoint does not describe its model", model);
		json = json_dumps(ckpt->model, JSON_COMPACT);
		so.load = load_cb;
		so.ctx = ckpt;
	}
	if (unrolls) {
		seed_chan_opts uopts = {.bind = true, .hwm = hwm, .stop = &cli_stop};
		if (seed_chan_open(&uch, ctx, SEED_CHAN_PUSH, unrolls, &uopts, &err))
			cli_die("%s", err.msg);
	}
	seed_serve *sv = NULL;
	if (seed_serve_new(&sv, &so, actors, uch, params, &err))
		cli_die("%s", err.msg);
	if (json)
		seed_serve_policy(sv, json, strlen(json), NULL, 0, 0);

	double start = cli_now(), last_report = start;
	seed_serve_stats last = {0};
	while (!cli_stop) {
		seed_serve_turn(sv, 100);
		double now = cli_now();
		if (!quiet && stats_interval > 0 && now - last_report >= stats_interval) {
			report(seed_serve_get_stats(sv), &last, now - last_report, false);
			last_report = now;
		}
	}
	if (!quiet) {
		seed_serve_stats zero = {0};
		report(seed_serve_get_stats(sv), &zero, cli_now() - start, true);
	}
	seed_serve_free(&sv);
	free(json);
	seed_chan_close(&uch);
	seed_chan_close(&actors);
	seed_chan_close(&params);
	seed_checkpoint_free(&ckpt);
	seed_chan_context_free(&ctx);
	return 0;
}
