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

@test "episodes go out with the next unroll of their half, and the rest when the server stops" {
	seed-infer --bind "ipc://$D/s" --policy random --unrolls "$D/u.msgpack" --unroll-length 4 \
		--stats-interval 0 --quiet &
	INFER=$!
	# Catch ends every episode after 9 steps: step frame 9 of each half (one
	# env each) ends one, after the last whole unroll (frames 4..8).
	seed-actor --env catch --envs 2 --steps 10 --connect "ipc://$D/s" --quiet
	sleep 0.3
	[ "$(seed-cat "$D/u.msgpack" | jq -s '[.[] | select(.type == "episode")] | length')" -eq 0 ]
	kill -TERM $INFER
	wait $INFER
	INFER=
	run sh -c "seed-cat '$D/u.msgpack' | jq -r .type | tr '\n' ' '"
	[ "$output" = "unroll unroll unroll unroll episode episode " ]
	[ "$(seed-cat "$D/u.msgpack" | jq -s -c '[.[] | select(.type == "episode") | .length.data[0]]')" = "[9,9]" ]
}

@test "a push that fails is counted and warned, once per few seconds, and its frames are not counted as pushed" {
	[ -w /dev/full ] || skip "no /dev/full to fail writes with"
	# Every write to /dev/full fails (no space left): the 2 unrolls of
	# each half (frames 0..4, 4..8, T 4) and, at exit, the episode frame
	# of each half (Catch ends every episode at its frame 9): 6 frames.
	seed-infer --bind "ipc://$D/s" --policy random --unrolls /dev/full --unroll-length 4 \
		--stats-interval 0 --metrics "$D/m.jsonl" 2>"$D/err" &
	INFER=$!
	seed-actor --env catch --envs 2 --steps 10 --connect "ipc://$D/s" --quiet
	kill -TERM $INFER
	wait $INFER
	INFER=
	cat "$D/err"
	# The first failure is said at once; the others come within 5 s of it.
	[ "$(grep -c 'frames not pushed since the last warning' "$D/err")" -eq 1 ]
	grep -q "unrolls channel: 1 frames not pushed since the last warning, 1 in all .*: No space left on device" "$D/err"
	grep -q "the episodes still gathered at exit were not all pushed: No space left on device" "$D/err"
	grep -q "done: .* 20 steps, 0 unrolls, 0 episodes, 6 pushes failed," "$D/err"
	[ "$(jq -s -c 'last | [.unrolls, .episodes, .push_failed]' "$D/m.jsonl")" = "[0,0,6]" ]
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
	# Observations of another dtype than the model's f32: converted when
	# every value converts exactly (numpy's f64, u8 pixels), refused with an
	# error frame otherwise; never played at random.
	for dt in f64 u8 i32; do
		step 9 0 0 0 2 2 "$dt" 4 1 | seed-cat --encode >"$D/$dt"
		run sh -c "zreq ipc://$D/s2 '$D/$dt' | seed-cat | jq -c '[.type, .policy_version]'"
		assert_output "[\"action\",$v]"
	done
	step 9 1 0 0 2 2 f64 4 1e300 | seed-cat --encode >"$D/f64-huge"
	run sh -c "zreq ipc://$D/s2 '$D/f64-huge' | seed-cat"
	assert_output --partial '"type":"error"'
	assert_output --partial '"frame":"step"'
	step 9 2 0 0 2 2 f32 3 | seed-cat --encode >"$D/narrow"
	run sh -c "zreq ipc://$D/s2 '$D/narrow' | seed-cat"
	assert_output --partial 'do not fit the model'
	kill -TERM $INFER
	wait $INFER
	INFER=
	# The unrolls carry the checkpoint's policy version and real (non-zero) logits.
	run sh -c "seed-cat '$D/u2.msgpack' | jq -s -c '[.[] | select(.type == \"unroll\")] | [(map(.policy_version.data) | flatten | unique), (map(.logits.data) | flatten | map(select(. != 0)) | length > 0)]'"
	assert_success
	assert_output "[[$v],true]"
}

# step RUN ACTOR SEQ ENV0 K A [DTYPE [WIDTH [VALUE]]]: one step frame as JSON
# (K rows of WIDTH observations, all VALUE).
step() {
	jq -nc --argjson run "$1" --argjson actor "$2" --argjson seq "$3" --argjson env0 "$4" \
		--argjson K "$5" --argjson A "$6" --arg dt "${7:-f32}" --argjson w "${8:-4}" --argjson v "${9:-0}" \
		'def z($d): {dtype: $d, shape: [$K], data: [range($K) | 0]};
		{type: "step", version: 1, run: $run, actor: $actor, seq: $seq, env0: $env0, num_actions: $A,
		 obs: {dtype: $dt, shape: [$K, $w], data: [range($K * $w) | $v]},
		 reward: z("f32"), terminated: z("u8"), truncated: z("u8"), ep_return: z("f32"), ep_length: z("i32")}'
}

