#!/usr/bin/env bats
# Neuroevolution (algorithms es, ga, rs): the presets resolve with their
# "evolution" settings and bad ones are refused by name; each algorithm
# trains CartPole through seed-train; the programs started by hand train
# too, their checkpoint plays in seed-eval and seed-infer --model, and a
# run resumes where it stopped; a round whose member never reports ends at
# the generation deadline; seed-train's run goes on through a killed
# seed-infer (the round is republished) and a killed seed-learn (resumed).

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	mkdir "$D/tmp"
	export TMPDIR="$D/tmp"
	PIDS=""
}

teardown() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	rm -rf "$D"
}

@test "the evolution presets resolve with their algorithm and every evolution setting written out" {
	local p n=0 a
	for p in "$SEED_SRCDIR"/examples/presets/es-*.json "$SEED_SRCDIR"/examples/presets/ga-*.json \
		"$SEED_SRCDIR"/examples/presets/rs-*.json "$SEED_SRCDIR"/examples/presets/snes-*.json \
		"$SEED_SRCDIR"/examples/presets/ars-*.json; do
		run seed-learn --config "$p" --print-config
		assert_success
		a=$(basename "$p" | cut -d- -f1)
		[ "$(jq -r .algorithm <<<"$output")" = "$a" ]
		[ "$(jq '.evolution | keys | length' <<<"$output")" -eq 21 ]
		[ "$(jq '.evolution | has("episodes_per_member")' <<<"$output")" = true ]
		n=$((n + 1))
	done
	[ "$n" -eq 23 ]
	for g in asterix breakout freeway seaquest space-invaders; do
		[ -f "$SEED_SRCDIR/examples/presets/es-minatar-$g.json" ]
		[ -f "$SEED_SRCDIR/examples/presets/ga-minatar-$g.json" ]
		[ -f "$SEED_SRCDIR/examples/presets/snes-minatar-$g.json" ]
	done
	for t in halfcheetah hopper humanoid; do
		[ -f "$SEED_SRCDIR/examples/presets/ars-$t.json" ]
	done
	# SNES on MinAtar: NeuroEvoBench's tuned first std and temperature
	# where it tuned them (breakout, asterix), 0.12 and 0 elsewhere; every
	# centre starts at zero.
	run seed-learn --config snes-minatar-breakout --print-config
	assert_success
	[ "$(jq -c '.evolution | [.sigma, .temperature, .centre_init]' <<<"$output")" = '[0.119,30,"zero"]' ]
	run seed-learn --config snes-minatar-asterix --print-config
	[ "$(jq -c '.evolution | [.sigma, .temperature, .centre_init]' <<<"$output")" = '[0.127,0,"zero"]' ]
	for g in freeway seaquest space-invaders; do
		run seed-learn --config "snes-minatar-$g" --print-config
		[ "$(jq -c '.evolution | [.sigma, .temperature, .centre_init]' <<<"$output")" = '[0.12,0,"zero"]' ]
	done
	# Left out: rank utilities and the model's initialisation.
	run seed-learn --config es-cartpole --get evolution.centre_init
	[ "$output" = model ]
	run seed-learn --config snes-minatar-breakout --set evolution.temperature=null --get evolution.temperature
	[ "$output" = 0.0 ]
	# The defaults of seed-config(5) for what a preset leaves out.
	run seed-learn --config rs-cartpole --get evolution.truncation
	[ "$output" = 20 ]
	run seed-learn --config ga-cartpole --set evolution.sigma=null --get evolution.sigma
	[ "$output" = 0.002 ]
	# A V-trace preset records no evolution object.
	run seed-learn --config cartpole --print-config
	[ "$(jq .evolution <<<"$output")" = null ]
}

