/* checkpoint.c: saving and loading run-directory checkpoints (see
 * seed/checkpoint.h for the layout and the crash-safety argument).
 *
 * The order of a save is the whole design: new tensors under a fresh name,
 * then checkpoint.json naming them (the commit), then the convenience link
 * and the removal of what is no longer named.  Loading from a directory
 * follows checkpoint.json and checks that the tensors file carries the very
 * same metadata, so hand-copied mismatched files are caught too.
 *
 * Integrity: the metadata carries a CRC-32 (zlib's polynomial, so Python's
 * zlib.crc32 checks it too) of every tensor's bytes, and loading verifies
 * them all before handing anything out.  Metadata without "crc32" is from
 * before checksums and loads unchecked.
 *
 * versions.json is independent of the checkpoint files: a learner rewrites
 * it whenever it reserves policy versions, and nothing else touches it.
 */
#include "config.h"

#include "seed/checkpoint.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "seed/buf.h"
#include "seed/fsutil.h"
#include "seed/safetensors.h"

#define CKPT_JSON "checkpoint.json"
#define CKPT_LINK "checkpoint.safetensors"
#define VERSIONS_JSON "versions.json"
#define META_KEY "seed.checkpoint"
#define FORMAT "seed-checkpoint"
#define FORMAT_VERSION 1
/* checkpoint.json holds configs, not tensors: anything this big is not one. */
#define MAX_JSON_BYTES (64u << 20)

struct seed_checkpoint_owned {
	seed_safetensors *st;
	json_t *meta; /* NULL for a lone file without Seed metadata */
	seed_checkpoint_tensor *tensors;
};

static char *xstrdup(const char *s)
{
	return strcpy(seed_xmalloc(strlen(s) + 1), s);
}

/* "dir/name" in a new string. */
static char *join(const char *dir, const char *name)
{
	size_t d = strlen(dir);
	int slash = d > 0 && dir[d - 1] == '/';
	char *p = seed_xmalloc(d + strlen(name) + 2);
	sprintf(p, "%s%s%s", dir, slash ? "" : "/", name);
	return p;
}

/* ---- checksums ----------------------------------------------------------- */

/* CRC-32 (reflected polynomial 0xEDB88320, initial and final value all
 * ones: zlib's), four bytes at a time.  The tables are built per save or
 * load, on the stack: 1024 entries cost nothing beside a model's bytes and
 * need no shared state. */
typedef struct crc_tab {
	uint32_t t[4][256];
} crc_tab;

static void crc_init(crc_tab *c)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t r = i;
		for (int k = 0; k < 8; k++)
			r = r & 1 ? (r >> 1) ^ 0xEDB88320u : r >> 1;
		c->t[0][i] = r;
	}
	for (int k = 1; k < 4; k++)
		for (int i = 0; i < 256; i++)
			c->t[k][i] = (c->t[k - 1][i] >> 8) ^ c->t[0][c->t[k - 1][i] & 0xff];
}

static uint32_t crc32_of(const crc_tab *c, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint32_t crc = 0xFFFFFFFFu;
	for (; n >= 4; p += 4, n -= 4) {
		crc ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		crc = c->t[3][crc & 0xff] ^ c->t[2][(crc >> 8) & 0xff] ^ c->t[1][(crc >> 16) & 0xff] ^
		      c->t[0][crc >> 24];
	}
	while (n--)
		crc = (crc >> 8) ^ c->t[0][(crc ^ *p++) & 0xff];
	return crc ^ 0xFFFFFFFFu;
}

static uint32_t tensor_crc(const crc_tab *c, const seed_tensor *t)
{
	int64_t nb = seed_tensor_nbytes(t);
	return nb > 0 ? crc32_of(c, t->data, (size_t)nb) : crc32_of(c, "", 0);
}

/* ---- saving ------------------------------------------------------------- */

static json_t *json_or_null(json_t *j)
{
	return j ? json_incref(j) : json_null();
}

