/* test_nn.c: the model (seed/nn.h): shapes, parameters, initialisation,
 * forward against numpy golden values, and gradients by finite differences.
 *
 * Gradients: every layer kind is checked in a small model where its
 * gradient matters (a layer's input gradient only shows in the parameters
 * of the layers before it, so each kind sits after a layer with
 * parameters).  The reference is an independent double-precision forward
 * written here with plain loops (rnet_*), differentiated by central
 * differences; the loss is L = sum c_l * logits + sum c_v * values with fixed
 * random c, so dL/dlogits = c_l and dL/dvalues = c_v.  The model's forward is
 * also compared with the same reference.  Parameters near a ReLU kink (left
 * and right differences disagree) are skipped, and counted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/blas.h"
#include "seed/nn.h"
#include "tap.h"
#include "nn_golden.h"
#include "dueling_golden.h"
#include "conv_golden.h"

/* ---- a double-precision reference network ------------------------------ */

enum { R_LINEAR, R_CONV, R_RELU, R_TANH, R_FLATTEN, R_SCALE };

typedef struct {
	int kind;
	int n; /* out (linear) or filters (conv); the number of factors (scale) */
	int k; /* kernel (conv) */
	int s; /* stride (conv; 0 is 1) */
	int p; /* padding on every side (conv), or RPAD_SAME */
} rlayer;

/* rlayer.p for "same": TensorFlow's definition, ceil(H / S) outputs, the
 * padding split with the odd one at the bottom or right. */
#define RPAD_SAME (-1)

/* The factors of scale layer i of the network being checked (n of them:
 * 1, or the size of the input's last dimension), set by the test. */
static double rscale[16][8];

typedef struct {
	int nl;
	rlayer l[16];
	int rank;
	int64_t shape[3];
	int A;
} rnet;

static size_t off_of(const seed_model *m, const char *name)
{
	const seed_model_param *p = seed_model_param_find(m, name);
	if (!p) {
		printf("# no tensor %s\n", name);
		abort();
	}
	return p->offset;
}

/* logits (B, A) and values (B) of rn with parameters theta (in m's slab
 * layout, found by name) for obs (B, numel).  dueling: a dueling head, Q
 * values in logits and zero values. */
static void rnet_forward(const rnet *rn, int dueling, const seed_model *m, const double *theta, int B,
                         const double *obs, double *logits, double *values)
{
	int rank = rn->rank;
	int64_t sh[3] = {rn->shape[0], rn->shape[1], rn->shape[2]};
	size_t numel = 1;
	for (int d = 0; d < rank; d++)
		numel *= (size_t)sh[d];
	double *x = malloc((size_t)B * numel * sizeof *x);
	memcpy(x, obs, (size_t)B * numel * sizeof *x);
	char name[64];
	for (int i = 0; i < rn->nl; i++) {
		const rlayer *L = &rn->l[i];
		const double *w = NULL, *bias = NULL;
		if (L->kind == R_LINEAR || L->kind == R_CONV) {
			snprintf(name, sizeof name, "torso.%d.weight", i);
			w = theta + off_of(m, name);
			snprintf(name, sizeof name, "torso.%d.bias", i);
			bias = theta + off_of(m, name);
		}
		double *y = NULL;
		size_t nout = numel;
		switch (L->kind) {
		case R_LINEAR:
			nout = (size_t)L->n;
			y = malloc((size_t)B * nout * sizeof *y);
			for (int b = 0; b < B; b++)
				for (size_t o = 0; o < nout; o++) {
					double s = bias[o];
					for (size_t j = 0; j < numel; j++)
						s += w[o * numel + j] * x[b * numel + j];
					y[b * nout + o] = s;
				}
			sh[0] = L->n;
			break;
		case R_CONV: {
			int H = (int)sh[0], W = (int)sh[1], C = (int)sh[2], k = L->k, F = L->n;
			int S = L->s ? L->s : 1, pt = L->p, pl = L->p, OH, OW;
			if (L->p == RPAD_SAME) {
				OH = (H + S - 1) / S, OW = (W + S - 1) / S;
				pt = ((OH - 1) * S + k - H) / 2, pl = ((OW - 1) * S + k - W) / 2;
				pt = pt < 0 ? 0 : pt, pl = pl < 0 ? 0 : pl;
			} else {
				OH = (H + 2 * L->p - k) / S + 1, OW = (W + 2 * L->p - k) / S + 1;
			}
			nout = (size_t)OH * OW * F;
			y = malloc((size_t)B * nout * sizeof *y);
			for (int b = 0; b < B; b++)
				for (int oy = 0; oy < OH; oy++)
					for (int ox = 0; ox < OW; ox++)
						for (int f = 0; f < F; f++) {
							double s = bias[f];
							for (int ky = 0; ky < k; ky++)
								for (int kx = 0; kx < k; kx++) {
									int iy = oy * S - pt + ky,
									    ix = ox * S - pl + kx;
									if (iy < 0 || iy >= H || ix < 0 ||
									    ix >= W)
										continue; /* zeros */
									for (int c = 0; c < C; c++)
										s += w[((f * k + ky) * k +
										        kx) *
										           C +
										       c] *
										     x[b * numel +
										       ((size_t)iy * W + ix) *
										           C +
										       c];
								}
							y[b * nout + ((size_t)oy * OW + ox) * F + f] = s;
						}
			sh[0] = OH;
			sh[1] = OW;
			sh[2] = F;
			break;
		}
		case R_RELU:
		case R_TANH:
			y = malloc((size_t)B * nout * sizeof *y);
			for (size_t e = 0; e < (size_t)B * nout; e++)
				y[e] = L->kind == R_RELU ? (x[e] > 0 ? x[e] : 0) : tanh(x[e]);
			break;
		case R_FLATTEN:
			y = malloc((size_t)B * nout * sizeof *y);
			memcpy(y, x, (size_t)B * nout * sizeof *y);
			sh[0] = (int64_t)nout;
			break;
		case R_SCALE: {
			/* x * s along the last dimension (size sh[rank - 1]). */
			size_t last = (size_t)sh[rank - 1];
			y = malloc((size_t)B * nout * sizeof *y);
			for (size_t e = 0; e < (size_t)B * nout; e++)
				y[e] = x[e] * (L->n == 1 ? rscale[i][0] : rscale[i][e % last]);
			break;
		}
		}
		if (L->kind == R_FLATTEN || L->kind == R_LINEAR)
			rank = 1;
		free(x);
		x = y;
		numel = nout;
	}
	const char *pname = dueling ? "advantage" : "policy";
	snprintf(name, sizeof name, "%s.weight", pname);
	const double *pw = theta + off_of(m, name);
	snprintf(name, sizeof name, "%s.bias", pname);
	const double *pb = theta + off_of(m, name);
	const double *vw = theta + off_of(m, "value.weight"), *vb = theta + off_of(m, "value.bias");
	for (int b = 0; b < B; b++) {
		double mean = 0;
		for (int a = 0; a < rn->A; a++) {
			double s = pb[a];
			for (size_t j = 0; j < numel; j++)
				s += pw[a * numel + j] * x[b * numel + j];
			logits[b * rn->A + a] = s;
			mean += s / rn->A;
		}
		double s = vb[0];
		for (size_t j = 0; j < numel; j++)
			s += vw[j] * x[b * numel + j];
		values[b] = s;
		if (dueling) { /* Q = V + Adv - mean(Adv) */
			for (int a = 0; a < rn->A; a++)
				logits[b * rn->A + a] += s - mean;
			values[b] = 0;
		}
	}
	free(x);
}

static double rnet_loss(const rnet *rn, int dueling, const seed_model *m, const double *theta, int B,
                        const double *obs, const double *cl, const double *cv)
{
	double *lg = malloc((size_t)B * rn->A * sizeof *lg), *v = malloc((size_t)B * sizeof *v);
	rnet_forward(rn, dueling, m, theta, B, obs, lg, v);
	double L = 0;
	for (int i = 0; i < B * rn->A; i++)
		L += cl[i] * lg[i];
	for (int b = 0; b < B; b++)
		L += cv[b] * v[b];
	free(lg);
	free(v);
	return L;
}

/* ---- the gradient check ------------------------------------------------ */

typedef struct {
	const char *json;
	rnet rn;
	seed_dtype dtype;
	int B;
	int stride; /* check every stride-th parameter (and every bias) */
} gcase;

