#!/usr/bin/env bats
# Where the time goes: the programs' time lines and metrics fields (every
# fraction in [0, 1], their sum at most 1), seed-learn --bottleneck on
# hand-made metrics files (the sentences worked from the rules of
# seed_timing(3)), and seed-train's bottleneck line and JSON field.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	# seed-train finds the presets of this tree, built in it or beside it.
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	D=$(mktemp -d)
	PIDS=""
}

teardown() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	rm -rf "$D"
}

# sane FILE FIELD...: every line of FILE with an interval has each
# frac_FIELD, each in [0, 1], and all its fractions sum to 1 at most.
sane() {
	local file=$1 fields
	shift
	fields=$(printf '"frac_%s",' "$@")
	fields=${fields%,}
	jq -se "[.[] | select(.interval != null)] | length > 0 and all(.[];
		.interval > 0 and ([$fields] - keys == []) and
		([to_entries[] | select(.key | startswith(\"frac_\")) | .value] |
			all(. >= 0 and . <= 1) and add <= 1.000001))" "$file"
}

@test "seed-actor and seed-infer say where their time went, in their lines and their metrics" {
	seed-infer --bind "ipc://$D/si" --policy random --unrolls "$D/unrolls.frames" --unroll-length 8 \
		--stats-interval 0.5 --metrics "$D/infer.jsonl" --metrics-interval 0.5 2>"$D/infer.err" &
	INFER=$!
	PIDS=$INFER
	seed-actor --env cartpole --envs 16 --connect "ipc://$D/si" --stats-interval 0.5 \
		--metrics "$D/actor.jsonl" --metrics-interval 0.5 2>"$D/actor.err" &
	ACTOR=$!
	PIDS="$PIDS $ACTOR"
	wait_for_handler "$ACTOR" 15
	sleep 1.8
	kill -TERM "$ACTOR"
	wait "$ACTOR"
	kill -TERM "$INFER"
	wait "$INFER"
	cat "$D/actor.err" "$D/infer.err"
	pc='[0-9]+%'
	# A time line after every statistics line, and one over the whole run.
	[ "$(grep -cE "^seed-actor: time: wait $pc, take $pc, step $pc, encode $pc, send $pc \(of [0-9.]+ s\)\$" \
		"$D/actor.err")" -ge 3 ]
	grep -qE "^seed-actor: done: time: wait $pc, take $pc, step $pc, encode $pc, send $pc" "$D/actor.err"
	[ "$(grep -cE "^seed-infer: time: wait $pc, take $pc, forward $pc, encode $pc, send $pc, blocked $pc \(of [0-9.]+ s\)\$" \
		"$D/infer.err")" -ge 3 ]
	grep -qE "^seed-infer: done: time: wait $pc" "$D/infer.err"
	# The percentages of a line add up to 100 at most (each rounded).
	grep -h ' time: ' "$D/actor.err" "$D/infer.err" | sed 's/ (of .*//' |
		awk -F'[ %]+' '{ s = 0; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; if (s > 103) exit 1 }'
	# Metrics: a line every half second and one at exit, with the phases.
	[ "$(wc -l <"$D/actor.jsonl")" -ge 3 ]
	[ "$(wc -l <"$D/infer.jsonl")" -ge 3 ]
	sane "$D/actor.jsonl" wait take step encode send
	sane "$D/infer.jsonl" wait take forward encode send blocked
	jq -se 'all(.[]; .env_steps >= 0 and .steps_per_s >= 0 and .time > 0) and (last | .env_steps > 0)' \
		"$D/actor.jsonl"
	jq -se 'last | .steps > 0 and .unrolls > 0 and .batches > 0' "$D/infer.jsonl"
	# The actor waits for every answer: its wait is not zero.
	jq -se 'last | .frac_wait > 0 and .frac_step > 0' "$D/actor.jsonl"
}

@test "seed-actor --metrics needs server mode; a metrics file that cannot be opened is an error" {
	run seed-actor --env cartpole --actions - --out - --metrics "$D/m.jsonl" </dev/null
	[ "$status" -eq 2 ]
	assert_output --partial "--metrics goes with --connect"
	run seed-actor --env cartpole --connect "ipc://$D/si" --metrics "$D/no/such/dir/m.jsonl"
	[ "$status" -eq 1 ]
	assert_output --partial "$D/no/such/dir/m.jsonl"
	run seed-infer --bind "ipc://$D/si" --policy random --metrics "$D/no/such/dir/m.jsonl"
	[ "$status" -eq 1 ]
	assert_output --partial "$D/no/such/dir/m.jsonl"
}

# The files of a run directory whose learner waited 60% of the time while
# the actors were busy: actor 0 waited 0.1 of 4 s and stepped 0.8, actor 1
# waited 0.1 of 6 s and stepped 0.8 (together: wait 0.1, step 0.8); the
# learner's two lines 0.5 of 5 s and 0.7 of 5 s (0.6), beside a line
# without an interval (skipped).
hand_made_run() {
	mkdir -p "$D/run"
	echo '{"interval":4,"frac_wait":0.1,"frac_step":0.8,"frac_send":0.05}' >"$D/run/actor-0.metrics.jsonl"
	echo '{"interval":6,"frac_wait":0.1,"frac_step":0.8,"frac_send":0.05}' >"$D/run/actor-1.metrics.jsonl"
	echo '{"interval":10,"frac_wait":0.7,"frac_forward":0.2,"frac_blocked":0}' >"$D/run/infer.metrics.jsonl"
	{
		echo '{"time":1,"frames":100}'
		echo '{"interval":5,"frac_wait":0.5,"frac_backward":0.3}'
		echo '{"interval":5,"frac_wait":0.7,"frac_backward":0.1}'
	} >"$D/run/metrics.jsonl"
}

@test "seed-learn --bottleneck judges a run directory's metrics files" {
	hand_made_run
	run --separate-stderr seed-learn --bottleneck "$D/run"
	assert_success
	[ "$output" = "actors	the learner waited 60% of the time for unrolls while the actors were busy 90% of theirs (step 80%): the actors are the bottleneck: more actors or environments (--actors, envs_per_actor) would help" ]
	# The learner busy 85% of its time instead: the learner.
	echo '{"interval":30,"frac_wait":0.0,"frac_backward":0.8}' >>"$D/run/metrics.jsonl"
	run --separate-stderr seed-learn --bottleneck "$D/run"
	assert_success
	# wait (5*0.5 + 5*0.7 + 0) / 40 = 0.15; backward (1.5 + 0.5 + 24) / 40 = 0.65
	[ "$output" = "learner	the learner was busy 85% of the time (backward 65%): the learner is the bottleneck: a larger batch_size (fewer, larger updates), a smaller model or a core of its own for seed-learn would help; more actors would not" ]
	# Without the server's figures: unknown, and why.
	rm "$D/run/infer.metrics.jsonl"
	run --separate-stderr seed-learn --bottleneck "$D/run"
	assert_success
	[ "$output" = "unknown	no timing figures from seed-infer: the bottleneck cannot be told" ]
	run --separate-stderr seed-learn --bottleneck "$D/nowhere"
	assert_success
	[ "$output" = "unknown	no timing figures from seed-actor, seed-infer, seed-learn: the bottleneck cannot be told" ]
}

@test "seed-learn --bottleneck: a bad metrics file is an error naming it, other options a usage error" {
	hand_made_run
	echo '{"interval":2,"frac_step":1.5}' >>"$D/run/actor-1.metrics.jsonl"
	run --separate-stderr seed-learn --bottleneck "$D/run"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"actor-1.metrics.jsonl:2: frac_step is not a number in [0, 1]"* ]]
	echo 'oops' >"$D/run/actor-1.metrics.jsonl"
	run --separate-stderr seed-learn --bottleneck "$D/run"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"actor-1.metrics.jsonl:1: not a JSON object"* ]]
	run --separate-stderr seed-learn --bottleneck "$D/run" --config cartpole
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--bottleneck DIR reads a finished run"* ]]
}

