/* seed-replay: the prioritized sequence replay service.
 *
 * Option parsing and wiring: the store, the sampling, the rate limiter and
 * the snapshots are seed_replay(3).  This program opens the channels (a
 * PULL socket for unrolls, a ROUTER for learners), runs the poll loop,
 * queues the sample requests the limiter holds back, snapshots on a timer
 * and on SIGINT/SIGTERM, and prints statistics.
 *
 * Episode frames that arrive with the unrolls (seed-infer sends both on one
 * socket) are relayed, as they came, to every learner that has sent a
 * request (at most MAX_PEERS, the most recent), never blocking; with no
 * learner yet they are dropped.  That is how seed-learn sees returns.
 *
 * Back-pressure: while the limiter refuses inserts the PULL socket is not
 * read, its queue fills to the high-water mark, and the producer's sends
 * block (seed-infer then stops answering its actors).  Sample requests the
 * limiter holds back wait in a queue, answered in order of arrival.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "secure.h"
#include "seed/buf.h"
#include "seed/chan.h"
#include "seed/clock.h"
#include "seed/frame.h"
#include "seed/fsutil.h"
#include "seed/limits.h"
#include "seed/opts.h"
#include "seed/replay.h"

static struct {
	const char *bind, *unrolls, *dir;
	bool resume, quiet;
	uint64_t capacity, min_size, seed;
	double alpha, beta, ratio, tolerance, snapshot_every, stats_interval;
	int64_t hwm, max_batch, max_pending, max_priorities, max_unroll_mib, max_memory;
} opt = {.capacity = 100000,
         .min_size = 1000,
         .alpha = 0.9,
         .beta = 0.6,
         .ratio = 0,
         .tolerance = 1024,
         .snapshot_every = 300,
         .stats_interval = 10,
         .hwm = 64,
         .max_batch = 4096,
         .max_pending = 1024,
         .max_priorities = 1 << 20,
         .max_unroll_mib = 256,
         .max_memory = 16384};

static const seed_opt options[] = {
    {"bind", 'b', SEED_OPT_STR, &opt.bind, "ENDPOINT",
     .help = "where learners connect a DEALER to sample and send priorities (binds; '>' to connect)"},
    {"unrolls", 'u', SEED_OPT_STR, &opt.unrolls, "ENDPOINT",
     .help = "take unroll frames here (a PULL socket; binds; '>' to connect to a seed-infer that binds)"},
    {"capacity", 0, SEED_OPT_U64, &opt.capacity, "N", .help = "keep at most N sequences (default 100000)"},
    {"min-size", 0, SEED_OPT_U64, &opt.min_size, "N",
     .help = "answer sample requests once N sequences are stored (default 1000)"},
    {"alpha", 0, SEED_OPT_NUM, &opt.alpha, "A", .lo = 0, .hi = 100,
     .help = "priority exponent: P(i) = p_i^A / sum p^A (default 0.9)"},
    {"beta", 0, SEED_OPT_NUM, &opt.beta, "B", .lo = 0, .hi = 100,
     .help = "importance weight exponent: ((1/N)/P(i))^B over the batch maximum (default 0.6)"},
    {"samples-per-insert", 0, SEED_OPT_NUM, &opt.ratio, "R", .lo = 0, .hi = 1e9,
     .help = "sampled sequences per inserted one, held by blocking the faster side (default 0: no limit)"},
    {"rate-tolerance", 0, SEED_OPT_NUM, &opt.tolerance, "E", .lo = 0, .hi = 1e15,
     .help = "... within E sampled sequences either way; a request may ask for 2E at most (default 1024)"},
    {"seed", 's', SEED_OPT_U64, &opt.seed, "S", .help = "seed of the sampling generator (default 0)"},
    {"dir", 'd', SEED_OPT_STR, &opt.dir, "DIR",
     .help = "snapshot the replay to DIR/replay.snap (periodically, and on SIGINT or SIGTERM)"},
    {"snapshot-every", 0, SEED_OPT_NUM, &opt.snapshot_every, "SEC", .lo = 0, .hi = 1e9,
     .help = "seconds between snapshots (default 300; 0: only at exit)"},
    {"resume", 0, SEED_OPT_FLAG, &opt.resume, .help = "start from DIR/replay.snap (with --dir)"},
    {"hwm", 0, SEED_OPT_INT, &opt.hwm, "N", 1, 1 << 20,
     .help = "unroll frames queued before the producer blocks (default 64)"},
    {"max-batch", 0, SEED_OPT_INT, &opt.max_batch, "K", 1, 1 << 24,
     .help = "refuse sample requests of more than K sequences (default 4096)"},
    {"max-pending", 0, SEED_OPT_INT, &opt.max_pending, "N", 1, 1 << 20,
     .help = "refuse sample requests while N wait already (default 1024)"},
    {"max-priorities", 0, SEED_OPT_INT, &opt.max_priorities, "N", 1, 1 << 30,
     .help = "drop a learner that sends a priority frame of more than N keys (default 1048576)"},
    {"max-unroll-mib", 0, SEED_OPT_INT, &opt.max_unroll_mib, "MIB", 1, 1 << 20,
     .help = "drop a producer that sends an unroll frame of more than MIB MiB (default 256)"},
    {"max-memory", 0, SEED_OPT_INT, &opt.max_memory, "MIB", 1, 1 << 30,
     .help = "refuse a layout whose capacity would take more than MIB MiB (default 16384)"},
    {"stats-interval", 0, SEED_OPT_NUM, &opt.stats_interval, "SEC", .lo = 0, .hi = 1e9,
     .help = "print statistics on stderr every SEC seconds (default 10; 0: never)"},
    {"quiet", 'q', SEED_OPT_FLAG, &opt.quiet, .help = "no statistics, snapshots or summary on stderr"},
    CLI_CURVE_OPTIONS,
    {0},
};

static const seed_opts usage_spec = {
    .usage = "--bind ENDPOINT --unrolls ENDPOINT [OPTION]...",
    .summary = "Keep the unrolls of seed-infer in a prioritized replay; serve batches of sequences to "
               "learners.",
    .epilogue = "See seed-replay(1) and seed-frames(7).\n",
    .opts = options,
    .max_operands = 0,
};

/* Bad frames, reported once per reason and then at most every 10 s with
 * the count in between. */
