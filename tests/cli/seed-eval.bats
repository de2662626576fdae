#!/usr/bin/env bats
# tests/cli/seed-eval.bats: the seed-eval command line.
#
# Reference values for a uniformly random policy (tests/golden/random_policy_ref.py):
# - CartPole-v1, Gymnasium 1.4.0, 200000 episodes: mean return 22.253,
#   population std 11.874.  With N episodes the standard error of the mean is
#   11.874 / sqrt(N); the tests allow 5 standard errors.
# - Catch 10 x 5: the paddle's final column is independent of the ball's,
#   which is uniform, so P(catch) = 1/5: mean return -0.6, std 0.8, length 9
#   always (bsuite's own Catch, 20000 episodes: -0.593 +- 0.006).

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
}

# within VALUE CENTER TOLERANCE: |VALUE - CENTER| <= TOLERANCE
within() {
	awk -v v="$1" -v c="$2" -v t="$3" 'BEGIN { d = v - c; if (d < 0) d = -d; exit !(d <= t) }'
}

@test "--help prints usage on stdout and exits 0" {
	run seed-eval --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: seed-eval --env NAME"* ]]
	[[ "$output" == *"--episodes N"* ]]
	[[ "$output" == *"--list-envs"* ]]
	[[ "$output" == *"--last "*"DIR/best"* ]]
	[[ "$output" == *"--max-episode-steps N"*"default"*"27000"* ]]
	[[ "$output" == *"--stats-interval SEC"* ]]
}

@test "--version prints the version" {
	run seed-eval --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^seed-eval\ \(seed\)\ [0-9]+\.[0-9]+ ]]
}

@test "--list-envs lists cartpole and catch with their specs" {
	run seed-eval --list-envs
	[ "$status" -eq 0 ]
	echo "$output" | grep -E '^cartpole +obs f32\[4\] +actions 2 +max_steps 500 +CartPole-v1'
	echo "$output" | grep -E '^catch +obs f32\[10,5\] +actions 3 +max_steps 0 +Catch'
}

@test "prints one JSON object of the documented shape" {
	run --separate-stderr seed-eval --env cartpole --episodes 5
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
	printf '%s' "$output" | jq -e '
		(keys == ["env", "envs", "episodes", "length", "max_episode_steps", "policy", "return", "seed",
			"truncated"]) and
		.env == "cartpole" and .policy == "random" and .episodes == 5 and .envs == 1 and .seed == 0 and
		.max_episode_steps == 27000 and .truncated == 0 and
		([.return, .length][] | (keys == ["max", "mean", "median", "min", "std"]) and
			([.[] | type] | all(. == "number")) and .min <= .median and .median <= .max and
			.min <= .mean and .mean <= .max and .std >= 0)'
	# CartPole gives 1 per step: return and length agree.
	printf '%s' "$output" | jq -e '.return == .length'
}

@test "the statistics are those of the episodes (std is the population std)" {
	# Catch episodes last 9 steps and return +1 or -1: with c catches out of
	# n, mean = (2c - n)/n and population std = sqrt(1 - mean^2).
	run seed-eval --env catch --episodes 7 --seed 3
	[ "$status" -eq 0 ]
	printf '%s' "$output" | jq -e '.length == {"mean": 9, "std": 0, "median": 9, "min": 9, "max": 9}'
	printf '%s' "$output" | jq -e '
		.return as $r | ($r.mean * 7 | round) as $s |
		(($r.mean * 7 - $s) | fabs) < 1e-9 and
		((($r.std - ((1 - $r.mean * $r.mean) | sqrt)) | fabs) < 1e-8) and
		([$r.min, $r.max, $r.median] | all(. == 1 or . == -1))'
}

@test "the same seed gives the same output, another seed another" {
	a=$(seed-eval --env cartpole --episodes 50 --envs 4 --seed 7)
	b=$(seed-eval --env cartpole --episodes 50 --envs 4 --seed 7)
	c=$(seed-eval --env cartpole --episodes 50 --envs 4 --seed 8)
	[ "$a" = "$b" ]
	[ "$(jq -c .return <<<"$a")" != "$(jq -c .return <<<"$c")" ]
}

