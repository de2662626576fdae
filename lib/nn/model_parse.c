/* model_parse.c: a model's JSON description into its layers and shapes.
 *
 * The parsing half of model.c's description (seed/nn.h gives the
 * language): the top-level keys ("torso", "critic_torso", "core", "policy",
 * "init", "head", "obs_norm"), each layer of the torso and of the critic torso by its
 * kind (a table of kinds, one parsing function each, which checks the
 * layer's keys and computes its output shape from its input's), the
 * optional LSTM core, the fused head after them, and the value head after
 * a critic torso.  Every error is -SEED_EOPTION with a message that names
 * the layer or key ("model: torso[2] (conv2d): ...", "model:
 * critic_torso[0] (linear): ...", "model: policy (gaussian): ...").  Nothing here touches parameters:
 * model_layout.c lays them out once the shapes are known.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "seed/buf.h"
#include "seed/gaussian.h"

/* The most values a scale layer's "by" may hold. */
#define SCALE_MAX 65536

/* The largest conv2d kernel and stride. */
#define CONV_MAX 4096

/* The most units a core may have (its recurrent kernel is H x 4H). */
#define CORE_MAX_UNITS 4096

/* The most torso layers. */
#define TORSO_MAX 1000

static int bad(seed_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(seed_err *err, const char *fmt, ...)
{
	if (err) {
		char msg[sizeof err->msg];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		seed_err_set(err, 0, "model: %s", msg);
	}
	return -SEED_EOPTION;
}

void model_shape_str(char *buf, size_t len, int rank, const int64_t *shape)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* A positive integer member `key` of layer i, at most max. */
static int get_count(const json_t *obj, const char *at, const char *type, const char *key, long long max,
                     int *out, seed_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (!v)
		return bad(err, "%s (%s): key \"%s\" is missing", at, type, key);
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
		return bad(err, "%s (%s): key \"%s\" must be an integer in 1..%lld", at, type, key, max);
	*out = (int)json_integer_value(v);
	return 0;
}

/* A conv2d's "padding": absent or "valid" (none), "same", or the rows and
 * columns of zeros on every side, 0..k-1 (with k or more, some outputs
 * would see only zeros).  Sets L->pad and L->same; L->k is known. */
static int parse_padding(const json_t *obj, const char *at, layer *L, seed_err *err)
{
	const json_t *v = json_object_get(obj, "padding");
	const char *s = json_string_value(v);
	L->pad = 0;
	L->same = false;
	if (!v || (s && strcmp(s, "valid") == 0))
		return 0;
	if (s && strcmp(s, "same") == 0) {
		L->same = true;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= L->k)
		return bad(err,
		           "%s (conv2d): key \"padding\" must be \"valid\", \"same\" or an integer "
		           "in 0..%d (less than the kernel, %d)",
		           at, L->k - 1, L->k);
	L->pad = (int)json_integer_value(v);
	return 0;
}

/* Only the keys in `allowed` (NULL-terminated) and "type". */
static int check_keys(const json_t *obj, const char *at, const char *type, const char *const *allowed,
                      seed_err *err)
{
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		int ok = strcmp(key, "type") == 0;
		for (int j = 0; allowed[j] && !ok; j++)
			ok = strcmp(key, allowed[j]) == 0;
		if (!ok)
			return bad(err, "%s (%s): unknown key \"%s\"", at, type, key);
	}
	return 0;
}

/* One torso layer kind's parser: the keys of obj (layer i, of type `type`)
 * into L, and L's output shape from its input shape (already in L; shp is
 * that shape written out for messages). */
typedef int parse_fn(const json_t *obj, const char *at, const char *type, const char *shp, layer *L,
                     seed_err *err);

static int parse_linear(const json_t *obj, const char *at, const char *type, const char *shp, layer *L,
                        seed_err *err)
{
	static const char *const keys[] = {"out", NULL};
	int rc;
	if ((rc = check_keys(obj, at, type, keys, err)) < 0)
		return rc;
	if ((rc = get_count(obj, at, type, "out", 1 << 20, &L->n_out, err)) < 0)
		return rc;
	if (L->rank_in != 1)
		return bad(err, "%s (linear): input has shape %s: put a flatten layer before it", at, shp);
	L->n_in = (int)L->shape_in[0];
	L->rank_out = 1;
	L->shape_out[0] = L->n_out;
	return 0;
}

/* A conv2d's output size and padding from its keys (L->k, S, pad, same
 * set). */
