#!/usr/bin/env bats
# seed-gym: Gymnasium's environments through a bridge actor.  Its step frames
# are byte for byte seed-actor's for the same trajectories (Gymnasium's
# CartPole-v1 against Seed's cartpole, both from one initial state, replaying
# one file of actions); it keeps two halves in flight, resends an unanswered
# one, counts seq per half; seed-train trains a gym:ID environment with it.
# Without python3's gymnasium, numpy, pyzmq or msgpack those tests skip,
# saying which is missing (scripts/install-deps installs them).

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	export TMPDIR=$D
}

teardown() {
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$D"
}

@test "--help and --version go to stdout and exit 0, without any Python package" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	run --separate-stderr seed-gym --help
	assert_success
	assert_line --index 0 --partial "Usage: seed-gym --env ID --envs K"
	assert_output --partial "--connect ENDPOINT"
	[ -z "$stderr" ]
	run --separate-stderr seed-gym -V
	assert_success
	assert_output --regexp '^seed-gym \(seed\) '
}

@test "misuse gets one message and the short usage on stderr, exit 2" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	run --separate-stderr seed-gym --envs 2 --actions - --out -
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "seed-gym: --env is required" ]
	[ "${stderr_lines[1]}" = "usage: seed-gym --env ID --envs K (--connect ENDPOINT | --actions FILE --out FILE) [OPTION]..." ]
	run --separate-stderr seed-gym --env CartPole-v1
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: give either --connect, or --actions and --out" ]
	run --separate-stderr seed-gym --env CartPole-v1 --actions -
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: offline mode needs both --actions and --out" ]
	run --separate-stderr seed-gym --env CartPole-v1 --envs 0 --actions - --out -
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --envs: 0 is out of range [1, 1048576]" ]
	run --separate-stderr seed-gym --env CartPole-v1 --bogus
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: unknown option '--bogus'" ]
	run --separate-stderr seed-gym --env CartPole-v1 --episodes 3 --actions - --out -
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --episodes goes with --connect (server mode)" ]
}

@test "the frames for CartPole-v1 are byte for byte seed-actor's for Seed's cartpole, but for the run id" {
	need_gym
	# Three envs: random actions, always right (short episodes, terminated),
	# and a policy that holds the pole up until v1's limit truncates it at
	# 500 steps (final_obs is sent).  Every episode starts from one state.
	python3 "$SEED_SRCDIR/tests/golden/gym_frames.py" actions 0.01 -0.02 0.03 0.04 1200 >"$D/actions"
	seed-actor --env cartpole --env-options '{"init_state": [0.01, -0.02, 0.03, 0.04]}' --envs 3 \
		--actions "$D/actions" --out "$D/actor.msgpack" --quiet
	seed-gym --env CartPole-v1 --init-state '[0.01, -0.02, 0.03, 0.04]' --envs 3 \
		--actions "$D/actions" --out "$D/gym.msgpack" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/gym_frames.py" compare "$D/actor.msgpack" "$D/gym.msgpack"
	echo "$output"
	assert_success
	assert_output "1201 frames equal"
	# The trajectories did what they were chosen for: two truncations with
	# final_obs (the policy's env at 500 steps), many terminations.
	[ "$(seed-cat "$D/gym.msgpack" | jq -s '[.[] | select(.truncated.data[2] == 1 and .final_obs != null)] | length')" -eq 2 ]
	[ "$(seed-cat "$D/gym.msgpack" | jq -s '[.[] | .terminated.data[1]] | add')" -ge 50 ]
	# No frame skip (a frame is a step): the field is left out, as seed-actor does.
	[ "$(seed-cat "$D/gym.msgpack" | jq -s 'map(select(has("frame_skip"))) | length')" -eq 0 ]
}

