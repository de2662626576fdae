/* test_model_gaussian.c: the continuous-control heads of seed_model (seed/nn.h
 * "policy": {"type": "gaussian"} and "critic_torso"): forward against the
 * layers written out in double here, every parameter's gradient by central
 * differences of the model's own forward, the parameter table and its
 * order, the initialisation (gains, log_std_init, draws in slab order), the
 * description's errors, a checkpoint round trip, and the population forward
 * (the members' means, full and low rank). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed/checkpoint.h"
#include "seed/nn.h"
#include "seed/popnet.h"
#include "tap.h"
#include "tmpdir.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static seed_model *model(const char *json, int obs_n, int A, int max_batch)
{
	const int64_t shape[1] = {obs_n};
	seed_model *m = NULL;
	seed_err err = {{0}};
	int rc = seed_model_new(&m, json, SEED_DTYPE_F32, 1, shape, A, max_batch, &err);
	CHECK_MSG(rc == 0, "%s: %s", json, err.msg);
	return rc == 0 ? m : NULL;
}

/* Tensor name's values (n of them), or NULL when there is no such tensor
 * of n values. */
static float *tensor(seed_model *m, const char *name, size_t n)
{
	const seed_model_param *p = seed_model_param_find(m, name);
	CHECK_MSG(p && p->numel == n, "tensor %s of %zu values", name, n);
	return p && p->numel == n ? seed_model_params(m) + p->offset : NULL;
}

/* Every parameter normal with standard deviation sd, so that every path
 * carries gradient (the initialisation's 0.01 policy gain would not). */
static void randomise(seed_model *m, uint64_t seed, double sd)
{
	seed_rng rng;
	seed_rng_init(&rng, seed, 3);
	float *p = seed_model_params(m);
	for (size_t j = 0; j < seed_model_num_params(m); j++)
		p[j] = (float)(sd * seed_rng_normal(&rng));
}

/* y (n_out) = W x + b, W [n_out, n_in], in double. */
static void dense(int n_out, int n_in, const float *W, const float *b, const double *x, double *y)
{
	for (int o = 0; o < n_out; o++) {
		double s = b[o];
		for (int i = 0; i < n_in; i++)
			s += (double)W[o * n_in + i] * x[i];
		y[o] = s;
	}
}

/* ---- the parameter table ------------------------------------------------ */

struct tcase {
	const char *json;
	int obs, A, P;
	const char *names[12];
	int64_t numel[12];
};

static const struct tcase tables[] = {
    /* A linear Gaussian policy (ARS): no hidden layer. */
    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\"}}",
     3,
     2,
     4,
     {"policy.weight", "value.weight", "policy.bias", "value.bias", "policy.log_std"},
     {6, 3, 2, 1, 2}},
    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std\": \"state\", \"squash\": \"tanh\"}}",
     3,
     2,
     4,
     {"policy.weight", "value.weight", "policy.bias", "value.bias"},
     {12, 3, 4, 1}},
    /* CleanRL's continuous PPO agent. */
    {"{\"torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}, {\"type\": \"linear\", "
     "\"out\": 64},"
     " {\"type\": \"tanh\"}], \"critic_torso\": [{\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"},"
     " {\"type\": \"linear\", \"out\": 64}, {\"type\": \"tanh\"}], \"policy\": {\"type\": \"gaussian\"}}",
     17,
     6,
     12,
     {"torso.0.weight", "torso.0.bias", "torso.2.weight", "torso.2.bias", "critic_torso.0.weight",
      "critic_torso.0.bias", "critic_torso.2.weight", "critic_torso.2.bias", "policy.weight", "value.weight",
      "policy.bias", "value.bias"},
     {64 * 17, 64, 64 * 64, 64, 64 * 17, 64, 64 * 64, 64, 6 * 64, 64, 6, 1}},
    /* A categorical policy with a critic torso of its own. */
    {"{\"torso\": [{\"type\": \"linear\", \"out\": 5}], \"critic_torso\": [], \"policy\": {\"type\": "
     "\"categorical\"}}",
     4,
     3,
     3,
     {"torso.0.weight", "torso.0.bias", "policy.weight", "value.weight", "policy.bias", "value.bias"},
     {20, 5, 15, 4, 3, 1}},
};

