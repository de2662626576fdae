/* curve.c: CURVE key files (read, write) and the ZAP handler.
 *
 * Invariants: a seed_curve_key holds checked Z85 (40 characters of the
 * alphabet, decoding to 32 bytes); a key pair read with need_secret has a
 * secret key whose public key is pub.  The handler owns its REP socket,
 * which only its thread touches after start, and a sorted array of the
 * allowed keys in binary (what ZAP requests carry), searched with bsearch.
 */
#include "seed/curve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/buf.h"
#include "seed/clock.h"
#include "seed/fsutil.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define KEY_FILE_MAX 4096

bool seed_curve_available(void)
{
	return zmq_has("curve") != 0;
}

int seed_curve_keypair(seed_curve_key *k, seed_err *err)
{
	if (!seed_curve_available())
		return seed_err_set(err, -ENOTSUP, "this libzmq was built without CURVE");
	if (zmq_curve_keypair(k->pub, k->sec) != 0)
		return seed_err_set(err, -errno, "cannot make a key pair: %s", zmq_strerror(errno));
	return 0;
}

/* ---- writing ---------------------------------------------------------------- */

/* Write text to a new temporary file beside path (mode), sync it; the
 * temporary name goes to tmp. */
static int write_temp(const char *path, const char *text, mode_t mode, char *tmp, size_t tmpn, seed_err *err)
{
	static atomic_uint serial;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	snprintf(tmp, tmpn, "%.*s.%s.tmp-%ld-%u", dirlen, path, slash ? slash + 1 : path, (long)getpid(),
	         atomic_fetch_add(&serial, 1));
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return seed_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
	size_t len = strlen(text), off = 0;
	int rc = 0;
	while (off < len && rc == 0) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	/* open's mode is masked by the umask: say exactly what we mean. */
	if (rc == 0 && fchmod(fd, mode) != 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return seed_err_set(err, rc, "%s: %s", tmp, strerror(-rc));
	}
	return 0;
}

/* Put tmp in place as path: link(2), which fails if path exists, without
 * force; rename(2), which replaces it, with force. */
static int install(const char *tmp, const char *path, bool force, seed_err *err)
{
	int rc = force ? rename(tmp, path) : link(tmp, path);
	int e = errno;
	if (!force || rc != 0)
		unlink(tmp);
	if (rc != 0) {
		if (e == EEXIST)
			return seed_err_set(err, -EEXIST, "%s exists (--force replaces it)", path);
		return seed_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	return 0;
}

int seed_curve_write(const char *name, const seed_curve_key *k, bool force, seed_err *err)
{
	if (!name || !*name)
		return seed_err_set(err, -EINVAL, "an empty key name");
	if (strlen(k->pub) != SEED_CURVE_Z85_LEN || strlen(k->sec) != SEED_CURVE_Z85_LEN)
		return seed_err_set(err, -EINVAL, "%s: not a key pair", name);
	size_t n = strlen(name) + 8;
	char *key = seed_xmalloc(n), *pub = seed_xmalloc(n);
	snprintf(key, n, "%s.key", name);
	snprintf(pub, n, "%s.pub", name);
	char keytext[256], pubtext[256];
	snprintf(keytext, sizeof keytext,
	         "# Seed CURVE key pair: keep this file secret (seed-keygen(1))\n"
	         "public-key = %s\nsecret-key = %s\n",
	         k->pub, k->sec);
	snprintf(pubtext, sizeof pubtext, "# Seed CURVE public key (seed-keygen(1))\npublic-key = %s\n",
	         k->pub);
	char tk[4096], tp[4096];
	int rc = 0;
	struct stat st;
	if (!force && (lstat(key, &st) == 0 || lstat(pub, &st) == 0))
		rc = seed_err_set(err, -EEXIST, "%s exists (--force replaces it)",
		                  lstat(key, &st) == 0 ? key : pub);
	if (rc == 0)
		rc = write_temp(key, keytext, 0600, tk, sizeof tk, err);
	if (rc == 0 && (rc = write_temp(pub, pubtext, 0644, tp, sizeof tp, err)) != 0)
		unlink(tk);
	/* The public key first: a .key without its .pub is the worse half. */
	if (rc == 0 && (rc = install(tp, pub, force, err)) != 0)
		unlink(tk);
	if (rc == 0 && (rc = install(tk, key, force, err)) != 0 && !force)
		unlink(pub);
	if (rc == 0) {
		char *slash = strrchr(key, '/');
		if (slash)
			*slash = 0;
		rc = seed_fs_sync_dir(slash ? key : ".", err);
	}
	free(key);
	free(pub);
	return rc;
}

/* ---- reading ---------------------------------------------------------------- */

/* Whether s (length n) is a key in Z85; the 32 bytes go to bin (may be NULL). */
static bool z85_key(const char *s, size_t n, uint8_t bin[32])
{
	if (n != SEED_CURVE_Z85_LEN)
		return false;
	char z[SEED_CURVE_Z85_LEN + 1];
	memcpy(z, s, n);
	z[n] = 0;
	uint8_t tmp[32];
	return zmq_z85_decode(bin ? bin : tmp, z) != NULL;
}

static char *trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = 0;
	return s;
}

