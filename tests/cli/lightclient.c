/* tests/cli/lightclient.c: many light actor connections in one process, to load
 * an inference server (tests/cli/churn.bats, bench/scaling.sh).
 *
 * A light client plays N actor halves without stepping any environment:
 * each connection is its own DEALER socket with its own run id and actor id
 * (--actor-base + slot) and env0 0, keeps one step request in flight, and
 * sends the next one as soon as the answer comes (or --think-us after it,
 * at the millisecond precision of zmq_poll); the observations are a
 * fixed tensor of --obs-dtype and --obs-shape per row (CartPole's f32[4] by
 * default), every --episode-length steps the rows end an episode.  So the
 * server sees what N actors of K envs would send, at the rate it can answer
 * them, while this process spends about one frame encode and decode per
 * request.  With several --connect endpoints, slot i talks to the i-th
 * modulo their number (actors spread over several servers).
 *
 * Churn: after --churn-after seconds, --churn connections a second are
 * closed (a request in flight is abandoned, as by a killed actor) and
 * replaced at once by a new connection with a new run id, slot after slot,
 * so every connection lives N / RATE seconds.
 *
 * Figures: the latency of a request is the time from its first send to its
 * answer (resends, after --retry-ms, count from the first send); latencies
 * go into a histogram of 1% wide buckets, so the percentiles are within 1%.
 * The run has up to four phases: warm-up (the first --warmup seconds,
 * not in the figures), steady (up to --churn-after), churn (from then, for
 * --churn-for seconds or to the end) and after (the rest); an answer
 * counts in the phase in which it arrives.  At the end one JSON
 * line goes to stdout: the totals, then the figures of each phase.
 *
 * Every answer is checked: an action frame for this connection's run,
 * actor, env0 and current seq with K actions in [0, A); an older seq is a
 * duplicate answer of a resent request and is ignored; anything else is
 * counted as bad; an error frame is counted as an error and the slot goes
 * on with its next request.  Exit status 1 when any answer was bad, 0
 * otherwise (errors and abandoned requests are figures, not failures).
 *
 * --frame-sizes: encode, with libseed, one step frame and one action frame
 * of the configured K and observation, print their sizes as one JSON line
 * and exit (the bandwidth figures of doc/scaling.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <zmq.h>

#include "cli.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/clock.h"
#include "seed/frame.h"
#include "seed/rng.h"

static struct {
	seed_opt_strs connect;
	const char *obs_dtype, *obs_shape;
	int64_t conns, envs, actions, actor_base, episode, retry_ms;
	double duration, warmup, churn, churn_after, churn_for, think_us;
	bool sizes;
} opt = {.obs_dtype = "f32",
         .obs_shape = "4",
         .conns = 100,
         .envs = 1,
         .actions = 2,
         .episode = 200,
         .retry_ms = 2000,
         .duration = 10,
         .warmup = 1};

static const seed_opt options[] = {
    {"connect", 'c', SEED_OPT_STRS, &opt.connect, "ENDPOINT",
     .help = "the inference server (repeat for several: slot i goes to the i-th mod their number)"},
    {"connections", 'n', SEED_OPT_INT, &opt.conns, "N", 1, 100000,
     .help = "actor halves, one DEALER socket each (default 100)"},
    {"envs", 'k', SEED_OPT_INT, &opt.envs, "K", 1, 1 << 20,
     .help = "environment rows per request (default 1)"},
    {"obs-dtype", 0, SEED_OPT_STR, &opt.obs_dtype, "DTYPE", .help = "f32 or u8 (default f32)"},
    {"obs-shape", 0, SEED_OPT_STR, &opt.obs_shape, "D,D,...",
     .help = "one row's observation shape (default 4, CartPole's)"},
    {"actions", 'A', SEED_OPT_INT, &opt.actions, "A", 1, 1 << 20, .help = "num_actions sent (default 2)"},
    {"actor-base", 'a', SEED_OPT_INT, &opt.actor_base, "ID", 0, INT32_MAX,
     .help = "actor id of slot 0; slot i is ID + i (default 0)"},
    {"episode-length", 0, SEED_OPT_INT, &opt.episode, "L", 0, INT32_MAX,
     .help = "end every row's episode each L steps (default 200; 0: never)"},
    {"think-us", 0, SEED_OPT_NUM, &opt.think_us, "US", .lo = 0, .hi = 1e9,
     .help = "wait US microseconds after an answer before the next request, as an actor stepping its "
             "envs would (default 0)"},
    {"retry-ms", 0, SEED_OPT_INT, &opt.retry_ms, "MS", 1, 3600000,
     .help = "resend a request unanswered for MS milliseconds (default 2000)"},
    {"duration", 'd', SEED_OPT_NUM, &opt.duration, "SEC", .lo = 0.001, .hi = 1e6,
     .help = "run for SEC seconds (default 10)"},
    {"warmup", 'w', SEED_OPT_NUM, &opt.warmup, "SEC", .lo = 0, .hi = 1e6,
     .help = "leave the first SEC seconds out of the figures (default 1)"},
    {"churn", 0, SEED_OPT_NUM, &opt.churn, "RATE", .lo = 0, .hi = 1e6,
     .help = "replace RATE connections a second by new ones with new run ids (default 0)"},
    {"churn-after", 0, SEED_OPT_NUM, &opt.churn_after, "SEC", .lo = 0, .hi = 1e6,
     .help = "start the churn after SEC seconds (default: after the warm-up)"},
    {"churn-for", 0, SEED_OPT_NUM, &opt.churn_for, "SEC", .lo = 0, .hi = 1e6,
     .help = "stop the churn after SEC seconds of it (default: churn to the end)"},
    {"frame-sizes", 0, SEED_OPT_FLAG, &opt.sizes,
     .help = "print the encoded sizes of one step and one action frame, and exit"},
    {0},
};

static const seed_opts spec = {
    .usage =
        "--connect ENDPOINT [OPTION]...\n--frame-sizes [--envs K] [--obs-dtype DTYPE] [--obs-shape SHAPE]",
    .summary = "Load an inference server with many light actor connections; print latency and throughput "
               "as JSON.",
    .opts = options,
    .max_operands = 0,
};

/* Latency histogram: bucket b holds [1.01^b, 1.01^(b+1)) microseconds. */
#define NBUCKETS 2048
enum { WARMUP, STEADY, CHURN, AFTER, NPHASES };
static const char *phase_name[NPHASES] = {"warmup", "steady", "churn", "after"};

