/* tests/unit/io/test_checkpoint.c: run-directory checkpoints.
 *
 * Round trips must give back every resume field exactly (counters, the rng
 * words, wall time to the last bit, the JSON documents, tensor bytes).  The
 * crash-safety claims are tested by leaving the directory in each state a
 * crash could leave it in (orphan tensors, stale temporary files, a failed
 * write) and loading from there; corrupt or mismatched files must give
 * errors naming the path.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seed/checkpoint.h"
#include "seed/fsutil.h"
#include "seed/safetensors.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;

static int has(const char *msg, const char *part)
{
	return strstr(msg, part) != NULL;
}

static const char *srcdir(void)
{
	const char *s = getenv("SEED_SRCDIR");
	return s && *s ? s : ".";
}

/* A checkpoint like the learner's: parameters plus Adam's moments. */
struct fixture {
	float w[3][4], b[4], m[16], v[16];
	int64_t counts[2];
	seed_checkpoint_tensor tensors[5];
	json_t *config, *model, *env_options;
	seed_checkpoint ck;
};

static void fixture_init(struct fixture *f, int64_t step, float bias)
{
	memset(f, 0, sizeof *f);
	for (int i = 0; i < 12; i++)
		f->w[i / 4][i % 4] = (float)i * 0.125f - 0.7f;
	for (int i = 0; i < 4; i++)
		f->b[i] = bias + (float)i;
	for (int i = 0; i < 16; i++) {
		f->m[i] = 1.0f / (float)(i + 1);
		f->v[i] = 1e-8f * (float)i;
	}
	f->counts[0] = step;
	f->counts[1] = -1;
	f->tensors[0] = (seed_checkpoint_tensor){
	    "policy.0.weight", seed_tensor_view(f->w, SEED_DTYPE_F32, 2, (int64_t[]){3, 4})};
	f->tensors[1] = (seed_checkpoint_tensor){"policy.0.bias",
	                                         seed_tensor_view(f->b, SEED_DTYPE_F32, 1, (int64_t[]){4})};
	f->tensors[2] = (seed_checkpoint_tensor){"optim.adam_m",
	                                         seed_tensor_view(f->m, SEED_DTYPE_F32, 1, (int64_t[]){16})};
	f->tensors[3] = (seed_checkpoint_tensor){"optim.adam_v",
	                                         seed_tensor_view(f->v, SEED_DTYPE_F32, 1, (int64_t[]){16})};
	f->tensors[4] = (seed_checkpoint_tensor){
	    "counts", seed_tensor_view(f->counts, SEED_DTYPE_I64, 1, (int64_t[]){2})};
	f->config = json_pack("{s:s, s:f, s:i, s:{s:[i,i]}, s:s}", "algo", "vtrace", "lr", 6e-4, "batch", 32,
	                      "net", "hidden", 64, 64, "note", "üñï \"quoted\"\n");
	f->model = json_pack("{s:s, s:[i,i], s:i}", "kind", "mlp", "hidden", 64, 64, "actions", 2);
	f->env_options = json_pack("{s:i}", "max_steps", 500);
	f->ck = (seed_checkpoint){
	    .config = f->config,
	    .env = "cartpole",
	    .env_options = f->env_options,
	    .model = f->model,
	    .step = step,
	    .frames = step * 1280 + 3,
	    .agent_steps = step * 320 + 1,
	    .policy_version = step + 1,
	    .optim_step = step,
	    .wall_time = 1234.5678901234567,
	    .ntensors = 5,
	    .tensors = f->tensors,
	};
	seed_rng_init(&f->ck.rng, 42, 7);
	for (int i = 0; i < 5; i++)
		seed_rng_u64(&f->ck.rng);
	f->ck.rng.s[3] = UINT64_MAX; /* a word no double or int64 holds */
}

static void fixture_free(struct fixture *f)
{
	json_decref(f->config);
	json_decref(f->model);
	json_decref(f->env_options);
}

/* Everything a resume needs, compared exactly. */
static void check_same(const seed_checkpoint *got, const seed_checkpoint *want)
{
	CHECK(got->step == want->step);
	CHECK(got->frames == want->frames);
	CHECK(got->agent_steps == want->agent_steps);
	CHECK(got->policy_version == want->policy_version);
	CHECK(got->optim_step == want->optim_step);
	CHECK(memcmp(got->rng.s, want->rng.s, sizeof want->rng.s) == 0);
	CHECK(memcmp(&got->wall_time, &want->wall_time, sizeof(double)) == 0);
	CHECK(got->env && strcmp(got->env, want->env) == 0);
	CHECK(json_equal(got->config, want->config));
	CHECK(json_equal(got->model, want->model));
	CHECK(json_equal(got->env_options, want->env_options));
	CHECK(got->seed_version && strcmp(got->seed_version, PACKAGE_VERSION) == 0);
	/* "YYYY-MM-DDTHH:MM:SSZ" */
	CHECK(got->created && strlen(got->created) == 20 && got->created[10] == 'T' &&
	      got->created[19] == 'Z');
	CHECK(got->ntensors == want->ntensors);
	for (size_t i = 0; i < want->ntensors && i < got->ntensors; i++) {
		CHECK_MSG(strcmp(got->tensors[i].name, want->tensors[i].name) == 0, "tensor %zu is %s", i,
		          got->tensors[i].name);
		const seed_tensor *t = seed_checkpoint_get(got, want->tensors[i].name);
		const seed_tensor *w = &want->tensors[i].tensor;
		CHECK(t && t->dtype == w->dtype && t->rank == w->rank);
		if (!t)
			continue;
		CHECK(seed_tensor_nbytes(t) == seed_tensor_nbytes(w));
		CHECK_MSG(memcmp(t->data, w->data, seed_tensor_nbytes(w)) == 0, "%s values",
		          want->tensors[i].name);
	}
}

