#!/usr/bin/env bats
# A whole local topology: seed-infer, two seed-actors and a seed-cat sink over
# ipc, with the unroll stream checked against what the protocol promises.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
}

teardown() {
	# Stop whatever a failing test left running.
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	rm -rf "$D"
}

# start NAME CMD...: run CMD in the background, remember its pid as $NAME_PID
start() {
	local name=$1
	shift
	"$@" &
	eval "${name}_PID=$!"
	PIDS="${PIDS:-} $!"
}

@test "two actors, one server, a sink: counts, one-step overlap, episode returns" {
	start INFER seed-infer --bind "ipc://$D/infer" --policy random --unrolls "ipc://$D/unrolls" \
		--unroll-length 5 --stats-interval 0 --quiet
	start CAT sh -c "exec seed-cat --connect ipc://$D/unrolls > $D/stream.jsonl"
	seed-actor --env cartpole --envs 6 --actor 0 --seed 1 --steps 61 --connect "ipc://$D/infer" --quiet &
	a0=$!
	seed-actor --env cartpole --env-options '{"max_steps":12}' --envs 6 --actor 1 --seed 2 --steps 61 \
		--connect "ipc://$D/infer" --quiet &
	a1=$!
	wait "$a0"
	wait "$a1"
	# Let the last unrolls reach the sink, then stop the server and the sink.
	sleep 1
	kill -TERM "$INFER_PID"
	wait "$INFER_PID"
	sleep 0.5
	kill -TERM "$CAT_PID"
	wait "$CAT_PID" || true
	run jq -s -c -f "$SEED_SRCDIR/tests/cli/topology-check.jq" "$D/stream.jsonl"
	assert_success
	echo "$output"
	# 61 steps per env make floor((61 - 1) / 5) = 12 unrolls per env; 12 envs;
	# each half of 3 envs sends its unrolls together: 12 x 4 frames.
	[ "$(jq .unrolls <<<"$output")" -eq 144 ]
	[ "$(jq .unroll_frames <<<"$output")" -eq 48 ]
	[ "$(jq .envs <<<"$output")" -eq 12 ]
	[ "$(jq '.problems | length' <<<"$output")" -eq 0 ]
	# Random play on CartPole ends episodes; the 12-step limit truncates some.
	[ "$(jq .episodes_checked <<<"$output")" -gt 20 ]
	[ "$(jq .truncated_episodes <<<"$output")" -gt 0 ]
}

@test "a restarted actor gets fresh state and the server keeps serving" {
	start INFER seed-infer --bind "ipc://$D/infer" --policy random --unrolls "$D/unrolls.msgpack" \
		--unroll-length 4 --stats-interval 0 --quiet
	run seed-actor --env catch --envs 4 --actor 7 --steps 10 --connect "ipc://$D/infer" --quiet
	assert_success
	run seed-actor --env catch --envs 4 --actor 7 --steps 9 --connect "ipc://$D/infer" --quiet
	assert_success
	kill -TERM "$INFER_PID"
	wait "$INFER_PID"
	run sh -c "seed-cat '$D/unrolls.msgpack' | jq -s -c -f '$SEED_SRCDIR/tests/cli/topology-check.jq'"
	assert_success
	echo "$output"
	# Each run starts its unrolls afresh: floor(9/4) + floor(8/4) = 4 unrolls per env.
	[ "$(jq .unrolls <<<"$output")" -eq 16 ]
	[ "$(jq .envs <<<"$output")" -eq 8 ]
	[ "$(jq '.problems | length' <<<"$output")" -eq 0 ]
}

