#!/usr/bin/env bats
# Box action spaces end to end: seed-eval plays them at random and from a
# checkpoint, seed-train trains PPO with a Gaussian policy on Pendulum,
# evolves one (es: members act with the mean plus action noise, observations
# normalised by the evolver's statistics) and refuses a model whose policy
# does not suit the action space.

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

# es-pendulum: evolution strategies on Pendulum with a Gaussian policy and
# observation statistics, 8 members of one 200-step episode a round.
es_pendulum() {
	cat >"$D/es-pendulum.json" <<'JSON'
{
  "env": "pendulum",
  "algorithm": "es",
  "model": {"obs_norm": true, "torso": [{"type": "linear", "out": 16}, {"type": "tanh"}],
            "policy": {"type": "gaussian"}},
  "evolution": {"population": 8, "sigma": 0.1, "lr": 0.05, "noise_size": 65536,
                "generation_deadline": 20, "action_noise": 0.05},
  "actors": 1,
  "envs_per_actor": 8,
  "infer": {"max_batch": 8, "timeout_us": 500},
  "total_frames": 8000,
  "eval_episodes": 2
}
JSON
}

# tensor RUN NAME: the f32 tensor NAME of RUN's checkpoint, as a JSON list
# (a safetensors file: an 8-byte header length, the JSON header, the data).
tensor() {
	python3 - "$1/checkpoint.safetensors" "$2" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    head = json.loads(f.read(n))
    a, b = head[sys.argv[2]]["data_offsets"]
    f.seek(8 + n + a)
    data = f.read(b - a)
print(json.dumps(list(struct.unpack("<%df" % (len(data) // 4), data))))
PY
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

@test "seed-train evolves a Gaussian policy on Pendulum with observation statistics; its checkpoint plays them" {
	es_pendulum
	run timeout 300 seed-train "$D/es-pendulum.json" --seed 1 --dir "$D/run" --quiet
	echo "$output"
	assert_success
	[ "$(jq '.eval.episodes == 2 and (.eval.return.mean | . < 0 and . > -2000)' <<<"$output")" = true ]
	[ "$(jq -s 'last | .frames >= 1600 and .evaluated == 8' "$D/run/metrics.jsonl")" = true ]
	[ "$(jq '.step >= 5 and .frames >= 8000' "$D/run/checkpoint.json")" = true ]
	# The statistics of the steps the members played until the last round
	# ended (its five rounds' 8000 at least, and no more than the frames
	# played by then and the first steps of a round after): Pendulum's cos,
	# sin and angular velocity, merged into the start's count of 1e-4.
	count=$(tensor "$D/run" obs_norm.count | jq '.[0]')
	frames=$(jq .frames "$D/run/checkpoint.json")
	[ "$(jq -n "$count >= 8000 and $count <= $frames + 1600")" = true ]
	var=$(tensor "$D/run" obs_norm.var)
	[ "$(jq 'all(. > 0 and . != 1) and .[0] <= 1 and .[1] <= 1' <<<"$var")" = true ]
	run seed-eval --checkpoint "$D/run" --greedy --episodes 2
	assert_success
	[ "$(jq -r '.env + " " + (.greedy | tostring)' <<<"$output")" = "pendulum true" ]
}

@test "seed-train evolves Pendulum with snes (its stds in the checkpoint) and ars (a linear policy, a shifted fitness)" {
	es_pendulum
	run timeout 300 seed-train "$D/es-pendulum.json" --seed 1 --dir "$D/snes" --quiet --set algorithm=snes \
		--set evolution.sigma=0.05
	echo "$output"
	assert_success
	[ "$(jq '.eval.episodes == 2 and (.eval.return.mean | . < 0 and . > -2000)' <<<"$output")" = true ]
	[ "$(jq -s 'all(.algorithm == "snes") and (last | .evaluated == 8)' "$D/snes/metrics.jsonl")" = true ]
	# A std per parameter, adapted from the first 0.05 (the model's 16 x 3 + 16
	# torso, 1 x 16 + 1 mean, 1 log-std, 1 x 16 + 1 value and its 3 + 3 + 1
	# observation statistics: 106 floats in the slab).
	sig=$(tensor "$D/snes" evo.sigmas)
	[ "$(jq 'length == 106 and all(. > 0) and any(. != 0.05)' <<<"$sig")" = true ]
	# ARS: a model without hidden layers, the top 2 of 4 pairs, a fitness
	# shifted by -20 a step (4,000 over an episode): the metrics still report
	# Pendulum's returns, all below 0.
	run timeout 300 seed-train "$D/es-pendulum.json" --seed 1 --dir "$D/ars" --quiet --set algorithm=ars \
		--set 'model={"obs_norm": true, "torso": [], "policy": {"type": "gaussian"}}' \
		--set evolution.top=2 --set evolution.reward_shift=-20 --set evolution.sigma=0.05
	echo "$output"
	assert_success
	[ "$(jq '.eval.return.mean | . < 0 and . > -2000' <<<"$output")" = true ]
	[ "$(jq -s 'all(.algorithm == "ars" and .mean < 0 and .best < 0)' "$D/ars/metrics.jsonl")" = true ]
	[ "$(jq '.step >= 5' "$D/ars/checkpoint.json")" = true ]
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
