/* dnnl_bench.c: the Nature DQN network with oneDNN beside Seed's own
 * kernels, to choose the learner's convolution path with figures (not a
 * test).
 *
 *   OMP_NUM_THREADS=1 bench/dnnl_bench [--repeats R] [--cpu-time]
 *
 * The network is atari-pong's (examples/models/nature-dqn.json, as
 * bench/nn_bench --nature times it): u8[84,84,4] frames scaled by 1/255,
 * conv 32 8x8 stride 4, conv 64 4x4 stride 2, conv 64 3x3, each with a
 * ReLU, linear 512 with a ReLU, and the heads (18 logits and a value) as
 * one 512 -> 19 product.  oneDNN (libdnnl-dev, 2.6 in Debian 12) runs it as
 * a framework would: memory formats of its choosing ("any": blocked
 * layouts for this CPU's vector width), the ReLUs fused into the forward
 * primitives, the frames' u8 NHWC rows reordered and scaled into its input
 * layout inside the timed pass, the weights kept in its layout (an
 * optimiser would update them there).  Forward+backward is the forward,
 * then the weights' and biases' gradients of every layer and the data
 * gradients of all but the first convolution (its input, the frames, needs
 * none; Seed's backward skips it too).
 *
 * Before timing, it checks that both compute the same function: Seed's
 * model (seed_model_new, orthogonal init) and oneDNN's primitives get the
 * same parameters, the same frames and the same output gradients, and the
 * logits, values and the first convolution's weight gradient must agree
 * to a relative 1e-3 (float sums in other orders); it stops otherwise.
 *
 * Then, for B = 32 (the server's batch), 128, 160 (atari-pong's learner:
 * 8 unrolls of 20) and 512, rows/s and microseconds of the forward and the
 * forward+backward, oneDNN's and Seed's (seed_model_forward and
 * seed_model_backward, with whatever BLAS kernel this process got), in one
 * markdown table: each figure the median of R timed runs (default 7), each
 * run long enough (>= 20 ms) to time, the two alternating per batch size.
 * --cpu-time times by the thread's CPU time (as nn_bench --cpu-time).
 * oneDNN threads with OpenMP: OMP_NUM_THREADS=1 gives it one core, as the
 * learner has; the header line says what it had.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "bench_time.h"
#include "seed/blas.h"
#include "seed/nn.h"
#include "seed/rng.h"

#define A 18    /* logits: ALE's full action set, as nn_bench */
#define OUTS 19 /* the heads as one product: 18 logits, then the value */
#define MAXB 512

#define CHECK(call)                                                                                          \
	do {                                                                                                 \
		dnnl_status_t s_ = (call);                                                                   \
		if (s_ != dnnl_success) {                                                                    \
			fprintf(stderr, "dnnl_bench: line %d: %s failed: %s\n", __LINE__, #call,             \
			        dnnl_status2str(s_));                                                        \
			exit(1);                                                                             \
		}                                                                                            \
	} while (0)

static dnnl_engine_t eng;
static dnnl_stream_t stream;

/* ---- oneDNN's network ------------------------------------------------- */

/* One step of a pass: a primitive and its arguments. */
typedef struct {
	dnnl_primitive_t p;
	int n;
	dnnl_exec_arg_t args[8];
} step;

typedef struct {
	int B;
	dnnl_memory_t frames;                       /* u8 NHWC, the user's rows */
	dnnl_memory_t x;                            /* conv1's input, scaled */
	dnnl_memory_t w[5], b[5], y[5];             /* layer l's weights, bias, output (after ReLU) */
	dnnl_memory_t dw[5], db[5], dy[5], dpre[5]; /* gradients: of w, b, y, and of the pre-ReLU output */
	dnnl_memory_t plain_w[5], plain_b[5];       /* Seed's layouts, to load parameters */
	step fwd[8], bwd[64];
	int nfwd, nbwd;
} dnet;

static dnnl_memory_t mem(const dnnl_memory_desc_t *md)
{
	dnnl_memory_t m;
	CHECK(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
	return m;
}

static const dnnl_memory_desc_t *pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what)
{
	return dnnl_primitive_desc_query_md(pd, what, 0);
}