/* agent_steps not known (-1, as load gives for a checkpoint written before
 * it existed) is saved as such a checkpoint was: without the key, so that
 * it loads as -1 again; 0 and more are written and read back. */
static void t_agent_steps_unknown(void)
{
	struct fixture f;
	fixture_init(&f, 7, 0.5f);
	f.ck.agent_steps = -1;
	const char *run = pathf(dir, "agent-steps");
	seed_err err = {""};
	CHECK_MSG(seed_checkpoint_save(run, &f.ck, &err) == 0, "%s", err.msg);
	json_t *j = json_load_file(pathf(run, "checkpoint.json"), 0, NULL);
	CHECK(j && !json_object_get(j, "agent_steps") &&
	      json_integer_value(json_object_get(j, "frames")) == f.ck.frames);
	json_decref(j);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(run, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && ck->agent_steps == -1 && ck->frames == f.ck.frames);
	seed_checkpoint_free(&ck);
	f.ck.agent_steps = 0;
	f.ck.step = 8;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(seed_checkpoint_load(run, &ck, &err) == 0 && ck && ck->agent_steps == 0);
	seed_checkpoint_free(&ck);
	fixture_free(&f);
}

static void t_save_load_roundtrip(void)
{
	struct fixture f;
	fixture_init(&f, 1000, 0.5f);
	const char *run = pathf(dir, "runs/a/b/run1"); /* parents created */
	seed_err err = {""};
	CHECK_MSG(seed_checkpoint_save(run, &f.ck, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(run, &ck, &err) == 0, "%s", err.msg);
	if (ck) {
		check_same(ck, &f.ck);
		CHECK(has(seed_checkpoint_file(ck), "checkpoint-000000001000.safetensors"));
		json_t *meta = seed_checkpoint_meta(ck);
		CHECK(json_is_object(meta) &&
		      strcmp(json_string_value(json_object_get(meta, "format")), "seed-checkpoint") == 0);
	}
	seed_checkpoint_free(&ck);
	CHECK(ck == NULL);
	seed_checkpoint_free(&ck); /* NULL is fine */
	/* For the cross-check by hand with Python (tests/golden/checkpoint_readback.py). */
	const char *export = getenv("SEED_EXPORT_DIR");
	if (export && *export)
		CHECK_MSG(seed_checkpoint_save(export, &f.ck, &err) == 0, "%s", err.msg);
	fixture_free(&f);
}

/* The generator picks up exactly where the saved one stood. */
static void t_resumed_rng_continues_stream(void)
{
	struct fixture f;
	fixture_init(&f, 3, 0);
	seed_rng_init(&f.ck.rng, 99, 1);
	seed_rng_u64(&f.ck.rng);
	const char *run = pathf(dir, "rng");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	seed_checkpoint *ck = NULL;
	CHECK(seed_checkpoint_load(run, &ck, &err) == 0);
	if (ck) {
		seed_rng a = f.ck.rng, b = ck->rng;
		for (int i = 0; i < 100; i++)
			CHECK(seed_rng_u64(&a) == seed_rng_u64(&b));
	}
	seed_checkpoint_free(&ck);
	fixture_free(&f);
}

/* The directory holds what the header promises, and checkpoint.json is
 * plain JSON with the fields written out. */
static void t_directory_layout(void)
{
	struct fixture f;
	fixture_init(&f, 5, 0);
	const char *run = pathf(dir, "layout");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	f.ck.step = 10;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(count_entries(run, "checkpoint-000000000005") == 0);
	CHECK(count_entries(run, "checkpoint-000000000010.safetensors") == 1);
	CHECK(count_entries(run, ".tmp") == 0);
	CHECK(count_entries(run, "") == 3);
	char link[256] = {0};
	CHECK(readlink(pathf(run, "checkpoint.safetensors"), link, sizeof link - 1) > 0);
	CHECK(strcmp(link, "checkpoint-000000000010.safetensors") == 0);

	json_error_t je;
	json_t *j = json_load_file(pathf(run, "checkpoint.json"), 0, &je);
	CHECK_MSG(j != NULL, "%s", je.text);
	CHECK(strcmp(json_string_value(json_object_get(j, "file")), "checkpoint-000000000010.safetensors") ==
	      0);
	CHECK(json_integer_value(json_object_get(j, "step")) == 10);
	CHECK(json_integer_value(json_object_get(j, "format_version")) == 1);
	/* The rng words as hex, worked out from the state by hand-formatting. */
	json_t *rng = json_object_get(j, "rng");
	for (int i = 0; i < 4; i++) {
		char want[17];
		snprintf(want, sizeof want, "%016" PRIx64, f.ck.rng.s[i]);
		CHECK(strcmp(json_string_value(json_array_get(rng, (size_t)i)), want) == 0);
	}
	CHECK(strcmp(json_string_value(json_array_get(rng, 3)), "ffffffffffffffff") == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(j, "env"), "name")), "cartpole") == 0);
	CHECK(json_real_value(json_object_get(j, "wall_time")) == 1234.5678901234567);
	json_decref(j);
	fixture_free(&f);
}

