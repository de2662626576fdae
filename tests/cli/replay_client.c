/* tests/cli/replay_client.c: a test peer of seed-replay (both of its sockets).
 *
 *   replay_client unrolls ENDPOINT N B T1 [PRIORITY]
 *       connect a PUSH socket and send N unroll frames of B rows and T1
 *       steps, 2 actions, f32 observations of 4 values; every value of
 *       row b of frame i's obs is i * B + b (the key the row will get in a
 *       fresh replay), env is b, run 5, actor i; with PRIORITY every row
 *       carries that first priority
 *   replay_client sample ENDPOINT K COUNT TIMEOUT_MS
 *       connect a DEALER, ask COUNT times for K sequences, one request at a
 *       time, and print one line per answer:
 *         sequences K T1 keys=k,... obs=o,... weights=w,...
 *       (obs: each row's first observation value) or "error CODE: MESSAGE";
 *       when an answer does not come within TIMEOUT_MS, print "timeout
 *       after N answers" and exit 3
 *   replay_client priority ENDPOINT KEY=P...
 *       send one priority frame
 *   replay_client send ENDPOINT FILE TIMEOUT_MS
 *       send FILE's bytes as one message on a DEALER and print the answers
 *       that come within TIMEOUT_MS as above
 *   replay_client push ENDPOINT FILE
 *       send FILE's bytes as one message on a PUSH socket
 *
 * Exit status 0, 1 for a failure, 2 for misuse, 3 for a timeout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/frame.h"
#include "seed/fsutil.h"

static volatile sig_atomic_t never;

static seed_chan *open_chan(void *ctx, seed_chan_kind kind, const char *endpoint)
{
	seed_chan *c = NULL;
	seed_err err;
	seed_chan_opts o = {.bind = false, .stop = &never, .max_msg = kind == SEED_CHAN_PUSH ? 0 : 1 << 30};
	if (seed_chan_open(&c, ctx, kind, endpoint, &o, &err)) {
		fprintf(stderr, "replay_client: %s\n", err.msg);
		exit(1);
	}
	/* Everything sent is delivered before close returns (10 s at most). */
	int linger = 10000;
	zmq_setsockopt(seed_chan_socket(c), ZMQ_LINGER, &linger, sizeof linger);
	return c;
}

/* Send f; with timeout_ms >= 0, give up after that long (returns -1): a
 * DEALER with no peer to take the frame (one the server refused, say)
 * would otherwise wait for one for ever. */
static int send_frame_within(seed_chan *c, const seed_frame *f, int timeout_ms)
{
	seed_buf b = {0};
	seed_err err;
	if (seed_frame_encode(f, &b, &err)) {
		fprintf(stderr, "replay_client: encode: %s\n", err.msg);
		exit(1);
	}
	int rc;
	for (int waited = 0;; waited += 10) {
		rc = seed_chan_send(c, NULL, 0, b.data, b.len, timeout_ms >= 0);
		if (rc != -EAGAIN || waited >= timeout_ms)
			break;
		zmq_poll(NULL, 0, 10); /* a 10 ms nap */
	}
	seed_buf_free(&b);
	if (rc == -EAGAIN)
		return -1;
	if (rc) {
		fprintf(stderr, "replay_client: send failed\n");
		exit(1);
	}
	return 0;
}

static void send_frame(seed_chan *c, const seed_frame *f)
{
	send_frame_within(c, f, -1);
}