#define REASONS 16
#define REPORT_INTERVAL 10.0
static struct reason {
	char text[96];
	uint64_t count, reported;
	double last;
} reasons[REASONS];

static void bad_frame(const char *where, const char *msg, double now)
{
	char key[96];
	/* The reason: the message up to its first digit, so that messages
	 * differing only in numbers share a line. */
	size_t n = strcspn(msg, "0123456789");
	snprintf(key, sizeof key, "%s: %.*s", where, (int)(n < 80 ? n : 80), msg);
	struct reason *r = NULL;
	for (int i = 0; i < REASONS && !r; i++)
		if (reasons[i].count && strcmp(reasons[i].text, key) == 0)
			r = &reasons[i];
	for (int i = 0; i < REASONS && !r; i++)
		if (!reasons[i].count) {
			r = &reasons[i];
			snprintf(r->text, sizeof r->text, "%s", key);
			r->last = -1e300;
		}
	if (!r) {
		r = &reasons[REASONS - 1]; /* the table is full: the last one takes the rest */
	}
	r->count++;
	if (now - r->last >= REPORT_INTERVAL) {
		uint64_t since = r->count - r->reported;
		if (since > 1)
			cli_warn("bad %s frame: %s (%" PRIu64 " like it since the last report)", where, msg,
			         since);
		else
			cli_warn("bad %s frame: %s", where, msg);
		r->reported = r->count;
		r->last = now;
	}
}

struct pending {
	unsigned char id[256];
	size_t idlen;
	bool envelope;
	int K;
};

/* Learners that have sent a frame, for the episode relay: a ring of the
 * most recent MAX_PEERS DEALER peers (REQ peers cannot take a frame they
 * did not ask for). */
#define MAX_PEERS 64
struct peer {
	unsigned char id[256];
	size_t idlen;
};

static struct state {
	seed_replay *r;
	seed_chan *learners, *unrolls;
	seed_frame_decoder *dec;
	seed_buf out;
	void *batch_mem;
	size_t batch_size;
	struct pending *queue; /* a ring of opt.max_pending */
	size_t head, npending;
	uint64_t bad_unrolls, bad_requests, answered, dropped_answers, refused_requests, priority_frames;
	struct peer peers[MAX_PEERS];
	size_t npeers, peer_next;
	uint64_t episodes_relayed, episodes_dropped; /* episode frames */
	double insert_blocked, sample_blocked;       /* seconds */
} S;

