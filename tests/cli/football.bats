#!/usr/bin/env bats
# seed-gym on Google Research Football (football:SCENARIO, through gfootball
# 2.10.2 and its gym 0.21): SEED RL's settings by default (the stacked
# super-mini-map, u8 [72, 96, 16]; the scoring reward; the default action
# set of 19), the env options checked before anything is imported, the
# frames' layout against a recorded stream (tests/golden/data/football-*),
# episodes that end at a goal (terminated, return 1) or when the scenario's
# time runs out (truncated), and seed-train on the preset
# football-empty-goal-close, the mini-map drawn as --rgb's picture, and a
# match of a trained checkpoint recorded by seed-eval.  Without gfootball
# (which CI does not install: scripts/install-deps --football does) those
# tests skip, saying so; the usage errors and the recorded frames need no
# Python package, and the drawing only numpy.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	export TMPDIR=$D
	GOLDEN="$SEED_SRCDIR/tests/golden/data"
}

teardown() {
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$D"
}

# layout: each frame of a step-frame stream on stdin as one line: its
# fields, and the dtype and shape of each tensor, with the values' range
# for obs (not the values: gfootball's engine is not reproducible).
layout() {
	seed-cat - | jq -c '[to_entries[] | select(.key != "run") |
		if (.value | type) == "object" then [.key, .value.dtype, .value.shape] else [.key] end] +
		[[.obs.data | .. | numbers] | [min, max]]'
}

@test "football options: misuse is a usage error naming the key or option, before any import" {
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	# A gymnasium that cannot be imported: the errors come before it is.
	mkdir -p "$D/broken/gymnasium"
	printf 'raise ImportError("imported")\n' >"$D/broken/gymnasium/__init__.py"
	export PYTHONPATH="$D/broken"
	e=football:academy_empty_goal_close
	run --separate-stderr seed-gym --env $e --env-options '{"representation": "pixels"}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "representation" must be one of "extracted", "simple115v2", "simple115", not "pixels"' ]
	run --separate-stderr seed-gym --env $e --env-options '{"rewards": "checkpoints"}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "rewards" must be one of "scoring", "scoring,checkpoints", not "checkpoints"' ]
	run --separate-stderr seed-gym --env $e --env-options '{"stacked": 1}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "stacked" must be true or false, not 1' ]
	run --separate-stderr seed-gym --env $e --env-options '{"representation": "simple115v2", "stacked": true}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "stacked": gfootball stacks the "extracted" representation only, not "simple115v2"' ]
	run --separate-stderr seed-gym --env $e --env-options '{"atari": true}' --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --env-options: "atari" is not an option of football: environments (known: representation, stacked, rewards)' ]
	run --separate-stderr seed-gym --env $e --frame-stack 2 --spec
	[ "$status" -eq 2 ]
	[ "${stderr_lines[0]}" = 'seed-gym: --frame-stack does not go with a football: environment' ]
	run --separate-stderr seed-gym --env $e --backend envpool --spec
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == 'seed-gym: --backend envpool steps ALE/ ids only'* ]]
	run --separate-stderr seed-gym --env gym:football: --spec
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == 'seed-gym: --env football:: "football:" must be followed by a scenario name'* ]]
	# Good options pass on to the import; --rgb too (the mini-map drawn).
	run --separate-stderr seed-gym --env $e --env-options '{"representation": "simple115", "rewards": "scoring,checkpoints"}' --spec
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"needs Python's gymnasium, numpy, pyzmq and msgpack: imported"* ]]
	run --separate-stderr seed-gym --env $e --rgb --actions /dev/null --out "$D/f"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"needs Python's gymnasium, numpy, pyzmq and msgpack: imported"* ]]
}

