/* test_lstm.c: the LSTM layer (seed_lstm(3)) against the equations evaluated
 * in float64 by tests/golden/lstm_ref.py (tests/golden/lstm_golden.h), by finite
 * differences of every parameter and input across resets, by a reset row
 * matching a fresh run, by its initialisation's properties, by counting
 * allocations, and on bad arguments. */
#include "seed/lstm.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "lstm_golden.h"
#include "seed/blas.h"
#include "tap.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct golden {
	const char *name;
	int T, B, I, H;
	const float *w, *u, *b, *x;
	const uint8_t *done;
	const float *h0, *c0, *dh, *dhT, *dcT;
	const float *h, *hT, *cT, *dw, *du, *db, *dx, *dh0, *dc0;
};

static const struct golden goldens[] = {LSTM_GOLDEN_CASES};

/* float32 arithmetic against a float64 reference: 1e-5 absolute plus 1e-4
 * relative (the outputs are O(1); the seen errors are near 1e-6). */
static int close_to(double got, double want)
{
	return fabs(got - want) <= 1e-5 + 1e-4 * fabs(want);
}

static double compare(const char *name, const char *what, const float *got, const float *want, size_t n)
{
	double worst = 0;
	for (size_t k = 0; k < n; k++) {
		CHECK_MSG(close_to(got[k], want[k]), "%s %s[%zu]: %.9g want %.9g", name, what, k, got[k],
		          want[k]);
		worst = fmax(worst, fabs(got[k] - want[k]));
	}
	return worst;
}

static float *fdup(const float *a, size_t n)
{
	float *p = malloc(n * sizeof *p);
	memcpy(p, a, n * sizeof *p);
	return p;
}

static void t_golden(void)
{
	for (int k = 0; k < LEN(goldens); k++) {
		const struct golden *g = &goldens[k];
		int T = g->T, B = g->B, I = g->I, H = g->H, G = 4 * H;
		size_t bh = (size_t)B * H, tbh = (size_t)T * bh;
		size_t nws = seed_lstm_workspace_floats(T, B, I, H);
		float *ws = calloc(nws, sizeof *ws), *h = calloc(tbh, sizeof *h);
		float *hT = calloc(bh, sizeof *hT), *cT = calloc(bh, sizeof *cT);
		float *dw = calloc((size_t)I * G, sizeof *dw), *du = calloc((size_t)H * G, sizeof *du);
		float *db = calloc((size_t)G, sizeof *db), *dx = calloc((size_t)T * B * I, sizeof *dx);
		float *dh0 = calloc(bh, sizeof *dh0), *dc0 = calloc(bh, sizeof *dc0);
		seed_lstm_params p = {g->w, g->u, g->b};
		seed_lstm_grads gr = {dw, du, db};
		CHECK(seed_lstm_forward(T, B, I, H, &p, g->x, g->done, g->h0, g->c0, h, hT, cT, ws, nws) ==
		      0);
		double e = compare(g->name, "h", h, g->h, tbh);
		e = fmax(e, compare(g->name, "hT", hT, g->hT, bh));
		e = fmax(e, compare(g->name, "cT", cT, g->cT, bh));
		CHECK(seed_lstm_backward(T, B, I, H, &p, g->x, g->done, g->dh, g->dhT, g->dcT, &gr, dx, dh0,
		                         dc0, ws, nws) == 0);
		e = fmax(e, compare(g->name, "dw", dw, g->dw, (size_t)I * G));
		e = fmax(e, compare(g->name, "du", du, g->du, (size_t)H * G));
		e = fmax(e, compare(g->name, "db", db, g->db, (size_t)G));
		e = fmax(e, compare(g->name, "dx", dx, g->dx, (size_t)T * B * I));
		e = fmax(e, compare(g->name, "dh0", dh0, g->dh0, bh));
		e = fmax(e, compare(g->name, "dc0", dc0, g->dc0, bh));
		/* The parameter gradients accumulate: a second backward doubles them. */
		CHECK(seed_lstm_backward(T, B, I, H, &p, g->x, g->done, g->dh, g->dhT, g->dcT, &gr, dx, dh0,
		                         dc0, ws, nws) == 0);
		for (int j = 0; j < G; j++)
			CHECK_MSG(close_to(db[j], 2.0 * g->db[j]), "%s db[%d] after two backwards", g->name,
			          j);
		printf("# %-9s T=%d B=%d I=%d H=%d max abs error %.2g\n", g->name, T, B, I, H, e);
		free(ws), free(h), free(hT), free(cT), free(dw), free(du), free(db), free(dx), free(dh0),
		    free(dc0);
	}
}