/* The metadata object for ck (without "file"). */
static int build_meta(const seed_checkpoint *ck, json_t **out, seed_err *err)
{
	const struct {
		const char *name;
		int64_t v;
	} counts[] = {
	    {"step", ck->step},
	    {"frames", ck->frames},
	    {"policy_version", ck->policy_version},
	    {"optim_step", ck->optim_step},
	};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if (counts[i].v < 0)
			return seed_err_set(err, -EINVAL, "checkpoint: %s is negative (%" PRId64 ")",
			                    counts[i].name, counts[i].v);
	if (!isfinite(ck->wall_time))
		return seed_err_set(err, -EINVAL, "checkpoint: wall_time is not finite");
	json_t *env_name = NULL;
	if (ck->env && !(env_name = json_string(ck->env)))
		return seed_err_set(err, -EINVAL, "checkpoint: environment name is not UTF-8");

	char created[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);

	json_t *rng = json_array();
	for (int i = 0; i < 4; i++) {
		char hex[17];
		snprintf(hex, sizeof hex, "%016" PRIx64, ck->rng.s[i]);
		json_array_append_new(rng, json_string(hex));
	}
	json_t *env = json_null();
	if (env_name || ck->env_options) {
		json_decref(env);
		env = json_pack("{s:o, s:o}", "name", env_name ? env_name : json_null(), "options",
		                json_or_null(ck->env_options));
	}
	crc_tab tab;
	crc_init(&tab);
	json_t *crc = json_object();
	for (size_t i = 0; i < ck->ntensors; i++) {
		char hex[9];
		snprintf(hex, sizeof hex, "%08" PRIx32, tensor_crc(&tab, &ck->tensors[i].tensor));
		/* A bad name is refused by the writer, with a message naming it. */
		if (ck->tensors[i].name)
			json_object_set_new(crc, ck->tensors[i].name, json_string(hex));
	}
	json_t *m = json_pack(
	    "{s:s, s:i, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:o, s:o, s:o}", "format", FORMAT,
	    "format_version", FORMAT_VERSION, "seed_version", PACKAGE_VERSION, "created", created, "step",
	    (json_int_t)ck->step, "frames", (json_int_t)ck->frames, "agent_steps",
	    (json_int_t)ck->agent_steps, "policy_version", (json_int_t)ck->policy_version, "optim_step",
	    (json_int_t)ck->optim_step, "wall_time", ck->wall_time, "rng", rng, "env", env, "model",
	    json_or_null(ck->model), "config", json_or_null(ck->config), "crc32", crc);
	if (!m)
		seed_oom(0);     /* every input was checked: only allocation can fail */
	if (ck->agent_steps < 0) /* not known: written as before there were any */
		json_object_del(m, "agent_steps");
	*out = m;
	return 0;
}

/* checkpoint-DIGITS.safetensors or checkpoint-DIGITS.DIGITS.safetensors:
 * the names saves make, and the only ones they ever remove. */
static int is_ckpt_name(const char *s)
{
	static const char pre[] = "checkpoint-", suf[] = ".safetensors";
	size_t n = strlen(s), p = sizeof pre - 1, q = sizeof suf - 1;
	if (n <= p + q || strncmp(s, pre, p) != 0 || strcmp(s + n - q, suf) != 0)
		return 0;
	int digits = 0, dots = 0;
	for (size_t i = p; i < n - q; i++) {
		if (isdigit((unsigned char)s[i]))
			digits++;
		else if (s[i] == '.' && digits > 0 && dots == 0 && i + 1 < n - q)
			dots++, digits = 0;
		else
			return 0;
	}
	return digits > 0;
}

/* A file name for the tensors of step that no file in dir has yet, so that
 * writing it can never replace the file checkpoint.json names. */
static int fresh_name(const char *dir, int64_t step, char **out, seed_err *err)
{
	char name[64];
	for (unsigned k = 0; k < 10000; k++) {
		if (k == 0)
			snprintf(name, sizeof name, "checkpoint-%012" PRId64 ".safetensors", step);
		else
			snprintf(name, sizeof name, "checkpoint-%012" PRId64 ".%u.safetensors", step, k);
		char *p = join(dir, name);
		struct stat st;
		int rc = lstat(p, &st) == 0 ? 1 : errno == ENOENT ? 0 : -errno;
		if (rc < 0)
			seed_err_set(err, rc, "%s: cannot check for %s: %s", dir, p, strerror(-rc));
		free(p);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			*out = xstrdup(name);
			return 0;
		}
	}
	return seed_err_set(err, -EEXIST, "%s: too many checkpoints of step %" PRId64, dir, step);
}