@test "football's picture: the mini-map of a hand-made raw observation, drawn without gfootball" {
	need_python scripts/install-deps numpy
	# seed-gym's football_picture, loaded from the program itself: numpy is
	# all it needs.  The geometry is gfootball's super-mini-map at 4 pixels
	# a cell, 384 x 288: column int((x + 1) / 2 * 384), row
	# int((y + 1/2.25) * 2.25 / 2 * 288) = int((2.25 y + 1) * 144), y
	# growing downwards; the colours are seed-gym(1)'s (PICTURES).
	cat >"$D/picture.py" <<'PY'
import importlib.machinery
import importlib.util
import sys
import numpy as np
loader = importlib.machinery.SourceFileLoader("seed_gym", sys.argv[1])
spec = importlib.util.spec_from_loader("seed_gym", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
PITCH, WHITE, BLACK = (30, 120, 50), (255, 255, 255), (0, 0, 0)
YELLOW, BLUE, RED = (255, 210, 0), (40, 110, 255), (230, 40, 40)
o = {"left_team": np.array([[-1.0, 0.2], [-0.5, -0.3]]), "right_team": np.array([[0.5, 0.42]]),
     "ball": np.array([0.0, 0.0, 0.1]), "active": 1, "score": [0, 0]}
img = m.football_picture(np, o)
assert img.shape == (288, 384, 3) and img.dtype == np.uint8, (img.shape, img.dtype)
bad = []
def at(r, c, colour, pic=None):
    got = tuple(int(v) for v in (img if pic is None else pic)[r, c])
    if got != colour:
        bad.append("(%d, %d): %s, not %s" % (r, c, got, colour))
at(100, 50, PITCH)
# The halfway line (x 0: column 192, 2 pixels wide), the touchlines (y
# -0.42: row 7.92, rows 7 and 8; y 0.42: row 280.08, rows 279 and 280) and
# the goal lines (x -1 and 1: the first and last 2 columns).
for c in (191, 192): at(100, c, WHITE)
for c in (190, 193): at(100, c, PITCH)
for r in (7, 8, 279, 280): at(r, 50, WHITE)
for r in (6, 9, 278, 281): at(r, 50, PITCH)
for c in (0, 1, 382, 383): at(60, c, WHITE)
for c in (2, 381): at(60, c, PITCH)
# The goal mouths: y in [-0.044, 0.044], rows 129.74 to 158.26, so rows
# 130 to 157, 4 pixels deep.
for r in (130, 157):
    for c in (3, 380): at(r, c, WHITE)
for r in (129, 158): at(r, 3, PITCH)
for c in (4, 379): at(140, c, PITCH)
# The ball at the centre spot: pixel (144, 192), a white disc of radius 3
# in a black rim to radius 4, over the halfway line.
for r, c in ((144, 192), (144, 191), (143, 191), (144, 195), (141, 192)): at(r, c, WHITE)
for r, c in ((144, 196), (140, 192), (148, 192), (144, 188)): at(r, c, BLACK)
at(144, 197, PITCH)
# Left player 0 at x -1, y 0.2: the left edge, row 208.8, so (208, 0), a
# disc of radius 5 over the goal line; player 1 at (-0.5, -0.3), row 46.8,
# column 96, is the active one: red.
for r, c in ((208, 0), (208, 5), (203, 0), (212, 1)): at(r, c, YELLOW)
at(208, 6, PITCH)
at(202, 0, WHITE)
for r, c in ((46, 96), (46, 101), (41, 96), (51, 96)): at(r, c, RED)
at(46, 102, PITCH)
# The right player at x 0.5, y 0.42: column 288, row 280.08: the bottom
# (gfootball's y grows downwards), nothing at the top.
for r, c in ((280, 288), (284, 288), (280, 293)): at(r, c, BLUE)
for r, c in ((286, 288), (3, 288), (12, 288)): at(r, c, PITCH)
# The score 0-0: "0-0" in 3x5 digits of 2-pixel dots, 22 pixels wide, in a
# black box of 26 x 14 from column 192 - 13 = 179, row 0; glyph i starts
# at column 181 + 8 i, row 2.
for r, c in ((0, 179), (13, 204), (6, 183), (2, 191), (2, 189)): at(r, c, BLACK)
for r, c in ((0, 178), (0, 205), (14, 186)): at(r, c, PITCH)
for r, c in ((2, 181), (11, 186), (6, 189), (7, 194), (2, 197)): at(r, c, WHITE)
# 1-0: the first glyph's top row is ".#.".
one = m.football_picture(np, dict(o, score=[1, 0]))
at(2, 181, BLACK, one)
at(2, 183, WHITE, one)
diff = np.argwhere((one != img).any(axis=2))
assert len(diff) and diff[:, 0].min() >= 2 and diff[:, 0].max() <= 11 and diff[:, 1].min() >= 181 \
    and diff[:, 1].max() <= 186, diff
# No active player (-1): player 1 is yellow, nothing red.
none = m.football_picture(np, dict(o, active=-1))
at(46, 96, YELLOW, none)
assert not (none == RED).all(axis=2).any()
# A position off the mini-map is clamped to its edge: the ball at (1.05,
# 0.5) is drawn at the bottom right corner.
out = m.football_picture(np, dict(o, ball=np.array([1.05, 0.5, 0.0])))
at(287, 383, WHITE, out)
at(283, 383, BLACK, out)
assert not bad, "\n".join(bad)
print("ok")
PY
	run python3 "$D/picture.py" "$SEED_BUILDDIR/cmd/seed-gym"
	assert_success
	assert_output ok
}

@test "without gfootball, a football: env says that scripts/install-deps --football installs it" {
	need_gym
	mkdir -p "$D/nofb/gfootball"
	printf 'raise ImportError("No module named gfootball")\n' >"$D/nofb/gfootball/__init__.py"
	run --separate-stderr env PYTHONPATH="$D/nofb" seed-gym --env football:academy_empty_goal_close --spec
	[ "$status" -eq 1 ]
	[ "$stderr" = "seed-gym: --env football:academy_empty_goal_close: needs Python's gfootball 2.10.2 (with gym 0.21.0): No module named gfootball (scripts/install-deps --football installs them)" ]
}

@test "the recorded frames: extracted is u8 [72,96,16] of 0 and 255, simple115v2 f32 [115], 19 actions" {
	command -v gzip >/dev/null || skip "no gzip"
	# seed-gym --env football:academy_empty_goal_close (and with
	# '{"representation": "simple115v2"}') --actions (5, 5, 12) --out FILE,
	# the first gzipped: a reset and three steps.
	run sh -c "gzip -dc '$GOLDEN/football-extracted.frames.gz' | seed-cat --strict - | jq -c '[.type, .seq, .obs.dtype, .obs.shape, .num_actions, .reward.data[0], .terminated.data[0], ([.obs.data | .. | numbers] | unique)]'"
	assert_success
	assert_output - <<'OUT'
["step",0,"u8",[1,72,96,16],19,0,0,[0,255]]
["step",1,"u8",[1,72,96,16],19,0,0,[0,255]]
["step",2,"u8",[1,72,96,16],19,0,0,[0,255]]
["step",3,"u8",[1,72,96,16],19,0,0,[0,255]]
OUT
	run sh -c "seed-cat --strict '$GOLDEN/football-simple115v2.frames' | jq -c '[.seq, .obs.dtype, .obs.shape, .num_actions, (.obs.data | flatten | length)]'"
	assert_success
	assert_output - <<'OUT'
[0,"f32",[1,115],19,115]
[1,"f32",[1,115],19,115]
[2,"f32",[1,115],19,115]
[3,"f32",[1,115],19,115]
OUT
}

@test "--spec of a scenario: SEED RL's settings by default, the options read back, and frames laid out as recorded" {
	need_football
	run --separate-stderr seed-gym --env gym:football:academy_empty_goal_close --spec
	assert_success
	assert_output '{"env": "gym:football:academy_empty_goal_close", "obs_dtype": "u8", "obs_shape": [72, 96, 16], "num_actions": 19, "max_steps": 0, "football": {"scenario": "academy_empty_goal_close", "representation": "extracted", "stacked": true, "rewards": "scoring", "game_duration": 400}}'
	run --separate-stderr seed-gym --env football:11_vs_11_easy_stochastic --spec \
		--env-options '{"representation": "simple115v2", "rewards": "scoring,checkpoints"}'
	assert_success
	assert_output '{"env": "gym:football:11_vs_11_easy_stochastic", "obs_dtype": "f32", "obs_shape": [115], "num_actions": 19, "max_steps": 0, "football": {"scenario": "11_vs_11_easy_stochastic", "representation": "simple115v2", "stacked": false, "rewards": "scoring,checkpoints", "game_duration": 3000}}'
	run --separate-stderr seed-gym --env football:academy_empty_goal_close --env-options '{"stacked": false}' --spec
	assert_success
	echo "$output" | jq -e '.obs_dtype == "u8" and .obs_shape == [72, 96, 4]'
	# The frames seed-gym writes now are laid out as the recording's.
	printf '5\n5\n12\n' >"$D/actions"
	seed-gym --env football:academy_empty_goal_close --actions "$D/actions" --out "$D/ext.frames" --quiet
	[ "$(layout <"$D/ext.frames")" = "$(gzip -dc "$GOLDEN/football-extracted.frames.gz" | layout)" ]
	seed-gym --env football:academy_empty_goal_close --env-options '{"representation": "simple115v2"}' \
		--actions "$D/actions" --out "$D/s115.frames" --quiet
	[ "$(layout <"$D/s115.frames" | jq -c '.[:-1]')" = "$(layout <"$GOLDEN/football-simple115v2.frames" | jq -c '.[:-1]')" ]
	# An unknown scenario is named, with the ones there are.
	run --separate-stderr seed-gym --env football:no_such_scenario --spec
	[ "$status" -eq 2 ]
	[[ "$stderr" == 'seed-gym: --env football:no_such_scenario: gfootball has no scenario "no_such_scenario" (its scenarios: 11_vs_11_competition, '*'academy_empty_goal_close, '*')' ]]
}

@test "episodes end at a goal (terminated, return 1) or when the scenario's time runs out (truncated, with final_obs)" {
	need_football
	# Shooting at once from in front of the empty goal scores (the engine
	# is stochastic: a shot that misses ends the episode out of play,
	# terminated too, with return 0).
	for i in $(seq 60); do echo 12; done >"$D/shoot"
	seed-gym --env football:academy_empty_goal_close --actions "$D/shoot" --out "$D/shoot.frames" --quiet
	run sh -c "seed-cat '$D/shoot.frames' | jq -c 'select(.terminated.data[0] == 1 or .truncated.data[0] == 1) | [.terminated.data[0], .truncated.data[0], .reward.data[0], .ep_return.data[0], .final_obs == null]'"
	assert_success
	[ "${#lines[@]}" -ge 1 ]
	for l in "${lines[@]}"; do [[ "$l" == "[1,0,1,1,true]" || "$l" == "[1,0,0,0,true]" ]]; done
	[[ " ${lines[*]} " == *" [1,0,1,1,true] "* ]]
	# The episode after a goal starts at the reset: its first frame's counters are 0.
	n=$(seed-cat "$D/shoot.frames" | jq -s 'map(select(.terminated.data[0] == 1)) | .[0].seq')
	seed-cat "$D/shoot.frames" | jq -e -s --argjson n "$n" '.[$n].ep_length.data[0] > 0 and .[$n + 1].ep_length.data[0] == 1'
	# 1_vs_1_easy lasts 500 steps and does not end on a goal: standing
	# still, the episode is cut by the clock, truncated.
	for i in $(seq 520); do echo 0; done >"$D/idle"
	seed-gym --env football:1_vs_1_easy --env-options '{"representation": "simple115v2"}' --actions "$D/idle" \
		--out "$D/idle.frames" --quiet
	run sh -c "seed-cat '$D/idle.frames' | jq -c 'select(.terminated.data[0] == 1 or .truncated.data[0] == 1) | [.terminated.data[0], .truncated.data[0], (.final_obs.shape // null)]'"
	assert_success
	assert_output '[0,1,[1,115]]'
}

@test "--rgb of a scenario: the mini-map in every frame, final_rgb the state a goal ended in, drawn before the reset" {
	need_football
	for i in $(seq 60); do echo 12; done >"$D/shoot"
	seed-gym --env football:academy_empty_goal_close --actions "$D/shoot" --out "$D/rgb.frames" --rgb --quiet
	# A line a frame: the picture's dtype and shape, whether the episode
	# ended, the reward, final_rgb's dtype and shape, and pixels (row,
	# column) of the pictures: (100, 50) on the pitch, (100, 191) on the
	# halfway line, (2, 181) and (2, 183) in the score's first digit, whose
	# top row is "###" for 0 and ".#." for 1 (seed-gym(1), PICTURES).
	seed-cat "$D/rgb.frames" | jq -c '[.rgb.dtype, .rgb.shape, .terminated.data[0] + .truncated.data[0],
		.reward.data[0], (.final_rgb | if . then [.dtype, .shape] else null end),
		.rgb.data[100][50], .rgb.data[100][191], .rgb.data[2][181], .rgb.data[2][183],
		(.final_rgb | if . then [.data[2][181], .data[2][183]] else null end)]' >"$D/rows"
	[ "$(wc -l <"$D/rows")" -eq 61 ]
	# Every picture: u8 [288, 384, 3], the pitch and the line where they
	# are; final_rgb exactly in the frames where the episode ended.
	jq -e -s 'all(.[]; .[0] == "u8" and .[1] == [288, 384, 3] and .[5] == [30, 120, 50] and
		.[6] == [255, 255, 255] and ((.[2] == 1) == (.[4] != null)) and
		(.[4] == null or .[4] == ["u8", [288, 384, 3]]))' "$D/rows"
	# A goal: its final_rgb has the score 1-0, the state the episode ended
	# in, and the same frame's rgb 0-0, the new episode's first state.
	jq -e -s 'map(select(.[3] == 1)) | length >= 1 and all(.[];
		.[9] == [[0, 0, 0], [255, 255, 255]] and .[7] == [255, 255, 255] and .[8] == [255, 255, 255])' "$D/rows"
	# Until a goal, the score stays 0-0.
	jq -e -s '.[0][7] == [255, 255, 255] and all(.[]; .[3] == 1 or .[9] == null or
		.[9] == [[255, 255, 255], [255, 255, 255]])' "$D/rows"
}

