/* envs/mujoco.c: MuJoCo's locomotion tasks as Gymnasium's v4 defines them:
 * halfcheetah, hopper, walker2d, ant and humanoid.
 *
 * The source of every number: Gymnasium 0.26.3, gymnasium/envs/mujoco/
 * (half_cheetah_v4.py, hopper_v4.py, walker2d_v4.py, ant_v4.py,
 * humanoid_v4.py and mujoco_env.py) for observations, rewards and their
 * weights, health and termination, frame skip and reset noise, and its
 * model files (assets/NAME.xml, compiled in byte for byte: envs/mujoco_models.c)
 * for the bodies.  The time limit is the class default max_steps, 1000, the
 * TimeLimit gymnasium.make puts on every v4 task.
 *
 * Exactness: MuJoCo (the same release, 2.2.2, as the reference) does the
 * physics; what Gymnasium computes in Python around it is written here
 * operation by operation, with -ffp-contract=off, so that observations and
 * rewards are bit for bit those of Gymnasium (tests/unit/envs/test_mujoco.c
 * checks every step of traces recorded with it, tests/golden/mujoco_ref.py).
 * That includes NumPy's ways of adding: np.sum adds a contiguous array
 * pairwise in 8 lanes (np_sum_f32/np_sum_f64 below), a sum over axis 0
 * adds row after row; and its rounding: the control cost of halfcheetah,
 * hopper, walker2d and ant sums the squares of the float32 action in
 * float32 before the float64 weight multiplies it (NumPy 1.x's rules),
 * humanoid's sums the squares of data.ctrl in float64.
 *
 * One step, as MujocoEnv.do_simulation: ctrl = action (the raw action,
 * MuJoCo clamps it to ctrlrange itself), mj_step frame_skip times, then
 * mj_rnePostConstraint (so that cfrc_ext is current), then the reward of
 * the task from the position before and after.  Instability: the state
 * turns non-finite, or MuJoCo reports a bad qpos, qvel or qacc (it then
 * resets the data itself): step_box returns SEED_ENV_UNSTABLE and the
 * vector truncates the episode.
 *
 * Memory: the vector's config holds the one mjModel (mj_step only reads
 * it); each instance has its mjData, made on its first reset and freed by
 * free_state, so step allocates nothing.  MuJoCo's warning handler (which
 * prints) is replaced once, by one that does nothing: the warnings are
 * counted in mjData, which is what step reads.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mujoco/mujoco.h>

#ifdef HAVE_OSMESA
#include <GL/osmesa.h>
#include <dlfcn.h>
#endif

#include "builtin.h"
#include "mujoco_models.h"
#include "seed/buf.h"

/* Gymnasium's picture size (MujocoEnv's DEFAULT_SIZE, width and height). */
#define MJ_RGB_SIZE 480

/* Most contact force numbers (6 per body) a task sums: NumPy's block of
 * 128, so that np_sum_* need no recursion. */
#define MJ_MAX_CONTACT 128

typedef enum mj_kind {
	MJ_HALFCHEETAH,
	MJ_HOPPER,
	MJ_WALKER2D,
	MJ_ANT,
	MJ_HUMANOID,
} mj_kind;

/* The numbers a task's options set, with the v4 constructor's defaults. */
typedef struct mj_params {
	double forward_reward_weight, ctrl_cost_weight, healthy_reward, contact_cost_weight;
	double reset_noise_scale;
	bool terminate_when_unhealthy, exclude_current_positions, use_contact_forces;
	double healthy_z[2], healthy_angle[2], healthy_state[2], contact_force[2];
} mj_params;

typedef struct mj_task {
	const char *name; /* Seed's class name */
	const char *file; /* Gymnasium's model file, the name in the virtual file system */
	const char *xml;
	mj_kind kind;
	int frame_skip;
	int skip; /* leading qpos numbers an observation leaves out by default (x; x and y) */
	const char *const *known;
	mj_params defaults;
} mj_task;

typedef struct mj_config {
	const mj_task *task;
	mjModel *m;
	mj_params p;
	double dt; /* model.opt.timestep * frame_skip, as Gymnasium's dt */
	int obs_dim;
	bool has_init;
	double *init_qpos, *init_qvel; /* (nq), (nv): Gymnasium's init_qpos/init_qvel, or the options' */
	int torso;                     /* ant: the body whose frame moves forward */
	double mass;                   /* humanoid: np.sum(model.body_mass) */
	uint64_t id;                   /* this configuration among the process's, from 1: whose
	                                  model the rendering context holds */
} mj_config;

/* Most qpos numbers of a task (humanoid's 24): the pictures' copy. */
#define MJ_MAX_QPOS 32

typedef struct mj_state {
	mjData *d;
	/* d->qpos after the last reset or step, which is all a picture needs:
	 * the vector keeps the state an episode ended in as a byte copy of
	 * this struct, and by then d has started the next episode. */
	double qpos[MJ_MAX_QPOS];
} mj_state;

/* ---- NumPy's sums ---------------------------------------------------------
 * np.sum of a contiguous array starts from 0 and adds pairwise_sum: below 8
 * numbers one after another, otherwise 8 running sums over blocks of 8,
 * combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
 * rest one by one (numpy/core/src/umath/loops_utils.h.src).  Every array
 * here has at most 128 numbers, NumPy's block size, so there is no
 * recursion. */