/* L = sum dh.h + dhT.hT + dcT.cT, summed in double. */
static double loss(const struct golden *g, const float *w, const float *u, const float *b, const float *x,
                   const float *h0, const float *c0, float *ws, size_t nws, float *h, float *hT, float *cT)
{
	seed_lstm_params p = {w, u, b};
	size_t bh = (size_t)g->B * g->H;
	if (seed_lstm_forward(g->T, g->B, g->I, g->H, &p, x, g->done, h0, c0, h, hT, cT, ws, nws) != 0)
		return NAN;
	double L = 0;
	for (size_t k = 0; k < (size_t)g->T * bh; k++)
		L += (double)g->dh[k] * h[k];
	for (size_t k = 0; k < bh; k++)
		L += (double)g->dhT[k] * hT[k] + (double)g->dcT[k] * cT[k];
	return L;
}

/* Central differences with step 5e-3 in float: truncation ~1e-5, rounding
 * noise ~1e-4 (float outputs of a loss of size ~1 divided by 1e-2).  Bound:
 * 1e-3 absolute plus 1e-2 relative.  Every entry of w, u, b, x, h0, c0, on
 * the golden cases with resets (so across a reset too). */
static void t_finite_differences(void)
{
	const float eps = 5e-3f;
	for (int k = 0; k < LEN(goldens); k++) {
		const struct golden *g = &goldens[k];
		int T = g->T, B = g->B, I = g->I, H = g->H, G = 4 * H;
		size_t bh = (size_t)B * H;
		size_t nws = seed_lstm_workspace_floats(T, B, I, H);
		float *ws = calloc(nws, sizeof *ws), *h = calloc((size_t)T * bh, sizeof *h);
		float *hT = calloc(bh, sizeof *hT), *cT = calloc(bh, sizeof *cT);
		float *dw = calloc((size_t)I * G, sizeof *dw), *du = calloc((size_t)H * G, sizeof *du);
		float *db = calloc((size_t)G, sizeof *db), *dx = calloc((size_t)T * B * I, sizeof *dx);
		float *dh0 = calloc(bh, sizeof *dh0), *dc0 = calloc(bh, sizeof *dc0);
		float *in[6] = {fdup(g->w, (size_t)I * G), fdup(g->u, (size_t)H * G),
		                fdup(g->b, (size_t)G),     fdup(g->x, (size_t)T * B * I),
		                fdup(g->h0, bh),           fdup(g->c0, bh)};
		const float *an[6] = {dw, du, db, dx, dh0, dc0};
		size_t n[6] = {(size_t)I * G, (size_t)H * G, (size_t)G, (size_t)T * B * I, bh, bh};
		const char *names[6] = {"w", "u", "b", "x", "h0", "c0"};
		seed_lstm_params p = {in[0], in[1], in[2]};
		seed_lstm_grads gr = {dw, du, db};
		seed_lstm_forward(T, B, I, H, &p, in[3], g->done, in[4], in[5], h, hT, cT, ws, nws);
		seed_lstm_backward(T, B, I, H, &p, in[3], g->done, g->dh, g->dhT, g->dcT, &gr, dx, dh0, dc0,
		                   ws, nws);
		double worst = 0;
		int checked = 0;
		for (int a = 0; a < 6; a++)
			for (size_t j = 0; j < n[a]; j++) {
				float keep = in[a][j];
				in[a][j] = keep + eps;
				double lp =
				    loss(g, in[0], in[1], in[2], in[3], in[4], in[5], ws, nws, h, hT, cT);
				in[a][j] = keep - eps;
				double lm =
				    loss(g, in[0], in[1], in[2], in[3], in[4], in[5], ws, nws, h, hT, cT);
				in[a][j] = keep;
				double fd = (lp - lm) / (2.0 * eps);
				CHECK_MSG(fabs(fd - an[a][j]) <= 1e-3 + 1e-2 * fabs(fd),
				          "%s d%s[%zu]: %.6g, fd %.6g", g->name, names[a], j, an[a][j], fd);
				worst = fmax(worst, fabs(fd - an[a][j]));
				checked++;
			}
		printf("# %-9s %d gradient entries, max |analytic - fd| %.2g\n", g->name, checked, worst);
		for (int a = 0; a < 6; a++)
			free(in[a]);
		free(ws), free(h), free(hT), free(cT), free(dw), free(du), free(db), free(dx), free(dh0),
		    free(dc0);
	}
}

