#!/usr/bin/env bats
# seed-infer's population mode (neuroevolution): generation frames written
# by hand (seed-cat --encode), published on --model's channel, played for
# seed-actor's CartPole or for step frames written by hand.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	PUSH="$SEED_BUILDDIR/tests/cli/frame_push"
}

teardown() {
	[ -z "${INFER:-}" ] || kill "$INFER" 2>/dev/null || true
	[ -z "${CAT:-}" ] || kill "$CAT" 2>/dev/null || true
	rm -rf "$D"
}

# gen N KEYS EPISODES [CAP] [ALGO]: the JSON of a random-search generation N
# of members initialised from KEYS (comma-separated), EPISODES wanted of each.
gen() {
	jq -nc --argjson g "$1" --argjson keys "[$2]" --argjson eps "[$3]" --argjson cap "${4:-0}" \
		--arg model '{"torso":[{"type":"linear","out":8},{"type":"tanh"}]}' \
		'{type: "generation", version: 1, run: 0, generation: $g, phase: 0, algorithm: "rs",
		  noise_seed: 1, noise_size: 1000, sigma: 0, rank: 0,
		  genome: {dtype: "i64", shape: [($keys | length), 1], data: $keys},
		  episodes: {dtype: "i32", shape: [($eps | length)], data: $eps},
		  model: $model, episode_cap: $cap}'
}

# publish JSON: encode one frame and publish it on ipc://$D/p (frame_push
# waits for seed-infer's subscription).
publish() {
	echo "$1" | seed-cat --encode >"$D/pub.frames"
	"$PUSH" --pub "ipc://$D/p" "$D/pub.frames" 2>/dev/null
}

# serve ARGS...: seed-infer in population mode's setup, stderr to $D/err,
# metrics every 0.1 s to $D/m.jsonl; episode frames to $D/eps.jsonl.
serve() {
	seed-infer --bind "ipc://$D/s" --model "ipc://$D/p" --unrolls "ipc://$D/u" --stats-interval 0 \
		--metrics "$D/m.jsonl" --metrics-interval 0.1 "$@" 2>"$D/err" &
	INFER=$!
	wait_for_handler "$INFER" 15
	seed-cat --connect "ipc://$D/u" --out "$D/eps.jsonl" 2>"$D/cat.err" &
	CAT=$!
	wait_for_handler "$CAT" 15
}

stop() {
	kill -TERM "$INFER"
	wait "$INFER"
	INFER=
	sleep 0.2
	kill -TERM "$CAT"
	wait "$CAT" || true
	CAT=
}

# until JQ holds for the last metrics line (10 s at most)
until_metrics() {
	for _ in $(seq 100); do
		tail -n 1 "$D/m.jsonl" 2>/dev/null | jq -e "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "never: $1" >&2
	tail -n 2 "$D/m.jsonl" >&2
	return 1
}

# step SEQ TE0 TE1 LEN0 LEN1: a step frame of actor 0's half of 2 CartPole-
# like environments (the flags and episode counters given; return = length).
step() {
	jq -nc --argjson seq "$1" --argjson te "[$2,$3]" --argjson len "[$4,$5]" \
		'{type: "step", version: 1, run: 5, actor: 0, seq: $seq, env0: 0, num_actions: 2,
		  obs: {dtype: "f32", shape: [2, 4], data: [0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, -0.8]},
		  reward: {dtype: "f32", shape: [2], data: [1, 1]},
		  terminated: {dtype: "u8", shape: [2], data: $te}, truncated: {dtype: "u8", shape: [2], data: [0, 0]},
		  ep_return: {dtype: "f32", shape: [2], data: $len}, ep_length: {dtype: "i32", shape: [2], data: $len}}'
}

# ask JSON: send one step frame, print the answer's type, policy version and
# restart requests (null: none)
ask() {
	echo "$1" | seed-cat --encode >"$D/step.frames"
	zreq "ipc://$D/s" "$D/step.frames" | seed-cat | jq -c '[.type, .policy_version, .reset.data]'
}

