/* tests/fuzz/fuzz_config.c: a libFuzzer target for training configurations.
 *
 * The input is a configuration file (seed-config(5)), optionally followed by
 * a NUL byte and --set assignments, one per line (at most 8): what
 * seed-learn --config FILE --set KEY=VALUE... hands seed_config_resolve.
 * Besides "no crash, no leak, no undefined behaviour", it checks properties:
 *   - a refused configuration gets a message, and an error code of the
 *     contract (-SEED_EOPTION for the file, -EINVAL for an assignment);
 *   - every key an accepted assignment set is in the resolved configuration
 *     (unless a later one replaced an object on its path);
 *   - the resolved configuration, printed (--print-config) and read back as
 *     a file, resolves again, to the same text, model and environment
 *     options: what a checkpoint records resumes to exactly what was
 *     trained.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "seed/config.h"

#define MAX_SETS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[512], again_path[512];
	snprintf(path, sizeof path, "%s/config.json", fuzz_scratch());
	snprintf(again_path, sizeof again_path, "%s/again.json", fuzz_scratch());
	const uint8_t *nul = memchr(data, '\0', size);
	size_t file_len = nul ? (size_t)(nul - data) : size;
	fuzz_write_file(path, data, file_len);

	/* The assignments: NUL-terminated copies of the lines after the NUL. */
	char *sets_text = NULL;
	const char *sets[MAX_SETS];
	int nsets = 0;
	if (nul) {
		size_t n = size - file_len - 1;
		sets_text = malloc(n + 1);
		memcpy(sets_text, nul + 1, n);
		sets_text[n] = '\0';
		for (char *line = sets_text; line && nsets < MAX_SETS;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			sets[nsets++] = line;
			line = nl ? nl + 1 : NULL;
		}
	}

	seed_config c;
	seed_err err;
	err.msg[0] = '\0';
	int rc = seed_config_resolve(NULL, path, NULL, sets, nsets, &c, &err);
	if (rc != 0) {
		REQUIRE(rc == -SEED_EOPTION || rc == -EINVAL);
		REQUIRE_MESSAGE(err);
		REQUIRE(c.root == NULL && c.model == NULL && c.env_options == NULL);
		free(sets_text);
		return 0;
	}
	for (int i = 0; i < nsets; i++) {
		char key[256];
		size_t klen = (size_t)(strchr(sets[i], '=') - sets[i]);
		REQUIRE(klen < sizeof key);
		memcpy(key, sets[i], klen);
		key[klen] = '\0';
		/* Unless a later assignment replaced an object on its path
		 * ("a.b=1" then "a=2"). */
		bool replaced = false;
		for (int j = i + 1; j < nsets && !replaced; j++) {
			size_t jlen = (size_t)(strchr(sets[j], '=') - sets[j]);
			replaced = jlen < klen && key[jlen] == '.' && memcmp(key, sets[j], jlen) == 0;
		}
		REQUIRE(replaced || seed_config_get(c.root, key) != NULL);
	}
	char *text = seed_config_text(c.root, NULL, &err);
	REQUIRE(text != NULL);
	fuzz_write_file(again_path, text, strlen(text));
	seed_config d;
	err.msg[0] = '\0';
	rc = seed_config_resolve(NULL, again_path, NULL, NULL, 0, &d, &err);
	if (rc != 0)
		fprintf(stderr, "the printed configuration does not resolve: %s\n%s\n", err.msg, text);
	REQUIRE(rc == 0);
	char *text2 = seed_config_text(d.root, NULL, &err);
	if (strcmp(text, text2) != 0)
		fprintf(stderr, "printed:\n%s\nresolved again:\n%s\n", text, text2);
	REQUIRE(strcmp(text, text2) == 0);
	/* The same model and options (as JSON: the printed text sorts keys). */
	json_t *m1 = json_loads(c.model, 0, NULL), *m2 = json_loads(d.model, 0, NULL);
	json_t *o1 = json_loads(c.env_options, 0, NULL), *o2 = json_loads(d.env_options, 0, NULL);
	REQUIRE(m1 && o1 && json_equal(m1, m2) && json_equal(o1, o2));
	json_decref(m1);
	json_decref(m2);
	json_decref(o1);
	json_decref(o2);
	free(text);
	free(text2);
	seed_config_free(&d);
	seed_config_free(&c);
	free(sets_text);
	return 0;
}
