/* bench/gpu_bench.c: the model's throughput on a device (bench/RESULTS.md).
 *
 *   gpu_bench [--device DEV] [--model minatar|nature|cartpole] [--rows N]
 *             [--seconds S]
 *
 * Two figures, each the best of three timed runs of about S seconds
 * (default 2) after a warm-up:
 *   infer  rows/s of the inference server's forward pass: N rows of
 *          observations in, policy logits and values out (seed-infer's
 *          call, with its copies to and from the device)
 *   learn  rows/s of the learner's update on N rows: forward, backward from
 *          fixed loss gradients (the V-trace loss itself runs on the host in
 *          seed-learn and is not timed here), global-norm clipping and an Adam
 *          step (seed_optim_clip_model, seed_optim_step_model: on a GPU all of
 *          it on the device)
 * The networks: minatar (examples/models/minatar.json, u8 10x10x4, 6
 * actions), nature (examples/models/nature-dqn.json, u8 84x84x4, 18
 * actions), cartpole (examples/models/mlp64.json, f32 4, 2 actions).
 * Default N 4096 (the batch for the MinAtar forward pass).  DEV is
 * cpu, cuda or cuda:N (default cuda); exits 77 when the device is not
 * there (no GPU, or CUDA not built in), saying why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/clock.h"
#include "seed/error.h"
#include "seed/nn.h"
#include "seed/optim.h"
#include "seed/rng.h"

static const char minatar_json[] =
    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"}, {\"type\": "
    "\"flatten\"}, {\"type\": \"linear\", \"out\": 128}, {\"type\": \"relu\"}]}";
static const char nature_json[] = "{\"torso\": [{\"type\": \"scale\", \"by\": 0.00392156862745098}, "
                                  "{\"type\": \"conv2d\", \"filters\": 32, "
                                  "\"kernel\": 8, \"stride\": 4}, {\"type\": \"relu\"}, {\"type\": "
                                  "\"conv2d\", \"filters\": 64, \"kernel\": 4, "
                                  "\"stride\": 2}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": "
                                  "64, \"kernel\": 3, \"stride\": 1}, "
                                  "{\"type\": \"relu\"}, {\"type\": \"flatten\"}, {\"type\": \"linear\", "
                                  "\"out\": 512}, {\"type\": \"relu\"}]}";
static const char mlp_json[] =
    "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}, {\"type\": "
    "\"linear\", \"out\": 64}, {\"type\": \"tanh\"}]}";

static void usage(void)
{
	fprintf(stderr, "usage: gpu_bench [--device DEV] [--model minatar|nature|cartpole] [--rows N] "
	                "[--seconds S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *device = "cuda", *model = "minatar";
	int rows = 4096;
	double seconds = 2;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--device") == 0)
			device = argv[++i];
		else if (strcmp(argv[i], "--model") == 0)
			model = argv[++i];
		else if (strcmp(argv[i], "--rows") == 0)
			rows = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[++i]);
		else
			usage();
	}
	if (rows < 1 || !(seconds > 0))
		usage();
	const char *json;
	seed_dtype dt = SEED_DTYPE_U8;
	int rank = 3, A;
	int64_t shape[3];
	if (strcmp(model, "minatar") == 0) {
		json = minatar_json;
		shape[0] = shape[1] = 10;
		shape[2] = 4;
		A = 6;
	} else if (strcmp(model, "nature") == 0) {
		json = nature_json;
		shape[0] = shape[1] = 84;
		shape[2] = 4;
		A = 18;
	} else if (strcmp(model, "cartpole") == 0) {
		json = mlp_json;
		dt = SEED_DTYPE_F32;
		rank = 1;
		shape[0] = 4;
		A = 2;
	} else
		usage();

	seed_err err;
	if (seed_device_check(device, &err) < 0) {
		printf("gpu_bench: skipped: %s\n", err.msg);
		return 77;
	}
	seed_model *m = NULL;
	seed_optim *o = NULL;
	seed_optim_config oc;
	seed_optim_config_default(&oc, SEED_OPTIM_ADAM);
	oc.beta1 = 0; /* SEED's V-trace agents */
	if (seed_model_new(&m, json, dt, rank, shape, A, rows, &err) < 0 ||
	    seed_model_set_device(m, device, &err) < 0 ||
	    seed_optim_new(&o, &oc, seed_model_num_params(m), &err) < 0) {
		fprintf(stderr, "gpu_bench: %s\n", err.msg);
		return 1;
	}
	seed_rng r;
	seed_rng_init(&r, 1, 0);
	seed_model_init(m, &r);
	size_t ob = seed_model_obs_bytes(m) * (size_t)rows;
	unsigned char *obs = malloc(ob);
	float *logits = malloc((size_t)rows * A * sizeof(float)),
	      *values = malloc((size_t)rows * sizeof(float));
	float *dl = malloc((size_t)rows * A * sizeof(float)), *dv = malloc((size_t)rows * sizeof(float));
	if (dt == SEED_DTYPE_U8)
		for (size_t i = 0; i < ob; i++)
			obs[i] = (unsigned char)seed_rng_below(&r, 256);
	else
		for (size_t i = 0; i < ob / 4; i++)
			((float *)obs)[i] = (float)seed_rng_normal(&r);
	for (size_t i = 0; i < (size_t)rows * A; i++)
		dl[i] = (float)(1e-3 * seed_rng_normal(&r));
	for (int i = 0; i < rows; i++)
		dv[i] = (float)(1e-3 * seed_rng_normal(&r));

	char summary[256];
	seed_model_summary(m, summary, sizeof summary);
	printf("gpu_bench: %s on %s, %d rows: %s\n", model, seed_model_device(m), rows, summary);
	for (int phase = 0; phase < 2; phase++) {
		double best = 0;
		long calls_best = 0;
		for (int rep = -1; rep < 3; rep++) { /* rep -1: the warm-up */
			long calls = 0;
			double t0 = seed_now_s(), t;
			do {
				if (seed_model_forward(m, rows, obs, logits, values) < 0) {
					fprintf(stderr, "gpu_bench: forward failed\n");
					return 1;
				}
				if (phase == 1) {
					seed_model_zero_grad(m);
					if (seed_model_backward(m, rows, dl, dv) < 0 ||
					    seed_optim_step_model(
					        o, m, 1e-6f * (float)(seed_optim_clip_model(m, 40.0f) > 0)) <
					        0) {
						fprintf(stderr, "gpu_bench: update failed\n");
						return 1;
					}
				}
				calls++;
				t = seed_now_s() - t0;
			} while (t < (rep < 0 ? seconds / 4 : seconds));
			double rate = (double)calls * rows / t;
			if (rep >= 0 && rate > best) {
				best = rate;
				calls_best = calls;
			}
		}
		printf("%s %s rows=%d: %.3g rows/s (%.3f ms per call, %ld calls)\n",
		       phase ? "learn" : "infer", model, rows, best, 1e3 * rows / best, calls_best);
	}
	/* The parameters come back from the device (a publish). */
	const float *p = seed_model_params_read(m);
	printf("gpu_bench: parameter 0 after the updates: %.9g\n", (double)p[0]);
	free(obs);
	free(logits);
	free(values);
	free(dl);
	free(dv);
	seed_optim_free(&o);
	seed_model_free(&m);
	return 0;
}