@test "exactly N episodes are counted, whatever K" {
	for k in 1 3 64; do
		run seed-eval --env catch --episodes 10 --envs "$k"
		[ "$status" -eq 0 ]
		printf '%s' "$output" | jq -e ".episodes == 10 and .envs == $k"
		# Ten catch episodes: the mean is a multiple of 0.2.
		printf '%s' "$output" | jq -e '((.return.mean * 10) - (.return.mean * 10 | round) | fabs) < 1e-9'
	done
}

@test "CartPole-v1 random policy: mean return 22.25 within 5 standard errors" {
	# 3000 episodes: standard error 11.874 / sqrt(3000) = 0.217.
	run seed-eval --env cartpole --episodes 3000 --envs 32 --seed 11
	[ "$status" -eq 0 ]
	mean=$(jq .return.mean <<<"$output")
	std=$(jq .return.std <<<"$output")
	echo "mean $mean std $std"
	within "$mean" 22.253 1.085
	within "$std" 11.874 1.5
	printf '%s' "$output" | jq -e '.return == .length and .length.max <= 500'
}

@test "CartPole max_steps option caps episode length" {
	run seed-eval --env cartpole --env-options '{"max_steps": 10}' --episodes 200
	[ "$status" -eq 0 ]
	printf '%s' "$output" | jq -e '.length.max == 10 and .length.min >= 8'
}

@test "Catch random policy: mean return -0.6 within 5 standard errors" {
	# 4000 episodes: standard error 0.8 / sqrt(4000) = 0.0126.
	run seed-eval --env catch --episodes 4000 --envs 16 --seed 5
	[ "$status" -eq 0 ]
	mean=$(jq .return.mean <<<"$output")
	echo "mean $mean"
	within "$mean" -0.6 0.063
	within "$(jq .return.std <<<"$output")" 0.8 0.02
	printf '%s' "$output" | jq -e '.length.min == 9 and .length.max == 9'
}

@test "Catch options change the board: rows 4 gives episodes of 3 steps" {
	run seed-eval --env catch --env-options '{"rows": 4, "columns": 3}' --episodes 20
	[ "$status" -eq 0 ]
	printf '%s' "$output" | jq -e '.length.min == 3 and .length.max == 3'
}

@test "an unknown environment is named in the error" {
	run seed-eval --env cartpoll --episodes 1
	[ "$status" -eq 2 ]
	[[ "$output" == *'seed-eval: --env: no environment called "cartpoll"'* ]]
	[[ "$output" == *"--list-envs"* ]]
}

@test "options that are not JSON are reported" {
	run seed-eval --env cartpole --env-options '{"max_steps": }' --episodes 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"seed-eval: --env-options: cartpole: options are not valid JSON"* ]]
	run seed-eval --env cartpole --env-options '[1]' --episodes 1
	[ "$status" -eq 2 ]
	[[ "$output" == *"must be a JSON object"* ]]
}

@test "an unknown option key is named, with the known ones" {
	run seed-eval --env catch --env-options '{"colums": 4}' --episodes 1
	[ "$status" -eq 2 ]
	[[ "$output" == *'catch: unknown option "colums" (known: rows, columns, max_steps)'* ]]
}

@test "a bad option value is named" {
	run seed-eval --env cartpole --env-options '{"init_state": [0, 0, 0]}' --episodes 1
	[ "$status" -eq 2 ]
	[[ "$output" == *'"init_state"'* ]]
	run seed-eval --env cartpole --env-options '{"max_steps": -3}' --episodes 1
	[ "$status" -eq 2 ]
	[[ "$output" == *'"max_steps"'* ]]
}