static dnnl_primitive_t prim(const_dnnl_primitive_desc_t pd)
{
	dnnl_primitive_t p;
	CHECK(dnnl_primitive_create(&p, pd));
	return p;
}

static void add(step *s, int *n, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *args)
{
	s[*n].p = p;
	s[*n].n = nargs;
	memcpy(s[*n].args, args, (size_t)nargs * sizeof *args);
	(*n)++;
}

static void run(const step *s, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(dnnl_primitive_execute(s[i].p, stream, s[i].n, s[i].args));
	CHECK(dnnl_stream_wait(stream));
}

/* A reorder from src to dst (formats may differ), run at once. */
static void reorder_now(dnnl_memory_t src, dnnl_memory_t dst)
{
	const dnnl_memory_desc_t *smd, *dmd;
	CHECK(dnnl_memory_get_memory_desc(src, &smd));
	CHECK(dnnl_memory_get_memory_desc(dst, &dmd));
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_reorder_primitive_desc_create(&pd, smd, eng, dmd, eng, NULL));
	dnnl_primitive_t p = prim(pd);
	dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
	CHECK(dnnl_primitive_execute(p, stream, 2, a));
	CHECK(dnnl_stream_wait(stream));
	dnnl_primitive_destroy(p);
	dnnl_primitive_desc_destroy(pd);
}

/* A reorder step from src to a new memory of want, or src itself when it
 * has that layout already. */
static dnnl_memory_t as(step *s, int *n, dnnl_memory_t src, const dnnl_memory_desc_t *want)
{
	const dnnl_memory_desc_t *have;
	CHECK(dnnl_memory_get_memory_desc(src, &have));
	if (dnnl_memory_desc_equal(have, want))
		return src;
	dnnl_memory_t dst = mem(want);
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_reorder_primitive_desc_create(&pd, have, eng, want, eng, NULL));
	dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
	add(s, n, prim(pd), 2, a);
	return dst;
}

static void md_tag(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_data_type_t t,
                   dnnl_format_tag_t tag)
{
	CHECK(dnnl_memory_desc_init_by_tag(md, nd, dims, t, tag));
}

static dnnl_primitive_attr_t relu_attr(void)
{
	dnnl_post_ops_t po;
	dnnl_primitive_attr_t attr;
	CHECK(dnnl_post_ops_create(&po));
	CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
	CHECK(dnnl_primitive_attr_create(&attr));
	CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
	dnnl_post_ops_destroy(po);
	return attr;
}

/* The layers: 0-2 convolutions, 3 linear 512, 4 the heads. */
static const int conv_in[3] = {4, 32, 64}, conv_out[3] = {32, 64, 64}, conv_k[3] = {8, 4, 3},
                 conv_s[3] = {4, 2, 1}, conv_hw_in[3] = {84, 20, 9}, conv_hw_out[3] = {20, 9, 7};