# serve ARGS...: start seed-infer on ipc://$D/s in the background, stderr to $D/err.
serve() {
	seed-infer --bind "ipc://$D/s" --stats-interval 0 "$@" 2>"$D/err" &
	INFER=$!
	wait_for_handler "$INFER" 15
}

stop() {
	kill -TERM "$INFER"
	wait "$INFER"
	INFER=
}

@test "a client that counts seq per actor, not per half, is told loudly that its unrolls are dropped" {
	serve --policy random --unrolls "$D/u.msgpack" --unroll-length 2
	# The manual's rule, followed: seq per half (two halves, env0 0 and 1).
	for s in 0 1 2 3; do step 1 3 "$s" 0 1 2; step 1 3 "$s" 1 1 2; done | seed-cat --encode >"$D/per-half"
	zreq --each "ipc://$D/s" "$D/per-half" >/dev/null
	# seq per actor: every request of a half comes after a gap.
	for s in 0 1 2 3 4 5 6 7; do step 2 4 "$s" $((s % 2)) 1 2; done | seed-cat --encode >"$D/per-actor"
	zreq --each "ipc://$D/s" "$D/per-actor" >/dev/null
	stop
	cat "$D/err"
	# The per-half client made one unroll of 3 steps per half; the other none.
	[ "$(seed-cat "$D/u.msgpack" | jq -s '[.[] | select(.type == "unroll") | .actor] | unique')" = "$(printf '[\n  3\n]')" ]
	# One warning (rate-limited) naming the actor, the seq and the reason.
	[ "$(grep -c 'its unroll in progress is dropped' "$D/err")" -eq 1 ]
	grep -q 'actor 4 (run 2, envs 0\.\.0): step frame seq 2 after 0: .*seq counts the step frames of each half' "$D/err"
	grep -q '6 gaps' "$D/err"
	# The manual says what the server does.
	grep -q 'grows by one per step frame of that half' "$SEED_SRCDIR/man/seed-frames.7"
}

@test "a REQ client gets its error frame: the server keeps the empty delimiter" {
	serve --policy random
	step 1 0 0 0 1 2 | seed-cat --encode >"$D/step"
	run sh -c "zreq --req ipc://$D/s '$D/step' | seed-cat"
	assert_success
	assert_output --partial '"type":"error"'
	assert_output --partial 'connect a DEALER socket'
	# And a DEALER with the same frame is served.
	run sh -c "zreq ipc://$D/s '$D/step' | seed-cat"
	assert_output --partial '"type":"action"'
	stop
	grep -qi 'DEALER' "$SEED_SRCDIR/man/seed-frames.7"
}

@test "error frames name the failed frame's type; the manual's example is what the server answers" {
	serve --policy random
	# A step frame whose reward is i32: the decoder refuses it, the type is known.
	step 5 0 0 0 1 2 | seed-cat --encode >"$D/good"
	perl -pe 'BEGIN{undef $/} s/(reward\x{85}?.{0,12}?dtype.)f32/$1i32/s' "$D/good" >"$D/bad"
	! cmp -s "$D/good" "$D/bad"
	run sh -c "zreq ipc://$D/s '$D/bad' | seed-cat"
	assert_output --partial '"frame":"step"'
	assert_output --partial "step frame: field 'reward': dtype i32, expected f32"
	# seed-infer(1)'s example, byte for byte.
	want=$(grep '^{"type":"error"' "$SEED_SRCDIR/man/seed-infer.1" | sed 's/\\-/-/g')
	[ -n "$want" ]
	echo '{"type":"action","version":1,"run":1,"actor":0,"seq":0,"env0":0,"policy_version":0,"action":{"dtype":"i32","shape":[1],"data":[0]}}' |
		seed-cat --encode >"$D/action"
	got=$(zreq "ipc://$D/s" "$D/action" | seed-cat)
	echo "manual: $want"
	echo "server: $got"
	[ "$got" = "$want" ]
	stop
}

