/* seed-learn: the learner.
 *
 * Pulls unroll frames (T+1 steps of many envs each) and episode frames from
 * seed-infer, forms batches of `batch_size` unrolls, runs the model forward
 * and backward through the V-trace actor-critic loss, applies the optimizer,
 * and publishes the new parameters with a version number after each update.
 * Metrics go to JSON lines; checkpoints (safetensors + JSON metadata) to the
 * run directory, atomically, every checkpoint_interval seconds, at the end,
 * and on SIGINT/SIGTERM.  --resume continues a run where it stopped.
 *
 * Batch layout: time-major, [T+1][B] rows, so that the model sees one matrix
 * of (T+1)*B observations and the loss reads [T][B] slices of it.  Row t of
 * an unroll holds obs_t, the reward/terminated/truncated of the transition
 * that led to obs_t, and the action taken at obs_t.  The loss's transition t
 * (t < T) therefore uses action_t at obs_t, reward_{t+1}, discount
 * gamma * (1 - ended_{t+1}), and, when step t+1 was a truncation, folds
 * gamma * final_value_{t+1} (the behaviour value of the real last
 * observation) into the reward, so a time limit bootstraps and a real end
 * does not.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "model_ckpt.h"
#include "train_config.h"
#include "seed/blas.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/checkpoint.h"
#include "seed/env.h"
#include "seed/frame.h"
#include "seed/loss.h"
#include "seed/metrics.h"
#include "seed/nn.h"
#include "seed/optim.h"
#include "seed/rng.h"

static const char usage[] =
    "(--config PRESET|FILE | --resume DIR) --unrolls ENDPOINT --params ENDPOINT [OPTION]...";

static const char help[] =
    "Usage: seed-learn (--config PRESET|FILE | --resume DIR) --unrolls ENDPOINT --params ENDPOINT "
    "[OPTION]...\n"
    "Train a policy with V-trace on unrolls from seed-infer; publish its parameters.\n"
    "\n"
    "  -c, --config PRESET|FILE  training configuration (a preset name or a JSON file)\n"
    "  -r, --resume DIR          continue the run saved in DIR (its config, weights, counters)\n"
    "      --set KEY=VALUE       override a config value (dotted keys, JSON values), repeatable\n"
    "  -u, --unrolls ENDPOINT    where unrolls come from (connects; '@' binds; or a file)\n"
    "  -p, --params ENDPOINT     where parameters are published (binds; '>' connects)\n"
    "  -d, --dir DIR             run directory for checkpoints and metrics (default: none)\n"
    "  -m, --metrics FILE        metrics as JSON lines (default DIR/metrics.jsonl; - for stdout)\n"
    "  -f, --frames N            stop after N env frames (config total_frames)\n"
    "  -s, --seed S              seed (config seed)\n"
    "      --lr X                learning rate (config optimizer.lr)\n"
    "  -B, --batch-size N        unrolls per update (config batch_size)\n"
    "      --target R            stop once the mean return of the last episodes reaches R\n"
    "      --checkpoint-interval SEC  seconds between checkpoints (config; 0: only at the end)\n"
    "      --print-config        print the resolved configuration as JSON and exit\n"
    "      --get KEY             print one resolved value (dotted key) and exit\n"
    "  -q, --quiet               no progress on stderr\n"
    "  -h, --help                show this help and exit\n"
    "  -V, --version             show the version and exit\n"
    "\n"
    "Exit status: 0 when the target or the frame budget is reached or when stopped by a\n"
    "signal (a checkpoint is written first), 1 on errors, 2 on usage errors.\n"
    "See seed-learn(1).\n";

enum { OPT_SET = 256, OPT_LR, OPT_TARGET, OPT_CKPT, OPT_PRINT, OPT_GET };

static const struct option options[] = {
    {"config", required_argument, NULL, 'c'},
    {"resume", required_argument, NULL, 'r'},
    {"set", required_argument, NULL, OPT_SET},
    {"unrolls", required_argument, NULL, 'u'},
    {"params", required_argument, NULL, 'p'},
    {"dir", required_argument, NULL, 'd'},
    {"metrics", required_argument, NULL, 'm'},
    {"frames", required_argument, NULL, 'f'},
    {"seed", required_argument, NULL, 's'},
    {"lr", required_argument, NULL, OPT_LR},
    {"batch-size", required_argument, NULL, 'B'},
    {"target", required_argument, NULL, OPT_TARGET},
    {"checkpoint-interval", required_argument, NULL, OPT_CKPT},
    {"print-config", no_argument, NULL, OPT_PRINT},
    {"get", required_argument, NULL, OPT_GET},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

typedef struct learner {
	train_config cfg;
	seed_env_spec spec;
	size_t obs_bytes;
	int A, T1, B;
	seed_model *model;
	seed_optim *optim;
	seed_rng rng;
	/* the batch being filled, time-major [T1][B] */
	int fill;
	uint8_t *obs;
	int32_t *action, *version;
	float *reward, *final_value, *blogits;
	uint8_t *terminated, *truncated;
	/* loss inputs and outputs */
	float *logits, *values, *rewards_t, *discounts_t, *dlogits, *dvalues;
	/* counters */
	int64_t updates, frames, policy_version, frames0;
	double wall0, wall_before; /* wall_before: seconds trained before a resume */
	/* episode returns, a ring of the last return_window */
	double *returns;
	int nreturns, ret_at;
	int64_t episodes;
	/* last update's figures for metrics */
	seed_loss_stats stats;
	double grad_norm, lag_sum, lr_now;
	int64_t lag_n, updates_at_metrics, frames_at_metrics, bad_frames, skipped;
	double t_metrics;
	seed_buf out;
} learner;

