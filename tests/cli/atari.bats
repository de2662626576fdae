#!/usr/bin/env bats
# seed-gym on Atari through ale-py: ALE/ ids get the standard preprocessing
# (frame skip 4 max-pooling the last two frames, 84x84 grey, a stack of 4 as
# the last axis, sticky actions 0.25, up to 30 no-op starts); the frames are
# checked against the preprocessing done by hand on ALE's single frames, the
# options are read back from the emulator and seen in the trajectories, and
# seed-train runs the preset atari-pong.  --backend envpool (EnvPool's Atari)
# gives ale-py's frames byte for byte where both are deterministic, and
# seed-eval records Pong's screens through seed-gym --rgb.  Without ale-py
# and OpenCV (which CI does not install: scripts/install-deps --atari does)
# those tests skip, saying which is missing, and the EnvPool tests without
# envpool (scripts/install-deps --envpool); the usage errors need no Python
# package.

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

# random_actions N K SEED: N lines of K actions in [0, 6), the same in every column.
random_actions() {
	python3 -c "import random, sys; r = random.Random($3); n, k = $1, $2
for _ in range(n): a = r.randrange(6); print(' '.join([str(a)] * k))"
}

@test "Atari options: misuse is a usage error naming the option or key, before any import" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	run --separate-stderr seed-gym --env ALE/Pong-v5 --atari --no-atari --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --atari and --no-atari contradict each other" ]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --no-atari --noop-max 3 --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --noop-max needs the Atari preprocessing (--atari, or an ALE/ id)" ]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --env-options '{"atari": {"noop": 3}}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "atari": unknown key "noop" (known: noop_max, frame_skip, frame_stack, screen_size, terminal_on_life_loss)' ]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --env-options '{"atari": {"frame_stack": 0}}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "atari": "frame_stack" must be a whole number in [1, 1000], not 0' ]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --env-options '{"atari": 1}' --spec
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == 'seed-gym: --env-options: "atari" must be true, false or an object'* ]]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --env-options '{"frameskip": 4}' --spec
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == 'seed-gym: --env-options: "frameskip" is 4: with the Atari preprocessing ALE must step single frames'* ]]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --sticky 1.5 --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --sticky: 1.5 is out of range [0, 1]" ]
}

@test "--spec of ALE/Pong-v5: u8 [84,84,4], 6 actions, and the settings read back from ALE and the wrappers" {
	need_ale
	run --separate-stderr seed-gym --env gym:ALE/Pong-v5 --spec
	assert_success
	assert_output '{"env": "gym:ALE/Pong-v5", "obs_dtype": "u8", "obs_shape": [84, 84, 4], "num_actions": 6, "max_steps": 0, "atari": {"noop_max": 30, "frame_skip": 4, "frame_stack": 4, "screen_size": 84, "terminal_on_life_loss": false, "repeat_action_probability": 0.25, "full_action_space": false, "ale_frameskip": 1}}'
	# The command line's options and a config's env_options reach the env.
	run --separate-stderr seed-gym --env ALE/Pong-v5 --sticky 0 --noop-max 7 --full-action-space --frame-stack 2 --spec
	assert_success
	echo "$output" | jq -e '.obs_shape == [84, 84, 2] and .num_actions == 18 and .atari.noop_max == 7 and
		.atari.repeat_action_probability == 0 and .atari.full_action_space and .atari.frame_stack == 2'
	run --separate-stderr seed-gym --env ALE/Pong-v5 --spec --env-options \
		'{"repeat_action_probability": 0.5, "full_action_space": true, "atari": {"noop_max": 0, "frame_skip": 3, "screen_size": 42}}'
	assert_success
	echo "$output" | jq -e '.obs_shape == [42, 42, 4] and .num_actions == 18 and .atari.noop_max == 0 and
		.atari.frame_skip == 3 and .atari.repeat_action_probability == 0.5'
	# Off: ALE's own frames (RGB, frame skip 4).
	run --separate-stderr seed-gym --env ALE/Pong-v5 --no-atari --spec
	assert_success
	assert_output '{"env": "gym:ALE/Pong-v5", "obs_dtype": "u8", "obs_shape": [210, 160, 3], "num_actions": 6, "max_steps": 0}'
	run --separate-stderr seed-gym --env ALE/Pong-v5 --env-options '{"atari": false}' --spec
	assert_success
	echo "$output" | jq -e '.obs_shape == [210, 160, 3] and (has("atari") | not)'
}

@test "the observations are the preprocessing done by hand on ALE's frames, stack last, u8 in 0..255" {
	need_ale
	random_actions 150 1 3 >"$D/actions"
	seed-gym --env ALE/Pong-v5 --sticky 0 --noop-max 0 --seed 5 --actions "$D/actions" --out "$D/f.msgpack" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/atari_frames.py" reference ALE/Pong-v5 5 "$D/actions" "$D/f.msgpack"
	echo "$output"
	assert_success
	assert_line "151 frames equal"
	# Four envs with the default settings: the stack shifts by one a step.
	random_actions 200 4 4 >"$D/actions4"
	seed-gym --env ALE/Pong-v5 --envs 4 --actions "$D/actions4" --out "$D/g.msgpack" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/atari_frames.py" check "$D/g.msgpack"
	echo "$output"
	assert_success
	assert_line --regexp '^201 frames, 4 envs, values [0-9]+\.\.[0-9]+, 800 shifts checked$'
}