@test "seed-train names the bottleneck, from the programs' metrics, on stderr and in its JSON line" {
	run --separate-stderr seed-train cartpole --dir "$D/run" --frames 400000 --set target_return=null --no-eval
	echo "$stderr"
	assert_success
	name=$(echo "$output" | jq -r .bottleneck)
	[[ "$name" =~ ^(learner|inference|actors|round-trip|none)$ ]]
	# The line on stderr is seed-learn --bottleneck's sentence.
	[ "$(seed-learn --bottleneck "$D/run" | cut -f1)" = "$name" ]
	sentence=$(seed-learn --bottleneck "$D/run" | cut -f2)
	[[ "$stderr" == *"seed-train: bottleneck: $sentence"* ]]
	# Every program's metrics carry its split.
	sane "$D/run/metrics.jsonl" wait take forward backward optim publish checkpoint
	sane "$D/run/infer.metrics.jsonl" wait take forward encode send blocked
	sane "$D/run/actor-0.metrics.jsonl" wait take step encode send
	sane "$D/run/actor-1.metrics.jsonl" wait take step encode send
	# The learner trained: its updates took time.
	jq -se '[.[] | .frac_forward + .frac_backward] | add > 0' "$D/run/metrics.jsonl"
	[[ "$stderr" == *"seed-learn: time: wait "*"% (of "* ]]
	# --quiet keeps the field, drops the line.
	run --separate-stderr seed-train cartpole --dir "$D/q" --frames 100000 --set target_return=null --no-eval \
		--quiet
	assert_success
	[[ "$(echo "$output" | jq -r .bottleneck)" =~ ^(learner|inference|actors|round-trip|none)$ ]]
	[[ "$stderr" != *bottleneck* ]]
}