/* Count a dropped frame and say why: the first few, then every thousandth,
 * so that a misconfigured peer cannot drown stderr. */
static void report_bad(learner *L, const char *fmt, const char *msg)
{
	L->bad_frames++;
	if (L->bad_frames <= 10 || L->bad_frames % 1000 == 0) {
		char buf[600];
		snprintf(buf, sizeof buf, fmt, msg);
		cli_warn("dropped bad frame #%" PRId64 ": %s", L->bad_frames, buf);
	}
}

static double mean_return(const learner *L)
{
	double s = 0;
	for (int i = 0; i < L->nreturns; i++)
		s += L->returns[i];
	return L->nreturns ? s / L->nreturns : NAN;
}

static void alloc_batch(learner *L)
{
	size_t n = (size_t)L->T1 * (size_t)L->B, A = (size_t)L->A;
	L->obs = seed_xaligned(n * L->obs_bytes);
	L->action = seed_xcalloc(n, sizeof(int32_t));
	L->version = seed_xcalloc(n, sizeof(int32_t));
	L->reward = seed_xcalloc(n, sizeof(float));
	L->final_value = seed_xcalloc(n, sizeof(float));
	L->blogits = seed_xcalloc(n * A, sizeof(float));
	L->terminated = seed_xcalloc(n, 1);
	L->truncated = seed_xcalloc(n, 1);
	L->logits = seed_xcalloc(n * A, sizeof(float));
	L->values = seed_xcalloc(n, sizeof(float));
	L->rewards_t = seed_xcalloc(n, sizeof(float));
	L->discounts_t = seed_xcalloc(n, sizeof(float));
	L->dlogits = seed_xcalloc(n * A, sizeof(float));
	L->dvalues = seed_xcalloc(n, sizeof(float));
}

static void free_batch(learner *L)
{
	free(L->obs);
	free(L->action);
	free(L->version);
	free(L->reward);
	free(L->final_value);
	free(L->blogits);
	free(L->terminated);
	free(L->truncated);
	free(L->logits);
	free(L->values);
	free(L->rewards_t);
	free(L->discounts_t);
	free(L->dlogits);
	free(L->dvalues);
}

