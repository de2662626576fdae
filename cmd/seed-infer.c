/* seed-infer: the central inference server.
 *
 * Option parsing and wiring: the service itself (sessions per actor half,
 * the batching window, acting, unroll assembly, error frames) is
 * seed_serve(3).  This program opens the channels (ROUTER for the actors,
 * PUSH for unrolls, SUB for a learner's parameters), loads a checkpoint
 * when asked and hands it to the service, and runs the service's loop
 * (seed_serve_loop: turns, statistics lines and metrics lines).
 *
 * The unroll channel is a PUSH socket with a bounded queue: when the
 * consumer falls behind, sends block, the server stops answering, and the
 * actors wait (SEED's backpressure).  Nothing is dropped silently: a push
 * that fails (a file that cannot be written, a stop while waiting for
 * room) is counted ("pushes failed" in the statistics, push_failed in the
 * metrics) and warned about by the service, rate-limited.
 *
 * Neuroevolution: a learner's generation frames on the same parameter
 * channel switch the service to population mode (seed_serve(3)); the
 * statistics then say which generation it plays and its episodes/s.
 *
 * A Q model (a dueling head, for R2D2) acts epsilon-greedily (one epsilon,
 * or Ape-X's schedule) and its unrolls carry first priorities, as the
 * --epsilon* and priority options set; the service warns that they do not
 * apply when the model it builds turns out to be an actor-critic one.
 */
#include <string.h>

#include "cli.h"
#include "secure.h"
#include "seed/agent.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/frame.h"
#include "seed/limits.h"
#include "seed/metrics.h"
#include "seed/nn.h"
#include "seed/opts.h"
#include "seed/serve.h"

/* The options: main's variables, filled by the table below. */
static struct {
	const char *bind, *policy, *model, *unrolls, *metrics, *device;
	bool greedy, quiet;
	int64_t max_batch, timeout_us, T, overlap, hwm, max_halves, max_memory, max_envs, max_actions,
	    max_obs, max_params;
	uint64_t seed;
	double stats_interval, metrics_interval, idle_expiry;
	/* a Q model's */
	double epsilon, epsilon_base, epsilon_alpha, discount, rescale_eps, eta;
	int64_t epsilon_envs, actor_envs, burn_in, n_step;
	bool epsilon_seen, envs_seen, base_seen, alpha_seen, actor_envs_seen, prio_seen[5];
} opt = {.max_batch = 256,
         .timeout_us = 500,
         .T = 20,
         .overlap = 1,
         .hwm = 64,
         .max_halves = 4096,
         .max_memory = 1024,
         .max_envs = 65536,
         .max_actions = 65536,
         .max_obs = 4 << 20,
         .max_params = 1 << 26,
         .stats_interval = 10,
         .metrics_interval = 10,
         .idle_expiry = 60,
         .epsilon = SEED_AGENT_EPSILON,
         .epsilon_base = 0.4,
         .epsilon_alpha = 7,
         .n_step = 5,
         .discount = 0.99,
         .rescale_eps = 1e-3,
         .eta = 0.9};