/* The lone .safetensors (also through the link) and checkpoint.json given
 * directly load the same checkpoint. */
static void t_load_other_entry_points(void)
{
	struct fixture f;
	fixture_init(&f, 77, 2);
	const char *run = pathf(dir, "entry");
	seed_err err = {""};
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	const char *paths[] = {
	    pathf(run, "checkpoint.json"),
	    pathf(run, "checkpoint.safetensors"),
	    pathf(run, "checkpoint-000000000077.safetensors"),
	};
	for (int i = 0; i < 3; i++) {
		seed_checkpoint *ck = NULL;
		CHECK_MSG(seed_checkpoint_load(paths[i], &ck, &err) == 0, "%s: %s", paths[i], err.msg);
		if (ck)
			check_same(ck, &f.ck);
		seed_checkpoint_free(&ck);
	}
	/* A relative path to checkpoint.json works too. */
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(chdir(run) == 0);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load("checkpoint.json", &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && ck->step == 77);
	seed_checkpoint_free(&ck);
	CHECK(chdir(cwd) == 0);
	fixture_free(&f);
}

/* The lone file carries the whole metadata as "seed.checkpoint", readable
 * without Seed's checkpoint code. */
static void t_safetensors_self_describing(void)
{
	struct fixture f;
	fixture_init(&f, 8, 0);
	const char *run = pathf(dir, "self");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	seed_safetensors *st = NULL;
	CHECK(seed_safetensors_load(pathf(run, "checkpoint.safetensors"), &st, &err) == 0);
	const char *text = st ? seed_safetensors_meta(st, "seed.checkpoint") : NULL;
	json_t *m = text ? json_loads(text, 0, NULL) : NULL;
	CHECK(m && json_integer_value(json_object_get(m, "step")) == 8);
	CHECK(m && json_equal(json_object_get(m, "config"), f.config));
	CHECK(m && json_object_get(m, "file") == NULL);
	json_decref(m);
	seed_safetensors_free(&st);
	fixture_free(&f);
}

/* Saving the same step again never overwrites the committed file. */
static void t_same_step_twice(void)
{
	struct fixture f, g;
	fixture_init(&f, 7, 1);
	fixture_init(&g, 7, 100);
	const char *run = pathf(dir, "twice");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(seed_checkpoint_save(run, &g.ck, &err) == 0);
	CHECK(count_entries(run, ".safetensors") == 2); /* the file and the link */
	seed_checkpoint *ck = NULL;
	CHECK(seed_checkpoint_load(run, &ck, &err) == 0);
	if (ck) {
		check_same(ck, &g.ck);
		CHECK(has(seed_checkpoint_file(ck), "checkpoint-000000000007.1.safetensors"));
	}
	seed_checkpoint_free(&ck);
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(seed_checkpoint_load(run, &ck, &err) == 0);
	CHECK(ck && has(seed_checkpoint_file(ck), "checkpoint-000000000007.safetensors"));
	seed_checkpoint_free(&ck);
	fixture_free(&f);
	fixture_free(&g);
}

/* Saves remove only what they made: other files in the run directory stay. */
static void t_other_files_kept(void)
{
	struct fixture f;
	fixture_init(&f, 1, 0);
	const char *run = pathf(dir, "others");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(write_bytes(pathf(run, "checkpoint-best.safetensors"), "x", 1) == 0);
	CHECK(write_bytes(pathf(run, "checkpoint-12.safetensors.bak"), "x", 1) == 0);
	CHECK(write_bytes(pathf(run, "metrics.jsonl"), "{}\n", 3) == 0);
	f.ck.step = 2;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(count_entries(run, "checkpoint-best.safetensors") == 1);
	CHECK(count_entries(run, "checkpoint-12.safetensors.bak") == 1);
	CHECK(count_entries(run, "metrics.jsonl") == 1);
	CHECK(count_entries(run, "checkpoint-000000000001") == 0);
	fixture_free(&f);
}

/* States a crash can leave behind: the new tensors written but not yet
 * committed (an orphan file), or a temporary file cut short.  The last
 * committed checkpoint still loads; the next save tidies up. */
static void t_crash_leftovers_ignored(void)
{
	struct fixture f, g;
	fixture_init(&f, 1, 0);
	fixture_init(&g, 99, 5);
	const char *run = pathf(dir, "crash");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	/* The orphan: a complete checkpoint file that checkpoint.json does not name. */
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	for (size_t i = 0; i < g.ck.ntensors; i++)
		CHECK(seed_safetensors_writer_add(w, g.tensors[i].name, &g.tensors[i].tensor, &err) == 0);
	CHECK(seed_safetensors_writer_write(w, pathf(run, "checkpoint-000000000099.safetensors"), &err) == 0);
	seed_safetensors_writer_free(&w);
	CHECK(write_bytes(pathf(run, ".checkpoint-000000000100.safetensors.tmp-12345-0"), "\x10\0\0", 3) ==
	      0);
	CHECK(write_bytes(pathf(run, ".checkpoint.json.tmp-12345-0"), "{\"fi", 4) == 0);

	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(run, &ck, &err) == 0, "%s", err.msg);
	if (ck)
		check_same(ck, &f.ck);
	seed_checkpoint_free(&ck);

	f.ck.step = 2;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(count_entries(run, "000000000099") == 0);
	CHECK(count_entries(run, ".tmp-") == 0);
	fixture_free(&f);
	fixture_free(&g);
}

