/* lib/nn/lstm.c: the LSTM layer of seed/lstm.h (Keras LSTMCell), CPU.
 *
 * Forward: one sgemm for x W over all T*B rows at once (it does not depend
 * on the recurrence), then per step an sgemm adding h_{t-1} U, the
 * activations and the cell update.  Backward, with dz the gradient of the
 * pre-activations z and tc = tanh(c_t):
 *
 *   dh  = dL/dh_t + dh_carry,   dc = dc_carry + dh * o * (1 - tc^2)
 *   dz_i = dc g i (1 - i),  dz_f = dc c_{t-1} f (1 - f)
 *   dz_g = dc i (1 - g^2),  dz_o = dh tc o (1 - o)
 *   dh_carry = dz U^T,      dc_carry = dc f        (both 0 across a reset)
 *
 * and, after the loop, dW += X^T DZ, dU += Hprev^T DZ, db += sum DZ,
 * dx = DZ W^T, each a single sgemm over all T*B rows.
 *
 * Workspace layout (floats): gates (T, B, 4H) after activation, hp (T, B, H)
 * the h_{t-1} step t saw (zero after a reset), cp (T, B, H) likewise c_{t-1},
 * c (T, B, H), dz (T, B, 4H), dhc, dcc (B, H) the carried gradients.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "seed/blas.h"
#include "seed/lstm.h"

typedef struct ws_view {
	float *gates; /* (T, B, 4H) */
	float *hp;    /* (T, B, H) */
	float *cp;    /* (T, B, H) */
	float *c;     /* (T, B, H) */
	float *dz;    /* (T, B, 4H) */
	float *dhc;   /* (B, H) */
	float *dcc;   /* (B, H) */
} ws_view;

size_t seed_lstm_workspace_floats(int T, int B, int I, int H)
{
	if (T < 1 || B < 1 || I < 1 || H < 1)
		return 0;
	uint64_t tb = (uint64_t)T * (uint64_t)B;
	uint64_t n = tb * 11u * (uint64_t)H + 2u * (uint64_t)B * (uint64_t)H;
	if (n / 11u / (uint64_t)H < tb || n > SIZE_MAX / sizeof(float))
		return 0;
	return (size_t)n;
}

static ws_view carve(int T, int B, int H, float *ws)
{
	size_t tbh = (size_t)T * (size_t)B * (size_t)H;
	ws_view v;
	v.gates = ws;
	v.hp = v.gates + 4 * tbh;
	v.cp = v.hp + tbh;
	v.c = v.cp + tbh;
	v.dz = v.c + tbh;
	v.dhc = v.dz + 4 * tbh;
	v.dcc = v.dhc + (size_t)B * (size_t)H;
	return v;
}

static int check(int T, int B, int I, int H, const seed_lstm_params *p, const float *ws, size_t ws_floats)
{
	if (!p || !p->w || !p->u || !p->b || !ws)
		return -EINVAL;
	size_t need = seed_lstm_workspace_floats(T, B, I, H);
	if (need == 0 || ws_floats < need)
		return -EINVAL;
	/* sgemm takes int sizes: every row count times its width must fit. */
	if ((int64_t)T * B * 4 * H > INT32_MAX || (int64_t)T * B * I > INT32_MAX)
		return -EINVAL;
	return 0;
}

static float sigmoidf(float z)
{
	return 1.0f / (1.0f + expf(-z));
}

