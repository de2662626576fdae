#!/usr/bin/env bats
# seed-eval on Gymnasium's environments (gym:ID), played through a seed-gym
# child: the summary, --record and --render.  The reference is Gymnasium
# itself: tests/golden/gym_replay.py replays the actions seed-eval sent (kept
# by a wrapper standing in for seed-gym) and draws every picture, which must
# equal the GIF's frames as giflib decodes them (tests/cli/gifinfo).  Without
# python3's gymnasium, numpy, pyzmq, msgpack or pygame (Gymnasium's
# classic-control pictures) those tests skip, saying which is missing
# (scripts/install-deps installs them).

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export TMPDIR=$D
}

teardown() {
	rm -rf "$D"
}

# keep_actions: SEED_GYM is a wrapper that copies what seed-eval writes to
# seed-gym (one line of actions a step) into $D/actions.
keep_actions() {
	cat >"$D/gym" <<EOF
#!/bin/sh
tee "$D/actions" | seed-gym "\$@"
EOF
	chmod +x "$D/gym"
	export SEED_GYM="$D/gym"
}

# A Gymnasium environment that cannot draw RGB pictures: CartPole that
# says it renders "ansi" only, in a module of its own (gymnasium.make
# imports it for the id norgb:NoRgb-v0).
norgb_module() {
	cat >"$D/norgb.py" <<'EOF'
import gymnasium
from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class NoRgb(CartPoleEnv):
    metadata = {"render_modes": ["ansi"], "render_fps": 50}


gymnasium.register("NoRgb-v0", entry_point=NoRgb, max_episode_steps=500)
EOF
	export PYTHONPATH="$D${PYTHONPATH:+:$PYTHONPATH}"
}

@test "--record of gym:CartPole-v1: Gymnasium's own episodes, and its pictures frame for frame" {
	need_gym_render
	keep_actions
	mkdir "$D/rec"
	run --separate-stderr seed-eval --env gym:CartPole-v1 --episodes 2 --record-episodes 2 --seed 7 \
		--record "$D/rec/out.gif"
	echo "$stderr"
	assert_success
	[ -z "$stderr" ]
	summary=$output
	# Gymnasium, replaying the actions sent: the same two episodes.
	run python3 "$SEED_SRCDIR/tests/golden/gym_replay.py" CartPole-v1 7 "$D/actions"
	assert_success
	ref=$output
	echo "$ref" | jq -e '.episodes | length == 2'
	[ "$(echo "$summary" | jq -c '[.length.min, .length.max, .return.min, .return.max]')" = \
		"$(echo "$ref" | jq -c '[.episodes | map(.[1]) | (min, max)] + [.episodes | map(.[0]) | (min, max)]')" ]
	# The GIF: Gymnasium's picture size, a frame for each state of the two
	# episodes (each episode's steps and its first state)...
	run gifinfo "$D/rec/out.gif"
	assert_success
	[ "${lines[0]}" = "size $(echo "$ref" | jq -r '.size | join(" ")')" ]
	frames=$(echo "$ref" | jq .frames)
	[ "$frames" -eq "$(echo "$summary" | jq '.length.min + .length.max + 2')" ]
	[ "${lines[1]}" = "frames $frames" ]
	# ... each the picture Gymnasium draws of that state.
	mkdir "$D/ppm"
	for ((i = 0; i < frames; i++)); do
		gifinfo "$D/rec/out.gif" "$i" >"$D/ppm/$i.ppm"
	done
	run --separate-stderr python3 "$SEED_SRCDIR/tests/golden/gym_replay.py" CartPole-v1 7 "$D/actions" "$D/ppm"
	echo "$stderr"
	assert_success
	[ "$stderr" = "$frames frames equal" ]
	# Written whole, with nothing left beside it.
	[ "$(ls -A "$D/rec")" = out.gif ]
}