static int conv_output(const char *at, const char *shp, layer *L, seed_err *err)
{
	if (L->same) {
		/* TensorFlow's and PyTorch's "same": ceil(H / S) outputs,
		 * the padding they need split with the odd row or column
		 * at the bottom or right. */
		L->OH = (L->H + L->S - 1) / L->S;
		L->OW = (L->W + L->S - 1) / L->S;
		int ph = (L->OH - 1) * L->S + L->k - L->H, pw = (L->OW - 1) * L->S + L->k - L->W;
		L->pt = ph > 0 ? ph / 2 : 0;
		L->pl = pw > 0 ? pw / 2 : 0;
		return 0;
	}
	long long hp = (long long)L->H + 2LL * L->pad, wp = (long long)L->W + 2LL * L->pad;
	if (L->k > hp || L->k > wp)
		return bad(err,
		           "%s (conv2d): key \"kernel\" is %d, larger than the padded "
		           "input %lldx%lld (input %s, padding %d)",
		           at, L->k, hp, wp, shp, L->pad);
	L->pt = L->pl = L->pad;
	L->OH = (int)((hp - L->k) / L->S + 1);
	L->OW = (int)((wp - L->k) / L->S + 1);
	return 0;
}

static int parse_conv2d(const json_t *obj, const char *at, const char *type, const char *shp, layer *L,
                        seed_err *err)
{
	static const char *const keys[] = {"filters", "kernel", "stride", "padding", NULL};
	int rc;
	if ((rc = check_keys(obj, at, type, keys, err)) < 0)
		return rc;
	if (L->rank_in != 3)
		return bad(err, "%s (conv2d): input has shape %s, not [H,W,C]", at, shp);
	L->H = (int)L->shape_in[0];
	L->W = (int)L->shape_in[1];
	L->C = (int)L->shape_in[2];
	if ((rc = get_count(obj, at, type, "filters", 1 << 16, &L->F, err)) < 0)
		return rc;
	if ((rc = get_count(obj, at, type, "kernel", CONV_MAX, &L->k, err)) < 0)
		return rc;
	L->S = 1; /* the keys' defaults: the layer as it was before them */
	if (json_object_get(obj, "stride") &&
	    (rc = get_count(obj, at, type, "stride", CONV_MAX, &L->S, err)) < 0)
		return rc;
	if ((rc = parse_padding(obj, at, L, err)) < 0)
		return rc;
	if ((rc = conv_output(at, shp, L, err)) < 0)
		return rc;
	L->rank_out = 3;
	L->shape_out[0] = L->OH;
	L->shape_out[1] = L->OW;
	L->shape_out[2] = L->F;
	return 0;
}

/* "by": one factor, or one per element of the last dimension (features of
 * a vector, channels of an image). */
static int parse_scale(const json_t *obj, const char *at, const char *type, const char *shp, layer *L,
                       seed_err *err)
{
	static const char *const keys[] = {"by", NULL};
	int rc;
	if ((rc = check_keys(obj, at, type, keys, err)) < 0)
		return rc;
	const json_t *by = json_object_get(obj, "by");
	int64_t last = L->rank_in > 0 ? L->shape_in[L->rank_in - 1] : 1;
	size_t n = json_is_array(by) ? json_array_size(by) : 1;
	if (!by || !(json_is_number(by) || (json_is_array(by) && (n == 1 || (int64_t)n == last))))
		return bad(err,
		           "%s (scale): key \"by\" must be a number or an array of 1 or %lld "
		           "numbers (the input's last dimension; input shape %s)",
		           at, (long long)last, shp);
	if (n > SCALE_MAX)
		return bad(err, "%s (scale): key \"by\" has %zu values, more than %d", at, n, SCALE_MAX);
	L->scale = seed_xmalloc(n * sizeof *L->scale);
	L->nscale = (int)n;
	for (size_t j = 0; j < n; j++) {
		const json_t *e = json_is_array(by) ? json_array_get(by, j) : by;
		double x = json_number_value(e);
		if (!json_is_number(e) || !isfinite(x) || fabs(x) > 1e30)
			return bad(err,
			           "%s (scale): \"by\"[%zu] must be a finite number of magnitude at "
			           "most 1e30",
			           at, j);
		L->scale[j] = (float)x;
	}
	L->rank_out = L->rank_in;
	memcpy(L->shape_out, L->shape_in, sizeof L->shape_out);
	return 0;
}