@test "no-op starts and sticky actions reach the env: the same actions give different trajectories" {
	need_ale
	random_actions 100 8 5 >"$D/actions"
	distinct() {
		seed-gym --env ALE/Pong-v5 --envs 8 --seed 9 "$@" --actions "$D/actions" --out "$D/f.msgpack" --quiet
		python3 "$SEED_SRCDIR/tests/golden/atari_frames.py" distinct "$D/f.msgpack"
	}
	# Deterministic without either: eight seeds, one trajectory.
	[ "$(distinct --sticky 0 --noop-max 0)" -eq 1 ]
	# Up to 30 no-ops after the reset: the envs start at different frames.
	[ "$(distinct --sticky 0)" -ge 4 ]
	# Sticky actions, no no-ops: each env repeats actions at random.
	[ "$(distinct --noop-max 0)" -ge 4 ]
	# And through env_options.
	[ "$(distinct --env-options '{"repeat_action_probability": 0.25, "atari": {"noop_max": 0}}')" -ge 4 ]
}

@test "seed-gym steps Pong for seed-infer --policy random: 400 steps, unrolls of u8 [84,84,4] at frame skip 4" {
	need_ale
	seed-infer --bind "ipc://$D/infer" --policy random --unrolls "$D/u.msgpack" --unroll-length 20 \
		--stats-interval 0 2>"$D/infer.err" &
	infer=$!
	PIDS=$infer
	run --separate-stderr seed-gym --env ALE/Pong-v5 --envs 4 --steps 100 --connect "ipc://$D/infer"
	echo "$stderr"
	assert_success
	[[ "$stderr" == *"seed-gym: 400 env steps in "* ]]
	wait_for_handler $infer 15
	kill -TERM $infer
	wait $infer
	cat "$D/infer.err"
	grep -q ' 400 steps, .* 0 bad frames, 0 resends, 0 gaps, 2 halves' "$D/infer.err"
	# 100 steps of each half send its step frames 0..99: 4 unrolls of 20
	# steps a half (21 observations, overlapping by one), [envs, T + 1, ...].
	run sh -c "seed-cat '$D/u.msgpack' | jq -c 'select(.type == \"unroll\") | [.obs.dtype, .obs.shape, .frame_skip]' | sort | uniq -c"
	echo "$output"
	assert_output --regexp '^ +8 \["u8",\[2,21,84,84,4\],4\]$'
}

@test "the step frames say the frame skip: the preprocessing's, or ALE's own without it" {
	need_ale
	random_actions 3 2 1 >"$D/actions"
	skips() {
		seed-gym --env ALE/Pong-v5 --envs 2 "$@" --actions "$D/actions" --out "$D/f.msgpack" --quiet
		seed-cat "$D/f.msgpack" | jq -r '.frame_skip // "none"' | sort | uniq -c | awk '{ print $1, $2 }'
	}
	[ "$(skips)" = "4 4" ]
	[ "$(skips --frame-skip 3)" = "4 3" ]
	[ "$(skips --env-options '{"atari": {"frame_skip": 1}}')" = "4 none" ]
	[ "$(skips --no-atari)" = "4 4" ]
	[ "$(skips --no-atari --env-options '{"frameskip": 2}')" = "4 2" ]
}

@test "seed-train runs the preset atari-pong for a few thousand frames and evaluates it through seed-gym" {
	need_ale
	run --separate-stderr seed-train atari-pong --seed 1 --frames 3000 --dir "$D/run" --set eval_episodes=1 --quiet
	echo "$stderr"
	assert_success
	echo "$output" | jq -e '.eval.env == "gym:ALE/Pong-v5" and .eval.episodes == 1 and .eval.return.mean >= -21'
	[ -s "$D/run/checkpoint.json" ]
	# Frames are emulator frames, 4 an agent step; the budget is in frames.
	jq -e '.frames == 4 * .agent_steps and .frames >= 3000' "$D/run/checkpoint.json"
	jq -se 'length > 0 and all(.frames == 4 * .agent_steps)' "$D/run/metrics.jsonl"
	echo "$output" | jq -e '.frames == 4 * .agent_steps'
	# Either actor may be stopped before it served (tests/cli/gym.bats says why).
	cat "$D"/run/actor-[01].metrics.jsonl | grep -q '"frac_step"'
}

