/* tests/unit/replay/test_replay_client.c: seed_replay_client, the learner's
 * side of seed-replay (seed/replay_client.h), against a ROUTER standing in
 * for seed-replay over inproc://: requests kept in flight, answers,
 * refusals, lost requests asked again, priorities dropped when they cannot
 * go. */
#include "seed/replay_client.h"

#include <errno.h>
#include <string.h>

#include "seed/buf.h"
#include "tap.h"

static void *ctx;

/* The sample requests the ROUTER has received (within 200 ms each), each
 * checked to ask for `batch`; the last sender's id into m. */
static int requests(seed_chan *srv, int batch, seed_chan_msg *m)
{
	int n = 0;
	seed_err err;
	seed_frame f;
	while (seed_chan_recv(srv, m, 200, &err) == 0) {
		seed_frame_decoder *d;
		CHECK(seed_frame_decoder_new(&d) == 0);
		CHECK(seed_frame_decoder_decode(d, &f, m->data, m->len, &err) == 0);
		CHECK(f.type == SEED_FRAME_SAMPLE && seed_frame_int(&f, "batch", -1) == batch);
		seed_frame_clear(&f);
		seed_frame_decoder_free(&d);
		n++;
	}
	return n;
}

/* An error frame with code and message. */
static seed_frame error_frame(seed_buf *b, int64_t code, const char *msg)
{
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_ERROR);
	seed_frame_set_int(&f, "code", code);
	seed_frame_set_str(&f, "message", msg);
	seed_err err;
	seed_buf_reset(b);
	CHECK(seed_frame_encode(&f, b, &err) == 0);
	return f;
}

static void t_bad_arguments(void)
{
	seed_replay_client *c = NULL;
	seed_err err;
	CHECK(seed_replay_client_new(&c, NULL, 0, 2, 30, &err) == -EINVAL && !c);
	CHECK(strstr(err.msg, "batch 0"));
	CHECK(seed_replay_client_new(&c, NULL, 4, 0, 30, &err) == -EINVAL && !c);
	seed_replay_client_free(&c); /* NULL is fine */
}

/* prefetch requests go out, one more for each answer; an episode frame
 * is the learner's without changing what is in flight. */
static void t_in_flight(void)
{
	seed_chan *srv, *dl;
	seed_err err;
	seed_chan_opts bind = {.bind = true};
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "inproc://rc-flight", &bind, &err) == 0);
	CHECK(seed_chan_open(&dl, ctx, SEED_CHAN_DEALER, "inproc://rc-flight", NULL, &err) == 0);
	seed_replay_client *c;
	CHECK(seed_replay_client_new(&c, dl, 16, 3, 30, &err) == 0);
	CHECK(seed_replay_client_request(c, 0.0) == 3);
	seed_chan_msg m;
	CHECK(requests(srv, 16, &m) == 3);
	CHECK(seed_replay_client_request(c, 0.1) == 3);
	CHECK(requests(srv, 16, &m) == 0); /* three already out */
	seed_frame seq, ep;
	seed_frame_init(&seq, SEED_FRAME_SEQUENCES);
	seed_frame_init(&ep, SEED_FRAME_EPISODE);
	CHECK(seed_replay_client_answer(c, &seq, 0.2, &err) == SEED_REPLAY_TAKE);
	CHECK(seed_replay_client_inflight(c) == 2);
	CHECK(seed_replay_client_answer(c, &ep, 0.2, &err) == SEED_REPLAY_TAKE);
	CHECK(seed_replay_client_inflight(c) == 2);
	CHECK(seed_replay_client_request(c, 0.3) == 3);
	CHECK(requests(srv, 16, &m) == 1);
	seed_replay_client_free(&c);
	seed_chan_close(&dl);
	seed_chan_close(&srv);
}

/* A busy refusal is a request lost and asked again; any other refusal is
 * one that can never be answered, in seed-replay's words. */
