/* seed/blas.h: matrix products through a BLAS chosen and loaded at run time.
 *
 * libseed does not link a BLAS.  seed_blas_init() loads OpenBLAS with
 * dlopen() (libopenblas.so.0, else the system's libblas.so.3) and resolves
 * cblas_sgemm through a function pointer.  The reason is OpenBLAS's kernel
 * choice: a DYNAMIC_ARCH build picks its kernel from CPUID when it is loaded,
 * and a release that does not recognise a CPU model may fall back to its
 * generic SSE3 "Prescott" kernel, 4 to 6 times slower than its AVX-512
 * "SkylakeX" kernel (bench/RESULTS.md has the figures).  When
 * the user has not set OPENBLAS_CORETYPE, seed_blas_init sets it from the
 * CPU's features just for the load: "SkylakeX" when the CPU and the OS
 * support AVX-512 (F, CD, BW, DQ, VL), "Haswell" for AVX2 with FMA, and
 * otherwise leaves the choice to OpenBLAS.  A user's OPENBLAS_CORETYPE is
 * always respected.
 *
 * Threads: BLAS threads default to 1 (Seed's processes already share the
 * cores between them); seed_blas_set_threads changes that.  When the user
 * has set OPENBLAS_NUM_THREADS (or GOTO_NUM_THREADS, OMP_NUM_THREADS), that
 * setting is kept instead.
 *
 * Environment: SEED_BLAS_LIBRARY, when set, names the library to load (a
 * file or a soname) instead of the defaults; any library with the CBLAS
 * interface works (OpenBLAS, BLIS, MKL, the reference BLAS).
 *
 * Thread safety: seed_blas_init may be called from any thread, any number of
 * times; the first call does the work (it briefly sets environment variables,
 * so call it, or seed_model_new, before starting threads that read the
 * environment).  seed_blas_sgemm may be called from several threads at once.
 */
#ifndef SEED_BLAS_H
#define SEED_BLAS_H

#include <stdbool.h>

#include "seed/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Load the BLAS (first call only; later calls return the first call's
 * result).  Errors: -ENOENT when no library could be loaded or it lacks
 * cblas_sgemm; err names the libraries tried and why each failed. */
int seed_blas_init(seed_err *err);

/* A one-line description for logs, e.g. "OpenBLAS 0.3.21 SkylakeX
 * (libopenblas.so.0, core from CPUID)"; "not loaded" before a successful
 * seed_blas_init.  The string is static. */
const char *seed_blas_info(void);

/* Number of threads the BLAS uses (1 before init or when the library cannot
 * tell). */
int seed_blas_threads(void);
/* Ask the BLAS for n >= 1 threads.  Errors: -EINVAL (n < 1), -ENOTSUP (the
 * library has no openblas_set_num_threads), -ENOENT (not loaded). */
int seed_blas_set_threads(int n);

/* C = alpha * op(A) * op(B) + beta * C, all row-major, where op(X) is X or
 * its transpose (trans_a, trans_b).  op(A) is M x K, op(B) is K x N, C is
 * M x N; lda, ldb, ldc are the row strides of A, B, C as stored.  With
 * beta == 0, C need not be initialised.  Runs the loaded BLAS; before a
 * successful seed_blas_init it runs seed_blas_sgemm_ref (slow, but right). */
void seed_blas_sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc);

/* The same product by plain loops with double accumulation: the reference the
 * BLAS is tested against. */
void seed_blas_sgemm_ref(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float *A,
                         int lda, const float *B, int ldb, float beta, float *C, int ldc);

#ifdef __cplusplus
}
#endif
#endif
