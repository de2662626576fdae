/* seed-learn: the learner.
 *
 * Trains a configuration's trainer (seed/trainer.h): a seed_learner for
 * vtrace and ppo (unroll and episode frames pulled from seed-infer) and
 * r2d2 (sequences asked of seed-replay over a DEALER, --prefetch requests
 * in flight, priorities sent back), or a seed_evolver for es, ga and rs
 * (episode frames of a generation's members), publishing parameters or
 * generations on the params channel.  The loop is the library's,
 * seed_trainer_run; metrics go to JSON lines and, with a run directory, to
 * a TensorBoard event file there; checkpoints to the run directory every
 * checkpoint_interval seconds, at the end and on SIGINT/SIGTERM; --resume
 * continues a run.  --bottleneck DIR says which program held a seed-train
 * run back.  A configuration that cannot work exits with status 2 (no
 * supervisor restarts it); a checkpoint that cannot be written is said,
 * counted, named in the final report and in the exit status.
 *
 * This file is option parsing and wiring only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "secure.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/config.h"
#include "seed/env.h"
#include "seed/opts.h"
#include "seed/timing.h"
#include "seed/trainer.h"

/* The options: main's variables, filled by the table below.  Those that
 * set a configuration value (ov) apply after every --set, when given. */
static struct {
	const char *config, *resume, *unrolls, *params, *dir, *metrics, *get, *bottleneck, *device;
	seed_opt_strs sets;
	int64_t prefetch;
	seed_trainer_overrides ov;
	bool print_config, quiet;
} opt = {.prefetch = 2};

static const seed_opt options[] = {
    {"config", 'C', SEED_OPT_STR, &opt.config, "PRESET|FILE",
     .help = "training configuration (a preset name or a JSON file)"},
    {"resume", 'r', SEED_OPT_STR, &opt.resume, "DIR",
     .help = "continue the run saved in DIR (its config, weights, counters)"},
    {"set", 0, SEED_OPT_STRS, &opt.sets, "KEY=VALUE",
     .help = "override a config value (dotted keys, JSON values), repeatable"},
    {"unrolls", 'u', SEED_OPT_STR, &opt.unrolls, "ENDPOINT",
     .help = "where unrolls come from (connects; '@' binds; or a file); r2d2: seed-replay's --bind; es, ga, "
             "rs: episodes"},
    {"prefetch", 0, SEED_OPT_INT, &opt.prefetch, "N", 1, 1024,
     .help = "r2d2: sample requests kept in flight to seed-replay (default 2)"},
    {"params", 'P', SEED_OPT_STR, &opt.params, "ENDPOINT",
     .help = "where parameters are published (binds; '>' connects)"},
    {"dir", 'd', SEED_OPT_STR, &opt.dir, "DIR",
     .help = "run directory for checkpoints and metrics, parents created (default: none)"},
    {"metrics", 'M', SEED_OPT_STR, &opt.metrics, "FILE",
     .help = "metrics as JSON lines (default DIR/metrics.jsonl; - for stdout)"},
    {"frames", 'f', SEED_OPT_INT, &opt.ov.frames, "N", 1, INT64_MAX / 2,
     .help = "stop after N env frames (config total_frames): emulator frames, agent steps times the "
             "frame skip (4 for Atari)",
     .seen = &opt.ov.frames_seen},
    {"seed", 's', SEED_OPT_U64, &opt.ov.seed, "S", .help = "seed (config seed)", .seen = &opt.ov.seed_seen},
    {"lr", 0, SEED_OPT_NUM, &opt.ov.lr, "X", .lo = 0, .hi = 10, .help = "learning rate (config optimizer.lr)",
     .seen = &opt.ov.lr_seen},
    {"batch-size", 'B', SEED_OPT_INT, &opt.ov.batch_size, "N", 1, 1 << 20,
     .help = "unrolls per update (config batch_size)", .seen = &opt.ov.batch_size_seen},
    {"target", 0, SEED_OPT_NUM, &opt.ov.target, "R", .lo = -1e300, .hi = 1e300,
     .help = "stop once the mean return of the last episodes reaches R (config target_return)",
     .seen = &opt.ov.target_seen},
    {"checkpoint-interval", 0, SEED_OPT_NUM, &opt.ov.checkpoint_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "seconds between checkpoints (config checkpoint_interval; 0: only at the end)",
     .seen = &opt.ov.checkpoint_interval_seen},
    {"device", 0, SEED_OPT_STR, &opt.device, "DEV",
     .help = "compute the updates on DEV: cpu (default), cuda or cuda:N (a GPU, with CUDA built in)"},
    {"print-config", 0, SEED_OPT_FLAG, &opt.print_config,
     .help = "print the resolved configuration as JSON and exit"},
    {"get", 0, SEED_OPT_STR, &opt.get, "KEY[,KEY]...",
     .help = "print resolved values (dotted keys), one a line, and exit"},
    {"bottleneck", 0, SEED_OPT_STR, &opt.bottleneck, "DIR",
     .help = "print which program held the run in DIR back (from its metrics files) and exit"},
    {"quiet", 'q', SEED_OPT_FLAG, &opt.quiet, .help = "no progress on stderr"},
    CLI_CURVE_OPTIONS,
    {0},
};