/* relu, tanh, flatten: no keys; flatten makes a row one vector. */
static int parse_plain(const json_t *obj, const char *at, const char *type, const char *shp, layer *L,
                       seed_err *err)
{
	static const char *const keys[] = {NULL};
	(void)shp;
	int rc;
	if ((rc = check_keys(obj, at, type, keys, err)) < 0)
		return rc;
	if (L->kind == L_FLATTEN) {
		L->rank_out = 1;
		L->shape_out[0] = (int64_t)L->numel_in;
	} else {
		L->rank_out = L->rank_in;
		memcpy(L->shape_out, L->shape_in, sizeof L->shape_out);
	}
	return 0;
}

/* The torso's layer kinds, in enum layer_kind's order. */
static const struct {
	const char *name;
	parse_fn *parse;
} kinds[] = {
    [L_LINEAR] = {"linear", parse_linear},  [L_CONV2D] = {"conv2d", parse_conv2d},
    [L_RELU] = {"relu", parse_plain},       [L_TANH] = {"tanh", parse_plain},
    [L_FLATTEN] = {"flatten", parse_plain}, [L_SCALE] = {"scale", parse_scale},
};

const char *model_kind_name(enum layer_kind kind)
{
	return kinds[kind].name;
}

/* Parse layer i of the list called list ("torso", "critic_torso") into L, given its input shape (already in
 * L). */
static int parse_layer(const json_t *obj, const char *list, int i, layer *L, seed_err *err)
{
	char shp[96], at[48];
	snprintf(at, sizeof at, "%s[%d]", list, i);
	if (!json_is_object(obj))
		return bad(err, "%s: must be an object like {\"type\": \"linear\", \"out\": 64}", at);
	const json_t *t = json_object_get(obj, "type");
	if (!t)
		return bad(err, "%s: key \"type\" is missing", at);
	const char *type = json_string_value(t);
	int kind = -1;
	for (int j = 0; type && j < (int)(sizeof kinds / sizeof kinds[0]); j++)
		if (strcmp(type, kinds[j].name) == 0)
			kind = j;
	if (kind < 0)
		return bad(err, "%s: key \"type\" must be one of linear, conv2d, relu, tanh, flatten, scale",
		           at);
	L->kind = (enum layer_kind)kind;
	model_shape_str(shp, sizeof shp, L->rank_in, L->shape_in);
	int rc = kinds[kind].parse(obj, at, type, shp, L, err);
	if (rc < 0)
		return rc;
	L->numel_out = 1;
	for (int d = 0; d < L->rank_out; d++)
		L->numel_out *= (size_t)L->shape_out[d];
	if (L->numel_out > (size_t)1 << 28)
		return bad(err, "%s (%s): output of %zu values per row is too large", at, type, L->numel_out);
	return 0;
}

/* A boolean member `key` of the core, false when absent. */
static int get_flag(const json_t *obj, const char *key, bool *out, seed_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (v && !json_is_boolean(v))
		return bad(err, "core: key \"%s\" must be true or false", key);
	*out = v && json_is_true(v);
	return 0;
}

/* Parse the "core" object into c, on a torso output of D values per row. */
static int parse_core(const json_t *obj, int D, int A, model_core *c, seed_err *err)
{
	if (!json_is_object(obj))
		return bad(err, "key \"core\" must be an object like {\"type\": \"lstm\", \"units\": 64}");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)obj, key, v)
	{
		if (strcmp(key, "type") != 0 && strcmp(key, "units") != 0 &&
		    strcmp(key, "prev_reward") != 0 && strcmp(key, "prev_action") != 0)
			return bad(err,
			           "core: unknown key \"%s\" (expected \"type\", \"units\", \"prev_reward\", "
			           "\"prev_action\")",
			           key);
	}
	const json_t *t = json_object_get(obj, "type");
	if (!t)
		return bad(err, "core: key \"type\" is missing");
	if (!json_is_string(t) || strcmp(json_string_value(t), "lstm") != 0)
		return bad(err, "core: key \"type\" must be \"lstm\"");
	const json_t *u = json_object_get(obj, "units");
	if (!u)
		return bad(err, "core (lstm): key \"units\" is missing");
	if (!json_is_integer(u) || json_integer_value(u) < 1 || json_integer_value(u) > CORE_MAX_UNITS)
		return bad(err, "core (lstm): key \"units\" must be an integer in 1..%d", CORE_MAX_UNITS);
	int rc;
	if ((rc = get_flag(obj, "prev_reward", &c->prev_reward, err)) < 0 ||
	    (rc = get_flag(obj, "prev_action", &c->prev_action, err)) < 0)
		return rc;
	c->H = (int)json_integer_value(u);
	c->D = D;
	c->I = D + (c->prev_reward ? 1 : 0) + (c->prev_action ? A : 0);
	return 0;
}
/* One of the top-level keys' string values: "init" or "head". */
static int parse_init(const json_t *root, seed_model *m, seed_err *err)
{
	m->init = INIT_ORTHOGONAL;
	const json_t *ji = json_object_get(root, "init");
	if (!ji)
		return 0;
	const char *s = json_string_value(ji);
	if (s && strcmp(s, "orthogonal") == 0)
		m->init = INIT_ORTHOGONAL;
	else if (s && strcmp(s, "pytorch") == 0)
		m->init = INIT_PYTORCH;
	else
		return bad(err, "key \"init\" must be \"orthogonal\" or \"pytorch\"");
	return 0;
}

