/* seed-cat: print Seed frames as JSON lines, or write frames from JSON lines.
 *
 * Three sources: a recorded stream (FILE or stdin), a ZeroMQ socket
 * (--connect/--bind, PULL or SUB), or JSON lines (--encode).  Every frame is
 * decoded and validated; a bad one is counted, reported on stderr with its
 * number and the decoder's message, and skipped (--strict: stop there).
 * The exit status is 1 when any frame was bad.  Output goes to stdout or,
 * with --out, to a temporary file renamed over FILE at the end, so a reader
 * of FILE never sees half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "cli.h"
#include "seed/frame.h"

static const char usage[] = "[--connect|--bind ENDPOINT [--sub]] [--encode] [--raw] [--count N] [--out FILE] "
                            "[--strict] [FILE|-]";

static const char help[] = "Usage: seed-cat [OPTION]... [FILE|-]\n"
                           "       seed-cat --connect ENDPOINT [--sub] [OPTION]...\n"
                           "       seed-cat --encode [OPTION]... [FILE|-]\n"
                           "Print Seed frames as JSON lines (one object per frame, for jq), from a\n"
                           "recorded stream (FILE, or standard input) or from a ZeroMQ socket; or, with\n"
                           "--encode, turn JSON lines into frames.\n"
                           "\n"
                           "  -c, --connect ENDPOINT  receive from a PUSH peer bound at ENDPOINT\n"
                           "                          (tcp://HOST:PORT, ipc://PATH, ...), until SIGINT,\n"
                           "                          SIGTERM or --count frames\n"
                           "  -b, --bind ENDPOINT     the same, but bind ENDPOINT and let peers connect\n"
                           "  -s, --sub               with --connect/--bind: a SUB socket subscribed to\n"
                           "                          everything, for PUB peers\n"
                           "  -e, --encode            read JSON lines (blank lines skipped), write frames\n"
                           "  -r, --raw               write each good frame's msgpack bytes, not JSON\n"
                           "                          (record or filter a stream)\n"
                           "  -n, --count N           stop after N frames, good or bad\n"
                           "  -o, --out FILE          write to FILE instead of standard output; FILE is\n"
                           "                          replaced at the end, and left alone on failure\n"
                           "      --strict            stop at the first bad frame (and write no FILE)\n"
                           "  -h, --help              print this help and exit\n"
                           "  -V, --version           print the version and exit\n"
                           "\n"
                           "A bad frame is reported on stderr as 'frame N (byte B): why' ('line N' with\n"
                           "--encode) and skipped.  Exit status: 0 when all frames were good, 1 when\n"
                           "some were bad or input or output failed, 2 for a usage error.\n"
                           "The protocol is described in seed-frames(7).\n";

static struct {
	const char *endpoint;
	bool bind, sub, encode, raw, strict;
	long long count; /* 0: no limit */
	const char *out;
} opt;

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

/* A recorded stream from fd.  Returns false on a fatal error. */
static bool read_stream(int fd, const char *name)
{
	seed_frame_reader *r;
	seed_frame_reader_new(&r, fd);
	bool ok = true;
	while (more()) {
		const void *data;
		size_t len;
		seed_err err;
		uint64_t at = seed_frame_reader_offset(r);
		int rc = seed_frame_reader_next(r, &data, &len, &err);
		if (rc == -SEED_EEOF)
			break;
		if (rc == -EINTR)
			continue; /* more() sees the signal */
		if (rc == -EAGAIN) {
			poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 200);
			continue;
		}
		if (rc < 0) {
			cli_warn("%s: %s", name, err.msg);
			ok = false;
			break;
		}
		char where[64];
		snprintf(where, sizeof where, "frame %llu (byte %llu)", nframes + 1, (unsigned long long)at);
		if (!frame_in(data, len, where)) {
			ok = false;
			break;
		}
	}
	seed_frame_reader_free(&r);
	return ok;
}