static void t_refusals(void)
{
	seed_chan *srv, *dl;
	seed_err err;
	seed_chan_opts bind = {.bind = true};
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "inproc://rc-refuse", &bind, &err) == 0);
	CHECK(seed_chan_open(&dl, ctx, SEED_CHAN_DEALER, "inproc://rc-refuse", NULL, &err) == 0);
	seed_replay_client *c;
	CHECK(seed_replay_client_new(&c, dl, 8, 2, 30, &err) == 0);
	CHECK(seed_replay_client_request(c, 0.0) == 2);
	seed_chan_msg m;
	CHECK(requests(srv, 8, &m) == 2);
	seed_buf b = {0};
	seed_frame busy = error_frame(&b, -EBUSY, "4 requests are waiting already");
	CHECK(seed_replay_client_answer(c, &busy, 0.1, &err) == SEED_REPLAY_BUSY);
	CHECK(strstr(err.msg, "seed-replay is busy: 4 requests are waiting already"));
	CHECK(seed_replay_client_inflight(c) == 1);
	CHECK(seed_replay_client_request(c, 0.2) == 2);
	CHECK(requests(srv, 8, &m) == 1);
	seed_frame never = error_frame(&b, -EINVAL, "a batch of 8 is more than --max-batch 2");
	CHECK(seed_replay_client_answer(c, &never, 0.3, &err) == -SEED_EFRAME);
	CHECK_MSG(strcmp(err.msg, "seed-replay refused a request: a batch of 8 is more than --max-batch 2") ==
	              0,
	          "%s", err.msg);
	seed_buf_free(&b);
	seed_replay_client_free(&c);
	seed_chan_close(&dl);
	seed_chan_close(&srv);
}

/* Nothing heard for lost_s with requests in flight: a restarted
 * seed-replay lost them; they are asked again.  Something heard in time
 * keeps them. */
static void t_lost_requests(void)
{
	seed_chan *srv, *dl;
	seed_err err;
	seed_chan_opts bind = {.bind = true};
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "inproc://rc-lost", &bind, &err) == 0);
	CHECK(seed_chan_open(&dl, ctx, SEED_CHAN_DEALER, "inproc://rc-lost", NULL, &err) == 0);
	seed_replay_client *c;
	CHECK(seed_replay_client_new(&c, dl, 4, 2, 5.0, &err) == 0);
	seed_chan_msg m;
	CHECK(seed_replay_client_request(c, 100.0) == 2);
	CHECK(requests(srv, 4, &m) == 2);
	seed_replay_client_heard(c, 104.0);
	CHECK(seed_replay_client_request(c, 108.0) == 2); /* 4 s of silence: kept */
	CHECK(requests(srv, 4, &m) == 0);
	CHECK(seed_replay_client_request(c, 109.5) == 2); /* 5.5 s: asked again */
	CHECK(requests(srv, 4, &m) == 2);
	/* An answer to a forgotten request counts against the new ones. */
	seed_frame seq;
	seed_frame_init(&seq, SEED_FRAME_SEQUENCES);
	CHECK(seed_replay_client_answer(c, &seq, 110.0, &err) == SEED_REPLAY_TAKE);
	CHECK(seed_replay_client_answer(c, &seq, 110.0, &err) == SEED_REPLAY_TAKE);
	CHECK(seed_replay_client_answer(c, &seq, 110.0, &err) == SEED_REPLAY_TAKE);
	CHECK(seed_replay_client_inflight(c) == -1);
	CHECK(seed_replay_client_request(c, 110.1) == 2);
	CHECK(requests(srv, 4, &m) == 3);
	seed_replay_client_free(&c);
	seed_chan_close(&dl);
	seed_chan_close(&srv);
}

/* A seed-replay that reads nothing: priority frames beyond its queues are
 * dropped and counted, never blocking. */
static void t_priorities_dropped(void)
{
	seed_chan *srv, *dl;
	seed_err err;
	seed_chan_opts bind = {.bind = true, .hwm = 1}, conn = {.hwm = 1};
	CHECK(seed_chan_open(&srv, ctx, SEED_CHAN_ROUTER, "inproc://rc-full", &bind, &err) == 0);
	CHECK(seed_chan_open(&dl, ctx, SEED_CHAN_DEALER, "inproc://rc-full", &conn, &err) == 0);
	seed_replay_client *c;
	CHECK(seed_replay_client_new(&c, dl, 4, 1, 30, &err) == 0);
	const unsigned char prio[] = {0x81, 0xa1, 0x74, 0x01};
	int refused = 0;
	for (int i = 0; i < 1000; i++)
		refused += seed_replay_client_send(c, prio, sizeof prio) == -EAGAIN;
	CHECK_MSG(refused >= 990, "%d of 1000 refused", refused);
	CHECK(seed_replay_client_drops(c) == refused);
	seed_replay_client_free(&c);
	seed_chan_close(&dl);
	seed_chan_close(&srv);
}

int main(void)
{
	ctx = seed_chan_context();
	TAP_RUN(t_bad_arguments);
	TAP_RUN(t_in_flight);
	TAP_RUN(t_refusals);
	TAP_RUN(t_lost_requests);
	TAP_RUN(t_priorities_dropped);
	seed_chan_context_free(&ctx);
	return tap_done();
}