/* A save that fails midway (file size limit standing in for a full disk)
 * leaves the previous checkpoint current and nothing else behind. */
static void t_failed_save_keeps_previous(void)
{
	struct fixture f;
	fixture_init(&f, 1, 0);
	const char *run = pathf(dir, "full");
	seed_err err;
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);

	static float big[64 << 10];
	seed_checkpoint_tensor bt = {"big", seed_tensor_view(big, SEED_DTYPE_F32, 1, (int64_t[]){64 << 10})};
	seed_checkpoint huge = f.ck;
	huge.step = 2;
	huge.ntensors = 1;
	huge.tensors = &bt;
	struct rlimit saved, lim;
	getrlimit(RLIMIT_FSIZE, &saved);
	lim = saved;
	lim.rlim_cur = 64 << 10;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	int rc = seed_checkpoint_save(run, &huge, &err);
	setrlimit(RLIMIT_FSIZE, &saved);
	signal(SIGXFSZ, prev);
	CHECK_MSG(rc == -EFBIG && has(err.msg, run), "rc %d: %s", rc, err.msg);

	seed_checkpoint *ck = NULL;
	CHECK(seed_checkpoint_load(run, &ck, &err) == 0);
	if (ck)
		check_same(ck, &f.ck);
	seed_checkpoint_free(&ck);
	CHECK(count_entries(run, ".tmp-") == 0);
	CHECK(count_entries(run, "000000000002") == 0);
	fixture_free(&f);
}

static void t_save_rejects_bad_checkpoints(void)
{
	struct fixture f;
	fixture_init(&f, 1, 0);
	const char *run = pathf(dir, "rejects");
	seed_err err;
	seed_checkpoint c = f.ck;
	c.frames = -1;
	CHECK(seed_checkpoint_save(run, &c, &err) == -EINVAL && has(err.msg, "frames"));
	c = f.ck;
	c.wall_time = NAN;
	CHECK(seed_checkpoint_save(run, &c, &err) == -EINVAL && has(err.msg, "wall_time"));
	c = f.ck;
	seed_checkpoint_tensor dup[2] = {f.tensors[0], f.tensors[0]};
	c.tensors = dup;
	c.ntensors = 2;
	CHECK(seed_checkpoint_save(run, &c, &err) == -EINVAL && has(err.msg, "policy.0.weight"));
	c = f.ck;
	c.env = "bad\xff";
	CHECK(seed_checkpoint_save(run, &c, &err) == -EINVAL);
	struct stat st;
	CHECK(stat(run, &st) != 0); /* nothing was created */
	CHECK(write_bytes(pathf(dir, "plainfile"), "x", 1) == 0);
	CHECK(seed_checkpoint_save(pathf(dir, "plainfile"), &f.ck, &err) == -ENOTDIR);
	CHECK(has(err.msg, "plainfile"));
	fixture_free(&f);
}

/* Absent pieces: env, model, config and tensors may all be missing. */
static void t_minimal_checkpoint(void)
{
	seed_checkpoint c = {.step = 0};
	const char *run = pathf(dir, "minimal");
	seed_err err;
	CHECK_MSG(seed_checkpoint_save(run, &c, &err) == 0, "%s", err.msg);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(run, &ck, &err) == 0, "%s", err.msg);
	CHECK(ck && ck->ntensors == 0 && !ck->env && !ck->env_options && !ck->model && !ck->config);
	CHECK(ck && ck->created != NULL);
	seed_checkpoint_free(&ck);
}

/* A safetensors file from elsewhere (here, Python's) loads with its tensors
 * and no metadata. */
static void t_plain_safetensors_file(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/data/st_ref_single.safetensors", srcdir());
	seed_checkpoint *ck = NULL;
	seed_err err;
	CHECK_MSG(seed_checkpoint_load(path, &ck, &err) == 0, "%s", err.msg);
	if (!ck)
		return;
	CHECK(ck->ntensors == 1 && strcmp(ck->tensors[0].name, "x") == 0);
	CHECK(ck->created == NULL && ck->seed_version == NULL && seed_checkpoint_meta(ck) == NULL);
	CHECK(ck->step == 0 && ck->config == NULL);
	seed_tensor x;
	CHECK(seed_checkpoint_expect(ck, "x", SEED_DTYPE_F32, 1, (int64_t[]){2}, &x, &err) == 0);
	CHECK(((float *)x.data)[0] == 0.5f && ((float *)x.data)[1] == -2.0f);
	CHECK(seed_checkpoint_expect(ck, "x", SEED_DTYPE_F32, 1, (int64_t[]){3}, &x, &err) == -EINVAL);
	CHECK_MSG(has(err.msg, path) && has(err.msg, "'x'") && has(err.msg, "[3]"), "%s", err.msg);
	seed_checkpoint_free(&ck);
}

static void t_get_on_hand_built(void)
{
	struct fixture f;
	fixture_init(&f, 1, 0);
	CHECK(seed_checkpoint_get(&f.ck, "optim.adam_v") == &f.tensors[3].tensor);
	CHECK(seed_checkpoint_get(&f.ck, "optim.x") == NULL);
	seed_tensor t;
	seed_err err;
	CHECK(seed_checkpoint_expect(&f.ck, "optim.adam_m", SEED_DTYPE_F32, 1, (int64_t[]){16}, &t, &err) ==
	      0);
	CHECK(seed_checkpoint_expect(&f.ck, "optim.adam_m", SEED_DTYPE_F32, 1, (int64_t[]){15}, &t, &err) ==
	      -EINVAL);
	CHECK(seed_checkpoint_expect(&f.ck, "nope", SEED_DTYPE_F32, 1, (int64_t[]){15}, &t, &err) == -ENOENT);
	CHECK(seed_checkpoint_meta(&f.ck) == NULL && seed_checkpoint_file(&f.ck) == NULL);
	fixture_free(&f);
}