@test "--spec, and environments Seed cannot take are errors that say why" {
	need_gym
	run --separate-stderr seed-gym --env gym:CartPole-v1 --spec
	assert_success
	assert_output '{"env": "gym:CartPole-v1", "obs_dtype": "f32", "obs_shape": [4], "num_actions": 2, "max_steps": 500}'
	run --separate-stderr seed-gym --env FrozenLake-v1 --spec
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"seed-gym: --env FrozenLake-v1: its observation space is Discrete: seed-gym needs a Box"* ]]
	run --separate-stderr seed-gym --env NoSuchEnv-v0 --actions /dev/null --out /dev/null
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"seed-gym: --env NoSuchEnv-v0: gymnasium.make failed: "* ]]
	run --separate-stderr seed-gym --env CartPole-v1 --env-options '[1]' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --env-options: not a JSON object" ]
	# An action out of range names the line and the envs.
	run --separate-stderr sh -c "printf '0 2\n' | seed-gym --env CartPole-v1 --envs 2 --actions - --out /dev/null --quiet"
	[ "$status" -eq 1 ]
	[ "$stderr" = "seed-gym: -:1: stepping envs 0..1: action 2 out of range [0, 2)" ]
}

@test "a half left unanswered is resent every --retry-ms while the other half is served" {
	need_gym
	[ "${SEED_VALGRIND:-0}" != 1 ] || skip "timing-dependent; the actor runs too slowly under valgrind"
	# The server answers half 0 (envs 0..1) at once and never half 1
	# (envs 2..3): its request must be resent every 200 ms, same seq.
	# The server is bound first and counts its 3 s from the first request,
	# so the actor's slow start (Python, a sanitizer) never leaves half 0
	# waiting on the server: about 14 resends due, 4 asked (a loaded machine).
	half_server "ipc://$D/half" 3 >"$D/counts" &
	srv=$!
	seed-gym --env CartPole-v1 --envs 4 --connect "ipc://$D/half" --retry-ms 200 --quiet 2>"$D/err" &
	actor=$!
	PIDS="$srv $actor"
	wait $srv
	kill -TERM $actor
	st=0
	wait $actor || st=$?
	cat "$D/counts" "$D/err"
	[ "$st" -eq 0 ]
	read -r _ answered _ ignored <"$D/counts"
	[ "$answered" -gt 20 ]
	[ "$ignored" -ge 4 ]
	grep -q "seed-gym: no answer from ipc://$D/half for [0-9.]* s: resending the request of envs 2..3 (seq 0); 1 resends so far" "$D/err"
	[ "$(grep -c 'no answer from' "$D/err")" -eq 1 ]
	grep -q "^seed-gym: resent [0-9]* unanswered requests$" "$D/err"
}

@test "against seed-infer: seq per half, no gaps, unrolls of both halves; SIGTERM stops it with status 0" {
	need_gym
	seed-infer --bind "ipc://$D/infer" --policy random --unrolls "$D/u.msgpack" --unroll-length 4 \
		--stats-interval 0 2>"$D/infer.err" &
	infer=$!
	PIDS=$infer
	run --separate-stderr seed-gym --env CartPole-v1 --envs 5 --steps 12 --connect "ipc://$D/infer"
	assert_success
	[[ "$stderr" == *"seed-gym: 60 env steps in "* ]]
	wait_for_handler $infer 15
	kill -TERM $infer
	wait $infer
	cat "$D/infer.err"
	grep -q ' 60 steps, .* 0 bad frames, 0 resends, 0 gaps, 2 halves' "$D/infer.err"
	# Half 0 is envs 0..1, half 1 envs 2..4; 12 steps send the step frames
	# 0..11 of each half: two unrolls of 4 steps (5 frames, overlapping by one).
	run sh -c "seed-cat '$D/u.msgpack' | jq -c 'select(.type == \"unroll\") | .env.data'"
	assert_output "$(printf '[0,1]\n[2,3,4]\n[0,1]\n[2,3,4]')"
	# A serving seed-gym stops on SIGTERM with status 0 (seed-train restarts
	# none that do).
	seed-infer --bind "ipc://$D/infer2" --policy random --stats-interval 0 --quiet &
	PIDS="$PIDS $!"
	seed-gym --env CartPole-v1 --envs 4 --connect "ipc://$D/infer2" --quiet &
	actor=$!
	PIDS="$PIDS $actor"
	wait_for_handler $actor 15
	sleep 1
	kill -TERM $actor
	st=0
	wait $actor || st=$?
	[ "$st" -eq 0 ]
}

