/* tests/gpu/test_cuda.c: the CUDA backend against the CPU reference.
 *
 * llm.c's habit: every model runs twice from the same parameters, once on
 * the CPU (cpu.c, itself checked against numpy and PyTorch goldens in
 * tests/unit/nn/test_nn.c) and once on the GPU (cuda.cu), and the outputs and every
 * gradient tensor must agree within the tolerances below.  The shapes cover
 * every kernel: linear (cuBLAS) with and without a relu fused, tanh, scale
 * (one factor and one per channel, in the middle of a network so that its
 * backward runs), flatten, conv2d (im2col, col2im) with strides 1 to 4,
 * paddings valid, explicit and "same", odd sizes, a stack of three (the
 * input gradient of the upper ones), chunked patch matrices (Nature DQN at
 * 400 rows), u8 and f32 observations, actor-critic and dueling heads, and
 * batches from 1 to 4096 rows.  Then the slabs' coherence: host writes
 * through seed_model_params reach the device, gradients accumulate and come
 * back, seed_model_zero_grad, reserve and moves between devices keep them;
 * models with an LSTM core over sequences (resets, state in and out,
 * previous rewards and actions); the optimizer's step on the device.
 *
 * Tolerances (float32 sums in another order, no TF32):
 *   outputs:   |gpu - cpu| <= OUT_TOL * max(1, max |cpu|) over the tensor
 *   gradients: |gpu - cpu| <= GRAD_TOL * max |cpu| + 1e-6 per tensor
 *
 * Without a CUDA device (no driver counts as none), or in a build without
 * CUDA, it prints a TAP skip plan and exits 77; tests/gpu/test_cuda.sh
 * turns that into a skip for make check.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "seed/error.h"
#include "seed/nn.h"
#include "seed/optim.h"
#include "seed/rng.h"

#define OUT_TOL 1e-4
#define GRAD_TOL 1e-3

static const char *device = "cuda";

typedef struct net {
	const char *name, *json;
	seed_dtype dt;
	int rank;
	int64_t shape[4];
	int A;
} net;

static const net nets[] = {
    {"cartpole-mlp",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}, {\"type\": \"linear\", "
     "\"out\": 64}, {\"type\": \"tanh\"}]}",
     SEED_DTYPE_F32,
     1,
     {4},
     2},
    {"heads-only", "{\"torso\": []}", SEED_DTYPE_F32, 1, {7}, 3},
    {"relu-mlp-wide",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 300}, {\"type\": \"relu\"}, {\"type\": \"linear\", "
     "\"out\": 257}, {\"type\": \"relu\"}]}",
     SEED_DTYPE_F32,
     1,
     {129},
     5},
    {"minatar",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"}, "
     "{\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 128}, {\"type\": \"relu\"}]}",
     SEED_DTYPE_U8,
     3,
     {10, 10, 4},
     6},
    {"minatar-f32-dueling",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"}, "
     "{\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 128}, {\"type\": \"relu\"}], \"head\": "
     "\"dueling\"}",
     SEED_DTYPE_F32,
     3,
     {10, 10, 4},
     6},
    {"conv-stride2-pad1-scale",
     "{\"torso\": [{\"type\": \"scale\", \"by\": [0.5, 2, -1]}, {\"type\": \"conv2d\", \"filters\": 8, "
     "\"kernel\": 3, \"stride\": 2, \"padding\": 1}, {\"type\": \"scale\", \"by\": 0.25}, {\"type\": "
     "\"relu\"}, {\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 2, \"stride\": 1, \"padding\": 1}, "
     "{\"type\": \"tanh\"}, {\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 9}]}",
     SEED_DTYPE_F32,
     3,
     {11, 9, 3},
     4},
    {"conv-same-stride3",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 7, \"kernel\": 4, \"stride\": 3, \"padding\": "
     "\"same\"}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 6, \"kernel\": 3, "
     "\"stride\": 2, \"padding\": \"same\"}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", "
     "\"filters\": 4, \"kernel\": 1}, {\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 16}, "
     "{\"type\": \"relu\"}], \"head\": \"dueling\"}",
     SEED_DTYPE_U8,
     3,
     {13, 17, 2},
     5},
    {"nature-dqn",
     "{\"torso\": [{\"type\": \"scale\", \"by\": 0.00392156862745098}, {\"type\": \"conv2d\", "
     "\"filters\": 32, \"kernel\": 8, \"stride\": 4}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", "
     "\"filters\": 64, \"kernel\": 4, \"stride\": 2}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", "
     "\"filters\": 64, \"kernel\": 3, \"stride\": 1}, {\"type\": \"relu\"}, {\"type\": \"flatten\"}, "
     "{\"type\": \"linear\", \"out\": 512}, {\"type\": \"relu\"}]}",
     SEED_DTYPE_U8,
     3,
     {84, 84, 4},
     18},
};

/* Rows per net: small, odd and large batches (Nature DQN's 400 rows run
 * its first convolution in two chunks of patches). */