static void answer_error(const seed_chan_msg *m, int code, const char *msg, const char *frame)
{
	seed_frame f;
	seed_frame_init(&f, SEED_FRAME_ERROR);
	seed_frame_set_int(&f, "code", code);
	seed_frame_set_str(&f, "message", msg);
	if (frame)
		seed_frame_set_str(&f, "frame", frame);
	S.out.len = 0;
	if (seed_frame_encode(&f, &S.out, NULL) == 0)
		seed_chan_reply(S.learners, m, S.out.data, S.out.len, true);
}

/* Remember the learner that sent m (a DEALER peer), for the relay. */
static void note_peer(const seed_chan_msg *m)
{
	if (m->envelope || m->idlen == 0)
		return;
	for (size_t i = 0; i < S.npeers; i++)
		if (S.peers[i].idlen == m->idlen && memcmp(S.peers[i].id, m->id, m->idlen) == 0)
			return;
	struct peer *p = &S.peers[S.npeers < MAX_PEERS ? S.npeers++ : S.peer_next];
	if (S.npeers == MAX_PEERS)
		S.peer_next = (S.peer_next + 1) % MAX_PEERS;
	memcpy(p->id, m->id, m->idlen);
	p->idlen = m->idlen;
}

/* Relay an episode frame (its bytes as they came) to every known learner,
 * without blocking: one that cannot take it now misses it. */
static void relay_episodes(const seed_chan_msg *m)
{
	bool sent = false;
	for (size_t i = 0; i < S.npeers; i++)
		if (seed_chan_send(S.learners, S.peers[i].id, S.peers[i].idlen, m->data, m->len, true) == 0)
			sent = true;
	if (sent)
		S.episodes_relayed++;
	else
		S.episodes_dropped++;
}

static bool take_unroll(double now)
{
	seed_chan_msg m;
	seed_err err;
	int rc = seed_chan_recv(S.unrolls, &m, 0, &err);
	if (rc == -EAGAIN || rc == -EINTR)
		return false;
	if (rc) {
		S.bad_unrolls++;
		bad_frame("unroll", err.msg, now);
		return true;
	}
	seed_frame f;
	if ((rc = seed_frame_decoder_decode(S.dec, &f, m.data, m.len, &err)) == 0 &&
	    f.type != SEED_FRAME_UNROLL) {
		if (f.type == SEED_FRAME_EPISODE) {
			/* seed-infer's episode frames share the socket: not for the
			 * replay, for the learners' returns. */
			relay_episodes(&m);
			return true;
		}
		rc = seed_err_set(&err, -SEED_EFRAME, "a %s frame, expected an unroll frame",
		                  seed_frame_type_name(f.type));
	}
	bool had_layout = seed_replay_get_layout(S.r) != NULL;
	if (rc == 0)
		rc = seed_replay_insert(S.r, &f, NULL, &err);
	/* A first layout too large for --max-memory (or the machine) is refused
	 * like any bad frame: the layout stays open for one that fits. */
	if (rc) {
		S.bad_unrolls++;
		bad_frame("unroll", err.msg, now);
		return true;
	}
	if (!had_layout && !opt.quiet) {
		seed_replay_stats st;
		seed_replay_stats_get(S.r, &st);
		const seed_replay_layout *l = seed_replay_get_layout(S.r);
		fprintf(stderr,
		        "%s: layout: T+1 %d, obs %s (%d dims), %d actions, state %d: %zu bytes per sequence, "
		        "%zu bytes for %" PRIu64 " sequences\n",
		        cli_prog, l->steps, seed_dtype_name(l->obs_dtype), l->obs_rank, l->num_actions,
		        l->state_size, seed_replay_item_bytes(l), st.bytes, st.capacity);
	}
	return true;
}