static void t_param_table(void)
{
	for (int c = 0; c < LEN(tables); c++) {
		const struct tcase *tc = &tables[c];
		seed_model *m = model(tc->json, tc->obs, tc->A, 4);
		if (!m)
			continue;
		CHECK(seed_model_policy_width(m) == tc->P);
		CHECK(seed_model_num_actions(m) == tc->A);
		int n = 0;
		size_t off = 0;
		while (n < 12 && tc->names[n])
			n++;
		/* The CleanRL case ends with policy.log_std too. */
		if (c == 2) {
			CHECK(seed_model_num_tensors(m) == n + 1);
			const seed_model_param *ls = seed_model_param_at(m, n);
			CHECK(ls && strcmp(ls->name, "policy.log_std") == 0 && ls->numel == 6);
		} else {
			CHECK(seed_model_num_tensors(m) == n);
		}
		for (int i = 0; i < n; i++) {
			const seed_model_param *p = seed_model_param_at(m, i);
			CHECK_MSG(p && strcmp(p->name, tc->names[i]) == 0 &&
			              (int64_t)p->numel == tc->numel[i] && p->offset == off,
			          "case %d tensor %d: %s", c, i, p ? p->name : "(none)");
			if (p)
				off += p->numel;
		}
		seed_model_free(&m);
	}
	/* CleanRL's agent: 17 -> 64 -> 64 twice, 6 means, 6 log-stds, 1 value. */
	seed_model *m = model(tables[2].json, 17, 6, 4);
	if (m) {
		CHECK(seed_model_num_params(m) ==
		      (size_t)2 * (17 * 64 + 64 + 64 * 64 + 64) + 6 * 64 + 6 + 64 + 1 + 6);
		CHECK(seed_model_policy_kind(m) == SEED_POLICY_GAUSSIAN);
		seed_squash sq = SEED_SQUASH_TANH;
		CHECK(seed_model_squash(m, &sq) == 0 && sq == SEED_SQUASH_CLIP);
		char buf[256];
		seed_model_summary(m, buf, sizeof buf);
		CHECK_MSG(
		    strcmp(buf,
		           "f32[17] linear(64) tanh linear(64) tanh | critic linear(64) tanh linear(64) tanh"
		           " | heads gaussian(6,parameter,clip)+1 | 11085 params") == 0,
		    "%s", buf);
		seed_model_free(&m);
	}
	m = model("{\"torso\": []}", 3, 2, 1);
	if (m) {
		seed_squash sq = SEED_SQUASH_TANH;
		CHECK(seed_model_policy_kind(m) == SEED_POLICY_CATEGORICAL);
		CHECK(seed_model_policy_width(m) == 2);
		CHECK(seed_model_squash(m, &sq) == -EINVAL && sq == SEED_SQUASH_TANH);
		CHECK(strcmp(seed_model_policy_name(SEED_POLICY_GAUSSIAN), "gaussian") == 0);
		CHECK(strcmp(seed_model_policy_name(SEED_POLICY_CATEGORICAL), "categorical") == 0);
		seed_model_free(&m);
	}
}

/* ---- forward against the layers in double -------------------------------- */

/* The linear Gaussian policy: logits [W x + b, log_std], value v x + c. */
static void t_forward_linear(void)
{
	for (int state = 0; state < 2; state++) {
		seed_model *m =
		    model(state ? "{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std\": "
		                  "\"state\", \"squash\": \"tanh\"}}"
		                : "{\"torso\": [], \"policy\": {\"type\": \"gaussian\"}}",
		          3, 2, 4);
		if (!m)
			continue;
		randomise(m, 11 + state, 0.7);
		int Ph = state ? 4 : 2;
		float *W = tensor(m, "policy.weight", (size_t)Ph * 3),
		      *b = tensor(m, "policy.bias", (size_t)Ph);
		float *V = tensor(m, "value.weight", 3), *c = tensor(m, "value.bias", 1);
		float *ls = state ? NULL : tensor(m, "policy.log_std", 2);
		if (!W || !b || !V || !c || (!state && !ls)) {
			seed_model_free(&m);
			continue;
		}
		const float obs[3 * 3] = {0.5f, -1.0f, 2.0f, 0.0f, 0.25f, -0.75f, 3.0f, 1.0f, -2.0f};
		float lg[3 * 4], v[3];
		CHECK(seed_model_forward(m, 3, obs, lg, v) == 0);
		for (int r = 0; r < 3; r++) {
			double x[3] = {obs[r * 3], obs[r * 3 + 1], obs[r * 3 + 2]}, y[4], val;
			dense(Ph, 3, W, b, x, y);
			dense(1, 3, V, c, x, &val);
			for (int i = 0; i < 4; i++) {
				double want = i < Ph ? y[i] : ls[i - 2];
				CHECK_NEAR(lg[r * 4 + i], want, 1e-5 * (1 + fabs(want)));
			}
			CHECK_NEAR(v[r], val, 1e-5 * (1 + fabs(val)));
		}
		seed_model_free(&m);
	}
}