/* Frames from a ZeroMQ socket, one per message part. */
static bool read_socket(void)
{
	void *ctx = zmq_ctx_new();
	void *sock = zmq_socket(ctx, opt.sub ? ZMQ_SUB : ZMQ_PULL);
	int zero = 0;
	zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero);
	if (opt.sub)
		zmq_setsockopt(sock, ZMQ_SUBSCRIBE, "", 0);
	if ((opt.bind ? zmq_bind(sock, opt.endpoint) : zmq_connect(sock, opt.endpoint)) != 0) {
		int e = errno;
		if (e == EINVAL || e == EPROTONOSUPPORT)
			cli_usage_error("%s: '%s': %s", opt.bind ? "--bind" : "--connect", opt.endpoint,
			                zmq_strerror(e));
		die_out(opt.endpoint, zmq_strerror(e));
	}
	bool ok = true;
	zmq_msg_t msg;
	zmq_msg_init(&msg);
	while (more()) {
		zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
		if (zmq_poll(&item, 1, 200) <= 0)
			continue; /* timeout or signal: more() decides */
		if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) < 0)
			continue;
		char where[32];
		snprintf(where, sizeof where, "frame %llu", nframes + 1);
		if (!frame_in(zmq_msg_data(&msg), zmq_msg_size(&msg), where)) {
			ok = false;
			break;
		}
		/* Live output: whoever reads it sees each frame as it comes. */
		if (fflush(out.fp) != 0)
			die_out(out.tmp ? opt.out : "standard output", strerror(errno));
	}
	zmq_msg_close(&msg);
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return ok;
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
	enum { OPT_STRICT = 256 };
	static const struct option options[] = {
	    {"connect", required_argument, NULL, 'c'},
	    {"bind", required_argument, NULL, 'b'},
	    {"sub", no_argument, NULL, 's'},
	    {"encode", no_argument, NULL, 'e'},
	    {"raw", no_argument, NULL, 'r'},
	    {"count", required_argument, NULL, 'n'},
	    {"out", required_argument, NULL, 'o'},
	    {"strict", no_argument, NULL, OPT_STRICT},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	cli_init(argc, argv, usage);
	opterr = 0; /* our messages, with the usage line */
	int c;
	while ((c = getopt_long(argc, argv, ":c:b:sern:o:hV", options, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 'b':
			if (opt.endpoint)
				cli_usage_error("only one --connect or --bind");
			opt.endpoint = optarg;
			opt.bind = c == 'b';
			break;
		case 's':
			opt.sub = true;
			break;
		case 'e':
			opt.encode = true;
			break;
		case 'r':
			opt.raw = true;
			break;
		case 'n':
			opt.count = cli_int("--count", optarg, 1, INT64_MAX);
			break;
		case 'o':
			opt.out = optarg;
			break;
		case OPT_STRICT:
			opt.strict = true;
			break;
		case 'h':
			cli_help(help);
		case 'V':
			cli_version();
		case ':':
			cli_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	const char *file = optind < argc ? argv[optind] : NULL;
	if (argc - optind > 1)
		cli_usage_error("one input at most ('%s' is extra)", argv[optind + 1]);
	if (opt.endpoint && file)
		cli_usage_error("an input file and %s exclude each other", opt.bind ? "--bind" : "--connect");
	if (opt.endpoint && opt.encode)
		cli_usage_error("--encode reads JSON lines from a file, not from a socket");
	if (opt.sub && !opt.endpoint)
		cli_usage_error("--sub needs --connect or --bind");
	if (opt.raw && opt.encode)
		cli_usage_error("--raw and --encode exclude each other (--encode writes frames already)");
	if (opt.out && !*opt.out)
		cli_usage_error("--out needs a file name");

	cli_catch_signals();
	/* A filter: when the reader of our output goes away (seed-cat | head),
	 * end quietly as cat does. */
	signal(SIGPIPE, SIG_DFL);

	int fd = STDIN_FILENO;
	const char *name = "standard input";
	if (!opt.endpoint && file && strcmp(file, "-") != 0) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			cli_die("%s: %s", file, strerror(errno));
		name = file;
	}
	open_out();
	bool ok;
	if (opt.endpoint) {
		ok = read_socket();
	} else if (opt.encode) {
		FILE *in = fd == STDIN_FILENO ? stdin : fdopen(fd, "r");
		if (!in)
			die_out(name, strerror(errno));
		ok = encode_lines(in, name);
		if (in != stdin)
			fclose(in);
	} else {
		ok = read_stream(fd, name);
		if (fd != STDIN_FILENO)
			close(fd);
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