@test "a generation for seed-actor on CartPole: every episode frame names it, every member gets its episodes" {
	serve
	publish "$(gen 3 11,12,13,14 2,2,2,2)"
	until_metrics '.generation != null'
	# 600 steps: every CartPole episode ends within 500.
	run --separate-stderr seed-actor --env cartpole --envs 8 --connect "ipc://$D/s" --steps 600
	[ "$status" -eq 0 ]
	echo "$stderr"
	episodes=$(echo "$stderr" | sed -n 's/.* \([0-9]*\) episodes, mean return.*/\1/p')
	held=$(echo "$stderr" | sed -n 's/.*, \([0-9]*\) env steps held by the server$/\1/p')
	# 8 environments, 4 members x 2 episodes: each environment plays one
	# episode, then the server holds it (no member wants more) for the
	# rest of the 600 steps.
	[ "$episodes" -eq 8 ] && [ "$held" -gt 8 ]
	until_metrics '.episodes >= 8'
	stop
	cat "$D/err"
	# No unrolls: episode frames only, each with its generation and member.
	[ "$(jq -sc 'map(.type) | unique' "$D/eps.jsonl")" = '["episode"]' ]
	[ "$(jq -sc '[.[] | .generation.data[]] | unique' "$D/eps.jsonl")" = '[3]' ]
	# Every episode the actor finished, once, each member's 2 exactly.
	reported=$(jq -s '[.[] | .member.data[]] | length' "$D/eps.jsonl")
	echo "the actor finished $episodes episodes, the server reported $reported"
	[ "$reported" -eq 8 ]
	[ "$(jq -sc '[.[] | .member.data[]] | group_by(.) | map(length)' "$D/eps.jsonl")" = '[2,2,2,2]' ]
	# CartPole pays 1 a step: each return is its length, none truncated.
	[ "$(jq -s '[.[] | [.return.data, .length.data] | transpose[] | select(.[0] != .[1])] | length' "$D/eps.jsonl")" -eq 0 ]
	[ "$(jq -s '[.[] | .truncated.data[]] | add' "$D/eps.jsonl")" -eq 0 ]
	# The statistics say which generation played.
	grep -q "seed-infer: done: generation 3 (4 members), [0-9]* episodes/s, 1 generations played, 0 repeats, 0 bad generation frames" "$D/err"
	[ "$(tail -n 1 "$D/m.jsonl" | jq -c '[.generation, .members, .generations, .bad_generations]')" = '[3,4,1,0]' ]
	# The server counts every answer that holds a row: the actor's held
	# steps, plus for each environment the first (the actor restarts it
	# then).
	[ "$(tail -n 1 "$D/m.jsonl" | jq .held)" -eq $((held + 8)) ]
}

@test "a new generation mid-episode: an episode under way is reported as far as it went and restarted" {
	serve
	publish "$(gen 3 11,12 1,1)"
	until_metrics '.generation != null'
	# Both environments start (the actor's first step): members 0 and 1.
	[ "$(ask "$(step 0 0 0 0 0)")" = '["action",3,null]' ]
	publish "$(gen 4 21,22 1,1)"
	until_metrics '.generation == 4'
	# Environment 0 ends (5 steps): generation 3's member 0, whole; it
	# starts generation 4's member 0.  Environment 1 is 5 steps into
	# generation 3's episode: reported so far, truncated, and the answer
	# asks the actor to restart it.
	[ "$(ask "$(step 1 1 0 5 5)")" = '["action",4,[0,1]]' ]
	# Restarted (counters 0): generation 4's member 1; nothing asked.
	[ "$(ask "$(step 2 0 0 1 0)")" = '["action",4,null]' ]
	# Both end: generation 4's; each member has its episode, so both
	# environments are held.
	[ "$(ask "$(step 3 1 1 2 1)")" = '["action",4,[2,2]]' ]
	# Held (counters 0): held again.  An environment stepped anyway
	# (length 1: its actor ignored the hold) is asked to restart.
	[ "$(ask "$(step 4 0 0 0 0)")" = '["action",4,[2,2]]' ]
	[ "$(ask "$(step 5 0 0 0 1)")" = '["action",4,[2,1]]' ]
	stop
	cat "$D/eps.jsonl"
	[ "$(jq -sc '[.[] | [.env.data, .generation.data, .member.data, .length.data, .truncated.data] | transpose[]]' "$D/eps.jsonl")" = \
		'[[0,3,0,5,0],[1,3,1,5,1],[0,4,0,2,0],[1,4,1,1,0]]' ]
	grep -q "done: generation 4 (2 members), .* 2 generations played, 0 repeats, 0 bad generation frames, 2 restarts, " "$D/err"
	[ "$(tail -n 1 "$D/m.jsonl" | jq -c '[.restarts, .held]')" = '[2,5]' ]
}