static int unrolls(void *ctx, char **argv, int argc)
{
	if (argc < 4)
		return 2;
	seed_chan *c = open_chan(ctx, SEED_CHAN_PUSH, argv[0]);
	int N = atoi(argv[1]), B = atoi(argv[2]), T1 = atoi(argv[3]);
	float prio = argc > 4 ? strtof(argv[4], NULL) : -1;
	size_t rows = (size_t)B * (size_t)T1;
	float *obs = calloc(rows * 4, 4), *f32 = calloc(rows * 2, 4), *pr = calloc((size_t)B, 4);
	int32_t *i32 = calloc(rows, 4), *env = calloc((size_t)B, 4);
	uint8_t *u8 = calloc(rows, 1);
	for (int b = 0; b < B; b++) {
		env[b] = b;
		pr[b] = prio;
	}
	for (int i = 0; i < N; i++) {
		for (int b = 0; b < B; b++)
			for (size_t k = 0; k < (size_t)T1 * 4; k++)
				obs[(size_t)b * T1 * 4 + k] = (float)(i * B + b);
		seed_frame f;
		int64_t b64 = B;
		seed_frame_init(&f, SEED_FRAME_UNROLL);
		seed_frame_set_int(&f, "run", 5);
		seed_frame_set_int(&f, "actor", i);
		seed_frame_set_int(&f, "num_actions", 2);
		seed_frame_set_tensor(&f, "env", seed_tensor_view(env, SEED_DTYPE_I32, 1, &b64));
		if (prio >= 0)
			seed_frame_set_tensor(&f, "priority", seed_tensor_view(pr, SEED_DTYPE_F32, 1, &b64));
		int64_t s2[2] = {B, T1}, s3[3] = {B, T1, 4}, sa[3] = {B, T1, 2};
		seed_frame_set_tensor(&f, "obs", seed_tensor_view(obs, SEED_DTYPE_F32, 3, s3));
		seed_frame_set_tensor(&f, "action", seed_tensor_view(i32, SEED_DTYPE_I32, 2, s2));
		seed_frame_set_tensor(&f, "reward", seed_tensor_view(f32, SEED_DTYPE_F32, 2, s2));
		seed_frame_set_tensor(&f, "terminated", seed_tensor_view(u8, SEED_DTYPE_U8, 2, s2));
		seed_frame_set_tensor(&f, "truncated", seed_tensor_view(u8, SEED_DTYPE_U8, 2, s2));
		seed_frame_set_tensor(&f, "final_value", seed_tensor_view(f32, SEED_DTYPE_F32, 2, s2));
		seed_frame_set_tensor(&f, "policy_version", seed_tensor_view(i32, SEED_DTYPE_I32, 2, s2));
		seed_frame_set_tensor(&f, "logits", seed_tensor_view(f32, SEED_DTYPE_F32, 3, sa));
		send_frame(c, &f);
	}
	free(obs);
	free(f32);
	free(pr);
	free(i32);
	free(env);
	free(u8);
	seed_chan_close(&c);
	return 0;
}

/* Print an answer; returns 0, or 1 for something that is no answer. */
static int print_answer(const seed_chan_msg *m)
{
	seed_frame f;
	seed_err err;
	if (seed_frame_decode(&f, m->data, m->len, &err)) {
		printf("undecodable answer: %s\n", err.msg);
		return 1;
	}
	if (f.type == SEED_FRAME_ERROR) {
		const char *s;
		size_t n;
		seed_frame_str(&f, "message", &s, &n);
		printf("error %" PRId64 ": %.*s\n", seed_frame_int(&f, "code", 0), (int)n, s);
		return 0;
	}
	if (f.type != SEED_FRAME_SEQUENCES) {
		printf("a %s frame\n", seed_frame_type_name(f.type));
		return 1;
	}
	const seed_tensor *key = seed_frame_tensor(&f, "key"), *w = seed_frame_tensor(&f, "weight"),
	                  *obs = seed_frame_tensor(&f, "obs");
	int64_t K = key->shape[0];
	size_t row = seed_tensor_nbytes(obs) / (size_t)K;
	printf("sequences %" PRId64 " %" PRId64 " keys=", K, obs->shape[1]);
	for (int64_t k = 0; k < K; k++) {
		int64_t v;
		memcpy(&v, (const char *)key->data + 8 * k, 8);
		printf("%s%" PRId64, k ? "," : "", v);
	}
	printf(" obs=");
	for (int64_t k = 0; k < K; k++) {
		float v = 0;
		if (obs->dtype == SEED_DTYPE_F32)
			memcpy(&v, (const char *)obs->data + row * (size_t)k, 4);
		printf("%s%g", k ? "," : "", (double)v);
	}
	printf(" weights=");
	for (int64_t k = 0; k < K; k++) {
		float v;
		memcpy(&v, (const char *)w->data + 4 * k, 4);
		printf("%s%.6g", k ? "," : "", (double)v);
	}
	printf("\n");
	return 0;
}