@test "the server survives bad frames, answers them with error frames, and keeps serving" {
	seed-infer --bind "ipc://$D/infer" --policy random --stats-interval 0 2>"$D/infer.err" &
	INFER_PID=$!
	PIDS="$INFER_PID"
	# Not msgpack at all.
	printf 'not msgpack at all' >"$D/garbage"
	run sh -c "zreq ipc://$D/infer '$D/garbage' | seed-cat"
	assert_success
	assert_output --partial '"type":"error"'
	# A well-formed frame of a type actors never send.
	echo '{"type":"action","version":1,"run":1,"actor":0,"seq":0,"env0":0,"policy_version":0,"action":{"dtype":"i32","shape":[1],"data":[0]}}' |
		seed-cat --encode >"$D/action.msgpack"
	run sh -c "zreq ipc://$D/infer '$D/action.msgpack' | seed-cat"
	assert_success
	assert_output --partial '"type":"error"'
	assert_output --partial 'action frame'
	# A step frame whose reward has the wrong dtype: the message names the field.
	echo '{"type":"step","version":1,"run":5,"actor":0,"seq":0,"env0":0,"num_actions":2,"obs":{"dtype":"f32","shape":[1,4],"data":[0,0,0,0]},"reward":{"dtype":"i32","shape":[1],"data":[0]},"terminated":{"dtype":"u8","shape":[1],"data":[0]},"truncated":{"dtype":"u8","shape":[1],"data":[0]},"ep_return":{"dtype":"f32","shape":[1],"data":[0]},"ep_length":{"dtype":"i32","shape":[1],"data":[0]}}' >"$D/bad-step.json"
	run seed-cat --encode "$D/bad-step.json"
	assert_failure
	# seed-cat refuses to encode it, so build the bytes from a good frame and
	# patch the dtype string in place ("f32" -> "i32" of the reward tensor).
	sed 's/"reward":{"dtype":"i32"/"reward":{"dtype":"f32"/' "$D/bad-step.json" | seed-cat --encode >"$D/good-step.msgpack"
	perl -pe 'BEGIN{undef $/} s/(reward\x{83}?.{0,12}?dtype.)f32/$1i32/s' "$D/good-step.msgpack" >"$D/bad-step.msgpack"
	! cmp -s "$D/good-step.msgpack" "$D/bad-step.msgpack"
	run sh -c "zreq ipc://$D/infer '$D/bad-step.msgpack' | seed-cat"
	assert_success
	assert_output --partial "field 'reward'"
	# The server is still serving actors.
	run seed-actor --env cartpole --envs 2 --steps 5 --connect "ipc://$D/infer" --quiet
	assert_success
	kill -TERM "$INFER_PID"
	wait "$INFER_PID"
	grep -q 'dropped bad frame #3' "$D/infer.err"
}

# The number of unroll frames in a recorded JSON stream so far.
count_unrolls() { grep -c '"type":"unroll"' "$1" 2>/dev/null || true; }

@test "killing an actor never stops the others; a restarted server picks up the resent requests" {
	start INFER seed-infer --bind "ipc://$D/infer" --policy random --unrolls "ipc://$D/unrolls" \
		--unroll-length 4 --stats-interval 0 --quiet
	start CAT sh -c "exec seed-cat --connect ipc://$D/unrolls > $D/stream.jsonl"
	start A0 seed-actor --env catch --envs 4 --actor 0 --connect "ipc://$D/infer" --retry-ms 200 --quiet
	start A1 seed-actor --env catch --envs 4 --actor 1 --connect "ipc://$D/infer" --retry-ms 200 --quiet
	sleep 1
	kill -KILL "$A1_PID"
	n1=$(count_unrolls "$D/stream.jsonl")
	sleep 1
	n2=$(count_unrolls "$D/stream.jsonl")
	echo "unroll frames: $n1 when actor 1 died, $n2 a second later"
	[ "$n2" -gt "$n1" ]
	# Restart the server on the same endpoint: actor 0 resends and goes on.
	kill -TERM "$INFER_PID"
	wait "$INFER_PID"
	start INFER seed-infer --bind "ipc://$D/infer" --policy random --unrolls "ipc://$D/unrolls2" \
		--unroll-length 4 --stats-interval 0 --quiet
	start CAT2 sh -c "exec seed-cat --connect ipc://$D/unrolls2 > $D/stream2.jsonl"
	for i in $(seq 50); do
		sleep 0.2
		[ "$(count_unrolls "$D/stream2.jsonl")" -gt 10 ] && break
	done
	m=$(count_unrolls "$D/stream2.jsonl")
	echo "unroll frames from the restarted server: $m"
	[ "$m" -gt 10 ]
	kill -0 "$A0_PID"
	kill -TERM "$A0_PID" "$INFER_PID"
	wait "$A0_PID" "$INFER_PID"
	sleep 0.3
	kill -TERM "$CAT_PID" "$CAT2_PID"
	# What the restarted server sent is consistent on its own (but for the
	# episodes that began before it started).
	run jq -s -c --argjson skip_first true -f "$SEED_SRCDIR/tests/cli/topology-check.jq" "$D/stream2.jsonl"
	echo "$output"
	[ "$(jq '.problems | length' <<<"$output")" -eq 0 ]
	[ "$(jq .envs <<<"$output")" -eq 4 ]
}