/* gc's model, with a dueling head when dueling (Q values in logits). */
static void grad_check_head(const gcase *gc, uint64_t seed, int dueling)
{
	const rnet *rn = &gc->rn;
	int B = gc->B, A = rn->A;
	seed_model *m = NULL;
	seed_err err = {{0}};
	int rc = seed_model_new(&m, gc->json, gc->dtype, rn->rank, rn->shape, A, B, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	seed_rng rng;
	seed_rng_init(&rng, seed, 0);
	seed_model_init(m, &rng);

	size_t numel = 1;
	for (int d = 0; d < rn->rank; d++)
		numel *= (size_t)rn->shape[d];
	size_t nobs = (size_t)B * numel;
	double *obs = malloc(nobs * sizeof *obs);
	float *obs_f = malloc(nobs * sizeof *obs_f);
	unsigned char *obs_u = malloc(nobs);
	for (size_t i = 0; i < nobs; i++) {
		if (gc->dtype == SEED_DTYPE_U8) {
			obs_u[i] = (unsigned char)seed_rng_below(&rng, 4);
			obs[i] = obs_u[i];
		} else {
			obs_f[i] = (float)seed_rng_normal(&rng);
			obs[i] = obs_f[i];
		}
	}
	double *cl = malloc((size_t)B * A * sizeof *cl), *cv = malloc((size_t)B * sizeof *cv);
	float *dl = malloc((size_t)B * A * sizeof *dl), *dv = malloc((size_t)B * sizeof *dv);
	for (int i = 0; i < B * A; i++)
		dl[i] = (float)(cl[i] = seed_rng_normal(&rng));
	for (int b = 0; b < B; b++)
		dv[b] = (float)(cv[b] = dueling ? 0 : seed_rng_normal(&rng));

	/* Forward against the reference (a dueling head: Q values in logits). */
	float *logits = malloc((size_t)B * A * sizeof *logits), *values = malloc((size_t)B * sizeof *values);
	double *rl = malloc((size_t)B * A * sizeof *rl), *rv = malloc((size_t)B * sizeof *rv);
	size_t np = seed_model_num_params(m);
	double *theta = malloc(np * sizeof *theta);
	const float *params = seed_model_params(m);
	for (size_t j = 0; j < np; j++)
		theta[j] = params[j];
	const void *ob = gc->dtype == SEED_DTYPE_U8 ? (const void *)obs_u : (const void *)obs_f;
	if (dueling) {
		CHECK(seed_model_forward_q(m, B, ob, logits) == 0);
		memset(values, 0, (size_t)B * sizeof *values);
	} else {
		CHECK(seed_model_forward(m, B, ob, logits, values) == 0);
	}
	rnet_forward(rn, dueling, m, theta, B, obs, rl, rv);
	for (int i = 0; i < B * A; i++)
		CHECK_NEAR(logits[i], rl[i], 2e-5 * (1 + fabs(rl[i])));
	for (int b = 0; b < B; b++)
		CHECK_NEAR(values[b], rv[b], 2e-5 * (1 + fabs(rv[b])));

	/* Backward against central differences of the reference. */
	seed_model_zero_grad(m);
	if (dueling)
		CHECK(seed_model_backward_q(m, B, dl) == 0);
	else
		CHECK(seed_model_backward(m, B, dl, dv) == 0);
	const float *g = seed_model_grads(m);
	double L0 = rnet_loss(rn, dueling, m, theta, B, obs, cl, cv);
	int checked = 0, skipped = 0, failed = 0;
	double worst = 0;
	for (int t = 0; t < seed_model_num_tensors(m); t++) {
		const seed_model_param *p = seed_model_param_at(m, t);
		int is_bias = strstr(p->name, "bias") != NULL;
		for (size_t e = 0; e < p->numel; e++) {
			size_t j = p->offset + e;
			if (!is_bias && gc->stride > 1 && j % (size_t)gc->stride != 0)
				continue;
			const double h = 1e-6;
			double save = theta[j];
			theta[j] = save + h;
			double Lp = rnet_loss(rn, dueling, m, theta, B, obs, cl, cv);
			theta[j] = save - h;
			double Lm = rnet_loss(rn, dueling, m, theta, B, obs, cl, cv);
			theta[j] = save;
			double right = (Lp - L0) / h, left = (L0 - Lm) / h;
			if (fabs(right - left) > 1e-3 * (1 + fabs(right))) {
				skipped++; /* a kink within h */
				continue;
			}
			double num = (Lp - Lm) / (2 * h), diff = fabs(g[j] - num);
			checked++;
			if (diff > worst)
				worst = diff;
			if (diff > 1e-4 + 1e-3 * fabs(num)) {
				if (failed++ < 5)
					printf("# %s[%zu]: backward %.9g, finite differences %.9g\n", p->name,
					       e, (double)g[j], num);
				tap_case_failed = 1;
			}
		}
	}
	printf("# %d gradients checked, %d skipped near a kink, worst |error| %.3g\n", checked, skipped,
	       worst);
	CHECK(checked > 0);
	CHECK(skipped * 20 <= checked);

	free(obs);
	free(obs_f);
	free(obs_u);
	free(cl);
	free(cv);
	free(dl);
	free(dv);
	free(logits);
	free(values);
	free(rl);
	free(rv);
	free(theta);
	seed_model_free(&m);
}

static void grad_check(const gcase *gc, uint64_t seed)
{
	grad_check_head(gc, seed, 0);
}

static void t_grad_heads(void)
{
	/* No torso: the policy and value heads straight on the observation. */
	gcase gc = {"{\"torso\": [], \"init\": \"pytorch\"}", {0, {{0}}, 1, {5}, 3}, SEED_DTYPE_F32, 4, 1};
	grad_check(&gc, 1);
}

/* Dueling heads: the gradient of a loss on Q flows into the value and
 * advantage streams (through the mean) and the torso. */
static void t_grad_dueling(void)
{
	gcase bare = {"{\"torso\": [], \"head\": \"dueling\", \"init\": \"pytorch\"}",
	              {0, {{0}}, 1, {5}, 3},
	              SEED_DTYPE_F32,
	              4,
	              1};
	grad_check_head(&bare, 21, 1);
	gcase mlp = {
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 7}, {\"type\": \"tanh\"},"
	    " {\"type\": \"linear\", \"out\": 6}, {\"type\": \"relu\"}],"
	    " \"head\": \"dueling\", \"init\": \"pytorch\"}",
	    {4,
	     {{R_LINEAR, 7, 0, 0, 0}, {R_TANH, 0, 0, 0, 0}, {R_LINEAR, 6, 0, 0, 0}, {R_RELU, 0, 0, 0, 0}},
	     1,
	     {5},
	     4},
	    SEED_DTYPE_F32,
	    5,
	    1};
	grad_check_head(&mlp, 22, 1);
	/* A conv torso on u8, with the default (orthogonal) init. */
	gcase conv = {
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 2},"
	    " {\"type\": \"relu\"}, {\"type\": \"flatten\"}], \"head\": \"dueling\"}",
	    {3, {{R_CONV, 3, 2, 0, 0}, {R_RELU, 0, 0, 0, 0}, {R_FLATTEN, 0, 0, 0, 0}}, 3, {4, 3, 2}, 3},
	    SEED_DTYPE_U8,
	    3,
	    1};
	grad_check_head(&conv, 23, 1);
}

static void t_grad_linear(void)
{
	gcase gc = {"{\"torso\": [{\"type\": \"linear\", \"out\": 6}, {\"type\": \"linear\", \"out\": 5}],"
	            " \"init\": \"pytorch\"}",
	            {2, {{R_LINEAR, 6, 0, 0, 0}, {R_LINEAR, 5, 0, 0, 0}}, 1, {7}, 4},
	            SEED_DTYPE_F32,
	            5,
	            1};
	grad_check(&gc, 2);
}

static void t_grad_relu(void)
{
	gcase gc = {
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 9}, {\"type\": \"relu\"},"
	    " {\"type\": \"linear\", \"out\": 5}, {\"type\": \"relu\"}], \"init\": \"pytorch\"}",
	    {4,
	     {{R_LINEAR, 9, 0, 0, 0}, {R_RELU, 0, 0, 0, 0}, {R_LINEAR, 5, 0, 0, 0}, {R_RELU, 0, 0, 0, 0}},
	     1,
	     {6},
	     3},
	    SEED_DTYPE_F32,
	    6,
	    1};
	grad_check(&gc, 3);
}

static void t_grad_tanh(void)
{
	gcase gc = {
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 9}, {\"type\": \"tanh\"},"
	    " {\"type\": \"linear\", \"out\": 5}, {\"type\": \"tanh\"}], \"init\": \"pytorch\"}",
	    {4,
	     {{R_LINEAR, 9, 0, 0, 0}, {R_TANH, 0, 0, 0, 0}, {R_LINEAR, 5, 0, 0, 0}, {R_TANH, 0, 0, 0, 0}},
	     1,
	     {6},
	     3},
	    SEED_DTYPE_F32,
	    6,
	    1};
	grad_check(&gc, 4);
}

/* A scale layer (fixed factors, no parameters): one factor for every
 * feature, one per feature, and one per channel of an image; the gradient
 * reaches the layers below through it. */
static void t_grad_scale(void)
{
	gcase vec = {"{\"torso\": [{\"type\": \"scale\", \"by\": [1, 20, -0.5, 3, 0.25]},"
	             " {\"type\": \"linear\", \"out\": 6}, {\"type\": \"tanh\"},"
	             " {\"type\": \"scale\", \"by\": 2.5}, {\"type\": \"linear\", \"out\": 4}],"
	             " \"init\": \"pytorch\"}",
	             {5,
	              {{R_SCALE, 5, 0, 0, 0},
	               {R_LINEAR, 6, 0, 0, 0},
	               {R_TANH, 0, 0, 0, 0},
	               {R_SCALE, 1, 0, 0, 0},
	               {R_LINEAR, 4, 0, 0, 0}},
	              1,
	              {5},
	              3},
	             SEED_DTYPE_F32,
	             4,
	             1};
	memset(rscale, 0, sizeof rscale);
	memcpy(rscale[0], (double[]){1, 20, -0.5, 3, 0.25}, 5 * sizeof(double));
	rscale[3][0] = 2.5;
	grad_check(&vec, 8);
	/* Per channel on u8 pixels, before a convolution (and a one-element
	 * array, which is one factor for all). */
	gcase img = {
	    "{\"torso\": [{\"type\": \"scale\", \"by\": [0.5, 2]},"
	    " {\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 2},"
	    " {\"type\": \"scale\", \"by\": [0.75]}, {\"type\": \"flatten\"}],"
	    " \"init\": \"pytorch\"}",
	    {4,
	     {{R_SCALE, 2, 0, 0, 0}, {R_CONV, 3, 2, 0, 0}, {R_SCALE, 1, 0, 0, 0}, {R_FLATTEN, 0, 0, 0, 0}},
	     3,
	     {4, 3, 2},
	     3},
	    SEED_DTYPE_U8,
	    3,
	    1};
	memset(rscale, 0, sizeof rscale);
	rscale[0][0] = 0.5, rscale[0][1] = 2;
	rscale[2][0] = 0.75;
	grad_check(&img, 10);
}

static void t_grad_conv2d(void)
{
	/* Two convolutions (the second one's input gradient reaches the
	 * first's parameters), non-square input, C > 1. */
	gcase gc = {
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 2},"
	    " {\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 3}, {\"type\": \"flatten\"}],"
	    " \"init\": \"pytorch\"}",
	    {3, {{R_CONV, 4, 2, 0, 0}, {R_CONV, 3, 3, 0, 0}, {R_FLATTEN, 0, 0, 0, 0}}, 3, {5, 6, 3}, 3},
	    SEED_DTYPE_F32,
	    3,
	    1};
	grad_check(&gc, 5);
}

/* Strides and padding: a strided convolution with a ring of zeros whose
 * input gradient reaches the first layer through an uneven "same" padding
 * (one row above, two below); u8 pixels through strided "valid" layers and
 * a padding of 2 (more output than input); a row wide enough for the
 * kernels' blocks of eight pixels with padded edges on both sides; a 1x1
 * kernel with a stride larger than it (inputs skipped). */