static const int rows_small[] = {1, 3, 64, 257, 4096};
static const int rows_nature[] = {1, 5, 400};

static void fill_obs(const net *n, int B, void *obs, seed_rng *r)
{
	size_t numel = 1;
	for (int d = 0; d < n->rank; d++)
		numel *= (size_t)n->shape[d];
	numel *= (size_t)B;
	if (n->dt == SEED_DTYPE_U8)
		for (size_t i = 0; i < numel; i++)
			((uint8_t *)obs)[i] = (uint8_t)seed_rng_below(r, 256);
	else
		for (size_t i = 0; i < numel; i++)
			((float *)obs)[i] = (float)seed_rng_normal(r);
}

static double max_abs(const float *x, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(x[i]) > m)
			m = fabs(x[i]);
	return m;
}

/* Whether got matches want within OUT_TOL (said in a comment if not). */
static void check_out(const char *what, const char *name, int B, const float *got, const float *want,
                      size_t n)
{
	double tol = OUT_TOL * fmax(1.0, max_abs(want, n)), worst = 0;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)got[i] - want[i]);
		if (!(d <= worst)) {
			worst = d;
			at = i;
		}
	}
	CHECK_MSG(worst <= tol,
	          "%s B=%d %s: worst |gpu - cpu| %.3g at %zu (gpu %.9g, cpu %.9g), tolerance %.3g", name, B,
	          what, worst, at, (double)got[at], (double)want[at], tol);
}

/* Every gradient tensor of g against c's. */
static void check_grads(const char *name, int B, seed_model *g, seed_model *c)
{
	const float *gg = seed_model_grads(g), *cg = seed_model_grads(c);
	for (int t = 0; t < seed_model_num_tensors(c); t++) {
		const seed_model_param *p = seed_model_param_at(c, t);
		const float *x = gg + p->offset, *y = cg + p->offset;
		double tol = GRAD_TOL * max_abs(y, p->numel) + 1e-6, worst = 0;
		size_t at = 0;
		for (size_t i = 0; i < p->numel; i++) {
			double d = fabs((double)x[i] - y[i]);
			if (!(d <= worst)) {
				worst = d;
				at = i;
			}
		}
		CHECK_MSG(worst <= tol,
		          "%s B=%d grad %s: worst %.3g at %zu (gpu %.9g, cpu %.9g), tolerance %.3g", name, B,
		          p->name, worst, at, (double)x[at], (double)y[at], tol);
	}
}

/* A CPU model and its GPU twin with the same parameters. */
static int pair(const net *n, int max_batch, uint64_t seed, seed_model **cpu, seed_model **gpu)
{
	seed_err err;
	seed_rng r;
	seed_rng_init(&r, seed, 1);
	if (seed_model_new(cpu, n->json, n->dt, n->rank, n->shape, n->A, max_batch, &err) < 0 ||
	    seed_model_new(gpu, n->json, n->dt, n->rank, n->shape, n->A, max_batch, &err) < 0) {
		printf("# %s: %s\n", n->name, err.msg);
		return -1;
	}
	seed_model_init(*cpu, &r);
	seed_model_copy_params(*gpu, *cpu);
	if (seed_model_set_device(*gpu, device, &err) < 0) {
		printf("# %s: %s\n", n->name, err.msg);
		return -1;
	}
	return 0;
}