static void dnet_build(dnet *n, int B)
{
	memset(n, 0, sizeof *n);
	n->B = B;
	dnnl_memory_desc_t md, any_src, any_w, any_b, any_dst;
	const dnnl_memory_desc_t *src_md = NULL; /* the previous layer's output */
	dnnl_primitive_desc_t fpd[5];

	/* Forward, and the memories. */
	for (int l = 0; l < 5; l++) {
		dnnl_primitive_attr_t attr = l < 4 ? relu_attr() : NULL;
		if (l < 3) {
			dnnl_dims_t s = {B, conv_in[l], conv_hw_in[l], conv_hw_in[l]};
			dnnl_dims_t w = {conv_out[l], conv_in[l], conv_k[l], conv_k[l]};
			dnnl_dims_t bb = {conv_out[l]};
			dnnl_dims_t d = {B, conv_out[l], conv_hw_out[l], conv_hw_out[l]};
			dnnl_dims_t st = {conv_s[l], conv_s[l]}, pad = {0, 0};
			md_tag(&any_src, 4, s, dnnl_f32, dnnl_format_tag_any);
			md_tag(&any_w, 4, w, dnnl_f32, dnnl_format_tag_any);
			md_tag(&any_b, 1, bb, dnnl_f32, dnnl_x);
			md_tag(&any_dst, 4, d, dnnl_f32, dnnl_format_tag_any);
			dnnl_convolution_desc_t cd;
			CHECK(dnnl_convolution_forward_desc_init(
			    &cd, dnnl_forward_training, dnnl_convolution_direct, src_md ? src_md : &any_src,
			    &any_w, &any_b, &any_dst, st, pad, pad));
			CHECK(dnnl_primitive_desc_create(&fpd[l], &cd, attr, eng, NULL));
			/* Seed's layout: [F, k, k, C]. */
			md_tag(&md, 4, w, dnnl_f32, dnnl_ohwi);
			n->plain_w[l] = mem(&md);
		} else {
			int out_l = l == 3 ? 512 : OUTS;
			dnnl_dims_t d = {B, out_l}, bb = {out_l};
			md_tag(&any_dst, 2, d, dnnl_f32, dnnl_format_tag_any);
			md_tag(&any_b, 1, bb, dnnl_f32, dnnl_x);
			if (l == 3) {
				dnnl_dims_t w = {512, 64, 7, 7};
				md_tag(&any_w, 4, w, dnnl_f32, dnnl_format_tag_any);
				md_tag(&md, 4, w, dnnl_f32, dnnl_ohwi); /* Seed flattens HWC */
			} else {
				dnnl_dims_t w = {OUTS, 512};
				md_tag(&any_w, 2, w, dnnl_f32, dnnl_format_tag_any);
				md_tag(&md, 2, w, dnnl_f32, dnnl_oi);
			}
			n->plain_w[l] = mem(&md);
			dnnl_inner_product_desc_t id;
			CHECK(dnnl_inner_product_forward_desc_init(&id, dnnl_forward_training, src_md, &any_w,
			                                           &any_b, &any_dst));
			CHECK(dnnl_primitive_desc_create(&fpd[l], &id, attr, eng, NULL));
		}
		if (attr)
			dnnl_primitive_attr_destroy(attr);
		n->plain_b[l] = mem(&any_b);
		if (l == 0)
			n->x = mem(pd_md(fpd[0], dnnl_query_src_md));
		n->w[l] = mem(pd_md(fpd[l], dnnl_query_weights_md));
		n->b[l] = mem(&any_b);
		n->y[l] = mem(pd_md(fpd[l], dnnl_query_dst_md));
		n->dy[l] = mem(pd_md(fpd[l], dnnl_query_dst_md));
		n->dpre[l] = mem(pd_md(fpd[l], dnnl_query_dst_md));
		src_md = pd_md(fpd[l], dnnl_query_dst_md);
	}

	/* The frames: u8 NHWC reordered into conv1's input, times 1/255. */
	{
		dnnl_dims_t s = {B, 4, 84, 84};
		md_tag(&md, 4, s, dnnl_u8, dnnl_nhwc);
		n->frames = mem(&md);
		dnnl_primitive_attr_t attr;
		CHECK(dnnl_primitive_attr_create(&attr));
		float scale = 1.0f / 255.0f;
		CHECK(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale));
		dnnl_primitive_desc_t pd;
		CHECK(dnnl_reorder_primitive_desc_create(&pd, &md, eng, pd_md(fpd[0], dnnl_query_src_md), eng,
		                                         attr));
		dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, n->frames}, {DNNL_ARG_TO, n->x}};
		add(n->fwd, &n->nfwd, prim(pd), 2, a);
		dnnl_primitive_attr_destroy(attr);
	}
	for (int l = 0; l < 5; l++) {
		dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, l ? n->y[l - 1] : n->x},
		                        {DNNL_ARG_WEIGHTS, n->w[l]},
		                        {DNNL_ARG_BIAS, n->b[l]},
		                        {DNNL_ARG_DST, n->y[l]}};
		add(n->fwd, &n->nfwd, prim(fpd[l]), 4, a);
	}

	/* Backward, from the heads' output gradient in dy[4] (no ReLU there:
	 * dpre[4] is dy[4]). */
	for (int l = 4; l >= 0; l--) {
		const dnnl_memory_desc_t *ymd = pd_md(fpd[l], dnnl_query_dst_md);
		const dnnl_memory_desc_t *smd =
		    l ? pd_md(fpd[l - 1], dnnl_query_dst_md) : pd_md(fpd[0], dnnl_query_src_md);
		const dnnl_memory_desc_t *wmd = pd_md(fpd[l], dnnl_query_weights_md);
		dnnl_memory_t g = n->dy[l];
		if (l < 4) { /* through the ReLU, from its output */
			dnnl_eltwise_desc_t ed;
			CHECK(dnnl_eltwise_backward_desc_init(&ed, dnnl_eltwise_relu_use_dst_for_bwd, ymd,
			                                      ymd, 0.0f, 0.0f));
			dnnl_primitive_desc_t pd;
			dnnl_primitive_desc_t efpd;
			dnnl_eltwise_desc_t efd;
			CHECK(dnnl_eltwise_forward_desc_init(
			    &efd, dnnl_forward_training, dnnl_eltwise_relu_use_dst_for_bwd, ymd, 0.0f, 0.0f));
			CHECK(dnnl_primitive_desc_create(&efpd, &efd, NULL, eng, NULL));
			CHECK(dnnl_primitive_desc_create(&pd, &ed, NULL, eng, efpd));
			dnnl_exec_arg_t a[3] = {{DNNL_ARG_DST, n->y[l]},
			                        {DNNL_ARG_DIFF_DST, n->dy[l]},
			                        {DNNL_ARG_DIFF_SRC, n->dpre[l]}};
			add(n->bwd, &n->nbwd, prim(pd), 3, a);
			g = n->dpre[l];
		}
		/* Every layout "any": oneDNN's backward kernels want their own
		 * (the data gradient's weights transposed in blocks, say), and
		 * a layout they lack sends them to the reference code, a
		 * thousand times slower.  Reorders bridge the layouts, timed
		 * with the rest. */
		dnnl_memory_desc_t any_dw, any_bw, any_s, any_d, bmd;
		dnnl_dims_t bb = {l < 3 ? conv_out[l] : l == 3 ? 512 : OUTS};
		md_tag(&bmd, 1, bb, dnnl_f32, dnnl_x);
		{
			const dnnl_memory_desc_t *x = smd;
			md_tag(&any_s, x->ndims, x->dims, dnnl_f32, dnnl_format_tag_any);
			md_tag(&any_d, ymd->ndims, ymd->dims, dnnl_f32, dnnl_format_tag_any);
			md_tag(&any_bw, wmd->ndims, wmd->dims, dnnl_f32, dnnl_format_tag_any);
			md_tag(&any_dw, wmd->ndims, wmd->dims, dnnl_f32, dnnl_format_tag_any);
		}
		dnnl_primitive_desc_t wpd, dpd = NULL;
		if (l < 3) {
			dnnl_dims_t st = {conv_s[l], conv_s[l]}, pad = {0, 0};
			dnnl_convolution_desc_t cd;
			CHECK(dnnl_convolution_backward_weights_desc_init(
			    &cd, dnnl_convolution_direct, &any_s, &any_dw, &bmd, &any_d, st, pad, pad));
			CHECK(dnnl_primitive_desc_create(&wpd, &cd, NULL, eng, fpd[l]));
			if (l > 0) {
				CHECK(dnnl_convolution_backward_data_desc_init(
				    &cd, dnnl_convolution_direct, &any_s, &any_bw, &any_d, st, pad, pad));
				CHECK(dnnl_primitive_desc_create(&dpd, &cd, NULL, eng, fpd[l]));
			}
		} else {
			dnnl_inner_product_desc_t id;
			CHECK(dnnl_inner_product_backward_weights_desc_init(&id, &any_s, &any_dw, &bmd,
			                                                    &any_d));
			CHECK(dnnl_primitive_desc_create(&wpd, &id, NULL, eng, fpd[l]));
			CHECK(dnnl_inner_product_backward_data_desc_init(&id, &any_s, &any_bw, &any_d));
			CHECK(dnnl_primitive_desc_create(&dpd, &id, NULL, eng, fpd[l]));
		}
		n->dw[l] = mem(pd_md(wpd, dnnl_query_diff_weights_md));
		n->db[l] = mem(&bmd);
		dnnl_memory_t src =
		    as(n->bwd, &n->nbwd, l ? n->y[l - 1] : n->x, pd_md(wpd, dnnl_query_src_md));
		dnnl_memory_t gw = as(n->bwd, &n->nbwd, g, pd_md(wpd, dnnl_query_diff_dst_md));
		dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, src},
		                        {DNNL_ARG_DIFF_DST, gw},
		                        {DNNL_ARG_DIFF_WEIGHTS, n->dw[l]},
		                        {DNNL_ARG_DIFF_BIAS, n->db[l]}};
		add(n->bwd, &n->nbwd, prim(wpd), 4, a);
		if (dpd) {
			dnnl_memory_t gd = as(n->bwd, &n->nbwd, g, pd_md(dpd, dnnl_query_diff_dst_md));
			dnnl_memory_t w = as(n->bwd, &n->nbwd, n->w[l], pd_md(dpd, dnnl_query_weights_md));
			const dnnl_memory_desc_t *dsmd = pd_md(dpd, dnnl_query_diff_src_md), *want;
			CHECK(dnnl_memory_get_memory_desc(n->dy[l - 1], &want));
			dnnl_memory_t ds = dnnl_memory_desc_equal(dsmd, want) ? n->dy[l - 1] : mem(dsmd);
			dnnl_exec_arg_t d[3] = {
			    {DNNL_ARG_DIFF_DST, gd}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, ds}};
			add(n->bwd, &n->nbwd, prim(dpd), 3, d);
			if (ds != n->dy[l - 1]) {
				dnnl_primitive_desc_t rpd;
				CHECK(dnnl_reorder_primitive_desc_create(&rpd, dsmd, eng, want, eng, NULL));
				dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, ds}, {DNNL_ARG_TO, n->dy[l - 1]}};
				add(n->bwd, &n->nbwd, prim(rpd), 2, r);
			}
		}
	}
}