@test "usage errors exit 2 with a message" {
	run seed-eval --episodes 3
	[ "$status" -eq 2 ]
	[[ "$output" == *"--env is required"* ]]
	[[ "$output" == *"usage: seed-eval"* ]]
	run seed-eval --env cartpole --episodes 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--episodes"* ]]
	run seed-eval --env cartpole --envs x
	[ "$status" -eq 2 ]
	[[ "$output" == *"--envs: 'x' is not an integer"* ]]
	run seed-eval --env cartpole --policy greedy
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown policy 'greedy'"* ]]
	run seed-eval --env cartpole --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown option '--bogus'"* ]]
	run seed-eval --env
	[ "$status" -eq 2 ]
	[[ "$output" == *"needs a value"* ]]
	run seed-eval --env cartpole extra
	[ "$status" -eq 2 ]
	[[ "$output" == *"unexpected argument 'extra'"* ]]
	run seed-eval --env cartpole --seed -1
	[ "$status" -eq 2 ]
}

@test "the examples in the manual run" {
	# Each .EX block of seed-eval(1) that starts with "seed-eval" is a
	# command: write each to a file, undo the roff escapes, run it.
	awk -v dir="$BATS_TEST_TMPDIR" '
	     /^\.EX/ { ex = 1; n++; f = dir "/example." n; next }
	     /^\.EE/ { ex = 0; next }
	     ex { print > f }' "$SEED_SRCDIR/man/seed-eval.1"
	# The example that trains a policy first finds its preset in the sources.
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	n=0
	for f in "$BATS_TEST_TMPDIR"/example.*; do
		grep -q '^seed-eval' "$f" || continue
		cmd=$(sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$f")
		echo "example: $cmd"
		# In a scratch directory: examples may write files.
		run bash -o pipefail -c "cd \"\$1\" && $cmd" example "$BATS_TEST_TMPDIR"
		echo "$output"
		[ "$status" -eq 0 ]
		[ -n "$output" ]
		n=$((n + 1))
	done
	[ "$n" -ge 4 ]
}

@test "short letters follow the shared table of seed_opts(3)" {
	run --separate-stderr seed-eval -e catch -n 2 -k 2 -s 3
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.env, .episodes, .envs, .seed]' <<<"$output")" = '["catch",2,2,3]' ]
	# -c is --connect in the programs that have it: seed-eval's --checkpoint is -m.
	run --separate-stderr seed-eval -e catch -c runs/x
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"seed-eval: unknown option '-c'"* ]]
	run --separate-stderr seed-eval -m no/such/run
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--checkpoint: "* ]]
}

# qmodel DIR [CONFIG_JSON [CORE]]: a Q-model (dueling head) checkpoint for
# catch, freshly initialised (tests/cli/qcheckpoint: no learner writes one yet).
qmodel() {
	qcheckpoint "$1" catch "{\"torso\": [{\"type\": \"flatten\"}, {\"type\": \"linear\", \"out\": 8}, {\"type\": \"relu\"}], ${3:-} \"head\": \"dueling\"}" 3 "${2:-null}"
}

@test "a Q-model checkpoint plays epsilon-greedily: --epsilon, the config's eval_epsilon, 1e-3, --greedy" {
	D=$(mktemp -d)
	qmodel "$D/plain"
	qmodel "$D/cfg" '{"r2d2": {"eval_epsilon": 0.05}}'
	run seed-eval --checkpoint "$D/plain" --episodes 2
	assert_success
	[ "$(echo "$output" | jq -c '[.epsilon, .greedy]')" = "[0.001,false]" ]
	run seed-eval --checkpoint "$D/cfg" --episodes 2
	[ "$(echo "$output" | jq -c '[.epsilon, .greedy]')" = "[0.05,false]" ]
	run seed-eval --checkpoint "$D/cfg" --episodes 2 --epsilon 0.25
	[ "$(echo "$output" | jq .epsilon)" = "0.25" ]
	run seed-eval --checkpoint "$D/cfg" --episodes 2 --greedy
	[ "$(echo "$output" | jq -c '[.epsilon == 0, .greedy]')" = "[true,true]" ]
	# Epsilon 0 never leaves the greedy action: the same episodes as --greedy.
	a=$(seed-eval --checkpoint "$D/plain" --episodes 50 --envs 4 --epsilon 0 | jq -c '[.return, .length]')
	b=$(seed-eval --checkpoint "$D/plain" --episodes 50 --envs 4 --greedy | jq -c '[.return, .length]')
	[ "$a" = "$b" ]
	# Epsilon 1 is uniform play: catch's -0.6 (std 0.8, see above); 2000
	# episodes, 5 standard errors (0.09).
	m=$(seed-eval --checkpoint "$D/plain" --episodes 2000 --envs 16 --epsilon 1 --seed 4 | jq .return.mean)
	within "$m" -0.6 0.09
	# A Q model with an LSTM core (state carried per environment) plays too.
	qmodel "$D/core" null '"core": {"type": "lstm", "units": 4, "prev_action": true, "prev_reward": true},'
	run seed-eval --checkpoint "$D/core" --episodes 20 --envs 3 --epsilon 1 --seed 2
	assert_success
	[ "$(echo "$output" | jq -c '[.episodes, .epsilon == 1, .length.mean == 9]')" = "[20,true,true]" ]
	rm -rf "$D"
}