static int parse_head(const json_t *root, seed_model *m, seed_err *err)
{
	m->head = SEED_HEAD_ACTOR_CRITIC;
	const json_t *jh = json_object_get(root, "head");
	if (!jh)
		return 0;
	const char *s = json_string_value(jh);
	if (s && strcmp(s, "actor-critic") == 0)
		m->head = SEED_HEAD_ACTOR_CRITIC;
	else if (s && strcmp(s, "dueling") == 0)
		m->head = SEED_HEAD_DUELING;
	else
		return bad(err, "key \"head\" must be \"actor-critic\" or \"dueling\"");
	return 0;
}

/* "policy": the actor-critic head's distribution.  Sets m->policy (its
 * widths too: they depend on A alone). */
static int parse_policy(const json_t *root, seed_model *m, seed_err *err)
{
	model_policy *p = &m->policy;
	p->kind = SEED_POLICY_CATEGORICAL;
	p->squash = SEED_SQUASH_CLIP;
	p->P = p->Ph = m->A;
	const json_t *jp = json_object_get(root, "policy");
	if (!jp)
		return 0;
	if (!json_is_object(jp))
		return bad(err, "key \"policy\" must be an object like {\"type\": \"gaussian\"}");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)jp, key, v)
	{
		if (strcmp(key, "type") != 0 && strcmp(key, "log_std") != 0 &&
		    strcmp(key, "log_std_init") != 0 && strcmp(key, "squash") != 0)
			return bad(err,
			           "policy: unknown key \"%s\" (expected \"type\", \"log_std\", "
			           "\"log_std_init\", \"squash\")",
			           key);
	}
	const char *type = json_string_value(json_object_get(jp, "type"));
	if (!json_object_get(jp, "type"))
		return bad(err, "policy: key \"type\" is missing");
	if (type && strcmp(type, "categorical") == 0) {
		if (json_object_size(jp) > 1)
			return bad(err, "policy: a categorical policy takes no key but \"type\"");
		return 0;
	}
	if (!type || strcmp(type, "gaussian") != 0)
		return bad(err, "policy: key \"type\" must be \"categorical\" or \"gaussian\"");
	if (m->head != SEED_HEAD_ACTOR_CRITIC)
		return bad(err,
		           "policy: a gaussian policy needs the actor-critic head (not \"head\": \"%s\")",
		           seed_model_head_name(m->head));
	p->kind = SEED_POLICY_GAUSSIAN;
	const json_t *ls = json_object_get(jp, "log_std");
	const char *lss = json_string_value(ls);
	if (ls && !(lss && (strcmp(lss, "parameter") == 0 || strcmp(lss, "state") == 0)))
		return bad(err, "policy (gaussian): key \"log_std\" must be \"parameter\" or \"state\"");
	p->state_std = lss && strcmp(lss, "state") == 0;
	const json_t *li = json_object_get(jp, "log_std_init");
	if (li) {
		double x = json_number_value(li);
		if (!json_is_number(li) || !isfinite(x) || fabs(x) > 20)
			return bad(err,
			           "policy (gaussian): key \"log_std_init\" must be a number in -20..20");
		p->log_std_init = (float)x;
	}
	const json_t *sq = json_object_get(jp, "squash");
	if (sq && seed_gaussian_squash_parse(json_string_value(sq), &p->squash) < 0)
		return bad(err, "policy (gaussian): key \"squash\" must be \"clip\" or \"tanh\"");
	p->P = 2 * m->A;
	p->Ph = p->state_std ? 2 * m->A : m->A;
	return 0;
}

