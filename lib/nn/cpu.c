/* cpu.c: the CPU compute of models: activations, forward, backward.
 *
 * This is the backend half of lib/nn (model.c is the description half): it
 * owns everything that depends on where and how the layers are computed,
 * and nothing that depends on the JSON or the parameter layout.  Its entry
 * points are nn_cpu_ops (model_internal.h); a CUDA twin (cuda.cu)
 * implements the same table over the same seed_model.
 *
 * State (one nn_backend per model, for m->max_batch rows): one buffer of
 * activations per layer of each stack (the torso with the fused head, and
 * the critic torso with the value head when the model has one: both read
 * the observations), kept from forward for backward (a flatten layer's
 * output is its input, no copy; a layer that computes the relu after it
 * writes only the relu's, see fuses_relu); ping-pong gradient buffers; the patch
 * gradients of convolutions that are not the first layer; a transposed
 * convolution weight for the kernels; with a recurrent core, its input,
 * output and their gradients, the state split into h and c, the resets of
 * the last forward and lstm.c's workspace, all for max_batch = T * B rows
 * (the torso and heads run on all T * B rows at once, the core through
 * time between them).  Nothing is allocated after nn_backend_new, so
 * forward and backward never allocate.
 *
 * Shapes in comments are per batch: (B, ...) with B rows.  Matrix products
 * go to BLAS (seed_blas_sgemm), but for linear layers with small weights,
 * which go to nn_kernels where those beat BLAS (see linear_direct);
 * element-wise work and the convolution's forward and weight gradient go to
 * nn_kernels (direct, SIMD: faster than im2col + sgemm for these narrow
 * shapes; strides and zero padding are the kernels' too); the
 * convolution's input gradient (needed only when it is not the first
 * layer) is sgemm + col2im, a few images at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "nn_kernels.h"
#include "seed/blas.h"
#include "seed/buf.h"
#include "seed/lstm.h"

/* A list of layers on the observations and their activations: the torso
 * with the fused head, or the critic torso with the value head. */
typedef struct stack {
	const layer *layers;
	int n;
	float **out;    /* [n] (B, numel_out); flatten: its input */
	nnk_conv *conv; /* [n] conv2d shapes, for the kernels */
} stack;

struct nn_backend {
	const nnk_ops *k; /* the kernels: the widest variant the CPU runs */
	float *input;     /* (B, obs_numel) the observations as f32 */
	stack st[2];      /* the torso and fused head; the critic torso and value head (n 0: none) */
	float *gbuf[2];   /* (B, max numel) ping-pong gradients for backward */
	float *dcol;      /* (n * OH * OW, k * k * C) for conv2d input gradients,
	                   * n images at a time (dcol_images) */
	float *wt;        /* (k * k * C, Fp) a conv2d weight transposed for the kernels */
	float *head;      /* (B, head_out) gradient of the fused head's output */
	float *vhead;     /* (B) gradient of the critic's value head, with a critic torso */
	/* A core's, NULL without one (rows are T * B, time-major): */
	float *xc;       /* (rows, I) its input: torso output, reward, one-hot */
	float *hc, *dhc; /* (rows, H) its output h and that output's gradient */
	float *dxc;      /* (rows, I) the gradient of its input */
	float *h0, *c0;  /* (B, H) the state before step 0, split from state0 */
	float *hT, *cT;  /* (B, H) the state after the last step */
	uint8_t *reset;  /* (rows) the last forward's resets, for backward */
	bool has_reset;  /* whether it had any (else NULL goes to lstm.c) */
	float *ws;       /* lstm.c's workspace, ws_floats */
	size_t ws_floats;
};

static float *falloc(size_t n)
{
	float *p = seed_xaligned(n * sizeof(float));
	memset(p, 0, n * sizeof(float));
	return p;
}

static void cpu_destroy(nn_backend **bp)
{
	if (!bp || !*bp)
		return;
	nn_backend *be = *bp;
	/* A flatten layer's output is the buffer before it: freed there (and
	 * compared before anything is freed). */
	for (int k = 0; k < 2; k++) {
		stack *st = &be->st[k];
		for (int i = st->n - 1; i >= 0; i--)
			if (st->out[i] != (i ? st->out[i - 1] : be->input))
				free(st->out[i]);
		free(st->out);
		free(st->conv);
	}
	free(be->input);
	free(be->gbuf[0]);
	free(be->gbuf[1]);
	free(be->dcol);
	free(be->wt);
	free(be->head);
	free(be->vhead);
	free(be->xc);
	free(be->hc);
	free(be->dhc);
	free(be->dxc);
	free(be->h0);
	free(be->c0);
	free(be->hT);
	free(be->cT);
	free(be->reset);
	free(be->ws);
	free(be);
	*bp = NULL;
}

