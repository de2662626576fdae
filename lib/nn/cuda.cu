/* cuda.cu: the CUDA compute of models: cpu.c's twin on an NVIDIA GPU.
 *
 * The backend table nn_cuda_ops (model_internal.h) over the same
 * seed_model as cpu.c: the description (layers, shapes, the parameter
 * layout) is model.c's; this file owns the device's copy of the parameter
 * and gradient slabs (same layout: a layer's device weight is at the same
 * offset as its host weight), the activations of the last forward, and the
 * kernels.  model.c keeps the host's slabs and the device's coherent
 * (m->params_at, m->grads_at): forward and backward push what the host
 * changed, backward marks the device's gradients as the newer ones, and
 * pull copies them back when a caller asks for the host's slabs.
 *
 * Compute, for B rows (shapes as in cpu.c, row-major):
 *   linear   cuBLAS sgemm: y = x W^T, dW += dy^T x, dx = dy W (FP32 math,
 *            no TF32: results stay within the tests' tolerances of the
 *            CPU's); bias, and a relu after it, in one kernel; the bias
 *            gradient is dy^T ones (cuBLAS sgemv)
 *   conv2d   im2col (a kernel: strides and zero padding) then the linear
 *            layer's three products on the patch matrix, a chunk of images
 *            at a time (col2im, a gather without atomics, for dx); cuBLAS
 *            rather than cuDNN, to keep one library and the exact layout
 *            of the CPU's weights ([F, k, k, C], HWC activations)
 *   relu, tanh, scale  element-wise kernels; flatten is its input
 *   heads    the fused head is a linear layer; a dueling head's Q values
 *            and its gradient are kernels (sums in double, as cpu.c)
 *   core     the LSTM (lstm.c's arithmetic): the input products of all
 *            steps in one sgemm, then per step the recurrent sgemm and a
 *            gates kernel; backward through time likewise, resets and all
 *
 * Observations go to the device and outputs come back in every call
 * (cudaMemcpyAsync on the model's stream, then a synchronise); everything
 * else stays on the device.  Every entry point first makes the model's
 * device the calling thread's (cudaSetDevice), since a model may move
 * between threads.  A CUDA or cuBLAS failure is said on stderr with the
 * call and the runtime's words, and the entry point returns -EIO.
 */
#include "config.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "seed/buf.h"

/* The most floats of a conv2d's patch matrix (im2col or its gradient) at
 * once: 32M floats, 128 MiB of device memory, whatever the batch; a layer
 * takes as many images per chunk as fit (at least one). */
#define COL_FLOATS ((size_t)1 << 25)

struct nn_backend {
	int dev;
	cudaStream_t st;
	cublasHandle_t blas;
	int nlayers, max_batch;
	float *params, *grads; /* the device's slabs (nparams each) */
	unsigned char *obs;    /* (B, obs_numel) u8 observations as they come */
	float *input;          /* (B, obs_numel) as f32 */
	float **out;           /* [nlayers] device (B, numel_out); flatten: its input */
	float **scale;         /* [nlayers] a scale layer's factors on the device */
	float *gbuf[2];        /* (B, widest) ping-pong gradients */
	float *col;            /* (COL_FLOATS at most) a conv2d's patch matrix */
	float *ones;           /* (nones) ones: bias gradients are dy^T ones (cuBLAS gemv) */
	size_t nones;
	float *dhead;  /* (B, A + 1) the fused head's gradient */
	float *q;      /* (B, A) Q values or their gradient (dueling) */
	float *host;   /* pinned (B, A + 1): outputs and gradients crossing */
	float *ostate; /* an optimizer's state (ostate_floats), allocated at its first update */
	size_t ostate_floats;
	double *partial;  /* (SUMSQ_BLOCKS) the gradient norm's partial sums */
	double *hpartial; /* pinned, the same */
	/* A core's (NULL without one; rows are T * B, time-major), as cpu.c's: */
	float *xc, *dxc;      /* (rows, I) its input and that input's gradient */
	float *hc, *dhc;      /* (rows, H) its output h and that output's gradient */
	float *st0, *h0, *c0; /* (B, 2H) state0 as it comes, (B, H) split */
	float *hT, *cT;       /* (B, H) the state after the last step */
	float *rew;           /* (rows) the previous rewards */
	int32_t *act;         /* (rows) the previous actions */
	uint8_t *reset;       /* (rows) the last forward's resets */
	bool has_reset;
	/* lstm.c's workspace: the gates (rows, 4H), h_{t-1}, c_{t-1} and c_t
	 * (rows, H each), the gate gradients (rows, 4H), the carried dh and
	 * dc (B, H each) */
	float *gates, *hp, *cp, *cc, *dz, *dhn, *dcn;
};

/* Blocks of the gradient norm's first pass (a fixed number, so that the sum
 * is the same for the same gradients). */
#define SUMSQ_BLOCKS 512

#define CK(call)                                                                                             \
	do {                                                                                                 \
		cudaError_t e_ = (call);                                                                     \
		if (e_ != cudaSuccess) {                                                                     \
			fprintf(stderr, "seed: CUDA: %s: %s\n", #call, cudaGetErrorString(e_));              \
			return -EIO;                                                                         \
		}                                                                                            \
	} while (0)

#define CB(call)                                                                                             \
	do {                                                                                                 \
		cublasStatus_t s_ = (call);                                                                  \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                           \
			fprintf(stderr, "seed: cuBLAS: %s: %s\n", #call, cublasGetStatusString(s_));         \
			return -EIO;                                                                         \
		}                                                                                            \
	} while (0)

/* A kernel launch's error (bad configuration), then the next entry. */
#define LAUNCHED() CK(cudaGetLastError())

static unsigned blocks(size_t n, unsigned threads)
{
	size_t b = (n + threads - 1) / threads;
	return (unsigned)(b < 65535u * 32u ? b : 65535u * 32u);
}

/* ---- kernels ------------------------------------------------------------ */

#define GRID_STRIDE(i, n)                                                                                    \
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                              \
	     i += (size_t)gridDim.x * blockDim.x)

__global__ void k_u8_to_f32(size_t n, const unsigned char *__restrict__ x, float *__restrict__ y)
{
	GRID_STRIDE(i, n) y[i] = (float)x[i];
}

/* y (rows, cols) += b (cols), then the relu when relu. */
__global__ void k_bias_act(size_t rows, int cols, float *__restrict__ y, const float *__restrict__ b,
                           int relu)
{
	size_t n = rows * (size_t)cols;
	GRID_STRIDE(i, n)
	{
		float v = y[i] + b[i % (size_t)cols];
		y[i] = relu && !(v > 0.0f) ? 0.0f : v;
	}
}