/* ---- damaged run directories: errors name the path ---------------------- */

/* Save f as run directory name; its path goes to run (pathf's buffers are
 * reused too soon to hold it). */
static const char *saved_run(char run[4096], const char *name, struct fixture *f)
{
	snprintf(run, 4096, "%s/%s", dir, name);
	seed_err err;
	if (seed_checkpoint_save(run, &f->ck, &err) != 0)
		abort();
	return run;
}

static void expect_load_error(const char *path, int code, const char *part1, const char *part2)
{
	seed_checkpoint *ck = (seed_checkpoint *)&ck;
	seed_err err = {""};
	int rc = seed_checkpoint_load(path, &ck, &err);
	CHECK_MSG(rc == code, "rc %d, want %d: %s", rc, code, err.msg);
	CHECK(ck == (seed_checkpoint *)&ck);
	CHECK_MSG(has(err.msg, part1) && (!part2 || has(err.msg, part2)), "message: %s", err.msg);
}

static void t_missing_path(void)
{
	expect_load_error(pathf(dir, "no-such-run"), -ENOENT, "no-such-run", NULL);
}

static void t_directory_without_checkpoint(void)
{
	const char *empty = pathf(dir, "empty-run");
	CHECK(mkdir(empty, 0777) == 0);
	expect_load_error(empty, -ENOENT, "empty-run", "checkpoint.json");
}

static void t_json_corrupt(void)
{
	struct fixture f;
	fixture_init(&f, 3, 0);
	char runbuf[4096];
	const char *run = saved_run(runbuf, "corrupt-json", &f);
	CHECK(write_bytes(pathf(run, "checkpoint.json"), "{\"step\": 3,", 11) == 0);
	expect_load_error(run, -EBADMSG, "corrupt-json/checkpoint.json", "not valid JSON");
	CHECK(write_bytes(pathf(run, "checkpoint.json"), "[1]", 3) == 0);
	expect_load_error(run, -EBADMSG, "corrupt-json/checkpoint.json", "not a JSON object");
	CHECK(write_bytes(pathf(run, "checkpoint.json"), "{}", 2) == 0);
	expect_load_error(run, -EBADMSG, "corrupt-json/checkpoint.json", "file is missing");
	fixture_free(&f);
}

static void t_json_names_missing_file(void)
{
	struct fixture f;
	fixture_init(&f, 4, 0);
	char runbuf[4096];
	const char *run = saved_run(runbuf, "missing-st", &f);
	CHECK(unlink(pathf(run, "checkpoint-000000000004.safetensors")) == 0);
	expect_load_error(run, -ENOENT, "missing-st/checkpoint-000000000004.safetensors", "missing");
	fixture_free(&f);
}

static void t_json_file_outside_directory(void)
{
	struct fixture f;
	fixture_init(&f, 4, 0);
	char runbuf[4096];
	const char *run = saved_run(runbuf, "escape", &f);
	const char *bad[] = {"{\"file\": \"../other.safetensors\"}", "{\"file\": \"/etc/passwd\"}",
	                     "{\"file\": \".hidden\"}", "{\"file\": \"\"}", "{\"file\": 5}"};
	for (int i = 0; i < 5; i++) {
		CHECK(write_bytes(pathf(run, "checkpoint.json"), bad[i], strlen(bad[i])) == 0);
		expect_load_error(run, -EBADMSG, "escape/checkpoint.json", "file");
	}
	fixture_free(&f);
}

static void t_truncated_safetensors(void)
{
	struct fixture f;
	fixture_init(&f, 6, 0);
	char runbuf[4096];
	const char *run = saved_run(runbuf, "truncated", &f);
	const char *st = pathf(run, "checkpoint-000000000006.safetensors");
	CHECK(truncate(st, 100) == 0);
	expect_load_error(run, -EBADMSG, "truncated/checkpoint-000000000006.safetensors", "header length");
	expect_load_error(st, -EBADMSG, "truncated/checkpoint-000000000006.safetensors", NULL);
	fixture_free(&f);
}

/* Tensors from another checkpoint under the name checkpoint.json gives:
 * the pairing check catches it. */
static void t_mismatched_pair(void)
{
	struct fixture f, g;
	fixture_init(&f, 20, 0);
	fixture_init(&g, 21, 0);
	char abuf[4096];
	const char *a = saved_run(abuf, "pair-a", &f);
	char bbuf[4096];
	const char *b = saved_run(bbuf, "pair-b", &g);
	size_t len;
	char *bytes = read_bytes(pathf(b, "checkpoint-000000000021.safetensors"), &len);
	CHECK(bytes && write_bytes(pathf(a, "checkpoint-000000000020.safetensors"), bytes, len) == 0);
	free(bytes);
	expect_load_error(a, -EBADMSG, "pair-a/checkpoint.json", "disagree");
	/* A plain safetensors without Seed metadata in its place. */
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/data/st_ref_single.safetensors", srcdir());
	bytes = read_bytes(path, &len);
	CHECK(bytes && write_bytes(pathf(a, "checkpoint-000000000020.safetensors"), bytes, len) == 0);
	free(bytes);
	expect_load_error(a, -EBADMSG, "pair-a/checkpoint-000000000020.safetensors", "seed.checkpoint");
	fixture_free(&f);
	fixture_free(&g);
}