int seed_curve_read(const char *path, seed_curve_key *k, bool need_secret, seed_err *err)
{
	void *data;
	size_t len;
	int rc = seed_fs_read(path, KEY_FILE_MAX, &data, &len, err);
	if (rc == -EFBIG)
		return seed_err_set(err, -EINVAL, "%s: more than %d bytes: not a key file", path,
		                    KEY_FILE_MAX);
	if (rc)
		return rc;
	if (need_secret) {
		struct stat st;
		if (stat(path, &st) == 0 && (st.st_mode & 077)) {
			free(data);
			return seed_err_set(err, -EPERM,
			                    "%s: mode %04o: a secret key must be readable by its owner only "
			                    "(chmod 600 %s)",
			                    path, (unsigned)(st.st_mode & 07777), path);
		}
	}
	seed_curve_key got = {{0}, {0}};
	char *text = data, *end = text + len;
	int line = 0;
	rc = 0;
	for (char *p = text; p < end && rc == 0;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		line++;
		if (memchr(p, 0, (size_t)(eol - p))) {
			rc = seed_err_set(err, -EINVAL, "%s:%d: a NUL byte: not a key file", path, line);
			break;
		}
		char *s = trim(p, eol);
		p = nl ? nl + 1 : end;
		if (!*s || *s == '#')
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			rc = seed_err_set(err, -EINVAL,
			                  "%s:%d: expected 'public-key = KEY' or 'secret-key = KEY'", path,
			                  line);
			break;
		}
		char *name = trim(s, eq), *value = trim(eq + 1, eq + 1 + strlen(eq + 1));
		char *dst = strcmp(name, "public-key") == 0   ? got.pub
		            : strcmp(name, "secret-key") == 0 ? got.sec
		                                              : NULL;
		if (!dst)
			rc = seed_err_set(err, -EINVAL,
			                  "%s:%d: unknown name '%.40s' (public-key or secret-key)", path,
			                  line, name);
		else if (*dst)
			rc = seed_err_set(err, -EINVAL, "%s:%d: %s given twice", path, line, name);
		else if (!z85_key(value, strlen(value), NULL))
			rc =
			    seed_err_set(err, -EINVAL,
			                 "%s:%d: %s: not a key (40 characters of Z85, as seed-keygen writes)",
			                 path, line, name);
		else
			memcpy(dst, value, SEED_CURVE_Z85_LEN + 1);
	}
	free(data);
	if (rc)
		return rc;
	if (!got.pub[0])
		return seed_err_set(err, -EINVAL, "%s: no public-key line: not a key file", path);
	if (need_secret) {
		if (!got.sec[0])
			return seed_err_set(
			    err, -EINVAL,
			    "%s: no secret-key line: a public key, where a key pair (.key) is needed", path);
		char derived[SEED_CURVE_Z85_LEN + 1];
		if (zmq_curve_public(derived, got.sec) != 0)
			return seed_err_set(err, -ENOTSUP, "%s: %s", path, zmq_strerror(errno));
		if (strcmp(derived, got.pub) != 0)
			return seed_err_set(err, -EINVAL,
			                    "%s: the secret key does not belong to the public key", path);
	} else {
		memset(got.sec, 0, sizeof got.sec);
	}
	*k = got;
	return 0;
}