/* A row reset at step t0 gives, from t0 on, the outputs of a fresh run of
 * that row from t0 with zero state; and no gradient reaches its steps before
 * t0 from the losses after it. */
enum { RT = 7, RB = 3, RI = 4, RH = 5, T0 = 3, ROW = 1 };

static void t_reset_is_fresh_start(void)
{
	seed_rng rng;
	seed_rng_init(&rng, 7, 0);
	static float w[RI * 4 * RH], u[RH * 4 * RH], b[4 * RH], x[RT * RB * RI], h0[RB * RH], c0[RB * RH];
	static float h[RT * RB * RH], xf[(RT - T0) * RI], hf[(RT - T0) * RH];
	CHECK(seed_lstm_init(RI, RH, w, u, b, &rng) == 0);
	for (int k = 0; k < LEN(x); k++)
		x[k] = (float)seed_rng_uniform(&rng, -2, 2);
	for (int k = 0; k < LEN(h0); k++) {
		h0[k] = (float)seed_rng_uniform(&rng, -1, 1);
		c0[k] = (float)seed_rng_uniform(&rng, -1, 1);
	}
	uint8_t done[RT * RB] = {0};
	done[T0 * RB + ROW] = 1;
	seed_lstm_params p = {w, u, b};
	size_t nws = seed_lstm_workspace_floats(RT, RB, RI, RH);
	float *ws = calloc(nws, sizeof *ws);
	CHECK(seed_lstm_forward(RT, RB, RI, RH, &p, x, done, h0, c0, h, NULL, NULL, ws, nws) == 0);

	for (int t = T0; t < RT; t++)
		memcpy(xf + (t - T0) * RI, x + (t * RB + ROW) * RI, RI * sizeof(float));
	size_t nwf = seed_lstm_workspace_floats(RT - T0, 1, RI, RH);
	float *wsf = calloc(nwf, sizeof *wsf);
	CHECK(seed_lstm_forward(RT - T0, 1, RI, RH, &p, xf, NULL, NULL, NULL, hf, NULL, NULL, wsf, nwf) == 0);
	double worst = 0;
	for (int t = T0; t < RT; t++)
		for (int j = 0; j < RH; j++) {
			float a = h[(t * RB + ROW) * RH + j], f = hf[(t - T0) * RH + j];
			CHECK_MSG(fabsf(a - f) <= 1e-6f, "h[%d][%d][%d] %.9g, fresh run %.9g", t, ROW, j, a,
			          f);
			worst = fmax(worst, fabs(a - f));
		}
	printf("# reset row vs fresh run: max difference %.2g\n", worst);

	/* Gradient only from steps >= T0 of the reset row: nothing before. */
	static float dh[RT * RB * RH], dx[RT * RB * RI], dh0[RB * RH], dc0[RB * RH];
	static float dw[RI * 4 * RH], du[RH * 4 * RH], db[4 * RH];
	for (int t = T0; t < RT; t++)
		for (int j = 0; j < RH; j++)
			dh[(t * RB + ROW) * RH + j] = 1.0f;
	seed_lstm_grads gr = {dw, du, db};
	CHECK(seed_lstm_backward(RT, RB, RI, RH, &p, x, done, dh, NULL, NULL, &gr, dx, dh0, dc0, ws, nws) ==
	      0);
	int nonzero = 0, leaked = 0;
	for (int t = 0; t < RT; t++)
		for (int r = 0; r < RB; r++)
			for (int i = 0; i < RI; i++) {
				float d = dx[(t * RB + r) * RI + i];
				if (r == ROW && t >= T0)
					nonzero += d != 0.0f;
				else
					leaked += d != 0.0f;
			}
	for (int k = 0; k < RB * RH; k++)
		leaked += (dh0[k] != 0.0f) + (dc0[k] != 0.0f);
	CHECK_MSG(leaked == 0, "%d gradient entries crossed the reset", leaked);
	CHECK(nonzero > 0);
	free(ws);
	free(wsf);
}

