#!/usr/bin/env bats
# seed-learn with algorithm r2d2 against a real seed-replay: sample requests
# answered, updates run, priorities back to the replay, episode frames
# relayed by the replay to the learner, a checkpoint with the target
# network; and the errors a learner must die on.  The unrolls come from
# tests/cli/replay_client (CartPole-shaped: 4 f32 observations, 2 actions), so
# that the test does not depend on seed-infer acting with Q values.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	# Presets from the source tree (a VPATH build has none beside it).
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	CLIENT="$SEED_BUILDDIR/tests/cli/replay_client"
	PIDS=()
	cat >"$D/r2d2.json" <<-'EOF'
		{"env": "cartpole", "algorithm": "r2d2",
		 "model": {"torso": [{"type": "linear", "out": 16}, {"type": "relu"}], "head": "dueling"},
		 "unroll_length": 4, "batch_size": 4, "total_frames": 100000000,
		 "optimizer": {"lr": 0.001, "eps": 0.001, "lr_decay": false},
		 "r2d2": {"burn_in": 1, "n_step": 2, "target_update_period": 5},
		 "metrics_interval": 0.2, "checkpoint_interval": 0}
	EOF
	# One episode frame of two episodes, returns 12.5 and 7.5.
	echo '{"type":"episode","version":1,"run":0,"actor":0,"env":{"dtype":"i32","shape":[2],"data":[0,1]},"return":{"dtype":"f32","shape":[2],"data":[12.5,7.5]},"length":{"dtype":"i32","shape":[2],"data":[12,7]},"truncated":{"dtype":"u8","shape":[2],"data":[0,0]}}' |
		seed-cat --encode --out "$D/episode.frame"
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$D"
}

