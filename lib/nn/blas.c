/* blas.c: load a CBLAS library at run time and pick OpenBLAS's kernel.
 *
 * See seed/blas.h for why this uses dlopen() instead of linking -lopenblas:
 * OpenBLAS chooses its kernel in its constructor, so the only way to steer
 * that choice without the user's help is to set OPENBLAS_CORETYPE before the
 * library is loaded, which a program linked against it cannot do.
 *
 * Invariants: after a successful init, blas_sgemm points into the loaded
 * library, which stays loaded until the process ends (never dlclose'd: other
 * threads may be inside it).  The environment is the same after init as
 * before: variables this file sets for the load are removed again.
 */
#include "config.h"

#include "seed/blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CBLAS ABI: enums are ints with these values in every implementation. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int M, int N, int K, float alpha,
                         const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);
typedef void (*set_threads_fn)(int n);
typedef int (*get_threads_fn)(void);
typedef char *(*get_string_fn)(void);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static int blas_rc;        /* result of the first init */
static char blas_msg[512]; /* its error message */
static char blas_info[256] = "not loaded";
static sgemm_fn blas_sgemm;
static set_threads_fn blas_set_threads;
static get_threads_fn blas_get_threads;

/* The OpenBLAS kernel for this CPU, or NULL to let OpenBLAS decide.
 * SkylakeX is OpenBLAS's AVX-512 kernel (every release since 0.3.0 knows it;
 * its sgemm is also what Cooperlake and later cores use), Haswell its
 * AVX2+FMA kernel.  __builtin_cpu_supports checks that the OS saves the
 * wider registers too, so a kernel that would fault is never chosen. */
static const char *coretype_for_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512vl"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
#endif
	return NULL;
}

static int env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

/* Fill blas_info from what the library says about itself. */
static void describe(void *h, const char *name, const char *how)
{
	get_string_fn config = (get_string_fn)dlsym(h, "openblas_get_config");
	get_string_fn corename = (get_string_fn)dlsym(h, "openblas_get_corename");
	get_string_fn blis = (get_string_fn)dlsym(h, "bli_info_get_version_str");
	if (config) {
		/* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": keep two words. */
		char what[64] = "OpenBLAS";
		const char *c = config();
		if (c) {
			int words = 0;
			size_t i = 0;
			for (; c[i] && i < sizeof what - 1; i++) {
				if (c[i] == ' ' && ++words == 2)
					break;
				what[i] = c[i];
			}
			what[i] = '\0';
		}
		snprintf(blas_info, sizeof blas_info, "%s %s (%s, %s)", what, corename ? corename() : "?",
		         name, how);
	} else if (blis) {
		snprintf(blas_info, sizeof blas_info, "BLIS %s (%s)", blis(), name);
	} else {
		snprintf(blas_info, sizeof blas_info, "CBLAS from %s", name);
	}
}

static void blas_load(void)
{
	const char *user = getenv("SEED_BLAS_LIBRARY");
	const char *names[4];
	int nnames = 0;
	if (user && *user) {
		names[nnames++] = user;
	} else {
		names[nnames++] = "libopenblas.so.0";
#ifdef SEED_OPENBLAS_PATH
		names[nnames++] = SEED_OPENBLAS_PATH;
#endif
		names[nnames++] = "libblas.so.3";
	}

	/* Steer the load; undone below so the environment stays the user's. */
	const char *core = NULL;
	const char *how = "kernel from OPENBLAS_CORETYPE";
	if (!env_set("OPENBLAS_CORETYPE")) {
		core = coretype_for_cpu();
		how = core ? "kernel chosen from CPUID" : "kernel chosen by OpenBLAS";
		if (core)
			setenv("OPENBLAS_CORETYPE", core, 1);
	}
	int user_threads =
	    env_set("OPENBLAS_NUM_THREADS") || env_set("GOTO_NUM_THREADS") || env_set("OMP_NUM_THREADS");
	if (!user_threads)
		setenv("OPENBLAS_NUM_THREADS", "1", 1); /* no idle pool of nproc threads */

	char why[sizeof blas_msg] = "";
	size_t wl = 0;
	void *h = NULL;
	for (int i = 0; i < nnames && !h; i++) {
		const char *this_how = how;
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		if (h) {
			this_how = "loaded before seed: kernel chosen by OpenBLAS";
		} else {
			h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		}
		if (!h) {
			const char *e = dlerror();
			wl += (size_t)snprintf(why + wl, wl < sizeof why ? sizeof why - wl : 0, "%s%s",
			                       wl ? "; " : "", e ? e : names[i]);
			continue;
		}
		blas_sgemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
		if (!blas_sgemm) {
			wl += (size_t)snprintf(why + wl, wl < sizeof why ? sizeof why - wl : 0,
			                       "%s%s: no cblas_sgemm", wl ? "; " : "", names[i]);
			dlclose(h);
			h = NULL;
			continue;
		}
		blas_set_threads = (set_threads_fn)dlsym(h, "openblas_set_num_threads");
		blas_get_threads = (get_threads_fn)dlsym(h, "openblas_get_num_threads");
		describe(h, names[i], this_how);
	}

	if (core)
		unsetenv("OPENBLAS_CORETYPE");
	if (!user_threads)
		unsetenv("OPENBLAS_NUM_THREADS");

	if (!h) {
		blas_rc = -ENOENT;
		snprintf(blas_msg, sizeof blas_msg, "blas: cannot load a BLAS library (%s)", why);
		return;
	}
	if (!user_threads && blas_set_threads)
		blas_set_threads(1);
	blas_rc = 0;
}

int seed_blas_init(seed_err *err)
{
	pthread_once(&blas_once, blas_load);
	if (blas_rc < 0)
		return seed_err_set(err, blas_rc, "%s", blas_msg);
	return 0;
}

const char *seed_blas_info(void)
{
	return blas_info;
}

int seed_blas_threads(void)
{
	if (!blas_sgemm || !blas_get_threads)
		return 1;
	return blas_get_threads();
}

int seed_blas_set_threads(int n)
{
	if (n < 1)
		return -EINVAL;
	if (!blas_sgemm)
		return -ENOENT;
	if (!blas_set_threads)
		return -ENOTSUP;
	blas_set_threads(n);
	return 0;
}

void seed_blas_sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc)
{
	if (!blas_sgemm) {
		seed_blas_sgemm_ref(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
		return;
	}
	blas_sgemm(CBLAS_ROW_MAJOR, trans_a ? CBLAS_TRANS : CBLAS_NO_TRANS,
	           trans_b ? CBLAS_TRANS : CBLAS_NO_TRANS, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void seed_blas_sgemm_ref(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float *A,
                         int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < N; j++) {
			double acc = 0;
			for (int k = 0; k < K; k++) {
				double a = trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
				double b = trans_b ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
				acc += a * b;
			}
			float *c = &C[(size_t)i * ldc + j];
			/* beta == 0 means "C is not read", as in BLAS: no NaN from garbage. */
			*c = (float)(alpha * acc + (beta == 0.0f ? 0.0 : (double)beta * *c));
		}
	}
}