@test "--epsilon: usage errors, and a bad eval_epsilon in the config is named" {
	D=$(mktemp -d)
	qmodel "$D/q" '{"r2d2": {"eval_epsilon": "lots"}}'
	qcheckpoint "$D/ac" catch '{"torso": [{"type": "flatten"}]}' 1
	run seed-eval --env catch --epsilon 0.1
	[ "$status" -eq 2 ]
	assert_output --partial "--epsilon goes with --checkpoint"
	run seed-eval --checkpoint "$D/q" --greedy --epsilon 0.1
	[ "$status" -eq 2 ]
	run seed-eval --checkpoint "$D/q" --epsilon 1.5
	[ "$status" -eq 2 ]
	run seed-eval --checkpoint "$D/ac" --epsilon 0.1
	[ "$status" -eq 2 ]
	assert_output --partial "actor-critic head"
	run seed-eval --checkpoint "$D/q" --episodes 1
	[ "$status" -eq 1 ]
	assert_output --partial "r2d2.eval_epsilon is not a number in [0, 1]"
	# Given on the command line, it is not read.
	run seed-eval --checkpoint "$D/q" --episodes 1 --epsilon 0.5
	assert_success
	rm -rf "$D"
}

@test "--device: a bad name or a device not here is an error naming it" {
	run seed-eval --env cartpole --device cpu
	[ "$status" -eq 2 ]
	[[ "$output" == *"--device goes with --checkpoint"* ]]
	run seed-eval --checkpoint "$BATS_TEST_TMPDIR/none" --device gpu
	[ "$status" -eq 1 ]
	[[ "$output" == *"--device: device 'gpu': must be cpu, cuda or cuda:N"* ]]
	# No machine that runs the tests has 4096 GPUs: the CUDA runtime's
	# words, or a build without CUDA saying so.
	run seed-eval --checkpoint "$BATS_TEST_TMPDIR/none" --device cuda:4096
	[ "$status" -eq 1 ]
	[[ "$output" == *"--device: device 'cuda:4096': "* ]]
}

# run_with_best DIR [CONFIG_JSON]: a run directory as seed-train leaves one
# with periodic evaluations: its last checkpoint (a catch model whose greedy
# play never catches: return -1 always) and DIR/best, a symbolic link to
# .best-1 holding another (one that catches some balls), and the run's
# configuration DIR/config.json (default: periodic evaluations on).
run_with_best() {
	local m='{"torso": [{"type": "flatten"}, {"type": "linear", "out": 8}, {"type": "relu"}]}'
	qcheckpoint "$1" catch "$m" 2
	qcheckpoint "$1/.best-1" catch "$m" 1
	ln -s .best-1 "$1/best"
	echo "${2:-{\"periodic_eval\": {\"interval\": 30, \"episodes\": 20, \"target\": null\}\}}" >"$1/config.json"
}