static float *data(dnnl_memory_t m)
{
	void *p;
	CHECK(dnnl_memory_get_data_handle(m, &p));
	return p;
}

static size_t bytes(dnnl_memory_t m)
{
	const dnnl_memory_desc_t *md;
	CHECK(dnnl_memory_get_memory_desc(m, &md));
	return dnnl_memory_desc_get_size(md);
}

/* Seed's parameters into oneDNN's layouts. */
static void dnet_load(dnet *n, seed_model *m)
{
	static const char *wname[4] = {"torso.1.weight", "torso.3.weight", "torso.5.weight",
	                               "torso.8.weight"};
	static const char *bname[4] = {"torso.1.bias", "torso.3.bias", "torso.5.bias", "torso.8.bias"};
	const float *p = seed_model_params(m);
	for (int l = 0; l < 4; l++) {
		const seed_model_param *w = seed_model_param_find(m, wname[l]),
		                       *b = seed_model_param_find(m, bname[l]);
		memcpy(data(n->plain_w[l]), p + w->offset, w->numel * sizeof(float));
		memcpy(data(n->plain_b[l]), p + b->offset, b->numel * sizeof(float));
	}
	const seed_model_param *pw = seed_model_param_find(m, "policy.weight"),
	                       *vw = seed_model_param_find(m, "value.weight"),
	                       *pb = seed_model_param_find(m, "policy.bias"),
	                       *vb = seed_model_param_find(m, "value.bias");
	memcpy(data(n->plain_w[4]), p + pw->offset, pw->numel * sizeof(float));
	memcpy(data(n->plain_w[4]) + pw->numel, p + vw->offset, vw->numel * sizeof(float));
	memcpy(data(n->plain_b[4]), p + pb->offset, pb->numel * sizeof(float));
	memcpy(data(n->plain_b[4]) + pb->numel, p + vb->offset, vb->numel * sizeof(float));
	for (int l = 0; l < 5; l++) {
		reorder_now(n->plain_w[l], n->w[l]);
		memcpy(data(n->b[l]), data(n->plain_b[l]), bytes(n->b[l]));
	}
}