static const seed_opts usage_spec = {
    .usage = "(--config PRESET|FILE | --resume DIR) --unrolls ENDPOINT --params ENDPOINT [OPTION]...",
    .summary = "Train a policy with V-trace or PPO on unrolls from seed-infer, or Q values with R2D2\n"
               "on sequences from seed-replay, and publish its parameters; or evolve a population\n"
               "(algorithms es, ga, rs) on episodes from seed-infer, publishing its generations.",
    .epilogue = "Exit status: 0 when the target or the frame budget is reached or when stopped by a\n"
                "signal, with the final checkpoint written; 1 on errors, among them a checkpoint that\n"
                "could not be written; 2 on usage errors.  See seed-learn(1) and seed-config(5).\n",
    .opts = options,
    .max_operands = 0,
};

static seed_config cfg;
static bool progress_shown;

/* What the loop says: warnings as warnings, the progress line on a
 * terminal only, over itself. */
static void say(void *arg, seed_trainer_say kind, const char *line)
{
	bool progress = *(bool *)arg;
	if (kind == SEED_TRAINER_WARN) {
		cli_warn("%s", line);
	} else if (progress) {
		fprintf(stderr, "\r%s: %s   ", cli_prog, line);
		progress_shown = true;
	}
}

/* The trainer of the configuration, restored, on its device, with its run
 * directory; dies, saying which, on failure. */
static seed_trainer *make_trainer(seed_checkpoint *ck, const char *dir, seed_env_spec *spec)
{
	seed_err err;
	seed_trainer *t;
	/* A configuration error (an environment or a model that cannot work):
	 * status 2, which a supervisor does not restart. */
	int rc = seed_env_probe(cfg.env, cfg.env_options, spec, &err);
	if (rc == -SEED_EOPTION || rc == -ENOENT)
		cli_config_error("config: %s", err.msg);
	if (rc == 0)
		rc = seed_trainer_new(&t, &cfg, spec, &err);
	if (rc == -SEED_EOPTION || rc == -ENOENT || rc == -EINVAL)
		cli_config_error("config: %s", err.msg);
	if (rc)
		cli_die("config: %s", err.msg);
	if (ck && seed_trainer_restore(t, ck, &err))
		cli_die("--resume: %s", err.msg);
	rc = opt.device ? seed_trainer_set_device(t, opt.device, &err) : 0;
	if (rc == -EINVAL) /* a device this algorithm does not compute on */
		cli_usage_error("--device %s: %s", opt.device, err.msg);
	if (rc)
		cli_die("--device: %s", err.msg);
	if (dir && seed_trainer_open_dir(t, dir, &err))
		cli_die("--dir: %s", err.msg);
	if (seed_trainer_open_metrics(t, dir, opt.metrics, &err))
		cli_die("%s", err.msg);
	return t;
}

/* The frames and params channels: a PULL (a DEALER to seed-replay for a
 * trainer on sampled sequences) bounded by the biggest frame this run can
 * be sent, and a PUB. */
static void open_channels(seed_trainer *t, const seed_env_spec *spec, void **ctx, seed_chan **uch,
                          seed_chan **pch)
{
	seed_err err;
	bool samples = seed_trainer_samples(t);
	seed_chan_opts uo = {.bind = false,
	                     .hwm = cfg.infer_hwm,
	                     .stop = &cli_stop,
	                     .max_msg = seed_trainer_max_frame(t, spec)};
	/* The params PUB queues little for a slow subscriber (one that conflates
	 * queues little itself): beyond it a publication is dropped for that
	 * subscriber, and the next one, an update later, gets through. */
	seed_chan_opts po = {.bind = true, .hwm = SEED_CHAN_CONFLATE_HWM, .stop = &cli_stop};
	*ctx = seed_chan_context();
	cli_curve_chan(*ctx, &uo, opt.unrolls, "--unrolls");
	cli_curve_chan(*ctx, &po, opt.params, "--params");
	if (!*ctx ||
	    seed_chan_open(uch, *ctx, samples ? SEED_CHAN_DEALER : SEED_CHAN_PULL, opt.unrolls, &uo, &err))
		cli_die("%s%s",
		        samples && *ctx ? "--unrolls (seed-replay's --bind, for algorithm r2d2): " : "",
		        *ctx ? err.msg : "cannot create a ZeroMQ context");
	if (seed_chan_open(pch, *ctx, SEED_CHAN_PUB, opt.params, &po, &err))
		cli_die("%s", err.msg);
}

/* Train: the loop of seed/trainer.h, then the run's account.  Returns the
 * exit status. */