/* Metadata fields checked one by one (through lone files, which have no
 * checkpoint.json to disagree with). */
static void t_metadata_fields_validated(void)
{
	static const struct {
		const char *meta, *want;
	} cases[] = {
	    {"[1]", "not a JSON object"},
	    {"{\"format\": \"other\"}", "format is 'other'"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 2}", "format_version 2"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1}", "seed_version is missing"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"0\", \"created\": "
	     "\"x\","
	     " \"step\": -1}",
	     "step is not a non-negative integer"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"0\", \"created\": "
	     "\"x\","
	     " \"step\": 1, \"frames\": 1, \"policy_version\": 1, \"optim_step\": 1, \"wall_time\": \"1\"}",
	     "wall_time is not a number"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"0\", \"created\": "
	     "\"x\","
	     " \"step\": 1, \"frames\": 1, \"policy_version\": 1, \"optim_step\": 1, \"wall_time\": 1,"
	     " \"rng\": [\"0\", \"1\", \"2\", \"3\"]}",
	     "rng words"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"0\", \"created\": "
	     "\"x\","
	     " \"step\": 1, \"frames\": 1, \"policy_version\": 1, \"optim_step\": 1, \"wall_time\": 1,"
	     " \"rng\": [\"0000000000000000\", \"0000000000000000\", \"000000000000000g\", "
	     "\"0000000000000000\"]}",
	     "rng words"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"0\", \"created\": "
	     "\"x\","
	     " \"step\": 1, \"frames\": 1, \"policy_version\": 1, \"optim_step\": 1, \"wall_time\": 1,"
	     " \"rng\": [\"0000000000000000\", \"0000000000000000\", \"0000000000000000\", "
	     "\"0000000000000000\"],"
	     " \"env\": {\"name\": 3}}",
	     "env.name is not a string"},
	    {"{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"0\", \"created\": "
	     "\"x\","
	     " \"step\": 1, \"frames\": 4, \"agent_steps\": -1, \"policy_version\": 1, \"optim_step\": 1}",
	     "agent_steps is not a non-negative integer"},
	    {"not json", "not valid JSON"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		seed_safetensors_writer *w = seed_safetensors_writer_new();
		seed_err err;
		CHECK(seed_safetensors_writer_meta(w, "seed.checkpoint", cases[i].meta, &err) == 0);
		char name[64];
		snprintf(name, sizeof name, "meta%zu.safetensors", i);
		const char *path = pathf(dir, name);
		CHECK(seed_safetensors_writer_write(w, path, &err) == 0);
		seed_safetensors_writer_free(&w);
		seed_checkpoint *ck = NULL;
		int rc = seed_checkpoint_load(path, &ck, &err);
		CHECK_MSG(rc == -EBADMSG && has(err.msg, path) && has(err.msg, cases[i].want),
		          "case %zu: rc %d: %s", i, rc, err.msg);
		CHECK(ck == NULL);
	}
	/* And the complete one loads, with null env/model/config as absent. */
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	seed_err err;
	CHECK(
	    seed_safetensors_writer_meta(
	        w, "seed.checkpoint",
	        "{\"format\": \"seed-checkpoint\", \"format_version\": 1, \"seed_version\": \"9.9\", "
	        "\"created\":"
	        " \"2020-01-02T03:04:05Z\", \"step\": 9007199254740993, \"frames\": 2, \"policy_version\": 3,"
	        " \"optim_step\": 4, \"wall_time\": 5, \"rng\": [\"0123456789abcdef\", \"FEDCBA9876543210\","
	        " \"0000000000000000\", \"ffffffffffffffff\"], \"env\": null, \"model\": null}",
	        &err) == 0);
	const char *path = pathf(dir, "meta-ok.safetensors");
	CHECK(seed_safetensors_writer_write(w, path, &err) == 0);
	seed_safetensors_writer_free(&w);
	seed_checkpoint *ck = NULL;
	CHECK_MSG(seed_checkpoint_load(path, &ck, &err) == 0, "%s", err.msg);
	if (ck) {
		CHECK(ck->step == INT64_C(9007199254740993) && ck->frames == 2 && ck->policy_version == 3 &&
		      ck->optim_step == 4 && ck->wall_time == 5.0);
		/* Written before agent steps were counted apart: not known. */
		CHECK(ck->agent_steps == -1);
		CHECK(ck->rng.s[0] == UINT64_C(0x0123456789abcdef) &&
		      ck->rng.s[1] == UINT64_C(0xfedcba9876543210) && ck->rng.s[2] == 0 &&
		      ck->rng.s[3] == UINT64_MAX);
		CHECK(!ck->env && !ck->model && !ck->config &&
		      strcmp(ck->created, "2020-01-02T03:04:05Z") == 0);
	}
	seed_checkpoint_free(&ck);
}

/* ---- checksums ---------------------------------------------------------- */

/* CRC-32 golden values: "123456789" is the check string of the CRC
 * catalogue (zlib.crc32(b"123456789") == 0xcbf43926), and no bytes give
 * 0.  The fixture's tensors were checked with Python's zlib.crc32 by
 * tests/golden/checkpoint_readback.py. */