/* Point dir/checkpoint.safetensors at name, atomically. */
static int relink(const char *dir, const char *name, seed_err *err)
{
	char *link = join(dir, CKPT_LINK);
	char tmpname[64];
	snprintf(tmpname, sizeof tmpname, "." CKPT_LINK ".tmp-link-%ld", (long)getpid());
	char *tmp = join(dir, tmpname);
	int rc = 0;
	unlink(tmp); /* left by a crash of an earlier process with this pid */
	if (symlink(name, tmp) != 0)
		rc = seed_err_set(err, -errno, "%s: cannot create link %s: %s", link, tmp, strerror(errno));
	else if (rename(tmp, link) != 0) {
		rc = seed_err_set(err, -errno, "%s: cannot replace it with a link to %s: %s", link, name,
		                  strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	free(link);
	return rc;
}

/* Remove checkpoint files other than keep, and temporary files that a
 * crashed save left behind.  Best effort: a file that stays is harmless,
 * since only checkpoint.json says which one is current. */
static void remove_stale(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		int old = is_ckpt_name(n) && strcmp(n, keep) != 0;
		int tmp = strncmp(n, ".checkpoint", 11) == 0 && strstr(n, ".tmp-");
		if (old || tmp) {
			char *p = join(dir, n);
			unlink(p);
			free(p);
		}
	}
	closedir(d);
}

int seed_checkpoint_save(const char *dir, const seed_checkpoint *ck, seed_err *err)
{
	json_t *meta = NULL;
	int rc = build_meta(ck, &meta, err);
	if (rc)
		return rc;
	seed_safetensors_writer *w = seed_safetensors_writer_new();
	char *compact = NULL, *name = NULL, *st_path = NULL, *json_path = NULL, *text = NULL;
	for (size_t i = 0; i < ck->ntensors && rc == 0; i++)
		rc = seed_safetensors_writer_add(w, ck->tensors[i].name, &ck->tensors[i].tensor, err);
	if (rc)
		goto out;
	compact = json_dumps(meta, JSON_COMPACT);
	if (!compact)
		seed_oom(0);
	rc = seed_safetensors_writer_meta(w, META_KEY, compact, err);
	if (rc == 0)
		rc = seed_fs_mkdirs(dir, err);
	if (rc)
		goto out;

	if ((rc = fresh_name(dir, ck->step, &name, err)))
		goto out;
	st_path = join(dir, name);
	rc = seed_safetensors_writer_write(w, st_path, err);
	if (rc)
		goto out;

	json_object_set_new(meta, "file", json_string(name));
	text = json_dumps(meta, JSON_INDENT(2));
	if (!text)
		seed_oom(0);
	json_path = join(dir, CKPT_JSON);
	size_t tlen = strlen(text);
	seed_fs_part parts[] = {{text, tlen}, {"\n", 1}};
	rc = seed_fs_write_atomic(json_path, parts, 2, err);
	if (rc) {
		/* Not committed: the new tensors are named by nothing. */
		unlink(st_path);
		goto out;
	}
	/* Committed.  What follows only tidies up around the new checkpoint. */
	rc = relink(dir, name, err);
	remove_stale(dir, name);
	int src = seed_fs_sync_dir(dir, rc ? NULL : err);
	if (rc == 0)
		rc = src;
out:
	free(text);
	free(json_path);
	free(st_path);
	free(name);
	free(compact);
	seed_safetensors_writer_free(&w);
	json_decref(meta);
	return rc;
}

/* ---- loading ------------------------------------------------------------ */

static int bad(seed_err *err, const char *where, const char *field, const char *what)
{
	return seed_err_set(err, -EBADMSG, "%s: checkpoint metadata: %s %s", where, field, what);
}

static int get_count(const json_t *meta, const char *where, const char *field, int64_t *v, seed_err *err)
{
	const json_t *j = json_object_get(meta, field);
	if (!j)
		return bad(err, where, field, "is missing");
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return bad(err, where, field, "is not a non-negative integer");
	*v = json_integer_value(j);
	return 0;
}

static int get_string(const json_t *meta, const char *where, const char *field, const char **v, seed_err *err)
{
	const json_t *j = json_object_get(meta, field);
	if (!j)
		return bad(err, where, field, "is missing");
	if (!json_is_string(j))
		return bad(err, where, field, "is not a string");
	*v = json_string_value(j);
	return 0;
}

static int parse_hex64(const char *s, uint64_t *v)
{
	if (strlen(s) != 16)
		return -1;
	uint64_t x = 0;
	for (int i = 0; i < 16; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -1;
		x = x << 4 |
		    (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower(s[i]) - 'a' + 10));
	}
	*v = x;
	return 0;
}