static int train(seed_checkpoint *ck, const char *dir)
{
	bool resumed = ck != NULL;
	seed_env_spec spec;
	seed_trainer *t = make_trainer(ck, dir, &spec);
	seed_checkpoint_free(&ck);
	void *ctx;
	seed_chan *uch, *pch;
	open_channels(t, &spec, &ctx, &uch, &pch);
	bool progress = !opt.quiet && isatty(2);
	if (!opt.quiet) {
		char line[1024];
		seed_trainer_describe(t, line, sizeof line);
		fprintf(stderr, "%s: %s; %s\n", cli_prog, line, resumed ? "resumed" : "new run");
	}
	seed_trainer_run_opts o = {.frames = uch,
	                           .params = pch,
	                           .prefetch = (int)opt.prefetch,
	                           .checkpoints = dir != NULL,
	                           .stop = &cli_stop,
	                           .say = say,
	                           .say_arg = &progress};
	seed_trainer_run_result res;
	seed_err err;
	int rc = seed_trainer_run(t, &o, &res, &err);
	if (!res.ran)
		cli_die("%s", err.msg);
	rc = rc ? 1 : 0;
	if (progress_shown)
		fputc('\n', stderr);
	char line[4400];
	seed_trainer_run_times(&res, line, sizeof line);
	if (!opt.quiet)
		fprintf(stderr, "%s: time: %s\n", cli_prog, line);
	if (!opt.quiet || rc) {
		seed_trainer_summary(t, res.why[0] ? res.why : NULL, line, sizeof line);
		fprintf(stderr, "%s: %s\n", cli_prog, line);
	}
	cli_curve_report((seed_chan *[]){uch, pch}, 2, opt.quiet && !rc);
	seed_chan_close(&uch);
	seed_chan_close(&pch);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	seed_trainer_free(&t);
	seed_config_free(&cfg);
	return rc;
}

/* --bottleneck DIR: "NAME<TAB>sentence" on stdout. */
static int bottleneck(const char *dir)
{
	seed_bottleneck b;
	char line[1024];
	seed_err err;
	if (seed_bottleneck_of_run(dir, &b, line, sizeof line, &err))
		cli_die("--bottleneck: %s", err.msg);
	printf("%s\t%s\n", seed_bottleneck_name(b), line);
	return 0;
}

int main(int argc, char **argv)
{
	cli_parse(&usage_spec, argc, argv);
	cli_curve_load();
	seed_err derr;
	if (opt.device && seed_device_check(opt.device, &derr) < 0)
		cli_die("--device: %s", derr.msg);
	const char *resume = opt.resume, *dir = opt.dir, *get_key = opt.get;
	if (opt.bottleneck) {
		if (opt.config || resume || opt.unrolls || opt.params)
			cli_usage_error("--bottleneck DIR reads a finished run: it goes with none of "
			                "--config, --resume, --unrolls and --params");
		return bottleneck(opt.bottleneck);
	}
	if (!opt.config == !resume)
		cli_usage_error("give one of --config and --resume");
	if (!opt.print_config && !get_key && (!opt.unrolls || !opt.params))
		cli_usage_error("--unrolls and --params are required");
	/* Every --set, then the options that set config values, as assignments. */
	int nsets;
	const char **sets = seed_trainer_sets(&opt.ov, opt.sets.v, opt.sets.n, &nsets);
	cli_catch_signals();

	seed_err err;
	seed_checkpoint *ck = NULL;
	if (resume && seed_checkpoint_load(resume, &ck, &err))
		cli_die("--resume: %s", err.msg);
	if (resume && !ck->config)
		cli_die("--resume %s: the checkpoint holds no training configuration", resume);
	if (resume && !dir)
		dir = resume;
	const char *env_dir = getenv("SEED_PRESETS");
	const char *dirs[] = {env_dir ? env_dir : "examples/presets", SEED_PRESETDIR, NULL};
	int rc = seed_config_resolve(ck ? ck->config : NULL, opt.config, dirs, sets, nsets, &cfg, &err);
	if (rc == -EINVAL)
		cli_usage_error("%s", err.msg);
	else if (rc) /* a configuration that does not load or check: a restart cannot mend it */
		cli_config_error("%s%s", resume ? "--resume: " : "", err.msg);
	free(sets);
	seed_opt_strs_free(&opt.sets);
	if (get_key || opt.print_config) {
		/* --get KEY[,KEY...]: each value on a line of its own. */
		char *keys = get_key ? strcpy(seed_xmalloc(strlen(get_key) + 1), get_key) : NULL,
		     *save = NULL;
		for (char *k = keys ? strtok_r(keys, ",", &save) : NULL; k || !keys;
		     k = strtok_r(NULL, ",", &save)) {
			char *text = seed_config_text(cfg.root, k, &err);
			if (!text)
				cli_die("--get: %s", err.msg);
			puts(text);
			free(text);
			if (!keys)
				break;
		}
		free(keys);
		seed_config_free(&cfg);
		seed_checkpoint_free(&ck);
		return 0;
	}

	return train(ck, dir);
}