static void publish(learner *L, seed_chan *params)
{
	int64_t n = (int64_t)seed_model_num_params(L->model);
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_PARAMS);
	seed_frame_set_int(&f, "policy_version", L->policy_version);
	seed_frame_set_int(&f, "run", 0);
	seed_frame_set_tensor(&f, "params",
	                      seed_tensor_view(seed_model_params(L->model), SEED_DTYPE_F32, 1, &n));
	seed_frame_set_str(&f, "model", L->cfg.model);
	seed_buf_reset(&L->out);
	seed_err err;
	int rc = seed_frame_encode(&f, &L->out, &err);
	if (rc)
		cli_die("encoding parameters: %s", err.msg);
	/* PUB never blocks: a slow subscriber only misses old versions, and only
	 * the newest matters.  A failed send is retried with the next version. */
	seed_chan_send(params, NULL, 0, L->out.data, L->out.len, true);
}

/* Copy the B_f unrolls of a frame into the batch; update when it is full. */
static int take_unroll(learner *L, const seed_frame *f, seed_chan *params, seed_err *err);

static void update(learner *L, seed_chan *params)
{
	int T1 = L->T1, T = T1 - 1, B = L->B, A = L->A;
	int rows = T1 * B;
	seed_model_forward(L->model, rows, L->obs, L->logits, L->values);
	float gamma = L->cfg.discount;
	/* Transition t uses step t+1's reward and end flags. */
	for (int t = 0; t < T; t++)
		for (int b = 0; b < B; b++) {
			size_t now = (size_t)t * B + b, next = (size_t)(t + 1) * B + b;
			float r = L->reward[next];
			float disc = gamma;
			if (L->terminated[next]) {
				disc = 0;
			} else if (L->truncated[next]) {
				r += gamma * L->final_value[next];
				disc = 0;
			}
			L->rewards_t[now] = r;
			L->discounts_t[now] = disc;
			L->lag_sum += (double)(L->policy_version - L->version[now]);
			L->lag_n++;
		}
	seed_loss_batch batch = {
	    .T = T,
	    .B = B,
	    .A = A,
	    .logits = L->logits,
	    .behaviour_logits = L->blogits,
	    .actions = L->action,
	    .rewards = L->rewards_t,
	    .discounts = L->discounts_t,
	    .values = L->values,
	    .bootstrap_value = L->values + (size_t)T * B,
	};
	memset(L->dlogits + (size_t)T * B * A, 0, (size_t)B * A * sizeof(float));
	memset(L->dvalues + (size_t)T * B, 0, (size_t)B * sizeof(float));
	seed_err err;
	if (seed_loss_vtrace(&L->cfg.loss, &batch, &L->stats, L->dlogits, L->dvalues, &err))
		cli_die("loss: %s", err.msg);
	seed_model_zero_grad(L->model);
	seed_model_backward(L->model, rows, L->dlogits, L->dvalues);
	size_t np = seed_model_num_params(L->model);
	float *g = seed_model_grads(L->model);
	L->grad_norm = L->cfg.max_grad_norm > 0 ? seed_optim_clip_global_norm(g, np, L->cfg.max_grad_norm)
	                                        : seed_optim_clip_global_norm(g, np, INFINITY);
	L->lr_now = L->cfg.lr_decay
	                ? seed_optim_lr_linear(L->cfg.lr, L->frames, L->cfg.total_frames, L->cfg.lr_min)
	                : L->cfg.lr;
	if (!isfinite(L->grad_norm)) {
		/* A NaN or infinite gradient would poison every parameter: skip
		 * this batch (its frames still count) and say so. */
		L->skipped++;
		if (L->skipped <= 10 || L->skipped % 1000 == 0)
			cli_warn("skipped update #%" PRId64 ": the gradient norm is %g", L->skipped,
			         L->grad_norm);
	} else {
		seed_optim_step(L->optim, seed_model_params(L->model), g, (float)L->lr_now);
	}
	L->updates++;
	L->frames += (int64_t)T * B;
	L->policy_version++;
	publish(L, params);
	L->fill = 0;
}