static void t_checksums_stored(void)
{
	uint8_t digits[9];
	memcpy(digits, "123456789", 9);
	float none[1];
	seed_checkpoint_tensor ts[] = {
	    {"digits", seed_tensor_view(digits, SEED_DTYPE_U8, 1, (int64_t[]){9})},
	    {"empty", seed_tensor_view(none, SEED_DTYPE_F32, 2, (int64_t[]){0, 3})},
	};
	seed_checkpoint ck = {.ntensors = 2, .tensors = ts};
	char run[2048];
	snprintf(run, sizeof run, "%s/%s", dir, "crc");
	seed_err err = {""};
	CHECK_MSG(seed_checkpoint_save(run, &ck, &err) == 0, "%s", err.msg);
	json_t *j = json_load_file(pathf(run, "checkpoint.json"), 0, NULL);
	json_t *crc = json_object_get(j, "crc32");
	CHECK(json_object_size(crc) == 2);
	CHECK(json_string_value(json_object_get(crc, "digits")) &&
	      strcmp(json_string_value(json_object_get(crc, "digits")), "cbf43926") == 0);
	CHECK(json_string_value(json_object_get(crc, "empty")) &&
	      strcmp(json_string_value(json_object_get(crc, "empty")), "00000000") == 0);
	json_decref(j);
	seed_checkpoint *back = NULL;
	CHECK_MSG(seed_checkpoint_load(run, &back, &err) == 0, "%s", err.msg);
	seed_checkpoint_free(&back);
}

/* Flip one byte of a tensor's data in the file: loading refuses it, from
 * the run directory and from the lone file, naming the file and the
 * tensor. */
static void t_flipped_byte_refused(void)
{
	struct fixture f;
	fixture_init(&f, 7, 0.25f);
	char run[2048];
	snprintf(run, sizeof run, "%s/%s", dir, "flip");
	seed_err err = {""};
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	seed_checkpoint *ck = NULL;
	CHECK(seed_checkpoint_load(run, &ck, &err) == 0);
	char file[4096];
	snprintf(file, sizeof file, "%s", ck ? seed_checkpoint_file(ck) : "");
	seed_checkpoint_free(&ck);
	/* The data section ends with the 4-byte tensors, added in order
	 * after the 8-byte ones: its last byte is optim.adam_v's. */
	FILE *fp = fopen(file, "r+b");
	CHECK(fp != NULL);
	if (!fp)
		return;
	fseek(fp, -1, SEEK_END);
	int c = fgetc(fp);
	fseek(fp, -1, SEEK_END);
	fputc(c ^ 0x10, fp);
	fclose(fp);
	const char *where[] = {run, file};
	for (int k = 0; k < 2; k++) {
		int rc = seed_checkpoint_load(where[k], &ck, &err);
		CHECK_MSG(rc == -EBADMSG && has(err.msg, file) && has(err.msg, "'optim.adam_v'") &&
		              has(err.msg, "corrupt"),
		          "rc %d: %s", rc, err.msg);
		CHECK(ck == NULL);
	}
	fixture_free(&f);
}

/* A checkpoint from before checksums (no "crc32") still loads, unchecked;
 * and a checksum without its tensor, or a tensor without its checksum, is
 * refused. */
static void t_checksums_optional_but_complete(void)
{
	struct fixture f;
	fixture_init(&f, 3, 0);
	char run[2048];
	snprintf(run, sizeof run, "%s/%s", dir, "old");
	seed_err err = {""};
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	json_t *meta = json_load_file(pathf(run, "checkpoint.json"), 0, NULL);
	const char *file = json_string_value(json_object_get(meta, "file"));
	const char *variants[] = {"old", "extra", "missing"};
	for (int v = 0; v < 3; v++) {
		json_t *m = json_deep_copy(meta);
		json_object_del(m, "file");
		if (v == 0)
			json_object_del(m, "crc32");
		else if (v == 1)
			json_object_set_new(json_object_get(m, "crc32"), "ghost", json_string("00000000"));
		else
			json_object_del(json_object_get(m, "crc32"), "counts");
		/* Rewrite the tensors file with this metadata, and the JSON. */
		seed_safetensors_writer *w = seed_safetensors_writer_new();
		for (size_t i = 0; i < f.ck.ntensors; i++)
			seed_safetensors_writer_add(w, f.ck.tensors[i].name, &f.ck.tensors[i].tensor, &err);
		char *text = json_dumps(m, JSON_COMPACT);
		seed_safetensors_writer_meta(w, "seed.checkpoint", text, &err);
		CHECK(seed_safetensors_writer_write(w, pathf(run, file), &err) == 0);
		seed_safetensors_writer_free(&w);
		free(text);
		json_object_set_new(m, "file", json_string(file));
		CHECK(json_dump_file(m, pathf(run, "checkpoint.json"), 0) == 0);
		json_decref(m);
		seed_checkpoint *ck = NULL;
		int rc = seed_checkpoint_load(run, &ck, &err);
		if (v == 0) {
			CHECK_MSG(rc == 0, "%s", err.msg);
			if (ck)
				check_same(ck, &f.ck);
		} else {
			CHECK_MSG(rc == -EBADMSG && has(err.msg, v == 1 ? "'ghost'" : "'counts'"),
			          "%s: rc %d: %s", variants[v], rc, err.msg);
		}
		seed_checkpoint_free(&ck);
	}
	json_decref(meta);
	fixture_free(&f);
}

/* ---- version reservations ------------------------------------------------ */

