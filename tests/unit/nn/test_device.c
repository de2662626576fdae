/* tests/unit/nn/test_device.c: device names (seed_device_check,
 * seed_model_set_device), on any machine: the CPU is always there; "cuda"
 * is either present or refused with a message naming the device. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "seed/nn.h"
#include "tap.h"

static void t_names(void)
{
	seed_err err;
	CHECK(seed_device_check("cpu", &err) == 0);
	const char *bad[] = {"gpu", "cuda:", "cuda:x", "cuda:-1", "cuda0", "CPU", "", "cuda:1:2"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = seed_device_check(bad[i], &err);
		CHECK_MSG(rc == -EINVAL, "'%s' gave %d", bad[i], rc);
		CHECK_MSG(strstr(err.msg, "must be cpu, cuda or cuda:N") != NULL, "%s", err.msg);
	}
	/* Present or not, never a bad name; when absent, the message names
	 * the device. */
	int rc = seed_device_check("cuda:7", &err);
	CHECK(rc == 0 || rc == -ENODEV);
	if (rc == -ENODEV)
		CHECK_MSG(strncmp(err.msg, "device 'cuda:7': ", 17) == 0, "%s", err.msg);
}

static void t_model_device(void)
{
	seed_err err;
	seed_model *m = NULL;
	int64_t shape[1] = {3};
	CHECK(seed_model_new(&m, "{\"torso\": [{\"type\": \"linear\", \"out\": 4}]}", SEED_DTYPE_F32, 1,
	                     shape, 2, 8, &err) == 0);
	CHECK(strcmp(seed_model_device(m), "cpu") == 0);
	CHECK(seed_model_set_device(m, "cpu", &err) == 0);
	CHECK(seed_model_set_device(m, "tpu", &err) == -EINVAL);
	CHECK(strcmp(seed_model_device(m), "cpu") == 0);
	/* A refused device leaves the model where it was, working. */
	if (seed_device_check("cuda", &err) < 0) {
		CHECK(seed_model_set_device(m, "cuda", &err) == -ENODEV);
		CHECK(strcmp(seed_model_device(m), "cpu") == 0);
	}
	float obs[3] = {1, 2, 3}, logits[2], value;
	CHECK(seed_model_forward(m, 1, obs, logits, &value) == 0);
	seed_model_free(&m);
}

/* The heads the CUDA backend does not compute: with a GPU, moving there
 * fails with -ENOTSUP and a message naming the key; without one, as any
 * model (-ENODEV).  Either way the model stays on the CPU, working. */
static void t_cpu_only_heads(void)
{
	static const struct {
		const char *json, *key;
	} cases[] = {
	    {"{\"torso\": [], \"policy\": {\"type\": \"gaussian\"}}", "gaussian"},
	    {"{\"torso\": [], \"critic_torso\": []}", "critic_torso"},
	};
	int64_t shape[1] = {3};
	seed_err probe;
	bool gpu = seed_device_check("cuda", &probe) == 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		seed_err err = {{0}};
		seed_model *m = NULL;
		CHECK(seed_model_new(&m, cases[i].json, SEED_DTYPE_F32, 1, shape, 2, 4, &err) == 0);
		if (!m)
			continue;
		int rc = seed_model_set_device(m, "cuda", &err);
		CHECK_MSG(rc == (gpu ? -ENOTSUP : -ENODEV), "%s: %d %s", cases[i].json, rc, err.msg);
		if (gpu)
			CHECK_MSG(strstr(err.msg, cases[i].key) != NULL, "%s", err.msg);
		CHECK(strcmp(seed_model_device(m), "cpu") == 0);
		float obs[3] = {1, 2, 3}, logits[4], value;
		CHECK(seed_model_forward(m, 1, obs, logits, &value) == 0);
		seed_model_free(&m);
	}
}

int main(void)
{
	TAP_RUN(t_names);
	TAP_RUN(t_model_device);
	TAP_RUN(t_cpu_only_heads);
	return tap_done();
}
