/* tests/member_ref.h: a population's logits held against the model itself.
 *
 * member_ref_error loads ref with each row's member's parameters (params:
 * members x P floats, P = ref's parameter count) and runs it on that row
 * alone, one row at a time: the plainest forward there is.  It returns the
 * largest error of got (rows x A logits, or Q values for a dueling head)
 * against it, relative to the row's largest magnitude (at least 1e-3);
 * INFINITY for a NaN.  For a Gaussian policy got holds the A means: the
 * first A of each row of seed_model_forward's 2A.  Shared by nn's seed_popnet test and evo's
 * seed_population test.
 */
#ifndef SEED_TESTS_MEMBER_REF_H
#define SEED_TESTS_MEMBER_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "seed/nn.h"
#include "tap.h"

static inline double member_ref_error(seed_model *ref, const float *params, int rows, const void *obs,
                                      const int32_t *member, const float *got)
{
	int A = seed_model_num_actions(ref);
	size_t P = seed_model_num_params(ref), ob = seed_model_obs_bytes(ref);
	float *want = malloc((size_t)seed_model_policy_width(ref) * sizeof *want);
	double worst = 0;
	for (int r = 0; r < rows; r++) {
		CHECK(seed_model_load_params(ref, params + (size_t)member[r] * P, P * sizeof *params) == 0);
		const void *o = (const char *)obs + (size_t)r * ob;
		if (seed_model_head_kind(ref) == SEED_HEAD_DUELING)
			CHECK(seed_model_forward_q(ref, 1, o, want) == 0);
		else
			CHECK(seed_model_forward(ref, 1, o, want, NULL) == 0);
		double scale = 0;
		for (int a = 0; a < A; a++)
			scale = fmax(scale, fabs(want[a]));
		for (int a = 0; a < A; a++) {
			double e = fabs(got[(size_t)r * A + a] - want[a]) / fmax(scale, 1e-3);
			if (!(e <= worst))
				worst = isnan(e) ? INFINITY : e;
		}
	}
	free(want);
	return worst;
}

#endif