static void t_version_reservations(void)
{
	char run[2048];
	snprintf(run, sizeof run, "%s/%s", dir, "versions");
	seed_err err = {""};
	int64_t r = 7;
	CHECK(seed_fs_mkdirs(run, &err) == 0);
	CHECK(seed_checkpoint_reserved(run, &r, &err) == 0 && r == -1); /* none yet */
	CHECK(seed_checkpoint_reserve(run, 4095, &err) == 0);
	CHECK(seed_checkpoint_reserved(run, &r, &err) == 0 && r == 4095);
	CHECK(seed_checkpoint_reserve(run, INT64_MAX, &err) == 0);
	CHECK(seed_checkpoint_reserved(run, &r, &err) == 0 && r == INT64_MAX);
	CHECK(seed_checkpoint_reserve(run, -1, &err) == -EINVAL);
	/* The file is what the manual says. */
	CHECK(seed_checkpoint_reserve(run, 12, &err) == 0);
	json_t *j = json_load_file(pathf(run, "versions.json"), 0, NULL);
	CHECK(j && json_object_size(j) == 1 &&
	      json_integer_value(json_object_get(j, "reserved_through")) == 12);
	json_decref(j);
	/* A save leaves it alone. */
	struct fixture f;
	fixture_init(&f, 1, 0);
	CHECK(seed_checkpoint_save(run, &f.ck, &err) == 0);
	CHECK(seed_checkpoint_reserved(run, &r, &err) == 0 && r == 12);
	fixture_free(&f);
	const char *bad[] = {"{\"reserved_through\": -3}", "{\"reserved_through\": 1.5}", "[]", "nonsense"};
	for (int i = 0; i < 4; i++) {
		CHECK(write_bytes(pathf(run, "versions.json"), bad[i], strlen(bad[i])) == 0);
		int rc = seed_checkpoint_reserved(run, &r, &err);
		CHECK_MSG(rc == -EBADMSG && has(err.msg, "versions.json"), "%s: rc %d: %s", bad[i], rc,
		          err.msg);
	}
	/* Where nothing can be written, the error names the path. */
	CHECK(seed_checkpoint_reserve(pathf(dir, "no/such/dir"), 1, &err) < 0 && has(err.msg, "no/such/dir"));
}

/* What a run directory holds, in the words both trainers use. */
static void t_holds(void)
{
	char s[256] = "disk full";
	seed_checkpoint_holds(s, sizeof s, "runs/x", "update", -1, 7, true);
	CHECK_MSG(strcmp(s, "disk full; runs/x holds no checkpoint of this run") == 0, "%s", s);
	snprintf(s, sizeof s, "disk full");
	seed_checkpoint_holds(s, sizeof s, "runs/x", "round", 4, 7, true);
	CHECK_MSG(strcmp(s, "disk full; runs/x still holds the checkpoint of round 4, 3 rounds old") == 0,
	          "%s", s);
	snprintf(s, sizeof s, "done");
	seed_checkpoint_holds(s, sizeof s, "runs/x", "update", 7, 7, false);
	CHECK_MSG(strcmp(s, "done, checkpoint in runs/x") == 0, "%s", s);
	snprintf(s, sizeof s, "done");
	seed_checkpoint_holds(s, sizeof s, "runs/x", "update", -1, 7, false);
	CHECK_MSG(strcmp(s, "done; NOT SAVED: runs/x holds no checkpoint of this run") == 0, "%s", s);
	snprintf(s, sizeof s, "done");
	seed_checkpoint_holds(s, sizeof s, "runs/x", "round", 5, 7, false);
	CHECK_MSG(strcmp(s, "done; NOT SAVED: runs/x holds the checkpoint of round 5") == 0, "%s", s);
	/* A full buffer stays terminated, and what was there stays. */
	char small[12] = "0123456789";
	seed_checkpoint_holds(small, sizeof small, "runs/x", "update", -1, 7, true);
	CHECK(strcmp(small, "0123456789;") == 0);
	seed_checkpoint_holds(small, sizeof small, "runs/x", "update", -1, 7, true);
	CHECK(strcmp(small, "0123456789;") == 0);
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_save_load_roundtrip);
	TAP_RUN(t_agent_steps_unknown);
	TAP_RUN(t_resumed_rng_continues_stream);
	TAP_RUN(t_directory_layout);
	TAP_RUN(t_load_other_entry_points);
	TAP_RUN(t_safetensors_self_describing);
	TAP_RUN(t_same_step_twice);
	TAP_RUN(t_other_files_kept);
	TAP_RUN(t_crash_leftovers_ignored);
	TAP_RUN(t_failed_save_keeps_previous);
	TAP_RUN(t_save_rejects_bad_checkpoints);
	TAP_RUN(t_minimal_checkpoint);
	TAP_RUN(t_plain_safetensors_file);
	TAP_RUN(t_get_on_hand_built);
	TAP_RUN(t_missing_path);
	TAP_RUN(t_directory_without_checkpoint);
	TAP_RUN(t_json_corrupt);
	TAP_RUN(t_json_names_missing_file);
	TAP_RUN(t_json_file_outside_directory);
	TAP_RUN(t_truncated_safetensors);
	TAP_RUN(t_mismatched_pair);
	TAP_RUN(t_metadata_fields_validated);
	TAP_RUN(t_checksums_stored);
	TAP_RUN(t_flipped_byte_refused);
	TAP_RUN(t_checksums_optional_but_complete);
	TAP_RUN(t_version_reservations);
	TAP_RUN(t_holds);
	tmpdir_remove(dir);
	return tap_done();
}