@test "--episodes: episodes cut at --max-episode-steps (27000 by default) are counted; progress on stderr" {
	need_gym
	seed-infer --bind "ipc://$D/infer" --policy random --stats-interval 0 --quiet &
	PIDS=$!
	# CartPole-v1 cannot fail before its 8th step (tests/cli/seed-eval.bats
	# works it out): a cap of 5 cuts every episode at 5 steps.
	run --separate-stderr seed-gym --env CartPole-v1 --envs 4 --connect "ipc://$D/infer" --episodes 400 \
		--max-episode-steps 5 --stats-interval 0.05 --quiet
	assert_success
	[ "$(jq -c '[.episodes, .length.min, .length.max, .truncated, .max_episode_steps]' <<<"$output")" = \
		"[400,5,5,400,5]" ]
	echo "$stderr"
	[ -n "$stderr" ]
	[ -z "$(printf '%s\n' "$stderr" |
		grep -Ev '^seed-gym: [0-9]+ of 400 episodes done \([0-9]+ cut at the step cap\), [0-9]+ steps, [0-9]+ s$')" ]
	# Gymnasium's own time limit, shorter, truncates first: no cut.
	run --separate-stderr seed-gym --env CartPole-v1 --env-options '{"max_episode_steps": 3}' --envs 2 \
		--connect "ipc://$D/infer" --episodes 6 --max-episode-steps 5 --quiet
	[ "$(jq -c '[.length.min, .length.max, .truncated]' <<<"$output")" = "[3,3,0]" ]
	run --separate-stderr seed-gym --env CartPole-v1 --envs 2 --connect "ipc://$D/infer" --episodes 3 --quiet
	[ "$(jq -c '[.max_episode_steps, .truncated]' <<<"$output")" = "[27000,0]" ]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --backend envpool --envs 2 --connect "ipc://$D/infer" \
		--episodes 3 --max-episode-steps 100
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--max-episode-steps needs --backend gymnasium"* ]]
}

# population_server KEYS EPISODES EXTRA: seed-infer in population mode
# (stderr to $D/infer.err, metrics to $D/m.jsonl), seed-cat writing its
# episode frames to $D/eps.jsonl ($CAT), and a random-search generation 0
# published to it: members initialised from KEYS (comma-separated) of a
# small MLP, EPISODES wanted of each, with the fields of the JSON object
# EXTRA added.
population_server() {
	seed-infer --bind "ipc://$D/s" --model "ipc://$D/p" --unrolls "ipc://$D/u" --stats-interval 0 \
		--metrics "$D/m.jsonl" --metrics-interval 0.1 2>"$D/infer.err" &
	PIDS=$!
	wait_for_handler $PIDS 15
	seed-cat --connect "ipc://$D/u" --out "$D/eps.jsonl" 2>/dev/null &
	CAT=$!
	PIDS="$PIDS $CAT"
	wait_for_handler $CAT 15
	jq -nc --argjson keys "[$1]" --argjson eps "[$2]" --argjson extra "$3" \
		--arg model '{"torso":[{"type":"linear","out":8},{"type":"tanh"}]}' \
		'{type: "generation", version: 1, run: 0, generation: 0, phase: 0, algorithm: "rs",
		  noise_seed: 1, noise_size: 1000, sigma: 0, rank: 0,
		  genome: {dtype: "i64", shape: [($keys | length), 1], data: $keys},
		  episodes: {dtype: "i32", shape: [($eps | length)], data: $eps}, model: $model} + $extra' |
		seed-cat --encode >"$D/gen.frames"
	"$SEED_BUILDDIR/tests/cli/frame_push" --pub "ipc://$D/p" "$D/gen.frames" 2>/dev/null
}

# episodes_done: seed-cat stopped once the last episode frames are in.
episodes_done() {
	sleep 0.5
	kill -TERM "$CAT"
	wait "$CAT" || true
}

