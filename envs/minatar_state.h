/* envs/minatar_state.h: the per-instance state of each MinAtar game.
 *
 * Internal to the game files and their tests (which set states directly to
 * script scenarios).  Every state starts with a minatar_common; a zeroed
 * state is a new instance.  Coordinates are columns x and rows y, 0..9, row 0
 * at the top; fields mirror the upstream Python attributes of the same name.
 */
#ifndef SEED_ENVS_MINATAR_STATE_H
#define SEED_ENVS_MINATAR_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "minatar.h"

/* Breakout.  Ball directions: 0 up-left, 1 up-right, 2 down-right,
 * 3 down-left. */
typedef struct minatar_breakout {
	minatar_common c;
	int pos; /* paddle column (row 9) */
	int ball_x, ball_y;
	int ball_dir;
	int last_x, last_y;                        /* the ball's previous cell (the trail) */
	bool strike;                               /* a brick was touched on the previous step */
	int bricks;                                /* bricks left (the number of 1s in brick) */
	uint8_t brick[MINATAR_SIZE][MINATAR_SIZE]; /* [y][x] */
} minatar_breakout;

/* Asterix.  Slot i holds the entity of row i + 1. */
typedef struct minatar_asterix_entity {
	bool live;
	bool right; /* moving right */
	bool gold;  /* gold, else enemy */
	int x;
} minatar_asterix_entity;

typedef struct minatar_asterix {
	minatar_common c;
	int player_x, player_y;
	minatar_asterix_entity entity[8];
	int spawn_speed, spawn_timer;
	int move_speed, move_timer;
	int ramp_timer, ramp_index;
} minatar_asterix;

/* Freeway.  Car i drives in row i + 1; speed is signed (> 0: right). */
typedef struct minatar_freeway_car {
	int x, timer, speed;
} minatar_freeway_car;

typedef struct minatar_freeway {
	minatar_common c;
	int pos; /* chicken row (column 4) */
	int move_timer, terminate_timer;
	minatar_freeway_car car[8];
} minatar_freeway;

/* Seaquest.  Objects live in lists kept in creation order, as upstream's
 * Python lists, since the order decides which object a bullet hits first.
 * Capacities are bounds the rules guarantee (see minatar_seaquest.c). */
#define MINATAR_SEAQUEST_MAX_F_BULLETS 4
#define MINATAR_SEAQUEST_MAX_DIVERS 4
#define MINATAR_SEAQUEST_MAX_ENEMIES 64 /* fish, and enemy subs, each */
#define MINATAR_SEAQUEST_MAX_E_BULLETS 128

typedef struct minatar_seaquest_obj {
	int8_t x, y;
	bool right;        /* moving (or facing) right */
	int8_t move_timer; /* fish, enemy subs, divers */
	int8_t shot_timer; /* enemy subs */
} minatar_seaquest_obj;

typedef struct minatar_seaquest {
	minatar_common c;
	int oxygen;
	int diver_count; /* divers carried; may go negative (doc/minatar.md) */
	int sub_x, sub_y;
	bool sub_or;  /* the player's sub faces right */
	bool surface; /* the sub was at the surface after the last step */
	int e_spawn_speed, e_spawn_timer, d_spawn_timer;
	int move_speed, ramp_index, shot_timer;
	int n_f_bullets, n_e_bullets, n_fish, n_subs, n_divers;
	minatar_seaquest_obj f_bullets[MINATAR_SEAQUEST_MAX_F_BULLETS];
	minatar_seaquest_obj e_bullets[MINATAR_SEAQUEST_MAX_E_BULLETS];
	minatar_seaquest_obj fish[MINATAR_SEAQUEST_MAX_ENEMIES];
	minatar_seaquest_obj subs[MINATAR_SEAQUEST_MAX_ENEMIES];
	minatar_seaquest_obj divers[MINATAR_SEAQUEST_MAX_DIVERS];
} minatar_seaquest;

/* Space Invaders.  Maps are [y][x] of 0/1. */
typedef struct minatar_space_invaders {
	minatar_common c;
	int pos;       /* cannon column (row 9) */
	int alien_dir; /* -1 left, +1 right */
	int enemy_move_interval, alien_move_timer, alien_shot_timer;
	int shot_timer, ramp_index;
	uint8_t alien[MINATAR_SIZE][MINATAR_SIZE];
	uint8_t f_bullet[MINATAR_SIZE][MINATAR_SIZE];
	uint8_t e_bullet[MINATAR_SIZE][MINATAR_SIZE];
} minatar_space_invaders;

#endif
