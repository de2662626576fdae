/* tests/unit/core/test_buf.c: growable buffers and the one out-of-memory handler.
 *
 * The out-of-memory cases run in a child process (the handler aborts): the
 * child's stderr comes back through a pipe, and the case checks the message
 * seed_buf(3) documents and that the child died of SIGABRT.  A child that
 * returns instead of dying, or hangs (an alarm stops it), fails the case.
 * Expected sizes are worked by hand from the arguments, not taken from the
 * code under test.
 */
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory_managed.h"
#include "seed/buf.h"
#include "tap.h"

/* Under AddressSanitizer (configure --enable-asan) malloc of an impossible
 * size stops the program in ASan's own way; make it return NULL as libc's
 * does, so that it is our handler that answers.  ASan reads this hook at
 * start; without ASan it is never called. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

typedef struct child {
	int status;    /* as waitpid(2) gives it */
	char err[512]; /* what the child wrote on stderr */
} child;

/* Run fn(arg) in a child with stderr captured; the child exits 0 if fn
 * returns, and is killed by SIGALRM after 10 seconds. */
static child run_child(void (*fn)(size_t), size_t arg)
{
	child c = {.status = -1};
	int p[2];
	if (pipe(p) != 0)
		return c;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		alarm(10);
		fn(arg);
		_exit(0);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n < sizeof c.err - 1 && (r = read(p[0], c.err + n, sizeof c.err - 1 - n)) > 0)
		n += (size_t)r;
	c.err[n] = '\0';
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &c.status, 0);
	return c;
}

static int aborted(const child *c)
{
	return c->status != -1 && WIFSIGNALED(c->status) && WTERMSIG(c->status) == SIGABRT;
}

/* Keep the compiler from dropping an allocation whose result is unused. */
static void *volatile sink;

static void do_xmalloc(size_t n)
{
	sink = seed_xmalloc(n);
}

static void do_xrealloc(size_t n)
{
	sink = seed_xrealloc(NULL, n);
}

static void do_xcalloc_overflow(size_t n)
{
	/* n * 2 is SIZE_MAX + 1 for n = SIZE_MAX / 2 + 1: it wraps to 0. */
	sink = seed_xcalloc(n, 2);
}

static void do_xaligned(size_t n)
{
	sink = seed_xaligned(n);
}

static void do_xgrow_overflow(size_t n)
{
	/* n elements of 8 bytes: the capacity doubles from 16 to 2^62, whose
	 * bytes (2^65) do not fit a size_t. */
	size_t cap = 0;
	sink = seed_xgrow(NULL, &cap, n, 8);
}

static void do_oom(size_t n)
{
	seed_oom(n);
}

static void do_reserve_after(size_t n)
{
	/* 10 bytes in, then room for n more: len + n wraps for n > SIZE_MAX - 10. */
	seed_buf b = {0};
	seed_buf_append(&b, "0123456789", 10);
	seed_buf_reserve(&b, n);
	sink = b.data;
}

static void do_reserve_empty(size_t n)
{
	seed_buf b = {0};
	seed_buf_reserve(&b, n);
	sink = b.data;
}

/* A real shortage, not an impossible size: the address space limited to
 * what the process maps now plus 64 MiB, then n bytes asked for. */
static void do_limited(size_t n)
{
	if (limit_address_space((rlim_t)64 << 20) != 0)
		_exit(3);
	sink = seed_xmalloc(n);
}

/* jansson's allocator as libseed installed it, asked for too much. */
static void do_jansson(size_t n)
{
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	sink = m(n);
}

#define SIZE_MAX_TEXT "18446744073709551615"

/* Each case: what the child does, with which size, and the line it must
 * print before it aborts. */