# steps_in_one_second ENDPOINT: env steps one actor of 4 envs makes in 1 s.
steps_in_one_second() {
	seed-actor --env catch --envs 4 --actor 9 --connect "$1" 2>"$D/a9.err" &
	local pid=$!
	wait_for_handler "$pid" 15
	sleep 1
	kill -TERM "$pid"
	wait "$pid" || true
	sed -n 's/.*: \([0-9]*\) env steps in .*/\1/p' "$D/a9.err"
}

@test "an actor started right after another one's death runs at full speed: dead halves hold no batch" {
	# A long batching window: a batch held by a dead half would take 0.2 s.
	start INFER seed-infer --bind "ipc://$D/infer" --policy random --timeout-us 200000 --stats-interval 0 --quiet
	# The best of three runs each way: the machine may be busy with more.
	best=0
	for i in 1 2 3; do n=$(steps_in_one_second "ipc://$D/infer"); [ "$n" -gt "$best" ] && best=$n; done
	fresh=$best
	start A0 seed-actor --env catch --envs 4 --actor 0 --connect "ipc://$D/infer" --quiet
	sleep 0.5
	kill -KILL "$A0_PID"
	best=0
	for i in 1 2 3; do n=$(steps_in_one_second "ipc://$D/infer"); [ "$n" -gt "$best" ] && best=$n; done
	after=$best
	echo "steps in one second: $fresh on a fresh server, $after right after an actor was killed"
	# A batch held by the dead halves would take the whole 0.2 s window:
	# some 20 steps in a second instead of tens of thousands.  On an idle
	# machine the two figures agree within 10%; on one busy with other tests
	# (make -j2 check) "after" has come out at 40% of "fresh" (21,414 against
	# 53,566), so the bound is a tenth: far above the bug's 20 all the same.
	[ "$fresh" -gt 100 ]
	[ "$after" -gt 200 ]
	[ "$after" -ge $((fresh / 10)) ]
}

@test "the halves of a finished actor expire, whatever the order the halves came in" {
	seed-infer --bind "ipc://$D/infer" --policy random --idle-expiry 1 --stats-interval 0.5 2>"$D/infer.err" &
	INFER_PID=$!
	PIDS="$INFER_PID"
	# Actor 1's halves come after actor 0's, and actor 0 keeps asking.
	start A0 seed-actor --env catch --envs 4 --actor 0 --connect "ipc://$D/infer" --quiet
	sleep 0.3
	seed-actor --env catch --envs 4 --actor 1 --steps 20 --connect "ipc://$D/infer" --quiet
	seed-actor --env catch --envs 4 --actor 2 --steps 20 --connect "ipc://$D/infer" --quiet
	sleep 2.5
	kill -TERM "$A0_PID" "$INFER_PID"
	wait "$INFER_PID"
	grep halves "$D/infer.err" | tail -3
	# Before the end: only actor 0's two halves are left (the last counters
	# line before the final one; "time:" lines stand between them).
	grep -v ' time: ' "$D/infer.err" | tail -2 | head -1 | grep -q ', 2 halves'
}

@test "environments are known by (run, actor, env): two actors' unrolls share env values, never keys" {
	start INFER seed-infer --bind "ipc://$D/infer" --policy random --unrolls "$D/u.msgpack" \
		--unroll-length 3 --stats-interval 0 --quiet
	seed-actor --env catch --envs 2 --actor 0 --steps 7 --connect "ipc://$D/infer" --quiet
	seed-actor --env catch --envs 2 --actor 1 --steps 7 --connect "ipc://$D/infer" --quiet
	kill -TERM "$INFER_PID"
	wait "$INFER_PID"
	run sh -c "seed-cat '$D/u.msgpack' | jq -s -c '[.[] | select(.type == \"unroll\") | {actor, env: .env.data[]}] | [(map(.env) | unique), (unique | length)]'"
	assert_output '[[0,1],4]'
	# The manuals say so.
	grep -q 'known by (run, actor, env)' "$SEED_SRCDIR/man/seed-frames.7"
	! grep -q 'global' "$SEED_SRCDIR/man/seed-frames.7"
}
