/* test_blas.c: the run-time BLAS (seed/blas.h).
 *
 * seed_blas_sgemm against the plain-loop reference for every transpose
 * combination, the model's own shapes, strided operands, alpha and beta;
 * threads; and the kernel choice, which happens once per process: the test
 * runs itself again (argv[0] --info) under chosen environments and reads
 * what the child reports.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seed/blas.h"
#include "seed/rng.h"
#include "tap.h"

static const char *self;

/* Fill n floats with normals. */
static float *randn(seed_rng *r, size_t n)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)seed_rng_normal(r);
	return p;
}

/* C = alpha op(A) op(B) + beta C by BLAS and by the reference; compare each
 * element with a tolerance scaled by sum_k |a||b| (float rounding grows
 * with K and the terms' sizes, not with the result). */
static void one(seed_rng *r, int ta, int tb, int M, int N, int K, int pad, float alpha, float beta)
{
	int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
	size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb, nc = (size_t)M * ldc;
	float *A = randn(r, na), *B = randn(r, nb), *C = randn(r, nc), *R = malloc((nc ? nc : 1) * sizeof *R);
	memcpy(R, C, nc * sizeof *C);
	seed_blas_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	seed_blas_sgemm_ref(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
	int bad = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double mag = 0;
			for (int k = 0; k < K; k++)
				mag += fabs((ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) *
				            (tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]));
			double tol =
			    1e-6 * (fabs(alpha) * mag + fabs(beta) * fabs(R[(size_t)i * ldc + j]) + 1);
			if (!(fabs(C[(size_t)i * ldc + j] - R[(size_t)i * ldc + j]) <= tol))
				bad++;
		}
	/* The padding between rows of C is never written. */
	for (int i = 0; i < M; i++)
		for (int j = N; j < ldc; j++)
			bad += C[(size_t)i * ldc + j] != R[(size_t)i * ldc + j];
	CHECK_MSG(bad == 0, "ta=%d tb=%d M=%d N=%d K=%d pad=%d alpha=%g beta=%g: %d elements off", ta, tb, M,
	          N, K, pad, alpha, beta, bad);
	free(A);
	free(B);
	free(C);
	free(R);
}

static void t_init(void)
{
	seed_err err = {{0}};
	int rc = seed_blas_init(&err);
	CHECK_MSG(rc == 0, "%s", err.msg);
	CHECK(seed_blas_init(NULL) == rc); /* idempotent */
	const char *info = seed_blas_info();
	printf("# %s\n", info);
	CHECK(info && strcmp(info, "not loaded") != 0);
}

static void t_sgemm_shapes(void)
{
	seed_rng r;
	seed_rng_init(&r, 1, 0);
	/* The model's products: MLP layers, heads, conv im2col, and their
	 * backward forms, at small batch sizes. */
	static const int shapes[][3] = {
	    {1, 1, 1},     {3, 5, 7},     {17, 64, 4},    {33, 64, 64}, {64, 3, 64},  {64, 4, 17},
	    {130, 16, 36}, {16, 36, 130}, {9, 128, 1024}, {64, 7, 128}, {5, 1024, 7}, {0, 4, 4},
	};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (int ta = 0; ta < 2; ta++)
			for (int tb = 0; tb < 2; tb++)
				one(&r, ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], 0, 1.0f, 0.0f);
}

static void t_sgemm_alpha_beta_strides(void)
{
	seed_rng r;
	seed_rng_init(&r, 2, 0);
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			one(&r, ta, tb, 13, 11, 9, 3, 0.5f, 1.0f);
			one(&r, ta, tb, 13, 11, 9, 1, -2.0f, 0.25f);
			one(&r, ta, tb, 40, 24, 1, 5, 1.0f, 1.0f);
		}
	/* beta == 0: C is not read, so garbage (NaN) in it does not leak. */
	float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4] = {NAN, NAN, NAN, NAN};
	seed_blas_sgemm(false, false, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, C, 2);
	/* [1 2 3; 4 5 6] [1 0; 0 1; 1 1] = [4 5; 10 11] */
	CHECK(C[0] == 4 && C[1] == 5 && C[2] == 10 && C[3] == 11);
	float R[4] = {NAN, NAN, NAN, NAN};
	seed_blas_sgemm_ref(false, false, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, R, 2);
	CHECK(R[0] == 4 && R[1] == 5 && R[2] == 10 && R[3] == 11);
}

static void t_threads(void)
{
	CHECK(seed_blas_set_threads(0) == -EINVAL);
	if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("GOTO_NUM_THREADS") && !getenv("OMP_NUM_THREADS"))
		CHECK(seed_blas_threads() == 1); /* the default */
	int rc = seed_blas_set_threads(2);
	if (rc == -ENOTSUP) {
		printf("# this BLAS has no thread control\n");
		return;
	}
	CHECK(rc == 0);
	CHECK(seed_blas_threads() == 2);
	seed_rng r;
	seed_rng_init(&r, 3, 0);
	one(&r, 0, 1, 640, 64, 64, 0, 1.0f, 0.0f); /* still right with threads */
	CHECK(seed_blas_set_threads(1) == 0);
	CHECK(seed_blas_threads() == 1);
}

