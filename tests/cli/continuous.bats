#!/usr/bin/env bats
# Box action spaces end to end: seed-eval plays them at random and from a
# checkpoint, seed-train trains PPO with a Gaussian policy on Pendulum and
# refuses a model whose policy does not suit the action space.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	mkdir "$D/tmp"
	export TMPDIR="$D/tmp"
	cat >"$D/ppo-pendulum.json" <<'JSON'
{
  "env": "pendulum",
  "algorithm": "ppo",
  "model": {"torso": [{"type": "linear", "out": 16}, {"type": "tanh"}],
            "critic_torso": [{"type": "linear", "out": 16}, {"type": "tanh"}],
            "policy": {"type": "gaussian"}},
  "actors": 1,
  "envs_per_actor": 4,
  "unroll_length": 32,
  "batch_size": 4,
  "ppo": {"epochs": 2, "minibatches": 2, "entropy_cost": 0},
  "total_frames": 4096,
  "eval_episodes": 2,
  "metrics_interval": 1
}
JSON
}

teardown() {
	rm -rf "$D"
}

@test "seed-eval plays a Box space at random: Pendulum's 200-step episodes, returns of its range" {
	run seed-eval --env pendulum --episodes 3 --envs 2
	assert_success
	[ "$(jq '.length.min == 200 and .length.max == 200' <<<"$output")" = true ]
	# Each step costs between 0 and pi^2 + 0.1 * 8^2 + 0.001 * 2^2 = 16.27.
	[ "$(jq '.return.min >= -3254 and .return.max <= 0' <<<"$output")" = true ]
	run seed-eval --list-envs
	assert_output --partial "pendulum     obs f32[3]         actions f32[1]"
}

@test "seed-train trains PPO with a Gaussian policy on Pendulum; seed-eval --greedy plays its checkpoint" {
	run seed-train "$D/ppo-pendulum.json" --dir "$D/run" --no-eval --quiet
	assert_success
	[ -f "$D/run/checkpoint.json" ]
	run seed-eval --checkpoint "$D/run" --greedy --episodes 2
	assert_success
	[ "$(jq -r '.env + " " + (.greedy | tostring) + " " + (.length.max | tostring)' <<<"$output")" = "pendulum true 200" ]
	# Greedy play is the mean action: two runs agree.
	first=$(jq .return.mean <<<"$output")
	run seed-eval --checkpoint "$D/run" --greedy --episodes 2
	[ "$(jq .return.mean <<<"$output")" = "$first" ]
}

@test "a categorical model for a Box space, or a Gaussian one for a discrete space, is refused by name" {
	jq '.model = {"torso": []}' "$D/ppo-pendulum.json" >"$D/cat.json"
	run seed-learn --config "$D/cat.json" --unrolls ipc://"$D/u" --params ipc://"$D/p" --dir "$D/r1"
	[ "$status" -eq 2 ]
	assert_output --partial 'pendulum has a Box action space (A = 1): the model needs a Gaussian policy'
	jq '.env = "cartpole"' "$D/ppo-pendulum.json" >"$D/gauss.json"
	run seed-learn --config "$D/gauss.json" --unrolls ipc://"$D/u" --params ipc://"$D/p" --dir "$D/r2"
	[ "$status" -eq 2 ]
	assert_output --partial "cartpole has 2 discrete actions; the model's policy is Gaussian"
	jq '.algorithm = "r2d2" | .model = {"torso": [], "head": "dueling"}' "$D/ppo-pendulum.json" >"$D/q.json"
	run seed-learn --config "$D/q.json" --unrolls ipc://"$D/u" --params ipc://"$D/p" --dir "$D/r3"
	[ "$status" -eq 2 ]
	assert_output --partial "algorithm r2d2 learns Q values of discrete actions"
}

@test "MuJoCo's HalfCheetah plays at random through seed-eval (skipped without MuJoCo)" {
	seed-eval --list-envs | grep -q '^halfcheetah ' || skip "built without MuJoCo"
	run seed-eval --env halfcheetah --episodes 1
	assert_success
	[ "$(jq '.length.max' <<<"$output")" -eq 1000 ]
}

@test "seed-eval plays Gymnasium's Pendulum-v1 (a Box space) through seed-gym" {
	need_python "scripts/install-deps" gymnasium numpy zmq:pyzmq msgpack
	run seed-eval --env gym:Pendulum-v1 --episodes 2 --envs 2
	assert_success
	[ "$(jq '.length.min == 200 and .length.max == 200 and .return.max <= 0' <<<"$output")" = true ]
}