/* Forward and backward (twice, to check that gradients add) on B rows. */
static void compare(const net *n, int B, seed_model *cpu, seed_model *gpu, seed_rng *r)
{
	size_t obs_bytes = seed_model_obs_bytes(cpu) * (size_t)B, A = (size_t)n->A;
	void *obs = malloc(obs_bytes);
	float *out[2], *val[2], *dl = malloc(B * A * sizeof(float)), *dv = malloc(B * sizeof(float));
	for (int k = 0; k < 2; k++) {
		out[k] = malloc(B * A * sizeof(float));
		val[k] = malloc(B * sizeof(float));
	}
	fill_obs(n, B, obs, r);
	for (size_t i = 0; i < B * A; i++)
		dl[i] = (float)seed_rng_normal(r);
	for (int i = 0; i < B; i++)
		dv[i] = (float)seed_rng_normal(r);
	bool q = seed_model_head_kind(cpu) == SEED_HEAD_DUELING;
	seed_model *m[2] = {cpu, gpu};
	for (int k = 0; k < 2; k++) {
		seed_model_zero_grad(m[k]);
		int rc = q ? seed_model_forward_q(m[k], B, obs, out[k])
		           : seed_model_forward(m[k], B, obs, out[k], val[k]);
		CHECK(rc == 0);
		for (int rep = 0; rep < 2; rep++) {
			rc = q ? seed_model_backward_q(m[k], B, dl) : seed_model_backward(m[k], B, dl, dv);
			CHECK(rc == 0);
		}
	}
	check_out(q ? "q" : "logits", n->name, B, out[1], out[0], B * A);
	if (!q)
		check_out("values", n->name, B, val[1], val[0], (size_t)B);
	check_grads(n->name, B, gpu, cpu);
	free(obs);
	free(dl);
	free(dv);
	for (int k = 0; k < 2; k++) {
		free(out[k]);
		free(val[k]);
	}
}

static void t_every_net_every_batch(void)
{
	seed_rng r;
	seed_rng_init(&r, 7, 2);
	for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
		const net *n = &nets[i];
		bool nature = strcmp(n->name, "nature-dqn") == 0;
		const int *rows = nature ? rows_nature : rows_small;
		int nrows = nature ? 3 : 5;
		seed_model *cpu = NULL, *gpu = NULL;
		if (pair(n, rows[nrows - 1], 100 + i, &cpu, &gpu) == 0)
			for (int j = 0; j < nrows; j++)
				compare(n, rows[j], cpu, gpu, &r);
		else
			CHECK(0);
		seed_model_free(&cpu);
		seed_model_free(&gpu);
	}
}

/* Host writes reach the device; the device's gradients come back; zero,
 * reserve and moves keep the slabs. */
static void t_slab_coherence(void)
{
	const net *n = &nets[3]; /* minatar */
	seed_model *cpu = NULL, *gpu = NULL;
	seed_rng r;
	seed_rng_init(&r, 9, 3);
	if (pair(n, 32, 5, &cpu, &gpu) < 0) {
		CHECK(0);
		return;
	}
	compare(n, 32, cpu, gpu, &r);
	/* A write through the host's slab (as an optimizer does). */
	float *pc = seed_model_params(cpu), *pg = seed_model_params(gpu);
	for (size_t i = 0; i < seed_model_num_params(cpu); i += 7) {
		pc[i] *= 0.5f;
		pg[i] *= 0.5f;
	}
	compare(n, 32, cpu, gpu, &r);
	/* Gradients written on the host are added to. */
	float *gc = seed_model_grads(cpu), *gg = seed_model_grads(gpu);
	for (size_t i = 0; i < seed_model_num_params(cpu); i++)
		gc[i] = gg[i] = 0.125f;
	size_t ob = seed_model_obs_bytes(cpu) * 32;
	uint8_t *obs = malloc(ob);
	float *dl = calloc(32 * 6, sizeof(float)), *logits = malloc(32 * 6 * sizeof(float));
	fill_obs(n, 32, obs, &r);
	for (int i = 0; i < 32 * 6; i++)
		dl[i] = (float)seed_rng_normal(&r);
	CHECK(seed_model_forward(cpu, 32, obs, logits, NULL) == 0);
	CHECK(seed_model_backward(cpu, 32, dl, NULL) == 0);
	CHECK(seed_model_forward(gpu, 32, obs, logits, NULL) == 0);
	CHECK(seed_model_backward(gpu, 32, dl, NULL) == 0);
	check_grads("coherence: host-written gradients", 32, gpu, cpu);
	/* zero_grad on the device. */
	seed_model_zero_grad(gpu);
	CHECK(max_abs(seed_model_grads(gpu), seed_model_num_params(gpu)) == 0);
	/* Reserve keeps the parameters (and the device). */
	seed_err err;
	CHECK(seed_model_reserve(gpu, 300, &err) == 0);
	CHECK(strcmp(seed_model_device(gpu), "cuda:0") == 0);
	CHECK(seed_model_reserve(cpu, 300, &err) == 0);
	compare(n, 300, cpu, gpu, &r);
	/* Back to the CPU with the gradients of the device. */
	seed_model_zero_grad(cpu);
	seed_model_zero_grad(gpu);
	compare(n, 17, cpu, gpu, &r);
	CHECK(seed_model_set_device(gpu, "cpu", &err) == 0);
	CHECK(strcmp(seed_model_device(gpu), "cpu") == 0);
	check_grads("coherence: after the move to the CPU", 17, gpu, cpu);
	CHECK(memcmp(seed_model_params(gpu), seed_model_params(cpu), seed_model_num_params(cpu) * 4) == 0);
	free(obs);
	free(dl);
	free(logits);
	seed_model_free(&cpu);
	seed_model_free(&gpu);
}