@test "bad evolution settings are refused with the key that is wrong" {
	run seed-learn --config es-cartpole --set evolution.population=63 --print-config
	assert_failure
	assert_output --partial "'evolution.population' = 63 must be even for algorithm es"
	run seed-learn --config ga-cartpole --set evolution.truncation=500 --print-config
	assert_failure
	assert_output --partial "'evolution.truncation' = 500 is more than 'evolution.population' = 128"
	run seed-learn --config es-cartpole --set evolution.sigmaa=1 --print-config
	assert_failure
	assert_output --partial "unknown key 'evolution.sigmaa'"
	run seed-learn --config es-cartpole --set evolution.noise_size=0 --print-config
	assert_failure
	assert_output --partial "'evolution.noise_size' = 0 is out of range"
	run seed-learn --config snes-minatar-breakout --set evolution.temperature=-3 --print-config
	assert_failure
	assert_output --partial "'evolution.temperature' = -3 is out of range"
	run seed-learn --config es-cartpole --set evolution.temperature=30 --print-config
	assert_failure
	assert_output --partial "'evolution.temperature' = 30 is snes's"
	run seed-learn --config es-cartpole --set evolution.centre_init=ones --print-config
	assert_failure
	assert_output --partial "'evolution.centre_init' = 'ones' (known: model, zero)"
	run seed-learn --config ga-cartpole --set evolution.centre_init=zero --print-config
	assert_failure
	assert_output --partial "'evolution.centre_init' = 'zero' is for es, snes and ars; algorithm ga has no centre"
	run seed-learn --config es-cartpole --set algorithm=cma --print-config
	assert_failure
	assert_output --partial "\"es\", \"ga\", \"rs\", \"snes\" or \"ars\""
	# A model with a core: the population server keeps no state.
	run seed-learn --config es-cartpole --set 'model.core={"type": "lstm", "units": 8}' \
		--unrolls "ipc://$D/u" --params "ipc://$D/p"
	assert_failure
	assert_output --partial "algorithm es takes a model without a core"
}

