/* evo_internal.h: what lib/evo's files share (evo.c, evo_gen.c); private to
 * lib/evo. */
#ifndef SEED_EVO_EVO_INTERNAL_H
#define SEED_EVO_EVO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "seed/evo.h"

/* Whether a is one of the algorithms. */
bool evo_algo_ok(seed_evo_algo a);
/* The parameters of a genome (GA, RS) into out: init(genome[0]) then, for
 * GA, the mutations until -1. */
int evo_build_genome(const seed_noise *noise, seed_model *model, seed_evo_algo algo, double sigma, int rank,
                     const int64_t *genome, int len, float *out, seed_err *err);
/* The full-rank eps(key) of a model of P parameters: the table's P floats
 * starting at seed_noise_index(noise, key, P); NULL when P is not in
 * [1, the table's size]. */
const float *evo_noise_slice(const seed_noise *noise, uint64_t key, int64_t P);
/* SNES's perturbation: out[i] += (sign * sigmas[i]) * eps(key)[i] (in float,
 * in that order) for i < P, eps full rank (evo_noise_slice).  Errors:
 * -EINVAL (a slice longer than the table; out untouched). */
int evo_add_noise_scaled(const seed_noise *noise, int64_t P, uint64_t key, float sign, const float *sigmas,
                         float *out, seed_err *err);
/* -EINVAL unless noise is the table of (seed, size). */
int evo_check_table(const seed_noise *noise, uint64_t seed, int64_t size, seed_err *err);

#endif