static bool take_request(double now)
{
	seed_chan_msg m;
	seed_err err;
	int rc = seed_chan_recv(S.learners, &m, 0, &err);
	if (rc == -EAGAIN || rc == -EINTR)
		return false;
	seed_frame f;
	if (rc == 0)
		rc = seed_frame_decoder_decode(S.dec, &f, m.data, m.len, &err);
	if (rc == 0 && f.type != SEED_FRAME_SAMPLE && f.type != SEED_FRAME_PRIORITY)
		rc = seed_err_set(&err, -SEED_EFRAME, "a %s frame, expected a sample or priority frame",
		                  seed_frame_type_name(f.type));
	if (rc) {
		S.bad_requests++;
		bad_frame("learner", err.msg, now);
		if (m.idlen)
			answer_error(&m, rc, err.msg, NULL);
		return true;
	}
	note_peer(&m);
	if (f.type == SEED_FRAME_PRIORITY) {
		seed_replay_update_frame(S.r, &f, NULL, NULL);
		S.priority_frames++;
		return true;
	}
	int64_t K = seed_frame_int(&f, "batch", 0);
	char msg[200];
	if (K > opt.max_batch || seed_replay_sample_ready(S.r, (int)K) == SEED_REPLAY_NEVER) {
		snprintf(msg, sizeof msg,
		         "sample frame: batch %" PRId64 " can never be answered (at most --max-batch %" PRId64
		         " and, with --samples-per-insert, twice --rate-tolerance %g)",
		         K, opt.max_batch, opt.tolerance);
		S.refused_requests++;
		answer_error(&m, -EINVAL, msg, "sample");
		return true;
	}
	if (S.npending == (size_t)opt.max_pending) {
		snprintf(msg, sizeof msg, "sample frame: %zu requests wait already (--max-pending)",
		         S.npending);
		S.refused_requests++;
		answer_error(&m, -EBUSY, msg, "sample");
		return true;
	}
	struct pending *p = &S.queue[(S.head + S.npending) % (size_t)opt.max_pending];
	memcpy(p->id, m.id, m.idlen);
	p->idlen = m.idlen;
	p->envelope = m.envelope;
	p->K = (int)K;
	S.npending++;
	return true;
}

/* Answer the queued requests the limiter lets through, in order. */
static void serve_pending(void)
{
	while (S.npending) {
		struct pending *p = &S.queue[S.head];
		if (seed_replay_sample_ready(S.r, p->K) != SEED_REPLAY_READY)
			return;
		size_t need = seed_replay_batch_bytes(S.r, p->K);
		if (need > S.batch_size) {
			free(S.batch_mem);
			if (posix_memalign(&S.batch_mem, 64, need) != 0)
				cli_die("no memory for a batch of %d sequences (%zu bytes)", p->K, need);
			S.batch_size = need;
		}
		seed_replay_batch b;
		seed_replay_batch_carve(S.r, p->K, S.batch_mem, &b);
		seed_err err;
		seed_chan_msg to = {.envelope = p->envelope, .idlen = p->idlen};
		memcpy(to.id, p->id, p->idlen);
		S.head = (S.head + 1) % (size_t)opt.max_pending;
		S.npending--;
		int rc = seed_replay_sample(S.r, &b, &err);
		if (rc) {
			answer_error(&to, rc, err.msg, "sample");
			continue;
		}
		seed_frame f;
		S.out.len = 0;
		if (seed_replay_batch_frame(S.r, &b, &f) || seed_frame_encode(&f, &S.out, &err))
			cli_die("cannot encode a sequences frame: %s", err.msg);
		if (seed_chan_reply(S.learners, &to, S.out.data, S.out.len, true))
			S.dropped_answers++;
		else
			S.answered++;
	}
}

static void snapshot(const char *path)
{
	double t0 = seed_now_s();
	seed_err err;
	if (seed_replay_save(S.r, path, &err)) {
		cli_warn("snapshot: %s", err.msg);
		return;
	}
	if (!opt.quiet) {
		seed_replay_stats st;
		seed_replay_stats_get(S.r, &st);
		fprintf(stderr,
		        "%s: snapshot: %" PRIu64 " sequences, %" PRIu64 " inserted, %" PRIu64
		        " sampled, %" PRIu64 " updated, to %s in %.2f s\n",
		        cli_prog, st.size, st.inserted, st.sampled, st.updated, path, seed_now_s() - t0);
	}
}

static void report(const seed_replay_stats *st, seed_replay_stats *last, double dt, double *last_ib,
                   double *last_sb, bool final)
{
	if (dt <= 0)
		return;
	fprintf(stderr,
	        "%s: %s%.0f inserts/s, %.0f samples/s, size %" PRIu64 "/%" PRIu64 ", %" PRIu64
	        " inserted, %" PRIu64 " sampled, %" PRIu64 " updated, %" PRIu64 " stale keys, %" PRIu64
	        " bad frames, inserts blocked "
	        "%.1f%%, samples waited %.1f%%, %" PRIu64 " episode frames relayed, %" PRIu64 " dropped\n",
	        cli_prog, final ? "done: " : "", (double)(st->inserted - last->inserted) / dt,
	        (double)(st->sampled - last->sampled) / dt, st->size, st->capacity, st->inserted, st->sampled,
	        st->updated, st->stale, S.bad_unrolls + S.bad_requests + S.refused_requests,
	        100 * (S.insert_blocked - *last_ib) / dt, 100 * (S.sample_blocked - *last_sb) / dt,
	        S.episodes_relayed, S.episodes_dropped);
	*last = *st;
	*last_ib = S.insert_blocked;
	*last_sb = S.sample_blocked;
}

