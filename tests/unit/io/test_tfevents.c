/* tests/unit/io/test_tfevents.c: TensorBoard event files.
 *
 * Golden values, never from the code under test: CRC-32C against its
 * published check values (the CRC catalogue's "123456789" and RFC 3720's
 * B.4 vectors); the masking worked by hand; whole records from
 * tests/golden/tfevents_ref.py, which serializes the Events with protobuf and
 * frames them with TensorBoard's own masked CRC-32C (the Event bytes are
 * also spelt out by hand below).  tests/cli/tensorboard.bats reads a real run's
 * file with TensorBoard's reader.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seed/tfevents.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;

/* tests/golden/tfevents_ref.py: Event{wall_time 2.0, file_version
 * "brain.Event:2"}, the first record of a file opened at wall time 2.0. */
static const uint8_t first_record[40] = {
    0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa3, 0x7f, 0x4b, 0x22, 0x09, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x1a, 0x0d, 0x62, 0x72, 0x61, 0x69, 0x6e,
    0x2e, 0x45, 0x76, 0x65, 0x6e, 0x74, 0x3a, 0x32, 0xff, 0x2e, 0xe0, 0xe7,
};
/* Event{wall_time 1.5, step 300, summary {value {tag "loss", simple_value 0.25}}}. */
static const uint8_t scalar_record[43] = {
    0x1b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1a, 0x0d, 0x9e, 0x13, 0x09, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f, 0x10, 0xac, 0x02, 0x2a, 0x0d, 0x0a, 0x0b, 0x0a, 0x04,
    0x6c, 0x6f, 0x73, 0x73, 0x15, 0x00, 0x00, 0x80, 0x3e, 0x99, 0x08, 0xde, 0xed,
};
/* Event{wall_time 3.0, step -1, summary {value {tag "a", simple_value 0},
 * value {tag "\u00e9/b", simple_value -2}}}. */
static const uint8_t two_record[61] = {
    0x2d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x41, 0x8a, 0xfb, 0x09, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x08, 0x40, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    0x2a, 0x17, 0x0a, 0x08, 0x0a, 0x01, 0x61, 0x15, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x0b, 0x0a, 0x04,
    0xc3, 0xa9, 0x2f, 0x62, 0x15, 0x00, 0x00, 0x00, 0xc0, 0xa4, 0xaa, 0x41, 0xb6,
};

/* "dir/events.out.tfevents.0000000002.HOST" and its suffixed sibling. */
static const char *expected_path(const char *suffix)
{
	static char path[8192];
	char host[256];
	if (gethostname(host, sizeof host) != 0 || !host[0])
		strcpy(host, "localhost");
	host[sizeof host - 1] = '\0';
	snprintf(path, sizeof path, "%s/events.out.tfevents.0000000002.%s%s", dir, host, suffix);
	return path;
}

static int bytes_equal(const char *got, size_t len, const uint8_t *want, size_t n)
{
	return got && len == n && memcmp(got, want, n) == 0;
}

static void t_crc32c_check_values(void)
{
	static const struct {
		const char *name;
		uint8_t fill; /* every byte, or: */
		int ramp;     /* 1: 0x00..0x1f, -1: 0x1f..0x00 */
		uint32_t want;
	} rfc3720[] = {
	    {"32 bytes of zeros", 0x00, 0, 0x8A9136AA},
	    {"32 bytes of ones", 0xFF, 0, 0x62A8AB43},
	    {"32 incrementing bytes", 0, 1, 0x46DD794E},
	    {"32 decrementing bytes", 0, -1, 0x113FDB5C},
	};
	CHECK(seed_tfevents_crc32c("123456789", 9) == 0xE3069283u);
	CHECK(seed_tfevents_crc32c("", 0) == 0);
	for (size_t i = 0; i < sizeof rfc3720 / sizeof *rfc3720; i++) {
		uint8_t b[32];
		for (int k = 0; k < 32; k++)
			b[k] = rfc3720[i].ramp > 0   ? (uint8_t)k
			       : rfc3720[i].ramp < 0 ? (uint8_t)(31 - k)
			                             : rfc3720[i].fill;
		uint32_t got = seed_tfevents_crc32c(b, 32);
		CHECK_MSG(got == rfc3720[i].want, "%s: 0x%08X, want 0x%08X", rfc3720[i].name, got,
		          rfc3720[i].want);
	}
}

/* ((crc >> 15) | (crc << 17)) + 0xa282ead8, by hand:
 *   0:          0 | 0 = 0;                             + 0xA282EAD8 = 0xA282EAD8
 *   1:          0 | 0x00020000;                        + ...        = 0xA284EAD8
 *   0x8000:     1 | 0 (bit 15 leaves the word);       + ...        = 0xA282EAD9
 *   0xFFFFFFFF: 0x1FFFF | 0xFFFE0000 = 0xFFFFFFFF;    + ...        = 0xA282EAD7 (carry dropped)
 *   0xE3069283: >> 15 = 0x0001C60D (its top 17 bits), << 17 = 0x25060000 (its low 15
 *               bits, 0x1283, moved up); 0x2507C60D + 0xA282EAD8 = 0xC78AB0E5. */