/* A JSON value, with JSON null meaning absent. */
static json_t *value_or_null(json_t *j)
{
	return j && !json_is_null(j) ? j : NULL;
}

/* Check meta and fill ck's metadata fields (pointing into meta). */
static int read_meta(json_t *meta, const char *where, seed_checkpoint *ck, seed_err *err)
{
	if (!json_is_object(meta))
		return seed_err_set(err, -EBADMSG, "%s: checkpoint metadata is not a JSON object", where);
	const char *format;
	int rc = get_string(meta, where, "format", &format, err);
	if (rc)
		return rc;
	if (strcmp(format, FORMAT) != 0)
		return seed_err_set(err, -EBADMSG, "%s: format is '%s', not '" FORMAT "'", where, format);
	int64_t version;
	if ((rc = get_count(meta, where, "format_version", &version, err)))
		return rc;
	if (version != FORMAT_VERSION)
		return seed_err_set(err, -EBADMSG,
		                    "%s: checkpoint format_version %" PRId64 ", this Seed reads %d", where,
		                    version, FORMAT_VERSION);
	if ((rc = get_string(meta, where, "seed_version", &ck->seed_version, err)) ||
	    (rc = get_string(meta, where, "created", &ck->created, err)) ||
	    (rc = get_count(meta, where, "step", &ck->step, err)) ||
	    (rc = get_count(meta, where, "frames", &ck->frames, err)) ||
	    (rc = get_count(meta, where, "policy_version", &ck->policy_version, err)) ||
	    (rc = get_count(meta, where, "optim_step", &ck->optim_step, err)))
		return rc;
	/* Written since frames count emulator frames; a checkpoint without it
	 * counted agent steps as frames (seed/checkpoint.h). */
	ck->agent_steps = -1;
	if (json_object_get(meta, "agent_steps") &&
	    (rc = get_count(meta, where, "agent_steps", &ck->agent_steps, err)))
		return rc;
	const json_t *wt = json_object_get(meta, "wall_time");
	if (!wt)
		return bad(err, where, "wall_time", "is missing");
	if (!json_is_number(wt))
		return bad(err, where, "wall_time", "is not a number");
	ck->wall_time = json_number_value(wt);

	const json_t *rng = json_object_get(meta, "rng");
	if (!rng)
		return bad(err, where, "rng", "is missing");
	if (!json_is_array(rng) || json_array_size(rng) != 4)
		return bad(err, where, "rng", "is not an array of 4 words");
	for (size_t i = 0; i < 4; i++) {
		const json_t *word = json_array_get(rng, i);
		if (!json_is_string(word) || parse_hex64(json_string_value(word), &ck->rng.s[i]) != 0)
			return bad(err, where, "rng", "words are not 16-digit hex strings");
	}

	json_t *env = value_or_null(json_object_get(meta, "env"));
	if (env) {
		if (!json_is_object(env))
			return bad(err, where, "env", "is not an object {name, options}");
		json_t *name = value_or_null(json_object_get(env, "name"));
		if (name && !json_is_string(name))
			return bad(err, where, "env.name", "is not a string");
		ck->env = name ? json_string_value(name) : NULL;
		ck->env_options = value_or_null(json_object_get(env, "options"));
	}
	ck->model = value_or_null(json_object_get(meta, "model"));
	ck->config = value_or_null(json_object_get(meta, "config"));
	return 0;
}

