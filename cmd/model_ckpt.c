/* cmd/model_ckpt.c: a model's parameters from a checkpoint. */
#include "model_ckpt.h"

#include <string.h>

int model_load_checkpoint(seed_model *m, const seed_checkpoint *ck, seed_err *err)
{
	float *params = seed_model_params(m);
	for (int i = 0; i < seed_model_num_tensors(m); i++) {
		const seed_model_param *p = seed_model_param_at(m, i);
		seed_tensor t;
		int rc = seed_checkpoint_expect(ck, p->name, SEED_DTYPE_F32, p->rank, p->shape, &t, err);
		if (rc)
			return rc;
		memcpy(params + p->offset, t.data, p->numel * sizeof(float));
	}
	return 0;
}