# ask_seeds JSON: as ask, with the answer's reset seeds as strings (jq's
# numbers are doubles; the seeds take 63 bits): [type, reset, reset_seed]
ask_seeds() {
	echo "$1" | seed-cat --encode >"$D/step.frames"
	zreq "ipc://$D/s" "$D/step.frames" | seed-cat | sed -E 's/([0-9]{10,})/"\1"/g' |
		jq -c '[.type, .reset.data, .reset_seed.data]'
}

@test "common episodes: every member's k-th episode is restarted from one seed, the same for each member" {
	serve
	# Two members, two episodes each, episode seed 77: each member's
	# episode k from seed_evo_episode_seed(77, k), worked in Python from
	# splitmix64's finaliser (tests/unit/evo/test_evo_assign.c).
	publish "$(gen 0 11,12 2,2 | jq -c '. + {episode_seed: 77}')"
	until_metrics '.generation != null'
	local s0='"7086638178683056257"' s1='"9103081651828072020"'
	# Both environments start: members 0 and 1, each its episode 0, both
	# restarted from its seed.
	[ "$(ask_seeds "$(step 0 0 0 0 0)")" = "[\"action\",[1,1],[$s0,$s0]]" ]
	# The restarts' first steps (counters 0): played from here, nothing asked.
	[ "$(ask_seeds "$(step 1 0 0 0 0)")" = '["action",null,null]' ]
	# Both end (3 and 4 steps): members 0 and 1 take their episode 1.
	[ "$(ask_seeds "$(step 2 1 1 3 4)")" = "[\"action\",[1,1],[$s1,$s1]]" ]
	# An actor that steps instead of restarting (length 1): the member's
	# episode goes on from there, not asked again.
	[ "$(ask_seeds "$(step 3 0 0 0 1)")" = '["action",null,null]' ]
	[ "$(ask_seeds "$(step 4 1 1 2 3)")" = '["action",[2,2],null]' ]
	stop
	[ "$(jq -sc '[.[] | [.env.data, .member.data, .length.data] | transpose[]]' "$D/eps.jsonl")" = \
		'[[0,0,3],[1,1,4],[0,0,2],[1,1,3]]' ]
	# A generation without an episode seed asks for no restart.
	serve
	publish "$(gen 1 11,12 1,1)"
	until_metrics '.generation != null'
	[ "$(ask_seeds "$(step 0 0 0 0 0)")" = '["action",null,null]' ]
	until_metrics '.generation == 1'
	stop
}