@test "a population server's restarts and holds: seed-gym starts a new episode, or holds one, where it is asked to" {
	need_gym
	# A random-search generation of 3 members, 6 episodes each, whose
	# episodes stop at 4 steps (the episode cap): the server asks for a
	# restart after each, and holds the environments once all 18 are
	# played.
	population_server 1,2,3 6,6,6 '{"episode_cap": 4}'
	for _ in $(seq 100); do
		tail -n 1 "$D/m.jsonl" 2>/dev/null | jq -e '.generation == 0' >/dev/null 2>&1 && break
		sleep 0.1
	done
	run --separate-stderr seed-gym --env CartPole-v1 --envs 4 --steps 30 --connect "ipc://$D/s" \
		--metrics "$D/actor.jsonl"
	assert_success
	echo "$stderr"
	episodes_done
	# No CartPole-v1 episode ends within 4 steps: every report is at the
	# cap, and each is followed by a restart (5 steps an episode: room for
	# 24 in 30 steps of 4 environments), none ended by the game.  The 18
	# wanted are played, then the environments are held: they take no
	# more steps.
	jq -e -s '[.[] | [.length.data, .truncated.data, .return.data] | transpose[] | select(. != [4, 1, 4])] | length == 0' "$D/eps.jsonl"
	[ "$(jq -sc '[.[] | .member.data[]] | group_by(.) | map(length)' "$D/eps.jsonl")" = '[6,6,6]' ]
	echo "$stderr" | grep -q " 0 episodes, 18 restarted by the server, [0-9]* env steps held by the server$"
	held=$(echo "$stderr" | sed -n 's/.*, \([0-9]*\) env steps held by the server$/\1/p')
	steps=$(echo "$stderr" | sed -n 's/.*: \([0-9]*\) env steps in .*/\1/p')
	echo "held $held, steps $steps"
	[ "$held" -gt 0 ] && [ $((held + steps)) -eq 120 ]
	[ "$(tail -n 1 "$D/actor.jsonl" | jq -c '[.restarts, .held]')" = "[18,$held]" ]
}

@test "common episodes: seed-gym restarts an environment from the seed the server gives" {
	need_gym
	# Three members of the same weights (one key), two episodes each, an
	# episode seed: each member's episode k starts from the same seed, so
	# the three play the same two episodes (greedy, deterministic after
	# the start; key 1's network balances for 49 and 58 steps from them).
	population_server 1,1,1 2,2,2 '{"episode_seed": 12345}'
	run --separate-stderr seed-gym --env CartPole-v1 --envs 4 --steps 1200 --connect "ipc://$D/s"
	assert_success
	episodes_done
	# Every member's two lengths (CartPole pays 1 a step: the returns)
	# are the same pair; the two differ (two seeds).
	jq -sc '[.[] | [.member.data, .length.data] | transpose[]]' "$D/eps.jsonl"
	local pairs
	pairs=$(jq -sc '[.[] | [.member.data, .length.data] | transpose[]] | group_by(.[0]) | map(map(.[1]) | sort)' "$D/eps.jsonl")
	[ "$(jq 'length' <<<"$pairs")" -eq 3 ]
	[ "$(jq 'unique | length' <<<"$pairs")" -eq 1 ]
	[ "$(jq '.[0] | unique | length' <<<"$pairs")" -eq 2 ]
}

@test "stopped while its packages load, seed-gym exits 0 and leaves its metrics line at exit" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	# A gymnasium that takes its time to load, and turns an exception
	# raised in it into an ImportError, as numpy's C extensions do with
	# the one a SIGTERM's handler raises.
	mkdir -p "$D/slow/gymnasium"
	cat >"$D/slow/gymnasium/__init__.py" <<-EOF
		import os, time
		open(os.path.join("$D", "loading"), "w").close()
		try:
		    time.sleep(30)
		except BaseException as e:
		    raise ImportError("interrupted while loading") from e
	EOF
	PYTHONPATH="$D/slow" seed-gym --env CartPole-v1 --connect "ipc://$D/none" --metrics "$D/m.jsonl" \
		2>"$D/err" &
	local gym=$!
	PIDS="$PIDS $gym"
	for _ in $(seq 200); do [ -e "$D/loading" ] && break; sleep 0.05; done
	[ -e "$D/loading" ]
	kill -TERM $gym
	local rc=0
	wait $gym || rc=$?
	cat "$D/err"
	[ "$rc" -eq 0 ]
	[ ! -s "$D/err" ]
	[ "$(wc -l <"$D/m.jsonl")" -eq 1 ]
	jq -e '.env_steps == 0 and .episodes == 0 and .time > 0 and (has("frac_step") | not)' "$D/m.jsonl"
	# Any other ImportError is still said, exit 1.
	printf 'raise ImportError("no such thing")\n' >"$D/slow/gymnasium/__init__.py"
	run --separate-stderr env PYTHONPATH="$D/slow" seed-gym --env CartPole-v1 --connect "ipc://$D/none"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"needs Python's gymnasium, numpy, pyzmq and msgpack: no such thing"* ]]
}