int seed_lstm_init(int I, int H, float *w, float *u, float *b, seed_rng *rng)
{
	if (I < 1 || H < 1 || !w || !u || !b || !rng)
		return -EINVAL;
	int G = 4 * H;
	double lim = sqrt(6.0 / ((double)I + (double)G));
	for (size_t k = 0; k < (size_t)I * (size_t)G; k++)
		w[k] = (float)seed_rng_uniform(rng, -lim, lim);
	/* Orthogonal (H, 4H): Gaussian rows made orthonormal by modified
	 * Gram-Schmidt, run twice per row ("twice is enough") since the rows
	 * are stored in float.  H <= 4H, so H orthonormal rows exist; a row
	 * that comes out numerically dependent is drawn again.  Like Keras's
	 * QR of a Gaussian matrix, this is uniform over such matrices. */
	for (int r = 0; r < H; r++) {
		float *row = u + (size_t)r * (size_t)G;
		for (;;) {
			for (int j = 0; j < G; j++)
				row[j] = (float)seed_rng_normal(rng);
			for (int pass = 0; pass < 2; pass++) {
				for (int q = 0; q < r; q++) {
					const float *prev = u + (size_t)q * (size_t)G;
					double d = 0;
					for (int j = 0; j < G; j++)
						d += (double)row[j] * prev[j];
					for (int j = 0; j < G; j++)
						row[j] = (float)(row[j] - d * prev[j]);
				}
			}
			double nn = 0;
			for (int j = 0; j < G; j++)
				nn += (double)row[j] * row[j];
			if (nn > 1e-6) {
				double s = 1.0 / sqrt(nn);
				for (int j = 0; j < G; j++)
					row[j] = (float)(row[j] * s);
				break;
			}
		}
	}
	for (int j = 0; j < G; j++)
		b[j] = (j >= H && j < 2 * H) ? 1.0f : 0.0f;
	return 0;
}

int seed_lstm_forward(int T, int B, int I, int H, const seed_lstm_params *p, const float *x,
                      const uint8_t *done, const float *h0, const float *c0, float *h, float *hT, float *cT,
                      float *ws, size_t ws_floats)
{
	int rc = check(T, B, I, H, p, ws, ws_floats);
	if (rc < 0)
		return rc;
	if (!x || !h)
		return -EINVAL;
	ws_view v = carve(T, B, H, ws);
	int G = 4 * H;
	size_t bh = (size_t)B * (size_t)H, bg = (size_t)B * (size_t)G;

	/* Z = X W + b for every step at once. */
	seed_blas_sgemm(false, false, T * B, G, I, 1.0f, x, I, p->w, G, 0.0f, v.gates, G);
	for (size_t r = 0; r < (size_t)T * (size_t)B; r++) {
		float *z = v.gates + r * (size_t)G;
		for (int j = 0; j < G; j++)
			z[j] += p->b[j];
	}
	for (int t = 0; t < T; t++) {
		float *hp = v.hp + (size_t)t * bh, *cp = v.cp + (size_t)t * bh;
		const float *hprev = t ? h + (size_t)(t - 1) * bh : h0;
		const float *cprev = t ? v.c + (size_t)(t - 1) * bh : c0;
		for (int bi = 0; bi < B; bi++) {
			size_t o = (size_t)bi * (size_t)H;
			if ((done && done[(size_t)t * (size_t)B + (size_t)bi]) || !hprev)
				memset(hp + o, 0, (size_t)H * sizeof(float));
			else
				memcpy(hp + o, hprev + o, (size_t)H * sizeof(float));
			if ((done && done[(size_t)t * (size_t)B + (size_t)bi]) || !cprev)
				memset(cp + o, 0, (size_t)H * sizeof(float));
			else
				memcpy(cp + o, cprev + o, (size_t)H * sizeof(float));
		}
		float *gt = v.gates + (size_t)t * bg;
		seed_blas_sgemm(false, false, B, G, H, 1.0f, hp, H, p->u, G, 1.0f, gt, G);
		float *ct = v.c + (size_t)t * bh, *ht = h + (size_t)t * bh;
		for (int bi = 0; bi < B; bi++) {
			float *z = gt + (size_t)bi * (size_t)G;
			size_t o = (size_t)bi * (size_t)H;
			for (int j = 0; j < H; j++) {
				float ig = sigmoidf(z[j]), fg = sigmoidf(z[H + j]);
				float gg = tanhf(z[2 * H + j]), og = sigmoidf(z[3 * H + j]);
				z[j] = ig;
				z[H + j] = fg;
				z[2 * H + j] = gg;
				z[3 * H + j] = og;
				float cc = fg * cp[o + (size_t)j] + ig * gg;
				ct[o + (size_t)j] = cc;
				ht[o + (size_t)j] = og * tanhf(cc);
			}
		}
	}
	if (hT)
		memcpy(hT, h + (size_t)(T - 1) * bh, bh * sizeof(float));
	if (cT)
		memcpy(cT, v.c + (size_t)(T - 1) * bh, bh * sizeof(float));
	return 0;
}