@test "seed-train trains the preset football-empty-goal-close briefly and evaluates it through seed-gym" {
	need_football
	run --separate-stderr seed-train football-empty-goal-close --seed 1 --frames 2000 --set actors=1 \
		--set envs_per_actor=2 --set eval_episodes=2 --dir "$D/run" --quiet
	echo "$stderr"
	assert_success
	echo "$output" | jq -e '.eval.env == "gym:football:academy_empty_goal_close" and .eval.episodes == 2 and
		.eval.policy == "server" and .eval.return.min >= 0 and .eval.return.max <= 1'
	[ -s "$D/run/checkpoint.json" ]
	jq -e '.env_options == {"representation": "extracted", "stacked": true, "rewards": "scoring"}' "$D/run/config.json"
	# A match of it recorded (doc/football.md): a GIF of the mini-map, a
	# frame for each state of the episode, its first the pitch (pixel x 50,
	# y 100), the halfway line (x 191), the score 0-0 (x 181, y 2) and the
	# left team's two players, one of them the active one (seed-gym(1),
	# PICTURES).
	run --separate-stderr seed-eval --checkpoint "$D/run" --last --greedy --episodes 1 --record "$D/match.gif"
	echo "$stderr"
	assert_success
	echo "$output" | jq -e '.env == "gym:football:academy_empty_goal_close" and .episodes == 1'
	length=$(echo "$output" | jq .length.max)
	[ "$(head -c 6 "$D/match.gif")" = GIF89a ]
	run gifinfo "$D/match.gif"
	assert_success
	[ "${lines[0]}" = "size 384 288" ]
	[ "${lines[1]}" = "frames $((length + 1))" ]
	[ "$(gifinfo "$D/match.gif" 0 50 100)" = "30 120 50" ]
	[ "$(gifinfo "$D/match.gif" 0 191 100)" = "255 255 255" ]
	[ "$(gifinfo "$D/match.gif" 0 181 2)" = "255 255 255" ]
	gifinfo "$D/match.gif" 0 >"$D/first.ppm"
	python3 - "$D/first.ppm" <<'PY'
import re
import sys
data = open(sys.argv[1], "rb").read()
head = re.match(rb"P6\s(\d+)\s(\d+)\s(\d+)\s", data)
pixels = data[head.end():]
assert head.groups() == (b"384", b"288", b"255") and len(pixels) == 384 * 288 * 3, head.groups()
colours = {pixels[i:i + 3] for i in range(0, len(pixels), 3)}
assert bytes((255, 210, 0)) in colours and bytes((230, 40, 40)) in colours, sorted(colours)
PY
}