/* ---- the check and the timings ------------------------------------------ */

typedef struct {
	dnet *n;
	seed_model *m;
	int B;
	unsigned char *frames;
	float *logits, *values, *dl, *dv;
} ctx;

static void d_forward(void *p)
{
	ctx *c = p;
	run(c->n->fwd, c->n->nfwd);
}

static void d_train(void *p)
{
	ctx *c = p;
	run(c->n->fwd, c->n->nfwd);
	run(c->n->bwd, c->n->nbwd);
}

static void s_forward(void *p)
{
	ctx *c = p;
	seed_model_forward(c->m, c->B, c->frames, c->logits, c->values);
}

static void s_train(void *p)
{
	ctx *c = p;
	seed_model_forward(c->m, c->B, c->frames, c->logits, c->values);
	seed_model_backward(c->m, c->B, c->dl, c->dv);
}

/* max |a - b| / max(max |b|, tiny) over n floats. */
static double rel_err(const float *a, const float *b, size_t n, size_t stride_a, size_t stride_b)
{
	double d = 0, s = 1e-30;
	for (size_t i = 0; i < n; i++) {
		d = fmax(d, fabs((double)a[i * stride_a] - b[i * stride_b]));
		s = fmax(s, fabs((double)b[i * stride_b]));
	}
	return d / s;
}