static int take_unroll(learner *L, const seed_frame *f, seed_chan *params, seed_err *err)
{
	const seed_tensor *obs = seed_frame_tensor(f, "obs");
	int64_t Bf = obs->shape[0], T1 = obs->shape[1];
	if (T1 != L->T1)
		return seed_err_set(err, -SEED_EFRAME,
		                    "unroll frame: %" PRId64 " steps, expected unroll_length+1 = %d", T1,
		                    L->T1);
	if (obs->dtype != L->spec.obs_dtype ||
	    (size_t)seed_tensor_nbytes(obs) != (size_t)(Bf * T1) * L->obs_bytes ||
	    seed_frame_int(f, "num_actions", -1) != L->A)
		return seed_err_set(err, -SEED_EFRAME,
		                    "unroll frame: observations or actions do not match environment '%s'",
		                    L->cfg.env);
	const uint8_t *o = obs->data;
	const seed_tensor *act = seed_frame_tensor(f, "action"), *rew = seed_frame_tensor(f, "reward");
	const seed_tensor *te = seed_frame_tensor(f, "terminated"), *tr = seed_frame_tensor(f, "truncated");
	const seed_tensor *fv = seed_frame_tensor(f, "final_value"),
	                  *ver = seed_frame_tensor(f, "policy_version");
	const seed_tensor *lg = seed_frame_tensor(f, "logits");
	size_t A = (size_t)L->A;
	for (int64_t b = 0; b < Bf; b++) {
		int j = L->fill;
		for (int64_t t = 0; t < T1; t++) {
			size_t src = (size_t)(b * T1 + t), dst = (size_t)t * (size_t)L->B + (size_t)j;
			memcpy(L->obs + dst * L->obs_bytes, o + src * L->obs_bytes, L->obs_bytes);
			memcpy(&L->action[dst], (const uint8_t *)act->data + 4 * src, 4);
			memcpy(&L->reward[dst], (const uint8_t *)rew->data + 4 * src, 4);
			memcpy(&L->final_value[dst], (const uint8_t *)fv->data + 4 * src, 4);
			memcpy(&L->version[dst], (const uint8_t *)ver->data + 4 * src, 4);
			memcpy(L->blogits + dst * A, (const uint8_t *)lg->data + 4 * src * A, 4 * A);
			L->terminated[dst] = ((const uint8_t *)te->data)[src];
			L->truncated[dst] = ((const uint8_t *)tr->data)[src];
		}
		/* Actions outside the range would index past the logits. */
		for (int64_t t = 0; t < T1; t++) {
			int32_t a = L->action[(size_t)t * L->B + j];
			if (a < 0 || a >= L->A)
				return seed_err_set(err, -SEED_EFRAME,
				                    "unroll frame: field 'action': %d is out of range", a);
		}
		if (++L->fill == L->B)
			update(L, params);
	}
	return 0;
}

static void take_episodes(learner *L, const seed_frame *f)
{
	const seed_tensor *r = seed_frame_tensor(f, "return");
	for (int64_t i = 0; i < r->shape[0]; i++) {
		float x;
		memcpy(&x, (const uint8_t *)r->data + 4 * i, 4);
		L->returns[L->ret_at] = x;
		L->ret_at = (L->ret_at + 1) % L->cfg.return_window;
		if (L->nreturns < L->cfg.return_window)
			L->nreturns++;
		L->episodes++;
	}
}