/* ---- the ZAP handler -------------------------------------------------------- */

struct seed_zap {
	void *sock;
	pthread_t thread;
	atomic_int stop;
	atomic_uint_fast64_t refused;
	uint8_t (*keys)[32]; /* sorted */
	size_t nkeys;
	seed_zap_log_fn *log;
	void *arg;
	/* the thread's own: rate limiting */
	double last_log;
	uint64_t unlogged;
};

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n > m && strcmp(s + n - m, suf) == 0;
}

static int load_dir(seed_zap *z, const char *dir, seed_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return seed_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	size_t cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".pub"))
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *path = seed_xmalloc(n);
		snprintf(path, n, "%s/%s", dir, e->d_name);
		seed_curve_key k;
		rc = seed_curve_read(path, &k, false, err);
		free(path);
		if (rc)
			break;
		z->keys = seed_xgrow(z->keys, &cap, (size_t)z->nkeys + 1, sizeof *z->keys);
		zmq_z85_decode(z->keys[z->nkeys++], k.pub);
	}
	closedir(d);
	if (rc == 0 && z->nkeys == 0)
		rc = seed_err_set(err, -ENOENT, "%s: no .pub file: no client could connect", dir);
	if (rc == 0)
		qsort(z->keys, z->nkeys, sizeof *z->keys, cmp_key);
	return rc;
}

/* The parts of one ZAP request (RFC 27): version, request id, domain,
 * address, routing id, mechanism, then the mechanism's credentials. */
#define ZAP_PARTS 8

static void say(seed_zap *z, const char *msg)
{
	if (z->log)
		z->log(z->arg, msg);
}

static void log_refusal(seed_zap *z, const char *addr, const uint8_t *key)
{
	z->unlogged++;
	double now = seed_now_s();
	if (now - z->last_log < 1.0)
		return;
	char z85[SEED_CURVE_Z85_LEN + 1] = "?";
	if (key)
		zmq_z85_encode(z85, key, 32);
	char msg[512];
	if (z->unlogged > 1)
		snprintf(msg, sizeof msg,
		         "refused a client at %s: its public key %s is not allowed (%llu refused since the "
		         "last message)",
		         addr, z85, (unsigned long long)z->unlogged);
	else
		snprintf(msg, sizeof msg, "refused a client at %s: its public key %s is not allowed", addr,
		         z85);
	say(z, msg);
	z->unlogged = 0;
	z->last_log = now;
}

static void answer(seed_zap *z, zmq_msg_t *parts, int n)
{
	char addr[128] = "?", mech[16] = "";
	if (n >= 6) {
		size_t a = zmq_msg_size(&parts[3]), m = zmq_msg_size(&parts[5]);
		if (a && a < sizeof addr)
			memcpy(addr, zmq_msg_data(&parts[3]), a), addr[a] = 0;
		if (m < sizeof mech)
			memcpy(mech, zmq_msg_data(&parts[5]), m), mech[m] = 0;
	}
	const char *code = "400", *text = "not allowed";
	bool curve = strcmp(mech, "CURVE") == 0;
	const uint8_t *key = NULL;
	if (n >= 6 && !curve) {
		code = "200", text = "OK"; /* not ours to judge: ZeroMQ accepts these without a handler */
	} else if (curve && n == 7 && zmq_msg_size(&parts[6]) == 32) {
		key = zmq_msg_data(&parts[6]);
		if (bsearch(key, z->keys, z->nkeys, sizeof *z->keys, cmp_key))
			code = "200", text = "OK";
	}
	if (strcmp(code, "200") != 0) {
		atomic_fetch_add(&z->refused, 1);
		log_refusal(z, addr, key);
	}
	/* Reply: version, request id, status code, text, user id, metadata. */
	const void *rid = n >= 2 ? zmq_msg_data(&parts[1]) : "";
	size_t ridlen = n >= 2 ? zmq_msg_size(&parts[1]) : 0;
	zmq_send(z->sock, "1.0", 3, ZMQ_SNDMORE);
	zmq_send(z->sock, rid, ridlen, ZMQ_SNDMORE);
	zmq_send(z->sock, code, 3, ZMQ_SNDMORE);
	zmq_send(z->sock, text, strlen(text), ZMQ_SNDMORE);
	zmq_send(z->sock, "", 0, ZMQ_SNDMORE);
	zmq_send(z->sock, "", 0, 0);
}