@test "seed-train trains gym:CartPole-v1 through seed-gym and evaluates it with seed-gym --episodes" {
	need_gym
	run --separate-stderr seed-train gym-cartpole --seed 2 --frames 20000 --dir "$D/run" --set eval_episodes=5 --quiet
	echo "$stderr"
	assert_success
	echo "$output" | jq -e '.eval.env == "gym:CartPole-v1" and .eval.episodes == 5 and .eval.policy == "server" and .eval.return.mean > 0'
	# Its episodes capped at eval_max_episode_steps (27000: none of CartPole-v1's 500 is cut).
	echo "$output" | jq -e '.eval.max_episode_steps == 27000 and .eval.truncated == 0'
	[ -s "$D/run/checkpoint.json" ]
	# Each actor leaves its line at exit, with the fractions where it
	# served (actor 1 may be stopped while Gymnasium still loads, on a
	# busy machine: actor 0 alone can bring the 20000 frames).
	for i in 0 1; do grep -q '"env_steps"' "$D/run/actor-$i.metrics.jsonl"; done
	cat "$D"/run/actor-[01].metrics.jsonl | grep -q '"frac_step"'
	# seed-learn asks seed-gym for the spec; a bad id is said.
	run --separate-stderr seed-learn --config gym-cartpole --set env=gym:NoSuchEnv-v0 --unrolls "ipc://$D/u" \
		--params "ipc://$D/p" --quiet
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"gymnasium.make failed"* ]]
	[[ "$stderr" == *'seed-learn: config: env "gym:NoSuchEnv-v0": `seed-gym --spec` failed (status 2; its message is above)'* ]]
}

@test "seed-train gym:ID trains ID with gym-cartpole's settings; an ID that cannot work ends at once, no restart" {
	need_gym
	cd "$D"
	run --separate-stderr seed-train gym:Acrobot-v1 --seed 1 --frames 10000 --set eval_episodes=2 --quiet
	echo "$stderr"
	assert_success
	[ "$(head -n 1 <<<"$stderr")" = "seed-train: gym:Acrobot-v1 is not a preset: training it with the gym-cartpole preset's settings (as: seed-train gym-cartpole --set env=gym:Acrobot-v1; another preset's may suit it better)" ]
	# The run directory is named after the ID; its configuration is the
	# preset's, with env and the options given on top.
	dir=$(jq -r .run <<<"$output")
	[[ "$dir" == runs/gym-Acrobot-v1-* ]]
	keep='del(.env, .seed, .total_frames, .eval_episodes)'
	[ "$(jq -S "$keep" "$dir/config.json")" = "$(seed-learn --config gym-cartpole --print-config | jq -S "$keep")" ]
	jq -e '.env == "gym:Acrobot-v1" and .seed == 1 and .total_frames == 10000' "$dir/config.json"
	jq -e '.eval.env == "gym:Acrobot-v1" and .eval.episodes == 2' <<<"$output"
	# FrozenLake-v1's observations are Discrete: seed-gym (an actor, or
	# seed-learn's seed-gym --spec) says so with status 2, and the run ends
	# there.
	run --separate-stderr timeout 120 seed-train gym:FrozenLake-v1 --dir "$D/frozenlake"
	echo "$stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"seed-gym: --env FrozenLake-v1: its observation space is Discrete: seed-gym needs a Box"* ]]
	last=$(tail -n 1 <<<"$stderr")
	[[ "$last" == "seed-gym: --env FrozenLake-v1: its observation space is Discrete: seed-gym needs a Box" ||
		"$last" == 'seed-learn: config: env "gym:FrozenLake-v1": `'*'seed-gym --spec` failed (status 2; its message is above)' ]]
	[[ "$stderr" != *"; restart "* ]]
}

@test "an r2d2 configuration on a gym: env trains through seed-replay and is evaluated epsilon-greedily" {
	need_gym
	run --separate-stderr seed-train r2d2-cartpole-masked --set env=gym:CartPole-v1 --set 'env_options={}' \
		--frames 30000 --set eval_episodes=5 --dir "$D/run" --quiet
	echo "$stderr"
	assert_success
	echo "$output" | jq -e '.restarts.replay == 0 and .eval.env == "gym:CartPole-v1" and .eval.episodes == 5'
	[ -s "$D/run/checkpoint.json" ]
}