@test "a run directory plays what the run reports: DIR/best where it has one, the last with --last" {
	D=$BATS_TEST_TMPDIR
	run_with_best "$D/run"
	play() { seed-eval --checkpoint "$@" --greedy --episodes 50 --envs 5 --seed 4; }
	# The two checkpoints, each played from its own directory: the last
	# never catches, the best does.
	last=$(play "$D/run/checkpoint.json" | jq -c '[.return, .length]')
	best=$(play "$D/run/.best-1" | jq -c '[.return, .length]')
	[ "$(jq '.[0].max' <<<"$last")" = -1 ]
	[ "$(jq '.[0].max' <<<"$best")" = 1 ]
	run --separate-stderr play "$D/run"
	assert_success
	[ "$(jq -c '[.return, .length]' <<<"$output")" = "$best" ]
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run/best" ]
	run --separate-stderr play "$D/run/" # a trailing slash is the same directory
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run/best" ]
	run --separate-stderr play "$D/run" --last
	assert_success
	[ "$(jq -c '[.return, .length]' <<<"$output")" = "$last" ]
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run" ]
	# DIR/best given as it is (what seed-train's final evaluation passes).
	run --separate-stderr play "$D/run/best"
	[ "$(jq -c '[.return, .length]' <<<"$output")" = "$best" ]
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run/best" ]
	# A run resumed without periodic evaluations reports its last
	# checkpoint, though an earlier DIR/best is still there.
	echo '{"periodic_eval": {"interval": 0}}' >"$D/run/config.json"
	run --separate-stderr play "$D/run"
	[ "$(jq -c '[.return, .length]' <<<"$output")" = "$last" ]
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run" ]
	# Without DIR/config.json, the checkpoint's own config says.
	rm "$D/run/config.json"
	run --separate-stderr play "$D/run"
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run" ]
	qcheckpoint "$D/run" catch '{"torso": [{"type": "flatten"}, {"type": "linear", "out": 8}, {"type": "relu"}]}' 2 \
		'{"periodic_eval": {"interval": 5}}'
	run --separate-stderr play "$D/run"
	[ "$(jq -c '[.return, .length]' <<<"$output")" = "$best" ]
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run/best" ]
	# No DIR/best: the last checkpoint.
	rm "$D/run/best"
	run --separate-stderr play "$D/run"
	[ "$(jq -r .checkpoint <<<"$output")" = "$D/run" ]
	[ "$(jq -c '[.return, .length]' <<<"$output")" = "$last" ]
}

@test "--last: only with --checkpoint; a run configuration that is not JSON is named" {
	D=$BATS_TEST_TMPDIR
	run --separate-stderr seed-eval --env catch --last
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--last goes with --checkpoint DIR"* ]]
	run_with_best "$D/run" '{"periodic_eval": '
	run --separate-stderr seed-eval --checkpoint "$D/run" --episodes 1
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--checkpoint: $D/run/config.json: "*"--last plays the last checkpoint"* ]]
	run --separate-stderr seed-eval --checkpoint "$D/run" --episodes 1 --last
	assert_success
}