static void t_grad_conv2d_strided(void)
{
	gcase pad_same = {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3, \"stride\": 2,"
	                  " \"padding\": 1},"
	                  " {\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 4, \"stride\": 3,"
	                  " \"padding\": \"same\"}, {\"type\": \"flatten\"}], \"init\": \"pytorch\"}",
	                  {3,
	                   {{R_CONV, 4, 3, 2, 1}, {R_CONV, 3, 4, 3, RPAD_SAME}, {R_FLATTEN, 0, 0, 0, 0}},
	                   3,
	                   {13, 11, 3},
	                   3},
	                  SEED_DTYPE_F32,
	                  3,
	                  1};
	grad_check(&pad_same, 31);
	gcase u8 = {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 4, \"stride\": 2},"
	            " {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 3,"
	            " \"padding\": 2}, {\"type\": \"relu\"}, {\"type\": \"flatten\"},"
	            " {\"type\": \"linear\", \"out\": 4}]}",
	            {6,
	             {{R_CONV, 5, 4, 2, 0},
	              {R_RELU, 0, 0, 0, 0},
	              {R_CONV, 3, 3, 1, 2},
	              {R_RELU, 0, 0, 0, 0},
	              {R_FLATTEN, 0, 0, 0, 0},
	              {R_LINEAR, 4, 0, 0, 0}},
	             3,
	             {12, 11, 2},
	             3},
	            SEED_DTYPE_U8,
	            3,
	            1};
	grad_check(&u8, 32);
	gcase wide = {
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 3, \"padding\": \"same\"},"
	    " {\"type\": \"tanh\"}, {\"type\": \"conv2d\", \"filters\": 17, \"kernel\": 2,"
	    " \"stride\": 1, \"padding\": 1}, {\"type\": \"tanh\"},"
	    " {\"type\": \"conv2d\", \"filters\": 2, \"kernel\": 1, \"stride\": 3},"
	    " {\"type\": \"flatten\"}], \"init\": \"pytorch\"}",
	    {6,
	     {{R_CONV, 3, 3, 1, RPAD_SAME},
	      {R_TANH, 0, 0, 0, 0},
	      {R_CONV, 17, 2, 1, 1},
	      {R_TANH, 0, 0, 0, 0},
	      {R_CONV, 2, 1, 3, 0},
	      {R_FLATTEN, 0, 0, 0, 0}},
	     3,
	     {3, 21, 2},
	     2},
	    SEED_DTYPE_F32,
	    2,
	    1};
	grad_check(&wide, 33);
}

/* The Nature DQN network's shape, made small enough for finite
 * differences: u8 pixels scaled by 1/255, kernels 8, 4, 3 with strides 4,
 * 2, 1 down to one pixel, flatten, linear, relu. */
static void t_grad_nature_small(void)
{
	gcase gc = {"{\"torso\": [{\"type\": \"scale\", \"by\": 0.00392156862745098},"
	            " {\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 8, \"stride\": 4},"
	            " {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 4,"
	            " \"stride\": 2}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 6,"
	            " \"kernel\": 3, \"stride\": 1}, {\"type\": \"relu\"}, {\"type\": \"flatten\"},"
	            " {\"type\": \"linear\", \"out\": 16}, {\"type\": \"relu\"}], \"init\": \"pytorch\"}",
	            {10,
	             {{R_SCALE, 1, 0, 0, 0},
	              {R_CONV, 4, 8, 4, 0},
	              {R_RELU, 0, 0, 0, 0},
	              {R_CONV, 5, 4, 2, 0},
	              {R_RELU, 0, 0, 0, 0},
	              {R_CONV, 6, 3, 1, 0},
	              {R_RELU, 0, 0, 0, 0},
	              {R_FLATTEN, 0, 0, 0, 0},
	              {R_LINEAR, 16, 0, 0, 0},
	              {R_RELU, 0, 0, 0, 0}},
	             3,
	             {36, 36, 2},
	             4},
	            SEED_DTYPE_U8,
	            3,
	            3};
	memset(rscale, 0, sizeof rscale);
	rscale[0][0] = (float)(1.0 / 255);
	grad_check(&gc, 34);
}

static void t_grad_flatten(void)
{
	/* flatten between a convolution and linear layers, and as a first
	 * layer on a rank-3 observation. */
	gcase gc = {
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 3}, {\"type\": \"tanh\"},"
	    " {\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 5}], \"init\": \"pytorch\"}",
	    {4,
	     {{R_CONV, 3, 3, 0, 0}, {R_TANH, 0, 0, 0, 0}, {R_FLATTEN, 0, 0, 0, 0}, {R_LINEAR, 5, 0, 0, 0}},
	     3,
	     {4, 5, 2},
	     2},
	    SEED_DTYPE_F32,
	    3,
	    1};
	grad_check(&gc, 6);
	gcase first = {"{\"torso\": [{\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 4}],"
	               " \"init\": \"pytorch\"}",
	               {2, {{R_FLATTEN, 0, 0, 0, 0}, {R_LINEAR, 4, 0, 0, 0}}, 3, {2, 3, 2}, 2},
	               SEED_DTYPE_F32,
	               3,
	               1};
	grad_check(&first, 7);
}

static void t_grad_mlp64(void)
{
	/* The CartPole preset, whole, with its default orthogonal init. */
	gcase gc = {
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"},"
	    " {\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}]}",
	    {4,
	     {{R_LINEAR, 64, 0, 0, 0}, {R_TANH, 0, 0, 0, 0}, {R_LINEAR, 64, 0, 0, 0}, {R_TANH, 0, 0, 0, 0}},
	     1,
	     {4},
	     2},
	    SEED_DTYPE_F32,
	    8,
	    7};
	grad_check(&gc, 8);
}

static void t_grad_minatar(void)
{
	/* The MinAtar preset, whole, on u8 observations (Breakout's 10x10x4). */
	gcase gc = {
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 16, \"kernel\": 3}, {\"type\": \"relu\"},"
	    " {\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 128}, {\"type\": \"relu\"}],"
	    " \"init\": \"pytorch\"}",
	    {5,
	     {{R_CONV, 16, 3, 0, 0},
	      {R_RELU, 0, 0, 0, 0},
	      {R_FLATTEN, 0, 0, 0, 0},
	      {R_LINEAR, 128, 0, 0, 0},
	      {R_RELU, 0, 0, 0, 0}},
	     3,
	     {10, 10, 4},
	     6},
	    SEED_DTYPE_U8,
	    3,
	    401};
	grad_check(&gc, 9);
}

/* The float model differentiated by itself: central differences of its own
 * forward (smooth tanh MLP), with float-sized steps and tolerances. */
static void t_grad_float_central(void)
{
	const int B = 6, A = 3;
	const int64_t shape[1] = {5};
	seed_model *m = NULL;
	seed_err err;
	int rc = seed_model_new(
	    &m,
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 16}, {\"type\": \"tanh\"},"
	    " {\"type\": \"linear\", \"out\": 16}, {\"type\": \"tanh\"}], \"init\": \"pytorch\"}",
	    SEED_DTYPE_F32, 1, shape, A, B, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 10, 0);
	seed_model_init(m, &rng);
	float obs[6 * 5], cl[6 * 3], cv[6], lg[6 * 3], v[6];
	for (int i = 0; i < B * 5; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < B * A; i++)
		cl[i] = (float)seed_rng_normal(&rng);
	for (int b = 0; b < B; b++)
		cv[b] = (float)seed_rng_normal(&rng);
	seed_model_zero_grad(m);
	seed_model_forward(m, B, obs, lg, v);
	seed_model_backward(m, B, cl, cv);
	float *p = seed_model_params(m);
	const float *g = seed_model_grads(m);
	size_t np = seed_model_num_params(m);
	int bad = 0;
	for (size_t j = 0; j < np; j++) {
		const float h = 1e-2f;
		float save = p[j];
		double L[2];
		for (int s = 0; s < 2; s++) {
			p[j] = save + (s ? -h : h);
			seed_model_forward(m, B, obs, lg, v);
			L[s] = 0;
			for (int i = 0; i < B * A; i++)
				L[s] += (double)cl[i] * lg[i];
			for (int b = 0; b < B; b++)
				L[s] += (double)cv[b] * v[b];
		}
		p[j] = save;
		double num = (L[0] - L[1]) / (2 * (double)h);
		if (fabs(num - g[j]) > 2e-3 + 2e-2 * fabs(num) && bad++ < 5)
			printf("# param %zu: backward %.6g, central differences %.6g\n", j, (double)g[j],
			       num);
	}
	CHECK(bad == 0);
	seed_model_free(&m);
}

/* ---- forward against numpy --------------------------------------------- */

static void load_golden(seed_model *m, const golden_param *gp)
{
	int n = 0;
	for (; gp->name; gp++, n++) {
		const seed_model_param *p = seed_model_param_find(m, gp->name);
		CHECK_MSG(p && p->numel == (size_t)gp->numel, "tensor %s", gp->name);
		if (p && p->numel == (size_t)gp->numel)
			memcpy(seed_model_params(m) + p->offset, gp->data, p->numel * sizeof(float));
	}
	CHECK(n == seed_model_num_tensors(m));
}