typedef struct phase {
	double t0, t1; /* seconds since the start */
	int64_t answers, env_steps, errors;
	double max_us;
	int64_t hist[NBUCKETS];
} phase;

typedef struct conn {
	seed_chan *chan;
	uint32_t run, actor;
	int64_t seq; /* of the request in flight, or of the next */
	bool inflight, thinking;
	double first_sent, sent; /* the request's first send, and its last */
	double due;              /* thinking: when to send the next request */
	seed_buf frame;
} conn;

typedef struct client {
	void *ctx;
	seed_opt_strs *endpoints;
	seed_rng rng;
	int n, k, A, episode;
	/* the request's tensors, shared by every connection */
	seed_dtype obs_dtype;
	int obs_rank;
	int64_t obs_shape[1 + SEED_TENSOR_MAX_RANK];
	uint8_t *obs;
	float *reward, *ep_return;
	uint8_t *zeros, *ones;
	int32_t *ep_length;
	conn *c;
	zmq_pollitem_t *items;
	/* totals */
	int64_t opened, closed, abandoned, resent, stale, bad, errors;
	phase ph[NPHASES];
} client;

static void hist_add(phase *p, double us)
{
	int b = us < 1 ? 0 : (int)(log(us) / log(1.01));
	if (b >= NBUCKETS)
		b = NBUCKETS - 1;
	p->hist[b]++;
	if (us > p->max_us)
		p->max_us = us;
}

/* The q-quantile (0 < q < 1) of the histogram, as its bucket's geometric
 * middle; 0 for an empty one. */
static double hist_quantile(const int64_t *h, int64_t total, double q)
{
	if (total == 0)
		return 0;
	int64_t want = (int64_t)ceil(q * (double)total), seen = 0;
	for (int b = 0; b < NBUCKETS; b++) {
		seen += h[b];
		if (seen >= want)
			return pow(1.01, b + 0.5);
	}
	return pow(1.01, NBUCKETS);
}

static int parse_shape(client *cl, const char *s)
{
	cl->obs_rank = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < 1 || v > (1 << 24) || cl->obs_rank == SEED_TENSOR_MAX_RANK - 1)
			return -1;
		cl->obs_shape[1 + cl->obs_rank++] = v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return cl->obs_rank > 0 ? 0 : -1;
}