/* Run `self --info` with the environment changed as given (NAME=VALUE to
 * set, NAME alone to unset); its output into out. */
static int child_info(const char *const *env, char *out, size_t len)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		for (; *env; env++) {
			const char *eq = strchr(*env, '=');
			if (eq) {
				char name[64];
				snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
				setenv(name, eq + 1, 1);
			} else {
				unsetenv(*env);
			}
		}
		dup2(fd[1], 1);
		close(fd[0]);
		execl(self, self, "--info", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t got;
	while (n + 1 < len && (got = read(fd[0], out + n, len - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What the child reports: init's result, the info line, the threads, and
 * whether OPENBLAS_CORETYPE / OPENBLAS_NUM_THREADS are set after init. */
static int info_main(void)
{
	seed_err err = {{0}};
	int rc = seed_blas_init(&err);
	/* The product works whether or not a library loaded. */
	float A[2] = {1, 2}, B[2] = {3, 4}, C[1];
	seed_blas_sgemm(false, false, 1, 1, 2, 1.0f, A, 2, B, 1, 0.0f, C, 1);
	/* The CPU as this process sees it (under valgrind, a child runs
	 * natively and sees more than its parent). */
	__builtin_cpu_init();
	int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
	             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	             __builtin_cpu_supports("avx512vl");
	int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	printf("rc=%d\nmsg=%s\ninfo=%s\nthreads=%d\ncoretype=%s\nnumthreads=%s\nproduct=%g\ncpu=%s\n", rc,
	       err.msg, seed_blas_info(), seed_blas_threads(),
	       getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "-",
	       getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "-", (double)C[0],
	       avx512 ? "avx512"
	       : avx2 ? "avx2"
	              : "other");
	return 0;
}

/* The child's info line as a TAP comment. */
static void print_info(const char *what, const char *out)
{
	const char *info = strstr(out, "info=");
	int len = info ? (int)strcspn(info, "\n") : 0;
	printf("# %s: %.*s\n", what, len, info ? info : "");
}

static void t_kernel_choice(void)
{
	char out[2048];
	/* Nothing set: Seed picks from CPUID and leaves no trace. */
	const char *const clean[] = {"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
	                             "OMP_NUM_THREADS",   "SEED_BLAS_LIBRARY",    NULL};
	CHECK(child_info(clean, out, sizeof out) == 0);
	print_info("unset", out);
	CHECK(strstr(out, "rc=0\n") != NULL);
	CHECK(strstr(out, "coretype=-\n") != NULL);
	CHECK(strstr(out, "numthreads=-\n") != NULL);
	CHECK(strstr(out, "threads=1\n") != NULL);
	CHECK(strstr(out, "product=11\n") != NULL);
	if (strstr(out, "OpenBLAS")) {
		if (strstr(out, "cpu=avx512\n"))
			CHECK(strstr(out, "OpenBLAS") && strstr(out, " SkylakeX (") && strstr(out, "CPUID"));
		else if (strstr(out, "cpu=avx2\n"))
			CHECK(strstr(out, " Haswell (") && strstr(out, "CPUID"));
		else
			CHECK(strstr(out, "chosen by OpenBLAS") != NULL);
	} else {
		printf("# not OpenBLAS: kernel choice not checked\n");
	}

	/* The user's choice wins, and stays set. */
	const char *const user[] = {"OPENBLAS_CORETYPE=Prescott", "OPENBLAS_NUM_THREADS=2",
	                            "SEED_BLAS_LIBRARY", NULL};
	CHECK(child_info(user, out, sizeof out) == 0);
	print_info("OPENBLAS_CORETYPE=Prescott", out);
	CHECK(strstr(out, "coretype=Prescott\n") != NULL);
	CHECK(strstr(out, "numthreads=2\n") != NULL);
	if (strstr(out, "OpenBLAS")) {
		CHECK(strstr(out, " Prescott (") && strstr(out, "OPENBLAS_CORETYPE"));
		CHECK(strstr(out, "threads=2\n") != NULL);
	}

	/* No library: an error naming what was tried; products still right. */
	const char *const none[] = {"SEED_BLAS_LIBRARY=libno-such-blas.so.9", NULL};
	CHECK(child_info(none, out, sizeof out) == 0);
	CHECK(strstr(out, "rc=-2\n") != NULL); /* -ENOENT */
	CHECK(strstr(out, "libno-such-blas.so.9") != NULL);
	CHECK(strstr(out, "info=not loaded\n") != NULL);
	CHECK(strstr(out, "product=11\n") != NULL);
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1 && strcmp(argv[1], "--info") == 0)
		return info_main();
	TAP_RUN(t_init);
	TAP_RUN(t_sgemm_shapes);
	TAP_RUN(t_sgemm_alpha_beta_strides);
	TAP_RUN(t_threads);
	TAP_RUN(t_kernel_choice);
	return tap_done();
}