/* --resume: the replay from the snapshot at path.  A snapshot written with
 * settings this replay cannot take (another capacity or alpha, a layout over
 * --max-memory) is a configuration error that no restart mends: status 2,
 * so that seed-train ends the run with the message instead of restarting
 * this program until it gives up.  One that cannot be read, or is corrupt,
 * is a runtime error: status 1. */
static void resume(const char *path)
{
	void *data;
	size_t len;
	seed_err err;
	if (seed_fs_read(path, 0, &data, &len, &err))
		cli_die("--resume: %s", err.msg);
	int rc = seed_replay_restore(S.r, data, len, &err);
	free(data);
	if (rc == -EINVAL)
		cli_config_error("--resume: %s: %s (resume with the snapshot's setting, or move the snapshot "
		                 "away to start an empty replay)",
		                 path, err.msg);
	if (rc == -E2BIG)
		cli_config_error("--resume: %s: %s (--max-memory %" PRId64 " MiB)", path, err.msg,
		                 opt.max_memory);
	if (rc)
		cli_die("--resume: %s: %s", path, err.msg);
}

/* The replay of the options, resumed with --resume; path gets the
 * snapshot's path with --dir (else ""). */
static void open_replay(char *path, size_t n)
{
	seed_replay_opts ro = {.capacity = opt.capacity,
	                       .alpha = opt.alpha,
	                       .beta = opt.beta,
	                       .min_size = opt.min_size,
	                       .samples_per_insert = opt.ratio,
	                       .tolerance = opt.tolerance,
	                       .seed = opt.seed,
	                       .max_bytes = (size_t)opt.max_memory << 20};
	seed_err err;
	if (seed_replay_new(&S.r, &ro, &err))
		cli_usage_error("%s", err.msg + (strncmp(err.msg, "replay: ", 8) ? 0 : 8));
	path[0] = 0;
	if (opt.dir) {
		if (seed_fs_mkdirs(opt.dir, &err))
			cli_die("--dir: %s", err.msg);
		snprintf(path, n, "%s/replay.snap", opt.dir);
		if (opt.resume)
			resume(path);
	}
}

/* The learners' ROUTER and the unrolls' PULL socket, in ctx (made here),
 * the decoder and the queue of waiting requests. */
static void *open_channels(void)
{
	seed_err err;
	void *ctx = seed_chan_context();
	if (!ctx)
		cli_die("cannot create a ZeroMQ context");
	seed_chan_opts lo = {
	    .bind = true, .stop = &cli_stop, .max_msg = seed_limit_priority(opt.max_priorities)};
	seed_chan_opts uo = {.bind = true,
	                     .hwm = (int)opt.hwm,
	                     .stop = &cli_stop,
	                     .max_msg = (int64_t)opt.max_unroll_mib << 20};
	cli_curve_chan(ctx, &lo, opt.bind, "--bind");
	cli_curve_chan(ctx, &uo, opt.unrolls, "--unrolls");
	if (seed_chan_open(&S.learners, ctx, SEED_CHAN_ROUTER, opt.bind, &lo, &err))
		cli_die("--bind: %s", err.msg);
	if (seed_chan_open(&S.unrolls, ctx, SEED_CHAN_PULL, opt.unrolls, &uo, &err))
		cli_die("--unrolls: %s", err.msg);
	if (!seed_chan_is_socket(S.learners) || !seed_chan_is_socket(S.unrolls))
		cli_usage_error("--bind and --unrolls must be ZeroMQ endpoints (tcp://, ipc://, inproc://)");
	if (seed_frame_decoder_new(&S.dec))
		cli_die("no memory");
	S.queue = seed_xcalloc((size_t)opt.max_pending, sizeof *S.queue);
	return ctx;
}