static void t_init(void)
{
	enum { I = 6, H = 8, G = 4 * H };
	static float w[I * G], u[H * G], b[G], w2[I * G];
	seed_rng rng;
	seed_rng_init(&rng, 42, 0);
	CHECK(seed_lstm_init(I, H, w, u, b, &rng) == 0);
	double lim = sqrt(6.0 / (I + G)), worst = 0;
	for (int k = 0; k < I * G; k++)
		CHECK(fabs(w[k]) <= lim);
	for (int r = 0; r < H; r++)
		for (int q = 0; q < H; q++) {
			double d = 0;
			for (int j = 0; j < G; j++)
				d += (double)u[r * G + j] * u[q * G + j];
			double want = r == q ? 1.0 : 0.0;
			CHECK_MSG(fabs(d - want) <= 1e-5, "(u u^T)[%d][%d] = %.9g", r, q, d);
			worst = fmax(worst, fabs(d - want));
		}
	printf("# u u^T - I: max %.2g\n", worst);
	for (int j = 0; j < G; j++)
		CHECK(b[j] == ((j >= H && j < 2 * H) ? 1.0f : 0.0f));
	/* Glorot-uniform's variance is lim^2 / 3; over many draws within 10%. */
	enum { BI = 64, BH = 64 };
	float *bw = malloc(sizeof(float) * BI * 4 * BH), *bu = malloc(sizeof(float) * BH * 4 * BH);
	float *bb = malloc(sizeof(float) * 4 * BH);
	CHECK(seed_lstm_init(BI, BH, bw, bu, bb, &rng) == 0);
	double s2 = 0, blim = sqrt(6.0 / (BI + 4 * BH));
	for (int k = 0; k < BI * 4 * BH; k++)
		s2 += (double)bw[k] * bw[k];
	s2 /= BI * 4 * BH;
	CHECK_MSG(fabs(s2 / (blim * blim / 3) - 1) < 0.1, "variance %.4g want %.4g", s2, blim * blim / 3);
	free(bw), free(bu), free(bb);
	/* Same seed, same weights. */
	seed_rng_init(&rng, 42, 0);
	CHECK(seed_lstm_init(I, H, w2, u, b, &rng) == 0);
	CHECK(memcmp(w, w2, sizeof w) == 0);
}

static void t_no_allocation(void)
{
#if COUNT_ALLOCATIONS
	const char *preload = getenv("LD_PRELOAD");
	if (preload && strstr(preload, "vgpreload")) {
		printf("# under valgrind, which owns malloc: not counted\n");
		return;
	}
	const struct golden *g = &goldens[LEN(goldens) - 1];
	int T = g->T, B = g->B, I = g->I, H = g->H, G = 4 * H;
	size_t bh = (size_t)B * H, nws = seed_lstm_workspace_floats(T, B, I, H);
	float *ws = calloc(nws, sizeof *ws), *h = calloc((size_t)T * bh, sizeof *h);
	float *dw = calloc((size_t)I * G, sizeof *dw), *du = calloc((size_t)H * G, sizeof *du);
	float *db = calloc((size_t)G, sizeof *db), *dx = calloc((size_t)T * B * I, sizeof *dx);
	float *dh0 = calloc(bh, sizeof *dh0), *dc0 = calloc(bh, sizeof *dc0);
	seed_lstm_params p = {g->w, g->u, g->b};
	seed_lstm_grads gr = {dw, du, db};
	long taken = 0;
	for (int rep = 0; rep < 20; rep++) {
		/* The first calls let the BLAS set up its buffers. */
		long before = alloc_count;
		alloc_counting = rep >= 2;
		seed_lstm_forward(T, B, I, H, &p, g->x, g->done, g->h0, g->c0, h, NULL, NULL, ws, nws);
		seed_lstm_backward(T, B, I, H, &p, g->x, g->done, g->dh, NULL, NULL, &gr, dx, dh0, dc0, ws,
		                   nws);
		alloc_counting = false;
		taken += alloc_count - before;
	}
	CHECK_MSG(taken == 0, "%ld allocations in 18 forward and backward passes", taken);
	free(ws), free(h), free(dw), free(du), free(db), free(dx), free(dh0), free(dc0);
#else
	printf("# not glibc, or a sanitizer owns malloc: allocations not counted\n");
#endif
}