static void t_mask_by_hand(void)
{
	CHECK(seed_tfevents_mask(0) == 0xA282EAD8u);
	CHECK(seed_tfevents_mask(1) == 0xA284EAD8u);
	CHECK(seed_tfevents_mask(0x8000) == 0xA282EAD9u);
	CHECK(seed_tfevents_mask(0xFFFFFFFFu) == 0xA282EAD7u);
	CHECK(seed_tfevents_mask(0xE3069283u) == 0xC78AB0E5u);
}

/* The Event bytes of scalar_record, from the wire format by hand: keys are
 * field << 3 | wire type (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit). */
static void t_event_bytes_by_hand(void)
{
	static const struct {
		const char *what;
		uint8_t bytes[9];
		size_t n;
	} parts[] = {
	    /* wall_time (1, 64-bit): 1.5 = 0x3FF8000000000000, little endian */
	    {"wall_time", {0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F}, 9},
	    /* step (2, varint): 300 = 0b10_0101100, low 7 bits first with the
	     * continuation bit: 0xAC, then 0x02 */
	    {"step", {0x10, 0xAC, 0x02}, 3},
	    {"summary (5, bytes), 13 bytes", {0x2A, 0x0D}, 2},
	    {"  value (1, bytes), 11 bytes", {0x0A, 0x0B}, 2},
	    {"    tag (1, bytes): \"loss\"", {0x0A, 0x04, 'l', 'o', 's', 's'}, 6},
	    /* simple_value (2, 32-bit): 0.25 = 0x3E800000, little endian */
	    {"    simple_value", {0x15, 0, 0, 0x80, 0x3E}, 5},
	};
	uint8_t event[27];
	size_t at = 0;
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
		CHECK_MSG(memcmp(scalar_record + 12 + at, parts[i].bytes, parts[i].n) == 0, "%s",
		          parts[i].what);
		memcpy(event + at, parts[i].bytes, parts[i].n);
		at += parts[i].n;
	}
	CHECK(at == sizeof event);
	/* The frame: the length, 27, in 8 bytes LE, and the data's masked CRC at the end. */
	CHECK(scalar_record[0] == 27 && memcmp(scalar_record + 1, "\0\0\0\0\0\0\0", 7) == 0);
	uint32_t crc = seed_tfevents_mask(seed_tfevents_crc32c(event, sizeof event));
	CHECK(memcmp(scalar_record + 39, &(uint8_t[4]){crc, crc >> 8, crc >> 16, crc >> 24}, 4) == 0);
}

static void t_file_records(void)
{
	seed_tfevents *t = NULL;
	seed_err err;
	CHECK(seed_tfevents_open(dir, 2.0, &t, &err) == 0 && t);
	if (!t)
		return;
	const char *path = expected_path("");
	CHECK_MSG(strcmp(seed_tfevents_path(t), path) == 0, "%s", seed_tfevents_path(t));
	size_t len;
	char *got = read_bytes(path, &len);
	CHECK(bytes_equal(got, len, first_record, sizeof first_record)); /* written at once */
	free(got);
	CHECK(seed_tfevents_write(t, 300, 1.5, (seed_tfevents_scalar[]){{"loss", 0.25f}}, 1, &err) == 0);
	seed_tfevents_scalar two[] = {{"a", 0.0f}, {"\xc3\xa9/b", -2.0f}};
	CHECK(seed_tfevents_write(t, -1, 3.0, two, 2, &err) == 0);
	seed_tfevents_close(&t);
	CHECK(t == NULL);
	seed_tfevents_close(&t);
	uint8_t want[sizeof first_record + sizeof scalar_record + sizeof two_record];
	memcpy(want, first_record, sizeof first_record);
	memcpy(want + sizeof first_record, scalar_record, sizeof scalar_record);
	memcpy(want + sizeof first_record + sizeof scalar_record, two_record, sizeof two_record);
	got = read_bytes(path, &len);
	CHECK_MSG(bytes_equal(got, len, want, sizeof want), "%zu bytes", len);
	free(got);
	unlink(path);
}

/* A metrics line: the step key is the step, every other number a scalar;
 * strings, null and booleans are left out.  The same record as above. */
static void t_json_line(void)
{
	seed_tfevents *t = NULL;
	seed_err err;
	CHECK(seed_tfevents_open(dir, 2.0, &t, &err) == 0);
	if (!t)
		return;
	json_t *o = json_pack("{s:s, s:i, s:n, s:f, s:b}", "algorithm", "vtrace", "frames", 300,
	                      "episode_return", "loss", 0.25, "done", 1);
	CHECK(seed_tfevents_write_json(t, o, "frames", 1.5, &err) == 0);
	/* A whole real is a step too. */
	json_object_set_new(o, "frames", json_real(300.0));
	CHECK(seed_tfevents_write_json(t, o, "frames", 1.5, &err) == 0);
	json_decref(o);
	seed_tfevents_close(&t);
	uint8_t want[sizeof first_record + 2 * sizeof scalar_record];
	memcpy(want, first_record, sizeof first_record);
	memcpy(want + sizeof first_record, scalar_record, sizeof scalar_record);
	memcpy(want + sizeof first_record + sizeof scalar_record, scalar_record, sizeof scalar_record);
	size_t len;
	char *got = read_bytes(expected_path(""), &len);
	CHECK(bytes_equal(got, len, want, sizeof want));
	free(got);
	unlink(expected_path(""));
}