/* The most floats of patch gradients (dcol) that a conv2d's input
 * gradient computes at once: the rows go through sgemm and col2im a few
 * images at a time, so that the patch matrix (k*k*C floats per output
 * pixel: 41,472 per image for the Nature DQN network's second layer) stays
 * in the caches between the two and its buffer does not grow with the
 * batch. */
#define DCOL_FLOATS ((size_t)1 << 18)

/* The images per step of a conv2d's input gradient (at least one, at most
 * B). */
static int dcol_images(const layer *L, int B)
{
	size_t per = (size_t)L->OH * L->OW * (size_t)(L->k * L->k * L->C);
	size_t n = DCOL_FLOATS / per;
	if (n < 1)
		n = 1;
	return n < (size_t)B ? (int)n : B;
}

static int cpu_create(nn_backend **out, const seed_model *m, seed_err *err)
{
	int rc = seed_blas_init(err);
	if (rc < 0)
		return rc;
	nn_backend *be = seed_xcalloc(1, sizeof *be);
	be->k = nnk_best();
	be->st[0] = (stack){.layers = m->layers, .n = m->nlayers};
	be->st[1] = (stack){.layers = m->critic, .n = m->ncritic};
	size_t B = (size_t)m->max_batch, widest = m->obs_numel, dcol = 0, wt = 0;
	be->input = falloc(B * m->obs_numel);
	for (int k = 0; k < 2; k++) {
		stack *st = &be->st[k];
		if (!st->n)
			continue;
		st->out = seed_xcalloc((size_t)st->n, sizeof *st->out);
		st->conv = seed_xcalloc((size_t)st->n, sizeof *st->conv);
		/* Every output but a flatten layer's is a buffer of its own. */
		float *prev = be->input;
		for (int i = 0; i < st->n; i++) {
			const layer *L = &st->layers[i];
			st->out[i] = L->kind == L_FLATTEN ? prev : falloc(B * L->numel_out);
			if (L->kind == L_CONV2D) {
				st->conv[i] = (nnk_conv){.H = L->H,
				                         .W = L->W,
				                         .C = L->C,
				                         .k = L->k,
				                         .F = L->F,
				                         .OH = L->OH,
				                         .OW = L->OW,
				                         .S = L->S,
				                         .pt = L->pt,
				                         .pl = L->pl};
				size_t cols = (size_t)dcol_images(L, m->max_batch) * L->OH * L->OW *
				              (size_t)(L->k * L->k * L->C);
				if (i > 0 && cols > dcol)
					dcol = cols;
				size_t w = (size_t)(L->k * L->k * L->C) * (size_t)nnk_fpad(be->k, L->F);
				if (w > wt)
					wt = w;
			}
			if (L->numel_out > widest)
				widest = L->numel_out;
			prev = st->out[i];
		}
	}
	be->gbuf[0] = falloc(B * widest);
	be->gbuf[1] = falloc(B * widest);
	if (dcol)
		be->dcol = falloc(dcol);
	if (wt)
		be->wt = falloc(wt);
	be->head = falloc(B * (size_t)m->layers[m->nlayers - 1].n_out);
	if (m->ncritic)
		be->vhead = falloc(B);
	if (m->core.H) {
		/* T * B <= max_batch rows whatever the split, so the
		 * workspace for one step of max_batch rows (11 B H + 2 B H)
		 * is at least lstm.c's T B 11 H + 2 B H. */
		size_t I = (size_t)m->core.I, H = (size_t)m->core.H;
		be->xc = falloc(B * I);
		be->dxc = falloc(B * I);
		be->hc = falloc(B * H);
		be->dhc = falloc(B * H);
		be->h0 = falloc(B * H);
		be->c0 = falloc(B * H);
		be->hT = falloc(B * H);
		be->cT = falloc(B * H);
		be->reset = seed_xcalloc(B, 1);
		be->ws_floats = seed_lstm_workspace_floats(1, m->max_batch, m->core.I, m->core.H);
		be->ws = falloc(be->ws_floats);
	}
	*out = be;
	return 0;
}