/* The "seed.checkpoint" metadata of st, parsed; *meta NULL if it has none. */
static int embedded_meta(const seed_safetensors *st, json_t **meta, seed_err *err)
{
	const char *text = seed_safetensors_meta(st, META_KEY);
	*meta = NULL;
	if (!text)
		return 0;
	json_error_t je;
	*meta = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!*meta)
		return seed_err_set(err, -EBADMSG, "%s: __metadata__ '" META_KEY "' is not valid JSON: %s",
		                    seed_safetensors_path(st), je.text);
	return 0;
}

/* Check the tensors of st against the "crc32" object of meta, if any: every
 * tensor must have a checksum and every checksum a tensor. */
static int verify_checksums(const seed_safetensors *st, const json_t *meta, seed_err *err)
{
	const char *path = seed_safetensors_path(st);
	const json_t *crc = meta ? json_object_get(meta, "crc32") : NULL;
	if (!crc || json_is_null(crc))
		return 0; /* written before checksums existed */
	if (!json_is_object(crc))
		return seed_err_set(err, -EBADMSG, "%s: checkpoint metadata: crc32 is not an object", path);
	crc_tab tab;
	crc_init(&tab);
	size_t n = seed_safetensors_count(st);
	for (size_t i = 0; i < n; i++) {
		const char *name = seed_safetensors_name(st, i);
		const json_t *want = json_object_get(crc, name);
		uint64_t stored = 0;
		if (!want)
			return seed_err_set(err, -EBADMSG, "%s: tensor '%s' has no checksum in the metadata",
			                    path, name);
		const char *hex = json_string_value(want);
		char *end = NULL;
		if (hex && strlen(hex) == 8 && isxdigit((unsigned char)hex[0]))
			stored = strtoull(hex, &end, 16);
		if (!end || *end)
			return seed_err_set(err, -EBADMSG,
			                    "%s: tensor '%s': checksum is not 8 hex digits in the metadata",
			                    path, name);
		uint32_t got = tensor_crc(&tab, seed_safetensors_get(st, name));
		if (got != (uint32_t)stored)
			return seed_err_set(err, -EBADMSG,
			                    "%s: tensor '%s' is corrupt: its bytes have CRC-32 %08" PRIx32
			                    ", the metadata says %s",
			                    path, name, got, hex);
	}
	if (json_object_size(crc) != n) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)crc, k, v)
		{
			if (!seed_safetensors_get(st, k))
				return seed_err_set(
				    err, -EBADMSG,
				    "%s: the metadata has a checksum for tensor '%s', which the "
				    "file lacks",
				    path, k);
		}
	}
	return 0;
}

/* Assemble the result from st and meta (both taken over). */
static int finish(seed_safetensors *st, json_t *meta, const char *where, seed_checkpoint **out, seed_err *err)
{
	seed_checkpoint *ck = seed_xcalloc(1, sizeof *ck);
	ck->owned = seed_xcalloc(1, sizeof *ck->owned);
	ck->owned->st = st;
	ck->owned->meta = meta;
	int rc = meta ? read_meta(meta, where, ck, err) : 0;
	if (rc == 0)
		rc = verify_checksums(st, meta, err);
	if (rc) {
		seed_checkpoint_free(&ck);
		return rc;
	}
	size_t n = seed_safetensors_count(st);
	ck->owned->tensors = seed_xcalloc(n ? n : 1, sizeof *ck->owned->tensors);
	for (size_t i = 0; i < n; i++) {
		const char *name = seed_safetensors_name(st, i);
		ck->owned->tensors[i].name = name;
		ck->owned->tensors[i].tensor = *seed_safetensors_get(st, name);
	}
	ck->ntensors = n;
	ck->tensors = ck->owned->tensors;
	*out = ck;
	return 0;
}

static int load_lone(const char *path, seed_checkpoint **out, seed_err *err)
{
	seed_safetensors *st;
	int rc = seed_safetensors_load(path, &st, err);
	if (rc)
		return rc;
	json_t *meta;
	if ((rc = embedded_meta(st, &meta, err))) {
		seed_safetensors_free(&st);
		return rc;
	}
	return finish(st, meta, path, out, err);
}