@test "--backend: misuse is a usage error before any import" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	run --separate-stderr seed-gym --env ALE/Pong-v5 --backend bogus --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --backend: unknown backend 'bogus' (known: gymnasium, envpool)" ]
	for args in "--env CartPole-v1" "--env ALE/Pong-v5 --no-atari"; do
		run --separate-stderr seed-gym $args --backend envpool --spec
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "seed-gym: --backend envpool steps ALE/ ids with the Atari preprocessing only" ]
	done
	run --separate-stderr seed-gym --env ALE/Pong-v5 --backend envpool --rgb --actions - --out -
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --rgb needs --backend gymnasium (EnvPool draws no pictures)" ]
	run --separate-stderr seed-gym --env ALE/Pong-v5 --backend envpool --noop-max 0 --spec
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == "seed-gym: --backend envpool: noop_max 0 is not one EnvPool takes"* ]]
}

@test "--backend envpool: with sticky actions off and one no-op, the frames are ale-py's byte for byte" {
	need_envpool
	need_ale
	# Deterministic on both sides: no sticky actions, exactly one no-op
	# after each reset.  150 steps of two envs with random actions.
	python3 -c "import random; r = random.Random(3)
for _ in range(150): print(r.randrange(6), r.randrange(6))" >"$D/actions"
	opts='{"repeat_action_probability": 0, "atari": {"noop_max": 1}}'
	seed-gym --env ALE/Pong-v5 --backend envpool --envs 2 --env-options "$opts" --actions "$D/actions" \
		--out "$D/envpool.msgpack" --quiet
	seed-gym --env ALE/Pong-v5 --envs 2 --env-options "$opts" --actions "$D/actions" \
		--out "$D/gym.msgpack" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/gym_frames.py" compare "$D/envpool.msgpack" "$D/gym.msgpack"
	echo "$output" | head -c 2000
	assert_success
	assert_output "151 frames equal"
	# The frames are Pong's: the last one's observations are not blank.
	[ "$(seed-cat "$D/envpool.msgpack" | tail -n 1 | jq '[.obs.data[][][][]] | max')" -gt 0 ]
}

@test "--backend envpool: u8 [84,84,4], its settings in --spec, an episode's end reset in the same step" {
	need_envpool
	run --separate-stderr seed-gym --env ALE/Pong-v5 --backend envpool --spec
	assert_success
	echo "$output" | jq -e '.obs_dtype == "u8" and .obs_shape == [84, 84, 4] and .num_actions == 6 and
		.atari.backend == "envpool" and .atari.repeat_action_probability == 0.25 and .atari.noop_max == 30'
	# EnvPool's time limit counts agent steps: 50 here, so steps 50 and
	# 100 truncate every env, with final_obs, and the row of obs is the new
	# episode's first: a stack of four copies of one screen.
	yes '0 1 2 3' | head -n 120 >"$D/actions"
	seed-gym --env ALE/Pong-v5 --backend envpool --envs 4 --env-options '{"max_episode_steps": 50}' \
		--actions "$D/actions" --out "$D/f.msgpack" --quiet
	run python3 -c '
import sys, msgpack, numpy as np
for i, f in enumerate(msgpack.Unpacker(open(sys.argv[1], "rb"), raw=False, max_buffer_size=1 << 30)):
    if "final_obs" in f or f["truncated"]["data"] != b"\0\0\0\0":
        o = np.frombuffer(f["obs"]["data"], np.uint8).reshape(f["obs"]["shape"])
        fo = np.frombuffer(f["final_obs"]["data"], np.uint8).reshape(f["obs"]["shape"])
        reset = all((o[k, :, :, j] == o[k, :, :, 0]).all() for k in range(4) for j in range(4))
        moved = all(not (fo[k, :, :, 3] == fo[k, :, :, 0]).all() for k in range(4))
        print(i, list(f["truncated"]["data"]), np.frombuffer(f["ep_length"]["data"], "<i4").tolist(), reset, moved)
' "$D/f.msgpack"
	echo "$output"
	assert_success
	assert_output "50 [1, 1, 1, 1] [50, 50, 50, 50] True True
100 [1, 1, 1, 1] [50, 50, 50, 50] True True"
}

@test "seed-eval --record of gym:ALE/Pong-v5: ALE's 160 x 210 screens, a frame per step and one to start" {
	need_ale
	# A TimeLimit of 200 emulator frames: about 50 steps of frame skip 4.
	run --separate-stderr seed-eval --env gym:ALE/Pong-v5 --env-options '{"max_episode_steps": 200}' --episodes 1 \
		--record "$D/pong.gif"
	echo "$stderr"
	assert_success
	length=$(echo "$output" | jq .length.max)
	[ "$length" -ge 40 ] && [ "$length" -le 50 ]
	run gifinfo "$D/pong.gif"
	[ "${lines[0]}" = "size 160 210" ]
	[ "${lines[1]}" = "frames $((length + 1))" ]
	# Pong's playing field, in ALE's NTSC palette.
	[ "$(gifinfo "$D/pong.gif" "$length" 80 100)" = "144 72 17" ]
}