static void check_same(ctx *c)
{
	dnet *n = c->n;
	int B = c->B;
	memcpy(data(n->frames), c->frames, (size_t)B * 84 * 84 * 4);
	/* The heads' output gradient: dlogits then dvalue per row, plain
	 * [B, 19], into whatever layout "any" gave the heads' output. */
	dnnl_memory_desc_t nc;
	dnnl_dims_t ncd = {B, OUTS};
	md_tag(&nc, 2, ncd, dnnl_f32, dnnl_nc);
	dnnl_memory_t plain = mem(&nc);
	float *g = data(plain);
	for (int b = 0; b < B; b++) {
		memcpy(g + (size_t)b * OUTS, c->dl + (size_t)b * A, A * sizeof(float));
		g[(size_t)b * OUTS + A] = c->dv[b];
	}
	reorder_now(plain, n->dy[4]);
	run(n->fwd, n->nfwd);
	run(n->bwd, n->nbwd);
	seed_model_zero_grad(c->m);
	seed_model_forward(c->m, B, c->frames, c->logits, c->values);
	seed_model_backward(c->m, B, c->dl, c->dv);

	/* The heads' output is plain [B, 19] (2-D, nc) whatever "any" chose. */
	float *out = malloc((size_t)B * OUTS * sizeof *out);
	reorder_now(n->y[4], plain);
	memcpy(out, data(plain), (size_t)B * OUTS * sizeof *out);
	dnnl_memory_destroy(plain);
	double el = 0;
	for (int b = 0; b < B; b++)
		el = fmax(el, rel_err(out + (size_t)b * OUTS, c->logits + (size_t)b * A, A, 1, 1));
	double ev = rel_err(out + A, c->values, (size_t)B, OUTS, 1);
	/* The first convolution's weight gradient, in Seed's [32, 8, 8, 4]. */
	reorder_now(n->dw[0], n->plain_w[0]);
	const seed_model_param *w0 = seed_model_param_find(c->m, "torso.1.weight");
	double ew = rel_err(data(n->plain_w[0]), seed_model_grads(c->m) + w0->offset, w0->numel, 1, 1);
	printf(
	    "check, B=%d: logits %.2g, values %.2g, conv1 weight gradient %.2g (largest difference over the "
	    "largest value)\n",
	    B, el, ev, ew);
	free(out);
	if (!(el < 1e-3 && ev < 1e-3 && ew < 1e-3)) {
		fprintf(stderr, "dnnl_bench: oneDNN and Seed disagree: not the same network, no timings\n");
		exit(1);
	}
}