/* Load what json_path commits to.  *vanished is set when the file it names
 * is missing: a concurrent save may have replaced both meanwhile. */
static int load_committed(const char *dir, const char *json_path, seed_checkpoint **out, int *vanished,
                          seed_err *err)
{
	*vanished = 0;
	void *text;
	size_t len;
	int rc = seed_fs_read(json_path, MAX_JSON_BYTES, &text, &len, err);
	if (rc == -ENOENT)
		return seed_err_set(err, rc, "%s: no checkpoint here (%s is missing)", dir, json_path);
	if (rc)
		return rc;
	json_error_t je;
	json_t *meta = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!meta)
		return seed_err_set(err, -EBADMSG, "%s: not valid JSON: %s (line %d)", json_path, je.text,
		                    je.line);
	const char *file;
	if (!json_is_object(meta)) {
		json_decref(meta);
		return seed_err_set(err, -EBADMSG, "%s: not a JSON object", json_path);
	}
	if ((rc = get_string(meta, json_path, "file", &file, err))) {
		json_decref(meta);
		return rc;
	}
	/* A bare name in the same directory: the metadata must not send a
	 * reader elsewhere. */
	if (!*file || strchr(file, '/') || file[0] == '.') {
		rc = seed_err_set(err, -EBADMSG,
		                  "%s: \"file\" must name a file in the same directory, not '%s'", json_path,
		                  file);
		json_decref(meta);
		return rc;
	}
	char *st_path = join(dir, file);
	seed_safetensors *st = NULL;
	json_t *emb = NULL;
	rc = seed_safetensors_load(st_path, &st, err);
	if (rc == -ENOENT) {
		*vanished = 1;
		rc = seed_err_set(err, rc, "%s names %s, which is missing", json_path, st_path);
	}
	if (rc == 0)
		rc = embedded_meta(st, &emb, err);
	if (rc == 0) {
		json_t *mine = json_deep_copy(meta);
		json_object_del(mine, "file");
		if (!emb)
			rc = seed_err_set(err, -EBADMSG,
			                  "%s: no '" META_KEY "' metadata, so it cannot be the file %s names",
			                  st_path, json_path);
		else if (!json_equal(mine, emb))
			rc = seed_err_set(err, -EBADMSG,
			                  "%s and %s disagree: they belong to different checkpoints",
			                  json_path, st_path);
		json_decref(mine);
	}
	json_decref(emb);
	free(st_path);
	if (rc) {
		seed_safetensors_free(&st);
		json_decref(meta);
		return rc;
	}
	return finish(st, meta, json_path, out, err);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int seed_checkpoint_load(const char *path, seed_checkpoint **out, seed_err *err)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return seed_err_set(err, -errno, "%s: %s", path, strerror(errno));
	char *dir, *json_path;
	if (S_ISDIR(sb.st_mode)) {
		dir = xstrdup(path);
		json_path = join(path, CKPT_JSON);
	} else if (ends_with(path, ".json")) {
		const char *slash = strrchr(path, '/');
		dir = xstrdup(slash ? path : ".");
		if (slash)
			dir[slash - path + 1] = '\0';
		json_path = xstrdup(path);
	} else {
		return load_lone(path, out, err);
	}
	/* A save running beside us removes the file the checkpoint.json we
	 * read names, after committing a new one: read again, a few times. */
	int rc, vanished;
	for (int attempt = 0; attempt < 3; attempt++) {
		rc = load_committed(dir, json_path, out, &vanished, err);
		if (!vanished)
			break;
	}
	free(json_path);
	free(dir);
	return rc;
}

void seed_checkpoint_free(seed_checkpoint **ckp)
{
	if (!ckp || !*ckp)
		return;
	seed_checkpoint *ck = *ckp;
	if (ck->owned) {
		seed_safetensors_free(&ck->owned->st);
		json_decref(ck->owned->meta);
		free(ck->owned->tensors);
		free(ck->owned);
	}
	free(ck);
	*ckp = NULL;
}