# train ALGORITHM: seed-train ALGORITHM-cartpole with a fixed seed; its JSON
# line in $output.
train() {
	run timeout 300 seed-train "$1-cartpole" --seed 1 --dir "$D/run" --quiet "${@:2}"
	echo "$output"
	assert_success
	[ "$(jq -r .config.algorithm "$D/run/checkpoint.json")" = "$1" ]
	# A metrics line per round, numbered from 1, with the round's figures.
	[ "$(jq -s '[.[].generation] == [range(1; length + 1)]' "$D/run/metrics.jsonl")" = true ]
	[ "$(jq -s -r 'last | .algorithm' "$D/run/metrics.jsonl")" = "$1" ]
	[ "$(jq -s 'last | (.best | type) == "number" and (.median | type) == "number" and .frames > 0
		and .frames_per_s > 0 and .evaluated > 0' "$D/run/metrics.jsonl")" = true ]
	# Every process it started is gone.
	local json=$output
	run pgrep -f "ipc://$D/tmp"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
	output=$json
}

@test "seed-train es-cartpole evolves a centre that evaluates to at least 475" {
	train es
	[ "$(jq '.eval.return.mean >= 475' <<<"$output")" = true ]
	[ "$(jq -s 'last | .mean >= 475' "$D/run/metrics.jsonl")" = true ]
}

@test "seed-train ga-cartpole evolves an elite that evaluates to at least 475" {
	train ga
	[ "$(jq '.eval.return.mean >= 475' <<<"$output")" = true ]
	# Elite re-evaluations are rounds of their own (phase 1).
	[ "$(jq -s '[.[] | select(.phase == 1)] | length > 0' "$D/run/metrics.jsonl")" = true ]
	[ "$(jq -s 'last | .elite == 500' "$D/run/metrics.jsonl")" = true ]
	# The checkpoint keeps the elite's genome.
	[ "$(jq -r '.config.evolution.noise_size' "$D/run/checkpoint.json")" -eq 1048576 ]
}

# With common episodes every member of a round plays the same episodes:
# members of the same weights (ES with a sigma below float32's resolution
# of the centre) then score the same, to the step, on MinAtar Asterix
# (random spawns; sticky actions off, since the last action of the
# previous episode would carry into the first step).  Without, they differ.
@test "evolution.common_episodes: members of the same weights score the same; without, they do not" {
	local ce
	for ce in true false; do
		run timeout 120 seed-train es-minatar-asterix --seed 3 --dir "$D/run-$ce" --quiet \
			--set evolution.population=8 --set evolution.episodes_per_member=2 \
			--set evolution.sigma=1e-9 --set evolution.reward_shift=-0.001 \
			--set evolution.common_episodes=$ce --set 'env_options={"sticky_action_prob": 0}' \
			--set actors=1 --set envs_per_actor=6 --set total_frames=20000 --set eval_episodes=1 \
			--set target_return=null --set 'infer={"max_batch": 16, "timeout_us": 500}'
		assert_success
	done
	# fitness = return + 0.001 x length: every round's members equal with
	# common episodes, rounds unlike each other (a new seed each round).
	jq -c '[.generation, .best, .mean, .median]' "$D/run-true/metrics.jsonl"
	[ "$(jq -s 'length >= 3' "$D/run-true/metrics.jsonl")" = true ]
	[ "$(jq -s '[.[] | select(.best != .mean or .median != .mean)] | length' "$D/run-true/metrics.jsonl")" -eq 0 ]
	[ "$(jq -s '[.[].mean] | unique | length > 1' "$D/run-true/metrics.jsonl")" = true ]
	[ "$(jq -s '[.[] | select(.best > .mean)] | length > 0' "$D/run-false/metrics.jsonl")" = true ]
}

@test "seed-train rs-cartpole runs random search to its frame budget and evaluates the elite" {
	train rs --frames 300000 --set target_return=null
	[ "$(jq '.eval.episodes == 100 and .eval.return.mean > 9' <<<"$output")" = true ]
	[ "$(jq '.frames >= 300000' "$D/run/checkpoint.json")" = true ]
}

# A round of ES with 4 members of which member 3 never reports: episode
# frames of members 0..2 of generation 0 pushed at the learner, then a bad
# message.
@test "a round whose member never reports ends at the generation deadline" {
	local push="$SEED_BUILDDIR/tests/cli/frame_push"
	local t='"dtype":"%s","shape":[3],"data":[%s]'
	printf '{"type":"episode","version":1,"run":0,"actor":0,"env":{'"$t"'},"return":{'"$t"'},"length":{'"$t"'},"truncated":{'"$t"'},"generation":{'"$t"'},"member":{'"$t"'}}\n' \
		i32 0,1,2 f32 5,6,7 i32 10,10,10 u8 0,0,0 i64 0,0,0 i32 0,1,2 |
		seed-cat --encode >"$D/ep.msgpack"
	# And a message that is no frame: the learner counts it and goes on.
	printf '\001' >>"$D/ep.msgpack"
	"$push" "ipc://$D/ep" "$D/ep.msgpack" &
	PIDS="$!"
	# Without --foreground timeout signals the learner twice (itself, then
	# its process group): a repeated SIGTERM is the same request (cli.c),
	# and the learner still stops cleanly.
	run timeout --preserve-status -s TERM 4 seed-learn --config es-cartpole --set evolution.population=4 \
		--set evolution.generation_deadline=1.5 --unrolls "ipc://$D/ep" --params "ipc://$D/p" \
		--dir "$D/run"
	echo "$output"
	assert_success
	# Round 0 ended at the deadline with members 0..2 heard; ES leaves out
	# both of member 3's pair, so 2 were evaluated; round 1 heard nothing
	# and ended at its deadline too.
	assert_output --partial "dropped bad frame #1"
	run jq -c '[.generation, .deadlines, .evaluated, .frames, (.round_seconds >= 1.4), .bad_frames]' \
		"$D/run/metrics.jsonl"
	echo "$output"
	[ "${lines[0]}" = "[1,1,2,30,true,1]" ]
	[ "${lines[1]}" = "[2,2,0,30,true,1]" ]
}

# start_population N: seed-infer (population mode when it gets a generation)
# and one seed-actor of N CartPole envs in the background.
start_population() {
	seed-infer --bind "ipc://$D/infer" --model "ipc://$D/params" --unrolls "ipc://$D/unrolls" \
		--stats-interval 0 --quiet &
	PIDS="$PIDS $!"
	seed-actor --env cartpole --envs "$1" --connect "ipc://$D/infer" --quiet &
	PIDS="$PIDS $!"
}

@test "by hand: seed-learn, seed-infer and seed-actor evolve; the checkpoint plays; a run resumes" {
	start_population 32
	run timeout 120 seed-learn --config ga-cartpole --set target_return=null --frames 60000 \
		--unrolls "ipc://$D/unrolls" --params "ipc://$D/params" --dir "$D/run" --quiet
	echo "$output"
	assert_success
	local rounds frames
	rounds=$(jq -s 'last | .generation' "$D/run/metrics.jsonl")
	frames=$(jq .frames "$D/run/checkpoint.json")
	[ "$frames" -ge 60000 ]
	[ "$(jq .step "$D/run/checkpoint.json")" -eq "$rounds" ]
	# The elite plays in seed-eval as any checkpoint.
	run seed-eval --checkpoint "$D/run" --episodes 5 --envs 5 --greedy --seed 2
	echo "$output"
	assert_success
	[ "$(jq '.episodes == 5 and .return.mean >= 9' <<<"$output")" = true ]
	# Resume: the rounds and frames go on from the checkpoint.
	run timeout 120 seed-learn --resume "$D/run" --frames 120000 --unrolls "ipc://$D/unrolls" \
		--params "ipc://$D/params" --quiet
	echo "$output"
	assert_success
	[ "$(jq -s --argjson r "$rounds" '[.[].generation] | .[length - 1] > $r' "$D/run/metrics.jsonl")" = true ]
	[ "$(jq '.frames >= 120000' "$D/run/checkpoint.json")" = true ]
	[ "$(jq .step "$D/run/checkpoint.json")" -gt "$rounds" ]
	# TensorBoard reads the rounds' lines of both processes as one run.
	if python3 -c 'import tensorboard' 2>/dev/null; then
		run python3 "$SEED_SRCDIR/tests/golden/read_tfevents.py" "$D/run"
		echo "$output"
		assert_success
	fi
	# seed-infer --model serves the checkpoint to a seed-actor.
	seed-infer --bind "ipc://$D/serve" --model "$D/run" --greedy --stats-interval 0 --quiet &
	PIDS="$PIDS $!"
	run timeout 60 seed-actor --env cartpole --envs 4 --steps 200 --connect "ipc://$D/serve" --quiet
	echo "$output"
	assert_success
}

# pid_of NAME: the pid of seed-train's program NAME in this test (the program
# itself, not a libtool wrapper script), or nothing.
pid_of() {
	pgrep -f -- "^[^ ]*/?$1 .*ipc://$D/tmp/" | head -1
}

# wait_lines N: until the run's metrics file has N lines (20 s at most).
wait_lines() {
	local i
	for i in $(seq 200); do
		[ "$(wc -l <"$D/run/metrics.jsonl" 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

@test "seed-train evolves on through a killed seed-infer and a killed seed-learn" {
	seed-train ga-cartpole --seed 4 --dir "$D/run" --set target_return=null --frames 1500000 \
		--set checkpoint_interval=0.2 --no-eval >"$D/out" 2>"$D/err" &
	PIDS=$!
	wait_lines 3
	# seed-infer dies: the restarted one gets the round republished.
	kill -KILL "$(pid_of seed-infer)"
	local n
	n=$(wc -l <"$D/run/metrics.jsonl")
	wait_lines $((n + 3))
	# seed-learn dies: the restarted one resumes from the checkpoint.
	kill -KILL "$(pid_of seed-learn)"
	st=0
	wait "$PIDS" || st=$?
	cat "$D/err"
	[ "$st" -eq 0 ]
	jq -c .restarts "$D/out"
	[ "$(jq '.restarts.infer >= 1 and .restarts.learn >= 1' "$D/out")" = true ]
	grep -q '^seed-learn: .*; resumed$' "$D/err"
	[ "$(jq '.frames >= 1500000' "$D/run/checkpoint.json")" = true ]
	# The rounds go on past the kills.
	[ "$(jq .step "$D/run/checkpoint.json")" -gt $((n + 3)) ]
}