static const seed_opt options[] = {
    {"bind", 'b', SEED_OPT_STR, &opt.bind, "ENDPOINT",
     .help = "where actors connect (binds; tcp://, ipc://; '>' to connect)"},
    {"policy", 'p', SEED_OPT_STR, &opt.policy, "random", .help = "uniform random actions"},
    {"model", 'm', SEED_OPT_STR, &opt.model, "SOURCE",
     .help = "a model: a learner's parameter endpoint (connects; the newest parameters, or the newest "
             "generation of a population, are used as they come), or a checkpoint (DIR or FILE)"},
    {"device", 0, SEED_OPT_STR, &opt.device, "DEV",
     .help = "run the model on DEV: cpu (default), cuda or cuda:N (a GPU, with CUDA built in)"},
    {"greedy", 'g', SEED_OPT_FLAG, &opt.greedy,
     .help = "take the most likely action instead of sampling (a Q model: epsilon 0)"},
    {"epsilon", 0, SEED_OPT_NUM, &opt.epsilon, "X", .lo = 0, .hi = 1,
     .help = "a Q model explores with epsilon X in every environment (default 0.01)",
     .seen = &opt.epsilon_seen},
    {"epsilon-envs", 0, SEED_OPT_INT, &opt.epsilon_envs, "N", 1, 1 << 30,
     .help = "... or by Ape-X's schedule over N environments (of all actors): environment i "
             "explores with B^(1 + A i / (N - 1)), i = (actor * K + env) mod N",
     .seen = &opt.envs_seen},
    {"epsilon-base", 0, SEED_OPT_NUM, &opt.epsilon_base, "B", .lo = 0, .hi = 1,
     .help = "the schedule's B (default 0.4)", .seen = &opt.base_seen},
    {"epsilon-alpha", 0, SEED_OPT_NUM, &opt.epsilon_alpha, "A", .lo = 0, .hi = 1e6,
     .help = "the schedule's A (default 7)", .seen = &opt.alpha_seen},
    {"actor-envs", 0, SEED_OPT_INT, &opt.actor_envs, "K", 1, 1 << 30,
     .help = "the schedule's K: each actor's environments (default: from its halves, exact for "
             "seed-actor with an even --envs)",
     .seen = &opt.actor_envs_seen},
    {"burn-in", 0, SEED_OPT_INT, &opt.burn_in, "N", 0, 100000,
     .help = "a Q model's first priorities skip the first N steps of each unroll (default 0)",
     .seen = &opt.prio_seen[0]},
    {"n-step", 0, SEED_OPT_INT, &opt.n_step, "N", 1, 100000, .help = "... use N-step targets (default 5)",
     .seen = &opt.prio_seen[1]},
    {"discount", 0, SEED_OPT_NUM, &opt.discount, "G", .lo = 0, .hi = 1,
     .help = "... discount G (default 0.99)", .seen = &opt.prio_seen[2]},
    {"value-rescale-eps", 0, SEED_OPT_NUM, &opt.rescale_eps, "E", .lo = 0, .hi = 1e6,
     .help = "... the value rescaling's epsilon E (default 0.001)", .seen = &opt.prio_seen[3]},
    {"priority-eta", 0, SEED_OPT_NUM, &opt.eta, "E", .lo = 0, .hi = 1,
     .help = "... and mix E max|TD| + (1 - E) mean|TD| (default 0.9)", .seen = &opt.prio_seen[4]},
    {"max-batch", 'B', SEED_OPT_INT, &opt.max_batch, "N", 1, 1 << 24,
     .help = "answer once N env rows are waiting (default 256)"},
    {"timeout-us", 't', SEED_OPT_INT, &opt.timeout_us, "T", 0, 60000000,
     .help = "... or T microseconds after the first request (default 500)"},
    {"unrolls", 'u', SEED_OPT_STR, &opt.unrolls, "ENDPOINT",
     .help = "push unrolls and episode frames here (binds; or a file, or -)"},
    {"unroll-length", 'T', SEED_OPT_INT, &opt.T, "T", 1, 100000,
     .help = "transitions per unroll (default 20)"},
    {"unroll-overlap", 0, SEED_OPT_INT, &opt.overlap, "N", 1, 100000,
     .help = "steps shared by consecutive unrolls (default 1; R2D2: its burn-in)"},
    {"hwm", 0, SEED_OPT_INT, &opt.hwm, "N", 1, 1 << 20,
     .help = "unroll frames queued before sends block (default 64)"},
    {"seed", 's', SEED_OPT_U64, &opt.seed, "S", .help = "seed for the policy's sampling (default 0)"},
    {"stats-interval", 0, SEED_OPT_NUM, &opt.stats_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "print statistics on stderr every SEC seconds (default 10; 0: never)"},
    {"metrics", 'M', SEED_OPT_STR, &opt.metrics, "FILE",
     .help = "append statistics and where the time went as JSON lines to FILE (- for stdout)"},
    {"metrics-interval", 0, SEED_OPT_NUM, &opt.metrics_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "... a line every SEC seconds and one at exit (default 10; 0: only at exit)"},
    {"idle-expiry", 0, SEED_OPT_NUM, &opt.idle_expiry, "SEC", .lo = 0.001, .hi = 1e9,
     .help = "forget an actor half silent for SEC seconds (default 60)"},
    {"max-halves", 0, SEED_OPT_INT, &opt.max_halves, "N", 1, 1 << 30,
     .help = "keep at most N actor halves, evicting the longest idle (default 4096)"},
    {"max-memory", 0, SEED_OPT_INT, &opt.max_memory, "MIB", 1, 1 << 30,
     .help = "... holding at most MIB MiB in all (default 1024)"},
    {"max-envs", 0, SEED_OPT_INT, &opt.max_envs, "K", 1, 1 << 30,
     .help = "refuse step frames of more than K environments (default 65536)"},
    {"max-actions", 0, SEED_OPT_INT, &opt.max_actions, "A", 1, 1 << 30,
     .help = "... or more than A actions (default 65536)"},
    {"max-obs-bytes", 0, SEED_OPT_INT, &opt.max_obs, "N", 1, 1 << 30,
     .help = "... or observations of more than N bytes each (default 4194304)"},
    {"max-params", 0, SEED_OPT_INT, &opt.max_params, "P", 1, INT64_MAX / 8,
     .help = "refuse parameter messages of more than P floats (default 67108864)"},
    {"quiet", 'q', SEED_OPT_FLAG, &opt.quiet, .help = "no statistics and no summary on stderr"},
    CLI_CURVE_OPTIONS,
    {0},
};