int seed_lstm_backward(int T, int B, int I, int H, const seed_lstm_params *p, const float *x,
                       const uint8_t *done, const float *dh, const float *dhT, const float *dcT,
                       const seed_lstm_grads *g, float *dx, float *dh0, float *dc0, float *ws,
                       size_t ws_floats)
{
	int rc = check(T, B, I, H, p, ws, ws_floats);
	if (rc < 0)
		return rc;
	if (!x || !g || !g->dw || !g->du || !g->db)
		return -EINVAL;
	ws_view v = carve(T, B, H, ws);
	int G = 4 * H;
	size_t bh = (size_t)B * (size_t)H, bg = (size_t)B * (size_t)G;

	if (dhT)
		memcpy(v.dhc, dhT, bh * sizeof(float));
	else
		memset(v.dhc, 0, bh * sizeof(float));
	if (dcT)
		memcpy(v.dcc, dcT, bh * sizeof(float));
	else
		memset(v.dcc, 0, bh * sizeof(float));

	for (int t = T - 1; t >= 0; t--) {
		const float *gt = v.gates + (size_t)t * bg;
		const float *cp = v.cp + (size_t)t * bh, *ct = v.c + (size_t)t * bh;
		const float *dht = dh ? dh + (size_t)t * bh : NULL;
		float *dz = v.dz + (size_t)t * bg;
		for (int bi = 0; bi < B; bi++) {
			const float *a = gt + (size_t)bi * (size_t)G;
			float *d = dz + (size_t)bi * (size_t)G;
			size_t o = (size_t)bi * (size_t)H;
			for (int j = 0; j < H; j++) {
				float ig = a[j], fg = a[H + j], gg = a[2 * H + j], og = a[3 * H + j];
				float tc = tanhf(ct[o + (size_t)j]);
				float dhv = v.dhc[o + (size_t)j] + (dht ? dht[o + (size_t)j] : 0.0f);
				float dcv = v.dcc[o + (size_t)j] + dhv * og * (1.0f - tc * tc);
				d[j] = dcv * gg * ig * (1.0f - ig);
				d[H + j] = dcv * cp[o + (size_t)j] * fg * (1.0f - fg);
				d[2 * H + j] = dcv * ig * (1.0f - gg * gg);
				d[3 * H + j] = dhv * tc * og * (1.0f - og);
				v.dcc[o + (size_t)j] = dcv * fg;
			}
		}
		seed_blas_sgemm(false, true, B, H, G, 1.0f, dz, G, p->u, G, 0.0f, v.dhc, H);
		if (done) {
			for (int bi = 0; bi < B; bi++) {
				if (!done[(size_t)t * (size_t)B + (size_t)bi])
					continue;
				memset(v.dhc + (size_t)bi * (size_t)H, 0, (size_t)H * sizeof(float));
				memset(v.dcc + (size_t)bi * (size_t)H, 0, (size_t)H * sizeof(float));
			}
		}
	}
	int TB = T * B;
	seed_blas_sgemm(true, false, I, G, TB, 1.0f, x, I, v.dz, G, 1.0f, g->dw, G);
	seed_blas_sgemm(true, false, H, G, TB, 1.0f, v.hp, H, v.dz, G, 1.0f, g->du, G);
	for (int r = 0; r < TB; r++) {
		const float *d = v.dz + (size_t)r * (size_t)G;
		for (int j = 0; j < G; j++)
			g->db[j] += d[j];
	}
	if (dx)
		seed_blas_sgemm(false, true, TB, I, G, 1.0f, v.dz, G, p->w, G, 0.0f, dx, I);
	if (dh0)
		memcpy(dh0, v.dhc, bh * sizeof(float));
	if (dc0)
		memcpy(dc0, v.dcc, bh * sizeof(float));
	return 0;
}