/* ---- forward ----------------------------------------------------------- */

/* Whether a linear layer's products go to the kernels (nnk linear_*)
 * rather than BLAS: when its weight matrix is at most a megabyte, so that
 * it stays in a core's L2 cache while the rows go by (the kernels read it
 * once per block of rows and do not block for caches as BLAS does).  At
 * those sizes BLAS's packing of the weight matrix on every call costs as
 * much as the product for the batches of RL (the server's tens of rows,
 * the learner's hundreds): the MinAtar network's 1024 x 128 layer at 32
 * rows runs twice as fast this way, at 640 rows as fast as BLAS.  Larger
 * layers keep BLAS, and so do layers of fewer than 256 inputs, where the
 * kernels' dot products are too short to pay for their final sums (the
 * CartPole MLP's, the heads on a torso of 64 or 128), and every layer where
 * the kernels are not the AVX-512 ones (nnk_ops.linear_fast). */
static bool linear_direct(const nn_backend *be, const layer *L)
{
	return be->k->linear_fast && L->n_in >= 256 && (size_t)L->n_in * L->n_out <= ((size_t)1 << 18);
}

/* wt (k*k*C, Fp) = w (F, k*k*C) transposed, zeros in the padding: the
 * layout the convolution kernels read (NNK_W filters in one vector). */
static void transpose_weights(const nn_backend *be, const layer *L, float *wt)
{
	int kk = L->k * L->k * L->C, Fp = nnk_fpad(be->k, L->F);
	memset(wt, 0, (size_t)kk * Fp * sizeof *wt);
	for (int f = 0; f < L->F; f++)
		for (int j = 0; j < kk; j++)
			wt[(size_t)j * Fp + f] = L->w[(size_t)f * kk + j];
}

/* Whether layer i computes the relu after it too (relu_fwd's result in
 * the relu layer's buffer, in the same pass): a conv2d, or a linear layer
 * computed by the kernels, followed by a relu.  Its own output, which no
 * backward reads (a conv2d or linear layer's backward needs its input, the
 * relu's its output), is then not written at all. */
static bool fuses_relu(const stack *st, const nn_backend *be, int i)
{
	const layer *L = &st->layers[i];
	return i + 1 < st->n && st->layers[i + 1].kind == L_RELU &&
	       (L->kind == L_CONV2D || (L->kind == L_LINEAR && linear_direct(be, L)));
}

/* y = x * scale along the last dimension, over n values (in place is
 * fine): a scale layer's forward, and its backward on the gradient. */
static void scale_apply(const layer *L, size_t n, const float *x, float *y)
{
	if (L->nscale == 1) {
		float c = L->scale[0];
		for (size_t e = 0; e < n; e++)
			y[e] = x[e] * c;
		return;
	}
	size_t d = (size_t)L->nscale;
	for (size_t e = 0; e < n; e += d)
		for (size_t j = 0; j < d; j++)
			y[e + j] = x[e + j] * L->scale[j];
}

/* Layer i of st on x (B, numel_in) into y (st->out[i], or with relu the
 * next layer's st->out[i + 1], see fuses_relu). */
static void layer_forward(const stack *st, nn_backend *be, int i, int B, const float *x, float *y, bool relu)
{
	const layer *L = &st->layers[i];
	size_t n = (size_t)B * L->numel_out;
	switch (L->kind) {
	case L_LINEAR:
		/* y (B, n_out) = x (B, n_in) W^T + b */
		if (linear_direct(be, L)) {
			(relu ? be->k->linear_fwd_relu : be->k->linear_fwd)(
			    (size_t)B, (size_t)L->n_in, (size_t)L->n_out, x, L->w, L->b, y);
			break;
		}
		seed_blas_sgemm(false, true, B, L->n_out, L->n_in, 1.0f, x, L->n_in, L->w, L->n_in, 0.0f, y,
		                L->n_out);
		be->k->bias_add((size_t)B, (size_t)L->n_out, L->b, y);
		break;
	case L_CONV2D:
		/* y (B, OH, OW, F) = conv(x, W) + b, directly (no patch matrix). */
		transpose_weights(be, L, be->wt);
		(relu ? be->k->conv_fwd_relu : be->k->conv_fwd)(&st->conv[i], B, x, be->wt, L->b, y);
		break;
	case L_RELU:
		be->k->relu_fwd(n, x, y);
		break;
	case L_TANH:
		be->k->tanh_fwd(n, x, y);
		break;
	case L_SCALE:
		scale_apply(L, n, x, y);
		break;
	case L_FLATTEN:
		break; /* y is x */
	}
}

