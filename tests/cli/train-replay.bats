#!/usr/bin/env bats
# seed-train with an r2d2 replay whose snapshot its settings cannot take:
# seed-replay exits 2 (a configuration error), and seed-train ends the run
# at once with the replay's message as its last line, instead of
# restarting the replay until it gives up.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	cat >"$D/r2d2.json" <<-'EOF'
		{"env": "cartpole", "algorithm": "r2d2", "actors": 1, "envs_per_actor": 4,
		 "model": {"torso": [{"type": "linear", "out": 16}, {"type": "relu"}], "head": "dueling"},
		 "unroll_length": 4, "batch_size": 4, "total_frames": 3000,
		 "optimizer": {"lr": 0.001, "eps": 0.001, "lr_decay": false},
		 "r2d2": {"burn_in": 1, "n_step": 2, "target_update_period": 5},
		 "replay": {"capacity": 500, "min_size": 20},
		 "metrics_interval": 0.2, "checkpoint_interval": 0}
	EOF
}

teardown() {
	rm -rf "$D"
}

@test "a --resume run with another replay.capacity ends at once with seed-replay's message, status 2" {
	run timeout 120 seed-train "$D/r2d2.json" --dir "$D/run" --no-eval --quiet
	assert_success
	[ -s "$D/run/replay/replay.snap" ]
	run timeout 120 seed-train --resume "$D/run" --frames 6000 --set replay.capacity=600 --no-eval
	[ "$status" -eq 2 ]
	assert_output --partial "seed-replay exited with status 2"
	last=$(echo "$output" | tail -n 1)
	[[ "$last" == "seed-replay: --resume: $D/run/replay/replay.snap: snapshot of capacity 500, but --capacity is 600"* ]]
	# Ended, not restarted: one start of seed-replay in this run's log.
	[ "$(grep -c 'snapshot of capacity 500' "$D/run/replay.log")" -eq 1 ]
}