/* Actor and critic torsos on the same observation. */
static void t_forward_critic(void)
{
	seed_model *m = model("{\"torso\": [{\"type\": \"linear\", \"out\": 3}, {\"type\": \"tanh\"}],"
	                      " \"critic_torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"relu\"},"
	                      " {\"type\": \"linear\", \"out\": 2}, {\"type\": \"tanh\"}],"
	                      " \"policy\": {\"type\": \"gaussian\", \"log_std_init\": -0.5}}",
	                      2, 1, 5);
	if (!m)
		return;
	randomise(m, 21, 0.8);
	float *W0 = tensor(m, "torso.0.weight", 6), *b0 = tensor(m, "torso.0.bias", 3);
	float *C0 = tensor(m, "critic_torso.0.weight", 8), *c0 = tensor(m, "critic_torso.0.bias", 4);
	float *C2 = tensor(m, "critic_torso.2.weight", 8), *c2 = tensor(m, "critic_torso.2.bias", 2);
	float *P = tensor(m, "policy.weight", 3), *pb = tensor(m, "policy.bias", 1);
	float *V = tensor(m, "value.weight", 2), *vb = tensor(m, "value.bias", 1);
	float *ls = tensor(m, "policy.log_std", 1);
	if (!W0 || !b0 || !C0 || !c0 || !C2 || !c2 || !P || !pb || !V || !vb || !ls) {
		seed_model_free(&m);
		return;
	}
	float obs[5 * 2], lg[5 * 2], v[5];
	seed_rng rng;
	seed_rng_init(&rng, 22, 0);
	for (int i = 0; i < 10; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	CHECK(seed_model_forward(m, 5, obs, lg, v) == 0);
	for (int r = 0; r < 5; r++) {
		double x[2] = {obs[2 * r], obs[2 * r + 1]}, h[3], mean, g[4], k[2], val;
		dense(3, 2, W0, b0, x, h);
		for (int i = 0; i < 3; i++)
			h[i] = tanh(h[i]);
		dense(1, 3, P, pb, h, &mean);
		dense(4, 2, C0, c0, x, g);
		for (int i = 0; i < 4; i++)
			g[i] = g[i] > 0 ? g[i] : 0;
		dense(2, 4, C2, c2, g, k);
		for (int i = 0; i < 2; i++)
			k[i] = tanh(k[i]);
		dense(1, 2, V, vb, k, &val);
		CHECK_NEAR(lg[2 * r], mean, 1e-5 * (1 + fabs(mean)));
		CHECK(lg[2 * r + 1] == ls[0]);
		CHECK_NEAR(v[r], val, 1e-5 * (1 + fabs(val)));
	}
	/* Logits alone or values alone give the same. */
	float lg2[5 * 2], v2[5];
	CHECK(seed_model_forward(m, 5, obs, lg2, NULL) == 0 && memcmp(lg, lg2, sizeof lg) == 0);
	CHECK(seed_model_forward(m, 5, obs, NULL, v2) == 0 && memcmp(v, v2, sizeof v) == 0);
	seed_model_free(&m);
}

/* ---- gradients ------------------------------------------------------------ */

/* Every parameter's gradient of L = sum c . logits + sum d . values (either
 * term dropped: NULL gradients mean zero) against central differences of
 * the model's own forward (float steps and tolerances, as test_nn's). */
static void grad_check(const char *json, int obs_n, int A, int B, uint64_t seed, int which)
{
	seed_model *m = model(json, obs_n, A, B);
	if (!m)
		return;
	randomise(m, seed, 0.5);
	int P = seed_model_policy_width(m);
	float *obs = malloc((size_t)B * obs_n * sizeof *obs), *cl = malloc((size_t)B * P * sizeof *cl);
	float *lg = malloc((size_t)B * P * sizeof *lg), cv[16], v[16];
	seed_rng rng;
	seed_rng_init(&rng, seed, 9);
	for (int i = 0; i < B * obs_n; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	for (int i = 0; i < B * P; i++)
		cl[i] = (float)seed_rng_normal(&rng);
	for (int b = 0; b < B; b++)
		cv[b] = (float)seed_rng_normal(&rng);
	const float *dl = which & 1 ? cl : NULL, *dv = which & 2 ? cv : NULL;
	seed_model_zero_grad(m);
	CHECK(seed_model_forward(m, B, obs, lg, v) == 0);
	CHECK(seed_model_backward(m, B, dl, dv) == 0);
	float *p = seed_model_params(m);
	const float *g = seed_model_grads(m);
	size_t np = seed_model_num_params(m);
	int bad = 0, nonzero = 0;
	for (size_t j = 0; j < np; j++) {
		const float h = 1e-2f;
		float save = p[j];
		double L[2];
		for (int s = 0; s < 2; s++) {
			p[j] = save + (s ? -h : h);
			seed_model_forward(m, B, obs, lg, v);
			L[s] = 0;
			for (int i = 0; dl && i < B * P; i++)
				L[s] += (double)cl[i] * lg[i];
			for (int b = 0; dv && b < B; b++)
				L[s] += (double)cv[b] * v[b];
		}
		p[j] = save;
		double num = (L[0] - L[1]) / (2 * (double)h);
		nonzero += fabs(num) > 1e-3;
		if (fabs(num - g[j]) > 2e-3 + 2e-2 * fabs(num) && bad++ < 5)
			printf("# %s: param %zu: backward %.6g, central differences %.6g\n", json, j,
			       (double)g[j], num);
	}
	CHECK(bad == 0);
	CHECK(nonzero > 0);
	free(obs);
	free(cl);
	free(lg);
	seed_model_free(&m);
}

#define MLP                                                                                                  \
	"[{\"type\": \"linear\", \"out\": 6}, {\"type\": \"tanh\"}, {\"type\": \"linear\", \"out\": 5}, "    \
	"{\"type\": \"tanh\"}]"

static void t_grad_gaussian_parameter(void)
{
	grad_check("{\"torso\": " MLP ", \"policy\": {\"type\": \"gaussian\"}}", 4, 3, 5, 31, 3);
	grad_check("{\"torso\": [], \"policy\": {\"type\": \"gaussian\"}}", 4, 2, 6, 32, 3);
}

static void t_grad_gaussian_state(void)
{
	grad_check("{\"torso\": " MLP ", \"policy\": {\"type\": \"gaussian\", \"log_std\": \"state\"}}", 4, 3,
	           5, 33, 3);
	grad_check("{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std\": \"state\", \"squash\": "
	           "\"tanh\"}}",
	           3, 2, 4, 34, 3);
}

static void t_grad_critic_torso(void)
{
	const char *cleanrl =
	    "{\"torso\": " MLP ", \"critic_torso\": " MLP ", \"policy\": {\"type\": \"gaussian\"}}";
	grad_check(cleanrl, 4, 2, 5, 35, 3);
	grad_check(cleanrl, 4, 2, 5, 36, 1); /* the policy's alone */
	grad_check(cleanrl, 4, 2, 5, 37, 2); /* the value's alone */
	grad_check(
	    "{\"torso\": [], \"critic_torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"tanh\"}],"
	    " \"policy\": {\"type\": \"gaussian\", \"log_std\": \"state\"}}",
	    3, 2, 4, 38, 3);
	grad_check("{\"torso\": " MLP ", \"critic_torso\": []}", 4, 3, 5, 39, 3);
}

static void t_grad_gaussian_core(void)
{
	grad_check(
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 4}, {\"type\": \"tanh\"}], \"core\": {\"type\": "
	    "\"lstm\", \"units\": 3, \"prev_reward\": true}, \"policy\": {\"type\": \"gaussian\"}}",
	    3, 2, 4, 40, 3);
}

/* ---- initialisation -------------------------------------------------------- */

/* The largest |G - gain^2 I| of the Gram matrix of w's shorter side:
 * orthogonal rows (or columns) with norm gain. */
static double orth_error(const float *w, int rows, int cols, double gain)
{
	int n = rows <= cols ? rows : cols;
	double worst = 0;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			double s = 0;
			for (int k = 0; k < (rows <= cols ? cols : rows); k++)
				s += rows <= cols ? (double)w[a * cols + k] * w[b * cols + k]
				                  : (double)w[k * cols + a] * w[k * cols + b];
			worst = fmax(worst, fabs(s - (a == b ? gain * gain : 0)));
		}
	return worst;
}

static void t_init(void)
{
	const char *json = "{\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": \"tanh\"}],"
	                   " \"critic_torso\": [{\"type\": \"linear\", \"out\": 6}, {\"type\": \"tanh\"}],"
	                   " \"policy\": {\"type\": \"gaussian\", \"log_std_init\": -1.5}}";
	seed_model *m = model(json, 5, 3, 2);
	seed_model *plain =
	    model("{\"torso\": [{\"type\": \"linear\", \"out\": 8}, {\"type\": \"tanh\"}]}", 5, 3, 2);
	if (m && plain) {
		seed_rng a, b;
		seed_rng_init(&a, 51, 0);
		seed_rng_init(&b, 51, 0);
		seed_model_init(m, &a);
		seed_model_init(plain, &b);
		const float *t0 = tensor(m, "torso.0.weight", 40),
		            *c0 = tensor(m, "critic_torso.0.weight", 30);
		const float *pw = tensor(m, "policy.weight", 24), *vw = tensor(m, "value.weight", 6);
		const float *ls = tensor(m, "policy.log_std", 3), *vb = tensor(m, "value.bias", 1);
		if (t0 && c0 && pw && vw && ls && vb) {
			CHECK(orth_error(t0, 8, 5, sqrt(2.0)) < 1e-5);
			CHECK(orth_error(c0, 6, 5, sqrt(2.0)) < 1e-5);
			CHECK(orth_error(pw, 3, 8, 0.01) < 1e-8);
			CHECK(orth_error(vw, 1, 6, 1.0) < 1e-5);
			for (int i = 0; i < 3; i++)
				CHECK(ls[i] == -1.5f);
			CHECK(vb[0] == 0.0f);
			/* The torso is drawn first: the same as without a critic. */
			CHECK(memcmp(t0, tensor(plain, "torso.0.weight", 40), 40 * sizeof *t0) == 0);
		}
	}
	seed_model_free(&m);
	seed_model_free(&plain);
	/* "state": the log-std half of the policy's bias starts at
	 * log_std_init, the means' half at 0, whatever the scheme. */
	for (int pt = 0; pt < 2; pt++) {
		m = model(pt ? "{\"torso\": [], \"init\": \"pytorch\", \"policy\": {\"type\": \"gaussian\", "
		               "\"log_std\": "
		               "\"state\", \"log_std_init\": 0.5}}"
		             : "{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std\": \"state\", "
		               "\"log_std_init\": 0.5}}",
		          4, 2, 1);
		if (!m)
			continue;
		seed_rng r;
		seed_rng_init(&r, 52, 0);
		seed_model_init(m, &r);
		const float *pb = tensor(m, "policy.bias", 4), *pw = tensor(m, "policy.weight", 16);
		if (pb && pw) {
			CHECK(pb[2] == 0.5f && pb[3] == 0.5f);
			if (!pt) {
				CHECK(pb[0] == 0.0f && pb[1] == 0.0f);
				CHECK(orth_error(pw, 4, 4, 0.01) < 1e-8);
			}
		}
		seed_model_free(&m);
	}
	/* An explicit categorical policy is today's head, drawn alike. */
	seed_model *c1 = model("{\"torso\": [{\"type\": \"linear\", \"out\": 8}]}", 5, 3, 2);
	seed_model *c2 = model(
	    "{\"torso\": [{\"type\": \"linear\", \"out\": 8}], \"policy\": {\"type\": \"categorical\"}}", 5,
	    3, 2);
	if (c1 && c2) {
		seed_rng a, b;
		seed_rng_init(&a, 53, 0);
		seed_rng_init(&b, 53, 0);
		seed_model_init(c1, &a);
		seed_model_init(c2, &b);
		CHECK(seed_model_num_params(c1) == seed_model_num_params(c2));
		CHECK(memcmp(seed_model_params(c1), seed_model_params(c2),
		             seed_model_num_params(c1) * sizeof(float)) == 0);
	}
	seed_model_free(&c1);
	seed_model_free(&c2);
}

/* ---- errors ---------------------------------------------------------------- */

static void t_errors(void)
{
	static const struct {
		const char *json, *want[2];
	} cases[] = {
	    {"{\"torso\": [], \"policy\": \"gaussian\"}", {"\"policy\"", "object"}},
	    {"{\"torso\": [], \"policy\": {}}", {"policy", "\"type\" is missing"}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"beta\"}}",
	     {"policy", "\"categorical\" or \"gaussian\""}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"std\": 1}}",
	     {"policy", "unknown key \"std\""}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std\": \"learned\"}}",
	     {"\"log_std\"", "\"parameter\" or \"state\""}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std_init\": \"0\"}}",
	     {"\"log_std_init\"", "number"}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"log_std_init\": 50}}",
	     {"\"log_std_init\"", "-20..20"}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\", \"squash\": \"sigmoid\"}}",
	     {"\"squash\"", "\"clip\" or \"tanh\""}},
	    {"{\"torso\": [], \"policy\": {\"type\": \"categorical\", \"squash\": \"tanh\"}}",
	     {"categorical", "no key"}},
	    {"{\"torso\": [], \"head\": \"dueling\", \"policy\": {\"type\": \"gaussian\"}}",
	     {"gaussian", "actor-critic"}},
	    {"{\"torso\": [], \"critic_torso\": {\"type\": \"linear\"}}", {"\"critic_torso\"", "list"}},
	    {"{\"torso\": [], \"critic_torso\": [{\"type\": \"linear\", \"out\": 0}]}",
	     {"critic_torso[0] (linear)", "\"out\""}},
	    {"{\"torso\": [], \"critic_torso\": [{\"type\": \"tanh\"}, {\"type\": \"dense\"}]}",
	     {"critic_torso[1]", "\"type\""}},
	    {"{\"torso\": [{\"type\": \"linear\", \"out\": 2}], \"critic_torso\": [],"
	     " \"core\": {\"type\": \"lstm\", \"units\": 2}}",
	     {"\"critic_torso\"", "\"core\""}},
	    {"{\"torso\": [], \"critic_torso\": [], \"head\": \"dueling\"}", {"\"critic_torso\"", "dueling"}},
	    {"{\"torso\": [], \"core\": {\"type\": \"lstm\", \"units\": 2, \"prev_action\": true},"
	     " \"policy\": {\"type\": \"gaussian\"}}",
	     {"\"prev_action\"", "gaussian"}},
	    {"{\"torso\": [], \"critics\": []}", {"unknown key \"critics\"", "\"critic_torso\""}},
	};
	const int64_t shape[1] = {3};
	for (int i = 0; i < LEN(cases); i++) {
		seed_model *m = NULL;
		seed_err err = {{0}};
		int rc = seed_model_new(&m, cases[i].json, SEED_DTYPE_F32, 1, shape, 2, 4, &err);
		CHECK_MSG(rc == -SEED_EOPTION && !m, "%s: rc %d", cases[i].json, rc);
		for (int k = 0; k < 2; k++)
			CHECK_MSG(strstr(err.msg, cases[i].want[k]), "%s: \"%s\" lacks %s", cases[i].json,
			          err.msg, cases[i].want[k]);
		seed_model_free(&m);
	}
	/* A critic torso ending in an image is refused as the torso is. */
	const int64_t img[3] = {4, 4, 1};
	seed_model *m = NULL;
	seed_err err = {{0}};
	CHECK(seed_model_new(&m, "{\"torso\": [{\"type\": \"flatten\"}], \"critic_torso\": []}",
	                     SEED_DTYPE_F32, 3, img, 2, 1, &err) == -SEED_EOPTION);
	CHECK_MSG(strstr(err.msg, "critic torso") && strstr(err.msg, "flatten"), "%s", err.msg);
}

/* ---- checkpoints ------------------------------------------------------------ */

/* A Gaussian model with a critic torso saves its tensors by name and loads
 * back into a fresh model bit for bit. */
static void t_checkpoint(void)
{
	const char *json =
	    "{\"torso\": " MLP ", \"critic_torso\": " MLP ", \"policy\": {\"type\": \"gaussian\"}}";
	seed_model *m = model(json, 4, 2, 2), *m2 = model(json, 4, 2, 2);
	if (!m || !m2) {
		seed_model_free(&m);
		seed_model_free(&m2);
		return;
	}
	seed_rng rng;
	seed_rng_init(&rng, 61, 0);
	seed_model_init(m, &rng);
	tensor(m, "policy.log_std", 2)[1] = 0.375f; /* not its initial value */
	int n = seed_model_num_tensors(m);
	seed_checkpoint_tensor *ts = calloc((size_t)n, sizeof *ts);
	for (int i = 0; i < n; i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		ts[i].name = p->name;
		ts[i].tensor.dtype = SEED_DTYPE_F32;
		ts[i].tensor.rank = p->rank;
		memcpy(ts[i].tensor.shape, p->shape, sizeof p->shape);
		ts[i].tensor.data = seed_model_params(m) + p->offset;
	}
	seed_checkpoint ck = {.ntensors = (size_t)n, .tensors = ts};
	const char *dir = tmpdir_new();
	seed_err err = {{0}};
	CHECK_MSG(seed_checkpoint_save(dir, &ck, &err) == 0, "%s", err.msg);
	seed_checkpoint *got = NULL;
	CHECK_MSG(seed_checkpoint_load(dir, &got, &err) == 0, "%s", err.msg);
	if (got) {
		const seed_tensor *c = seed_checkpoint_get(got, "critic_torso.2.weight");
		CHECK(c && c->rank == 2 && c->shape[0] == 5 && c->shape[1] == 6);
		const seed_tensor *ls = seed_checkpoint_get(got, "policy.log_std");
		CHECK(ls && ls->rank == 1 && ls->shape[0] == 2);
		CHECK_MSG(seed_checkpoint_load_model(got, m2, &err) == 0, "%s", err.msg);
		CHECK(memcmp(seed_model_params(m), seed_model_params(m2),
		             seed_model_num_params(m) * sizeof(float)) == 0);
	}
	seed_checkpoint_free(&got);
	tmpdir_remove(dir);
	free(ts);
	seed_model_free(&m);
	seed_model_free(&m2);
}

/* ---- the population forward ------------------------------------------------- */

/* A population of Gaussian policies (with a critic torso, which it does not
 * run) gives each row its member's means: seed_model_forward's first A
 * logits with that member's parameters. */
static void t_popnet_means(void)
{
	enum { M = 3, ROWS = 7, OBS = 4, A = 2 };
	const char *json =
	    "{\"torso\": " MLP ", \"critic_torso\": " MLP ", \"policy\": {\"type\": \"gaussian\"}}";
	const int64_t shape[1] = {OBS};
	seed_popnet *net = NULL;
	seed_err err = {{0}};
	int rc = seed_popnet_new(&net, json, SEED_DTYPE_F32, 1, shape, A, ROWS, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	seed_model *ref = model(json, OBS, A, 1);
	if (rc || !ref) {
		seed_popnet_free(&net);
		seed_model_free(&ref);
		return;
	}
	size_t P = seed_popnet_num_params(net);
	CHECK(P == seed_model_num_params(ref));
	float *room = seed_popnet_full(net, M);
	seed_rng rng;
	seed_rng_init(&rng, 71, 0);
	for (size_t j = 0; j < (size_t)M * P; j++)
		room[j] = (float)(0.5 * seed_rng_normal(&rng));
	float *keep = malloc((size_t)M * P * sizeof *keep);
	memcpy(keep, room, (size_t)M * P * sizeof *keep);
	seed_popnet_ready(net);
	float obs[ROWS * OBS], got[ROWS * A];
	int32_t member[ROWS] = {2, 0, 1, 1, 2, 0, 2};
	for (int i = 0; i < ROWS * OBS; i++)
		obs[i] = (float)seed_rng_normal(&rng);
	CHECK_MSG(seed_popnet_forward(net, ROWS, obs, member, got, &err) == 0, "%s", err.msg);
	for (int r = 0; r < ROWS; r++) {
		float want[2 * A];
		CHECK(seed_model_load_params(ref, keep + (size_t)member[r] * P, P * sizeof(float)) == 0);
		CHECK(seed_model_forward(ref, 1, obs + r * OBS, want, NULL) == 0);
		for (int a = 0; a < A; a++)
			CHECK_NEAR(got[r * A + a], want[a], 1e-5 * (1 + fabs(want[a])));
	}
	/* Low rank: a centre and slices whose 2-D parts are zero and whose
	 * other tensors' parts are not (seed/popnet.h's layout, walked over
	 * the table with the critic torso's tensors and policy.log_std in
	 * it): member m's parameters are the centre plus scale times those. */
	enum { R = 2 };
	size_t len = 0;
	for (int t = 0; t < seed_model_num_tensors(ref); t++) {
		const seed_model_param *tp = seed_model_param_at(ref, t);
		len += tp->rank == 2 ? (size_t)(tp->shape[0] + tp->shape[1]) * R : tp->numel;
	}
	float *slice = calloc(len, sizeof *slice), *centre = keep, *member_p = malloc(P * sizeof *member_p);
	seed_popnet_lowrank(net, M, R, centre);
	float *want_all = malloc((size_t)M * P * sizeof *want_all);
	for (int mm = 0; mm < M; mm++) {
		float scale = 0.5f + (float)mm;
		size_t pos = 0;
		memcpy(member_p, centre, P * sizeof *member_p);
		for (int t = 0; t < seed_model_num_tensors(ref); t++) {
			const seed_model_param *tp = seed_model_param_at(ref, t);
			if (tp->rank == 2) {
				size_t n = (size_t)(tp->shape[0] + tp->shape[1]) * R;
				memset(slice + pos, 0, n * sizeof *slice);
				pos += n;
				continue;
			}
			for (size_t i = 0; i < tp->numel; i++) {
				slice[pos + i] = (float)seed_rng_normal(&rng);
				member_p[tp->offset + i] = centre[tp->offset + i] + scale * slice[pos + i];
			}
			pos += tp->numel;
		}
		seed_popnet_lowrank_member(net, mm, slice, scale);
		memcpy(want_all + (size_t)mm * P, member_p, P * sizeof *member_p);
	}
	seed_popnet_ready(net);
	CHECK_MSG(seed_popnet_forward(net, ROWS, obs, member, got, &err) == 0, "%s", err.msg);
	for (int r = 0; r < ROWS; r++) {
		float want[2 * A];
		CHECK(seed_model_load_params(ref, want_all + (size_t)member[r] * P, P * sizeof(float)) == 0);
		CHECK(seed_model_forward(ref, 1, obs + r * OBS, want, NULL) == 0);
		for (int a = 0; a < A; a++)
			CHECK_NEAR(got[r * A + a], want[a], 1e-5 * (1 + fabs(want[a])));
	}
	free(slice);
	free(member_p);
	free(want_all);
	int32_t acts[ROWS];
	memset(&err, 0, sizeof err);
	CHECK(seed_popnet_act(net, ROWS, obs, member, true, NULL, acts, &err) == -EINVAL);
	CHECK(strstr(err.msg, "gaussian") != NULL);
	free(keep);
	seed_model_free(&ref);
	seed_popnet_free(&net);
}

int main(void)
{
	TAP_RUN(t_param_table);
	TAP_RUN(t_forward_linear);
	TAP_RUN(t_forward_critic);
	TAP_RUN(t_grad_gaussian_parameter);
	TAP_RUN(t_grad_gaussian_state);
	TAP_RUN(t_grad_critic_torso);
	TAP_RUN(t_grad_gaussian_core);
	TAP_RUN(t_init);
	TAP_RUN(t_errors);
	TAP_RUN(t_checkpoint);
	TAP_RUN(t_popnet_means);
	return tap_done();
}