static double np_sum_f64(const double *a, int n)
{
	double res = 0.;
	if (n < 8) {
		for (int i = 0; i < n; i++)
			res += a[i];
		return 0. + res;
	}
	double r[8];
	for (int j = 0; j < 8; j++)
		r[j] = a[j];
	int i = 8;
	for (; i < n - n % 8; i += 8)
		for (int j = 0; j < 8; j++)
			r[j] += a[i + j];
	res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
	for (; i < n; i++)
		res += a[i];
	return 0. + res;
}

static float np_sum_f32(const float *a, int n)
{
	float res = 0.f;
	if (n < 8) {
		for (int i = 0; i < n; i++)
			res += a[i];
		return 0.f + res;
	}
	float r[8];
	for (int j = 0; j < 8; j++)
		r[j] = a[j];
	int i = 8;
	for (; i < n - n % 8; i += 8)
		for (int j = 0; j < 8; j++)
			r[j] += a[i + j];
	res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
	for (; i < n; i++)
		res += a[i];
	return 0.f + res;
}

/* np.clip(x, lo, hi) */
static double clip(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* ---- MuJoCo's global state ------------------------------------------------ */

static void quiet_warning(const char *msg)
{
	(void)msg;
}

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static atomic_uint_least64_t next_config_id;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void install_quiet(void)
{
	mju_user_warning = quiet_warning;
}

/* The model of task t from its compiled-in text, through a virtual file
 * system (mjVFS is large: on the heap).  MuJoCo's XML loader keeps global
 * state, so loads are serialised. */
static mjModel *load_model(const mj_task *t, char *msg, int msg_len)
{
	mjVFS *vfs = seed_xmalloc(sizeof *vfs);
	mj_defaultVFS(vfs);
	int len = (int)strlen(t->xml);
	mjModel *m = NULL;
	if (mj_makeEmptyFileVFS(vfs, t->file, len) == 0) {
		int i = mj_findFileVFS(vfs, t->file);
		memcpy(vfs->filedata[i], t->xml, (size_t)len);
		pthread_mutex_lock(&load_lock);
		m = mj_loadXML(t->file, vfs, msg, msg_len);
		pthread_mutex_unlock(&load_lock);
	} else {
		snprintf(msg, (size_t)msg_len, "no room in MuJoCo's virtual file system");
	}
	mj_deleteVFS(vfs);
	free(vfs);
	return m;
}

/* ---- options -------------------------------------------------------------- */

/* A [low, high] option: two finite numbers, low <= high. */
static int option_range(const json_t *options, const char *env, const char *key, double *out, seed_err *err)
{
	double r[2];
	if (!json_object_get(options, key))
		return 0;
	int rc = seed_env_option_doubles(options, env, key, 2, r, err);
	if (rc < 0)
		return rc;
	if (r[0] > r[1])
		return seed_err_set(err, -SEED_EOPTION, "%s: option \"%s\": low %g above high %g", env, key,
		                    r[0], r[1]);
	out[0] = r[0];
	out[1] = r[1];
	return 0;
}

static int parse_params(const mj_task *t, const json_t *options, mj_params *p, seed_err *err)
{
	const char *n = t->name;
	const double big = 1e9;
	int rc = seed_env_options_check(options, n, t->known, err);
	/* Each call leaves its default alone when its key is absent, and
	 * options_check has refused keys the task does not know. */
	if (rc == 0)
		rc = seed_env_option_double(options, n, "forward_reward_weight", -big, big,
		                            &p->forward_reward_weight, err);
	if (rc == 0)
		rc = seed_env_option_double(options, n, "ctrl_cost_weight", -big, big, &p->ctrl_cost_weight,
		                            err);
	if (rc == 0)
		rc = seed_env_option_double(options, n, "healthy_reward", -big, big, &p->healthy_reward, err);
	if (rc == 0)
		rc = seed_env_option_double(options, n, "contact_cost_weight", -big, big,
		                            &p->contact_cost_weight, err);
	if (rc == 0)
		rc = seed_env_option_double(options, n, "reset_noise_scale", 0, big, &p->reset_noise_scale,
		                            err);
	if (rc == 0)
		rc = seed_env_option_bool(options, n, "terminate_when_unhealthy",
		                          &p->terminate_when_unhealthy, err);
	if (rc == 0)
		rc = seed_env_option_bool(options, n, "exclude_current_positions_from_observation",
		                          &p->exclude_current_positions, err);
	if (rc == 0)
		rc = seed_env_option_bool(options, n, "use_contact_forces", &p->use_contact_forces, err);
	if (rc == 0)
		rc = option_range(options, n, "healthy_z_range", p->healthy_z, err);
	if (rc == 0)
		rc = option_range(options, n, "healthy_angle_range", p->healthy_angle, err);
	if (rc == 0)
		rc = option_range(options, n, "healthy_state_range", p->healthy_state, err);
	if (rc == 0)
		rc = option_range(options, n, "contact_force_range", p->contact_force, err);
	return rc;
}

static int obs_size(const mj_task *t, const mjModel *m, const mj_params *p)
{
	int skip = p->exclude_current_positions ? t->skip : 0;
	int n = m->nq - skip + m->nv;
	if (t->kind == MJ_ANT && p->use_contact_forces)
		n += 6 * m->nbody;
	if (t->kind == MJ_HUMANOID)
		n += 10 * m->nbody + 6 * m->nbody + m->nv + 6 * m->nbody;
	return n;
}

static void mj_free_config(void *config)
{
	mj_config *c = config;
	if (!c)
		return;
	mj_deleteModel(c->m);
	free(c->init_qpos);
	free(c->init_qvel);
	free(c);
}

static int mj_configure_task(const mj_task *t, const json_t *options, void **config, seed_env_spec *spec,
                             seed_err *err)
{
	mj_params p = t->defaults;
	int rc = parse_params(t, options, &p, err);
	if (rc < 0)
		return rc;
	pthread_once(&quiet_once, install_quiet);
	char msg[1000] = "";
	mjModel *m = load_model(t, msg, (int)sizeof msg);
	if (!m)
		return seed_err_set(err, -EINVAL, "%s: MuJoCo cannot load %s: %s", t->name, t->file, msg);
	mj_config *c = seed_xcalloc(1, sizeof *c);
	c->task = t;
	c->m = m;
	c->p = p;
	c->dt = m->opt.timestep * t->frame_skip;
	c->init_qpos = seed_xmalloc((size_t)m->nq * sizeof *c->init_qpos);
	c->init_qvel = seed_xcalloc((size_t)m->nv, sizeof *c->init_qvel);
	/* Gymnasium's init_qpos: data.qpos of a new MjData, i.e. qpos0. */
	memcpy(c->init_qpos, m->qpos0, (size_t)m->nq * sizeof *c->init_qpos);
	bool has_qpos = json_object_get(options, "init_qpos") != NULL;
	bool has_qvel = json_object_get(options, "init_qvel") != NULL;
	rc = seed_env_option_doubles(options, t->name, "init_qpos", m->nq, c->init_qpos, err);
	if (rc == 0)
		rc = seed_env_option_doubles(options, t->name, "init_qvel", m->nv, c->init_qvel, err);
	if (rc == 0 && m->nu > SEED_ENV_MAX_ACTION_DIM)
		rc = seed_err_set(err, -EINVAL, "%s: %d actuators, more than %d", t->name, m->nu,
		                  SEED_ENV_MAX_ACTION_DIM);
	if (rc == 0 && m->nq > MJ_MAX_QPOS)
		rc = seed_err_set(err, -EINVAL, "%s: %d position numbers, more than %d", t->name, m->nq,
		                  MJ_MAX_QPOS);
	if (rc == 0 && 6 * m->nbody > MJ_MAX_CONTACT)
		rc = seed_err_set(err, -EINVAL, "%s: %d bodies, more than %d", t->name, m->nbody,
		                  MJ_MAX_CONTACT / 6);
	if (rc == 0 && t->kind == MJ_ANT) {
		c->torso = mj_name2id(m, mjOBJ_BODY, "torso");
		if (c->torso < 0)
			rc = seed_err_set(err, -EINVAL, "%s: the model has no body \"torso\"", t->name);
	}
	if (rc < 0) {
		mj_free_config(c);
		return rc;
	}
	c->has_init = has_qpos || has_qvel;
	if (t->kind == MJ_HUMANOID)
		c->mass = np_sum_f64(m->body_mass, m->nbody);
	c->obs_dim = obs_size(t, m, &p);

	memset(spec, 0, sizeof *spec);
	spec->obs_dtype = SEED_DTYPE_F32;
	spec->obs_rank = 1;
	spec->obs_shape[0] = c->obs_dim;
	spec->action_space = SEED_ACTIONS_BOX;
	spec->num_actions = m->nu;
	/* Gymnasium's Box: model.actuator_ctrlrange as float32. */
	for (int i = 0; i < m->nu; i++) {
		spec->action_low[i] = (float)m->actuator_ctrlrange[2 * i];
		spec->action_high[i] = (float)m->actuator_ctrlrange[2 * i + 1];
	}
	spec->max_steps = 1000;
	spec->rgb_width = MJ_RGB_SIZE;
	spec->rgb_height = MJ_RGB_SIZE;
	c->id = atomic_fetch_add(&next_config_id, 1) + 1;
	*config = c;
	return 0;
}

/* ---- observations, health ------------------------------------------------- */

static void observe(const mj_config *c, const mjData *d, float *obs)
{
	const mjModel *m = c->m;
	const mj_task *t = c->task;
	int skip = c->p.exclude_current_positions ? t->skip : 0;
	int k = 0;
	for (int i = skip; i < m->nq; i++)
		obs[k++] = (float)d->qpos[i];
	switch (t->kind) {
	case MJ_HOPPER:
	case MJ_WALKER2D:
		for (int i = 0; i < m->nv; i++)
			obs[k++] = (float)clip(d->qvel[i], -10, 10);
		break;
	case MJ_HALFCHEETAH:
		for (int i = 0; i < m->nv; i++)
			obs[k++] = (float)d->qvel[i];
		break;
	case MJ_ANT:
		for (int i = 0; i < m->nv; i++)
			obs[k++] = (float)d->qvel[i];
		if (c->p.use_contact_forces)
			for (int i = 0; i < 6 * m->nbody; i++)
				obs[k++] =
				    (float)clip(d->cfrc_ext[i], c->p.contact_force[0], c->p.contact_force[1]);
		break;
	case MJ_HUMANOID:
		for (int i = 0; i < m->nv; i++)
			obs[k++] = (float)d->qvel[i];
		for (int i = 0; i < 10 * m->nbody; i++)
			obs[k++] = (float)d->cinert[i];
		for (int i = 0; i < 6 * m->nbody; i++)
			obs[k++] = (float)d->cvel[i];
		for (int i = 0; i < m->nv; i++)
			obs[k++] = (float)d->qfrc_actuator[i];
		for (int i = 0; i < 6 * m->nbody; i++)
			obs[k++] = (float)d->cfrc_ext[i];
		break;
	}
}

static bool is_healthy(const mj_config *c, const mjData *d)
{
	const mjModel *m = c->m;
	const mj_params *p = &c->p;
	switch (c->task->kind) {
	case MJ_HOPPER: {
		/* state_vector()[2:]: qpos[2:], then qvel, all strictly inside. */
		for (int i = 2; i < m->nq + m->nv; i++) {
			double s = i < m->nq ? d->qpos[i] : d->qvel[i - m->nq];
			if (!(p->healthy_state[0] < s && s < p->healthy_state[1]))
				return false;
		}
		double z = d->qpos[1], angle = d->qpos[2];
		return p->healthy_z[0] < z && z < p->healthy_z[1] && p->healthy_angle[0] < angle &&
		       angle < p->healthy_angle[1];
	}
	case MJ_WALKER2D: {
		double z = d->qpos[1], angle = d->qpos[2];
		return p->healthy_z[0] < z && z < p->healthy_z[1] && p->healthy_angle[0] < angle &&
		       angle < p->healthy_angle[1];
	}
	case MJ_ANT:
		/* np.isfinite(state).all() and min_z <= state[2] <= max_z */
		for (int i = 0; i < m->nq; i++)
			if (!isfinite(d->qpos[i]))
				return false;
		for (int i = 0; i < m->nv; i++)
			if (!isfinite(d->qvel[i]))
				return false;
		return p->healthy_z[0] <= d->qpos[2] && d->qpos[2] <= p->healthy_z[1];
	case MJ_HUMANOID:
		return p->healthy_z[0] < d->qpos[2] && d->qpos[2] < p->healthy_z[1];
	case MJ_HALFCHEETAH:
		break;
	}
	return true;
}

/* Humanoid's mass_center: np.sum(mass * xipos, axis=0) / np.sum(mass), x
 * and y.  The sum over axis 0 of a C-ordered array adds row after row. */
static void mass_center(const mj_config *c, const mjData *d, double *xy)
{
	const mjModel *m = c->m;
	double s[2] = {0, 0};
	for (int b = 0; b < m->nbody; b++)
		for (int j = 0; j < 2; j++)
			s[j] += m->body_mass[b] * d->xipos[3 * b + j];
	xy[0] = s[0] / c->mass;
	xy[1] = s[1] / c->mass;
}

/* ---- the class callbacks -------------------------------------------------- */

static void mj_reset(const void *config, void *state, seed_rng *rng, void *obs)
{
	const mj_config *c = config;
	const mjModel *m = c->m;
	mj_state *s = state;
	if (!s->d)
		s->d = mj_makeData(m);
	mjData *d = s->d;
	/* MujocoEnv.reset: mj_resetData, then reset_model's state through
	 * set_state (qpos, qvel, mj_forward). */
	mj_resetData(m, d);
	double scale = c->p.reset_noise_scale;
	for (int i = 0; i < m->nq; i++)
		d->qpos[i] = c->init_qpos[i] + (c->has_init ? 0.0 : seed_rng_uniform(rng, -scale, scale));
	bool normal = c->task->kind == MJ_HALFCHEETAH || c->task->kind == MJ_ANT;
	for (int i = 0; i < m->nv; i++) {
		double noise = 0.0;
		if (!c->has_init)
			noise = normal ? scale * seed_rng_normal(rng) : seed_rng_uniform(rng, -scale, scale);
		d->qvel[i] = c->init_qvel[i] + noise;
	}
	mj_forward(m, d);
	memcpy(s->qpos, d->qpos, (size_t)m->nq * sizeof *s->qpos);
	observe(c, d, obs);
}

static bool state_finite(const mjModel *m, const mjData *d)
{
	for (int i = 0; i < m->nq; i++)
		if (!isfinite(d->qpos[i]))
			return false;
	for (int i = 0; i < m->nv; i++)
		if (!isfinite(d->qvel[i]))
			return false;
	return true;
}

static int mj_step_box(const void *config, void *state, seed_rng *rng, const float *action, void *obs,
                       float *reward, bool *terminated)
{
	(void)rng;
	const mj_config *c = config;
	const mj_task *t = c->task;
	const mjModel *m = c->m;
	const mj_params *p = &c->p;
	mj_state *s = state;
	mjData *d = s->d;
	double before[2], after[2];
	switch (t->kind) {
	case MJ_ANT:
		before[0] = d->xpos[3 * c->torso];
		before[1] = d->xpos[3 * c->torso + 1];
		break;
	case MJ_HUMANOID:
		mass_center(c, d, before);
		break;
	default:
		before[0] = d->qpos[0];
		break;
	}
	for (int i = 0; i < m->nu; i++)
		d->ctrl[i] = action[i];
	/* MuJoCo counts its warnings in d->warning; a bad qpos, qvel or qacc
	 * makes it reset the data, and the count of the last one survives
	 * that reset.  Counting from zero here tells whether this step did. */
	static const int bad[] = {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC};
	for (int i = 0; i < 3; i++)
		d->warning[bad[i]].number = 0;
	for (int k = 0; k < t->frame_skip; k++)
		mj_step(m, d);
	mj_rnePostConstraint(m, d);
	for (int i = 0; i < 3; i++)
		if (d->warning[bad[i]].number > 0)
			return SEED_ENV_UNSTABLE;
	if (!state_finite(m, d))
		return SEED_ENV_UNSTABLE;

	double ctrl_cost;
	if (t->kind == MJ_HUMANOID) {
		/* ctrl_cost_weight * np.sum(np.square(data.ctrl)), float64 */
		double sq[SEED_ENV_MAX_ACTION_DIM];
		for (int i = 0; i < m->nu; i++)
			sq[i] = d->ctrl[i] * d->ctrl[i];
		ctrl_cost = p->ctrl_cost_weight * np_sum_f64(sq, m->nu);
	} else {
		/* ctrl_cost_weight * np.sum(np.square(action)): float32 squares
		 * and sum, the float64 weight times that float32 scalar. */
		float sq[SEED_ENV_MAX_ACTION_DIM];
		for (int i = 0; i < m->nu; i++)
			sq[i] = action[i] * action[i];
		ctrl_cost = p->ctrl_cost_weight * (double)np_sum_f32(sq, m->nu);
	}
	bool healthy = is_healthy(c, d);
	/* float(is_healthy or terminate_when_unhealthy) * healthy_reward */
	double healthy_reward = (healthy || p->terminate_when_unhealthy ? 1.0 : 0.0) * p->healthy_reward;
	double r;
	switch (t->kind) {
	case MJ_HALFCHEETAH: {
		double x_velocity = (d->qpos[0] - before[0]) / c->dt;
		r = p->forward_reward_weight * x_velocity - ctrl_cost;
		break;
	}
	case MJ_HOPPER:
	case MJ_WALKER2D: {
		double x_velocity = (d->qpos[0] - before[0]) / c->dt;
		r = (p->forward_reward_weight * x_velocity + healthy_reward) - ctrl_cost;
		break;
	}
	case MJ_ANT: {
		after[0] = d->xpos[3 * c->torso];
		double x_velocity = (after[0] - before[0]) / c->dt;
		double costs = ctrl_cost;
		if (p->use_contact_forces) {
			/* contact_cost_weight * np.sum(np.square(contact_forces)) */
			double sq[MJ_MAX_CONTACT];
			int n = 6 * m->nbody;
			for (int i = 0; i < n; i++) {
				double f = clip(d->cfrc_ext[i], p->contact_force[0], p->contact_force[1]);
				sq[i] = f * f;
			}
			costs += p->contact_cost_weight * np_sum_f64(sq, n);
		}
		r = (x_velocity + healthy_reward) - costs;
		break;
	}
	case MJ_HUMANOID:
	default: {
		mass_center(c, d, after);
		double x_velocity = (after[0] - before[0]) / c->dt;
		r = (p->forward_reward_weight * x_velocity + healthy_reward) - ctrl_cost;
		break;
	}
	}
	memcpy(s->qpos, d->qpos, (size_t)m->nq * sizeof *s->qpos);
	observe(c, d, obs);
	*reward = (float)r;
	*terminated = t->kind != MJ_HALFCHEETAH && p->terminate_when_unhealthy && !healthy;
	return 0;
}

static void mj_free_state(const void *config, void *state)
{
	(void)config;
	mj_state *s = state;
	mj_deleteData(s->d);
	s->d = NULL;
}

static int mj_render_text(const void *config, const void *state, char *buf, size_t len)
{
	const mj_config *c = config;
	const mjData *d = ((const mj_state *)state)->d;
	if (!d)
		return snprintf(buf, len, "(not reset)\n");
	/* x position and velocity, and height: of the torso (qpos 0 and 1,
	 * or 0 and 2 for the free bodies of ant and humanoid). */
	int z = c->task->kind == MJ_ANT || c->task->kind == MJ_HUMANOID ? 2 : 1;
	return snprintf(buf, len, "x=%+.3f x_velocity=%+.3f z=%.3f\n", d->qpos[0], d->qvel[0], d->qpos[z]);
}

/* ---- pictures --------------------------------------------------------------
 * Gymnasium's rgb_array picture (MujocoEnv.render and mujoco_rendering.py's
 * RenderContextOffscreen): the model's camera "track" (every task has one,
 * in mode trackcom: it follows the centre of mass of the body it hangs on),
 * as a fixed camera; the default visual options; a scene of up to 1000
 * geoms; MuJoCo's own renderer (mjr_render) into its offscreen buffer,
 * read back bottom row first and flipped.  Gymnasium's size is 480 x 480;
 * other sizes draw the same camera into a viewport of that size.
 *
 * The picture needs only the positions: the state's copy of qpos goes into
 * a data of the renderer's own, through mj_fwdPosition (the kinematics, the
 * centres of mass the camera follows, the cameras and lights).
 *
 * OpenGL: one OSMesa context per process (Mesa's software renderer, no
 * display), made on the first picture, with OSMesa loaded by dlopen then
 * (configure.ac says why); MuJoCo's mjr_makeContext finds OSMesa's
 * OSMesaGetProcAddress among the libraries loaded into the process.  The
 * MuJoCo context (the model's meshes and textures on the GL side) is made
 * for the configuration that draws, and made again when another one does.
 * Everything here is behind one lock, and the context is made current on
 * the drawing thread each time. */

#define MJ_MAX_GEOM 1000 /* RenderContext's max_geom */

#ifdef HAVE_OSMESA

typedef struct mj_gl {
	pthread_mutex_t lock;
	int ready;     /* 0: not tried, 1: made, -1: failed (why says why) */
	char why[400]; /* what follows "TASK draws pictures ... with OSMesa" */
	void *lib;
	OSMesaContext (*create_ext)(GLenum, GLint, GLint, GLint, OSMesaContext);
	GLboolean (*make_current)(OSMesaContext, void *, GLenum, GLsizei, GLsizei);
	OSMESAproc (*get_proc)(const char *);
	OSMesaContext ctx;
	/* The context's own frame buffer, which MuJoCo's offscreen buffer
	 * replaces: OSMesa only needs one to make the context current. */
	uint8_t frame[16 * 16 * 4];
	uint64_t config_id; /* whose model m is a copy of; 0: none */
	mjModel *m;         /* the renderer's copy, whose offscreen size it sets */
	mjrContext con;
	mjvScene scn;
	mjData *d;
	uint8_t *pixels; /* the bottom-up rows mjr_readPixels writes */
	size_t pixels_cap;
} mj_gl;

static mj_gl gl = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Load OSMesa and make the process's context; 0, or -1 with gl.why set
 * (what follows "TASK draws pictures through MuJoCo's renderer with
 * OSMesa" in the message). */
static int gl_open(void)
{
	const char *names[] = {"libOSMesa.so.8",
#ifdef SEED_OSMESA_PATH
	                       SEED_OSMESA_PATH,
#endif
	                       NULL};
	const char *dlerr = "";
	for (int i = 0; names[i] && !gl.lib; i++) {
		/* RTLD_GLOBAL: MuJoCo's GL loader looks for OSMesa among the
		 * libraries loaded into the process. */
		gl.lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
		if (!gl.lib)
			dlerr = dlerror();
	}
	if (!gl.lib) {
		snprintf(gl.why, sizeof gl.why, ", which does not load: %s (install libosmesa6-dev)", dlerr);
		return -1;
	}
	*(void **)&gl.create_ext = dlsym(gl.lib, "OSMesaCreateContextExt");
	*(void **)&gl.make_current = dlsym(gl.lib, "OSMesaMakeCurrent");
	*(void **)&gl.get_proc = dlsym(gl.lib, "OSMesaGetProcAddress");
	if (!gl.create_ext || !gl.make_current || !gl.get_proc) {
		snprintf(gl.why, sizeof gl.why, "%s",
		         ", but the OSMesa library loaded lacks OSMesaCreateContextExt, OSMesaMakeCurrent "
		         "or OSMesaGetProcAddress");
		return -1;
	}
	/* RGBA, a 24-bit depth and an 8-bit stencil buffer, as Gymnasium's
	 * OSMesa backend asks for. */
	gl.ctx = gl.create_ext(OSMESA_RGBA, 24, 8, 0, NULL);
	if (!gl.ctx) {
		snprintf(gl.why, sizeof gl.why, "%s",
		         ", but OSMesa cannot make an OpenGL context (OSMesaCreateContextExt failed)");
		return -1;
	}
	if (!gl.make_current(gl.ctx, gl.frame, GL_UNSIGNED_BYTE, 16, 16)) {
		snprintf(gl.why, sizeof gl.why, "%s",
		         ", but OSMesa cannot make its OpenGL context current (OSMesaMakeCurrent failed)");
		return -1;
	}
	/* MuJoCo's offscreen buffer is a framebuffer object: check here what
	 * mjr_makeContext would otherwise stop the process over. */
	if (!gl.get_proc("glGenFramebuffers") || !gl.get_proc("glBlitFramebuffer")) {
		snprintf(gl.why, sizeof gl.why, "%s",
		         ", but this OSMesa's OpenGL has no framebuffer objects (glGenFramebuffers, "
		         "glBlitFramebuffer), which MuJoCo's offscreen buffer needs");
		return -1;
	}
	return 0;
}

/* Make m, con, scn and d for c's model, with an offscreen buffer of at
 * least width x height (the lock held, the context current).  MuJoCo 2.2
 * sizes that buffer from the model's visual/global offwidth and offheight
 * when it makes the context, and cannot resize it: a larger picture makes
 * the context again, and the buffer never shrinks (the terminal's and a
 * GIF's pictures take turns). */
static void gl_bind_model(const mj_config *c, int width, int height)
{
	if (gl.config_id == c->id && width <= gl.m->vis.global.offwidth &&
	    height <= gl.m->vis.global.offheight)
		return;
	if (gl.config_id) {
		if (gl.config_id == c->id) {
			if (width < gl.m->vis.global.offwidth)
				width = gl.m->vis.global.offwidth;
			if (height < gl.m->vis.global.offheight)
				height = gl.m->vis.global.offheight;
		}
		mjr_freeContext(&gl.con);
		mjv_freeScene(&gl.scn);
		mj_deleteData(gl.d);
		mj_deleteModel(gl.m);
	}
	gl.m = mj_copyModel(NULL, c->m);
	gl.m->vis.global.offwidth = width;
	gl.m->vis.global.offheight = height;
	mjr_defaultContext(&gl.con);
	mjv_defaultScene(&gl.scn);
	mjv_makeScene(gl.m, &gl.scn, MJ_MAX_GEOM);
	mjr_makeContext(gl.m, &gl.con, mjFONTSCALE_150);
	mjr_setBuffer(mjFB_OFFSCREEN, &gl.con);
	gl.d = mj_makeData(gl.m);
	gl.config_id = c->id;
}

static int mj_render_rgb(const void *config, const void *state, uint8_t *rgb, int width, int height)
{
	const mj_config *c = config;
	const mj_state *s = state;
	int rc = 0;
	pthread_mutex_lock(&gl.lock);
	if (gl.ready == 0)
		gl.ready = gl_open() == 0 ? 1 : -1;
	if (gl.ready < 0) {
		seed_env_rgb_set_why("%s draws pictures through MuJoCo's renderer with OSMesa%s",
		                     c->task->name, gl.why);
		rc = -ENOTSUP;
		goto out;
	}
	if (!gl.make_current(gl.ctx, gl.frame, GL_UNSIGNED_BYTE, 16, 16)) {
		seed_env_rgb_set_why("%s: OSMesa cannot make its OpenGL context current on this thread",
		                     c->task->name);
		rc = -ENOTSUP;
		goto out;
	}
	gl_bind_model(c, width, height);
	size_t row = (size_t)width * 3, need = row * (size_t)height;
	if (need > gl.pixels_cap) {
		free(gl.pixels);
		gl.pixels = seed_xmalloc(need);
		gl.pixels_cap = need;
	}
	const mjModel *m = gl.m;
	/* A state never reset shows the model's reference pose. */
	memcpy(gl.d->qpos, s->d ? s->qpos : m->qpos0, (size_t)m->nq * sizeof *gl.d->qpos);
	mj_fwdPosition(m, gl.d);
	mjvOption opt;
	mjvCamera cam;
	mjv_defaultOption(&opt);
	mjv_defaultCamera(&cam);
	int track = mj_name2id(m, mjOBJ_CAMERA, "track");
	if (track >= 0) {
		cam.type = mjCAMERA_FIXED;
		cam.fixedcamid = track;
	}
	mjv_updateScene(m, gl.d, &opt, NULL, &cam, mjCAT_ALL, &gl.scn);
	mjrRect viewport = {0, 0, width, height};
	mjr_render(viewport, &gl.scn, &gl.con);
	mjr_readPixels(gl.pixels, NULL, viewport, &gl.con);
	for (int y = 0; y < height; y++)
		memcpy(rgb + (size_t)y * row, gl.pixels + (size_t)(height - 1 - y) * row, row);
out:
	pthread_mutex_unlock(&gl.lock);
	return rc;
}

#else /* !HAVE_OSMESA */

static int mj_render_rgb(const void *config, const void *state, uint8_t *rgb, int width, int height)
{
	const mj_config *c = config;
	(void)state;
	(void)rgb;
	(void)width;
	(void)height;
	seed_env_rgb_set_why("%s draws pictures through MuJoCo's renderer with OSMesa; this build has no "
	                     "OSMesa (install libosmesa6-dev and reconfigure)",
	                     c->task->name);
	return -ENOTSUP;
}

#endif

/* ---- the five tasks ------------------------------------------------------- */

#define MJ_INIT_OPTIONS                                                                                      \
	"init_qpos", "init_qvel", "reset_noise_scale", "exclude_current_positions_from_observation"

static const char *const halfcheetah_known[] = {MJ_INIT_OPTIONS, "forward_reward_weight", "ctrl_cost_weight",
                                                NULL};
static const char *const hopper_known[] = {
    MJ_INIT_OPTIONS,   "forward_reward_weight",    "ctrl_cost_weight",
    "healthy_reward",  "terminate_when_unhealthy", "healthy_state_range",
    "healthy_z_range", "healthy_angle_range",      NULL};
static const char *const walker2d_known[] = {MJ_INIT_OPTIONS,
                                             "forward_reward_weight",
                                             "ctrl_cost_weight",
                                             "healthy_reward",
                                             "terminate_when_unhealthy",
                                             "healthy_z_range",
                                             "healthy_angle_range",
                                             NULL};
static const char *const ant_known[] = {
    MJ_INIT_OPTIONS,       "ctrl_cost_weight",    "use_contact_forces",
    "contact_cost_weight", "healthy_reward",      "terminate_when_unhealthy",
    "healthy_z_range",     "contact_force_range", NULL};
static const char *const humanoid_known[] = {MJ_INIT_OPTIONS,
                                             "forward_reward_weight",
                                             "ctrl_cost_weight",
                                             "healthy_reward",
                                             "terminate_when_unhealthy",
                                             "healthy_z_range",
                                             NULL};

static const mj_task halfcheetah_task = {
    .name = "halfcheetah",
    .file = "half_cheetah.xml",
    .xml = seed_mujoco_xml_half_cheetah,
    .kind = MJ_HALFCHEETAH,
    .frame_skip = 5,
    .skip = 1,
    .known = halfcheetah_known,
    .defaults = {.forward_reward_weight = 1.0,
                 .ctrl_cost_weight = 0.1,
                 .reset_noise_scale = 0.1,
                 .exclude_current_positions = true},
};

static const mj_task hopper_task = {
    .name = "hopper",
    .file = "hopper.xml",
    .xml = seed_mujoco_xml_hopper,
    .kind = MJ_HOPPER,
    .frame_skip = 4,
    .skip = 1,
    .known = hopper_known,
    .defaults = {.forward_reward_weight = 1.0,
                 .ctrl_cost_weight = 1e-3,
                 .healthy_reward = 1.0,
                 .terminate_when_unhealthy = true,
                 .healthy_state = {-100.0, 100.0},
                 .healthy_z = {0.7, INFINITY},
                 .healthy_angle = {-0.2, 0.2},
                 .reset_noise_scale = 5e-3,
                 .exclude_current_positions = true},
};

static const mj_task walker2d_task = {
    .name = "walker2d",
    .file = "walker2d.xml",
    .xml = seed_mujoco_xml_walker2d,
    .kind = MJ_WALKER2D,
    .frame_skip = 4,
    .skip = 1,
    .known = walker2d_known,
    .defaults = {.forward_reward_weight = 1.0,
                 .ctrl_cost_weight = 1e-3,
                 .healthy_reward = 1.0,
                 .terminate_when_unhealthy = true,
                 .healthy_z = {0.8, 2.0},
                 .healthy_angle = {-1.0, 1.0},
                 .reset_noise_scale = 5e-3,
                 .exclude_current_positions = true},
};

static const mj_task ant_task = {
    .name = "ant",
    .file = "ant.xml",
    .xml = seed_mujoco_xml_ant,
    .kind = MJ_ANT,
    .frame_skip = 5,
    .skip = 2,
    .known = ant_known,
    .defaults = {.ctrl_cost_weight = 0.5,
                 .use_contact_forces = false,
                 .contact_cost_weight = 5e-4,
                 .healthy_reward = 1.0,
                 .terminate_when_unhealthy = true,
                 .healthy_z = {0.2, 1.0},
                 .contact_force = {-1.0, 1.0},
                 .reset_noise_scale = 0.1,
                 .exclude_current_positions = true},
};

static const mj_task humanoid_task = {
    .name = "humanoid",
    .file = "humanoid.xml",
    .xml = seed_mujoco_xml_humanoid,
    .kind = MJ_HUMANOID,
    .frame_skip = 5,
    .skip = 2,
    .known = humanoid_known,
    .defaults = {.forward_reward_weight = 1.25,
                 .ctrl_cost_weight = 0.1,
                 .healthy_reward = 5.0,
                 .terminate_when_unhealthy = true,
                 .healthy_z = {1.0, 2.0},
                 .reset_noise_scale = 1e-2,
                 .exclude_current_positions = true},
};

#define MJ_CLASS(task, summary_text)                                                                         \
	static int task##_configure(const json_t *options, void **config, seed_env_spec *spec,               \
	                            seed_err *err)                                                           \
	{                                                                                                    \
		return mj_configure_task(&task##_task, options, config, spec, err);                          \
	}                                                                                                    \
	const seed_env_class seed_env_##task = {                                                             \
	    .name = #task,                                                                                   \
	    .summary = summary_text,                                                                         \
	    .configure = task##_configure,                                                                   \
	    .free_config = mj_free_config,                                                                   \
	    .state_size = sizeof(mj_state),                                                                  \
	    .reset = mj_reset,                                                                               \
	    .step_box = mj_step_box,                                                                         \
	    .render_text = mj_render_text,                                                                   \
	    .render_rgb = mj_render_rgb,                                                                     \
	    .free_state = mj_free_state,                                                                     \
	}

MJ_CLASS(halfcheetah, "HalfCheetah-v4 as in Gymnasium (MuJoCo): a 2-D cheetah runs forward, 6 torques");
MJ_CLASS(hopper, "Hopper-v4 as in Gymnasium (MuJoCo): a one-legged hopper hops forward, 3 torques");
MJ_CLASS(walker2d, "Walker2d-v4 as in Gymnasium (MuJoCo): a 2-D biped walks forward, 6 torques");
MJ_CLASS(ant, "Ant-v4 as in Gymnasium (MuJoCo): a four-legged ant walks forward, 8 torques");
MJ_CLASS(humanoid, "Humanoid-v4 as in Gymnasium (MuJoCo): a 3-D humanoid walks forward, 17 torques");