@test "a checkpoint plays gym:CartPole-v1: --record and --render of its episode" {
	need_gym_render
	# A fresh actor-critic model for Seed's cartpole, whose observations
	# and actions Gymnasium's CartPole-v1 shares.
	qcheckpoint "$D/ck" cartpole '{"torso": [{"type": "linear", "out": 16}, {"type": "relu"}]}' 3
	run --separate-stderr seed-eval --checkpoint "$D/ck" --env gym:CartPole-v1 --greedy --episodes 1 --seed 2 \
		--record "$D/ck.gif"
	echo "$stderr"
	assert_success
	summary=$output
	echo "$summary" | jq -e '.env == "gym:CartPole-v1" and .policy == "checkpoint" and .greedy'
	length=$(echo "$summary" | jq .length.max)
	run gifinfo "$D/ck.gif"
	[ "${lines[0]}" = "size 600 400" ]
	[ "${lines[1]}" = "frames $((length + 1))" ]
	# The same episode without pictures, and drawn in the terminal: 60
	# columns, 400 / 600 of that in pixel rows (40: 20 text rows).
	[ "$(seed-eval --checkpoint "$D/ck" --env gym:CartPole-v1 --greedy --episodes 1 --seed 2)" = "$summary" ]
	run --separate-stderr seed-eval --checkpoint "$D/ck" --env gym:CartPole-v1 --greedy --episodes 1 --seed 2 \
		--render --render-width 60 --render-delay 0
	assert_success
	[ "$(printf '%s\n' "$output" | tail -n 1)" = "$summary" ]
	status_lines=$(printf '%s\n' "$output" | grep -a '^env 0 ')
	[ "$(printf '%s\n' "$status_lines" | wc -l)" -eq $((length + 1)) ]
	printf '%s\n' "$status_lines" | head -n 1 | grep -q '^env 0  episode 1  step 0  reward 0  return 0$'
	printf '%s\n' "$status_lines" | tail -n 1 |
		grep -Eq "^env 0  episode 1  step $length  reward 1  return $length  (terminated|truncated)\$"
	rows=$(printf '%s\n' "$output" | LC_ALL=C grep -ac $'\xe2\x96\x80')
	[ "$rows" -eq $(((length + 1) * 20)) ]
	[ "$(printf '%s\n' "$output" | LC_ALL=C awk '/\xe2\x96\x80/ { print gsub(/\xe2\x96\x80/, "") }' | sort -u)" = 60 ]
	# The top left corner is Gymnasium's white background.
	[[ "$(printf '%s\n' "$output" | head -n 1)" == $'\e[38;2;255;255;255m\e[48;2;255;255;255m'* ]]
}

@test "gym:CartPole-v1: --max-episode-steps cuts episodes and counts them; Gymnasium's shorter limit is no cut" {
	need_gym
	# CartPole-v1 cannot fail before its 8th step (tests/cli/seed-eval.bats
	# works it out): a cap of 5 cuts every episode at 5 steps.
	run --separate-stderr seed-eval --env gym:CartPole-v1 --episodes 6 --envs 4 --max-episode-steps 5
	assert_success
	[ "$(jq -c '[.length.min, .length.max, .truncated, .max_episode_steps]' <<<"$output")" = "[5,5,6,5]" ]
	run --separate-stderr seed-eval --env gym:CartPole-v1 --env-options '{"max_episode_steps": 3}' --episodes 6 \
		--envs 4 --max-episode-steps 5
	assert_success
	[ "$(jq -c '[.length.min, .length.max, .truncated]' <<<"$output")" = "[3,3,0]" ]
}

@test "an environment that cannot draw RGB, a bad id, no seed-gym: errors that say so, and no GIF" {
	need_gym
	norgb_module
	run --separate-stderr seed-eval --env gym:norgb:NoRgb-v0 --episodes 1 --record "$D/x.gif"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"seed-gym: --env norgb:NoRgb-v0: --rgb: it cannot draw RGB pictures (its render modes: ansi)"* ]]
	[ "${stderr_lines[${#stderr_lines[@]} - 1]}" = \
		"seed-eval: gym:norgb:NoRgb-v0: seed-gym stopped before its first frame (status 1; its message is above)" ]
	[ ! -e "$D/x.gif" ]
	run --separate-stderr seed-eval --env gym:norgb:NoRgb-v0 --episodes 1 --render
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"it cannot draw RGB pictures (its render modes: ansi)"* ]]
	# It plays without pictures.
	run --separate-stderr seed-eval --env gym:norgb:NoRgb-v0 --episodes 2
	assert_success
	echo "$output" | jq -e '.env == "gym:norgb:NoRgb-v0" and .episodes == 2'
	run --separate-stderr seed-eval --env gym:NoSuchEnv-v0 --episodes 1
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"seed-gym: --env NoSuchEnv-v0: gymnasium.make failed: "* ]]
	[[ "$stderr" == *"seed-eval: gym:NoSuchEnv-v0: seed-gym stopped before its first frame (status 2; its message is above)" ]]
	SEED_GYM="$D/no-such-program" run --separate-stderr seed-eval --env gym:CartPole-v1 --episodes 1
	[ "$status" -eq 1 ]
	[ "$stderr" = "seed-eval: gym:CartPole-v1: cannot run $D/no-such-program: No such file or directory (it is installed with Seed; or set SEED_GYM)" ]
}

