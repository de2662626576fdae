/* trainer_internal.h: the trainer's table of functions, shared by
 * trainer.c (the learner's and the evolver's rows) and run.c (the loop);
 * private to lib/learn. */
#ifndef SEED_LEARN_TRAINER_INTERNAL_H
#define SEED_LEARN_TRAINER_INTERNAL_H

#include "seed/evolve.h"
#include "seed/learner.h"
#include "seed/trainer.h"

typedef struct trainer_ops {
	int (*restore)(seed_trainer *t, const seed_checkpoint *ck, seed_err *err);
	int (*set_device)(seed_trainer *t, const char *device, seed_err *err);
	int (*open_dir)(seed_trainer *t, const char *dir, seed_err *err);
	seed_model *(*model)(seed_trainer *t);
	int (*feed)(seed_trainer *t, const seed_frame *f, seed_err *err);
	int (*tick)(seed_trainer *t, seed_err *err);
	double (*tick_in)(const seed_trainer *t);
	const char *(*done)(const seed_trainer *t);
	int (*publish_frame)(seed_trainer *t, seed_buf *out, seed_err *err);
	int64_t (*published)(const seed_trainer *t);
	int (*save)(seed_trainer *t, bool last, seed_err *err);
	json_t *(*metrics)(seed_trainer *t);
	void (*progress)(const seed_trainer *t, const json_t *m, char *buf, size_t n);
	void (*summary)(const seed_trainer *t, const char *why, char *buf, size_t n);
	void (*describe)(seed_trainer *t, char *buf, size_t n);
	/* The phases it times itself, into phase (seconds so far). */
	void (*times)(const seed_trainer *t, double *phase);
	void (*free)(seed_trainer *t);
	uint32_t phases;    /* the seed_timing phases its runs have */
	double republish_s; /* publish again after this long without anything new */
	bool rounds;        /* trains in rounds (the evolver): a metrics line per round, not per interval */
} trainer_ops;

struct seed_trainer {
	const trainer_ops *ops;
	const seed_config *cfg;
	seed_learner *L;
	seed_evolver *E;
	seed_metrics *metrics; /* the metrics lines (NULL: none) */
	seed_tfevents *events; /* and TensorBoard's scalars (NULL: none) */
};

/* Seconds since the Unix epoch: TensorBoard's wall time. */
double trainer_unix_time(void);

#endif