/* The core over the torso's output x (T*B, D): builds its input (x, the
 * clipped previous reward, the previous action's one-hot), runs the LSTM
 * from s->state0 and writes s->state_out.  Returns h (T*B, H). */
static const float *core_forward(seed_model *m, const seed_model_seq *s, const float *x)
{
	nn_backend *be = m->be;
	const model_core *c = &m->core;
	int T = s->T, B = s->B, H = c->H, I = c->I, D = c->D, A = m->A;
	size_t rows = (size_t)T * (size_t)B;
	for (size_t r = 0; r < rows; r++) {
		float *xr = be->xc + r * (size_t)I;
		memcpy(xr, x + r * (size_t)D, (size_t)D * sizeof *xr);
		int k = D;
		if (c->prev_reward) {
			/* Clipped to [-1, 1], as SEED's DMLab agent has it. */
			float rw = s->prev_reward ? s->prev_reward[r] : 0.0f;
			xr[k++] = rw > 1.0f ? 1.0f : rw < -1.0f ? -1.0f : rw;
		}
		if (c->prev_action) {
			/* tf.one_hot: an index outside 0..A-1 is all zeros. */
			memset(xr + k, 0, (size_t)A * sizeof *xr);
			int32_t a = s->prev_action ? s->prev_action[r] : -1;
			if (a >= 0 && a < A)
				xr[k + a] = 1.0f;
		}
	}
	be->has_reset = s->reset != NULL;
	if (s->reset)
		memcpy(be->reset, s->reset, rows);
	size_t bh = (size_t)B * (size_t)H;
	if (s->state0)
		for (int b = 0; b < B; b++) {
			memcpy(be->h0 + (size_t)b * H, s->state0 + (size_t)b * 2 * H,
			       (size_t)H * sizeof(float));
			memcpy(be->c0 + (size_t)b * H, s->state0 + (size_t)b * 2 * H + H,
			       (size_t)H * sizeof(float));
		}
	else {
		memset(be->h0, 0, bh * sizeof(float));
		memset(be->c0, 0, bh * sizeof(float));
	}
	seed_lstm_params p = {c->w, c->u, c->b};
	/* Cannot fail: the sizes were checked when be was built. */
	seed_lstm_forward(T, B, I, H, &p, be->xc, be->has_reset ? be->reset : NULL, be->h0, be->c0, be->hc,
	                  be->hT, be->cT, be->ws, be->ws_floats);
	if (s->state_out)
		for (int b = 0; b < B; b++) {
			memcpy(s->state_out + (size_t)b * 2 * H, be->hT + (size_t)b * H,
			       (size_t)H * sizeof(float));
			memcpy(s->state_out + (size_t)b * 2 * H + H, be->cT + (size_t)b * H,
			       (size_t)H * sizeof(float));
		}
	return be->hc;
}

/* The layers of st from layer `from` on x, rows B, each into its buffer;
 * returns the last one's output. */
static const float *run_stack(const stack *st, nn_backend *be, int from, int B, const float *x)
{
	for (int i = from; i < st->n; i++) {
		bool relu = fuses_relu(st, be, i);
		layer_forward(st, be, i, B, x, st->out[i + relu], relu);
		i += relu;
		x = st->out[i];
	}
	return x;
}

/* The layers on s->T * s->B rows of s->obs: the torso, the core if there
 * is one, the fused head; returns the head's output (rows, head_out);
 * then the critic torso and value head if there are. */