/* The first line: the capacity, and what a resume brought back. */
static void say_start(const seed_replay_stats *st)
{
	fprintf(stderr, "%s: capacity %" PRIu64 " sequences", cli_prog, st->capacity);
	if (st->has_layout)
		fprintf(stderr, " (%zu bytes), resumed with %" PRIu64 " stored, %" PRIu64 " inserted\n",
		        st->bytes, st->size, st->inserted);
	else
		fprintf(stderr,
		        "; the first unroll fixes the layout and the memory (at most %" PRId64 " MiB)\n",
		        opt.max_memory);
}

/* The poll loop until a signal: requests, unrolls, the queue, snapshots to
 * path (with --dir) and statistics lines (since *st, the stats at start). */
static void serve(const char *path, seed_replay_stats *st)
{
	double start = seed_now_s(), last_report = start, last_snap = start, last_ib = 0, last_sb = 0,
	       t = start;
	seed_replay_stats last = *st;
	while (!cli_stop) {
		bool can_insert = seed_replay_insert_ready(S.r);
		bool waiting = S.npending > 0;
		bool ready[2] = {false, false};
		int rc =
		    seed_chan_poll((seed_chan *[]){S.learners, S.unrolls}, can_insert ? 2 : 1, 100, ready);
		double now = seed_now_s();
		if (!can_insert)
			S.insert_blocked += now - t;
		if (waiting)
			S.sample_blocked += now - t;
		t = now;
		if (rc < 0 && rc != -EINTR)
			cli_die("poll: %s", seed_strerror(rc));
		/* At most 64 frames of each socket a turn, so neither starves the other. */
		for (int i = 0; i < 64 && rc > 0 && ready[0]; i++) {
			if (!take_request(now))
				break;
			serve_pending();
		}
		for (int i = 0; i < 64 && rc > 0 && can_insert && ready[1] && seed_replay_insert_ready(S.r);
		     i++)
			if (!take_unroll(now))
				break;
		serve_pending();
		if (opt.dir && opt.snapshot_every > 0 && now - last_snap >= opt.snapshot_every) {
			snapshot(path);
			last_snap = seed_now_s();
		}
		if (!opt.quiet && opt.stats_interval > 0 && now - last_report >= opt.stats_interval) {
			seed_replay_stats_get(S.r, st);
			report(st, &last, now - last_report, &last_ib, &last_sb, false);
			last_report = now;
		}
	}
}

/* The summary: the statistics since this process started (first, at
 * start) and the counts of frames. */
static void say_end(const seed_replay_stats *first, double start)
{
	double zi = 0, zs = 0;
	seed_replay_stats st, since = *first;
	seed_replay_stats_get(S.r, &st);
	report(&st, &since, seed_now_s() - start, &zi, &zs, true);
	fprintf(stderr,
	        "%s: %" PRIu64 " batches answered, %" PRIu64 " dropped, %" PRIu64 " priority frames, %" PRIu64
	        " bad unrolls, %" PRIu64 " bad requests, %" PRIu64 " requests refused, %zu still waiting\n",
	        cli_prog, S.answered, S.dropped_answers, S.priority_frames, S.bad_unrolls, S.bad_requests,
	        S.refused_requests, S.npending);
}

int main(int argc, char **argv)
{
	cli_parse(&usage_spec, argc, argv);
	cli_curve_load();
	if (!opt.bind)
		cli_usage_error("--bind is required");
	if (!opt.unrolls)
		cli_usage_error("--unrolls is required");
	if (opt.resume && !opt.dir)
		cli_usage_error("--resume needs --dir");
	char path[4096];
	open_replay(path, sizeof path);
	cli_catch_signals();
	void *ctx = open_channels();

	seed_replay_stats st;
	seed_replay_stats_get(S.r, &st);
	if (!opt.quiet)
		say_start(&st);
	double start = seed_now_s();
	seed_replay_stats first = st;
	serve(path, &st);
	if (opt.dir)
		snapshot(path);
	if (!opt.quiet)
		say_end(&first, start);
	cli_curve_report((seed_chan *[]){S.learners, S.unrolls}, 2, opt.quiet);
	seed_chan_close(&S.learners);
	seed_chan_close(&S.unrolls);
	cli_curve_stop();
	seed_chan_context_free(&ctx);
	seed_frame_decoder_free(&S.dec);
	seed_replay_free(&S.r);
	seed_buf_free(&S.out);
	free(S.batch_mem);
	free(S.queue);
	return 0;
}