static size_t row_bytes(const client *cl)
{
	size_t b = cl->obs_dtype == SEED_DTYPE_F32 ? 4 : 1;
	for (int i = 0; i < cl->obs_rank; i++)
		b *= (size_t)cl->obs_shape[1 + i];
	return b;
}

/* Encode the step frame of connection c (its run, actor and seq) into
 * c->frame; the step ends the rows' episodes every cl->episode steps. */
static void encode_step(client *cl, conn *c)
{
	int64_t k = cl->k;
	bool ends = cl->episode > 0 && c->seq > 0 && c->seq % cl->episode == 0;
	for (int i = 0; i < cl->k; i++) {
		cl->ep_return[i] = ends ? (float)cl->episode : 0.0f;
		cl->ep_length[i] = ends ? cl->episode : 0;
	}
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_STEP);
	seed_frame_set_int(&f, "run", c->run);
	seed_frame_set_int(&f, "actor", c->actor);
	seed_frame_set_int(&f, "seq", c->seq);
	seed_frame_set_int(&f, "env0", 0);
	seed_frame_set_int(&f, "num_actions", cl->A);
	seed_frame_set_tensor(&f, "obs",
	                      seed_tensor_view(cl->obs, cl->obs_dtype, 1 + cl->obs_rank, cl->obs_shape));
	seed_frame_set_tensor(&f, "reward", seed_tensor_view(cl->reward, SEED_DTYPE_F32, 1, &k));
	seed_frame_set_tensor(&f, "terminated",
	                      seed_tensor_view(ends ? cl->ones : cl->zeros, SEED_DTYPE_U8, 1, &k));
	seed_frame_set_tensor(&f, "truncated", seed_tensor_view(cl->zeros, SEED_DTYPE_U8, 1, &k));
	seed_frame_set_tensor(&f, "ep_return", seed_tensor_view(cl->ep_return, SEED_DTYPE_F32, 1, &k));
	seed_frame_set_tensor(&f, "ep_length", seed_tensor_view(cl->ep_length, SEED_DTYPE_I32, 1, &k));
	seed_buf_reset(&c->frame);
	seed_err err;
	if (seed_frame_encode(&f, &c->frame, &err))
		cli_die("encoding a step frame: %s", err.msg);
}

static void send_request(client *cl, conn *c, double now, bool resend)
{
	if (!resend) {
		encode_step(cl, c);
		c->first_sent = now;
	}
	c->sent = now;
	c->inflight = true;
	int rc = seed_chan_send(c->chan, NULL, 0, c->frame.data, c->frame.len, true);
	if (rc && rc != -EAGAIN)
		cli_die("sending to %s: %s", seed_chan_endpoint(c->chan), seed_strerror(rc));
}

/* After an answer: the next request now, or after --think-us. */
static void next_request(client *cl, conn *c, double now)
{
	if (opt.think_us > 0) {
		c->thinking = true;
		c->due = now + opt.think_us * 1e-6;
	} else {
		send_request(cl, c, now, false);
	}
}

/* Open slot i's connection with a new run id and send its first request. */
static void conn_open(client *cl, int i, double now)
{
	conn *c = &cl->c[i];
	seed_err err;
	seed_chan_opts o = {.bind = false, .stop = &cli_stop};
	const char *ep = cl->endpoints->v[i % cl->endpoints->n];
	if (seed_chan_open(&c->chan, cl->ctx, SEED_CHAN_DEALER, ep, &o, &err))
		cli_die("%s", err.msg);
	c->run = (uint32_t)seed_rng_u64(&cl->rng);
	c->actor = (uint32_t)(opt.actor_base + i);
	c->seq = 0;
	cl->items[i] = (zmq_pollitem_t){.socket = seed_chan_socket(c->chan), .events = ZMQ_POLLIN};
	cl->opened++;
	send_request(cl, c, now, false);
}

/* Close slot i's connection; a request in flight is abandoned when the
 * connection is churned (not at the end of the run). */
static void conn_close(client *cl, int i, bool churned)
{
	conn *c = &cl->c[i];
	if (c->inflight && churned)
		cl->abandoned++;
	c->inflight = false;
	c->thinking = false;
	seed_chan_close(&c->chan);
	cl->closed++;
}