static void t_golden_mlp(void)
{
	const int64_t shape[1] = {4};
	seed_model *m = NULL;
	seed_err err;
	int rc = seed_model_new(&m, GOLDEN_MLP_JSON, SEED_DTYPE_F32, 1, shape, GOLDEN_MLP_A, 8, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	load_golden(m, golden_mlp_params);
	float lg[GOLDEN_MLP_B * GOLDEN_MLP_A], v[GOLDEN_MLP_B];
	CHECK(seed_model_forward(m, GOLDEN_MLP_B, golden_mlp_obs, lg, v) == 0);
	for (int i = 0; i < GOLDEN_MLP_B * GOLDEN_MLP_A; i++)
		CHECK_NEAR(lg[i], golden_mlp_logits[i], 1e-5 * (1 + fabs(golden_mlp_logits[i])));
	for (int b = 0; b < GOLDEN_MLP_B; b++)
		CHECK_NEAR(v[b], golden_mlp_values[b], 1e-5 * (1 + fabs(golden_mlp_values[b])));
	seed_model_free(&m);
}

static void t_golden_conv(void)
{
	const int64_t shape[3] = {GOLDEN_CONV_H, GOLDEN_CONV_W, GOLDEN_CONV_C};
	seed_model *m = NULL;
	seed_err err;
	int rc =
	    seed_model_new(&m, GOLDEN_CONV_JSON, SEED_DTYPE_U8, 3, shape, GOLDEN_CONV_A, GOLDEN_CONV_B, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	load_golden(m, golden_conv_params);
	float lg[GOLDEN_CONV_B * GOLDEN_CONV_A], v[GOLDEN_CONV_B];
	CHECK(seed_model_forward(m, GOLDEN_CONV_B, golden_conv_obs, lg, v) == 0);
	for (int i = 0; i < GOLDEN_CONV_B * GOLDEN_CONV_A; i++)
		CHECK_NEAR(lg[i], golden_conv_logits[i], 1e-5 * (1 + fabs(golden_conv_logits[i])));
	for (int b = 0; b < GOLDEN_CONV_B; b++)
		CHECK_NEAR(v[b], golden_conv_values[b], 1e-5 * (1 + fabs(golden_conv_values[b])));
	seed_model_free(&m);
}

/* Strided and padded convolutions against numpy
 * (tests/golden/conv_golden.py): logits, values, and the gradient of
 * sum(cl * logits) + sum(cv * values) for every parameter. */
static void t_golden_conv_strided(void)
{
	const int64_t shape[3] = {GOLDEN_SCONV_H, GOLDEN_SCONV_W, GOLDEN_SCONV_C};
	enum { B = GOLDEN_SCONV_B, A = GOLDEN_SCONV_A };
	seed_model *m = NULL;
	seed_err err;
	int rc = seed_model_new(&m, GOLDEN_SCONV_JSON, SEED_DTYPE_U8, 3, shape, A, B, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	char sum[256];
	seed_model_summary(m, sum, sizeof sum);
	CHECK_MSG(strcmp(sum, "u8[13,11,3] scale conv2d(4,k3,s2,p1) relu conv2d(3,k4,s3,same) tanh "
	                      "conv2d(2,k1,s2) flatten linear(5) tanh | heads 4+1 | 370 params") == 0,
	          "%s", sum);
	int n = 0;
	for (; golden_sconv_params[n].name; n++) {
		const seed_model_param *p = seed_model_param_find(m, golden_sconv_params[n].name);
		CHECK_MSG(p && p->numel == (size_t)golden_sconv_params[n].numel, "tensor %s",
		          golden_sconv_params[n].name);
		if (p && p->numel == (size_t)golden_sconv_params[n].numel)
			memcpy(seed_model_params(m) + p->offset, golden_sconv_params[n].data,
			       p->numel * sizeof(float));
	}
	CHECK(n == seed_model_num_tensors(m));
	float lg[B * A], v[B];
	CHECK(seed_model_forward(m, B, golden_sconv_obs, lg, v) == 0);
	for (int i = 0; i < B * A; i++)
		CHECK_NEAR(lg[i], golden_sconv_logits[i], 1e-5 * (1 + fabs(golden_sconv_logits[i])));
	for (int b = 0; b < B; b++)
		CHECK_NEAR(v[b], golden_sconv_values[b], 1e-5 * (1 + fabs(golden_sconv_values[b])));
	seed_model_zero_grad(m);
	CHECK(seed_model_backward(m, B, golden_sconv_cl, golden_sconv_cv) == 0);
	const float *g = seed_model_grads(m);
	int off = 0, checked = 0;
	for (int t = 0; golden_sconv_params[t].name; t++) {
		const seed_model_param *p = seed_model_param_find(m, golden_sconv_params[t].name);
		if (!p)
			continue;
		for (size_t e = 0; e < p->numel; e++, checked++) {
			double want = golden_sconv_params[t].grad[e];
			if (fabs(g[p->offset + e] - want) > 1e-5 * (1 + fabs(want)) && off++ < 5)
				printf("# %s[%zu]: %.9g, numpy %.9g\n", p->name, e, (double)g[p->offset + e],
				       want);
		}
	}
	CHECK_MSG(off == 0, "%d of %d gradients off", off, checked);
	CHECK(checked == (int)seed_model_num_params(m));
	seed_model_free(&m);
}

/* The keys at their defaults ("stride": 1, "padding": 0 or "valid") are
 * the layer as it was before them: the same tensors, outputs and
 * gradients, bit for bit, and the same summary; and "same" at stride 1
 * with an odd kernel is padding (k - 1) / 2. */
static void t_conv_defaults(void)
{
	static const char *const jsons[] = {
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 3}, {\"type\": \"relu\"},"
	    " {\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 2}, {\"type\": \"flatten\"}]}",
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 3, \"stride\": 1,"
	    " \"padding\": \"valid\"}, {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 4,"
	    " \"kernel\": 2, \"padding\": 0}, {\"type\": \"flatten\"}]}",
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 3, \"padding\": \"same\"},"
	    " {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 2},"
	    " {\"type\": \"flatten\"}]}",
	    "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 5, \"kernel\": 3, \"padding\": 1},"
	    " {\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 2},"
	    " {\"type\": \"flatten\"}]}",
	};
	enum { B = 5, A = 3, N = 9 * 10 * 2 };
	const int64_t shape[3] = {9, 10, 2};
	seed_model *m[4] = {NULL};
	seed_err err;
	float obs[B * N], dl[B * A], dv[B], lg[4][B * A], v[4][B];
	seed_rng rng;
	seed_rng_init(&rng, 35, 0);
	for (int i = 0; i < B * N; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < B * A; i++)
		dl[i] = (float)seed_rng_normal(&rng);
	for (int b = 0; b < B; b++)
		dv[b] = (float)seed_rng_normal(&rng);
	for (int j = 0; j < 4; j++) {
		int rc = seed_model_new(&m[j], jsons[j], SEED_DTYPE_F32, 3, shape, A, B, &err);
		CHECK_MSG(rc == 0, "%s", err.msg);
		if (rc)
			goto out;
		seed_rng_init(&rng, 36, 0);
		seed_model_init(m[j], &rng);
		CHECK(seed_model_forward(m[j], B, obs, lg[j], v[j]) == 0);
		seed_model_zero_grad(m[j]);
		CHECK(seed_model_backward(m[j], B, dl, dv) == 0);
	}
	char s0[256], s1[256], s2[256];
	seed_model_summary(m[0], s0, sizeof s0);
	seed_model_summary(m[1], s1, sizeof s1);
	CHECK_MSG(strcmp(s0, "f32[9,10,2] conv2d(5,k3) relu conv2d(4,k2) flatten | heads 3+1 | 855 params") ==
	              0,
	          "%s", s0);
	CHECK(strcmp(s0, s1) == 0);
	CHECK(seed_model_num_params(m[0]) == seed_model_num_params(m[1]));
	CHECK(memcmp(lg[0], lg[1], sizeof lg[0]) == 0 && memcmp(v[0], v[1], sizeof v[0]) == 0);
	CHECK(memcmp(seed_model_grads(m[0]), seed_model_grads(m[1]),
	             seed_model_num_params(m[0]) * sizeof(float)) == 0);
	/* "same" (9x10 -> 9x10 -> 8x9) and padding 1: the same network. */
	seed_model_summary(m[2], s2, sizeof s2);
	CHECK_MSG(strstr(s2, "conv2d(5,k3,same)") != NULL, "%s", s2);
	CHECK(seed_model_num_params(m[2]) == seed_model_num_params(m[3]));
	CHECK_MSG(seed_model_num_params(m[2]) == 90 + 5 + 80 + 4 + 4 * (8 * 9 * 4) + 3 + 1, "%zu",
	          seed_model_num_params(m[2]));
	CHECK(memcmp(lg[2], lg[3], sizeof lg[2]) == 0 && memcmp(v[2], v[3], sizeof v[2]) == 0);
	CHECK(memcmp(seed_model_grads(m[2]), seed_model_grads(m[3]),
	             seed_model_num_params(m[2]) * sizeof(float)) == 0);
out:
	for (int j = 0; j < 4; j++)
		seed_model_free(&m[j]);
}

/* Q values of a dueling MLP against numpy (tests/golden/dueling_golden.py). */
static void t_golden_dueling(void)
{
	const int64_t shape[1] = {GOLDEN_DUEL_NOBS};
	seed_model *m = NULL;
	seed_err err;
	int rc = seed_model_new(&m, GOLDEN_DUEL_JSON, SEED_DTYPE_F32, 1, shape, GOLDEN_DUEL_A, GOLDEN_DUEL_B,
	                        &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	int n = 0;
	for (; golden_duel_params[n].name; n++) {
		const seed_model_param *p = seed_model_param_find(m, golden_duel_params[n].name);
		CHECK_MSG(p && p->numel == (size_t)golden_duel_params[n].numel, "tensor %s",
		          golden_duel_params[n].name);
		if (p && p->numel == (size_t)golden_duel_params[n].numel)
			memcpy(seed_model_params(m) + p->offset, golden_duel_params[n].data,
			       p->numel * sizeof(float));
	}
	CHECK(n == seed_model_num_tensors(m));
	float q[GOLDEN_DUEL_B * GOLDEN_DUEL_A];
	CHECK(seed_model_forward_q(m, GOLDEN_DUEL_B, golden_duel_obs, q) == 0);
	for (int i = 0; i < GOLDEN_DUEL_B * GOLDEN_DUEL_A; i++)
		CHECK_NEAR(q[i], golden_duel_q[i], 1e-5 * (1 + fabs(golden_duel_q[i])));
	seed_model_free(&m);
}

static double orth_error(const float *w, int rows, int cols, double gain);

/* The "head" key: tensors, initialisation, the default, and the refusal
 * of the other kind's forward and backward. */
static void t_dueling_head(void)
{
	static const char *const want[] = {"torso.0.weight", "torso.0.bias",   "advantage.weight",
	                                   "value.weight",   "advantage.bias", "value.bias"};
	const int64_t vec[1] = {8};
	seed_model *d = NULL, *ac = NULL, *ac2 = NULL;
	seed_err err = {{0}};
	const char *torso = "\"torso\": [{\"type\": \"linear\", \"out\": 16}, {\"type\": \"relu\"}]";
	char json[256];
	snprintf(json, sizeof json, "{%s, \"head\": \"dueling\"}", torso);
	CHECK_MSG(seed_model_new(&d, json, SEED_DTYPE_F32, 1, vec, 5, 4, &err) == 0, "%s", err.msg);
	snprintf(json, sizeof json, "{%s}", torso);
	CHECK(seed_model_new(&ac, json, SEED_DTYPE_F32, 1, vec, 5, 4, &err) == 0);
	snprintf(json, sizeof json, "{%s, \"head\": \"actor-critic\"}", torso);
	CHECK(seed_model_new(&ac2, json, SEED_DTYPE_F32, 1, vec, 5, 4, &err) == 0);
	if (!d || !ac || !ac2)
		return;
	CHECK(seed_model_head_kind(d) == SEED_HEAD_DUELING);
	CHECK(seed_model_head_kind(ac) == SEED_HEAD_ACTOR_CRITIC);
	CHECK(seed_model_head_kind(ac2) == SEED_HEAD_ACTOR_CRITIC);
	CHECK(strcmp(seed_model_head_name(SEED_HEAD_DUELING), "dueling") == 0);
	CHECK(strcmp(seed_model_head_name(SEED_HEAD_ACTOR_CRITIC), "actor-critic") == 0);
	/* Tensors: advantage.* in the policy's places, same sizes. */
	CHECK(seed_model_num_tensors(d) == 6);
	for (int i = 0; i < 6 && i < seed_model_num_tensors(d); i++) {
		const seed_model_param *p = seed_model_param_at(d, i), *q = seed_model_param_at(ac, i);
		CHECK_MSG(strcmp(p->name, want[i]) == 0, "tensor %d is %s", i, p->name);
		CHECK(p->offset == q->offset && p->numel == q->numel && p->rank == q->rank);
	}
	const seed_model_param *aw = seed_model_param_find(d, "advantage.weight");
	CHECK(aw && aw->rank == 2 && aw->shape[0] == 5 && aw->shape[1] == 16);
	CHECK(seed_model_param_find(d, "policy.weight") == NULL);
	CHECK(seed_model_num_params(d) == 8 * 16 + 16 + 5 * 16 + 16 + 5 + 1);
	char sum[128];
	seed_model_summary(d, sum, sizeof sum);
	CHECK_MSG(strcmp(sum, "f32[8] linear(16) relu | dueling 5+1 -> Q 5 | 246 params") == 0, "%s", sum);
	/* The layouts differ by name: no copies between the two kinds. */
	CHECK(seed_model_copy_params(d, ac) == -EINVAL);
	CHECK(seed_model_copy_params(ac2, ac) == 0);

	/* Initialisation: the same draws; advantage gain 1, value gain 1. */
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	seed_model_init(d, &rng);
	seed_rng_init(&rng, 7, 0);
	seed_model_init(ac, &rng);
	seed_rng_init(&rng, 7, 0);
	seed_model_init(ac2, &rng);
	const float *pd = seed_model_params(d), *pa = seed_model_params(ac);
	size_t np = seed_model_num_params(d);
	CHECK(memcmp(seed_model_params(ac2), pa, np * sizeof *pa) == 0); /* the default, byte for byte */
	CHECK_NEAR(orth_error(pd + aw->offset, 5, 16, 1.0), 0, 1e-5);
	const seed_model_param *vw = seed_model_param_find(d, "value.weight");
	CHECK_NEAR(orth_error(pd + vw->offset, 1, 16, 1.0), 0, 1e-5);
	CHECK(memcmp(pd, pa, aw->offset * sizeof *pd) == 0); /* the torso is drawn first, alike */
	/* The policy's draws scaled by 0.01 are the advantage's. */
	for (size_t e = 0; e < aw->numel; e++)
		CHECK_NEAR(pa[aw->offset + e], 0.01 * pd[aw->offset + e], 1e-7);

	/* Each kind's forward and backward refuse the other kind. */
	float obs[2 * 8], q[2 * 5], lg[2 * 5], v[2];
	for (int i = 0; i < 16; i++)
		obs[i] = (float)(i % 5) - 2.0f;
	CHECK(seed_model_forward(d, 2, obs, lg, v) == -EINVAL);
	CHECK(seed_model_forward_q(ac, 2, obs, q) == -EINVAL);
	CHECK(seed_model_forward_q(d, 2, obs, NULL) == -EINVAL);
	CHECK(seed_model_forward_q(d, 0, obs, q) == -EINVAL);
	CHECK(seed_model_forward_q(d, 5, obs, q) == -EINVAL);
	CHECK(seed_model_forward(ac, 2, obs, lg, v) == 0);
	CHECK(seed_model_backward_q(ac, 2, q) == -EINVAL);
	CHECK(seed_model_forward_q(d, 2, obs, q) == 0);
	CHECK(seed_model_backward(d, 2, lg, v) == -EINVAL);
	CHECK(seed_model_backward_q(d, 3, q) == -EINVAL);
	/* The mean over actions cancels a gradient that is the same for
	 * every action: it reaches the value stream only, summed. */
	seed_model_zero_grad(d);
	float dq[2 * 5];
	for (int i = 0; i < 10; i++)
		dq[i] = 0.5f;
	CHECK(seed_model_backward_q(d, 2, dq) == 0);
	const float *g = seed_model_grads(d);
	const seed_model_param *ab = seed_model_param_find(d, "advantage.bias");
	const seed_model_param *vb = seed_model_param_find(d, "value.bias");
	for (size_t e = 0; e < aw->numel; e++)
		CHECK(g[aw->offset + e] == 0.0f);
	for (size_t e = 0; e < ab->numel; e++)
		CHECK(g[ab->offset + e] == 0.0f);
	CHECK_NEAR(g[vb->offset], 2 * 5 * 0.5, 1e-6); /* sum over rows and actions */
	/* A NULL gradient adds nothing. */
	seed_model_zero_grad(d);
	CHECK(seed_model_backward_q(d, 2, NULL) == 0);
	for (size_t j = 0; j < np; j++)
		CHECK(g[j] == 0.0f);

	/* Bad "head" values. */
	seed_model *bad_m = NULL;
	CHECK(seed_model_new(&bad_m, "{\"torso\": [], \"head\": \"q\"}", SEED_DTYPE_F32, 1, vec, 5, 4,
	                     &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "\"head\"") && strstr(err.msg, "dueling"), "%s", err.msg);
	CHECK(seed_model_new(&bad_m, "{\"torso\": [], \"head\": 1}", SEED_DTYPE_F32, 1, vec, 5, 4, &err) ==
	      -SEED_EOPTION);
	CHECK(bad_m == NULL);
	seed_model_free(&d);
	seed_model_free(&ac);
	seed_model_free(&ac2);
}

/* ---- parameters, shapes, errors ---------------------------------------- */

static const char minatar_json[] =
    "{\"torso\":[{\"type\":\"conv2d\",\"filters\":16,\"kernel\":3},{\"type\":\"relu\"},"
    "{\"type\":\"flatten\"},{\"type\":\"linear\",\"out\":128},{\"type\":\"relu\"}]}";

static void t_param_table(void)
{
	const int64_t shape[3] = {10, 10, 4};
	seed_model *m = NULL;
	seed_err err;
	int rc = seed_model_new(&m, minatar_json, SEED_DTYPE_U8, 3, shape, 6, 32, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	/* Worked by hand: conv 16x3x3x4 + 16, linear 128x(8*8*16) + 128,
	 * policy 6x128 + 6, value 1x128 + 1. */
	static const struct {
		const char *name;
		int rank;
		int64_t shape[4];
	} want[] = {
	    {"torso.0.weight", 4, {16, 3, 3, 4}},
	    {"torso.0.bias", 1, {16}},
	    {"torso.3.weight", 2, {128, 1024}},
	    {"torso.3.bias", 1, {128}},
	    {"policy.weight", 2, {6, 128}},
	    {"value.weight", 2, {1, 128}},
	    {"policy.bias", 1, {6}},
	    {"value.bias", 1, {1}},
	};
	CHECK(seed_model_num_tensors(m) == 8);
	CHECK(seed_model_num_params(m) == 576 + 16 + 131072 + 128 + 768 + 128 + 6 + 1);
	size_t off = 0;
	for (int i = 0; i < 8; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		CHECK(p && strcmp(p->name, want[i].name) == 0);
		if (!p)
			continue;
		CHECK(p->rank == want[i].rank);
		size_t n = 1;
		for (int d = 0; d < p->rank; d++) {
			CHECK(p->shape[d] == want[i].shape[d]);
			n *= (size_t)want[i].shape[d];
		}
		CHECK(p->numel == n);
		CHECK(p->offset == off); /* in order, no gaps */
		off += n;
		CHECK(seed_model_param_find(m, want[i].name) == p);
	}
	CHECK(seed_model_param_at(m, 8) == NULL);
	CHECK(seed_model_param_at(m, -1) == NULL);
	CHECK(seed_model_param_find(m, "torso.1.weight") == NULL);
	CHECK(((uintptr_t)seed_model_params(m) & 63) == 0);
	CHECK(((uintptr_t)seed_model_grads(m) & 63) == 0);
	CHECK(seed_model_num_actions(m) == 6);
	CHECK(seed_model_max_batch(m) == 32);
	CHECK(seed_model_obs_bytes(m) == 400);
	char buf[256];
	int n = seed_model_summary(m, buf, sizeof buf);
	CHECK(n == (int)strlen(buf));
	CHECK_MSG(
	    strcmp(buf,
	           "u8[10,10,4] conv2d(16,k3) relu flatten linear(128) relu | heads 6+1 | 132695 params") ==
	        0,
	    "%s", buf);
	CHECK(seed_model_summary(m, NULL, 0) == n);
	seed_model_free(&m);
	CHECK(m == NULL);
	seed_model_free(&m);
	seed_model_free(NULL);
}

static void t_json_errors(void)
{
	static const struct {
		const char *json;
		int rank;
		const char *want[2]; /* substrings of the message */
	} cases[] = {
	    {"{\"torso\": [{\"type\": \"linear\"}]}", 1, {"torso[0]", "\"out\""}},
	    {"{\"torso\": [{\"type\": \"relu\"}, {\"type\": \"linear\", \"out\": 0}]}",
	     1,
	     {"torso[1]", "\"out\""}},
	    {"{\"torso\": [{\"type\": \"linear\", \"out\": \"8\"}]}", 1, {"torso[0]", "\"out\""}},
	    {"{\"torso\": [{\"type\": \"dense\", \"out\": 8}]}", 1, {"torso[0]", "\"type\""}},
	    {"{\"torso\": [{\"out\": 8}]}", 1, {"torso[0]", "\"type\""}},
	    {"{\"torso\": [{\"type\": \"tanh\"}, {\"type\": \"relu\", \"inplace\": true}]}",
	     1,
	     {"torso[1]", "\"inplace\""}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3}]}",
	     1,
	     {"torso[0]", "conv2d"}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 11}, {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0]", "\"kernel\""}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"kernel\": 3}, {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0]", "\"filters\""}},
	    /* Strides and padding: stride 0, a padding the kernel does not
	     * need, kernels larger than the padded input. */
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3, \"stride\": 0},"
	     " {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0] (conv2d)", "\"stride\" must be an integer in 1.."}},
	    {"{\"torso\": [{\"type\": \"relu\"}, {\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3,"
	     " \"stride\": \"2\"}, {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[1] (conv2d)", "\"stride\""}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3, \"padding\": 3},"
	     " {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0] (conv2d)", "\"padding\" must be \"valid\", \"same\" or an integer in 0..2"}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3, \"padding\": \"full\"},"
	     " {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0] (conv2d)", "\"padding\""}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 13, \"padding\": 1},"
	     " {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0] (conv2d)", "\"kernel\" is 13, larger than the padded input 12x12 (input [10,10,4], "
	                           "padding 1)"}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 8, \"stride\": 4},"
	     " {\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3}, {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[1] (conv2d)", "larger than the padded input 1x1 (input [1,1,4], padding 0)"}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3, \"dilation\": 2},"
	     " {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0] (conv2d)", "unknown key \"dilation\""}},
	    {"{\"torso\": [{\"type\": \"linear\", \"out\": 8}]}", 3, {"torso[0]", "flatten"}},
	    {"{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3}]}", 3, {"torso", "flatten"}},
	    {"{\"torso\": [3]}", 1, {"torso[0]", "object"}},
	    {"{\"torso\": [{\"type\": \"scale\"}]}", 1, {"torso[0]", "\"by\""}},
	    {"{\"torso\": [{\"type\": \"scale\", \"by\": [1, 2, 3]}]}", 1, {"torso[0]", "10"}},
	    {"{\"torso\": [{\"type\": \"scale\", \"by\": [1, 2, 3]}, {\"type\": \"flatten\"}]}",
	     3,
	     {"torso[0] (scale)", "1 or 4"}},
	    {"{\"torso\": [{\"type\": \"scale\", \"by\": \"2\"}]}", 1, {"torso[0]", "\"by\""}},
	    {"{\"torso\": [{\"type\": \"scale\", \"by\": [1e31]}]}", 1, {"\"by\"[0]", "finite"}},
	    {"{\"torso\": [{\"type\": \"scale\", \"by\": 1, \"shift\": 0}]}", 1, {"torso[0]", "\"shift\""}},
	    {"{\"torso\": {}}", 1, {"\"torso\"", "list"}},
	    {"{\"layers\": []}", 1, {"\"layers\"", "unknown"}},
	    {"{\"torso\": [], \"init\": \"xavier\"}", 1, {"\"init\"", "orthogonal"}},
	    {"{\"torso\": [", 1, {"JSON", "line 1"}},
	    {"[]", 1, {"object", "torso"}},
	};
	const int64_t vec[1] = {10}, img[3] = {10, 10, 4};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		seed_model *m = NULL;
		seed_err err = {{0}};
		int rc = seed_model_new(&m, cases[i].json, SEED_DTYPE_F32, cases[i].rank,
		                        cases[i].rank == 1 ? vec : img, 2, 4, &err);
		CHECK_MSG(rc == -SEED_EOPTION, "case %zu: rc %d", i, rc);
		CHECK_MSG(m == NULL, "case %zu", i);
		for (int w = 0; w < 2; w++)
			CHECK_MSG(strstr(err.msg, cases[i].want[w]) != NULL, "case %zu: \"%s\" lacks %s", i,
			          err.msg, cases[i].want[w]);
		seed_model_free(&m);
	}
	/* Arguments. */
	seed_model *m = NULL;
	seed_err err;
	CHECK(seed_model_new(&m, "{\"torso\": []}", SEED_DTYPE_I32, 1, vec, 2, 4, &err) == -EINVAL);
	CHECK(seed_model_new(&m, "{\"torso\": []}", SEED_DTYPE_F32, 0, vec, 2, 4, &err) == -EINVAL);
	CHECK(seed_model_new(&m, "{\"torso\": []}", SEED_DTYPE_F32, 1, vec, 0, 4, &err) == -EINVAL);
	CHECK(seed_model_new(&m, "{\"torso\": []}", SEED_DTYPE_F32, 1, vec, 2, 0, &err) == -EINVAL);
	CHECK(seed_model_new(&m, NULL, SEED_DTYPE_F32, 1, vec, 2, 4, &err) == -EINVAL);
	/* Sizes past BLAS's int dimensions, refused before allocating. */
	const int64_t wide[1] = {4096};
	CHECK(seed_model_new(&m, "{\"torso\": [{\"type\": \"linear\", \"out\": 1048576}]}", SEED_DTYPE_F32, 1,
	                     wide, 2, 1, &err) == -SEED_EOPTION);
	CHECK(strstr(err.msg, "parameters") != NULL);
	CHECK(seed_model_new(&m, "{\"torso\": [{\"type\": \"linear\", \"out\": 4096}]}", SEED_DTYPE_F32, 1,
	                     vec, 2, 1 << 20, &err) == -EINVAL);
	CHECK(strstr(err.msg, "max_batch") != NULL);
	CHECK(m == NULL);
}