static int save_checkpoint(learner *L, const char *dir, seed_err *err)
{
	int nt = seed_model_num_tensors(L->model);
	int ns = seed_optim_slots(L->optim);
	seed_checkpoint_tensor *ts = seed_xcalloc((size_t)(nt + ns), sizeof *ts);
	char **names = seed_xcalloc((size_t)ns, sizeof *names);
	float *params = seed_model_params(L->model);
	for (int i = 0; i < nt; i++) {
		const seed_model_param *p = seed_model_param_at(L->model, i);
		ts[i].name = p->name;
		ts[i].tensor = seed_tensor_view(params + p->offset, SEED_DTYPE_F32, p->rank, p->shape);
	}
	float *state = seed_optim_state(L->optim);
	int64_t n = (int64_t)seed_optim_numel(L->optim);
	for (int i = 0; i < ns; i++) {
		size_t len = strlen(seed_optim_slot_name(L->optim, i)) + 8;
		names[i] = seed_xmalloc(len);
		snprintf(names[i], len, "optim.%s", seed_optim_slot_name(L->optim, i));
		ts[nt + i].name = names[i];
		ts[nt + i].tensor = seed_tensor_view(state + (size_t)i * (size_t)n, SEED_DTYPE_F32, 1, &n);
	}
	json_error_t je;
	json_t *env_opts = json_loads(L->cfg.env_options, 0, &je);
	json_t *model = json_loads(L->cfg.model, 0, &je);
	seed_checkpoint ck = {
	    .config = L->cfg.root,
	    .env = L->cfg.env,
	    .env_options = env_opts,
	    .model = model,
	    .step = L->updates,
	    .frames = L->frames,
	    .policy_version = L->policy_version,
	    .optim_step = seed_optim_steps(L->optim),
	    .rng = L->rng,
	    .wall_time = L->wall_before + (cli_now() - L->wall0),
	    .ntensors = (size_t)(nt + ns),
	    .tensors = ts,
	};
	int rc = seed_checkpoint_save(dir, &ck, err);
	json_decref(env_opts);
	json_decref(model);
	for (int i = 0; i < ns; i++)
		free(names[i]);
	free(names);
	free(ts);
	return rc;
}

/* Restore weights, optimizer state and counters from a loaded checkpoint. */
static int restore(learner *L, const seed_checkpoint *ck, seed_err *err)
{
	int rc = model_load_checkpoint(L->model, ck, err);
	if (rc)
		return rc;
	float *state = seed_optim_state(L->optim);
	int64_t n = (int64_t)seed_optim_numel(L->optim);
	for (int i = 0; i < seed_optim_slots(L->optim); i++) {
		char name[64];
		snprintf(name, sizeof name, "optim.%s", seed_optim_slot_name(L->optim, i));
		seed_tensor t;
		rc = seed_checkpoint_expect(ck, name, SEED_DTYPE_F32, 1, &n, &t, err);
		if (rc)
			return rc;
		memcpy(state + (size_t)i * (size_t)n, t.data, (size_t)n * sizeof(float));
	}
	seed_optim_set_steps(L->optim, ck->optim_step);
	L->updates = ck->step;
	L->frames = ck->frames;
	L->policy_version = ck->policy_version;
	L->rng = ck->rng;
	L->wall_before = ck->wall_time;
	return 0;
}