@test "seed-gym stopping in the middle of a recording is an error, and leaves no GIF" {
	need_gym_render
	# Three lines of actions reach seed-gym, then its input ends (read and
	# printf pass each line on at once, where head would hold them back).
	cat >"$D/gym" <<'EOF'
#!/bin/sh
n=0
while [ $n -lt 3 ] && IFS= read -r line; do
	printf '%s\n' "$line"
	n=$((n + 1))
done | seed-gym "$@"
EOF
	chmod +x "$D/gym"
	SEED_GYM="$D/gym" run --separate-stderr seed-eval --env gym:CartPole-v1 --episodes 3 --record "$D/x.gif"
	[ "$status" -eq 1 ]
	[ "$stderr" = "seed-eval: gym:CartPole-v1: $D/gym stopped in the middle of an episode (status 0; its message is above)" ]
	[ ! -e "$D/x.gif" ]
	[ "$(ls -A "$D" | tr '\n' ' ')" = "gym " ]
}

@test "seed-gym --rgb: offline mode only, and rgb_array is its render mode" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	run --separate-stderr seed-gym --env CartPole-v1 --rgb --connect ipc://x
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = "seed-gym: --rgb goes with --actions and --out (offline mode)" ]
	run --separate-stderr seed-gym --env CartPole-v1 --rgb --env-options '{"render_mode": "human"}' \
		--actions /dev/null --out /dev/null
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "render_mode" is "human": --rgb draws with "rgb_array"' ]
}

@test "seed-gym --rgb: env 0's pictures in the frames, final_rgb where its episode ended" {
	need_gym_render
	# Always right: CartPole-v1 from seed 1 falls within a few dozen steps.
	yes '1 1' | head -n 60 >"$D/actions"
	run seed-gym --env CartPole-v1 --envs 2 --seed 1 --rgb --actions "$D/actions" --out "$D/f.msgpack" --quiet
	assert_success
	# Every frame: rgb u8 [400, 600, 3]; final_rgb exactly where env 0 ended.
	run python3 -c '
import sys, msgpack
ends = finals = wrong = n = 0
for f in msgpack.Unpacker(open(sys.argv[1], "rb"), raw=False, max_buffer_size=1 << 30):
    n += 1
    ok = f["rgb"]["dtype"] == "u8" and f["rgb"]["shape"] == [400, 600, 3] and len(f["rgb"]["data"]) == 720000
    ended = f["terminated"]["data"][0] or f["truncated"]["data"][0]
    ends += bool(ended)
    finals += "final_rgb" in f
    wrong += (not ok) or (ended != ("final_rgb" in f))
print(n, ends, finals, wrong)' "$D/f.msgpack"
	assert_success
	read -r n ends finals wrong <<<"$output"
	[ "$n" -eq 61 ]
	[ "$ends" -ge 2 ]
	[ "$finals" -eq "$ends" ]
	[ "$wrong" -eq 0 ]
}

@test "SIGTERM: seed-eval says how far it got, and its seed-gym ends with it" {
	need_gym
	seed-eval --env gym:CartPole-v1 --episodes 10000000 --seed 31337 >/dev/null 2>"$D/err" &
	pid=$!
	# seed-eval catches signals once seed-gym's first frame is in.
	wait_for_handler $pid 15
	sleep 0.5
	kill -TERM $pid
	st=0
	wait $pid || st=$?
	cat "$D/err"
	[ "$st" -eq 1 ]
	grep -Eq '^seed-eval: interrupted after [0-9]+ of 10000000 episodes$' "$D/err"
	# seed-gym's input closed with seed-eval, which ends it.
	for i in $(seq 50); do
		pgrep -f -- '--seed 31337 --quiet --actions - --out -' >/dev/null || break
		sleep 0.1
	done
	! pgrep -f -- '--seed 31337 --quiet --actions - --out -'
}