static const struct oom_case {
	const char *name;
	void (*fn)(size_t);
	size_t arg;
	const char *line;
} oom_cases[] = {
    {"seed_oom(0): the size is not known", do_oom, 0, "seed: out of memory\n"},
    {"seed_oom(4096)", do_oom, 4096, "seed: out of memory allocating 4096 bytes\n"},
    {"seed_xmalloc(SIZE_MAX)", do_xmalloc, SIZE_MAX,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
    {"seed_xrealloc(NULL, SIZE_MAX - 1)", do_xrealloc, SIZE_MAX - 1,
     "seed: out of memory allocating 18446744073709551614 bytes\n"},
    /* The wrapped product (0) must not be what the message says. */
    {"seed_xcalloc whose product overflows", do_xcalloc_overflow, SIZE_MAX / 2 + 1,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
    /* Rounded up to a multiple of 64, these would wrap to 0 bytes. */
    {"seed_xaligned(SIZE_MAX)", do_xaligned, SIZE_MAX,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
    {"seed_xaligned(SIZE_MAX - 62)", do_xaligned, SIZE_MAX - 62,
     "seed: out of memory allocating 18446744073709551553 bytes\n"},
    {"seed_xgrow whose bytes overflow", do_xgrow_overflow, SIZE_MAX / 8 + 2,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
    /* len + n past SIZE_MAX: no buffer can hold it. */
    {"seed_buf_reserve past SIZE_MAX", do_reserve_after, SIZE_MAX - 5,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
    /* Doubling the capacity towards SIZE_MAX must not wrap to 0 and spin
     * (the alarm stops a child that does). */
    {"seed_buf_reserve(SIZE_MAX) on an empty buffer", do_reserve_empty, SIZE_MAX,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
    /* jansson's allocator, as libseed installed it. */
    {"jansson's malloc(SIZE_MAX)", do_jansson, SIZE_MAX,
     "seed: out of memory allocating " SIZE_MAX_TEXT " bytes\n"},
};

static void run_oom_cases(void)
{
	_Static_assert(SIZE_MAX == 18446744073709551615u, "the expected messages assume a 64-bit size_t");
	for (size_t i = 0; i < sizeof oom_cases / sizeof oom_cases[0]; i++) {
		const struct oom_case *k = &oom_cases[i];
		child c = run_child(k->fn, k->arg);
		CHECK_MSG(aborted(&c), "status %#x, stderr \"%s\"", (unsigned)c.status, c.err);
		/* The whole of stderr, except what valgrind adds around it. */
		CHECK_MSG(strstr(c.err, k->line) != NULL, "stderr \"%s\", want \"%s\"", c.err, k->line);
		tap_result(k->name);
	}
}

static void t_real_shortage(void)
{
	child c = run_child(do_limited, (size_t)256 << 20);
	CHECK_MSG(aborted(&c), "status %#x, stderr \"%s\"", (unsigned)c.status, c.err);
	CHECK_MSG(strstr(c.err, "seed: out of memory allocating 268435456 bytes\n"), "stderr \"%s\"", c.err);
}

static void t_jansson_routed(void)
{
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	CHECK(m == seed_xmalloc);
	CHECK(f == free);
	/* And jansson still works on it. */
	json_t *o = json_pack("{s:i, s:[s]}", "a", 1, "b", "c");
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(s && strcmp(s, "{\"a\":1,\"b\":[\"c\"]}") == 0);
	free(s);
	json_decref(o);
}

static void t_buf_growth(void)
{
	/* seed_buf(3): doubling, from 256 bytes. */
	seed_buf b = {0};
	seed_buf_append(&b, NULL, 0);
	CHECK(b.len == 0);
	seed_buf_append(&b, "x", 1);
	CHECK(b.len == 1 && b.cap == 256 && b.data[0] == 'x');
	char big[300];
	memset(big, 'y', sizeof big);
	seed_buf_append(&b, big, 255);
	CHECK(b.len == 256 && b.cap == 256);
	seed_buf_append(&b, big, 1);
	CHECK(b.len == 257 && b.cap == 512);
	seed_buf_reserve(&b, 1000);
	CHECK(b.len == 257 && b.cap == 2048);
	CHECK(b.data[0] == 'x' && b.data[1] == 'y' && b.data[256] == 'y');
	seed_buf_reset(&b);
	CHECK(b.len == 0 && b.cap == 2048);
	seed_buf_free(&b);
	CHECK(b.data == NULL && b.len == 0 && b.cap == 0);
}

/* seed_xgrow: 16 elements the first time, then at least doubling, at
 * least what is needed, the contents kept, the same array while it has
 * room. */
static void t_xgrow(void)
{
	size_t cap = 0;
	int32_t *a = seed_xgrow(NULL, &cap, 1, sizeof *a);
	CHECK(a && cap == 16);
	for (int i = 0; i < 16; i++)
		a[i] = i;
	int32_t *same = seed_xgrow(a, &cap, 16, sizeof *a);
	CHECK(same == a && cap == 16);
	a = seed_xgrow(a, &cap, 17, sizeof *a);
	CHECK(cap == 32);
	a = seed_xgrow(a, &cap, 100, sizeof *a); /* 64 is not enough: 128 */
	CHECK(cap == 128);
	a[127] = 127;
	bool kept = true;
	for (int i = 0; i < 16; i++)
		kept = kept && a[i] == i;
	CHECK(kept);
	a = seed_xgrow(a, &cap, 0, sizeof *a);
	CHECK(cap == 128 && a[127] == 127);
	free(a);
}

static void t_xaligned_alignment(void)
{
	const size_t sizes[] = {0, 1, 63, 64, 65, 1000, 4096};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		unsigned char *p = seed_xaligned(sizes[i]);
		CHECK_MSG((uintptr_t)p % 64 == 0, "size %zu at %p", sizes[i], (void *)p);
		/* The rounded-up size is usable: write its last byte. */
		size_t usable = sizes[i] ? (sizes[i] + 63) / 64 * 64 : 64;
		p[usable - 1] = 1;
		free(p);
	}
}

int main(void)
{
	run_oom_cases();
	if (memory_managed())
		tap_result("t_real_shortage # SKIP AddressSanitizer or valgrind maps memory of its own");
	else
		TAP_RUN(t_real_shortage);
	TAP_RUN(t_jansson_routed);
	TAP_RUN(t_buf_growth);
	TAP_RUN(t_xgrow);
	TAP_RUN(t_xaligned_alignment);
	return tap_done();
}