/* ---- initialisation ---------------------------------------------------- */

/* max |W W^T - gain^2 I| over the short side of W (rows x cols). */
static double orth_error(const float *w, int rows, int cols, double gain)
{
	double worst = 0;
	int tall = rows >= cols, n = tall ? cols : rows, len = tall ? rows : cols;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int e = 0; e < len; e++)
				s += tall ? (double)w[e * cols + i] * w[e * cols + j]
				          : (double)w[i * cols + e] * w[j * cols + e];
			double d = fabs(s - (i == j ? gain * gain : 0));
			if (d > worst)
				worst = d;
		}
	return worst;
}

static void t_init_orthogonal(void)
{
	const int64_t shape[3] = {10, 10, 4};
	seed_model *m = NULL, *m2 = NULL;
	seed_err err;
	CHECK(seed_model_new(&m, minatar_json, SEED_DTYPE_U8, 3, shape, 6, 1, &err) == 0);
	CHECK(seed_model_new(&m2, minatar_json, SEED_DTYPE_U8, 3, shape, 6, 1, &err) == 0);
	if (!m || !m2)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 42, 0);
	seed_model_init(m, &rng);
	const float *p = seed_model_params(m);
	const seed_model_param *t;
	t = seed_model_param_find(m, "torso.0.weight"); /* 16 x 36: orthonormal rows */
	CHECK_NEAR(orth_error(p + t->offset, 16, 36, sqrt(2.0)), 0, 1e-5);
	t = seed_model_param_find(m, "torso.3.weight"); /* 128 x 1024 */
	CHECK_NEAR(orth_error(p + t->offset, 128, 1024, sqrt(2.0)), 0, 1e-5);
	t = seed_model_param_find(m, "policy.weight");
	CHECK_NEAR(orth_error(p + t->offset, 6, 128, 0.01), 0, 1e-7);
	t = seed_model_param_find(m, "value.weight");
	CHECK_NEAR(orth_error(p + t->offset, 1, 128, 1.0), 0, 1e-5);
	for (int i = 0; i < seed_model_num_tensors(m); i++) {
		t = seed_model_param_at(m, i);
		if (strstr(t->name, "bias"))
			for (size_t e = 0; e < t->numel; e++)
				CHECK(p[t->offset + e] == 0.0f);
	}
	/* Tall matrices (more rows than columns): orthonormal columns. */
	seed_model *tall = NULL;
	const int64_t vec[1] = {3};
	CHECK(seed_model_new(&tall, "{\"torso\": [{\"type\": \"linear\", \"out\": 20}]}", SEED_DTYPE_F32, 1,
	                     vec, 2, 1, &err) == 0);
	if (tall) {
		seed_model_init(tall, &rng);
		t = seed_model_param_find(tall, "torso.0.weight");
		CHECK_NEAR(orth_error(seed_model_params(tall) + t->offset, 20, 3, sqrt(2.0)), 0, 1e-5);
		seed_model_free(&tall);
	}
	/* Same seed, same parameters; another seed, others. */
	seed_rng_init(&rng, 42, 0);
	seed_model_init(m2, &rng);
	size_t np = seed_model_num_params(m);
	CHECK(memcmp(seed_model_params(m2), p, np * sizeof *p) == 0);
	seed_rng_init(&rng, 43, 0);
	seed_model_init(m2, &rng);
	CHECK(memcmp(seed_model_params(m2), p, np * sizeof *p) != 0);
	seed_model_free(&m);
	seed_model_free(&m2);
}