static int sample(void *ctx, char **argv, int argc)
{
	if (argc < 4)
		return 2;
	seed_chan *c = open_chan(ctx, SEED_CHAN_DEALER, argv[0]);
	int K = atoi(argv[1]), count = atoi(argv[2]), timeout = atoi(argv[3]);
	for (int i = 0; i < count; i++) {
		seed_frame f;
		seed_frame_init(&f, SEED_FRAME_SAMPLE);
		seed_frame_set_int(&f, "batch", K);
		seed_chan_msg m;
		seed_err err;
		if (send_frame_within(c, &f, timeout) || seed_chan_recv(c, &m, timeout, &err)) {
			printf("timeout after %d answers\n", i);
			fflush(stdout);
			seed_chan_close(&c);
			return 3;
		}
		if (print_answer(&m))
			return 1;
		fflush(stdout);
	}
	seed_chan_close(&c);
	return 0;
}

static int priority(void *ctx, char **argv, int argc)
{
	if (argc < 2)
		return 2;
	seed_chan *c = open_chan(ctx, SEED_CHAN_DEALER, argv[0]);
	int n = argc - 1;
	int64_t *keys = calloc((size_t)n, 8);
	float *p = calloc((size_t)n, 4);
	for (int i = 0; i < n; i++) {
		char *eq = strchr(argv[1 + i], '=');
		if (!eq)
			return 2;
		keys[i] = strtoll(argv[1 + i], NULL, 10);
		p[i] = strtof(eq + 1, NULL);
	}
	seed_frame f;
	int64_t n64 = n;
	seed_frame_init(&f, SEED_FRAME_PRIORITY);
	seed_frame_set_tensor(&f, "key", seed_tensor_view(keys, SEED_DTYPE_I64, 1, &n64));
	seed_frame_set_tensor(&f, "priority", seed_tensor_view(p, SEED_DTYPE_F32, 1, &n64));
	send_frame(c, &f);
	free(keys);
	free(p);
	seed_chan_close(&c);
	return 0;
}

static int send_file(void *ctx, char **argv, int argc, seed_chan_kind kind)
{
	if (argc < (kind == SEED_CHAN_DEALER ? 3 : 2))
		return 2;
	void *data;
	size_t len;
	seed_err err;
	if (seed_fs_read(argv[1], 0, &data, &len, &err)) {
		fprintf(stderr, "replay_client: %s\n", err.msg);
		return 1;
	}
	seed_chan *c = open_chan(ctx, kind, argv[0]);
	if (seed_chan_send(c, NULL, 0, data, len, false))
		return 1;
	free(data);
	if (kind == SEED_CHAN_DEALER) {
		seed_chan_msg m;
		while (seed_chan_recv(c, &m, atoi(argv[2]), &err) == 0)
			print_answer(&m);
	}
	seed_chan_close(&c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: replay_client unrolls|sample|priority|send|push ENDPOINT ...\n");
		return 2;
	}
	void *ctx = seed_chan_context();
	int rc = 2;
	if (strcmp(argv[1], "unrolls") == 0)
		rc = unrolls(ctx, argv + 2, argc - 2);
	else if (strcmp(argv[1], "sample") == 0)
		rc = sample(ctx, argv + 2, argc - 2);
	else if (strcmp(argv[1], "priority") == 0)
		rc = priority(ctx, argv + 2, argc - 2);
	else if (strcmp(argv[1], "send") == 0)
		rc = send_file(ctx, argv + 2, argc - 2, SEED_CHAN_DEALER);
	else if (strcmp(argv[1], "push") == 0)
		rc = send_file(ctx, argv + 2, argc - 2, SEED_CHAN_PUSH);
	if (rc == 2)
		fprintf(stderr, "replay_client: bad arguments for %s\n", argv[1]);
	seed_chan_context_free(&ctx);
	return rc;
}
