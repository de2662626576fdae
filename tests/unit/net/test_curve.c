/* tests/unit/net/test_curve.c: CURVE key files, the ZAP handler, channel security
 * and message bounds (seed/curve.h, seed/chan.h, seed/limits.h).
 *
 * Goldens: the key pair printed in libzmq's zmq_curve(7) manual (its
 * public key is what Curve25519 derives from its secret key), and the Z85
 * example of ZeroMQ's RFC 32 ("HelloWorld" for 86 4F D2 6F B5 59 F7 5B).
 * The sockets run over ipc:// in a private directory: inproc:// connections
 * have no security handshake, so they would prove nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "seed/chan.h"
#include "seed/curve.h"
#include "seed/limits.h"
#include "tap.h"
#include "tmpdir.h"

static const char *dir;
static void *ctx;

/* zmq_curve(7): the example client and server key pairs. */
static const char *client_pub = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char *client_sec = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";
static const char *server_pub = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char *server_sec = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";

static void write_text(const char *path, const char *text, mode_t mode)
{
	write_bytes(path, text, strlen(text));
	chmod(path, mode);
}

static void sleep_ms(int ms)
{
	struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&d, NULL);
}

static void t_z85_golden(void)
{
	/* The codec our key checks rely on, against RFC 32's example. */
	const uint8_t bytes[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
	char z[11];
	CHECK(zmq_z85_encode(z, bytes, 8) != NULL);
	CHECK(strcmp(z, "HelloWorld") == 0);
}

static void t_read_golden_pair(void)
{
	char text[512];
	snprintf(text, sizeof text, "# a comment\n\n  public-key =  %s  \r\nsecret-key=%s\n", server_pub,
	         server_sec);
	const char *p = pathf(dir, "server.key");
	write_text(p, text, 0600);
	seed_curve_key k;
	seed_err err;
	int rc = seed_curve_read(p, &k, true, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(strcmp(k.pub, server_pub) == 0);
	CHECK(strcmp(k.sec, server_sec) == 0);
	/* Without need_secret only the public key comes back. */
	rc = seed_curve_read(p, &k, false, &err);
	CHECK(rc == 0 && strcmp(k.pub, server_pub) == 0 && k.sec[0] == 0);
	/* The client's public key with the server's secret key: refused. */
	snprintf(text, sizeof text, "public-key = %s\nsecret-key = %s\n", client_pub, server_sec);
	write_text(p, text, 0600);
	rc = seed_curve_read(p, &k, true, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "does not belong to the public key"));
}

static void t_write_read(void)
{
	seed_curve_key k, back;
	seed_err err;
	CHECK(seed_curve_keypair(&k, &err) == 0);
	char name[4200];
	snprintf(name, sizeof name, "%s/w", dir); /* not pathf: its buffers are reused */
	CHECK_MSG(seed_curve_write(name, &k, false, &err) == 0, "%s", err.msg);
	struct stat st;
	CHECK(stat(pathf(dir, "w.key"), &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(stat(pathf(dir, "w.pub"), &st) == 0 && (st.st_mode & 0777) == 0644);
	CHECK(seed_curve_read(pathf(dir, "w.key"), &back, true, &err) == 0);
	CHECK(strcmp(back.pub, k.pub) == 0 && strcmp(back.sec, k.sec) == 0);
	CHECK(seed_curve_read(pathf(dir, "w.pub"), &back, false, &err) == 0);
	CHECK(strcmp(back.pub, k.pub) == 0);
	/* A .pub is no key pair. */
	CHECK(seed_curve_read(pathf(dir, "w.pub"), &back, true, &err) == -EPERM);
	/* No overwrite without force; both files untouched. */
	seed_curve_key k2;
	CHECK(seed_curve_keypair(&k2, &err) == 0);
	CHECK(seed_curve_write(name, &k2, false, &err) == -EEXIST);
	CHECK(seed_curve_read(pathf(dir, "w.key"), &back, true, &err) == 0 && strcmp(back.pub, k.pub) == 0);
	CHECK(seed_curve_write(name, &k2, true, &err) == 0);
	CHECK(seed_curve_read(pathf(dir, "w.key"), &back, true, &err) == 0 && strcmp(back.pub, k2.pub) == 0);
	CHECK(seed_curve_read(pathf(dir, "w.pub"), &back, false, &err) == 0 && strcmp(back.pub, k2.pub) == 0);
	/* Only a .pub in the way: still nothing written. */
	unlink(pathf(dir, "w.key"));
	CHECK(seed_curve_write(name, &k, false, &err) == -EEXIST);
	CHECK(access(pathf(dir, "w.key"), F_OK) != 0);
}

static void t_read_errors(void)
{
	static const struct {
		const char *name, *text, *msg;
		mode_t mode;
		int code;
	} cases[] = {
	    {"empty", "", "no public-key line", 0600, -EINVAL},
	    {"short key", "public-key = abc\n", ":1: public-key: not a key", 0600, -EINVAL},
	    {"bad char", "public-key = Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hI~\n",
	     ":1: public-key: not a key", 0600, -EINVAL},
	    {"unknown name", "\n# c\nprivate-key = x\n", ":3: unknown name 'private-key'", 0600, -EINVAL},
	    {"no equals", "public-key\n", ":1: expected", 0600, -EINVAL},
	    {"twice",
	     "public-key = Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID\npublic-key = "
	     "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID\n",
	     ":2: public-key given twice", 0600, -EINVAL},
	    {"no secret", "public-key = Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID\n", "no secret-key line",
	     0600, -EINVAL},
	    {"readable by others",
	     "public-key = Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID\nsecret-key = "
	     "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs\n",
	     "mode 0640", 0640, -EPERM},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *p = pathf(dir, "bad.key");
		write_text(p, cases[i].text, cases[i].mode);
		seed_curve_key k;
		seed_err err = {{0}};
		int rc = seed_curve_read(p, &k, true, &err);
		CHECK_MSG(rc == cases[i].code && strstr(err.msg, cases[i].msg) && strstr(err.msg, p),
		          "%s: rc %d, %s", cases[i].name, rc, err.msg);
	}
	seed_curve_key k;
	seed_err err;
	CHECK(seed_curve_read(pathf(dir, "none.key"), &k, false, &err) == -ENOENT);
	/* A big file is no key file. */
	char big[5000];
	memset(big, '#', sizeof big);
	big[sizeof big - 1] = 0;
	write_text(pathf(dir, "big.pub"), big, 0644);
	CHECK(seed_curve_read(pathf(dir, "big.pub"), &k, false, &err) == -EINVAL);
}

static void t_leaves_host(void)
{
	static const struct {
		const char *ep;
		bool leaves;
	} cases[] = {
	    {"tcp://127.0.0.1:5555", false},
	    {"@tcp://127.3.2.1:1", false},
	    {">tcp://localhost:9", false},
	    {"tcp://[::1]:5555", false},
	    {"tcp://lo:5555", false},
	    {"tcp://10.0.0.1:5555", true},
	    {"tcp://*:5555", true},
	    {"tcp://0.0.0.0:5555", true},
	    {"tcp://[fe80::1]:5", true},
	    {"tcp://eth0:5555", true},
	    {"tcp://host.example:1", true},
	    {"ipc:///tmp/x", false},
	    {"inproc://x", false},
	    {"some/file", false},
	    {"-", false},
	    {"tcp://127.0.0.1:1;10.1.1.1:5", true},
	    {"tcp://10.1.1.1:1;127.0.0.1:5", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_MSG(seed_chan_leaves_host(cases[i].ep) == cases[i].leaves, "%s", cases[i].ep);
}

static void t_limits(void)
{
	/* Each by hand from seed-frames(7): 65536 of slack plus the tensors. */
	CHECK(seed_limit_step(4, 64) == 65536 + 4 * (2 * 64 + 14));
	CHECK(seed_limit_action(256) == 65536 + 256 * 4);
	/* CartPole: 16-byte observations, 2 actions, 64 rows of 17 steps. */
	CHECK(seed_limit_unroll(64, 17, 16, 2, 0) == 65536 + 64 * 17 * (16 + 18 + 8) + 64 * 20);
	/* a state of 128 floats: 512 bytes a row, and the previous action */
	CHECK(seed_limit_unroll(64, 17, 16, 2, 128) == 65536 + 64 * 17 * (16 + 18 + 8) + 64 * (20 + 512 + 4));
	CHECK(seed_limit_params(1000, 300) == 65536 + 4000 + 300);
	CHECK(seed_limit_priority(64) == 65536 + 64 * (8 + 4));
	CHECK(seed_limit_priority(INT64_MAX / 4) == INT64_MAX);
	/* Absurd sizes saturate instead of wrapping to something small. */
	CHECK(seed_limit_step(INT64_MAX / 2, 1 << 30) == INT64_MAX);
	CHECK(seed_limit_unroll(1 << 30, 1 << 20, 1 << 30, 1 << 20, 0) == INT64_MAX);
	CHECK(seed_limit_params(INT64_MAX / 2, 0) == INT64_MAX);
}

/* ---- sockets ------------------------------------------------------------------ */

typedef struct logbook {
	pthread_mutex_t mu;
	char text[8192];
} logbook;

static void log_cb(void *arg, const char *msg)
{
	logbook *b = arg;
	pthread_mutex_lock(&b->mu);
	size_t n = strlen(b->text);
	snprintf(b->text + n, sizeof b->text - n, "%s\n", msg);
	pthread_mutex_unlock(&b->mu);
}

static bool logged(logbook *b, const char *what)
{
	pthread_mutex_lock(&b->mu);
	bool r = strstr(b->text, what) != NULL;
	pthread_mutex_unlock(&b->mu);
	return r;
}

/* Wait up to 3 s for cond to hold. */
#define EVENTUALLY(cond)                                                                                     \
	do {                                                                                                 \
		for (int w_ = 0; w_ < 300 && !(cond); w_++)                                                  \
			sleep_ms(10);                                                                        \
	} while (0)

/* A message sent by `from` arrives at `to` within timeout_ms. */
static bool arrives(seed_chan *from, seed_chan *to, const char *text, int timeout_ms)
{
	if (seed_chan_send(from, NULL, 0, text, strlen(text), true) != 0)
		return false;
	seed_chan_msg m;
	seed_err err;
	return seed_chan_recv(to, &m, timeout_ms, &err) == 0 && m.len == strlen(text) &&
	       memcmp(m.data, text, m.len) == 0;
}

static void t_zap(void)
{
	/* The allowed client is zmq_curve(7)'s; the refused one is new. */
	char allow[4200];
	snprintf(allow, sizeof allow, "%s/allow", dir);
	mkdir(allow, 0755);
	char text[256];
	snprintf(text, sizeof text, "public-key = %s\n", client_pub);
	write_text(pathf(allow, "client.pub"), text, 0644);
	write_text(pathf(allow, "notes.txt"), "not a key, and not read\n", 0644);
	seed_curve_key server = {{0}, {0}}, client = {{0}, {0}}, stranger;
	strcpy(server.pub, server_pub);
	strcpy(server.sec, server_sec);
	strcpy(client.pub, client_pub);
	strcpy(client.sec, client_sec);
	seed_err err;
	CHECK(seed_curve_keypair(&stranger, &err) == 0);

	logbook zlog = {PTHREAD_MUTEX_INITIALIZER, ""}, slog = zlog, blog = zlog, nlog = zlog;
	seed_zap *zap = NULL;
	int rc = seed_zap_start(&zap, ctx, allow, log_cb, &zlog, &err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	if (rc)
		return;
	CHECK(seed_zap_allowed(zap) == 1);
	seed_zap *second;
	CHECK(seed_zap_start(&second, ctx, allow, NULL, NULL, &err) == -EADDRINUSE);

	char url[4200];
	snprintf(url, sizeof url, "ipc://%s/zap-server", dir);
	seed_chan *srv, *good, *bad, *none;
	seed_chan_opts so = {.bind = true, .curve_key = &server, .log = log_cb, .log_arg = &slog};
	CHECK_MSG(seed_chan_open(&srv, ctx, SEED_CHAN_PULL, url, &so, &err) == 0, "%s", err.msg);
	seed_chan_opts go = {.curve_key = &client, .curve_server = server_pub};
	CHECK(seed_chan_open(&good, ctx, SEED_CHAN_PUSH, url, &go, &err) == 0);
	CHECK(arrives(good, srv, "allowed", 3000));
	CHECK(seed_chan_refused(srv) == 0);

	/* A key pair not in the directory: refused by ZAP, said by both sides. */
	seed_chan_opts bo = {
	    .curve_key = &stranger, .curve_server = server_pub, .log = log_cb, .log_arg = &blog};
	CHECK(seed_chan_open(&bad, ctx, SEED_CHAN_PUSH, url, &bo, &err) == 0);
	EVENTUALLY(seed_chan_refused(bad) > 0 && seed_zap_refused(zap) > 0 && seed_chan_refused(srv) > 0);
	CHECK(seed_zap_refused(zap) > 0);
	CHECK(seed_chan_refused(srv) > 0);
	CHECK(seed_chan_refused(bad) > 0);
	CHECK(!arrives(bad, srv, "refused", 300));
	EVENTUALLY(logged(&zlog, stranger.pub) && logged(&blog, "did not accept"));
	CHECK_MSG(logged(&zlog, stranger.pub), "%s", zlog.text);
	CHECK_MSG(
	    logged(&blog, "the server did not accept this client: this client's public key is not allowed"),
	    "%s", blog.text);
	uint64_t before = seed_chan_refused(srv);

	/* No keys at all: a mechanism mismatch, seen by the server's monitor. */
	seed_chan_opts no = {.log = log_cb, .log_arg = &nlog};
	CHECK(seed_chan_open(&none, ctx, SEED_CHAN_PUSH, url, &no, &err) == 0);
	EVENTUALLY(seed_chan_refused(srv) > before && seed_chan_refused(none) > 0);
	CHECK(seed_chan_refused(srv) > before);
	CHECK(seed_chan_refused(none) > 0);
	EVENTUALLY(logged(&slog, "refused a peer") && logged(&nlog, "did not accept"));
	CHECK_MSG(logged(&slog, "refused a peer"), "%s", slog.text);
	CHECK_MSG(logged(&nlog, "the server did not accept this client"), "%s", nlog.text);
	/* The allowed client is still served. */
	CHECK(arrives(good, srv, "still", 3000));

	seed_chan_close(&none);
	seed_chan_close(&bad);
	seed_chan_close(&good);
	seed_chan_close(&srv);
	seed_zap_stop(&zap);
	seed_zap_stop(&zap); /* NULL is fine */
	CHECK(zap == NULL);

	/* A directory without .pub files, or none at all. */
	char empty[4200];
	snprintf(empty, sizeof empty, "%s/empty", dir);
	mkdir(empty, 0755);
	CHECK(seed_zap_start(&zap, ctx, empty, NULL, NULL, &err) == -ENOENT &&
	      strstr(err.msg, "no .pub file"));
	CHECK(seed_zap_start(&zap, ctx, pathf(dir, "nowhere"), NULL, NULL, &err) == -ENOENT);
}

static void t_client_options(void)
{
	seed_curve_key client = {{0}, {0}};
	strcpy(client.pub, client_pub);
	strcpy(client.sec, client_sec);
	seed_err err;
	seed_chan *c;
	char url[4200];
	snprintf(url, sizeof url, "ipc://%s/nobody", dir);
	seed_chan_opts o = {.curve_key = &client};
	CHECK(seed_chan_open(&c, ctx, SEED_CHAN_PUSH, url, &o, &err) == -EINVAL &&
	      strstr(err.msg, "needs the server's public key"));
	seed_curve_key half = {{0}, {0}};
	strcpy(half.pub, client_pub);
	seed_chan_opts h = {.bind = true, .curve_key = &half};
	CHECK(seed_chan_open(&c, ctx, SEED_CHAN_PULL, url, &h, &err) == -EINVAL &&
	      strstr(err.msg, "key pair"));
	seed_chan_opts neg = {.max_msg = -1};
	CHECK(seed_chan_open(&c, ctx, SEED_CHAN_PULL, url, &neg, &err) == -EINVAL);
}

static void t_max_msg(void)
{
	char url[4200];
	snprintf(url, sizeof url, "ipc://%s/bounded", dir);
	seed_err err;
	seed_chan *in, *out;
	seed_chan_opts io = {.bind = true, .max_msg = 100};
	CHECK(seed_chan_open(&in, ctx, SEED_CHAN_PULL, url, &io, &err) == 0);
	seed_chan_opts oo = {.bind = false};
	CHECK(seed_chan_open(&out, ctx, SEED_CHAN_PUSH, url, &oo, &err) == 0);
	char buf[101];
	memset(buf, 'a', sizeof buf);
	seed_chan_msg m;
	CHECK(seed_chan_send(out, NULL, 0, buf, 100, false) == 0);
	CHECK(seed_chan_recv(in, &m, 3000, &err) == 0 && m.len == 100);
	/* One byte more: the connection is dropped, the message lost. */
	CHECK(seed_chan_send(out, NULL, 0, buf, 101, false) == 0);
	CHECK(seed_chan_recv(in, &m, 500, &err) == -EAGAIN);
	/* The sender reconnects by itself and is heard again. */
	bool again = false;
	for (int i = 0; i < 30 && !again; i++) {
		seed_chan_send(out, NULL, 0, "x", 1, true);
		again = seed_chan_recv(in, &m, 200, &err) == 0 && m.len == 1;
	}
	CHECK(again);
	seed_chan_close(&out);
	seed_chan_close(&in);
}

int main(void)
{
	dir = tmpdir_new();
	ctx = seed_chan_context();
	if (!ctx) {
		printf("Bail out! no ZeroMQ context\n");
		return 1;
	}
	TAP_RUN(t_z85_golden);
	TAP_RUN(t_leaves_host);
	TAP_RUN(t_limits);
	TAP_RUN(t_max_msg);
	if (!seed_curve_available()) {
		printf("ok %d - # SKIP this libzmq has no CURVE\n", ++tap_n);
	} else {
		TAP_RUN(t_read_golden_pair);
		TAP_RUN(t_write_read);
		TAP_RUN(t_read_errors);
		TAP_RUN(t_client_options);
		TAP_RUN(t_zap);
	}
	seed_chan_context_free(&ctx);
	tmpdir_remove(dir);
	return tap_done();
}