static void t_init_pytorch(void)
{
	const int64_t vec[1] = {16};
	seed_model *m = NULL;
	seed_err err;
	CHECK(seed_model_new(&m, "{\"torso\": [{\"type\": \"linear\", \"out\": 64}], \"init\": \"pytorch\"}",
	                     SEED_DTYPE_F32, 1, vec, 4, 1, &err) == 0);
	if (!m)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	seed_model_init(m, &rng);
	const float *p = seed_model_params(m);
	for (int i = 0; i < seed_model_num_tensors(m); i++) {
		const seed_model_param *t = seed_model_param_at(m, i);
		int64_t fan_in = strncmp(t->name, "torso", 5) == 0 ? 16 : 64;
		double bound = 1 / sqrt((double)fan_in), sum2 = 0, amax = 0;
		for (size_t e = 0; e < t->numel; e++) {
			double v = p[t->offset + e];
			sum2 += v * v;
			if (fabs(v) > amax)
				amax = fabs(v);
		}
		CHECK_MSG(amax <= bound, "%s", t->name);
		/* Uniform in +-bound has variance bound^2 / 3. */
		if (t->numel >= 64)
			CHECK_NEAR(sum2 / t->numel, bound * bound / 3, 0.25 * bound * bound / 3);
	}
	seed_model_free(&m);
}

/* ---- forward and backward bookkeeping ---------------------------------- */

static seed_model *mlp(int max_batch)
{
	const int64_t vec[1] = {4};
	seed_model *m = NULL;
	seed_err err;
	if (seed_model_new(&m,
	                   "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"},"
	                   " {\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}]}",
	                   SEED_DTYPE_F32, 1, vec, 2, max_batch, &err) < 0) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	seed_rng rng;
	seed_rng_init(&rng, 5, 0);
	seed_model_init(m, &rng);
	return m;
}