/* The optimizer on the device against optim.c: both models get the same
 * parameters and, before each step, the same gradients written through the
 * host's slabs (so that only the update is compared: gradients computed on
 * two devices differ in their last bits, which Adam's normalisation would
 * turn into different steps for the elements whose gradient is all
 * rounding).  Then clipping and the step on each: the device runs optim.c's
 * arithmetic (nvcc -fmad=false, IEEE division and square root), so the
 * parameters and the state must agree to OPT_TOL relative, the norms to
 * 1e-12 (double sums in another order).  Adam with SEED's beta1 = 0, AdamW,
 * and both RMSProps with momentum; then the state read back (a checkpoint),
 * written on the host (a restore) and used by the device's next step;
 * between those the state stays on the device. */
#define OPT_TOL 1e-6
static void t_optimizer_steps(void)
{
	const net *n = &nets[3]; /* minatar */
	seed_optim_config cfgs[4];
	seed_optim_config_default(&cfgs[0], SEED_OPTIM_ADAM);
	cfgs[0].beta1 = 0;
	seed_optim_config_default(&cfgs[1], SEED_OPTIM_ADAM);
	cfgs[1].weight_decay = 0.01f;
	cfgs[1].decoupled_weight_decay = 1;
	seed_optim_config_default(&cfgs[2], SEED_OPTIM_RMSPROP);
	cfgs[2].momentum = 0.5f;
	seed_optim_config_default(&cfgs[3], SEED_OPTIM_RMSPROP);
	cfgs[3].rmsprop_style = SEED_RMSPROP_TORCH;
	cfgs[3].momentum = 0.9f;
	seed_rng r;
	seed_rng_init(&r, 11, 4);
	for (int c = 0; c < 4; c++) {
		seed_model *cpu = NULL, *gpu = NULL;
		seed_optim *oc = NULL, *og = NULL;
		seed_err err;
		if (pair(n, 64, 200 + c, &cpu, &gpu) < 0) {
			CHECK(0);
			continue;
		}
		size_t np = seed_model_num_params(cpu);
		CHECK(seed_optim_new(&oc, &cfgs[c], np, &err) == 0);
		CHECK(seed_optim_new(&og, &cfgs[c], np, &err) == 0);
		for (int step = 0; step < 8; step++) {
			float *gc = seed_model_grads(cpu), *gg = seed_model_grads(gpu);
			for (size_t i = 0; i < np; i++)
				gc[i] = gg[i] = (float)(0.01 * seed_rng_normal(&r));
			if (step == 5) { /* a state restored from a checkpoint */
				float *sc = seed_optim_state(oc), *sg = seed_optim_state(og);
				for (size_t i = 0; i < seed_optim_state_size(oc); i++)
					sc[i] = sg[i] = fabsf(sc[i]) * 0.5f;
			}
			/* max norm 1: the random gradients' norm is about 3.6, so
			 * clipping scales them. */
			double nc = seed_optim_clip_model(cpu, 1.0f), ng = seed_optim_clip_model(gpu, 1.0f);
			CHECK_MSG(fabs(nc - ng) <= 1e-12 * nc,
			          "config %d step %d: norms %.17g (cpu) %.17g (gpu)", c, step, nc, ng);
			CHECK(seed_optim_step_model(oc, cpu, 1e-3f) == 0);
			CHECK(seed_optim_step_model(og, gpu, 1e-3f) == 0);
			const float *pc = seed_model_params_read(cpu), *pg = seed_model_params_read(gpu);
			double worst = 0, scale = max_abs(pc, np);
			for (size_t i = 0; i < np; i++)
				worst = fmax(worst, fabs((double)pc[i] - pg[i]));
			CHECK_MSG(worst <= OPT_TOL * scale,
			          "config %d step %d: worst |gpu - cpu| %.3g (params up to %.3g)", c, step,
			          worst, scale);
			if (step != 3 && step != 7)
				continue; /* the state stays on the device between */
			const float *sc = seed_optim_state(oc), *sg = seed_optim_state(og);
			size_t ns = seed_optim_state_size(oc);
			double sworst = 0, smax = max_abs(sc, ns);
			for (size_t i = 0; i < ns; i++)
				sworst = fmax(sworst, fabs((double)sc[i] - sg[i]));
			CHECK_MSG(sworst <= OPT_TOL * smax, "config %d step %d: state worst %.3g of %.3g", c,
			          step, sworst, smax);
		}
		CHECK(seed_optim_steps(og) == 8);
		seed_optim_free(&oc);
		seed_optim_free(&og);
		seed_model_free(&cpu);
		seed_model_free(&gpu);
	}
}

