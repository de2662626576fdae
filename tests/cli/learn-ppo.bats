#!/usr/bin/env bats
# seed-train and seed-learn with algorithm ppo: the presets resolve with
# their "ppo" settings, bad PPO settings are refused by name, a model PPO
# cannot train is refused, and ppo-cartpole trains end to end to a policy
# that evaluates to at least 475.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	# seed-train puts its sockets under TMPDIR: keep them in this test's
	# directory, so that the checks below see only this test's processes.
	mkdir "$D/tmp"
	export TMPDIR="$D/tmp"
}

teardown() {
	rm -rf "$D"
}

@test "the ppo presets resolve with algorithm ppo and their ppo settings written out" {
	local p n=0
	for p in "$SEED_SRCDIR"/examples/presets/ppo-*.json; do
		run seed-learn --config "$p" --print-config
		assert_success
		[ "$(jq -r .algorithm <<<"$output")" = ppo ]
		[ "$(jq '.ppo | keys | length' <<<"$output")" -eq 9 ]
		[ "$(jq '(.unroll_length * .batch_size) % .ppo.minibatches' <<<"$output")" -eq 0 ]
		n=$((n + 1))
	done
	[ "$n" -eq 12 ]
	for g in breakout asterix freeway seaquest space-invaders; do
		[ -f "$SEED_SRCDIR/examples/presets/ppo-minatar-$g.json" ]
	done
	# The MuJoCo presets: a Gaussian policy, both normalisations on.
	for e in halfcheetah hopper walker2d ant humanoid; do
		run seed-learn --config "ppo-$e" --print-config
		assert_success
		[ "$(jq -c '[.env, .model.policy.type, .model.obs_norm, .normalize_reward]' <<<"$output")" = "[\"$e\",\"gaussian\",true,true]" ]
	done
	# A V-trace preset records no ppo object.
	run seed-learn --config cartpole --print-config
	[ "$(jq .ppo <<<"$output")" = null ]
}

@test "bad ppo settings are refused with the key that is wrong" {
	run seed-learn --config ppo-cartpole --set ppo.epoch=3 --print-config
	assert_failure
	assert_output --partial "unknown key 'ppo.epoch'"
	run seed-learn --config ppo-cartpole --set ppo.minibatches=3 --print-config
	assert_failure
	assert_output --partial "'ppo.minibatches' = 3 does not divide the 1024 transitions"
	run seed-learn --config ppo-cartpole --set ppo.clip=-1 --print-config
	assert_failure
	assert_output --partial "'ppo.clip' = -1 is out of range"
	run seed-learn --config ppo-cartpole --set algorithm=ppo2 --print-config
	assert_failure
	assert_output --partial "\"vtrace\", \"r2d2\", \"ppo\", \"es\", \"ga\", \"rs\", \"snes\" or \"ars\""
	# A model with a core: minibatches of shuffled transitions cannot train it.
	run seed-learn --config ppo-cartpole --set 'model.core={"type": "lstm", "units": 8}' \
		--unrolls "$D/none" --params "ipc://$D/p"
	assert_failure
	assert_output --partial "algorithm ppo takes a model without a core"
}

@test "seed-train ppo-cartpole trains a policy that evaluates to at least 475 (fixed seed)" {
	run timeout 300 seed-train ppo-cartpole --seed 3 --dir "$D/run" --quiet
	echo "$output"
	assert_success
	[ "$(jq '.eval.return.mean >= 475' <<<"$output")" = true ]
	# It learnt with PPO: metrics of its own, several optimizer steps per
	# update (4 epochs of 4 minibatches), one version per update.
	[ "$(jq -s -r 'last | .algorithm' "$D/run/metrics.jsonl")" = ppo ]
	[ "$(jq -s 'last | .optim_steps == 16 * .updates and .version == .updates' "$D/run/metrics.jsonl")" = true ]
	[ "$(jq -s 'last | (.approx_kl | type) == "number" and (.clip_fraction | type) == "number"' \
		"$D/run/metrics.jsonl")" = true ]
	# It stopped on an evaluation of 495 (or its budget), and the final
	# evaluation played the best-evaluated checkpoint.
	[ "$(jq -s 'map(.eval.return.mean) | max >= 495' "$D/run/evals.jsonl")" = true ] ||
		[ "$(jq -s 'last | .frames >= 500000' "$D/run/metrics.jsonl")" = true ]
	[ -L "$D/run/best" ] && [ -f "$D/run/best/checkpoint.json" ]
	[ "$(jq -r .config.algorithm "$D/run/checkpoint.json")" = ppo ]
	# Every process it started is gone.
	run pgrep -f "ipc://$D/tmp"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
}