static void t_errors(void)
{
	static float w[2 * 8], u[2 * 8], b[8], x[3 * 2], h[3 * 2], ws[256], dw[16], du[16], db[8];
	seed_lstm_params p = {w, u, b}, pnull = {w, NULL, b};
	seed_lstm_grads gr = {dw, du, db}, gnull = {dw, du, NULL};
	seed_rng rng;
	seed_rng_init(&rng, 1, 0);
	/* T=3, B=1, I=2, H=2: 3*1*11*2 + 2*1*2 = 70 floats. */
	CHECK(seed_lstm_workspace_floats(3, 1, 2, 2) == 70);
	CHECK(seed_lstm_workspace_floats(0, 1, 2, 2) == 0);
	CHECK(seed_lstm_workspace_floats(3, 1, 2, -1) == 0);
	CHECK(seed_lstm_workspace_floats(INT32_MAX, INT32_MAX, 1, INT32_MAX) == 0 || sizeof(size_t) > 8);
	CHECK(seed_lstm_init(0, 2, w, u, b, &rng) == -EINVAL);
	CHECK(seed_lstm_init(2, 2, w, u, b, NULL) == -EINVAL);
	CHECK(seed_lstm_init(2, 2, NULL, u, b, &rng) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, &p, x, NULL, NULL, NULL, h, NULL, NULL, ws, 70) == 0);
	CHECK(seed_lstm_forward(0, 1, 2, 2, &p, x, NULL, NULL, NULL, h, NULL, NULL, ws, 70) == -EINVAL);
	CHECK(seed_lstm_forward(3, 0, 2, 2, &p, x, NULL, NULL, NULL, h, NULL, NULL, ws, 70) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, &p, x, NULL, NULL, NULL, h, NULL, NULL, ws, 69) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, NULL, x, NULL, NULL, NULL, h, NULL, NULL, ws, 70) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, &pnull, x, NULL, NULL, NULL, h, NULL, NULL, ws, 70) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, &p, NULL, NULL, NULL, NULL, h, NULL, NULL, ws, 70) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, &p, x, NULL, NULL, NULL, NULL, NULL, NULL, ws, 70) == -EINVAL);
	CHECK(seed_lstm_forward(3, 1, 2, 2, &p, x, NULL, NULL, NULL, h, NULL, NULL, NULL, 70) == -EINVAL);
	CHECK(seed_lstm_backward(3, 1, 2, 2, &p, x, NULL, h, NULL, NULL, &gr, NULL, NULL, NULL, ws, 70) == 0);
	CHECK(seed_lstm_backward(3, 1, 2, 2, &p, x, NULL, h, NULL, NULL, &gnull, NULL, NULL, NULL, ws, 70) ==
	      -EINVAL);
	CHECK(seed_lstm_backward(3, 1, 2, 2, &p, x, NULL, h, NULL, NULL, NULL, NULL, NULL, NULL, ws, 70) ==
	      -EINVAL);
	CHECK(seed_lstm_backward(3, 1, 2, 2, &p, x, NULL, h, NULL, NULL, &gr, NULL, NULL, NULL, ws, 69) ==
	      -EINVAL);
	CHECK(seed_lstm_backward(3, 1, 0, 2, &p, x, NULL, h, NULL, NULL, &gr, NULL, NULL, NULL, ws, 70) ==
	      -EINVAL);
	CHECK(seed_lstm_backward(3, 1, 2, 2, &p, NULL, NULL, h, NULL, NULL, &gr, NULL, NULL, NULL, ws, 70) ==
	      -EINVAL);
	/* Nothing written on an error. */
	float before[8];
	memcpy(before, db, sizeof before);
	seed_lstm_backward(3, 1, 2, 2, &p, x, NULL, h, NULL, NULL, &gr, NULL, NULL, NULL, ws, 69);
	CHECK(memcmp(before, db, sizeof before) == 0);
}

int main(void)
{
	seed_err err;
	if (seed_blas_init(&err) != 0)
		printf("# no BLAS loaded (%s): the reference sgemm runs\n", err.msg);
	printf("# %s\n", seed_blas_info());
	TAP_RUN(t_golden);
	TAP_RUN(t_finite_differences);
	TAP_RUN(t_reset_is_fresh_start);
	TAP_RUN(t_init);
	TAP_RUN(t_no_allocation);
	TAP_RUN(t_errors);
	return tap_done();
}
