/* tests/unit/learn/test_trainer.c: seed/trainer.h: the learner behind the
 * trainer interface and seed_trainer_run, its loop, on a recorded stream of
 * unroll frames (a file channel) with parameters published on inproc://:
 * updates as the stream gives them, the end of the stream as the reason,
 * bad frames counted and said, parameters published with their versions,
 * metrics lines with the loop's phases (DIR/metrics.jsonl) and TensorBoard
 * events, the checkpoint at the end, a signal's stop, republication while
 * nothing new goes out, a metrics file that cannot be opened, the
 * evolver's refusal of a device. */
#include "seed/trainer.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "tap.h"
#include "tmpdir.h"

static void *ctx;
static const char *dir;

static const seed_env_spec SPEC = {
    .obs_dtype = SEED_DTYPE_F32, .obs_rank = 1, .obs_shape = {4}, .num_actions = 2, .max_steps = 500};

static void config(seed_config *c, const char *text)
{
	json_t *root = json_loads(text, 0, NULL);
	seed_err err = {""};
	if (!root || seed_config_parse(root, c, &err)) {
		printf("# bad test config: %s\n", err.msg);
		exit(99);
	}
}

#define LEARNER                                                                                              \
	"{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": "    \
	"\"tanh\"}]}, \"unroll_length\": 3, \"batch_size\": 2, \"seed\": 5, \"metrics_interval\": 0.001}"

/* One unroll frame of Bf unrolls of 4 steps (cartpole-shaped), encoded
 * into b. */