@test "--max-episode-steps cuts episodes that would not end, as truncated, and counts them" {
	# CartPole cannot fail before its 8th step: from |theta| <= 0.05 and
	# |theta_dot| <= 0.05, full force gives |theta_acc| < 16 rad/s^2, so
	# after n steps of 0.02 s |theta| < 0.05 + 0.02 (0.05 n + 0.32 n (n-1) / 2),
	# 0.12 at n = 5, below the 0.2094 (12 degrees) that ends it.  A cap of 5
	# therefore ends every episode, at 5 steps.
	run --separate-stderr seed-eval --env cartpole --episodes 10 --envs 3 --max-episode-steps 5
	assert_success
	[ "$(jq -c '[.length.min, .length.max, .return.mean, .truncated, .max_episode_steps]' <<<"$output")" = \
		"[5,5,5,10,5]" ]
	# The environment's own shorter limit truncates first: no cut.
	run --separate-stderr seed-eval --env cartpole --env-options '{"max_steps": 3}' --episodes 10 --max-episode-steps 5
	[ "$(jq -c '[.length.min, .length.max, .truncated]' <<<"$output")" = "[3,3,0]" ]
	# A longer one is cut by the cap (which the user's limit does not lift).
	run --separate-stderr seed-eval --env cartpole --env-options '{"max_steps": 9}' --episodes 10 --max-episode-steps 5
	[ "$(jq -c '[.length.max, .truncated]' <<<"$output")" = "[5,10]" ]
	# The default is 27000 (Atari's 108K frames at frame skip 4), far beyond
	# every CartPole episode (500 at most); 0 is no cap.
	run --separate-stderr seed-eval --env cartpole --episodes 5
	[ "$(jq -c '[.max_episode_steps, .truncated]' <<<"$output")" = "[27000,0]" ]
	run --separate-stderr seed-eval --env cartpole --env-options '{"max_steps": 0}' --episodes 5 --max-episode-steps 0
	[ "$(jq -c '[.max_episode_steps, .truncated]' <<<"$output")" = "[0,0]" ]
	run --separate-stderr seed-eval --env cartpole --max-episode-steps -1
	[ "$status" -eq 2 ]
	# Only the N episodes counted are: K = 4 envs end 4 episodes at step 5,
	# of which 2 are counted.
	run --separate-stderr seed-eval --env cartpole --episodes 2 --envs 4 --max-episode-steps 5
	[ "$(jq .truncated <<<"$output")" = 2 ]
}

@test "MinAtar Freeway, whose episodes last 2501 steps, is cut at a cap below that" {
	# Freeway ends itself after 2500 steps of its timer and the step that
	# sees it run out, whatever is played (seed-eval(1), doc/minatar.md).
	run --separate-stderr seed-eval --env minatar-freeway --episodes 4 --envs 2 --max-episode-steps 100
	assert_success
	[ "$(jq -c '[.length.min, .length.max, .truncated]' <<<"$output")" = "[100,100,4]" ]
	run --separate-stderr seed-eval --env minatar-freeway --episodes 2 --envs 2
	[ "$(jq -c '[.length.min, .length.max, .truncated]' <<<"$output")" = "[2501,2501,0]" ]
}

@test "a long evaluation says how far it has come on stderr every --stats-interval seconds" {
	run --separate-stderr seed-eval --env cartpole --episodes 300000 --envs 16 --stats-interval 0.02
	assert_success
	echo "$stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -ge 2 ]
	[ -z "$(printf '%s\n' "$stderr" |
		grep -Ev '^seed-eval: [0-9]+ of 300000 episodes done \(0 cut at the step cap\), [0-9]+ steps, [0-9]+ s$')" ]
	jq -e '.episodes == 300000' <<<"$output"
	# The default, every 10 s, says nothing about a short one; 0 never.
	run --separate-stderr seed-eval --env cartpole --episodes 100
	[ -z "$stderr" ]
	run --separate-stderr seed-eval --env cartpole --episodes 300000 --envs 16 --stats-interval 0
	[ -z "$stderr" ]
}

@test "configuration errors exit 2, as in seed-learn: a checkpoint whose model does not fit the environment" {
	D=$BATS_TEST_TMPDIR
	qcheckpoint "$D/ac" catch '{"torso": [{"type": "flatten"}]}' 1
	run --separate-stderr seed-eval --checkpoint "$D/ac" --env cartpole --episodes 1
	[ "$status" -eq 2 ]
	[[ "$stderr" == "seed-eval: policy checkpoint: $D/ac/"*": tensor 'policy.weight': expected f32 [2, 4], found f32 [3, 50]" ]]
	[ -z "$output" ]
	# On its own environment it plays.
	run --separate-stderr seed-eval --checkpoint "$D/ac" --episodes 1
	assert_success
	# What the checkpoint holds being bad is not the command's fault: status 1.
	qcheckpoint "$D/q" catch '{"torso": [{"type": "flatten"}], "head": "dueling"}' 3 '{"r2d2": {"eval_epsilon": -1}}'
	run --separate-stderr seed-eval --checkpoint "$D/q" --episodes 1
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"r2d2.eval_epsilon is not a number in [0, 1]"* ]]
}