static int phase_at(double t)
{
	if (t < opt.warmup)
		return WARMUP;
	if (!(opt.churn > 0) || t < opt.churn_after)
		return STEADY;
	return opt.churn_for > 0 && t >= opt.churn_after + opt.churn_for ? AFTER : CHURN;
}

/* One answer m to slot i at now (t since the start). */
static void take_answer(client *cl, seed_frame_decoder *dec, int i, const seed_chan_msg *m, double now,
                        double t)
{
	conn *c = &cl->c[i];
	seed_frame f;
	seed_err err;
	if (seed_frame_decoder_decode(dec, &f, m->data, m->len, &err)) {
		if (cl->bad++ < 10)
			cli_warn("slot %d: an answer that does not decode: %s", i, err.msg);
		return;
	}
	phase *p = &cl->ph[phase_at(t)];
	if (f.type == SEED_FRAME_ERROR) {
		const char *msg = "";
		size_t len = 0;
		seed_frame_str(&f, "message", &msg, &len);
		p->errors++;
		if (cl->errors++ < 10)
			cli_warn("slot %d: the server refused a request: %.*s", i, (int)len, msg);
		if (c->inflight) {
			c->inflight = false;
			c->seq++;
			next_request(cl, c, now);
		}
		return;
	}
	int64_t seq = seed_frame_int(&f, "seq", -1);
	if (f.type == SEED_FRAME_ACTION && (uint32_t)seed_frame_int(&f, "run", -1) == c->run &&
	    seed_frame_int(&f, "actor", -1) == c->actor && seed_frame_int(&f, "env0", -1) == 0 && seq >= 0 &&
	    (seq < c->seq || (seq == c->seq && !c->inflight))) {
		cl->stale++; /* a resent request's second answer */
		return;
	}
	const seed_tensor *act = seed_frame_tensor(&f, "action");
	bool ok = f.type == SEED_FRAME_ACTION && c->inflight && seq == c->seq &&
	          (uint32_t)seed_frame_int(&f, "run", -1) == c->run &&
	          seed_frame_int(&f, "actor", -1) == c->actor && seed_frame_int(&f, "env0", -1) == 0 && act &&
	          act->rank == 1 && act->shape[0] == cl->k;
	for (int j = 0; ok && j < cl->k; j++) {
		int32_t a;
		memcpy(&a, (const uint8_t *)act->data + 4 * (size_t)j, 4);
		ok = a >= 0 && a < cl->A;
	}
	if (!ok) {
		if (cl->bad++ < 10)
			cli_warn("slot %d: an answer that is not the action frame of its request (type %s, "
			         "seq %" PRId64 ", expected %" PRId64 ")",
			         i, seed_frame_type_name(f.type), seq, c->seq);
		return;
	}
	hist_add(p, (now - c->first_sent) * 1e6);
	p->answers++;
	p->env_steps += cl->k;
	c->inflight = false;
	c->seq++;
	next_request(cl, c, now);
}

static void print_phase(const phase *p)
{
	double secs = p->t1 - p->t0;
	printf(
	    "{\"seconds\":%.3f,\"answers\":%" PRId64 ",\"env_steps\":%" PRId64
	    ",\"steps_per_s\":%.1f,\"requests_per_s\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,"
	    "\"max_us\":%.1f,\"errors\":%" PRId64 "}",
	    secs, p->answers, p->env_steps, secs > 0 ? (double)p->env_steps / secs : 0.0,
	    secs > 0 ? (double)p->answers / secs : 0.0, hist_quantile(p->hist, p->answers, 0.5),
	    hist_quantile(p->hist, p->answers, 0.9), hist_quantile(p->hist, p->answers, 0.99), p->max_us,
	    p->errors);
}

static void print_sizes(client *cl)
{
	conn c = {.run = 0xffffffffu, .actor = 0x7fffffff, .seq = 1 << 30};
	seed_buf_init(&c.frame);
	encode_step(cl, &c);
	int32_t *acts = seed_xcalloc((size_t)cl->k, sizeof *acts);
	seed_buf a;
	seed_buf_init(&a);
	seed_err err;
	if (seed_frame_encode_action(&a, c.run, c.actor, c.seq, 0, 1 << 30, acts, NULL, NULL, cl->k, &err))
		cli_die("encoding an action frame: %s", err.msg);
	printf("{\"envs\":%d,\"obs_dtype\":\"%s\",\"obs_shape\":\"%s\",\"obs_bytes_per_row\":%zu,"
	       "\"step_frame_bytes\":%zu,\"action_frame_bytes\":%zu}\n",
	       cl->k, opt.obs_dtype, opt.obs_shape, row_bytes(cl), c.frame.len, a.len);
	seed_buf_free(&a);
	seed_buf_free(&c.frame);
	free(acts);
}