__global__ void k_relu_fwd(size_t n, const float *__restrict__ x, float *__restrict__ y)
{
	GRID_STRIDE(i, n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* dx = dy where y > 0 (in place is fine). */
__global__ void k_relu_bwd(size_t n, const float *y, const float *dy, float *dx)
{
	GRID_STRIDE(i, n) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__global__ void k_tanh_fwd(size_t n, const float *__restrict__ x, float *__restrict__ y)
{
	GRID_STRIDE(i, n) y[i] = tanhf(x[i]);
}

/* dx = dy (1 - y^2) (in place is fine). */
__global__ void k_tanh_bwd(size_t n, const float *y, const float *dy, float *dx)
{
	GRID_STRIDE(i, n) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

/* y = x * s[j % ns] along the last dimension (in place is fine). */
__global__ void k_scale(size_t n, int ns, const float *s, const float *x, float *y)
{
	GRID_STRIDE(i, n) y[i] = x[i] * s[i % (size_t)ns];
}

__global__ void k_fill(size_t n, float v, float *x)
{
	GRID_STRIDE(i, n) x[i] = v;
}

/* A conv2d's shapes (layer's, as plain values for the kernels). */
struct conv_shape {
	int H, W, C, F, k, OH, OW, S, pt, pl;
};

/* col (nb * OH * OW, k * k * C) = the patches of x (nb, H, W, C): row
 * (b, oh, ow), column (kh, kw, c) is x[b, oh S - pt + kh, ow S - pl + kw, c],
 * zero outside the image. */
__global__ void k_im2col(conv_shape s, int nb, const float *__restrict__ x, float *__restrict__ col)
{
	size_t kk = (size_t)s.k * s.k * s.C;
	size_t n = (size_t)nb * s.OH * s.OW * kk;
	GRID_STRIDE(i, n)
	{
		size_t j = i % kk, p = i / kk;
		int c = (int)(j % s.C), kw = (int)(j / s.C % s.k), kh = (int)(j / s.C / s.k);
		int ow = (int)(p % s.OW), oh = (int)(p / s.OW % s.OH);
		size_t b = p / s.OW / s.OH;
		int ih = oh * s.S - s.pt + kh, iw = ow * s.S - s.pl + kw;
		col[i] = ih >= 0 && ih < s.H && iw >= 0 && iw < s.W ? x[((b * s.H + ih) * s.W + iw) * s.C + c]
		                                                    : 0.0f;
	}
}

/* dx (nb, H, W, C) = the sum of the patch gradients dcol over every patch
 * that covers each input pixel (im2col's transpose), gathered per pixel. */
__global__ void k_col2im(conv_shape s, int nb, const float *__restrict__ dcol, float *__restrict__ dx)
{
	size_t kk = (size_t)s.k * s.k * s.C;
	size_t n = (size_t)nb * s.H * s.W * s.C;
	GRID_STRIDE(i, n)
	{
		int c = (int)(i % s.C), iw = (int)(i / s.C % s.W), ih = (int)(i / s.C / s.W % s.H);
		size_t b = i / s.C / s.W / s.H;
		float acc = 0.0f;
		for (int kh = 0; kh < s.k; kh++) {
			int t = ih + s.pt - kh;
			if (t < 0 || t % s.S)
				continue;
			int oh = t / s.S;
			if (oh >= s.OH)
				continue;
			for (int kw = 0; kw < s.k; kw++) {
				int u = iw + s.pl - kw;
				if (u < 0 || u % s.S)
					continue;
				int ow = u / s.S;
				if (ow >= s.OW)
					continue;
				acc += dcol[((b * s.OH + oh) * s.OW + ow) * kk +
				            ((size_t)kh * s.k + kw) * s.C + c];
			}
		}
		dx[i] = acc;
	}
}

/* q (rows, A) = V + Adv[a] - mean(Adv) from the fused head (rows, A+1). */
__global__ void k_dueling_q(int rows, int A, const float *__restrict__ head, float *__restrict__ q)
{
	GRID_STRIDE(r, (size_t)rows)
	{
		const float *row = head + r * (size_t)(A + 1);
		double sum = 0;
		for (int a = 0; a < A; a++)
			sum += row[a];
		float base = (float)((double)row[A] - sum / A);
		for (int a = 0; a < A; a++)
			q[r * (size_t)A + a] = row[a] + base;
	}
}

/* The fused head's gradient from dq (rows, A): dAdv[a] = dq[a] - mean(dq),
 * dV = sum(dq). */
__global__ void k_dueling_grad(int rows, int A, const float *__restrict__ dq, float *__restrict__ dhead)
{
	GRID_STRIDE(r, (size_t)rows)
	{
		const float *d = dq + r * (size_t)A;
		float *row = dhead + r * (size_t)(A + 1);
		double sum = 0;
		for (int a = 0; a < A; a++)
			sum += d[a];
		float mean = (float)(sum / A);
		for (int a = 0; a < A; a++)
			row[a] = d[a] - mean;
		row[A] = (float)sum;
	}
}

/* One optimizer step over n parameters: optim.c's kernels, the same
 * formulas in the same order (nvcc -fmad=false: no fused multiply-adds,
 * IEEE square roots and divisions), so that the device's step is the
 * host's. */
__global__ void k_update(size_t n, seed_model_update k, float *__restrict__ p, const float *__restrict__ g,
                         float *__restrict__ s0, float *__restrict__ s1)
{
	GRID_STRIDE(i, n)
	{
		const float pi = k.keep * p[i];
		const float gi = g[i] + k.l2 * pi;
		if (k.rule == 0) { /* Adam */
			const float mi = k.a * s0[i] + k.b * gi;
			const float vi = k.a2 * s1[i] + k.b2 * (gi * gi);
			s0[i] = mi;
			s1[i] = vi;
			p[i] = pi - k.step * (mi / (sqrtf(vi) / k.bc2s + k.eps));
		} else if (k.rule == 1) { /* RMSProp, TF1 */
			const float ms = s0[i] + k.b * (gi * gi - s0[i]);
			s0[i] = ms;
			if (k.nslots > 1) {
				const float u = k.mu * s1[i] + k.step * gi / sqrtf(ms + k.eps);
				s1[i] = u;
				p[i] = pi - u;
			} else
				p[i] = pi - k.step * gi / sqrtf(ms + k.eps);
		} else { /* RMSProp, PyTorch */
			const float ms = k.a * s0[i] + k.b * (gi * gi);
			s0[i] = ms;
			if (k.nslots > 1) {
				const float u = k.mu * s1[i] + gi / (sqrtf(ms) + k.eps);
				s1[i] = u;
				p[i] = pi - k.step * u;
			} else
				p[i] = pi - k.step * (gi / (sqrtf(ms) + k.eps));
		}
	}
}

/* partial[block] = the sum of g^2 over the block's share, in double. */
__global__ void k_sumsq(size_t n, const float *__restrict__ g, double *__restrict__ partial)
{
	__shared__ double part[256];
	double acc = 0;
	GRID_STRIDE(i, n) acc += (double)g[i] * (double)g[i];
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if ((int)threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = part[0];
}

__global__ void k_mul(size_t n, float s, float *x)
{
	GRID_STRIDE(i, n) x[i] *= s;
}

/* The core's input (rows, I) from the torso's output x (rows, D): x, then
 * the previous reward clipped to [-1, 1] (rew NULL: 0), then the previous
 * action's one-hot (act NULL, or out of 0..A-1: all zeros), as cpu.c. */
__global__ void k_core_input(size_t rows, int D, int I, int with_reward, int with_action,
                             const float *__restrict__ x, const float *__restrict__ rew,
                             const int32_t *__restrict__ act, float *__restrict__ xc)
{
	size_t n = rows * (size_t)I;
	GRID_STRIDE(e, n)
	{
		size_t r = e / (size_t)I;
		int k = (int)(e % (size_t)I);
		float v;
		if (k < D)
			v = x[r * (size_t)D + k];
		else if (with_reward && k == D) {
			float w = rew ? rew[r] : 0.0f;
			v = w > 1.0f ? 1.0f : w < -1.0f ? -1.0f : w;
		} else {
			int a = k - D - with_reward, pa = act ? act[r] : -1;
			v = with_action && a == pa ? 1.0f : 0.0f;
		}
		xc[e] = v;
	}
}

/* h0, c0 (B, H) from state0 (B, 2H): h then c per row; NULL: zeros. */
__global__ void k_state_split(int B, int H, const float *__restrict__ st, float *__restrict__ h0,
                              float *__restrict__ c0)
{
	size_t n = (size_t)B * H;
	GRID_STRIDE(e, n)
	{
		size_t b = e / (size_t)H, j = e % (size_t)H;
		h0[e] = st ? st[b * 2 * H + j] : 0.0f;
		c0[e] = st ? st[b * 2 * H + H + j] : 0.0f;
	}
}

/* state (B, 2H) = h then c per row. */
__global__ void k_state_join(int B, int H, const float *__restrict__ h, const float *__restrict__ c,
                             float *__restrict__ st)
{
	size_t n = (size_t)B * H;
	GRID_STRIDE(e, n)
	{
		size_t b = e / (size_t)H, j = e % (size_t)H;
		st[b * 2 * H + j] = h[e];
		st[b * 2 * H + H + j] = c[e];
	}
}

/* Step t's h_{t-1}, c_{t-1} (B, H): the previous step's (or h0, c0), zero
 * for a row reset before step t (done may be NULL). */
__global__ void k_lstm_prev(int B, int H, const float *__restrict__ hprev, const float *__restrict__ cprev,
                            const uint8_t *__restrict__ done, float *__restrict__ hp, float *__restrict__ cp)
{
	size_t n = (size_t)B * H;
	GRID_STRIDE(e, n)
	{
		bool z = done && done[e / (size_t)H];
		hp[e] = z ? 0.0f : hprev[e];
		cp[e] = z ? 0.0f : cprev[e];
	}
}

__device__ static float sigmoid_f(float z)
{
	return 1.0f / (1.0f + expf(-z));
}

/* The gates of step t from z (B, 4H, in place: z becomes i, f, g, o), c_t
 * and h_t (lstm.c's forward loop). */
__global__ void k_lstm_gates(int B, int H, float *__restrict__ z, const float *__restrict__ cp,
                             float *__restrict__ ct, float *__restrict__ ht)
{
	size_t n = (size_t)B * H;
	GRID_STRIDE(e, n)
	{
		size_t b = e / (size_t)H, j = e % (size_t)H;
		float *zr = z + b * 4 * H;
		float ig = sigmoid_f(zr[j]), fg = sigmoid_f(zr[H + j]);
		float gg = tanhf(zr[2 * H + j]), og = sigmoid_f(zr[3 * H + j]);
		zr[j] = ig;
		zr[H + j] = fg;
		zr[2 * H + j] = gg;
		zr[3 * H + j] = og;
		float c = fg * cp[e] + ig * gg;
		ct[e] = c;
		ht[e] = og * tanhf(c);
	}
}

/* Step t's gate gradients dz (B, 4H) from the gates a, c_{t-1}, c_t, the
 * output's gradient dh (may be NULL) and the carried dhn, dcn; dcn becomes
 * the carry to step t - 1 (lstm.c's backward loop). */
__global__ void k_lstm_bwd(int B, int H, const float *__restrict__ a, const float *__restrict__ cp,
                           const float *__restrict__ ct, const float *__restrict__ dh,
                           const float *__restrict__ dhn, float *__restrict__ dcn, float *__restrict__ dz)
{
	size_t n = (size_t)B * H;
	GRID_STRIDE(e, n)
	{
		size_t b = e / (size_t)H, j = e % (size_t)H;
		const float *ar = a + b * 4 * H;
		float *d = dz + b * 4 * H;
		float ig = ar[j], fg = ar[H + j], gg = ar[2 * H + j], og = ar[3 * H + j];
		float tc = tanhf(ct[e]);
		float dhv = dhn[e] + (dh ? dh[e] : 0.0f);
		float dcv = dcn[e] + dhv * og * (1.0f - tc * tc);
		d[j] = dcv * gg * ig * (1.0f - ig);
		d[H + j] = dcv * cp[e] * fg * (1.0f - fg);
		d[2 * H + j] = dcv * ig * (1.0f - gg * gg);
		d[3 * H + j] = dhv * tc * og * (1.0f - og);
		dcn[e] = dcv * fg;
	}
}

/* No gradient across a reset: zero the carried dh and dc of the rows reset
 * before step t. */
__global__ void k_lstm_cut(int B, int H, const uint8_t *__restrict__ done, float *__restrict__ dhn,
                           float *__restrict__ dcn)
{
	size_t n = (size_t)B * H;
	GRID_STRIDE(e, n)
	{
		if (done[e / (size_t)H]) {
			dhn[e] = 0.0f;
			dcn[e] = 0.0f;
		}
	}
}

/* ---- state -------------------------------------------------------------- */

static void cuda_destroy(nn_backend **bp)
{
	if (!bp || !*bp)
		return;
	nn_backend *be = *bp;
	cudaSetDevice(be->dev);
	if (be->st)
		cudaStreamSynchronize(be->st);
	for (int i = be->nlayers - 1; be->out && i >= 0; i--)
		if (be->out[i] != (i ? be->out[i - 1] : be->input))
			cudaFree(be->out[i]);
	for (int i = 0; be->scale && i < be->nlayers; i++)
		cudaFree(be->scale[i]);
	free(be->out);
	free(be->scale);
	cudaFree(be->params);
	cudaFree(be->grads);
	cudaFree(be->obs);
	cudaFree(be->input);
	cudaFree(be->gbuf[0]);
	cudaFree(be->gbuf[1]);
	cudaFree(be->col);
	cudaFree(be->ones);
	cudaFree(be->dhead);
	cudaFree(be->q);
	cudaFreeHost(be->host);
	cudaFree(be->ostate);
	cudaFree(be->partial);
	cudaFreeHost(be->hpartial);
	float *core[] = {be->xc,  be->dxc,   be->hc, be->dhc, be->st0, be->h0, be->c0,  be->hT, be->cT,
	                 be->rew, be->gates, be->hp, be->cp,  be->cc,  be->dz, be->dhn, be->dcn};
	for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
		cudaFree(core[i]);
	cudaFree(be->act);
	cudaFree(be->reset);
	if (be->blas)
		cublasDestroy(be->blas);
	if (be->st)
		cudaStreamDestroy(be->st);
	free(be);
	*bp = NULL;
}

/* The images of a conv2d's chunk (at least one, at most B). */
static int col_images(const layer *L, int B)
{
	size_t per = (size_t)L->OH * L->OW * (size_t)(L->k * L->k * L->C);
	size_t n = COL_FLOATS / per;
	if (n < 1)
		n = 1;
	return n < (size_t)B ? (int)n : B;
}

/* cudaMalloc of n floats into *p, zeroed; false (and the runtime's words
 * in err) when the device has no room. */
static bool dalloc(float **p, size_t n, int dev, seed_err *err)
{
	cudaError_t e = cudaMalloc((void **)p, n * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMemset(*p, 0, n * sizeof(float));
	if (e != cudaSuccess) {
		*p = NULL;
		seed_err_set(err, -ENOMEM, "device cuda:%d: allocating %zu bytes: %s", dev, n * sizeof(float),
		             cudaGetErrorString(e));
		return false;
	}
	return true;
}

extern "C" int nn_cuda_probe(int ordinal, const char *name, seed_err *err)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess)
		return seed_err_set(err, -ENODEV, "device '%s': no CUDA device: cudaGetDeviceCount: %s", name,
		                    cudaGetErrorString(e));
	if (n == 0)
		return seed_err_set(err, -ENODEV, "device '%s': no CUDA device present", name);
	if (ordinal >= n)
		return seed_err_set(err, -ENODEV,
		                    "device '%s': only %d CUDA device%s present (cuda:0 to cuda:%d)", name, n,
		                    n == 1 ? " is" : "s are", n - 1);
	return 0;
}

static int cuda_create(nn_backend **out, const seed_model *m, seed_err *err)
{
	/* The heads of continuous control (issue 33) are the CPU's alone so
	 * far: refused before anything is allocated on the device. */
	if (m->policy.kind != SEED_POLICY_CATEGORICAL)
		return seed_err_set(err, -ENOTSUP,
		                    "device cuda:%d: a gaussian policy head runs on the CPU only "
		                    "(\"policy\": {\"type\": \"gaussian\"}: use device cpu)",
		                    m->ordinal);
	if (m->ncritic)
		return seed_err_set(err, -ENOTSUP,
		                    "device cuda:%d: a critic torso runs on the CPU only (\"critic_torso\": "
		                    "use device cpu)",
		                    m->ordinal);
	if (m->norm.on)
		return seed_err_set(err, -ENOTSUP,
		                    "device cuda:%d: observation normalisation runs on the CPU only "
		                    "(\"obs_norm\": use device cpu)",
		                    m->ordinal);
	cudaError_t e = cudaSetDevice(m->ordinal);
	if (e != cudaSuccess)
		return seed_err_set(err, -ENODEV, "device cuda:%d: cudaSetDevice: %s", m->ordinal,
		                    cudaGetErrorString(e));
	nn_backend *be = (nn_backend *)seed_xcalloc(1, sizeof *be);
	be->dev = m->ordinal;
	be->nlayers = m->nlayers;
	be->max_batch = m->max_batch;
	size_t B = (size_t)m->max_batch, widest = m->obs_numel, col = 0;
	int A = m->A, rc = -ENOMEM;
	cublasStatus_t bs;
	if ((e = cudaStreamCreateWithFlags(&be->st, cudaStreamNonBlocking)) != cudaSuccess) {
		rc = seed_err_set(err, -ENODEV, "device cuda:%d: cudaStreamCreate: %s", m->ordinal,
		                  cudaGetErrorString(e));
		goto fail;
	}
	if ((bs = cublasCreate(&be->blas)) != CUBLAS_STATUS_SUCCESS) {
		be->blas = NULL;
		rc = seed_err_set(err, -ENODEV, "device cuda:%d: cublasCreate: %s", m->ordinal,
		                  cublasGetStatusString(bs));
		goto fail;
	}
	cublasSetStream(be->blas, be->st);
	/* FP32 products, as the CPU's (no TF32 tensor cores). */
	cublasSetMathMode(be->blas, CUBLAS_DEFAULT_MATH);
	be->out = (float **)seed_xcalloc((size_t)m->nlayers, sizeof *be->out);
	be->scale = (float **)seed_xcalloc((size_t)m->nlayers, sizeof *be->scale);
	if (!dalloc(&be->params, m->nparams, be->dev, err) || !dalloc(&be->grads, m->nparams, be->dev, err) ||
	    !dalloc(&be->input, B * m->obs_numel, be->dev, err))
		goto fail;
	if (m->obs_dtype == SEED_DTYPE_U8) {
		if ((e = cudaMalloc((void **)&be->obs, B * m->obs_numel)) != cudaSuccess) {
			be->obs = NULL;
			rc = seed_err_set(err, -ENOMEM, "device cuda:%d: allocating %zu bytes: %s", be->dev,
			                  B * m->obs_numel, cudaGetErrorString(e));
			goto fail;
		}
	}
	for (int i = 0; i < m->nlayers; i++) {
		const layer *L = &m->layers[i];
		float *prev = i ? be->out[i - 1] : be->input;
		if (L->kind == L_FLATTEN)
			be->out[i] = prev;
		else if (!dalloc(&be->out[i], B * L->numel_out, be->dev, err))
			goto fail;
		if (L->kind == L_SCALE) {
			if (!dalloc(&be->scale[i], (size_t)L->nscale, be->dev, err))
				goto fail;
			if ((e = cudaMemcpy(be->scale[i], L->scale, (size_t)L->nscale * sizeof(float),
			                    cudaMemcpyHostToDevice)) != cudaSuccess) {
				rc = seed_err_set(err, -EIO, "device cuda:%d: cudaMemcpy: %s", be->dev,
				                  cudaGetErrorString(e));
				goto fail;
			}
		}
		if (L->kind == L_CONV2D) {
			size_t c = (size_t)col_images(L, m->max_batch) * L->OH * L->OW *
			           (size_t)(L->k * L->k * L->C);
			if (c > col)
				col = c;
			if (B * L->OH * L->OW > be->nones)
				be->nones = B * L->OH * L->OW;
		}
		if (L->numel_out > widest)
			widest = L->numel_out;
	}
	if (B > be->nones)
		be->nones = B;
	if (!dalloc(&be->ones, be->nones, be->dev, err))
		goto fail;
	k_fill<<<blocks(be->nones, 256), 256>>>(be->nones, 1.0f, be->ones);
	if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
		rc = seed_err_set(err, -EIO, "device cuda:%d: filling a buffer: %s", be->dev,
		                  cudaGetErrorString(e));
		goto fail;
	}
	if (m->core.H) {
		/* T * B <= max_batch rows whatever the split. */
		size_t I = (size_t)m->core.I, H = (size_t)m->core.H;
		if (!dalloc(&be->xc, B * I, be->dev, err) || !dalloc(&be->dxc, B * I, be->dev, err) ||
		    !dalloc(&be->hc, B * H, be->dev, err) || !dalloc(&be->dhc, B * H, be->dev, err) ||
		    !dalloc(&be->st0, B * 2 * H, be->dev, err) || !dalloc(&be->h0, B * H, be->dev, err) ||
		    !dalloc(&be->c0, B * H, be->dev, err) || !dalloc(&be->hT, B * H, be->dev, err) ||
		    !dalloc(&be->cT, B * H, be->dev, err) || !dalloc(&be->rew, B, be->dev, err) ||
		    !dalloc(&be->gates, B * 4 * H, be->dev, err) || !dalloc(&be->hp, B * H, be->dev, err) ||
		    !dalloc(&be->cp, B * H, be->dev, err) || !dalloc(&be->cc, B * H, be->dev, err) ||
		    !dalloc(&be->dz, B * 4 * H, be->dev, err) || !dalloc(&be->dhn, B * H, be->dev, err) ||
		    !dalloc(&be->dcn, B * H, be->dev, err))
			goto fail;
		if ((e = cudaMalloc((void **)&be->act, B * sizeof(int32_t))) != cudaSuccess ||
		    (e = cudaMalloc((void **)&be->reset, B)) != cudaSuccess) {
			rc = seed_err_set(err, -ENOMEM, "device cuda:%d: allocating the core's buffers: %s",
			                  be->dev, cudaGetErrorString(e));
			goto fail;
		}
	}
	if (!dalloc(&be->gbuf[0], B * widest, be->dev, err) ||
	    !dalloc(&be->gbuf[1], B * widest, be->dev, err) ||
	    (col && !dalloc(&be->col, col, be->dev, err)) ||
	    !dalloc(&be->dhead, B * (size_t)(A + 1), be->dev, err) ||
	    !dalloc(&be->q, B * (size_t)A, be->dev, err))
		goto fail;
	if ((e = cudaMalloc((void **)&be->partial, SUMSQ_BLOCKS * sizeof(double))) != cudaSuccess ||
	    (e = cudaMallocHost((void **)&be->hpartial, SUMSQ_BLOCKS * sizeof(double))) != cudaSuccess ||
	    (e = cudaMallocHost((void **)&be->host, B * (size_t)(A + 1) * sizeof(float))) != cudaSuccess) {
		rc = seed_err_set(err, -ENOMEM, "device cuda:%d: cudaMallocHost: %s", be->dev,
		                  cudaGetErrorString(e));
		goto fail;
	}
	/* The zeroing of the buffers (cudaMemset, the legacy stream) done
	 * before the model's own stream, which does not wait for it, uses them. */
	if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
		rc = seed_err_set(err, -EIO, "device cuda:%d: %s", be->dev, cudaGetErrorString(e));
		goto fail;
	}
	*out = be;
	return 0;
fail:
	cuda_destroy(&be);
	return rc;
}

/* ---- slabs -------------------------------------------------------------- */

/* The device's copy of a host pointer into the parameter (or gradient)
 * slab. */
static float *dparam(const seed_model *m, const nn_backend *be, const float *host)
{
	return be->params + (host - m->params);
}

static float *dgrad(const seed_model *m, const nn_backend *be, const float *host)
{
	return be->grads + (host - m->grads);
}

/* Push to the device what the host changed: the parameters, and with
 * grads the gradients too. */
static int push(seed_model *m, bool grads)
{
	nn_backend *be = m->be;
	size_t bytes = m->nparams * sizeof(float);
	if (m->params_at == SLAB_HOST) {
		CK(cudaMemcpyAsync(be->params, m->params, bytes, cudaMemcpyHostToDevice, be->st));
		m->params_at = SLAB_SYNCED;
	}
	if (grads && m->grads_at == SLAB_HOST) {
		CK(cudaMemcpyAsync(be->grads, m->grads, bytes, cudaMemcpyHostToDevice, be->st));
		m->grads_at = SLAB_SYNCED;
	}
	return 0;
}

static void cuda_pull(seed_model *m, bool grads)
{
	nn_backend *be = m->be;
	cudaSetDevice(be->dev);
	cudaError_t e = cudaMemcpyAsync(grads ? m->grads : m->params, grads ? be->grads : be->params,
	                                m->nparams * sizeof(float), cudaMemcpyDeviceToHost, be->st);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(be->st);
	if (e != cudaSuccess)
		fprintf(stderr, "seed: CUDA: copying the %s from cuda:%d: %s\n",
		        grads ? "gradients" : "parameters", be->dev, cudaGetErrorString(e));
}

static void cuda_zero_grad(seed_model *m)
{
	nn_backend *be = m->be;
	cudaSetDevice(be->dev);
	cudaError_t e = cudaMemsetAsync(be->grads, 0, m->nparams * sizeof(float), be->st);
	if (e != cudaSuccess)
		fprintf(stderr, "seed: CUDA: zeroing the gradients on cuda:%d: %s\n", be->dev,
		        cudaGetErrorString(e));
}

/* ---- forward ------------------------------------------------------------ */

/* y (rows, n_out) = x (rows, n_in) W^T, W (n_out, n_in): column-major, y^T =
 * W x^T with W^T as cuBLAS's A. */
static int gemm_fwd(nn_backend *be, int rows, int n_in, int n_out, const float *x, const float *w, float *y)
{
	const float one = 1.0f, zero = 0.0f;
	CB(cublasSgemm(be->blas, CUBLAS_OP_T, CUBLAS_OP_N, n_out, rows, n_in, &one, w, n_in, x, n_in, &zero,
	               y, n_out));
	return 0;
}

/* dW (n_out, n_in) += dy^T x (column-major: dW^T += x^T dy). */
static int gemm_dw(nn_backend *be, int rows, int n_in, int n_out, const float *dy, const float *x, float *dw)
{
	const float one = 1.0f;
	CB(cublasSgemm(be->blas, CUBLAS_OP_N, CUBLAS_OP_T, n_in, n_out, rows, &one, x, n_in, dy, n_out, &one,
	               dw, n_in));
	return 0;
}

/* dx (rows, n_in) = dy (rows, n_out) W (column-major: dx^T = W^T dy^T). */
static int gemm_dx(nn_backend *be, int rows, int n_in, int n_out, const float *dy, const float *w, float *dx)
{
	const float one = 1.0f, zero = 0.0f;
	CB(cublasSgemm(be->blas, CUBLAS_OP_N, CUBLAS_OP_N, n_in, rows, n_out, &one, w, n_in, dy, n_out, &zero,
	               dx, n_in));
	return 0;
}

/* db (cols) += the column sums of dy (rows, cols): dy^T ones, column-major
 * dy^T is (cols x rows) with leading dimension cols. */
static int col_sum(nn_backend *be, int rows, int cols, const float *dy, float *db)
{
	const float one = 1.0f;
	CB(cublasSgemv(be->blas, CUBLAS_OP_N, cols, rows, &one, dy, cols, be->ones, 1, &one, db, 1));
	return 0;
}

static conv_shape shape_of(const layer *L)
{
	conv_shape s = {L->H, L->W, L->C, L->F, L->k, L->OH, L->OW, L->S, L->pt, L->pl};
	return s;
}

/* Layer i on x (B, numel_in) into y; relu: the relu after it too. */
static int layer_forward(const seed_model *m, nn_backend *be, int i, int B, const float *x, float *y,
                         bool relu)
{
	const layer *L = &m->layers[i];
	size_t n = (size_t)B * L->numel_out;
	int rc;
	switch (L->kind) {
	case L_LINEAR:
		if ((rc = gemm_fwd(be, B, L->n_in, L->n_out, x, dparam(m, be, L->w), y)) < 0)
			return rc;
		k_bias_act<<<blocks(n, 256), 256, 0, be->st>>>((size_t)B, L->n_out, y, dparam(m, be, L->b),
		                                               relu);
		break;
	case L_CONV2D: {
		conv_shape s = shape_of(L);
		int step = col_images(L, B), per = L->OH * L->OW, kk = L->k * L->k * L->C;
		for (int b0 = 0; b0 < B; b0 += step) {
			int nb = B - b0 < step ? B - b0 : step;
			size_t cn = (size_t)nb * per * kk;
			k_im2col<<<blocks(cn, 256), 256, 0, be->st>>>(s, nb, x + (size_t)b0 * L->numel_in,
			                                              be->col);
			LAUNCHED();
			if ((rc = gemm_fwd(be, nb * per, kk, L->F, be->col, dparam(m, be, L->w),
			                   y + (size_t)b0 * L->numel_out)) < 0)
				return rc;
		}
		k_bias_act<<<blocks(n, 256), 256, 0, be->st>>>((size_t)B * per, L->F, y, dparam(m, be, L->b),
		                                               relu);
		break;
	}
	case L_RELU:
		k_relu_fwd<<<blocks(n, 256), 256, 0, be->st>>>(n, x, y);
		break;
	case L_TANH:
		k_tanh_fwd<<<blocks(n, 256), 256, 0, be->st>>>(n, x, y);
		break;
	case L_SCALE:
		k_scale<<<blocks(n, 256), 256, 0, be->st>>>(n, L->nscale, be->scale[i], x, y);
		break;
	case L_FLATTEN:
		return 0; /* y is x */
	}
	LAUNCHED();
	return 0;
}

/* Whether layer i computes the relu after it too (the relu's buffer gets
 * the result; its own, which no backward reads, is not written). */
static bool fuses_relu(const seed_model *m, int i)
{
	const layer *L = &m->layers[i];
	return i + 1 < m->nlayers && m->layers[i + 1].kind == L_RELU &&
	       (L->kind == L_CONV2D || L->kind == L_LINEAR);
}

/* The core over the torso's output x (T*B, D), as cpu.c's core_forward:
 * its input (x, the clipped previous reward, the previous action's
 * one-hot), the LSTM from s->state0 through time (lstm.c's forward, the
 * steps' products through cuBLAS), and s->state_out queued for the host
 * (the caller synchronises).  h (T*B, H) is left in be->hc. */
static int core_forward(seed_model *m, nn_backend *be, const seed_model_seq *s, const float *x)
{
	const model_core *c = &m->core;
	int T = s->T, B = s->B, H = c->H, I = c->I, G = 4 * c->H;
	size_t rows = (size_t)T * (size_t)B, bh = (size_t)B * (size_t)H, bg = (size_t)B * (size_t)G;
	const float one = 1.0f, zero = 0.0f;
	const float *rew = NULL;
	const int32_t *act = NULL;
	if (c->prev_reward && s->prev_reward) {
		CK(cudaMemcpyAsync(be->rew, s->prev_reward, rows * sizeof(float), cudaMemcpyHostToDevice,
		                   be->st));
		rew = be->rew;
	}
	if (c->prev_action && s->prev_action) {
		CK(cudaMemcpyAsync(be->act, s->prev_action, rows * sizeof(int32_t), cudaMemcpyHostToDevice,
		                   be->st));
		act = be->act;
	}
	k_core_input<<<blocks(rows * I, 256), 256, 0, be->st>>>(rows, c->D, I, c->prev_reward, c->prev_action,
	                                                        x, rew, act, be->xc);
	LAUNCHED();
	be->has_reset = s->reset != NULL;
	if (s->reset)
		CK(cudaMemcpyAsync(be->reset, s->reset, rows, cudaMemcpyHostToDevice, be->st));
	if (s->state0)
		CK(cudaMemcpyAsync(be->st0, s->state0, bh * 2 * sizeof(float), cudaMemcpyHostToDevice,
		                   be->st));
	k_state_split<<<blocks(bh, 256), 256, 0, be->st>>>(B, H, s->state0 ? be->st0 : NULL, be->h0, be->c0);
	LAUNCHED();
	/* Z = X W + b for every step at once, then step by step Z_t += h_{t-1} U
	 * and the gates. */
	const float *w = dparam(m, be, c->w), *u = dparam(m, be, c->u);
	CB(cublasSgemm(be->blas, CUBLAS_OP_N, CUBLAS_OP_N, G, (int)rows, I, &one, w, G, be->xc, I, &zero,
	               be->gates, G));
	k_bias_act<<<blocks(rows * G, 256), 256, 0, be->st>>>(rows, G, be->gates, dparam(m, be, c->b), 0);
	LAUNCHED();
	for (int t = 0; t < T; t++) {
		const float *hprev = t ? be->hc + (size_t)(t - 1) * bh : be->h0;
		const float *cprev = t ? be->cc + (size_t)(t - 1) * bh : be->c0;
		float *hp = be->hp + (size_t)t * bh, *cp = be->cp + (size_t)t * bh,
		      *gt = be->gates + (size_t)t * bg;
		k_lstm_prev<<<blocks(bh, 256), 256, 0, be->st>>>(
		    B, H, hprev, cprev, s->reset ? be->reset + (size_t)t * B : NULL, hp, cp);
		LAUNCHED();
		CB(cublasSgemm(be->blas, CUBLAS_OP_N, CUBLAS_OP_N, G, B, H, &one, u, G, hp, H, &one, gt, G));
		k_lstm_gates<<<blocks(bh, 256), 256, 0, be->st>>>(B, H, gt, cp, be->cc + (size_t)t * bh,
		                                                  be->hc + (size_t)t * bh);
		LAUNCHED();
	}
	if (s->state_out) {
		k_state_join<<<blocks(bh, 256), 256, 0, be->st>>>(B, H, be->hc + (size_t)(T - 1) * bh,
		                                                  be->cc + (size_t)(T - 1) * bh, be->st0);
		LAUNCHED();
		CK(cudaMemcpyAsync(s->state_out, be->st0, bh * 2 * sizeof(float), cudaMemcpyDeviceToHost,
		                   be->st));
	}
	return 0;
}

static int cuda_forward(seed_model *m, const seed_model_seq *s, float *logits, float *values, float *q)
{
	nn_backend *be = m->be;
	int B = s->T * s->B, A = m->A, rc;
	CK(cudaSetDevice(be->dev));
	if ((rc = push(m, false)) < 0)
		return rc;
	size_t n = (size_t)B * m->obs_numel;
	if (m->obs_dtype == SEED_DTYPE_U8) {
		CK(cudaMemcpyAsync(be->obs, s->obs, n, cudaMemcpyHostToDevice, be->st));
		k_u8_to_f32<<<blocks(n, 256), 256, 0, be->st>>>(n, be->obs, be->input);
		LAUNCHED();
	} else
		CK(cudaMemcpyAsync(be->input, s->obs, n * sizeof(float), cudaMemcpyHostToDevice, be->st));
	const float *x = be->input;
	for (int i = 0; i < m->nlayers - 1; i++) {
		bool relu = fuses_relu(m, i);
		if ((rc = layer_forward(m, be, i, B, x, be->out[i + relu], relu)) < 0)
			return rc;
		i += relu;
		x = be->out[i];
	}
	if (m->core.H) {
		if ((rc = core_forward(m, be, s, x)) < 0)
			return rc;
		x = be->hc;
	}
	float *head = be->out[m->nlayers - 1];
	if ((rc = layer_forward(m, be, m->nlayers - 1, B, x, head, false)) < 0)
		return rc;
	if (m->head == SEED_HEAD_DUELING) {
		k_dueling_q<<<blocks((size_t)B, 128), 128, 0, be->st>>>(B, A, head, be->q);
		LAUNCHED();
		CK(cudaMemcpyAsync(q, be->q, (size_t)B * A * sizeof(float), cudaMemcpyDeviceToHost, be->st));
		CK(cudaStreamSynchronize(be->st));
		return 0;
	}
	CK(cudaMemcpyAsync(be->host, head, (size_t)B * (A + 1) * sizeof(float), cudaMemcpyDeviceToHost,
	                   be->st));
	CK(cudaStreamSynchronize(be->st));
	for (int b = 0; b < B; b++) {
		const float *row = be->host + (size_t)b * (A + 1);
		if (logits)
			memcpy(logits + (size_t)b * A, row, (size_t)A * sizeof *logits);
		if (values)
			values[b] = row[A];
	}
	return 0;
}

/* ---- backward ----------------------------------------------------------- */

/* Given dy (B, numel_out) and layer i's input x, add the parameter
 * gradients and, when dx is not NULL, write dL/dx (may be dy for the
 * element-wise layers). */
static int layer_backward(const seed_model *m, nn_backend *be, int i, int B, const float *x, const float *dy,
                          float *dx)
{
	const layer *L = &m->layers[i];
	const float *y = be->out[i];
	size_t n = (size_t)B * L->numel_out;
	int rc;
	switch (L->kind) {
	case L_LINEAR:
		if ((rc = col_sum(be, B, L->n_out, dy, dgrad(m, be, L->db))) < 0)
			return rc;
		if ((rc = gemm_dw(be, B, L->n_in, L->n_out, dy, x, dgrad(m, be, L->dw))) < 0)
			return rc;
		if (dx && (rc = gemm_dx(be, B, L->n_in, L->n_out, dy, dparam(m, be, L->w), dx)) < 0)
			return rc;
		return 0;
	case L_CONV2D: {
		conv_shape s = shape_of(L);
		int step = col_images(L, B), per = L->OH * L->OW, kk = L->k * L->k * L->C;
		if ((rc = col_sum(be, B * per, L->F, dy, dgrad(m, be, L->db))) < 0)
			return rc;
		for (int b0 = 0; b0 < B; b0 += step) {
			int nb = B - b0 < step ? B - b0 : step;
			size_t cn = (size_t)nb * per * kk;
			const float *dyc = dy + (size_t)b0 * L->numel_out;
			/* dW (F, kk) += dy^T col, then col = dcol = dy W. */
			k_im2col<<<blocks(cn, 256), 256, 0, be->st>>>(s, nb, x + (size_t)b0 * L->numel_in,
			                                              be->col);
			LAUNCHED();
			if ((rc = gemm_dw(be, nb * per, kk, L->F, dyc, be->col, dgrad(m, be, L->dw))) < 0)
				return rc;
			if (!dx)
				continue;
			if ((rc = gemm_dx(be, nb * per, kk, L->F, dyc, dparam(m, be, L->w), be->col)) < 0)
				return rc;
			size_t xn = (size_t)nb * L->numel_in;
			k_col2im<<<blocks(xn, 256), 256, 0, be->st>>>(s, nb, be->col,
			                                              dx + (size_t)b0 * L->numel_in);
			LAUNCHED();
		}
		return 0;
	}
	case L_RELU:
		if (dx)
			k_relu_bwd<<<blocks(n, 256), 256, 0, be->st>>>(n, y, dy, dx);
		break;
	case L_TANH:
		if (dx)
			k_tanh_bwd<<<blocks(n, 256), 256, 0, be->st>>>(n, y, dy, dx);
		break;
	case L_SCALE:
		if (dx)
			k_scale<<<blocks(n, 256), 256, 0, be->st>>>(n, L->nscale, be->scale[i], dy, dx);
		break;
	case L_FLATTEN:
		if (dx && dx != dy)
			CK(cudaMemcpyAsync(dx, dy, n * sizeof *dx, cudaMemcpyDeviceToDevice, be->st));
		return 0;
	}
	LAUNCHED();
	return 0;
}

/* Backward through layers top..0 from g, the gradient of layer top's output
 * (be->dhead, or gbuf[0] below a core), down to the first layer with
 * parameters (its input gradient is not needed), ping-ponging between the
 * gradient buffers. */
static int backward_layers(const seed_model *m, nn_backend *be, int B, int top, float *g)
{
	int first = 0, rc;
	while (first <= top && m->layers[first].kind != L_LINEAR && m->layers[first].kind != L_CONV2D)
		first++;
	for (int i = top; i >= first; i--) {
		const layer *L = &m->layers[i];
		const float *x = i > 0 ? be->out[i - 1] : be->input;
		float *dx = NULL;
		if (i > first) {
			if (L->kind == L_RELU || L->kind == L_TANH || L->kind == L_FLATTEN ||
			    L->kind == L_SCALE)
				dx = g;
			else
				dx = g == be->gbuf[0] ? be->gbuf[1] : be->gbuf[0];
		}
		if ((rc = layer_backward(m, be, i, B, x, g, dx)) < 0)
			return rc;
		g = dx;
	}
	return 0;
}

/* With a core: the head (its input is h), back through time (lstm.c's
 * backward: no gradient into state0 nor across a reset), then the torso
 * from its share of the core's input gradient (the first D columns). */
static int core_backward(const seed_model *m, nn_backend *be, int rows, int top)
{
	const model_core *c = &m->core;
	int T = m->last_T, B = rows / T, H = c->H, I = c->I, D = c->D, G = 4 * c->H, rc;
	size_t bh = (size_t)B * (size_t)H, bg = (size_t)B * (size_t)G;
	const float one = 1.0f, zero = 0.0f;
	if ((rc = layer_backward(m, be, top, rows, be->hc, be->dhead, be->dhc)) < 0)
		return rc;
	const float *w = dparam(m, be, c->w), *u = dparam(m, be, c->u);
	CK(cudaMemsetAsync(be->dhn, 0, bh * sizeof(float), be->st));
	CK(cudaMemsetAsync(be->dcn, 0, bh * sizeof(float), be->st));
	for (int t = T - 1; t >= 0; t--) {
		float *dz = be->dz + (size_t)t * bg;
		k_lstm_bwd<<<blocks(bh, 256), 256, 0, be->st>>>(
		    B, H, be->gates + (size_t)t * bg, be->cp + (size_t)t * bh, be->cc + (size_t)t * bh,
		    be->dhc + (size_t)t * bh, be->dhn, be->dcn, dz);
		LAUNCHED();
		CB(cublasSgemm(be->blas, CUBLAS_OP_T, CUBLAS_OP_N, H, B, G, &one, u, G, dz, G, &zero, be->dhn,
		               H));
		if (be->has_reset) {
			k_lstm_cut<<<blocks(bh, 256), 256, 0, be->st>>>(B, H, be->reset + (size_t)t * B,
			                                                be->dhn, be->dcn);
			LAUNCHED();
		}
	}
	/* dW += X^T dZ, dU += H_prev^T dZ, db += column sums of dZ. */
	CB(cublasSgemm(be->blas, CUBLAS_OP_N, CUBLAS_OP_T, G, I, rows, &one, be->dz, G, be->xc, I, &one,
	               dgrad(m, be, c->dw), G));
	CB(cublasSgemm(be->blas, CUBLAS_OP_N, CUBLAS_OP_T, G, H, rows, &one, be->dz, G, be->hp, H, &one,
	               dgrad(m, be, c->du), G));
	if ((rc = col_sum(be, rows, G, be->dz, dgrad(m, be, c->db))) < 0)
		return rc;
	if (top == 0) /* no torso: the observation feeds the core */
		return 0;
	/* dX = dZ W^T, then the torso's share, its first D columns. */
	CB(cublasSgemm(be->blas, CUBLAS_OP_T, CUBLAS_OP_N, I, rows, G, &one, w, G, be->dz, G, &zero, be->dxc,
	               I));
	CK(cudaMemcpy2DAsync(be->gbuf[0], (size_t)D * sizeof(float), be->dxc, (size_t)I * sizeof(float),
	                     (size_t)D * sizeof(float), (size_t)rows, cudaMemcpyDeviceToDevice, be->st));
	return backward_layers(m, be, rows, top - 1, be->gbuf[0]);
}

static int cuda_backward(seed_model *m, const float *dlogits, const float *dvalues, const float *dq)
{
	nn_backend *be = m->be;
	int B = m->last_B, A = m->A, top = m->nlayers - 1, rc;
	CK(cudaSetDevice(be->dev));
	if ((rc = push(m, true)) < 0)
		return rc;
	if (m->head == SEED_HEAD_DUELING) {
		if (dq) {
			CK(cudaMemcpyAsync(be->q, dq, (size_t)B * A * sizeof(float), cudaMemcpyHostToDevice,
			                   be->st));
			k_dueling_grad<<<blocks((size_t)B, 128), 128, 0, be->st>>>(B, A, be->q, be->dhead);
			LAUNCHED();
		} else
			CK(cudaMemsetAsync(be->dhead, 0, (size_t)B * (A + 1) * sizeof(float), be->st));
	} else {
		/* The pinned buffer is free: forward's outputs were read. */
		for (int b = 0; b < B; b++) {
			float *row = be->host + (size_t)b * (A + 1);
			if (dlogits)
				memcpy(row, dlogits + (size_t)b * A, (size_t)A * sizeof *row);
			else
				memset(row, 0, (size_t)A * sizeof *row);
			row[A] = dvalues ? dvalues[b] : 0.0f;
		}
		CK(cudaMemcpyAsync(be->dhead, be->host, (size_t)B * (A + 1) * sizeof(float),
		                   cudaMemcpyHostToDevice, be->st));
	}
	if (!m->core.H) {
		if ((rc = backward_layers(m, be, B, top, be->dhead)) < 0)
			return rc;
	} else if ((rc = core_backward(m, be, B, top)) < 0)
		return rc;
	/* The host's buffer is reused by the next call: wait for the copy. */
	CK(cudaStreamSynchronize(be->st));
	m->grads_at = SLAB_DEVICE;
	return 0;
}

/* ---- the optimizer -------------------------------------------------------- */

static int cuda_update(seed_model *m, const seed_model_update *u)
{
	nn_backend *be = m->be;
	size_t n = m->nparams, floats = (size_t)u->nslots * n;
	int rc;
	CK(cudaSetDevice(be->dev));
	if ((rc = push(m, true)) < 0)
		return rc;
	if (be->ostate_floats != floats) {
		cudaFree(be->ostate);
		be->ostate = NULL;
		be->ostate_floats = 0;
		CK(cudaMalloc((void **)&be->ostate, floats * sizeof(float)));
		be->ostate_floats = floats;
		m->ostate_at = SLAB_HOST;
	}
	if (m->ostate_at == SLAB_HOST)
		CK(cudaMemcpyAsync(be->ostate, m->ostate, floats * sizeof(float), cudaMemcpyHostToDevice,
		                   be->st));
	k_update<<<blocks(n, 256), 256, 0, be->st>>>(n, *u, be->params, be->grads, be->ostate,
	                                             u->nslots > 1 ? be->ostate + n : NULL);
	LAUNCHED();
	m->params_at = SLAB_DEVICE;
	m->ostate_at = SLAB_DEVICE;
	return 0;
}

static void cuda_pull_state(seed_model *m)
{
	nn_backend *be = m->be;
	cudaSetDevice(be->dev);
	cudaError_t e = cudaMemcpyAsync(m->ostate, be->ostate, be->ostate_floats * sizeof(float),
	                                cudaMemcpyDeviceToHost, be->st);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(be->st);
	if (e != cudaSuccess)
		fprintf(stderr, "seed: CUDA: copying the optimizer's state from cuda:%d: %s\n", be->dev,
		        cudaGetErrorString(e));
}

static int cuda_grad_sumsq(seed_model *m, double *sumsq)
{
	nn_backend *be = m->be;
	int rc;
	CK(cudaSetDevice(be->dev));
	if ((rc = push(m, true)) < 0)
		return rc;
	k_sumsq<<<SUMSQ_BLOCKS, 256, 0, be->st>>>(m->nparams, be->grads, be->partial);
	LAUNCHED();
	CK(cudaMemcpyAsync(be->hpartial, be->partial, SUMSQ_BLOCKS * sizeof(double), cudaMemcpyDeviceToHost,
	                   be->st));
	CK(cudaStreamSynchronize(be->st));
	double sum = 0;
	for (int i = 0; i < SUMSQ_BLOCKS; i++)
		sum += be->hpartial[i];
	*sumsq = sum;
	return 0;
}

static int cuda_scale_grads(seed_model *m, float s)
{
	nn_backend *be = m->be;
	int rc;
	CK(cudaSetDevice(be->dev));
	if ((rc = push(m, true)) < 0)
		return rc;
	k_mul<<<blocks(m->nparams, 256), 256, 0, be->st>>>(m->nparams, s, be->grads);
	LAUNCHED();
	m->grads_at = SLAB_DEVICE;
	return 0;
}

extern "C" const nn_backend_ops nn_cuda_ops = {
    "cuda",         cuda_create, cuda_destroy,    cuda_forward,    cuda_backward,    cuda_pull,
    cuda_zero_grad, cuda_update, cuda_pull_state, cuda_grad_sumsq, cuda_scale_grads,
};