const seed_tensor *seed_checkpoint_get(const seed_checkpoint *ck, const char *name)
{
	if (ck->owned)
		return seed_safetensors_get(ck->owned->st, name);
	for (size_t i = 0; i < ck->ntensors; i++)
		if (strcmp(ck->tensors[i].name, name) == 0)
			return &ck->tensors[i].tensor;
	return NULL;
}

int seed_checkpoint_expect(const seed_checkpoint *ck, const char *name, seed_dtype dt, int rank,
                           const int64_t *shape, seed_tensor *out, seed_err *err)
{
	if (ck->owned)
		return seed_safetensors_expect(ck->owned->st, name, dt, rank, shape, out, err);
	const seed_tensor *t = seed_checkpoint_get(ck, name);
	if (!t)
		return seed_err_set(err, -ENOENT, "checkpoint: no tensor '%s'", name);
	int same = t->dtype == dt && t->rank == rank;
	for (int i = 0; same && i < rank; i++)
		same = t->shape[i] == shape[i];
	if (!same)
		return seed_err_set(err, -EINVAL, "checkpoint: tensor '%s' has another dtype or shape", name);
	*out = *t;
	return 0;
}

json_t *seed_checkpoint_meta(const seed_checkpoint *ck)
{
	return ck->owned ? ck->owned->meta : NULL;
}

const char *seed_checkpoint_file(const seed_checkpoint *ck)
{
	return ck->owned ? seed_safetensors_path(ck->owned->st) : NULL;
}

int seed_checkpoint_load_model(const seed_checkpoint *ck, seed_model *m, seed_err *err)
{
	float *params = seed_model_params(m);
	for (int i = 0; i < seed_model_num_tensors(m); i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		seed_tensor t;
		int rc = seed_checkpoint_expect(ck, p->name, SEED_DTYPE_F32, p->rank, p->shape, &t, err);
		if (rc)
			return rc;
		memcpy(params + p->offset, t.data, p->numel * sizeof(float));
	}
	return 0;
}

/* ---- version reservations ---------------------------------------------- */

int seed_checkpoint_reserve(const char *dir, int64_t through, seed_err *err)
{
	if (through < 0)
		return seed_err_set(err, -EINVAL, "%s: cannot reserve versions up to %" PRId64, dir, through);
	char text[64];
	int n = snprintf(text, sizeof text, "{\"reserved_through\": %" PRId64 "}\n", through);
	char *path = join(dir, VERSIONS_JSON);
	seed_fs_part part = {text, (size_t)n};
	int rc = seed_fs_write_atomic(path, &part, 1, err);
	free(path);
	return rc;
}

int seed_checkpoint_reserved(const char *dir, int64_t *through, seed_err *err)
{
	char *path = join(dir, VERSIONS_JSON);
	void *text;
	size_t len;
	int rc = seed_fs_read(path, 4096, &text, &len, err);
	if (rc == -ENOENT) {
		free(path);
		*through = -1;
		return 0;
	}
	if (rc) {
		free(path);
		return rc;
	}
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(text);
	json_t *v = json_is_object(j) ? json_object_get(j, "reserved_through") : NULL;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		rc = seed_err_set(err, -EBADMSG, "%s: not {\"reserved_through\": N} with N >= 0", path);
	else
		*through = json_integer_value(v);
	json_decref(j);
	free(path);
	return rc;
}

void seed_checkpoint_holds(char *s, size_t n, const char *dir, const char *unit, int64_t saved, int64_t now,
                           bool failed)
{
	size_t len = strnlen(s, n);
	if (len + 1 >= n)
		return;
	char *at = s + len;
	size_t left = n - len;
	const char *not_saved = failed ? "" : "NOT SAVED: ";
	if (!failed && saved == now)
		snprintf(at, left, ", checkpoint in %s", dir);
	else if (saved < 0)
		snprintf(at, left, "; %s%s holds no checkpoint of this run", not_saved, dir);
	else if (failed)
		snprintf(at, left, "; %s still holds the checkpoint of %s %" PRId64 ", %" PRId64 " %ss old",
		         dir, unit, saved, now - saved, unit);
	else
		snprintf(at, left, "; NOT SAVED: %s holds the checkpoint of %s %" PRId64, dir, unit, saved);
}