int main(int argc, char **argv)
{
	cli_parse(&spec, argc, argv);
	client cl = {0};
	cl.n = (int)opt.conns;
	cl.k = (int)opt.envs;
	cl.A = (int)opt.actions;
	cl.episode = (int)opt.episode;
	if (strcmp(opt.obs_dtype, "f32") == 0)
		cl.obs_dtype = SEED_DTYPE_F32;
	else if (strcmp(opt.obs_dtype, "u8") == 0)
		cl.obs_dtype = SEED_DTYPE_U8;
	else
		cli_usage_error("--obs-dtype: '%s' is neither f32 nor u8", opt.obs_dtype);
	if (parse_shape(&cl, opt.obs_shape))
		cli_usage_error("--obs-shape: '%s' is not a list of positive dimensions like 10,10,4",
		                opt.obs_shape);
	cl.obs_shape[0] = cl.k;
	/* Observations: a fixed pattern (the server's random policy does not
	 * look, and a model would get the same rows every step). */
	size_t ob = (size_t)cl.k * row_bytes(&cl);
	cl.obs = seed_xcalloc(ob, 1);
	for (size_t i = 0; i < ob; i++)
		cl.obs[i] = cl.obs_dtype == SEED_DTYPE_U8 ? (uint8_t)(i % 2) : 0;
	cl.reward = seed_xcalloc((size_t)cl.k, sizeof(float));
	cl.ep_return = seed_xcalloc((size_t)cl.k, sizeof(float));
	cl.ep_length = seed_xcalloc((size_t)cl.k, sizeof(int32_t));
	cl.zeros = seed_xcalloc((size_t)cl.k, 1);
	cl.ones = seed_xcalloc((size_t)cl.k, 1);
	memset(cl.ones, 1, (size_t)cl.k);
	for (int i = 0; i < cl.k; i++)
		cl.reward[i] = 1.0f;
	if (opt.sizes) {
		print_sizes(&cl);
		return 0;
	}
	if (opt.connect.n == 0)
		cli_usage_error("--connect is required");
	if (opt.churn_after < opt.warmup)
		opt.churn_after = opt.warmup;
	cl.endpoints = &opt.connect;
	uint64_t seed;
	if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
		seed = (uint64_t)(seed_now_s() * 1e9);
	seed_rng_init(&cl.rng, seed, (uint64_t)opt.actor_base);
	cli_catch_signals();
	cl.ctx = seed_chan_context();
	if (!cl.ctx)
		cli_die("cannot create a ZeroMQ context");
	if (zmq_ctx_set(cl.ctx, ZMQ_MAX_SOCKETS, cl.n + 4096))
		cli_die("cannot allow %d sockets: %s", cl.n, zmq_strerror(errno));
	cl.c = seed_xcalloc((size_t)cl.n, sizeof *cl.c);
	cl.items = seed_xcalloc((size_t)cl.n, sizeof *cl.items);
	seed_frame_decoder *dec;
	if (seed_frame_decoder_new(&dec))
		cli_die("out of memory");

	double start = seed_now_s(), end = start + opt.duration;
	for (int i = 0; i < cl.n; i++) {
		seed_buf_init(&cl.c[i].frame);
		conn_open(&cl, i, seed_now_s());
	}
	cl.ph[WARMUP].t0 = 0;
	cl.ph[STEADY].t0 = opt.warmup;
	cl.ph[CHURN].t0 = opt.churn_after;
	cl.ph[AFTER].t0 = opt.churn_for > 0 ? opt.churn_after + opt.churn_for : opt.duration + 1;
	double next_churn = start + opt.churn_after, next_check = start;
	double churn_end = opt.churn_for > 0 ? next_churn + opt.churn_for : end;
	int victim = 0;
	double now = start;
	while (!cli_stop && (now = seed_now_s()) < end) {
		while (opt.churn > 0 && now >= next_churn && next_churn < churn_end) {
			conn_close(&cl, victim, true);
			conn_open(&cl, victim, now);
			victim = (victim + 1) % cl.n;
			next_churn += 1.0 / opt.churn;
		}
		if (now >= next_check) { /* resends, ten times a second */
			for (int i = 0; i < cl.n; i++)
				if (cl.c[i].inflight && now - cl.c[i].sent >= (double)opt.retry_ms * 1e-3) {
					send_request(&cl, &cl.c[i], now, true);
					cl.resent++;
				}
			next_check = now + 0.1;
		}
		double wake = end;
		if (opt.think_us > 0) /* the requests due after thinking */
			for (int i = 0; i < cl.n; i++) {
				conn *c = &cl.c[i];
				if (!c->thinking)
					continue;
				if (c->due <= now) {
					c->thinking = false;
					send_request(&cl, c, now, false);
				} else if (c->due < wake) {
					wake = c->due;
				}
			}
		if (opt.churn > 0 && next_churn < wake && next_churn < churn_end)
			wake = next_churn;
		if (next_check < wake)
			wake = next_check;
		long ms = (long)ceil((wake - now) * 1e3);
		int r = zmq_poll(cl.items, cl.n, ms < 0 ? 0 : ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			cli_die("zmq_poll: %s", zmq_strerror(errno));
		}
		for (int i = 0; r > 0 && i < cl.n; i++) {
			if (!(cl.items[i].revents & ZMQ_POLLIN))
				continue;
			r--;
			for (;;) {
				seed_chan_msg m;
				seed_err err;
				int rc = seed_chan_recv(cl.c[i].chan, &m, 0, &err);
				if (rc == -EAGAIN || rc == -EINTR)
					break;
				now = seed_now_s();
				if (rc) {
					if (cl.bad++ < 10)
						cli_warn("slot %d: %s", i, err.msg);
					continue;
				}
				take_answer(&cl, dec, i, &m, now, now - start);
			}
		}
	}
	double t_end = seed_now_s() - start;
	for (int ph = 0; ph < NPHASES; ph++) {
		double t1 = ph + 1 < NPHASES ? cl.ph[ph + 1].t0 : t_end;
		if (ph == STEADY && !(opt.churn > 0))
			t1 = t_end;
		cl.ph[ph].t1 = t1 < t_end ? t1 : t_end;
		if (cl.ph[ph].t0 > cl.ph[ph].t1)
			cl.ph[ph].t0 = cl.ph[ph].t1;
	}
	for (int i = 0; i < cl.n; i++) {
		conn_close(&cl, i, false);
		seed_buf_free(&cl.c[i].frame);
	}
	/* The totals after the warm-up. */
	phase all = {.t0 = cl.ph[STEADY].t0, .t1 = t_end};
	for (int ph = STEADY; ph < NPHASES; ph++) {
		all.answers += cl.ph[ph].answers;
		all.env_steps += cl.ph[ph].env_steps;
		all.errors += cl.ph[ph].errors;
		if (cl.ph[ph].max_us > all.max_us)
			all.max_us = cl.ph[ph].max_us;
		for (int b = 0; b < NBUCKETS; b++)
			all.hist[b] += cl.ph[ph].hist[b];
	}
	printf(
	    "{\"connections\":%d,\"envs\":%d,\"obs_bytes_per_row\":%zu,\"endpoints\":%d,\"opened\":%" PRId64
	    ",\"closed\":%" PRId64 ",\"abandoned\":%" PRId64 ",\"resent\":%" PRId64 ",\"stale\":%" PRId64
	    ",\"bad\":%" PRId64 ",\"all\":",
	    cl.n, cl.k, row_bytes(&cl), cl.endpoints->n, cl.opened, cl.closed, cl.abandoned, cl.resent,
	    cl.stale, cl.bad);
	print_phase(&all);
	for (int ph = 0; ph < NPHASES; ph++) {
		if ((ph == CHURN && !(opt.churn > 0)) ||
		    (ph == AFTER && !(opt.churn > 0 && opt.churn_for > 0)))
			continue;
		printf(",\"%s\":", phase_name[ph]);
		print_phase(&cl.ph[ph]);
	}
	printf("}\n");
	seed_frame_decoder_free(&dec);
	seed_chan_context_free(&cl.ctx);
	free(cl.c);
	free(cl.items);
	free(cl.obs);
	free(cl.reward);
	free(cl.ep_return);
	free(cl.ep_length);
	free(cl.zeros);
	free(cl.ones);
	seed_opt_strs_free(&opt.connect);
	return cl.bad ? 1 : 0;
}