static void t_json_rejects(void)
{
	seed_tfevents *t = NULL;
	seed_err err;
	CHECK(seed_tfevents_open(dir, 2.0, &t, &err) == 0);
	if (!t)
		return;
	json_t *arr = json_pack("[i]", 1);
	CHECK(seed_tfevents_write_json(t, arr, "frames", 1, &err) == -EINVAL && strstr(err.msg, "tfevents"));
	CHECK(seed_tfevents_write_json(t, NULL, "frames", 1, &err) == -EINVAL);
	static const char *const bad[] = {"{\"loss\": 1}", "{\"frames\": \"7\"}", "{\"frames\": 1.5}",
	                                  "{\"frames\": null}", "{\"frames\": 1e19}"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		json_t *o = json_loads(bad[i], 0, NULL);
		int rc = seed_tfevents_write_json(t, o, "frames", 1, &err);
		CHECK_MSG(rc == -EINVAL && strstr(err.msg, "\"frames\""), "%s: %d %s", bad[i], rc, err.msg);
		json_decref(o);
	}
	json_decref(arr);
	seed_tfevents_close(&t);
	size_t len;
	char *got = read_bytes(expected_path(""), &len);
	CHECK(bytes_equal(got, len, first_record, sizeof first_record)); /* nothing written */
	free(got);
	unlink(expected_path(""));
}

/* Two writers in the same second on the same host (a learner resumed at
 * once) get two files; neither appends to the other's. */
static void t_same_second_new_file(void)
{
	seed_tfevents *a = NULL, *b = NULL;
	seed_err err;
	CHECK(seed_tfevents_open(dir, 2.0, &a, &err) == 0);
	CHECK(seed_tfevents_open(dir, 2.9, &b, &err) == 0);
	if (!a || !b)
		return;
	CHECK(strcmp(seed_tfevents_path(a), expected_path("")) == 0);
	CHECK_MSG(strcmp(seed_tfevents_path(b), expected_path(".1")) == 0, "%s", seed_tfevents_path(b));
	CHECK(count_entries(dir, "tfevents") == 2);
	seed_tfevents_close(&a);
	seed_tfevents_close(&b);
	unlink(expected_path(""));
	unlink(expected_path(".1"));
}

static void t_open_errors_name_path(void)
{
	seed_tfevents *t = (seed_tfevents *)&t;
	seed_err err;
	const char *missing = pathf(dir, "no/such/dir");
	CHECK(seed_tfevents_open(missing, 2.0, &t, &err) == -ENOENT && strstr(err.msg, missing));
	const char *file = pathf(dir, "a-file");
	CHECK(write_bytes(file, "x", 1) == 0);
	CHECK(seed_tfevents_open(file, 2.0, &t, &err) == -ENOTDIR && strstr(err.msg, file));
	CHECK(t == (seed_tfevents *)&t);
	unlink(file);
	CHECK(count_entries(dir, "") == 0);
}

/* A write that fails (here: past the file size limit, as on a full disk)
 * is reported with the file's name; the records before it stay whole. */
static void t_write_error(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		seed_tfevents *t = NULL;
		seed_err err;
		signal(SIGXFSZ, SIG_IGN);
		if (seed_tfevents_open(dir, 2.0, &t, &err) != 0)
			_exit(2);
		struct rlimit rl;
		if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		rl.rlim_cur = 60; /* the first record's 40 bytes and 20 of the next */
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		int rc = seed_tfevents_write(t, 300, 1.5, (seed_tfevents_scalar[]){{"loss", 0.25f}}, 1, &err);
		seed_tfevents_close(&t);
		_exit(rc == -EFBIG && strstr(err.msg, expected_path("")) && strstr(err.msg, "cannot write")
		          ? 0
		          : 4);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	size_t len;
	char *got = read_bytes(expected_path(""), &len);
	CHECK(got && len == 60 && memcmp(got, first_record, sizeof first_record) == 0 &&
	      memcmp(got + sizeof first_record, scalar_record, 20) == 0);
	free(got);
	unlink(expected_path(""));
}

int main(void)
{
	dir = tmpdir_new();
	TAP_RUN(t_crc32c_check_values);
	TAP_RUN(t_mask_by_hand);
	TAP_RUN(t_event_bytes_by_hand);
	TAP_RUN(t_file_records);
	TAP_RUN(t_json_line);
	TAP_RUN(t_json_rejects);
	TAP_RUN(t_same_second_new_file);
	TAP_RUN(t_open_errors_name_path);
	TAP_RUN(t_write_error);
	tmpdir_remove(dir);
	return tap_done();
}