@test "the episode cap: an episode is reported at the cap, truncated, and seed-actor restarts it" {
	serve
	publish "$(gen 0 1,2,3 10,10,10 4)"
	until_metrics '.generation != null'
	run --separate-stderr seed-actor --env cartpole --envs 4 --connect "ipc://$D/s" --steps 60 \
		--metrics "$D/actor.jsonl"
	[ "$status" -eq 0 ]
	echo "$stderr"
	until_metrics '.episodes > 0'
	stop
	cat "$D/eps.jsonl"
	# No CartPole episode ends within 4 steps: every report is cut at the
	# cap, 4 steps, truncated, return 4.  The server then asks for a
	# restart, and the actor starts a new episode instead of stepping:
	# 5 of its steps an episode, so room for 48 in 60 steps of 4
	# environments, none ended by the game.  The 30 wanted (3 members x
	# 10) are reported, each restarted; then the environments are held.
	jq -e -s '[.[] | [.length.data, .truncated.data, .return.data] | transpose[] | select(. != [4, 1, 4])] | length == 0' "$D/eps.jsonl"
	[ "$(jq -sc '[.[] | .env.data[]] | unique' "$D/eps.jsonl")" = '[0,1,2,3]' ]
	[ "$(jq -sc '[.[] | .member.data[]] | group_by(.) | map(length)' "$D/eps.jsonl")" = '[10,10,10]' ]
	restarts=$(echo "$stderr" | sed -n 's/.*, \([0-9]*\) restarted by the server, .*/\1/p')
	held=$(echo "$stderr" | sed -n 's/.*, \([0-9]*\) env steps held by the server$/\1/p')
	echo "restarts $restarts, held $held"
	[ "$restarts" -eq 30 ] && [ "$held" -gt 0 ]
	echo "$stderr" | grep -q " 0 episodes, 30 restarted by the server, $held env steps held"
	[ "$(tail -n 1 "$D/actor.jsonl" | jq -c '[.episodes, .restarts, .held]')" = "[0,30,$held]" ]
	# The server also counts each environment's first hold (a restart).
	[ "$(tail -n 1 "$D/m.jsonl" | jq -c '[.restarts, .held]')" = "[30,$((held + 4))]" ]
}

@test "a bad generation frame is warned about and counted; the server keeps serving" {
	serve
	publish "$(gen 3 11,12 1,1)"
	until_metrics '.generation != null'
	[ "$(ask "$(step 0 0 0 0 0)")" = '["action",3,null]' ]
	# A key below -1; then frames the schema refuses, as Python packed them
	# (tests/golden/make_golden.py: seed-cat would not write them): M of the
	# genome and of episodes that disagree, an algorithm nobody knows.
	publish "$(gen 4 11,-2 1,1)"
	until_metrics '.bad_generations == 1'
	"$PUSH" --pub "ipc://$D/p" "$SEED_SRCDIR/tests/fuzz/corpus/frame/bad_generation_M_mismatch" 2>/dev/null
	until_metrics '.bad_generations == 2'
	"$PUSH" --pub "ipc://$D/p" "$SEED_SRCDIR/tests/fuzz/corpus/frame/bad_generation_algorithm" 2>/dev/null
	until_metrics '.bad_generations == 3'
	# Environment 0 ends: both members have their episode, so it is held.
	[ "$(ask "$(step 1 1 0 3 3)")" = '["action",3,[2,0]]' ]
	stop
	cat "$D/err"
	grep -q "seed-infer: dropped a generation frame (1 bad of 2 taken): generation frame: field 'genome': member 1: first key -2, expected >= 0" "$D/err"
	grep -q "generation frame: field 'episodes': shape \[3\], expected \[M\]: dimension 0 is 3, but M = 2 (from 'genome')" "$D/err"
	grep -q "generation frame: field 'algorithm': 'cma', expected one of 'es', 'ga', 'rs'" "$D/err"
	grep -q "done: generation 3 (2 members), .* 1 generations played, 0 repeats, 3 bad generation frames" "$D/err"
	grep -q "dropped a generation frame (3 bad of 4 taken)" "$D/err"
	# The episode that ended is generation 3's.
	[ "$(jq -sc '[.[] | .generation.data[]]' "$D/eps.jsonl")" = '[3]' ]
}
