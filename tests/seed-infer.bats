#!/usr/bin/env bats
# seed-infer's command line: options, errors, the model from a checkpoint.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
}

teardown() {
	[ -z "${INFER:-}" ] || kill "$INFER" 2>/dev/null || true
	rm -rf "$D"
}

@test "--help and --version go to stdout and exit 0" {
	run seed-infer --help
	assert_success
	assert_output --partial "Usage: seed-infer"
	run seed-infer --version
	assert_success
	assert_output --regexp '^seed-infer \(seed\) [0-9]'
}

@test "misuse gets a short usage on stderr and exit 2" {
	run seed-infer
	[ "$status" -eq 2 ]
	assert_output --partial "--bind is required"
	run seed-infer --bind "ipc://$D/s"
	[ "$status" -eq 2 ]
	assert_output --partial "--policy random"
	run seed-infer --bind "ipc://$D/s" --policy clever
	[ "$status" -eq 2 ]
	assert_output --partial "unknown policy 'clever'"
	run seed-infer --bind "ipc://$D/s" --policy random --max-batch 0
	[ "$status" -eq 2 ]
	run seed-infer --bind "ipc://$D/s" --policy random --model "ipc://$D/p"
	[ "$status" -eq 2 ]
}

@test "a bad endpoint or checkpoint is a runtime error naming it" {
	run seed-infer --bind "foo://bar" --policy random
	[ "$status" -eq 1 ]
	assert_output --partial "foo://bar"
	run seed-infer --bind "ipc://$D/s" --model "$D/no-such-run"
	[ "$status" -eq 1 ]
	assert_output --partial "no-such-run"
}

@test "--unrolls to a file records the stream; SIGTERM stops the server with a summary" {
	seed-infer --bind "ipc://$D/s" --policy random --unrolls "$D/u.msgpack" --unroll-length 3 \
		--stats-interval 0 2>"$D/err" &
	INFER=$!
	seed-actor --env catch --envs 2 --steps 7 --connect "ipc://$D/s" --quiet
	kill -TERM $INFER
	wait $INFER
	INFER=
	# floor((7 - 1) / 3) = 2 unrolls of each half (one env each).
	[ "$(seed-cat "$D/u.msgpack" | jq -s '[.[] | select(.type == "unroll")] | length')" -eq 4 ]
	[ "$(seed-cat "$D/u.msgpack" | jq -s '[.[] | select(.type == "unroll")][0].obs.shape')" = "$(printf '[\n  1,\n  4,\n  10,\n  5\n]')" ]
	grep -q "done: .* 14 steps" "$D/err"
}

@test "--model CHECKPOINT serves a trained policy greedily" {
	# A checkpoint from a short learner run on a recorded stream.
	seed-infer --bind "ipc://$D/s" --policy random --unrolls "$D/u.msgpack" --unroll-length 16 \
		--stats-interval 0 --quiet &
	INFER=$!
	seed-actor --env cartpole --envs 16 --steps 100 --connect "ipc://$D/s" --quiet
	kill -TERM $INFER
	wait $INFER
	SEED_PRESETS="$SEED_SRCDIR/examples/presets" seed-learn --config cartpole --unrolls "$D/u.msgpack" \
		--params "ipc://$D/p" --dir "$D/run" --batch-size 8 --quiet
	v=$(jq .policy_version "$D/run/checkpoint.json")
	[ "$v" -gt 0 ]
	seed-infer --bind "ipc://$D/s2" --model "$D/run" --greedy --unrolls "$D/u2.msgpack" --unroll-length 4 \
		--stats-interval 0 --quiet &
	INFER=$!
	seed-actor --env cartpole --envs 4 --steps 9 --connect "ipc://$D/s2" --quiet
	kill -TERM $INFER
	wait $INFER
	INFER=
	# The unrolls carry the checkpoint's policy version and real (non-zero) logits.
	run sh -c "seed-cat '$D/u2.msgpack' | jq -s -c '[.[] | select(.type == \"unroll\")] | [(map(.policy_version.data) | flatten | unique), (map(.logits.data) | flatten | map(select(. != 0)) | length > 0)]'"
	assert_success
	assert_output "[[$v],true]"
}
