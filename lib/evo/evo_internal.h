/* evo_internal.h: what evo.c and evo_gen.c share; private to lib/evo. */
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
/* -EINVAL unless noise is the table of (seed, size). */
int evo_check_table(const seed_noise *noise, uint64_t seed, int64_t size, seed_err *err);

#endif