@test "two requests of one half in one batch window: the second is refused, the first answered" {
	# A long window: another half heard from just before keeps the batch open.
	serve --policy random --timeout-us 1000000
	step 1 0 0 8 1 2 | seed-cat --encode >"$D/other"
	zreq --each "ipc://$D/s" "$D/other" >/dev/null
	{ step 1 0 0 0 1 2; step 1 0 1 0 2 2; step 1 0 1 0 1 2; } | seed-cat --encode >"$D/three"
	run sh -c "zreq --burst ipc://$D/s '$D/three' | seed-cat | jq -c '[.type, (.action.shape // .message)]' | sort"
	echo "$output"
	assert_line --index 0 '["action",[1]]'
	assert_line --partial "another layout (2 rows, 2 actions) while a request of 1 rows waits"
	assert_line --partial "one request in flight per half"
	[ "${#lines[@]}" -eq 3 ]
	# The server still serves actors.
	run seed-actor --env catch --envs 2 --steps 5 --connect "ipc://$D/s" --quiet
	assert_success
	stop
}

@test "sizes past the bounds get error frames, not allocations; the server survives" {
	serve --policy random --unrolls "$D/u.msgpack" --max-memory 1 --max-envs 64
	step 1 0 0 0 1 2147483647 | seed-cat --encode >"$D/huge-actions"
	run sh -c "zreq ipc://$D/s '$D/huge-actions' | seed-cat"
	assert_output --partial '"frame":"step"'
	assert_output --partial '2147483647 actions'
	assert_output --partial 'more than the server takes'
	step 1 0 0 0 65 2 | seed-cat --encode >"$D/many-envs"
	run sh -c "zreq ipc://$D/s '$D/many-envs' | seed-cat"
	assert_output --partial '65 environments'
	# 21 steps of a 400 kB observation need 8.4 MB: more than --max-memory 1 (MiB).
	step 1 0 0 0 1 2 f32 100000 | seed-cat --encode >"$D/big-obs"
	run sh -c "zreq ipc://$D/s '$D/big-obs' | seed-cat"
	assert_output --partial 'more than the bound of 1048576'
	run seed-actor --env catch --envs 2 --steps 5 --connect "ipc://$D/s" --quiet
	assert_success
	stop
	# Without unrolls, a model's batch would copy the observations: a step
	# frame of 40 x 40 kB (1.6 MB) is more than 1 MiB.
	serve --model "ipc://$D/p" --max-memory 1
	step 1 0 0 0 40 2 f32 10000 | seed-cat --encode >"$D/wide"
	run sh -c "zreq ipc://$D/s '$D/wide' | seed-cat"
	assert_output --partial "field 'obs': 1600000 bytes, more than the bound of 1048576"
	stop
}

@test "--max-halves: a flood of one-frame peers evicts the longest idle halves, memory stays bounded" {
	seed-infer --bind "ipc://$D/s" --policy random --unrolls "$D/u.msgpack" --max-halves 4 \
		--stats-interval 0.2 2>"$D/err" &
	INFER=$!
	wait_for_handler "$INFER" 15
	for a in $(seq 100 139); do step 1 "$a" 0 0 1 2; done | seed-cat --encode >"$D/flood"
	zreq --each "ipc://$D/s" "$D/flood" >/dev/null
	sleep 0.5
	stop
	tail -1 "$D/err"
	tail -1 "$D/err" | grep -q ', 4 halves, 36 evicted'
	# Said once (rate-limited), with the bounds.
	[ "$(grep -c 'actor halves evicted so far, the longest idle first, to stay within 4 halves' "$D/err")" -eq 1 ]
}

# qmodel DIR [CONFIG_JSON]: a Q-model (dueling head) checkpoint for catch,
# freshly initialised (no learner writes one yet).
qmodel() {
	qcheckpoint "$1" catch '{"torso": [{"type": "flatten"}, {"type": "linear", "out": 8}, {"type": "relu"}], "head": "dueling"}' 3 "${2:-null}"
}

# qplay ARGS...: seed-infer with the Q checkpoint $D/q and ARGS, unrolls of
# 4 + 2 steps to $D/u.msgpack, one catch actor of 4 envs for 30 steps; the
# unroll frames to $D/u.jsonl.
qplay() {
	seed-infer --bind "ipc://$D/s" --model "$D/q" --unrolls "$D/u.msgpack" --unroll-length 4 \
		--unroll-overlap 2 --stats-interval 0 "$@" 2>"$D/err" &
	INFER=$!
	seed-actor --env catch --envs 4 --steps 30 --connect "ipc://$D/s" --quiet
	kill -TERM $INFER
	wait $INFER
	INFER=
	seed-cat "$D/u.msgpack" | jq -c 'select(.type == "unroll")' >"$D/u.jsonl"
}

