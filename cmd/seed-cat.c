/* seed-cat: print Seed frames as JSON lines, or write frames from JSON lines.
 *
 * Two kinds of input: frames from a seed_chan endpoint (a recorded stream in
 * a file or on stdin, or a ZeroMQ PULL or SUB socket: --connect, --bind, or
 * the endpoint grammar of seed_chan(3) as the operand), or JSON lines
 * (--encode, from a file or stdin).  Every frame is decoded and validated; a
 * bad one is counted, reported on stderr with its number and the decoder's
 * message, and skipped (--strict: stop there).
 * The exit status is 1 when any frame was bad.  Output goes to stdout or,
 * with --out, to a temporary file renamed over FILE at the end, so a reader
 * of FILE never sees half of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "secure.h"
#include "seed/chan.h"
#include "seed/frame.h"

static struct {
	const char *connect, *bind, *out;
	bool sub, encode, raw, strict;
	int64_t count; /* 0: no limit */
	int64_t max_bytes;
} opt = {.max_bytes = 1 << 30};

static const seed_opt options[] = {
    {"connect", 'c', SEED_OPT_STR, &opt.connect, "ENDPOINT",
     .help = "receive from a PUSH peer bound at ENDPOINT (tcp://HOST:PORT, ipc://PATH, ...), until "
             "SIGINT, SIGTERM or --count frames"},
    {"bind", 'b', SEED_OPT_STR, &opt.bind, "ENDPOINT",
     .help = "the same, but bind ENDPOINT and let peers connect"},
    {"sub", 'S', SEED_OPT_FLAG, &opt.sub,
     .help = "from a socket: a SUB socket subscribed to everything, for PUB peers"},
    {"encode", 'E', SEED_OPT_FLAG, &opt.encode,
     .help = "read JSON lines (blank lines skipped), write frames"},
    {"raw", 'R', SEED_OPT_FLAG, &opt.raw,
     .help = "write each good frame's msgpack bytes, not JSON (record or filter a stream)"},
    {"count", 'n', SEED_OPT_INT, &opt.count, "N", 1, INT64_MAX, .help = "stop after N frames, good or bad"},
    {"out", 'O', SEED_OPT_STR, &opt.out, "FILE",
     .help = "write to FILE instead of standard output; FILE is replaced at the end, and left alone on "
             "failure"},
    {"strict", 0, SEED_OPT_FLAG, &opt.strict, .help = "stop at the first bad frame (and write no FILE)"},
    {"max-bytes", 0, SEED_OPT_INT, &opt.max_bytes, "N", 1, INT64_MAX,
     .help = "from a socket: drop a peer that sends a message of more than N bytes (default 1073741824)"},
    CLI_CURVE_OPTIONS,
    {0},
};

static const seed_opts spec = {
    .usage = "[OPTION]... [FILE|-|ENDPOINT]\n"
             "--connect ENDPOINT [--sub] [OPTION]...\n"
             "--encode [OPTION]... [FILE|-]",
    .summary = "Print Seed frames as JSON lines (one object per frame, for jq), from a recorded\n"
               "stream (FILE, or standard input) or from a ZeroMQ socket; or, with --encode, turn\n"
               "JSON lines into frames.",
    .epilogue = "The input is a file, - (standard input, the default), or a ZeroMQ endpoint as\n"
                "everywhere in Seed: tcp://, ipc:// or inproc:// connects, @URL binds.\n"
                "A bad frame is reported on stderr as 'frame N (byte B): why' ('line N' with\n"
                "--encode) and skipped.  Exit status: 0 when all frames were good, 1 when\n"
                "some were bad or input or output failed, 2 for a usage error.\n"
                "The protocol is described in seed-frames(7).\n",
    .opts = options,
    .max_operands = 1,
};

static struct {
	FILE *fp;
	char *tmp; /* the temporary file renamed over opt.out at the end */
} out;

static unsigned long long nframes, nbad;
static seed_buf line;

/* ---- output --------------------------------------------------------------- */