/* Models with an LSTM core over sequences (seed_model_forward_seq): T steps
 * of B rows from a random state0, random resets (about one row in five),
 * previous rewards beyond [-1, 1] (the clipping) and previous actions with
 * -1 and out-of-range values (the all-zero one-hot); outputs, state_out and
 * every gradient against the CPU, then a plain forward (T = 1, zero state). */
typedef struct core_net {
	const char *name, *json;
	seed_dtype dt;
	int rank;
	int64_t shape[4];
	int A;
} core_net;

static const core_net core_nets[] = {
    {"lstm-mlp-reward-action",
     "{\"torso\": [{\"type\": \"linear\", \"out\": 32}, {\"type\": \"relu\"}], \"core\": {\"type\": "
     "\"lstm\", "
     "\"units\": 24, \"prev_reward\": true, \"prev_action\": true}}",
     SEED_DTYPE_F32,
     1,
     {6},
     3},
    {"lstm-no-torso",
     "{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 16}}",
     SEED_DTYPE_F32,
     1,
     {5},
     2},
    {"lstm-minatar-dueling",
     "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"}, {\"type\": "
     "\"flatten\"}, {\"type\": \"linear\", \"out\": 64}, {\"type\": \"relu\"}], \"core\": {\"type\": "
     "\"lstm\", "
     "\"units\": 64, \"prev_action\": true}, \"head\": \"dueling\"}",
     SEED_DTYPE_U8,
     3,
     {10, 10, 4},
     6},
};