# wait_for FILE REGEX [TENTHS]: until a line of FILE matches (10 s default).
wait_for() {
	local i
	for i in $(seq "${3:-100}"); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no line matching '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}

start_replay() {
	seed-replay --bind "ipc://$D/l" --unrolls "ipc://$D/u" --stats-interval 0 "$@" 2>"$D/replay.err" &
	REPLAY=$!
	PIDS+=("$REPLAY")
	wait_for_handler "$REPLAY" 15
}

@test "--help names --prefetch; --prefetch 0 is a usage error" {
	run seed-learn --help
	assert_success
	assert_output --partial "--prefetch N"
	run seed-learn --config "$D/r2d2.json" --unrolls "ipc://$D/l" --params "ipc://$D/p" --prefetch 0
	[ "$status" -eq 2 ]
	assert_output --partial "--prefetch"
}

@test "a model without a dueling head is refused for r2d2" {
	run seed-learn --config "$D/r2d2.json" --set 'model={"torso": []}' \
		--unrolls "ipc://$D/l" --params "ipc://$D/p"
	assert_failure
	assert_output --partial "dueling"
}

@test "r2d2: updates on sampled sequences, priorities back, returns relayed, a checkpoint" {
	start_replay --min-size 8
	"$CLIENT" unrolls "ipc://$D/u" 10 4 5
	seed-learn --config "$D/r2d2.json" --unrolls "ipc://$D/l" --params "ipc://$D/p" \
		--dir "$D/run" -q 2>"$D/learn.err" &
	LEARN=$!
	PIDS+=("$LEARN")
	wait_for_handler "$LEARN" 15
	wait_for "$D/run/metrics.jsonl" '"updates": *[1-9]'
	# The learner has asked: the replay knows it, and relays episodes to it.
	"$CLIENT" push "ipc://$D/u" "$D/episode.frame"
	wait_for "$D/run/metrics.jsonl" '"episodes": *2'
	# Several updates: the target was copied (period 5).
	wait_for "$D/run/metrics.jsonl" '"target_updates": *[1-9]'
	kill -TERM "$LEARN"
	wait "$LEARN"
	last=$(tail -n 1 "$D/run/metrics.jsonl")
	[ "$(jq -r .algorithm <<<"$last")" = r2d2 ]
	[ "$(jq .episode_return <<<"$last")" = 10 ]
	jq -e '.mean_q | type == "number"' <<<"$last"
	jq -e '.mean_priority > 0' <<<"$last"
	[ "$(jq .priority_drops <<<"$last")" -eq 0 ]
	[ "$(jq .bad_frames <<<"$last")" -eq 0 ]
	# The checkpoint holds every update, and the target network.
	updates=$(jq .updates <<<"$last")
	[ "$(jq .step "$D/run/checkpoint.json")" -eq "$updates" ]
	[ "$(jq -r .config.algorithm "$D/run/checkpoint.json")" = r2d2 ]
	grep -q 'target.advantage.weight' "$D"/run/*.safetensors
	# The replay took the priorities and relayed the episodes.
	kill -TERM "$REPLAY"
	wait "$REPLAY"
	grep -E 'done: .* [1-9][0-9]* updated' "$D/replay.err"
	grep -E '[1-9][0-9]* priority frames' "$D/replay.err"
	grep -E 'done: .* 1 episode frames relayed' "$D/replay.err"
}

@test "r2d2: resuming restores the run, target network included" {
	start_replay --min-size 4
	"$CLIENT" unrolls "ipc://$D/u" 4 4 5
	seed-learn --config "$D/r2d2.json" --unrolls "ipc://$D/l" --params "ipc://$D/p" \
		--dir "$D/run" --frames 96 -q
	[ "$(jq .step "$D/run/checkpoint.json")" -eq 6 ]
	run seed-learn --resume "$D/run" --unrolls "ipc://$D/l" --params "ipc://$D/p" --frames 160 -q
	assert_success
	[ "$(jq .step "$D/run/checkpoint.json")" -eq 10 ]
	kill -TERM "$REPLAY"
	wait "$REPLAY"
}

@test "r2d2: a request the replay can never answer ends the learner with its message" {
	start_replay --min-size 1 --max-batch 2
	run timeout 20 seed-learn --config "$D/r2d2.json" --unrolls "ipc://$D/l" --params "ipc://$D/p" -q
	assert_failure
	[ "$status" -ne 124 ]
	assert_output --partial "seed-replay refused a request"
	assert_output --partial "--max-batch 2"
}

@test "r2d2: --unrolls must be seed-replay's socket, not a file" {
	run seed-learn --config "$D/r2d2.json" --unrolls "$D/no-such-file" --params "ipc://$D/p" -q
	assert_failure
	assert_output --partial "seed-replay's --bind"
}

@test "seed-train runs an r2d2 preset with seed-replay between seed-infer and seed-learn" {
	# The whole topology on the masked CartPole: seed-infer acts on the
	# LSTM's Q values and sends first priorities, seed-replay stores and
	# samples, seed-learn trains and sends priorities back, and the final
	# evaluation is epsilon-greedy at r2d2.eval_epsilon.
	run timeout 120 seed-train r2d2-cartpole-masked --seed 2 --frames 40000 --dir "$D/run" --set eval_episodes=4 \
		--set replay.min_size=50
	assert_success
	assert_output --partial "lstm(64) +action"
	assert_output --partial "frame budget reached"
	assert_output --partial "seed-replay 0"
	last=$(echo "$output" | tail -n 1)
	[ "$(jq '.restarts.replay' <<<"$last")" -eq 0 ]
	[ "$(jq '.eval.episodes' <<<"$last")" -eq 4 ]
	[ "$(jq '.eval.epsilon' <<<"$last")" = 0.001 ]
	[ "$(jq '.eval.greedy' <<<"$last")" = false ]
	# The replay took unrolls with their state and first priorities and
	# took priority updates; no unroll was refused.
	grep -E 'done: .* [1-9][0-9]* inserted, .* [1-9][0-9]* updated, .* 0 bad frames' "$D/run/replay.log"
	grep -E '[1-9][0-9]* priority frames, 0 bad unrolls' "$D/run/replay.log"
	m=$(tail -n 1 "$D/run/metrics.jsonl")
	[ "$(jq -r .algorithm <<<"$m")" = r2d2 ]
	[ "$(jq '.updates > 0 and .env_frames > 0 and .bad_frames == 0' <<<"$m")" = true ]
	# The checkpoint holds the target network.
	python3 - "$D/run/checkpoint.safetensors" <<-'PY'
		import json, struct, sys
		with open(sys.argv[1], "rb") as f:
		    n = struct.unpack("<Q", f.read(8))[0]
		    names = json.loads(f.read(n))
		assert any(k.startswith("target.") for k in names), sorted(names)
	PY
}

@test "every preset resolves, and the r2d2 ones with their replay and r2d2 settings" {
	local p n=0
	for p in "$SEED_SRCDIR"/examples/presets/*.json; do
		run seed-learn --config "$p" --print-config
		assert_success
		n=$((n + 1))
	done
	[ "$n" -ge 13 ]
	for p in "$SEED_SRCDIR"/examples/presets/r2d2-*.json; do
		[ "$(seed-learn --config "$p" --get algorithm)" = r2d2 ]
		[ "$(seed-learn --config "$p" --get optimizer.eps)" = 0.001 ]
		[ "$(seed-learn --config "$p" --get max_grad_norm)" = 40.0 ] ||
			[ "$(seed-learn --config "$p" --get max_grad_norm)" = 40 ]
		[ "$(seed-learn --config "$p" --get model.head)" = dueling ]
	done
}