/* A positive finite number member `key` of "obs_norm", at most max, into
 * *out (left as it is when absent). */
static int get_positive(const json_t *obj, const char *key, double max, double *out, seed_err *err)
{
	const json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	double x = json_number_value(v);
	if (!json_is_number(v) || !isfinite(x) || x <= 0 || x > max)
		return bad(err, "obs_norm: key \"%s\" must be a number above 0, at most %g", key, max);
	*out = x;
	return 0;
}

/* "obs_norm": true (the defaults), false (none), or {"clip": c,
 * "epsilon": e} (each optional: 10 and 1e-8, CleanRL's and Gymnasium's
 * NormalizeObservation).  Vectors only: images are scaled ("scale"). */
static int parse_obs_norm(const json_t *root, seed_model *m, seed_err *err)
{
	model_obs_norm *nm = &m->norm;
	nm->on = false;
	nm->clip = 10;
	nm->eps = 1e-8;
	const json_t *jn = json_object_get(root, "obs_norm");
	if (!jn || json_is_false(jn))
		return 0;
	if (!json_is_true(jn) && !json_is_object(jn))
		return bad(err, "key \"obs_norm\" must be true, false or an object like {\"clip\": 10, "
		                "\"epsilon\": 1e-8}");
	if (json_is_object(jn)) {
		const char *key;
		const json_t *v;
		json_object_foreach((json_t *)jn, key, v)
		{
			if (strcmp(key, "clip") != 0 && strcmp(key, "epsilon") != 0)
				return bad(err,
				           "obs_norm: unknown key \"%s\" (expected \"clip\", \"epsilon\")",
				           key);
		}
		int rc;
		if ((rc = get_positive(jn, "clip", 1e30, &nm->clip, err)) < 0 ||
		    (rc = get_positive(jn, "epsilon", 1, &nm->eps, err)) < 0)
			return rc;
	}
	if (m->obs_dtype != SEED_DTYPE_F32 || m->obs_rank != 1) {
		char shp[96];
		model_shape_str(shp, sizeof shp, m->obs_rank, m->obs_shape);
		return bad(err,
		           "key \"obs_norm\" needs f32 observations of rank 1 (these are %s%s): scale "
		           "images with a \"scale\" layer instead",
		           seed_dtype_name(m->obs_dtype), shp);
	}
	nm->on = true;
	nm->D = (int)m->obs_shape[0];
	return 0;
}

/* The top level: an object of known keys with a "torso" list; sets init,
 * head and the layers (the torso's, then the fused head), allocated. */
static int parse_root(const json_t *root, seed_model *m, seed_err *err)
{
	if (!json_is_object(root))
		return bad(err, "the description must be a JSON object with a \"torso\" list");
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)root, key, val)
	{
		if (strcmp(key, "torso") != 0 && strcmp(key, "init") != 0 && strcmp(key, "head") != 0 &&
		    strcmp(key, "core") != 0 && strcmp(key, "policy") != 0 &&
		    strcmp(key, "critic_torso") != 0 && strcmp(key, "obs_norm") != 0)
			return bad(err,
			           "unknown key \"%s\" (expected \"torso\", \"critic_torso\", \"core\", "
			           "\"policy\", \"init\", \"head\", \"obs_norm\")",
			           key);
	}
	const json_t *torso = json_object_get(root, "torso");
	if (!json_is_array(torso))
		return bad(err, "key \"torso\" must be a list of layers");
	int rc;
	if ((rc = parse_init(root, m, err)) < 0 || (rc = parse_head(root, m, err)) < 0 ||
	    (rc = parse_policy(root, m, err)) < 0 || (rc = parse_obs_norm(root, m, err)) < 0)
		return rc;
	int ntorso = (int)json_array_size(torso);
	if (ntorso > TORSO_MAX)
		return bad(err, "key \"torso\": %d layers is too many", ntorso);
	m->nlayers = ntorso + 1;
	m->layers = seed_xcalloc((size_t)m->nlayers, sizeof *m->layers);
	const json_t *critic = json_object_get(root, "critic_torso");
	if (critic) {
		if (!json_is_array(critic))
			return bad(err, "key \"critic_torso\" must be a list of layers (as \"torso\")");
		if (json_object_get(root, "core"))
			return bad(err, "key \"critic_torso\" cannot go with a recurrent \"core\"");
		if (m->head != SEED_HEAD_ACTOR_CRITIC)
			return bad(err,
			           "key \"critic_torso\" needs the actor-critic head (not \"head\": \"%s\")",
			           seed_model_head_name(m->head));
		int n = (int)json_array_size(critic);
		if (n > TORSO_MAX)
			return bad(err, "key \"critic_torso\": %d layers is too many", n);
		m->ncritic = n + 1;
		m->critic = seed_xcalloc((size_t)m->ncritic, sizeof *m->critic);
	}
	return 0;
}