static void write_metrics(learner *L, seed_metrics *mx, bool progress)
{
	double now = cli_now(), dt = now - L->t_metrics;
	if (dt <= 0)
		return;
	double fps = (double)(L->frames - L->frames_at_metrics) / dt;
	double ups = (double)(L->updates - L->updates_at_metrics) / dt;
	double ret = mean_return(L);
	double lag = L->lag_n ? L->lag_sum / (double)L->lag_n : 0;
	if (mx) {
		json_t *o = SEED_METRICS_OBJ(
		    {"time", L->wall_before + (now - L->wall0)}, {"frames", (double)L->frames},
		    {"updates", (double)L->updates}, {"version", (double)L->policy_version}, {"fps", fps},
		    {"updates_per_s", ups}, {"loss", L->stats.total}, {"pg_loss", L->stats.pg_loss},
		    {"baseline_loss", L->stats.baseline_loss}, {"entropy_loss", L->stats.entropy_loss},
		    {"entropy", L->stats.entropy}, {"mean_rho", L->stats.mean_rho},
		    {"mean_value", L->stats.mean_value}, {"grad_norm", L->grad_norm}, {"lr", L->lr_now},
		    {"episodes", (double)L->episodes}, {"policy_lag", lag}, {"batch_size", (double)L->B},
		    {"unroll_length", (double)(L->T1 - 1)}, {"bad_frames", (double)L->bad_frames},
		    {"skipped_updates", (double)L->skipped});
		if (L->nreturns)
			json_object_set_new(o, "episode_return", json_real(ret));
		else
			json_object_set_new(o, "episode_return", json_null());
		seed_err err;
		if (seed_metrics_write(mx, o, &err))
			cli_warn("metrics: %s", err.msg);
		json_decref(o);
	}
	if (progress)
		fprintf(stderr,
		        "\r%s: %" PRId64 " frames, %.0f fps, %" PRId64 " updates, return %.1f (%" PRId64
		        " episodes), entropy %.3f, lag %.1f   ",
		        cli_prog, L->frames, fps, L->updates, L->nreturns ? ret : 0.0, L->episodes,
		        L->stats.entropy, lag);
	L->t_metrics = now;
	L->frames_at_metrics = L->frames;
	L->updates_at_metrics = L->updates;
	L->lag_sum = 0;
	L->lag_n = 0;
}