static void unroll_frame(seed_buf *b, int Bf)
{
	enum { T1 = 4 };
	int32_t env[8], action[8 * T1] = {0}, version[8 * T1] = {0};
	float obs[8 * T1 * 4], reward[8 * T1], final_value[8 * T1] = {0}, logits[8 * T1 * 2] = {0};
	uint8_t terminated[8 * T1] = {0}, truncated[8 * T1] = {0};
	for (int i = 0; i < Bf * T1; i++) {
		reward[i] = 1;
		action[i] = i % 2;
		for (int k = 0; k < 4; k++)
			obs[i * 4 + k] = 0.01f * (float)(i + k);
	}
	for (int i = 0; i < Bf; i++)
		env[i] = i;
	int64_t B = Bf;
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_UNROLL);
	seed_frame_set_int(&f, "run", 0);
	seed_frame_set_int(&f, "actor", 0);
	seed_frame_set_int(&f, "num_actions", 2);
	seed_frame_set_tensor(&f, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &B));
	seed_frame_set_tensor(&f, "obs", seed_tensor_view(obs, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, 4}));
	seed_frame_set_tensor(&f, "action", seed_tensor_view(action, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(reward, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(&f, "terminated",
	                      seed_tensor_view(terminated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(&f, "truncated",
	                      seed_tensor_view(truncated, SEED_DTYPE_U8, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(&f, "final_value",
	                      seed_tensor_view(final_value, SEED_DTYPE_F32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(&f, "policy_version",
	                      seed_tensor_view(version, SEED_DTYPE_I32, 2, (int64_t[]){B, T1}));
	seed_frame_set_tensor(&f, "logits",
	                      seed_tensor_view(logits, SEED_DTYPE_F32, 3, (int64_t[]){B, T1, 2}));
	seed_err err;
	seed_buf_reset(b);
	CHECK(seed_frame_encode(&f, b, &err) == 0);
}

/* A stream file: frames unroll frames of 2 unrolls, with a frame that is
 * not one (an episode frame that does not validate) after the first. */
static const char *stream(const char *name, int frames, bool bad)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	seed_chan *out;
	seed_err err;
	CHECK(seed_chan_open(&out, NULL, SEED_CHAN_PUSH, path, NULL, &err) == 0);
	seed_buf b = {0};
	for (int i = 0; i < frames; i++) {
		unroll_frame(&b, 2);
		CHECK(seed_chan_send(out, NULL, 0, b.data, b.len, false) == 0);
		if (bad && i == 0) {
			const unsigned char junk[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0xa6,
			                              'u',  'n',  'r', 'o', 'l', 'l'};
			CHECK(seed_chan_send(out, NULL, 0, junk, sizeof junk, false) == 0);
		}
	}
	seed_buf_free(&b);
	seed_chan_close(&out);
	return path;
}

struct said {
	int warnings, progress;
	char first_warning[512];
};

static void say(void *arg, seed_trainer_say kind, const char *line)
{
	struct said *s = arg;
	if (kind == SEED_TRAINER_WARN && s->warnings++ == 0)
		snprintf(s->first_warning, sizeof s->first_warning, "%s", line);
	if (kind == SEED_TRAINER_PROGRESS)
		s->progress++;
}

/* The versions of the params frames a SUB got, up to max. */
static int versions(seed_chan *sub, int64_t *v, int max)
{
	int n = 0;
	seed_chan_msg m;
	seed_err err;
	seed_frame_decoder *d;
	seed_frame f;
	CHECK(seed_frame_decoder_new(&d) == 0);
	while (n < max && seed_chan_recv(sub, &m, 100, &err) == 0)
		if (seed_frame_decoder_decode(d, &f, m.data, m.len, &err) == 0 && f.type == SEED_FRAME_PARAMS)
			v[n++] = seed_frame_int(&f, "policy_version", -1);
	seed_frame_clear(&f);
	seed_frame_decoder_free(&d);
	return n;
}

/* Five frames of two unrolls, batches of two: five updates, each published
 * with its version; the bad frame is dropped, counted and said; the stream's
 * end is the reason; metrics lines carry the phases; the last checkpoint is
 * the fifth update's. */
static void t_learner_on_a_stream(void)
{
	seed_config c;
	config(&c, LEARNER);
	seed_trainer *t;
	seed_err err;
	CHECK(seed_trainer_new(&t, &c, &SPEC, &err) == 0);
	CHECK(!seed_trainer_samples(t) && seed_trainer_tick_in(t) == INFINITY);
	char run_dir[4200], metrics_path[4300];
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	snprintf(metrics_path, sizeof metrics_path, "%s/metrics.jsonl", run_dir);
	CHECK(seed_trainer_open_dir(t, run_dir, &err) == 0);
	CHECK(seed_trainer_open_metrics(t, run_dir, NULL, &err) == 0);
	seed_chan *in, *pub, *sub;
	CHECK(seed_chan_open(&in, NULL, SEED_CHAN_PULL, stream("five.frames", 5, true), NULL, &err) == 0);
	CHECK(seed_chan_open(&pub, ctx, SEED_CHAN_PUB, "@inproc://trainer-params", NULL, &err) == 0);
	CHECK(seed_chan_open(&sub, ctx, SEED_CHAN_SUB, "inproc://trainer-params", NULL, &err) == 0);
	struct said said = {0};
	seed_trainer_run_opts o = {
	    .frames = in, .params = pub, .checkpoints = true, .say = say, .say_arg = &said};
	seed_trainer_run_result res;
	int rc = seed_trainer_run(t, &o, &res, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK_MSG(strcmp(res.why, "end of the unroll stream") == 0, "%s", res.why);
	CHECK(res.bad_frames == 1 && said.warnings == 1);
	CHECK_MSG(strstr(said.first_warning, "dropped bad frame #1: "), "%s", said.first_warning);
	CHECK(res.checkpoint_failures == 0 && res.priority_drops == 0);
	CHECK(said.progress >= 1);
	/* The phases are the learner's seven, each >= 0, summing to at most
	 * the loop's seconds. */
	double sum = 0;
	for (int i = 0; i < SEED_PHASE_N; i++) {
		CHECK(res.phase[i] >= 0);
		sum += res.phase[i];
	}
	CHECK(res.phases & SEED_PHASE_BIT(SEED_PHASE_BACKWARD));
	CHECK_MSG(sum <= res.seconds * 1.001 + 1e-6, "%g of %g s", sum, res.seconds);
	/* Published: the initial version 0, then 1 to 5, in order. */
	int64_t v[64];
	int n = versions(sub, v, 64);
	CHECK(n >= 6);
	for (int i = 1; i < n; i++)
		CHECK(v[i] >= v[i - 1]);
	CHECK(n > 0 && v[0] == 0 && v[n - 1] == 5);
	/* The last metrics line: 5 updates, 1 bad frame, the wait fraction. */
	FILE *fp = fopen(metrics_path, "r");
	char line[8192], last[8192] = "";
	while (fp && fgets(line, sizeof line, fp))
		snprintf(last, sizeof last, "%s", line);
	if (fp)
		fclose(fp);
	json_t *m = json_loads(last, 0, NULL);
	CHECK_MSG(m && json_integer_value(json_object_get(m, "bad_frames")) == 1, "%s", last);
	CHECK(m && json_number_value(json_object_get(m, "updates")) == 5);
	CHECK(m && json_is_number(json_object_get(m, "frac_wait")));
	json_decref(m);
	seed_checkpoint *ck;
	CHECK(seed_checkpoint_load(run_dir, &ck, &err) == 0);
	CHECK(ck && ck->step == 5);
	char cmd[4400];
	snprintf(cmd, sizeof cmd, "ls %s | grep -q '^events\\.out\\.tfevents\\.'", run_dir);
	CHECK(system(cmd) == 0);
	seed_checkpoint_free(&ck);
	seed_chan_close(&in);
	seed_chan_close(&sub);
	seed_chan_close(&pub);
	seed_trainer_free(&t);
	CHECK(t == NULL);
	seed_config_free(&c);
}

/* The frame budget ends the run before the stream does. */
static void t_learner_budget(void)
{
	seed_config c;
	config(&c, "{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 8}]}, "
	           "\"unroll_length\": 3, \"batch_size\": 2, "
	           "\"total_frames\": 12}");
	seed_trainer *t;
	seed_err err;
	CHECK(seed_trainer_new(&t, &c, &SPEC, &err) == 0);
	seed_chan *in, *pub;
	CHECK(seed_chan_open(&in, NULL, SEED_CHAN_PULL, stream("ten.frames", 10, false), NULL, &err) == 0);
	CHECK(seed_chan_open(&pub, ctx, SEED_CHAN_PUB, "@inproc://trainer-budget", NULL, &err) == 0);
	seed_trainer_run_opts o = {.frames = in, .params = pub};
	seed_trainer_run_result res;
	CHECK(seed_trainer_run(t, &o, &res, &err) == 0);
	/* 6 frames of an update each: 2 updates reach 12. */
	CHECK_MSG(strcmp(res.why, "frame budget reached") == 0, "%s", res.why);
	seed_chan_close(&in);
	seed_chan_close(&pub);
	seed_trainer_free(&t);
	seed_config_free(&c);
}

/* A stop flag already set: the loop ends at once with no reason (a
 * signal's), and still writes its final checkpoint. */
static void t_stopped(void)
{
	seed_config c;
	config(&c, LEARNER);
	seed_trainer *t;
	seed_err err;
	CHECK(seed_trainer_new(&t, &c, &SPEC, &err) == 0);
	char run_dir[4200];
	snprintf(run_dir, sizeof run_dir, "%s/stopped", dir);
	CHECK(seed_trainer_open_dir(t, run_dir, &err) == 0);
	seed_chan *in, *pub;
	volatile sig_atomic_t stop = 1;
	seed_chan_opts po = {.bind = true, .stop = &stop};
	CHECK(seed_chan_open(&in, NULL, SEED_CHAN_PULL, stream("two.frames", 2, false), NULL, &err) == 0);
	CHECK(seed_chan_open(&pub, ctx, SEED_CHAN_PUB, "inproc://trainer-stop", &po, &err) == 0);
	seed_trainer_run_opts o = {.frames = in, .params = pub, .checkpoints = true, .stop = &stop};
	seed_trainer_run_result res;
	CHECK(seed_trainer_run(t, &o, &res, &err) == 0);
	CHECK(res.why[0] == '\0');
	seed_checkpoint *ck = NULL;
	CHECK(seed_checkpoint_load(run_dir, &ck, &err) == 0 && ck->step == 0);
	seed_checkpoint_free(&ck);
	seed_chan_close(&in);
	seed_chan_close(&pub);
	seed_trainer_free(&t);
	seed_config_free(&c);
}

/* A metrics file that cannot be opened is an error naming it. */
static void t_metrics_unopenable(void)
{
	seed_config c;
	config(&c, LEARNER);
	seed_trainer *t;
	seed_err err;
	CHECK(seed_trainer_new(&t, &c, &SPEC, &err) == 0);
	char bad[4200];
	snprintf(bad, sizeof bad, "%s/no-such-dir/metrics.jsonl", dir);
	CHECK(seed_trainer_open_metrics(t, NULL, bad, &err) < 0);
	CHECK_MSG(strstr(err.msg, "no-such-dir/metrics.jsonl"), "%s", err.msg);
	seed_trainer_free(&t);
	seed_config_free(&c);
}

/* The evolver computes on the CPU only, and says why. */
static void t_evolver_device(void)
{
	seed_config c;
	config(&c, "{\"env\": \"cartpole\", \"model\": {\"torso\": [{\"type\": \"linear\", \"out\": 4}]}, "
	           "\"algorithm\": \"es\", \"evolution\": {\"population\": 4, \"noise_size\": 100000}}");
	seed_trainer *t;
	seed_err err;
	int rc = seed_trainer_new(&t, &c, &SPEC, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK(!seed_trainer_samples(t) && seed_trainer_tick_in(t) > 0);
	CHECK(seed_trainer_set_device(t, "cpu", &err) == 0);
	CHECK(seed_trainer_set_device(t, "cuda:0", &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "algorithm es runs no backward pass"), "%s", err.msg);
	seed_trainer_free(&t);
	seed_config_free(&c);
}

/* The options that set configuration values, after the --set's, each
 * only when given; the numbers read back as given. */
static void t_sets(void)
{
	const char *given[] = {"seed=1", "total_frames=5"};
	seed_trainer_overrides none = {0};
	int n = -1;
	const char **v = seed_trainer_sets(&none, given, 2, &n);
	CHECK(n == 2 && strcmp(v[0], "seed=1") == 0 && strcmp(v[1], "total_frames=5") == 0);
	free(v);
	seed_trainer_overrides o = {.frames = 1000,
	                            .seed = UINT64_MAX,
	                            .lr = 0.000123456789012,
	                            .batch_size = 64,
	                            .target = 195.5,
	                            .checkpoint_interval = 0.1,
	                            .frames_seen = true,
	                            .seed_seen = true,
	                            .lr_seen = true,
	                            .batch_size_seen = true,
	                            .target_seen = true,
	                            .checkpoint_interval_seen = true};
	v = seed_trainer_sets(&o, given, 2, &n);
	const char *want[] = {"seed=1",
	                      "total_frames=5",
	                      "total_frames=1000",
	                      "seed=18446744073709551615",
	                      "optimizer.lr=0.000123456789",
	                      "batch_size=64",
	                      "target_return=195.5",
	                      "checkpoint_interval=0.10000000000000001"};
	CHECK_MSG(n == 8, "%d", n);
	for (int i = 0; i < n && i < 8; i++)
		CHECK_MSG(strcmp(v[i], want[i]) == 0, "%d: %s, not %s", i, v[i], want[i]);
	free(v);
	o = (seed_trainer_overrides){.target = -1, .target_seen = true};
	v = seed_trainer_sets(&o, NULL, 0, &n);
	CHECK(n == 1 && strcmp(v[0], "target_return=-1") == 0);
	free(v);
}

static volatile sig_atomic_t alarm_stop;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_stop = 1;
}

/* No frames come: what is current goes out again every republish_s (0.5 s
 * for the learner), version 0 each time, and no more often; stopped by a
 * signal after 1.4 s, the loop has published at 0, 0.5 and 1 s (a
 * subscriber may miss the first, as it joins). */
static void t_republish(void)
{
	seed_config c;
	config(&c, LEARNER);
	seed_trainer *t;
	seed_err err;
	CHECK(seed_trainer_new(&t, &c, &SPEC, &err) == 0);
	seed_chan *in, *pub, *sub;
	alarm_stop = 0;
	seed_chan_opts io = {.bind = true, .stop = &alarm_stop}, po = {.bind = true, .stop = &alarm_stop};
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, "inproc://trainer-quiet", &io, &err) == 0);
	CHECK(seed_chan_open(&pub, ctx, SEED_CHAN_PUB, "inproc://trainer-repub", &po, &err) == 0);
	CHECK(seed_chan_open(&sub, ctx, SEED_CHAN_SUB, "inproc://trainer-repub", NULL, &err) == 0);
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	sigaction(SIGALRM, &sa, &old);
	struct itimerval it = {.it_value = {.tv_sec = 1, .tv_usec = 400000}};
	setitimer(ITIMER_REAL, &it, NULL);
	seed_trainer_run_opts o = {.frames = in, .params = pub, .stop = &alarm_stop};
	seed_trainer_run_result res;
	CHECK(seed_trainer_run(t, &o, &res, &err) == 0);
	sigaction(SIGALRM, &old, NULL);
	CHECK(alarm_stop && res.why[0] == '\0');
	CHECK_MSG(res.seconds >= 1.35 && res.seconds < 5, "%g s", res.seconds);
	int64_t v[64];
	int n = versions(sub, v, 64);
	CHECK_MSG(n >= 2 && n <= 3, "%d publications", n);
	for (int i = 0; i < n; i++)
		CHECK(v[i] == 0);
	seed_chan_close(&in);
	seed_chan_close(&sub);
	seed_chan_close(&pub);
	seed_trainer_free(&t);
	seed_config_free(&c);
}

int main(void)
{
	ctx = seed_chan_context();
	dir = tmpdir_new();
	TAP_RUN(t_learner_on_a_stream);
	TAP_RUN(t_learner_budget);
	TAP_RUN(t_stopped);
	TAP_RUN(t_republish);
	TAP_RUN(t_sets);
	TAP_RUN(t_metrics_unopenable);
	TAP_RUN(t_evolver_device);
	tmpdir_remove(dir);
	seed_chan_context_free(&ctx);
	return tap_done();
}