/* The fused head L after the torso (and the core, if the description has
 * one): a linear layer of head_out outputs on a flat row. */
static int parse_fused_head(const json_t *root, seed_model *m, layer *L, seed_err *err)
{
	if (L->rank_in != 1) {
		char shp[96];
		model_shape_str(shp, sizeof shp, L->rank_in, L->shape_in);
		return bad(err, "the torso's output has shape %s: end the torso with a flatten layer", shp);
	}
	const json_t *jc = json_object_get(root, "core");
	if (jc) {
		int rc = parse_core(jc, (int)L->numel_in, m->A, &m->core, err);
		if (rc < 0)
			return rc;
		if (m->core.prev_action && m->policy.kind == SEED_POLICY_GAUSSIAN)
			return bad(err, "core: key \"prev_action\" (a one-hot of a discrete action) cannot "
			                "go with a gaussian policy");
		/* The heads read the core's output h. */
		L->shape_in[0] = m->core.H;
		L->numel_in = (size_t)m->core.H;
	}
	L->kind = L_LINEAR;
	L->n_in = (int)L->numel_in;
	L->n_out = head_out(m);
	L->rank_out = 1;
	L->shape_out[0] = L->n_out;
	L->numel_out = (size_t)L->n_out;
	return 0;
}

/* Shapes, layer by layer, of the n layers of list `name` (n - 1 from the
 * JSON list, then the head, parsed by head): each layer's input is the last
 * one's output (the observation's for the first). */
static int parse_list(const json_t *root, seed_model *m, const char *name, layer *layers, int n,
                      int (*head)(const json_t *, seed_model *, layer *, seed_err *), seed_err *err)
{
	const json_t *list = json_object_get(root, name);
	int rank = m->obs_rank;
	int64_t shape[4] = {0};
	memcpy(shape, m->obs_shape, (size_t)m->obs_rank * sizeof *shape);
	size_t numel = m->obs_numel;
	for (int i = 0; i < n; i++) {
		layer *L = &layers[i];
		L->rank_in = rank;
		memcpy(L->shape_in, shape, sizeof shape);
		L->numel_in = numel;
		L->gain = (float)sqrt(2.0);
		int rc = i < n - 1 ? parse_layer(json_array_get(list, (size_t)i), name, i, L, err)
		                   : head(root, m, L, err);
		if (rc < 0)
			return rc;
		rank = L->rank_out;
		memcpy(shape, L->shape_out, sizeof shape);
		numel = L->numel_out;
	}
	return 0;
}

/* The critic torso's value head: a linear layer of 1 output on a flat row. */
static int parse_value_head(const json_t *root, seed_model *m, layer *L, seed_err *err)
{
	(void)root;
	(void)m;
	if (L->rank_in != 1) {
		char shp[96];
		model_shape_str(shp, sizeof shp, L->rank_in, L->shape_in);
		return bad(err, "the critic torso's output has shape %s: end it with a flatten layer", shp);
	}
	L->kind = L_LINEAR;
	L->n_in = (int)L->numel_in;
	L->n_out = 1;
	L->rank_out = 1;
	L->shape_out[0] = 1;
	L->numel_out = 1;
	return 0;
}

static int parse_layers(const json_t *root, seed_model *m, seed_err *err)
{
	int rc = parse_list(root, m, "torso", m->layers, m->nlayers, parse_fused_head, err);
	if (rc == 0 && m->ncritic)
		rc = parse_list(root, m, "critic_torso", m->critic, m->ncritic, parse_value_head, err);
	return rc;
}

int model_parse(seed_model *m, const char *json, seed_err *err)
{
	json_error_t jerr;
	json_t *root = json_loads(json, 0, &jerr);
	if (!root)
		return bad(err, "not valid JSON: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
	int rc = parse_root(root, m, err);
	if (rc == 0)
		rc = parse_layers(root, m, err);
	json_decref(root);
	return rc;
}