static void t_batch_rows_independent(void)
{
	seed_model *m = mlp(64);
	if (!m)
		return;
	float obs[64 * 4], lg[64 * 2], v[64], lg1[2], v1;
	seed_rng rng;
	seed_rng_init(&rng, 6, 0);
	for (int i = 0; i < 64 * 4; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	CHECK(seed_model_forward(m, 64, obs, lg, v) == 0);
	for (int b = 0; b < 64; b += 9) {
		CHECK(seed_model_forward(m, 1, obs + 4 * b, lg1, &v1) == 0);
		CHECK_NEAR(lg1[0], lg[2 * b], 1e-6);
		CHECK_NEAR(lg1[1], lg[2 * b + 1], 1e-6);
		CHECK_NEAR(v1, v[b], 1e-6);
	}
	/* NULL outputs are allowed. */
	CHECK(seed_model_forward(m, 3, obs, NULL, v) == 0);
	CHECK(seed_model_forward(m, 3, obs, lg, NULL) == 0);
	/* Batch limits. */
	CHECK(seed_model_forward(m, 0, obs, lg, v) == -EINVAL);
	CHECK(seed_model_forward(m, 65, obs, lg, v) == -EINVAL);
	seed_model_free(&m);
}

/* seed_model_reserve: a model grown from 2 to 6 rows computes what one
 * built for 6 rows computes (forward and gradients, bit for bit), with the
 * same parameter slab; a backward needs a new forward after growing. */
static void t_reserve(void)
{
	const char *json = "{\"torso\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 2},"
	                   " {\"type\": \"conv2d\", \"filters\": 3, \"kernel\": 2}, {\"type\": \"flatten\"},"
	                   " {\"type\": \"linear\", \"out\": 5}, {\"type\": \"relu\"}]}";
	const int64_t shape[3] = {5, 4, 2};
	seed_model *small = NULL, *big = NULL;
	seed_err err;
	if (seed_model_new(&small, json, SEED_DTYPE_F32, 3, shape, 3, 2, &err) < 0 ||
	    seed_model_new(&big, json, SEED_DTYPE_F32, 3, shape, 3, 6, &err) < 0) {
		CHECK_MSG(0, "%s", err.msg);
		seed_model_free(&small);
		return;
	}
	seed_rng rng;
	seed_rng_init(&rng, 12, 0);
	seed_model_init(big, &rng);
	CHECK(seed_model_copy_params(small, big) == 0);
	enum { B = 6, N = 5 * 4 * 2 };
	float obs[B * N], lg[2][B * 3], v[2][B], dl[B * 3], dv[B];
	for (int i = 0; i < B * N; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < B * 3; i++)
		dl[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < B; i++)
		dv[i] = (float)seed_rng_normal(&rng);
	float *params = seed_model_params(small);
	CHECK(seed_model_forward(small, 2, obs, lg[0], v[0]) == 0);
	CHECK(seed_model_forward(small, B, obs, lg[0], v[0]) == -EINVAL);
	CHECK(seed_model_reserve(small, 1, &err) == 0); /* smaller: nothing changes */
	CHECK(seed_model_max_batch(small) == 2);
	CHECK(seed_model_backward(small, 2, dl, dv) == 0);
	CHECK(seed_model_reserve(small, B, &err) == 0);
	CHECK(seed_model_max_batch(small) == B);
	CHECK(seed_model_params(small) == params);
	CHECK(seed_model_backward(small, 2, dl, dv) == -EINVAL); /* the activations are gone */
	seed_model_zero_grad(small);
	CHECK(seed_model_forward(small, B, obs, lg[0], v[0]) == 0);
	CHECK(seed_model_forward(big, B, obs, lg[1], v[1]) == 0);
	CHECK(memcmp(lg[0], lg[1], sizeof lg[0]) == 0);
	CHECK(memcmp(v[0], v[1], sizeof v[0]) == 0);
	CHECK(seed_model_backward(small, B, dl, dv) == 0);
	CHECK(seed_model_backward(big, B, dl, dv) == 0);
	CHECK(memcmp(seed_model_grads(small), seed_model_grads(big),
	             seed_model_num_params(big) * sizeof(float)) == 0);
	CHECK(seed_model_reserve(small, 1 << 21, &err) == -EINVAL);
	CHECK(seed_model_max_batch(small) == B);
	seed_model_free(&small);
	seed_model_free(&big);
}

static void t_backward_accumulates(void)
{
	seed_model *m = mlp(8);
	if (!m)
		return;
	float obs[8 * 4], dl[8 * 2], dv[8];
	CHECK(seed_model_backward(m, 8, dl, dv) == -EINVAL); /* no forward yet */
	seed_rng rng;
	seed_rng_init(&rng, 11, 0);
	for (int i = 0; i < 8 * 4; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < 8 * 2; i++)
		dl[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < 8; i++)
		dv[i] = (float)seed_rng_normal(&rng);
	CHECK(seed_model_forward(m, 8, obs, NULL, NULL) == 0);
	CHECK(seed_model_backward(m, 7, dl, dv) == -EINVAL); /* not the forward's B */
	size_t np = seed_model_num_params(m);
	float *g1 = malloc(np * sizeof *g1), *g = seed_model_grads(m);
	for (size_t j = 0; j < np; j++)
		CHECK(g[j] == 0.0f); /* zero from the start */
	CHECK(seed_model_backward(m, 8, dl, dv) == 0);
	memcpy(g1, g, np * sizeof *g1);
	CHECK(seed_model_backward(m, 8, dl, dv) == 0);
	int doubled = 1, nonzero = 0;
	for (size_t j = 0; j < np; j++) {
		doubled &= fabsf(g[j] - 2 * g1[j]) <= 1e-6f * (1 + fabsf(g1[j]));
		nonzero += g1[j] != 0.0f;
	}
	CHECK(doubled);
	CHECK(nonzero > (int)np / 2);
	/* NULL dlogits and dvalues are zeros: the sum of the two parts. */
	seed_model_zero_grad(m);
	for (size_t j = 0; j < np; j++)
		CHECK(g[j] == 0.0f);
	CHECK(seed_model_backward(m, 8, dl, NULL) == 0);
	CHECK(seed_model_backward(m, 8, NULL, dv) == 0);
	for (size_t j = 0; j < np; j++)
		CHECK_NEAR(g[j], g1[j], 1e-6 * (1 + fabsf(g1[j])));
	/* The value head gets no gradient from the logits alone. */
	seed_model_zero_grad(m);
	CHECK(seed_model_backward(m, 8, dl, NULL) == 0);
	const seed_model_param *vw = seed_model_param_find(m, "value.weight");
	for (size_t e = 0; e < vw->numel; e++)
		CHECK(g[vw->offset + e] == 0.0f);
	free(g1);
	seed_model_free(&m);
}

static void t_u8_matches_f32(void)
{
	const int64_t shape[3] = {10, 10, 4};
	seed_model *mu = NULL, *mf = NULL;
	seed_err err;
	CHECK(seed_model_new(&mu, minatar_json, SEED_DTYPE_U8, 3, shape, 6, 4, &err) == 0);
	CHECK(seed_model_new(&mf, minatar_json, SEED_DTYPE_F32, 3, shape, 6, 4, &err) == 0);
	if (!mu || !mf)
		return;
	CHECK(seed_model_obs_bytes(mf) == 1600);
	seed_rng rng;
	seed_rng_init(&rng, 12, 0);
	seed_model_init(mu, &rng);
	CHECK(seed_model_copy_params(mf, mu) == 0);
	unsigned char ou[4 * 400];
	float of[4 * 400], l1[24], l2[24], v1[4], v2[4];
	for (int i = 0; i < 1600; i++)
		of[i] = ou[i] = (unsigned char)seed_rng_below(&rng, 256);
	seed_model_forward(mu, 4, ou, l1, v1);
	seed_model_forward(mf, 4, of, l2, v2);
	CHECK(memcmp(l1, l2, sizeof l1) == 0);
	CHECK(memcmp(v1, v2, sizeof v1) == 0);
	seed_model_free(&mu);
	seed_model_free(&mf);
}

static void t_copy_and_load(void)
{
	seed_model *learner = mlp(8), *infer = mlp(256);
	if (!learner || !infer)
		return;
	seed_rng rng;
	seed_rng_init(&rng, 99, 0);
	seed_model_init(learner, &rng);
	CHECK(memcmp(seed_model_params(learner), seed_model_params(infer),
	             seed_model_num_params(learner) * sizeof(float)) != 0);
	CHECK(seed_model_copy_params(infer, learner) == 0);
	CHECK(memcmp(seed_model_params(learner), seed_model_params(infer),
	             seed_model_num_params(learner) * sizeof(float)) == 0);
	float obs[4] = {0.1f, -0.2f, 0.3f, 0.05f}, l1[2], l2[2], v1, v2;
	seed_model_forward(learner, 1, obs, l1, &v1);
	seed_model_forward(infer, 1, obs, l2, &v2);
	CHECK(l1[0] == l2[0] && l1[1] == l2[1] && v1 == v2);

	/* Loading raw bytes from an unaligned buffer (as in a frame). */
	size_t nb = seed_model_num_params(learner) * sizeof(float);
	unsigned char *raw = malloc(nb + 1);
	seed_model_init(learner, &rng);
	memcpy(raw + 1, seed_model_params(learner), nb);
	CHECK(seed_model_load_params(infer, raw + 1, nb) == 0);
	CHECK(memcmp(seed_model_params(learner), seed_model_params(infer), nb) == 0);
	CHECK(seed_model_load_params(infer, raw + 1, nb - 4) == -EINVAL);
	free(raw);

	/* A model of another shape is refused. */
	const int64_t vec[1] = {4};
	seed_model *other = NULL;
	seed_err err;
	CHECK(seed_model_new(&other,
	                     "{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"relu\"},"
	                     " {\"type\": \"linear\", \"out\": 32}]}",
	                     SEED_DTYPE_F32, 1, vec, 2, 4, &err) == 0);
	if (other)
		CHECK(seed_model_copy_params(other, learner) == -EINVAL);
	seed_model_free(&other);
	seed_model_free(&learner);
	seed_model_free(&infer);
}

/* The presets under examples/models build for their environments, with
 * parameter counts worked by hand. */
static char *slurp(const char *rel)
{
	const char *dir = getenv("SEED_SRCDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : ".", rel);
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("# cannot open %s\n", path);
		return NULL;
	}
	char *buf = calloc(1, 65536);
	size_t n = fread(buf, 1, 65535, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void t_presets(void)
{
	char *mlp_json = slurp("examples/models/mlp64.json"),
	     *minatar = slurp("examples/models/minatar.json");
	CHECK(mlp_json && minatar);
	if (!mlp_json || !minatar) {
		free(mlp_json);
		free(minatar);
		return;
	}
	seed_model *m = NULL;
	seed_err err;
	/* CartPole: f32[4], 2 actions: 4*64+64 + 64*64+64 + 2*64+64 + 2+1. */
	const int64_t cp[1] = {4};
	CHECK_MSG(seed_model_new(&m, mlp_json, SEED_DTYPE_F32, 1, cp, 2, 256, &err) == 0, "%s", err.msg);
	if (m)
		CHECK(seed_model_num_params(m) == 320 + 4160 + 192 + 3);
	seed_model_free(&m);
	/* MinAtar Breakout: u8[10,10,4], 3 actions. */
	const int64_t br[3] = {10, 10, 4};
	CHECK_MSG(seed_model_new(&m, minatar, SEED_DTYPE_U8, 3, br, 3, 256, &err) == 0, "%s", err.msg);
	if (m)
		CHECK(seed_model_num_params(m) == 576 + 16 + 131072 + 128 + 3 * 128 + 128 + 3 + 1);
	seed_model_free(&m);
	free(mlp_json);
	free(minatar);
}

/* The model of the JSON file at path (from the source tree) for two rows of
 * u8 frames of the given shape and A actions; NULL (a failed check) if it
 * cannot be read or built. */
static seed_model *load_frames_model(const char *path, const int64_t shape[3], int A)
{
	char *json = slurp(path);
	CHECK_MSG(json != NULL, "%s", path);
	if (!json)
		return NULL;
	seed_model *m = NULL;
	seed_err err;
	int rc = seed_model_new(&m, json, SEED_DTYPE_U8, 3, shape, A, 2, &err);
	free(json);
	CHECK_MSG(rc == 0, "%s: %s", path, err.msg);
	return rc ? NULL : m;
}

/* A model m of two rows on u8 frames (shape rn->shape) checked against the
 * double-precision reference rn, its first layer a scale by 1/255: random
 * parameters and frames from seed, the forward against rn's, the values of
 * the two rows apart (pixels reach the heads), and a backward that reaches
 * the first convolution's weights.  Frees m. */
static void check_frames_model(seed_model *m, const rnet *rn, uint64_t seed)
{
	enum { B = 2 };
	const int A = rn->A;
	const size_t N = (size_t)(rn->shape[0] * rn->shape[1] * rn->shape[2]);
	seed_rng rng;
	seed_rng_init(&rng, seed, 0);
	seed_model_init(m, &rng);
	unsigned char *obs = malloc(B * N);
	double *dobs = malloc(B * N * sizeof *dobs);
	for (size_t i = 0; i < B * N; i++)
		dobs[i] = obs[i] = (unsigned char)seed_rng_below(&rng, 256);
	memset(rscale, 0, sizeof rscale);
	rscale[0][0] = (float)(1.0 / 255);
	size_t np = seed_model_num_params(m);
	double *theta = malloc(np * sizeof *theta);
	for (size_t j = 0; j < np; j++)
		theta[j] = seed_model_params(m)[j];
	float *lg = malloc(B * (size_t)A * sizeof *lg), *dl = malloc(B * (size_t)A * sizeof *dl), v[B], dv[B];
	double *rl = malloc(B * (size_t)A * sizeof *rl), rv[B];
	CHECK(seed_model_forward(m, B, obs, lg, v) == 0);
	rnet_forward(rn, 0, m, theta, B, dobs, rl, rv);
	for (int i = 0; i < B * A; i++)
		CHECK_NEAR(lg[i], rl[i], 1e-5 * (1 + fabs(rl[i])));
	for (int b = 0; b < B; b++)
		CHECK_NEAR(v[b], rv[b], 1e-5 * (1 + fabs(rv[b])));
	/* The values are not degenerate: pixels reach the heads. */
	CHECK(fabs(v[0] - v[1]) > 1e-3);
	for (int i = 0; i < B * A; i++)
		dl[i] = (float)seed_rng_normal(&rng);
	for (int b = 0; b < B; b++)
		dv[b] = (float)seed_rng_normal(&rng);
	seed_model_zero_grad(m);
	CHECK(seed_model_backward(m, B, dl, dv) == 0);
	double g2 = 0;
	const seed_model_param *p = seed_model_param_find(m, "torso.1.weight");
	for (size_t e = 0; p && e < p->numel; e++)
		g2 += (double)seed_model_grads(m)[p->offset + e] * seed_model_grads(m)[p->offset + e];
	CHECK(g2 > 0 && isfinite(g2)); /* the first layer learns */
	free(lg), free(dl), free(rl), free(theta), free(obs), free(dobs);
	seed_model_free(&m);
}

/* The Nature DQN preset (Mnih et al. 2015) on Atari's u8[84,84,4] with the
 * 18 actions of the full set: shapes and parameter count worked by hand,
 * the forward against the double-precision reference, a backward. */
static void t_nature_dqn(void)
{
	enum { A = 18 };
	seed_model *m =
	    load_frames_model("examples/models/nature-dqn.json", (const int64_t[3]){84, 84, 4}, A);
	if (!m)
		return;
	/* 84 -> (84-8)/4+1 = 20 -> (20-4)/2+1 = 9 -> 9-3+1 = 7: 7*7*64 = 3136
	 * into the dense layer.  Weights and biases: 32*8*8*4 + 32,
	 * 64*4*4*32 + 64, 64*3*3*64 + 64, 512*3136 + 512, then the heads
	 * 18*512 + 18 and 512 + 1. */
	CHECK(seed_model_num_params(m) ==
	      (8192 + 32) + (32768 + 64) + (36864 + 64) + (1605632 + 512) + (9216 + 18) + (512 + 1));
	const seed_model_param *p = seed_model_param_find(m, "torso.8.weight");
	CHECK(p && p->shape[0] == 512 && p->shape[1] == 3136);
	char sum[256];
	seed_model_summary(m, sum, sizeof sum);
	CHECK_MSG(strcmp(sum, "u8[84,84,4] scale conv2d(32,k8,s4) relu conv2d(64,k4,s2) relu conv2d(64,k3) "
	                      "relu flatten linear(512) relu | heads 18+1 | 1693875 params") == 0,
	          "%s", sum);
	rnet rn = {10,
	           {{R_SCALE, 1, 0, 0, 0},
	            {R_CONV, 32, 8, 4, 0},
	            {R_RELU, 0, 0, 0, 0},
	            {R_CONV, 64, 4, 2, 0},
	            {R_RELU, 0, 0, 0, 0},
	            {R_CONV, 64, 3, 1, 0},
	            {R_RELU, 0, 0, 0, 0},
	            {R_FLATTEN, 0, 0, 0, 0},
	            {R_LINEAR, 512, 0, 0, 0},
	            {R_RELU, 0, 0, 0, 0}},
	           3,
	           {84, 84, 4},
	           A};
	check_frames_model(m, &rn, 37);
}

/* The small network of examples/models/conv4x32.json (four 3x3 convolutions
 * of stride 2 and padding 1, 32 filters each, as the universe-starter-agent's
 * A3C torso, then 256 units) on Atari's frames at 42x42 and Pong's 6
 * actions: shapes and parameter count worked by hand, the forward against
 * the double-precision reference, a backward. */
static void t_conv4x32(void)
{
	enum { A = 6 };
	seed_model *m = load_frames_model("examples/models/conv4x32.json", (const int64_t[3]){42, 42, 4}, A);
	if (!m)
		return;
	/* Each layer (H + 2 - 3) / 2 + 1: 42 -> 21 -> 11 -> 6 -> 3, so
	 * 3*3*32 = 288 into the dense layer.  Weights and biases: 32*3*3*4 +
	 * 32, three times 32*3*3*32 + 32, 256*288 + 256, then the heads
	 * 6*256 + 6 and 256 + 1. */
	CHECK(seed_model_num_params(m) ==
	      (1152 + 32) + 3 * (9216 + 32) + (73728 + 256) + (1536 + 6) + (256 + 1));
	const seed_model_param *p = seed_model_param_find(m, "torso.10.weight");
	CHECK(p && p->shape[0] == 256 && p->shape[1] == 288);
	char sum[256];
	seed_model_summary(m, sum, sizeof sum);
	CHECK_MSG(strcmp(sum, "u8[42,42,4] scale conv2d(32,k3,s2,p1) relu conv2d(32,k3,s2,p1) relu "
	                      "conv2d(32,k3,s2,p1) relu conv2d(32,k3,s2,p1) relu flatten linear(256) relu "
	                      "| heads 6+1 | 104711 params") == 0,
	          "%s", sum);
	rnet rn = {12,
	           {{R_SCALE, 1, 0, 0, 0},
	            {R_CONV, 32, 3, 2, 1},
	            {R_RELU, 0, 0, 0, 0},
	            {R_CONV, 32, 3, 2, 1},
	            {R_RELU, 0, 0, 0, 0},
	            {R_CONV, 32, 3, 2, 1},
	            {R_RELU, 0, 0, 0, 0},
	            {R_CONV, 32, 3, 2, 1},
	            {R_RELU, 0, 0, 0, 0},
	            {R_FLATTEN, 0, 0, 0, 0},
	            {R_LINEAR, 256, 0, 0, 0},
	            {R_RELU, 0, 0, 0, 0}},
	           3,
	           {42, 42, 4},
	           A};
	check_frames_model(m, &rn, 41);
}

int main(void)
{
	seed_err err;
	if (seed_blas_init(&err) < 0)
		printf("# %s\n", err.msg);
	printf("# BLAS: %s\n", seed_blas_info());
	TAP_RUN(t_grad_heads);
	TAP_RUN(t_grad_dueling);
	TAP_RUN(t_grad_linear);
	TAP_RUN(t_grad_relu);
	TAP_RUN(t_grad_tanh);
	TAP_RUN(t_grad_scale);
	TAP_RUN(t_grad_conv2d);
	TAP_RUN(t_grad_conv2d_strided);
	TAP_RUN(t_grad_nature_small);
	TAP_RUN(t_grad_flatten);
	TAP_RUN(t_grad_mlp64);
	TAP_RUN(t_grad_minatar);
	TAP_RUN(t_grad_float_central);
	TAP_RUN(t_golden_mlp);
	TAP_RUN(t_golden_conv);
	TAP_RUN(t_golden_conv_strided);
	TAP_RUN(t_conv_defaults);
	TAP_RUN(t_golden_dueling);
	TAP_RUN(t_dueling_head);
	TAP_RUN(t_param_table);
	TAP_RUN(t_json_errors);
	TAP_RUN(t_init_orthogonal);
	TAP_RUN(t_init_pytorch);
	TAP_RUN(t_batch_rows_independent);
	TAP_RUN(t_backward_accumulates);
	TAP_RUN(t_u8_matches_f32);
	TAP_RUN(t_copy_and_load);
	TAP_RUN(t_presets);
	TAP_RUN(t_nature_dqn);
	TAP_RUN(t_conv4x32);
	TAP_RUN(t_reserve);
	return tap_done();
}