static const seed_opts usage_spec = {
    .usage = "--bind ENDPOINT (--policy random | --model SOURCE) [OPTION]...",
    .summary = "Serve actions to Seed actors from one batched policy; assemble their unrolls.",
    .epilogue = "See seed-infer(1) and seed-frames(7).\n",
    .opts = options,
    .max_operands = 0,
};

/* A warning or a statistics line, after the program's name. */
static void warn_cb(void *ctx, const char *msg)
{
	cli_warn("%s", msg);
}

/* Usage errors among the options, and a --device that does not exist;
 * whether any Q-model setting was given. */
static bool check_options(void)
{
	if (!opt.bind)
		cli_usage_error("--bind is required");
	if (opt.overlap > opt.T)
		cli_usage_error("--unroll-overlap %lld: at most the unroll length (%lld)",
		                (long long)opt.overlap, (long long)opt.T);
	if (!opt.policy == !opt.model)
		cli_usage_error("give one of --policy random and --model SOURCE");
	if (opt.greedy && (opt.epsilon_seen || opt.envs_seen))
		cli_usage_error("--greedy is epsilon 0: drop --%s",
		                opt.envs_seen ? "epsilon-envs" : "epsilon");
	if (opt.epsilon_seen && opt.envs_seen)
		cli_usage_error("--epsilon (one for every environment) and --epsilon-envs (a schedule over "
		                "them) exclude each other");
	if (!opt.envs_seen && (opt.base_seen || opt.alpha_seen || opt.actor_envs_seen))
		cli_usage_error("--%s sets the schedule of --epsilon-envs N, which is not given",
		                opt.base_seen    ? "epsilon-base"
		                : opt.alpha_seen ? "epsilon-alpha"
		                                 : "actor-envs");
	bool prio = false;
	for (int i = 0; i < 5; i++)
		prio = prio || opt.prio_seen[i];
	if (prio && !opt.unrolls)
		cli_usage_error("the first priorities' options (--burn-in, --n-step, --discount, "
		                "--value-rescale-eps, --priority-eta) go with --unrolls");
	if (opt.burn_in + 2 > opt.T + opt.overlap)
		cli_usage_error("--burn-in %lld: unrolls of %lld steps (--unroll-length + --unroll-overlap) "
		                "need 2 after the burn-in",
		                (long long)opt.burn_in, (long long)(opt.T + opt.overlap));
	if (opt.policy && (prio || opt.epsilon_seen || opt.envs_seen))
		cli_usage_error("the Q-model options need --model (--policy random has no Q values)");
	if (opt.device && opt.policy)
		cli_usage_error("--device %s: --policy random has no model to run", opt.device);
	seed_err derr;
	if (opt.device && seed_device_check(opt.device, &derr) < 0)
		cli_die("--device: %s", derr.msg);
	if (opt.policy && strcmp(opt.policy, "random") != 0)
		cli_usage_error("--policy: unknown policy '%s' (known: random; or use --model)", opt.policy);
	return prio || opt.epsilon_seen || opt.envs_seen;
}