static float *randn(seed_rng *r, size_t n)
{
	float *p = malloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)seed_rng_normal(r);
	return p;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cpu-time") == 0)
			bench_clock = CLOCK_THREAD_CPUTIME_ID;
		else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
			bench_repeats = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: OMP_NUM_THREADS=1 dnnl_bench [--repeats R] [--cpu-time]\n");
			return 2;
		}
	}
	const dnnl_version_t *v = dnnl_version();
	const char *omp = getenv("OMP_NUM_THREADS");
	printf("oneDNN %d.%d.%d (%s), OMP_NUM_THREADS %s, %s\n", v->major, v->minor, v->patch, v->hash,
	       omp ? omp : "unset (all cores)",
	       bench_clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU time");
	CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
	CHECK(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags));

	static const char nature[] =
	    "{\"torso\":[{\"type\":\"scale\",\"by\":0.00392156862745098},"
	    "{\"type\":\"conv2d\",\"filters\":32,\"kernel\":8,\"stride\":4},{\"type\":\"relu\"},"
	    "{\"type\":\"conv2d\",\"filters\":64,\"kernel\":4,\"stride\":2},{\"type\":\"relu\"},"
	    "{\"type\":\"conv2d\",\"filters\":64,\"kernel\":3,\"stride\":1},{\"type\":\"relu\"},"
	    "{\"type\":\"flatten\"},{\"type\":\"linear\",\"out\":512},{\"type\":\"relu\"}],"
	    "\"init\":\"orthogonal\"}";
	const int64_t shape[3] = {84, 84, 4};
	seed_model *m = NULL;
	seed_err err;
	if (seed_model_new(&m, nature, SEED_DTYPE_U8, 3, shape, A, MAXB, &err) < 0) {
		fprintf(stderr, "dnnl_bench: %s\n", err.msg);
		return 1;
	}
	seed_rng r;
	seed_rng_init(&r, 1, 0);
	seed_model_init(m, &r);
	/* Frames: random bits, half set, as nn_bench's Nature rows. */
	unsigned char *frames = malloc((size_t)MAXB * 84 * 84 * 4);
	for (size_t i = 0; i < (size_t)MAXB * 84 * 84 * 4; i++)
		frames[i] = (unsigned char)seed_rng_below(&r, 2);
	ctx c = {NULL,
	         m,
	         0,
	         frames,
	         randn(&r, (size_t)MAXB * A),
	         randn(&r, MAXB),
	         randn(&r, (size_t)MAXB * A),
	         randn(&r, MAXB)};

	static const int Bs[4] = {32, 128, 160, 512};
	char sum[256];
	seed_model_summary(m, sum, sizeof sum);
	printf("network: %s\n", sum);
	double t[4][4];
	for (int k = 0; k < 4; k++) {
		dnet n;
		dnet_build(&n, Bs[k]);
		dnet_load(&n, m);
		c.n = &n;
		c.B = Bs[k];
		check_same(&c);
		t[k][0] = bench_time_it(d_forward, &c);
		t[k][1] = bench_time_it(s_forward, &c);
		t[k][2] = bench_time_it(d_train, &c);
		t[k][3] = bench_time_it(s_train, &c);
		/* The primitives and memories of this size are left to the
		 * process's end: a benchmark, not a library. */
	}
	printf("\n| B | oneDNN forward rows/s | Seed forward rows/s | oneDNN forward+backward rows/s | Seed "
	       "forward+backward rows/s | oneDNN f+b us | Seed f+b us "
	       "|\n|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int k = 0; k < 4; k++)
		printf("| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", Bs[k], Bs[k] / t[k][0],
		       Bs[k] / t[k][1], Bs[k] / t[k][2], Bs[k] / t[k][3], t[k][2] * 1e6, t[k][3] * 1e6);
	seed_model_free(&m);
	return 0;
}