static const float *run_forward(seed_model *m, const seed_model_seq *s)
{
	nn_backend *be = m->be;
	const stack *st = &be->st[0];
	int B = s->T * s->B;
	if (m->obs_dtype == SEED_DTYPE_U8)
		be->k->u8_to_f32((size_t)B * m->obs_numel, s->obs, be->input);
	else
		memcpy(be->input, s->obs, (size_t)B * m->obs_numel * sizeof(float));
	/* Normalised in place: both torsos read be->input, and so do their
	 * first layers' backward (the statistics get no gradient). */
	if (m->norm.on)
		model_obs_norm_apply(&m->norm, m->norm.mean, m->norm.var, (size_t)B * m->obs_numel,
		                     be->input);
	const float *x = be->input;
	/* The torso (a relu is never fused into the head: it is linear). */
	for (int i = 0; i < m->nlayers - 1; i++) {
		bool relu = fuses_relu(st, be, i);
		layer_forward(st, be, i, B, x, st->out[i + relu], relu);
		i += relu;
		x = st->out[i];
	}
	if (m->core.H)
		x = core_forward(m, s, x);
	layer_forward(st, be, m->nlayers - 1, B, x, st->out[m->nlayers - 1], false);
	if (m->ncritic)
		run_stack(&be->st[1], be, 0, B, be->input);
	return st->out[m->nlayers - 1];
}

/* x is the fused head (rows, head_out): the policy's Ph outputs, then the
 * value unless the critic's value head (rows, 1) has it; a parameter
 * log-std fills the rest of each row of logits (rows, P). */
static void put_logits(const seed_model *m, int rows, const float *x, float *logits, float *values)
{
	const model_policy *p = &m->policy;
	int P = p->P, Ph = p->Ph, w = head_out(m);
	for (int b = 0; b < rows; b++) {
		if (logits) {
			memcpy(logits + (size_t)b * P, x + (size_t)b * w, (size_t)Ph * sizeof *logits);
			if (P > Ph)
				memcpy(logits + (size_t)b * P + Ph, p->log_std,
				       (size_t)(P - Ph) * sizeof *logits);
		}
		if (values && !m->ncritic)
			values[b] = x[(size_t)b * w + Ph];
	}
	if (values && m->ncritic)
		memcpy(values, m->be->st[1].out[m->ncritic - 1], (size_t)rows * sizeof *values);
}

/* x is the fused head (rows, A+1): advantages then value;
 * Q[a] = V + Adv[a] - mean(Adv), the mean summed in double. */
static void put_q(const seed_model *m, int B, const float *x, float *q)
{
	int A = m->A;
	for (int b = 0; b < B; b++) {
		const float *row = x + (size_t)b * (A + 1);
		double sum = 0;
		for (int a = 0; a < A; a++)
			sum += row[a];
		float base = (float)((double)row[A] - sum / A);
		for (int a = 0; a < A; a++)
			q[(size_t)b * A + a] = row[a] + base;
	}
}

static int cpu_forward(seed_model *m, const seed_model_seq *s, float *logits, float *values, float *q)
{
	const float *head = run_forward(m, s);
	if (m->head == SEED_HEAD_DUELING)
		put_q(m, s->T * s->B, head, q);
	else
		put_logits(m, s->T * s->B, head, logits, values);
	return 0;
}

/* ---- backward ---------------------------------------------------------- */

/* Given dy (B, numel_out) and layer i's input x, add parameter gradients
 * and, when dx is not NULL, write dL/dx (B, numel_in) to dx (which may be dy
 * for the element-wise layers).  relu_below (a linear layer computed by the
 * kernels, see relu_below): x is a relu's output, and dx gets that relu's
 * backward too. */