int main(int argc, char **argv)
{
	cli_init(argc, argv, usage);
	const char *config = NULL, *resume = NULL, *unrolls = NULL, *params_ep = NULL, *dir = NULL,
	           *metrics = NULL;
	const char **sets = seed_xcalloc((size_t)argc, sizeof *sets);
	int nsets = 0;
	char buf[128];
	bool quiet = false, print_config = false;
	const char *get_key = NULL;
	json_t *overrides = json_array();
	int o;
	while ((o = getopt_long(argc, argv, "c:r:u:p:d:m:f:s:B:qhV", options, NULL)) != -1) {
		switch (o) {
		case 'c':
			config = optarg;
			break;
		case 'r':
			resume = optarg;
			break;
		case OPT_SET:
			sets[nsets++] = optarg;
			break;
		case 'u':
			unrolls = optarg;
			break;
		case 'p':
			params_ep = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'm':
			metrics = optarg;
			break;
		case 'f':
			snprintf(buf, sizeof buf, "total_frames=%lld",
			         cli_int("--frames", optarg, 1, INT64_MAX / 2));
			json_array_append_new(overrides, json_string(buf));
			break;
		case 's':
			snprintf(buf, sizeof buf, "seed=%llu", (unsigned long long)cli_u64("--seed", optarg));
			json_array_append_new(overrides, json_string(buf));
			break;
		case OPT_LR:
			snprintf(buf, sizeof buf, "optimizer.lr=%.9g", cli_double("--lr", optarg, 0, 10));
			json_array_append_new(overrides, json_string(buf));
			break;
		case 'B':
			snprintf(buf, sizeof buf, "batch_size=%lld",
			         cli_int("--batch-size", optarg, 1, 1 << 20));
			json_array_append_new(overrides, json_string(buf));
			break;
		case OPT_TARGET:
			snprintf(buf, sizeof buf, "target_return=%.17g",
			         cli_double("--target", optarg, -1e300, 1e300));
			json_array_append_new(overrides, json_string(buf));
			break;
		case OPT_CKPT:
			snprintf(buf, sizeof buf, "checkpoint_interval=%.17g",
			         cli_double("--checkpoint-interval", optarg, 0, 1e9));
			json_array_append_new(overrides, json_string(buf));
			break;
		case OPT_PRINT:
			print_config = true;
			break;
		case OPT_GET:
			get_key = optarg;
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
	if (!config == !resume)
		cli_usage_error("give one of --config and --resume");
	if (!print_config && !get_key && (!unrolls || !params_ep))
		cli_usage_error("--unrolls and --params are required");
	cli_catch_signals();

	seed_err err;
	json_t *root = NULL;
	seed_checkpoint *ck = NULL;
	if (resume) {
		if (seed_checkpoint_load(resume, &ck, &err))
			cli_die("--resume: %s", err.msg);
		json_t *meta = seed_checkpoint_meta(ck);
		json_t *c = meta ? json_object_get(meta, "config") : NULL;
		if (!json_is_object(c))
			cli_die("--resume %s: the checkpoint holds no training configuration", resume);
		root = json_deep_copy(c);
		if (!dir)
			dir = resume;
	} else if (config_load_file(config, &root, &err)) {
		cli_die("--config: %s", err.msg);
	}
	for (int i = 0; i < nsets; i++)
		if (config_set(root, sets[i], &err))
			cli_usage_error("%s", err.msg);
	size_t idx;
	json_t *ov;
	json_array_foreach(overrides, idx, ov) config_set(root, json_string_value(ov), &err);
	json_decref(overrides);
	free(sets);

	learner L = {0};
	if (config_parse(root, &L.cfg, &err))
		cli_die("%s", err.msg);
	if (get_key) {
		json_t *v = config_get(L.cfg.root, get_key);
		if (!v)
			cli_die("--get: the configuration has no key '%s'", get_key);
		if (json_is_string(v))
			puts(json_string_value(v));
		else {
			char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			puts(t);
			free(t);
		}
		config_free(&L.cfg);
		return 0;
	}
	if (print_config) {
		json_dumpf(L.cfg.root, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		config_free(&L.cfg);
		return 0;
	}

	/* The environment tells the observation and action spaces. */
	seed_envs *probe;
	if (seed_envs_new(&probe, L.cfg.env, L.cfg.env_options, 1, 0, &err))
		cli_die("config: %s", err.msg);
	L.spec = *seed_envs_spec(probe);
	seed_envs_free(&probe);
	L.obs_bytes = seed_env_spec_obs_bytes(&L.spec);
	L.A = L.spec.num_actions;
	L.T1 = L.cfg.unroll_length + 1;
	L.B = L.cfg.batch_size;
	if (seed_model_new(&L.model, L.cfg.model, L.spec.obs_dtype, L.spec.obs_rank, L.spec.obs_shape, L.A,
	                   L.T1 * L.B, &err))
		cli_die("config: model: %s", err.msg);
	if (seed_optim_new(&L.optim, &L.cfg.optim, seed_model_num_params(L.model), &err))
		cli_die("config: optimizer: %s", err.msg);
	seed_rng_init(&L.rng, L.cfg.seed, 0x1ea);
	seed_model_init(L.model, &L.rng);
	if (ck) {
		if (restore(&L, ck, &err))
			cli_die("--resume: %s", err.msg);
		seed_checkpoint_free(&ck);
	}
	alloc_batch(&L);
	L.returns = seed_xcalloc((size_t)L.cfg.return_window, sizeof(double));
	seed_buf_init(&L.out);

	seed_metrics *mx = NULL;
	char path[4096];
	if (dir && mkdir(dir, 0777) != 0 && errno != EEXIST)
		cli_die("%s: %s", dir, strerror(errno));
	if (!metrics && dir) {
		snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
		metrics = path;
	}
	if (metrics) {
		if (strcmp(metrics, "-") == 0)
			mx = seed_metrics_from_fd(1);
		else if (seed_metrics_open(metrics, &mx, &err))
			cli_die("%s", err.msg);
	}

	void *ctx = seed_chan_context();
	seed_chan *uch, *pch;
	seed_chan_opts uo = {.bind = false, .hwm = L.cfg.infer_hwm, .stop = &cli_stop};
	seed_chan_opts po = {.bind = true, .stop = &cli_stop};
	if (!ctx || seed_chan_open(&uch, ctx, SEED_CHAN_PULL, unrolls, &uo, &err))
		cli_die("%s", ctx ? err.msg : "cannot create a ZeroMQ context");
	if (seed_chan_open(&pch, ctx, SEED_CHAN_PUB, params_ep, &po, &err))
		cli_die("%s", err.msg);

	char summary[512];
	seed_model_summary(L.model, summary, sizeof summary);
	bool progress = !quiet && isatty(2);
	if (!quiet)
		fprintf(stderr, "%s: %s on %s, %s; %s\n", cli_prog, summary, L.cfg.env, seed_blas_info(),
		        resume ? "resumed" : "new run");

	L.wall0 = cli_now();
	L.t_metrics = L.wall0;
	L.frames_at_metrics = L.frames;
	L.updates_at_metrics = L.updates;
	double t_ckpt = L.wall0, t_pub = 0;
	int64_t published_version = -1;
	const char *why = "stopped by a signal";
	int rc = 0;
	seed_frame f = {0};
	while (!cli_stop) {
		double now = cli_now();
		/* Until updates flow, republish so late subscribers get parameters. */
		if (L.policy_version == published_version && now - t_pub > 0.5) {
			publish(&L, pch);
			t_pub = now;
		} else if (L.policy_version != published_version) {
			published_version = L.policy_version;
			t_pub = now;
		}
		if (L.frames >= L.cfg.total_frames) {
			why = "frame budget reached";
			break;
		}
		if (!isnan(L.cfg.target_return) && L.nreturns >= L.cfg.return_window &&
		    mean_return(&L) >= L.cfg.target_return) {
			why = "target return reached";
			break;
		}
		seed_chan_msg m;
		int r = seed_chan_recv(uch, &m, 100, &err);
		if (r == -SEED_EEOF) {
			why = "end of the unroll stream";
			break;
		}
		if (r == 0) {
			if (seed_frame_decode(&f, m.data, m.len, &err) != 0) {
				report_bad(&L, "%s", err.msg);
			} else if (f.type == SEED_FRAME_UNROLL) {
				if (take_unroll(&L, &f, pch, &err))
					report_bad(&L, "%s", err.msg);
			} else if (f.type == SEED_FRAME_EPISODE) {
				take_episodes(&L, &f);
			} else {
				report_bad(&L, "a %s frame: the learner takes unroll and episode frames",
				           seed_frame_type_name(f.type));
			}
		} else if (r != -EAGAIN && r != -EINTR) {
			cli_warn("%s", err.msg);
		}
		now = cli_now();
		if (L.cfg.metrics_interval > 0 && now - L.t_metrics >= L.cfg.metrics_interval)
			write_metrics(&L, mx, progress);
		if (dir && L.cfg.checkpoint_interval > 0 && now - t_ckpt >= L.cfg.checkpoint_interval) {
			if (save_checkpoint(&L, dir, &err))
				cli_warn("checkpoint: %s", err.msg);
			t_ckpt = now;
		}
	}
	seed_frame_clear(&f);
	write_metrics(&L, mx, progress);
	if (progress)
		fputc('\n', stderr);
	if (dir) {
		if (save_checkpoint(&L, dir, &err)) {
			cli_warn("checkpoint: %s", err.msg);
			rc = 1;
		}
	}
	if (!quiet)
		fprintf(stderr,
		        "%s: %s: %" PRId64 " frames, %" PRId64 " updates, version %" PRId64
		        ", mean return %.2f over the last %d episodes, %.1f s%s%s\n",
		        cli_prog, why, L.frames, L.updates, L.policy_version,
		        L.nreturns ? mean_return(&L) : 0.0, L.nreturns, L.wall_before + (cli_now() - L.wall0),
		        dir ? ", checkpoint in " : "", dir ? dir : "");
	seed_metrics_close(&mx);
	seed_chan_close(&uch);
	seed_chan_close(&pch);
	seed_chan_context_free(&ctx);
	free_batch(&L);
	free(L.returns);
	seed_buf_free(&L.out);
	seed_optim_free(&L.optim);
	seed_model_free(&L.model);
	config_free(&L.cfg);
	return rc;
}