static void t_lstm_sequences(void)
{
	seed_rng r;
	seed_rng_init(&r, 13, 5);
	const int shapes[][2] = {{1, 7}, {5, 3}, {8, 64}, {20, 33}}; /* T, B */
	for (size_t ni = 0; ni < sizeof core_nets / sizeof core_nets[0]; ni++) {
		const core_net *cn = &core_nets[ni];
		net n = {cn->name, cn->json, cn->dt, cn->rank, {0}, cn->A};
		memcpy(n.shape, cn->shape, sizeof n.shape);
		seed_model *cpu = NULL, *gpu = NULL;
		if (pair(&n, 20 * 64, 300 + ni, &cpu, &gpu) < 0) {
			CHECK(0);
			continue;
		}
		bool q = seed_model_head_kind(cpu) == SEED_HEAD_DUELING;
		int S = seed_model_state_floats(cpu), A = cn->A;
		for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
			int T = shapes[si][0], B = shapes[si][1];
			size_t rows = (size_t)T * B;
			char label[96];
			snprintf(label, sizeof label, "%s T=%d", cn->name, T);
			void *obs = malloc(seed_model_obs_bytes(cpu) * rows);
			float *rew = malloc(rows * sizeof(float)),
			      *st0 = malloc((size_t)B * S * sizeof(float));
			int32_t *act = malloc(rows * sizeof(int32_t));
			uint8_t *reset = malloc(rows);
			fill_obs(&n, (int)rows, obs, &r);
			for (size_t i = 0; i < rows; i++) {
				rew[i] = (float)(2 * seed_rng_normal(&r));
				act[i] = (int32_t)seed_rng_below(&r, (uint32_t)A + 2) - 1; /* -1 .. A */
				reset[i] = seed_rng_below(&r, 5) == 0;
			}
			for (size_t i = 0; i < (size_t)B * S; i++)
				st0[i] = (float)(0.5 * seed_rng_normal(&r));
			float *out[2], *val[2], *so[2];
			float *dl = malloc(rows * A * sizeof(float)), *dv = malloc(rows * sizeof(float));
			for (size_t i = 0; i < rows * A; i++)
				dl[i] = (float)seed_rng_normal(&r);
			for (size_t i = 0; i < rows; i++)
				dv[i] = (float)seed_rng_normal(&r);
			seed_model *m[2] = {cpu, gpu};
			for (int k = 0; k < 2; k++) {
				out[k] = malloc(rows * A * sizeof(float));
				val[k] = malloc(rows * sizeof(float));
				so[k] = malloc((size_t)B * S * sizeof(float));
				seed_model_seq sq = {.T = T,
				                     .B = B,
				                     .obs = obs,
				                     .prev_reward = rew,
				                     .prev_action = act,
				                     .reset = reset,
				                     .state0 = st0,
				                     .state_out = so[k]};
				seed_model_zero_grad(m[k]);
				int rc = q ? seed_model_forward_seq_q(m[k], &sq, out[k])
				           : seed_model_forward_seq(m[k], &sq, out[k], val[k]);
				CHECK(rc == 0);
				rc = q ? seed_model_backward_seq_q(m[k], dl)
				       : seed_model_backward_seq(m[k], dl, dv);
				CHECK(rc == 0);
			}
			check_out(q ? "seq q" : "seq logits", label, B, out[1], out[0], rows * A);
			if (!q)
				check_out("seq values", label, B, val[1], val[0], rows);
			check_out("state_out", label, B, so[1], so[0], (size_t)B * S);
			check_grads(label, B, gpu, cpu);
			/* A plain forward: one step from a zero state. */
			for (int k = 0; k < 2; k++) {
				seed_model_zero_grad(m[k]);
				int rc = q ? seed_model_forward_q(m[k], B, obs, out[k])
				           : seed_model_forward(m[k], B, obs, out[k], val[k]);
				CHECK(rc == 0);
				rc = q ? seed_model_backward_q(m[k], B, dl)
				       : seed_model_backward(m[k], B, dl, dv);
				CHECK(rc == 0);
			}
			check_out("plain forward", cn->name, B, out[1], out[0], (size_t)B * A);
			check_grads(cn->name, B, gpu, cpu);
			for (int k = 0; k < 2; k++) {
				free(out[k]);
				free(val[k]);
				free(so[k]);
			}
			free(obs);
			free(rew);
			free(st0);
			free(act);
			free(reset);
			free(dl);
			free(dv);
		}
		seed_model_free(&cpu);
		seed_model_free(&gpu);
	}
}

/* How a device that is not here is named. */
static void t_refusals(void)
{
	seed_err err;
	CHECK(seed_device_check("cuda:4096", &err) == -ENODEV);
	CHECK_MSG(strstr(err.msg, "cuda:4096") != NULL, "%s", err.msg);
}

int main(void)
{
	seed_err err;
	int rc = seed_device_check(device, &err);
	if (rc < 0) {
		printf("1..0 # SKIP %s\n", err.msg);
		return 77;
	}
	TAP_RUN(t_every_net_every_batch);
	TAP_RUN(t_slab_coherence);
	TAP_RUN(t_optimizer_steps);
	TAP_RUN(t_lstm_sequences);
	TAP_RUN(t_refusals);
	return tap_done();
}