static void layer_backward(const stack *st, nn_backend *be, int i, int B, const float *x, const float *dy,
                           float *dx, bool relu_below)
{
	const layer *L = &st->layers[i];
	const float *y = st->out[i];
	size_t n = (size_t)B * L->numel_out;
	switch (L->kind) {
	case L_LINEAR:
		/* dW (n_out, n_in) += dy^T x; db += sum_b dy; dx (B, n_in) = dy W */
		be->k->col_sum((size_t)B, (size_t)L->n_out, dy, L->db);
		if (linear_direct(be, L)) {
			be->k->linear_dw((size_t)B, (size_t)L->n_in, (size_t)L->n_out, dy, x, L->dw);
			if (dx && relu_below) /* x is the relu's output */
				be->k->linear_dx_relu((size_t)B, (size_t)L->n_in, (size_t)L->n_out, dy, L->w,
				                      x, dx);
			else if (dx)
				be->k->linear_dx((size_t)B, (size_t)L->n_in, (size_t)L->n_out, dy, L->w, dx);
			break;
		}
		seed_blas_sgemm(true, false, L->n_out, L->n_in, B, 1.0f, dy, L->n_out, x, L->n_in, 1.0f,
		                L->dw, L->n_in);
		if (dx)
			seed_blas_sgemm(false, false, B, L->n_in, L->n_out, 1.0f, dy, L->n_out, L->w, L->n_in,
			                0.0f, dx, L->n_in);
		break;
	case L_CONV2D: {
		int rows = B * L->OH * L->OW, kk = L->k * L->k * L->C, Fp = nnk_fpad(be->k, L->F);
		/* dW (F, kk) += sum over pixels of dy (outer) patch, computed
		 * transposed in be->wt; db += column sums of dy (rows, F). */
		memset(be->wt, 0, (size_t)kk * Fp * sizeof *be->wt);
		be->k->conv_dw(&st->conv[i], B, x, dy, be->wt);
		for (int f = 0; f < L->F; f++)
			for (int j = 0; j < kk; j++)
				L->dw[(size_t)f * kk + j] += be->wt[(size_t)j * Fp + f];
		be->k->col_sum((size_t)rows, (size_t)L->F, dy, L->db);
		if (dx) {
			/* dcol (pixels, kk) = dy (pixels, F) W (F, kk), then
			 * scattered onto dx, a few images at a time. */
			int step = dcol_images(L, B), per = L->OH * L->OW;
			memset(dx, 0, (size_t)B * L->numel_in * sizeof *dx);
			for (int b0 = 0; b0 < B; b0 += step) {
				int nb = B - b0 < step ? B - b0 : step;
				seed_blas_sgemm(false, false, nb * per, kk, L->F, 1.0f,
				                dy + (size_t)b0 * per * L->F, L->F, L->w, kk, 0.0f, be->dcol,
				                kk);
				nnk_col2im(&st->conv[i], nb, be->dcol, dx + (size_t)b0 * L->numel_in);
			}
		}
		break;
	}
	case L_RELU:
		if (dx)
			be->k->relu_bwd(n, y, dy, dx);
		break;
	case L_TANH:
		if (dx)
			be->k->tanh_bwd(n, y, dy, dx);
		break;
	case L_SCALE: /* dx = dy * scale (in place is fine) */
		if (dx)
			scale_apply(L, n, dy, dx);
		break;
	case L_FLATTEN:
		if (dx && dx != dy)
			memcpy(dx, dy, n * sizeof *dx);
		break;
	}
}

/* The relu whose backward layer i (a linear layer computed by the
 * kernels) folds into its dx: the layer below it, past flatten layers
 * (whose output is their input, so layer i's input is the relu's output);
 * -1 if there is none.  It saves a pass over the widest gradient of the
 * MinAtar network (B x 1024). */
static int relu_below(const stack *st, const nn_backend *be, int i)
{
	const layer *L = &st->layers[i];
	if (L->kind != L_LINEAR || !linear_direct(be, L))
		return -1;
	int j = i - 1;
	while (j >= 0 && st->layers[j].kind == L_FLATTEN)
		j--;
	return j >= 0 && st->layers[j].kind == L_RELU ? j : -1;
}

/* Backward through layers top..0 from g, the gradient of layer top's
 * output (be->head, or gbuf[0] below a core).  Only down to the first
 * layer with parameters: the layers below it have no gradients to add, so
 * its input gradient is not computed (the Nature DQN network's first
 * convolution follows a scale layer; its input gradient would cost as
 * much as its forward pass). */
static void backward_layers(nn_backend *be, const stack *st, int B, int top, float *g)
{
	int first = 0;
	while (first <= top && st->layers[first].kind != L_LINEAR && st->layers[first].kind != L_CONV2D)
		first++;
	int folded = -1; /* a relu whose backward the linear layer above did */
	for (int i = top; i >= first; i--) {
		const layer *L = &st->layers[i];
		if (i == folded) /* in place: g stays */
			continue;
		const float *x = i > 0 ? st->out[i - 1] : be->input;
		float *dx = NULL; /* the first parametric layer's input needs no gradient */
		if (i > first) {
			/* Element-wise layers work in place; the others write to
			 * the gradient buffer that does not hold dy. */
			if (L->kind == L_RELU || L->kind == L_TANH || L->kind == L_FLATTEN ||
			    L->kind == L_SCALE)
				dx = g;
			else
				dx = g == be->gbuf[0] ? be->gbuf[1] : be->gbuf[0];
		}
		int r = dx ? relu_below(st, be, i) : -1;
		layer_backward(st, be, i, B, x, g, dx, r >= 0);
		if (r >= 0)
			folded = r;
		g = dx;
	}
}