static void *zap_main(void *arg)
{
	seed_zap *z = arg;
	while (!atomic_load(&z->stop)) {
		zmq_pollitem_t it = {.socket = z->sock, .events = ZMQ_POLLIN};
		int r = zmq_poll(&it, 1, 100);
		if (r <= 0) {
			if (z->unlogged && seed_now_s() - z->last_log >= 1.0) {
				char msg[128];
				snprintf(msg, sizeof msg, "refused %llu more client%s (keys not allowed)",
				         (unsigned long long)z->unlogged, z->unlogged == 1 ? "" : "s");
				say(z, msg);
				z->unlogged = 0;
				z->last_log = seed_now_s();
			}
			continue;
		}
		zmq_msg_t parts[ZAP_PARTS];
		int n = 0;
		bool more = true;
		while (more) {
			zmq_msg_t m;
			zmq_msg_init(&m);
			if (zmq_msg_recv(&m, z->sock, 0) < 0) {
				zmq_msg_close(&m);
				break;
			}
			more = zmq_msg_more(&m);
			if (n < ZAP_PARTS)
				parts[n++] = m;
			else
				zmq_msg_close(&m);
		}
		answer(z, parts, n);
		for (int i = 0; i < n; i++)
			zmq_msg_close(&parts[i]);
	}
	return NULL;
}

int seed_zap_start(seed_zap **out, void *ctx, const char *allow_dir, seed_zap_log_fn *log, void *arg,
                   seed_err *err)
{
	seed_zap *z = seed_xcalloc(1, sizeof *z);
	z->log = log;
	z->arg = arg;
	z->last_log = -1e9;
	int rc = load_dir(z, allow_dir, err);
	if (rc == 0 && !(z->sock = zmq_socket(ctx, ZMQ_REP)))
		rc = seed_err_set(err, -errno, "ZAP handler: %s", zmq_strerror(errno));
	if (rc == 0) {
		int linger = 0;
		zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger);
		if (zmq_bind(z->sock, ZAP_ENDPOINT) != 0)
			rc = seed_err_set(err, -errno, "ZAP handler: cannot bind %s: %s", ZAP_ENDPOINT,
			                  zmq_strerror(errno));
	}
	if (rc == 0 && (rc = -pthread_create(&z->thread, NULL, zap_main, z)) != 0)
		seed_err_set(err, rc, "ZAP handler: cannot start its thread: %s", strerror(-rc));
	if (rc) {
		if (z->sock)
			zmq_close(z->sock);
		free(z->keys);
		free(z);
		return rc;
	}
	*out = z;
	return 0;
}

void seed_zap_stop(seed_zap **pz)
{
	seed_zap *z = pz ? *pz : NULL;
	if (!z)
		return;
	atomic_store(&z->stop, 1);
	pthread_join(z->thread, NULL);
	zmq_close(z->sock);
	free(z->keys);
	free(z);
	*pz = NULL;
}

size_t seed_zap_allowed(const seed_zap *z)
{
	return z->nkeys;
}

uint64_t seed_zap_refused(const seed_zap *z)
{
	return atomic_load(&((seed_zap *)z)->refused);
}
