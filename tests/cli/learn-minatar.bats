#!/usr/bin/env bats
# tests/cli/learn-minatar.bats: seed-train learns MinAtar Breakout.
#
# The whole stack (seed-actor, seed-infer, seed-learn over ipc, then seed-eval
# on the checkpoint) trains the minatar-breakout preset for 400k env frames
# with a fixed seed, and the greedy 100-episode evaluation must beat the
# random policy by a clear margin.
#
# Reference: the uniformly random policy on MinAtar Breakout with sticky
# actions (p = 0.1) returns 0.52 on average, std 0.75 (the minatar Python
# package, 10000 episodes, tests/golden/minatar_ref.h; seed-eval --policy random,
# 2000 episodes: 0.506).  Over 100 episodes its standard error is 0.074, so a mean of
# MIN_RETURN = 2.0 is 20 standard errors above it: an untrained policy cannot
# pass (the initial network, greedy, scored 0.46).  Trained runs at 400k
# frames scored 4.7 to 6.0 with seeds 1 to 6, and 5.1 to 5.6 in three more
# runs of seed 1 (runs are not bit-for-bit repeatable: actors, server and
# learner are asynchronous), so the test does not flake either; with the
# preset's unroll length 10 and entropy cost 0.02, seeds 1 to 6 scored 4.8
# to 5.8.  It takes about 6 s.

bats_require_minimum_version 1.5.0

MIN_RETURN=2.0
FRAMES=400000

setup() {
	load helpers
	load_helpers
	SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	export SEED_PRESETS
}

@test "seed-train minatar-breakout beats the random policy after $FRAMES frames" {
	d="$BATS_TEST_TMPDIR/run"
	run --separate-stderr seed-train minatar-breakout --dir "$d" --seed 1 --frames "$FRAMES" --quiet
	[ "$status" -eq 0 ]
	echo "$output"
	mean=$(echo "$output" | sed -n 's/.*"return": *{ *"mean": *\([-0-9.eE+]*\).*/\1/p')
	[ -n "$mean" ]
	# The learner stopped at the frame budget, and the evaluation was greedy.
	frames=$(tail -n 1 "$d/metrics.jsonl" | sed -n 's/.*"frames": *\([0-9]*\).*/\1/p')
	[ "$frames" -ge "$FRAMES" ]
	[[ "$output" == *'"greedy": true'* ]]
	awk -v m="$mean" -v min="$MIN_RETURN" 'BEGIN { exit !(m >= min) }'
}