int main(int argc, char **argv)
{
	cli_parse(&usage_spec, argc, argv);
	cli_curve_load();
	seed_serve_opts so = {.max_batch = (int)opt.max_batch,
	                      .timeout = 1e-6 * (double)opt.timeout_us,
	                      .T = (int)opt.T,
	                      .overlap = (int)opt.overlap,
	                      .greedy = opt.greedy,
	                      .device = opt.device,
	                      .seed = opt.seed,
	                      .idle_expiry = opt.idle_expiry,
	                      .max_halves = (size_t)opt.max_halves,
	                      .max_bytes = (size_t)opt.max_memory << 20,
	                      .max_envs = (int)opt.max_envs,
	                      .max_actions = (int)opt.max_actions,
	                      .max_row_bytes = (size_t)opt.max_obs,
	                      .epsilon = opt.greedy ? 0.0 : opt.epsilon,
	                      .epsilon_envs = opt.envs_seen ? (int)opt.epsilon_envs : 0,
	                      .epsilon_base = opt.epsilon_base,
	                      .epsilon_alpha = opt.epsilon_alpha,
	                      .actor_envs = (int)opt.actor_envs,
	                      .burn_in = (int)opt.burn_in,
	                      .n_step = (int)opt.n_step,
	                      .discount = opt.discount,
	                      .rescale_eps = opt.rescale_eps,
	                      .eta = opt.eta,
	                      .warn = warn_cb};
	so.q_settings = check_options();
	cli_catch_signals();

	void *ctx = seed_chan_context();
	if (!ctx)
		cli_die("cannot create a ZeroMQ context");
	seed_err err;
	seed_chan *actors = NULL, *uch = NULL, *params = NULL;
	seed_checkpoint *ckpt = NULL;
	/* What an actor may send: one step frame within --max-envs and
	 * --max-obs-bytes, and at most twice the memory all halves may hold.
	 * A frame over --max-memory can never be kept, but up to twice that
	 * it still gets an error frame saying why; past it, the connection
	 * is dropped before the frame is read. */
	int64_t step_max = seed_limit_step(opt.max_envs, opt.max_obs);
	if (step_max > opt.max_memory << 21)
		step_max = opt.max_memory << 21;
	seed_chan_opts aopts = {.bind = true, .hwm = 0, .stop = &cli_stop, .max_msg = step_max};
	cli_curve_chan(ctx, &aopts, opt.bind, "--bind");
	if (seed_chan_open(&actors, ctx, SEED_CHAN_ROUTER, opt.bind, &aopts, &err))
		cli_die("%s", err.msg);
	so.model = opt.model != NULL;
	if (opt.model && (strstr(opt.model, "://") || opt.model[0] == '@' || opt.model[0] == '>')) {
		seed_chan_opts popts = {.bind = false,
		                        .conflate = 1,
		                        .stop = &cli_stop,
		                        .max_msg = seed_limit_params(opt.max_params, 1 << 20)};
		cli_curve_chan(ctx, &popts, opt.model, "--model");
		if (seed_chan_open(&params, ctx, SEED_CHAN_SUB, opt.model, &popts, &err))
			cli_die("--model: %s", err.msg);
	} else if (opt.model && seed_checkpoint_load(opt.model, &ckpt, &err)) {
		cli_die("--model: %s", err.msg);
	}
	if (opt.unrolls) {
		seed_chan_opts uopts = {.bind = true, .hwm = (int)opt.hwm, .stop = &cli_stop};
		cli_curve_chan(ctx, &uopts, opt.unrolls, "--unrolls");
		if (seed_chan_open(&uch, ctx, SEED_CHAN_PUSH, opt.unrolls, &uopts, &err))
			cli_die("%s", err.msg);
	}
	seed_serve *sv = NULL;
	if (seed_serve_new(&sv, &so, actors, uch, params, &err))
		cli_die("%s", err.msg);
	if (ckpt && seed_serve_checkpoint(sv, &ckpt, &err))
		cli_die("--model %s: %s", opt.model, err.msg);
	seed_metrics *mx = NULL;
	if (opt.metrics && seed_metrics_open(opt.metrics, &mx, &err))
		cli_die("--metrics: %s", err.msg);
	seed_serve_loop_opts lo = {.stop = &cli_stop,
	                           .say = opt.quiet ? NULL : warn_cb,
	                           .stats_interval = opt.stats_interval,
	                           .metrics = mx,
	                           .metrics_interval = opt.metrics_interval,
	                           .metrics_name = "--metrics"};
	seed_serve_loop(sv, &lo); /* a push that failed is counted and said by the service */
	seed_metrics_close(&mx);
	seed_serve_free(&sv);
	cli_curve_report((seed_chan *[]){actors, uch, params}, 3, opt.quiet);
	seed_chan_close(&uch);
	seed_chan_close(&actors);
	seed_chan_close(&params);
	seed_checkpoint_free(&ckpt);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	return 0;
}