/* Backward from the fused head's output gradient, already in be->head,
 * for the last forward's rows. */
static void run_backward(seed_model *m)
{
	nn_backend *be = m->be;
	int rows = m->last_B, top = m->nlayers - 1;
	const model_core *c = &m->core;
	if (!c->H) {
		backward_layers(be, &be->st[0], rows, top, be->head);
		return;
	}
	/* The head reads h: its input gradient is the core's dL/dh. */
	layer_backward(&be->st[0], be, top, rows, be->hc, be->head, be->dhc, false);
	int T = m->last_T, B = rows / T;
	seed_lstm_params p = {c->w, c->u, c->b};
	seed_lstm_grads g = {c->dw, c->du, c->db};
	/* No torso (the observation feeds the core): no input gradient. */
	float *dx = top > 0 ? be->dxc : NULL;
	seed_lstm_backward(T, B, c->I, c->H, &p, be->xc, be->has_reset ? be->reset : NULL, be->dhc, NULL,
	                   NULL, &g, dx, NULL, NULL, be->ws, be->ws_floats);
	if (!dx)
		return;
	/* The torso's share of the core's input gradient (its first D). */
	float *gt = be->gbuf[0];
	for (size_t r = 0; r < (size_t)rows; r++)
		memcpy(gt + r * (size_t)c->D, dx + r * (size_t)c->I, (size_t)c->D * sizeof *gt);
	backward_layers(be, &be->st[0], rows, top - 1, gt);
}

/* dL/dlogits (rows, P), dL/dvalues (rows) into the fused head's gradient
 * (rows, head_out), the critic's value head's (rows) and a parameter
 * log-std's (the sum over rows, in double). */
static void head_grad(seed_model *m, int rows, const float *dlogits, const float *dvalues)
{
	nn_backend *be = m->be;
	const model_policy *p = &m->policy;
	int P = p->P, Ph = p->Ph, w = head_out(m);
	for (int b = 0; b < rows; b++) {
		float *row = be->head + (size_t)b * w;
		if (dlogits)
			memcpy(row, dlogits + (size_t)b * P, (size_t)Ph * sizeof *row);
		else
			memset(row, 0, (size_t)Ph * sizeof *row);
		if (!m->ncritic)
			row[Ph] = dvalues ? dvalues[b] : 0.0f;
	}
	if (m->ncritic) {
		if (dvalues)
			memcpy(be->vhead, dvalues, (size_t)rows * sizeof *be->vhead);
		else
			memset(be->vhead, 0, (size_t)rows * sizeof *be->vhead);
	}
	if (P > Ph && dlogits)
		for (int i = 0; i < P - Ph; i++) {
			double sum = 0;
			for (int b = 0; b < rows; b++)
				sum += dlogits[(size_t)b * P + Ph + i];
			p->dlog_std[i] += (float)sum;
		}
}

/* dL/dq (rows, A) into the fused head's gradient.
 * Q[a] = V + Adv[a] - mean(Adv): dL/dV = sum_a dq[a] and
 * dL/dAdv[a] = dq[a] - mean(dq). */
static void head_grad_q(seed_model *m, int B, const float *dq)
{
	nn_backend *be = m->be;
	int A = m->A;
	for (int b = 0; b < B; b++) {
		float *row = be->head + (size_t)b * (A + 1);
		if (!dq) {
			memset(row, 0, (size_t)(A + 1) * sizeof *row);
			continue;
		}
		const float *d = dq + (size_t)b * A;
		double sum = 0;
		for (int a = 0; a < A; a++)
			sum += d[a];
		float mean = (float)(sum / A);
		for (int a = 0; a < A; a++)
			row[a] = d[a] - mean;
		row[A] = (float)sum;
	}
}

static int cpu_backward(seed_model *m, const float *dlogits, const float *dvalues, const float *dq)
{
	if (m->head == SEED_HEAD_DUELING)
		head_grad_q(m, m->last_B, dq);
	else
		head_grad(m, m->last_B, dlogits, dvalues);
	run_backward(m);
	/* The critic torso (no core goes with it); nothing to add without a
	 * value gradient. */
	if (m->ncritic && dvalues)
		backward_layers(m->be, &m->be->st[1], m->last_B, m->ncritic - 1, m->be->vhead);
	return 0;
}

const nn_backend_ops nn_cpu_ops = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .forward = cpu_forward,
    .backward = cpu_backward,
};