@test "a Q model: Q values in the logits, greedy or epsilon-greedy actions, first priorities with every unroll" {
	qmodel "$D/q"
	qplay --greedy --burn-in 1 --n-step 2 --discount 0.9 --priority-eta 0.8
	# 30 steps of each half (2 envs), unrolls of 6 steps overlapping by 2: 7 each.
	[ "$(wc -l <"$D/u.jsonl")" -eq 14 ]
	run jq -c '[.priority.shape, (.priority.data | map(select(. >= 0)) | length)]' "$D/u.jsonl"
	assert_output "$(printf '[[2],2]\n%.0s' $(seq 14))"
	# The rewards of catch's episode ends (every 9 steps) are in there.
	[ "$(jq -s '[.[].reward.data | flatten[] | select(. != 0)] | length' "$D/u.jsonl")" -gt 0 ]
	# The reference recomputes the Q values from the checkpoint and the
	# priorities from each frame, in plain Python.
	if ! command -v python3 >/dev/null; then
		skip "no python3 for the reference"
	fi
	run python3 "$SEED_SRCDIR/tests/golden/q_unrolls_ref.py" "$D/q/checkpoint.safetensors" "$D/u.jsonl" \
		1 2 0.9 0.001 0.8 1 1
	assert_success
	assert_output --partial "ok: 14 unroll frames"
	# Epsilon 1: uniform over catch's 3 actions, a third of them greedy;
	# the defaults of the priorities (burn-in 0, 5 steps, 0.99, 1e-3, 0.9).
	qplay --epsilon 1
	run python3 "$SEED_SRCDIR/tests/golden/q_unrolls_ref.py" "$D/q/checkpoint.safetensors" "$D/u.jsonl" \
		0 5 0.99 0.001 0.9 0.2 0.47
	assert_success
	# Ape-X's schedule over 8 environments (2 actors' worth): this actor
	# (0) has environments 0..3, epsilon 0.4 to 0.4^4; not all greedy.
	qplay --epsilon-envs 8
	run python3 "$SEED_SRCDIR/tests/golden/q_unrolls_ref.py" "$D/q/checkpoint.safetensors" "$D/u.jsonl" \
		0 5 0.99 0.001 0.9 0.6 0.99
	assert_success
}

@test "the Q-model options: usage errors, and a warning for an actor-critic model" {
	qmodel "$D/q"
	for args in "--greedy --epsilon 0.1" "--epsilon 0.1 --epsilon-envs 4" "--epsilon-base 0.5" \
		"--actor-envs 4" "--epsilon 2" "--n-step 3" "--unrolls $D/u --burn-in 20"; do
		run seed-infer --bind "ipc://$D/s" --model "$D/q" $args
		[ "$status" -eq 2 ] || { echo "$args: status $status"; false; }
	done
	run seed-infer --bind "ipc://$D/s" --policy random --epsilon 0.5
	[ "$status" -eq 2 ]
	assert_output --partial "need --model"
	run seed-infer --bind "ipc://$D/s" --model "$D/q" --unrolls "$D/u" --unroll-length 4 --burn-in 4
	[ "$status" -eq 2 ]
	assert_output --partial "--burn-in 4: unrolls of 5 steps"
	# An actor-critic model takes no epsilon: said once, and it samples on.
	qcheckpoint "$D/ac" catch '{"torso": [{"type": "flatten"}]}' 1
	seed-infer --bind "ipc://$D/s" --model "$D/ac" --epsilon 0.3 --stats-interval 0 --quiet 2>"$D/err" &
	INFER=$!
	seed-actor --env catch --envs 2 --steps 5 --connect "ipc://$D/s" --quiet
	kill -TERM $INFER
	wait $INFER
	INFER=
	[ "$(grep -c "actor-critic head" "$D/err")" -eq 1 ]
}

@test "--device: a bad name or a device not here is an error naming it; --policy random has no model" {
	run seed-infer --bind "ipc://$BATS_TEST_TMPDIR/a" --policy random --device cpu
	[ "$status" -eq 2 ]
	[[ "$output" == *"--policy random has no model to run"* ]]
	run seed-infer --bind "ipc://$BATS_TEST_TMPDIR/a" --model "$BATS_TEST_TMPDIR/none" --device tpu:0
	[ "$status" -eq 1 ]
	[[ "$output" == *"--device: device 'tpu:0': must be cpu, cuda or cuda:N"* ]]
	run seed-infer --bind "ipc://$BATS_TEST_TMPDIR/a" --model "$BATS_TEST_TMPDIR/none" --device cuda:4096
	[ "$status" -eq 1 ]
	[[ "$output" == *"--device: device 'cuda:4096': "* ]]
}
