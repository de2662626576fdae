/* tests/fuzz/fuzz_checkpoint.c: a libFuzzer target for checkpoints.
 *
 * The input is a run directory in one piece: checkpoint.json's text, a NUL
 * byte, then the bytes of the .safetensors file it names (written as
 * "c.safetensors", the name the corpus's checkpoint.json files give); with
 * no NUL, the whole input is the .safetensors file and checkpoint.json is
 * empty.  Each input is written into a scratch directory and read as
 * seed_checkpoint_load reads it: as the run directory, as the lone
 * .safetensors file (metadata from its own "seed.checkpoint" entry), and
 * checkpoint.json's text as versions.json (seed_checkpoint_reserved).
 * Besides "no crash, no leak, no undefined behaviour", it checks
 * properties:
 *   - a refused checkpoint gets a negative code and a message that names
 *     the file at fault;
 *   - a loaded checkpoint has counts >= 0, a finite wall time, tensors that
 *     seed_checkpoint_get and _expect find with their own shapes;
 *   - it saves, and the saved run directory loads back to the same
 *     counters, generator, environment, model, config and tensors;
 *   - a reservation that reads is >= 0, and -1 only without versions.json;
 *     one that does not gets a message naming versions.json.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"
#include "seed/checkpoint.h"

static char dir[512], saved[512], json_path[600], st_path[600], versions_path[600];

static void same_tensors(const seed_checkpoint *a, const seed_checkpoint *b)
{
	REQUIRE(a->ntensors == b->ntensors);
	for (size_t i = 0; i < a->ntensors; i++) {
		const seed_checkpoint_tensor *s = &a->tensors[i];
		const seed_tensor *t = seed_checkpoint_get(b, s->name);
		REQUIRE(t && t->dtype == s->tensor.dtype && t->rank == s->tensor.rank);
		REQUIRE(memcmp(t->shape, s->tensor.shape, (size_t)t->rank * sizeof t->shape[0]) == 0);
		size_t nb = seed_tensor_nbytes(t);
		REQUIRE(nb == 0 || memcmp(t->data, s->tensor.data, nb) == 0);
	}
}

static bool same_json(const json_t *a, const json_t *b)
{
	return (!a && !b) || (a && b && json_equal((json_t *)a, (json_t *)b));
}

static void check_loaded(const seed_checkpoint *ck)
{
	REQUIRE(ck->step >= 0 && ck->frames >= 0 && ck->policy_version >= 0 && ck->optim_step >= 0);
	REQUIRE(isfinite(ck->wall_time));
	REQUIRE((ck->created == NULL) == (ck->seed_version == NULL));
	REQUIRE(seed_checkpoint_file(ck) != NULL);
	for (size_t i = 0; i < ck->ntensors; i++) {
		const seed_checkpoint_tensor *t = &ck->tensors[i];
		REQUIRE(seed_checkpoint_get(ck, t->name) != NULL);
		seed_tensor view;
		seed_err err;
		REQUIRE(seed_checkpoint_expect(ck, t->name, t->tensor.dtype, t->tensor.rank, t->tensor.shape,
		                               &view, &err) == 0);
	}

	/* Saved again, it reads back the same. */
	seed_err err;
	err.msg[0] = '\0';
	int rc = seed_checkpoint_save(saved, ck, &err);
	if (rc)
		fprintf(stderr, "a loaded checkpoint does not save: %s\n", err.msg);
	REQUIRE(rc == 0);
	seed_checkpoint *back = NULL;
	rc = seed_checkpoint_load(saved, &back, &err);
	if (rc)
		fprintf(stderr, "a saved checkpoint does not load: %s\n", err.msg);
	REQUIRE(rc == 0);
	REQUIRE(back->step == ck->step && back->frames == ck->frames);
	REQUIRE(back->policy_version == ck->policy_version && back->optim_step == ck->optim_step);
	REQUIRE(back->wall_time == ck->wall_time);
	REQUIRE(memcmp(&back->rng, &ck->rng, sizeof ck->rng) == 0);
	REQUIRE((!back->env && !ck->env) || (back->env && ck->env && strcmp(back->env, ck->env) == 0));
	REQUIRE(same_json(back->env_options, ck->env_options));
	REQUIRE(same_json(back->model, ck->model));
	REQUIRE(same_json(back->config, ck->config));
	same_tensors(ck, back);
	seed_checkpoint_free(&back);
}

static void load(const char *path)
{
	seed_checkpoint *ck = NULL;
	seed_err err;
	err.msg[0] = '\0';
	int rc = seed_checkpoint_load(path, &ck, &err);
	if (rc) {
		REQUIRE(rc < 0 && ck == NULL);
		REQUIRE_MESSAGE(err);
		REQUIRE(strstr(err.msg, dir) != NULL);
		return;
	}
	check_loaded(ck);
	seed_checkpoint_free(&ck);
	REQUIRE(ck == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "%s/run", fuzz_scratch());
		snprintf(saved, sizeof saved, "%s/saved", fuzz_scratch());
		snprintf(json_path, sizeof json_path, "%s/checkpoint.json", dir);
		snprintf(st_path, sizeof st_path, "%s/c.safetensors", dir);
		snprintf(versions_path, sizeof versions_path, "%s/versions.json", dir);
		REQUIRE(mkdir(dir, 0700) == 0);
	}
	const uint8_t *nul = memchr(data, '\0', size);
	size_t json_len = nul ? (size_t)(nul - data) : 0;
	const uint8_t *st = nul ? nul + 1 : data;
	fuzz_write_file(json_path, data, json_len);
	fuzz_write_file(st_path, st, size - (size_t)(st - data));

	load(dir);
	load(st_path);

	int64_t through = -2;
	seed_err err;
	unlink(versions_path);
	REQUIRE(seed_checkpoint_reserved(dir, &through, &err) == 0 && through == -1);
	fuzz_write_file(versions_path, data, json_len);
	err.msg[0] = '\0';
	int rc = seed_checkpoint_reserved(dir, &through, &err);
	if (rc == 0)
		REQUIRE(through >= 0);
	else
		REQUIRE(rc < 0 && strstr(err.msg, versions_path) != NULL); /* -EBADMSG, -EFBIG */
	return 0;
}