static void open_out(void)
{
	if (!opt.out || strcmp(opt.out, "-") == 0) {
		out.fp = stdout;
		return;
	}
	size_t n = strlen(opt.out);
	out.tmp = seed_xmalloc(n + 8);
	memcpy(out.tmp, opt.out, n);
	memcpy(out.tmp + n, ".XXXXXX", 8);
	int fd = mkstemp(out.tmp);
	if (fd < 0)
		cli_die("%s: %s", opt.out, strerror(errno));
	/* mkstemp makes it 0600: give it the mode a new file would get. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	out.fp = fdopen(fd, "wb");
	if (!out.fp)
		cli_die("%s: %s", opt.out, strerror(errno));
}

/* Finish the output: on success, FILE gets what was written; otherwise the
 * temporary file goes and FILE stays as it was.  Returns 0, or -1 when
 * writing failed (reported). */
static int close_out(bool ok)
{
	int rc = 0;
	if (fflush(out.fp) != 0 || ferror(out.fp)) {
		cli_warn("writing %s: %s", out.tmp ? opt.out : "standard output", strerror(errno));
		rc = -1;
	}
	if (!out.tmp)
		return rc;
	if (rc == 0 && ok && fsync(fileno(out.fp)) != 0) {
		cli_warn("writing %s: %s", opt.out, strerror(errno));
		rc = -1;
	}
	fclose(out.fp);
	if (rc == 0 && ok && rename(out.tmp, opt.out) != 0) {
		cli_warn("%s: %s", opt.out, strerror(errno));
		rc = -1;
	}
	if (rc != 0 || !ok)
		unlink(out.tmp);
	free(out.tmp);
	out.tmp = NULL;
	return rc;
}

static noreturn void die_out(const char *what, const char *why)
{
	if (out.tmp)
		unlink(out.tmp);
	cli_die("%s: %s", what, why);
}

static void write_out(const void *data, size_t n)
{
	if (fwrite(data, 1, n, out.fp) != n)
		die_out(out.tmp ? opt.out : "standard output", strerror(errno));
}

/* ---- frames --------------------------------------------------------------- */

/* One frame in: print it (or its bytes).  where says where it came from
 * for messages.  Returns false when seed-cat must stop (--strict). */
static bool frame_in(const void *data, size_t len, const char *where)
{
	seed_frame f;
	seed_err err;
	nframes++;
	int rc = seed_frame_decode(&f, data, len, &err);
	if (rc == 0 && !opt.raw) {
		seed_buf_reset(&line);
		rc = seed_frame_to_json(&f, &line, &err);
	}
	seed_frame_clear(&f);
	if (rc < 0) {
		nbad++;
		cli_warn("%s: %s", where, err.msg);
		return !opt.strict;
	}
	if (opt.raw) {
		write_out(data, len);
	} else {
		seed_buf_append(&line, "\n", 1);
		write_out(line.data, line.len);
	}
	return true;
}

static bool more(void)
{
	return !cli_stop && (!opt.count || (long long)nframes < opt.count);
}

/* Frames from a channel: a recorded stream (name says which) or a socket,
 * one frame per message.  Returns false on a fatal error. */
static bool read_chan(seed_chan *c, const char *name)
{
	bool sock = seed_chan_is_socket(c), ok = true;
	while (more()) {
		seed_chan_msg m;
		seed_err err;
		int rc = seed_chan_recv(c, &m, 200, &err);
		if (rc == -SEED_EEOF)
			break;
		if (rc == -EAGAIN || rc == -EINTR)
			continue; /* timeout or signal: more() decides */
		if (rc == -SEED_EFRAME && sock) {
			/* A multi-part message: a bad frame, dropped. */
			nframes++;
			nbad++;
			cli_warn("frame %llu: %s", nframes, err.msg);
			if (opt.strict) {
				ok = false;
				break;
			}
			continue;
		}
		if (rc < 0) {
			cli_warn("%s: %s", name, err.msg);
			ok = false;
			break;
		}
		char where[64];
		if (sock)
			snprintf(where, sizeof where, "frame %llu", nframes + 1);
		else
			snprintf(where, sizeof where, "frame %llu (byte %llu)", nframes + 1,
			         (unsigned long long)m.offset);
		if (!frame_in(m.data, m.len, where)) {
			ok = false;
			break;
		}
		/* Live output: whoever reads it sees each frame as it comes. */
		if (sock && fflush(out.fp) != 0)
			die_out(out.tmp ? opt.out : "standard output", strerror(errno));
	}
	return ok;
}

/* Whether s is a ZeroMQ URL, bare or after '@' or '>' (seed_chan(3)). */
static bool is_url(const char *s)
{
	if (*s == '@' || *s == '>')
		s++;
	return strncmp(s, "tcp://", 6) == 0 || strncmp(s, "ipc://", 6) == 0 ||
	       strncmp(s, "inproc://", 9) == 0;
}

/* JSON lines to frames.  Returns false on a fatal error. */
static bool encode_lines(FILE *in, const char *name)
{
	char *text = NULL;
	size_t cap = 0;
	unsigned long long lineno = 0;
	seed_buf frame = {0};
	bool ok = true;
	while (more()) {
		errno = 0;
		ssize_t n = getline(&text, &cap, in);
		if (n < 0) {
			if (errno == EINTR) {
				clearerr(in);
				continue;
			}
			if (ferror(in)) {
				cli_warn("%s: %s", name, strerror(errno));
				ok = false;
			}
			break;
		}
		lineno++;
		if (strspn(text, " \t\r\n") == (size_t)n)
			continue;
		seed_frame f;
		seed_err err;
		nframes++;
		seed_buf_reset(&frame);
		int rc = seed_frame_from_json(&f, text, (size_t)n, &err);
		if (rc == 0) {
			rc = seed_frame_encode(&f, &frame, &err);
			seed_frame_clear(&f);
		}
		if (rc < 0) {
			nbad++;
			cli_warn("line %llu: %s", lineno, err.msg);
			if (opt.strict) {
				ok = false;
				break;
			}
			continue;
		}
		write_out(frame.data, frame.len);
	}
	free(text);
	seed_buf_free(&frame);
	return ok;
}

int main(int argc, char **argv)
{
	int first = cli_parse(&spec, argc, argv);
	cli_curve_load();
	const char *input = first < argc ? argv[first] : NULL;
	const char *flag = opt.bind ? "--bind" : "--connect";
	const char *endpoint = opt.bind ? opt.bind : opt.connect;
	if (opt.connect && opt.bind)
		cli_usage_error("only one --connect or --bind");
	if (endpoint && (endpoint[0] == '@' || endpoint[0] == '>' || !is_url(endpoint)))
		cli_usage_error("%s: '%s' is not a tcp://, ipc:// or inproc:// URL", flag, endpoint);
	if (endpoint && input)
		cli_usage_error("an input and %s exclude each other", flag);
	bool sock = endpoint || (input && is_url(input));
	if (sock && opt.encode)
		cli_usage_error("--encode reads JSON lines from a file, not from a socket");
	if (opt.sub && !sock)
		cli_usage_error("--sub needs a socket: --connect, --bind or a URL");
	if (opt.raw && opt.encode)
		cli_usage_error("--raw and --encode exclude each other (--encode writes frames already)");
	if (opt.out && !*opt.out)
		cli_usage_error("--out needs a file name");
	if (input && !*input)
		cli_usage_error("an empty input name");

	cli_catch_signals();
	/* A filter: when the reader of our output goes away (seed-cat | head),
	 * end quietly as cat does. */
	signal(SIGPIPE, SIG_DFL);

	bool from_stdin = !input || strcmp(input, "-") == 0;
	const char *name = from_stdin ? "standard input" : input;
	bool ok;
	if (opt.encode) {
		FILE *in = stdin;
		if (!from_stdin && !(in = fopen(input, "r")))
			cli_die("%s: %s", input, strerror(errno));
		open_out();
		ok = encode_lines(in, name);
		if (in != stdin)
			fclose(in);
	} else {
		void *ctx = sock ? seed_chan_context() : NULL;
		if (sock && !ctx)
			cli_die("cannot create a ZeroMQ context");
		seed_chan_opts copts = {
		    .bind = opt.bind != NULL, .stop = &cli_stop, .max_msg = opt.max_bytes};
		const char *ep = endpoint ? endpoint : input ? input : "-";
		cli_curve_chan(ctx, &copts, ep, endpoint ? flag : "input");
		seed_chan *c;
		seed_err err;
		int rc = seed_chan_open(&c, ctx, opt.sub ? SEED_CHAN_SUB : SEED_CHAN_PULL, ep, &copts, &err);
		if (rc == -EINVAL || rc == -EPROTONOSUPPORT)
			cli_usage_error("%s%s%s", endpoint ? flag : "", endpoint ? ": " : "", err.msg);
		if (rc)
			cli_die("%s", err.msg);
		open_out();
		ok = read_chan(c, name);
		cli_curve_report(&c, 1, true);
		seed_chan_close(&c);
		cli_curve_stop();
		seed_chan_context_free(&ctx);
	}
	/* Frames were skipped, but what was good is written: only a fatal
	 * error (or --strict) keeps FILE from being replaced. */
	if (close_out(ok) != 0)
		ok = false;
	if (nbad)
		cli_warn("%llu bad frame%s of %llu", nbad, nbad == 1 ? "" : "s", nframes);
	seed_buf_free(&line);
	return ok && nbad == 0 ? 0 : 1;
}
