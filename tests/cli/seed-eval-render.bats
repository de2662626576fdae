#!/usr/bin/env bats
# tests/cli/seed-eval-render.bats: seed-eval --render (pictures on stdout) and
# --record (animated GIFs).
#
# GIFs are read back with tests/cli/gifinfo, which uses giflib's own decoder.
# Catch's pictures (envs/catch.c): cells of 16 pixels, empty 32,32,32, ball
# 255,255,255, paddle 66,135,245; at the end the ball's cell is 0,200,0
# (caught) or 220,40,40 (missed).  An episode of Catch is 9 steps, so 10
# pictures: the start and one per step.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	# A directory of our own (bats keeps files in BATS_TEST_TMPDIR).
	mkdir "$BATS_TEST_TMPDIR/scratch"
	cd "$BATS_TEST_TMPDIR/scratch"
}

# Lines of a --render output that are picture rows (they hold half blocks).
picture_rows() {
	LC_ALL=C grep -a $'\xe2\x96\x80' || true
}

# Half blocks in each picture row, one number per row.
blocks_per_row() {
	LC_ALL=C awk '/\xe2\x96\x80/ { print gsub(/\xe2\x96\x80/, "") }'
}

@test "--render draws every step of env 0 with a status line, then the summary" {
	run --separate-stderr seed-eval --env catch --episodes 1 --seed 4 --render --render-delay 0
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	status_lines=$(printf '%s\n' "$output" | grep -a '^env 0 ')
	[ "$(printf '%s\n' "$status_lines" | wc -l)" -eq 10 ]
	for t in 0 1 2 3 4 5 6 7 8 9; do
		printf '%s\n' "$status_lines" | grep -q "^env 0  episode 1  step $t  reward "
	done
	printf '%s\n' "$status_lines" | head -n 9 | grep -vq terminated
	printf '%s\n' "$status_lines" | tail -n 1 | grep -Eq '^env 0  episode 1  step 9  reward (1|-1)  return (1|-1)  terminated$'
	# The summary is the last line, and the same as without --render.
	plain=$(seed-eval --env catch --episodes 1 --seed 4)
	[ "$(printf '%s\n' "$output" | tail -n 1)" = "$plain" ]
}

@test "--render into a pipe: no cursor movement, pictures one after another" {
	run --separate-stderr seed-eval --env catch --episodes 1 --render --render-delay 0
	[ "$status" -eq 0 ]
	! printf '%s' "$output" | grep -aq $'\e\\[[0-9]*A'
	! printf '%s' "$output" | grep -aq $'\e\\[K'
	# 80 x 160 in 80 columns and 22 rows: 22 x 44 pixels, 22 rows each.
	rows=$(printf '%s\n' "$output" | picture_rows | wc -l)
	[ "$rows" -eq $((10 * 22)) ]
	[ "$(printf '%s\n' "$output" | blocks_per_row | sort -u)" = 22 ]
	# The first picture has the ball and the paddle in their colours.
	first=$(printf '%s\n' "$output" | sed -n '1,22p')
	[[ "$first" == *$'\e[38;2;255;255;255m'* ]]
	[[ "$first" == *$'\e[38;2;66;135;245m'* ]]
	[[ "$first" == *$'\e[38;2;32;32;32m'* ]]
	# Every picture row ends by resetting the colours.
	[ "$(printf '%s\n' "$output" | picture_rows | grep -ac $'\e\\[0m$')" -eq "$rows" ]
}

@test "--render-width sets the picture's width; the height follows" {
	run --separate-stderr seed-eval --env catch --episodes 1 --render --render-delay 0 --render-width 10
	[ "$status" -eq 0 ]
	# 10 columns: 10 x 20 pixels, so 10 rows of 10 half blocks.
	[ "$(printf '%s\n' "$output" | picture_rows | wc -l)" -eq 100 ]
	[ "$(printf '%s\n' "$output" | blocks_per_row | sort -u)" = 10 ]
	run --separate-stderr seed-eval --env cartpole --episodes 1 --render --render-delay 0 --render-width 30 \
		--env-options '{"max_steps": 3}'
	[ "$status" -eq 0 ]
	# 600 x 400 at 30 columns: 30 x 20 pixels, 10 rows; 4 pictures.
	[ "$(printf '%s\n' "$output" | picture_rows | wc -l)" -eq 40 ]
	[ "$(printf '%s\n' "$output" | blocks_per_row | sort -u)" = 30 ]
	printf '%s\n' "$output" | grep -aq '^env 0  episode 1  step 3  reward 1  return 3  truncated$'
}

@test "--render follows env 0 through several episodes, not the others" {
	run --separate-stderr seed-eval --env catch --episodes 6 --envs 3 --render --render-delay 0 --render-width 5
	[ "$status" -eq 0 ]
	# Six episodes end after 18 steps, two of them env 0's.
	[ "$(printf '%s\n' "$output" | grep -ac '^env 0 ')" -eq 20 ]
	[ "$(printf '%s\n' "$output" | grep -ac '^env 0  episode 2  step 9 ')" -eq 1 ]
	! printf '%s\n' "$output" | grep -aq 'episode 3'
	printf '%s\n' "$output" | tail -n 1 | jq -e '.episodes == 6 and .envs == 3'
}

@test "--render on a terminal redraws in place" {
	command -v script >/dev/null || skip "script(1) is not installed"
	run script -qec "seed-eval --env catch --episodes 1 --render --render-delay 0 --render-width 10" /dev/null
	[ "$status" -eq 0 ]
	# Ten rows and the status line: each later picture starts 11 lines up.
	[ "$(printf '%s' "$output" | grep -ac $'\e\\[11A')" -eq 9 ]
	printf '%s' "$output" | grep -aq $'\e\\[K'
}

@test "--render stops with an error when stdout is closed" {
	# Far more than a pipe's buffer: the writes after head exits fail.
	run bash -c 'seed-eval --env cartpole --episodes 200 --render --render-delay 0 2>err | head -c 100 >/dev/null
		echo "status ${PIPESTATUS[0]}"; cat err'
	[ "${lines[0]}" = "status 1" ]
	[[ "${lines[1]}" == "seed-eval: writing a picture: Broken pipe" ]]
}

@test "--render-delay waits after each picture" {
	start=$(date +%s%N)
	run seed-eval --env catch --episodes 1 --render --render-delay 60 --render-width 5
	end=$(date +%s%N)
	[ "$status" -eq 0 ]
	# Ten pictures of 60 ms each: at least 0.6 s.
	[ $(((end - start) / 1000000)) -ge 600 ]
}

@test "--record writes an animated GIF of the first episode of env 0" {
	run --separate-stderr seed-eval --env catch --episodes 1 --seed 2 --record out.gif
	[ "$status" -eq 0 ]
	[ "$output" = "$(seed-eval --env catch --episodes 1 --seed 2)" ]
	[ "$(head -c 6 out.gif)" = GIF89a ]
	run gifinfo out.gif
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "size 80 160" ]
	[ "${lines[1]}" = "frames 10" ]
	[ "${lines[2]}" = "loop 0" ]
	# 15 frames a second: 7, 6, 7, 7, 6, 7, ... hundredths.
	[ "$(printf '%s\n' "${lines[@]:3}" | tr '\n' ' ')" = "delay 7 delay 6 delay 7 delay 7 delay 6 delay 7 delay 7 delay 6 delay 7 delay 7 " ]
	# The paddle starts in the middle of the bottom row.
	[ "$(gifinfo out.gif 0 40 152)" = "66 135 245" ]
	# The last frame shows the ball at the bottom, caught or missed.
	found=0
	for x in 8 24 40 56 72; do
		case "$(gifinfo out.gif 9 "$x" 152)" in
		"0 200 0" | "220 40 40") found=$((found + 1)) ;;
		esac
	done
	[ "$found" -eq 1 ]
	# No temporary file is left beside it.
	[ "$(ls -A | tr '\n' ' ')" = "out.gif " ]
}

@test "--record-episodes records consecutive episodes, even past --episodes" {
	run --separate-stderr seed-eval --env catch --episodes 1 --envs 4 --record three.gif --record-episodes 3
	[ "$status" -eq 0 ]
	printf '%s' "$output" | jq -e '.episodes == 1 and .envs == 4'
	[ "$(gifinfo three.gif | sed -n 2p)" = "frames 30" ]
	# Each episode's first picture (frames 0, 10, 20) has the ball in the
	# top row, where Catch starts it (drawn before the first step, not
	# after it), and the next picture has it one row down.
	for f in 0 10 20; do
		top=0 below=0
		for x in 8 24 40 56 72; do
			[ "$(gifinfo three.gif "$f" "$x" 8)" = "255 255 255" ] && top=$((top + 1))
			[ "$(gifinfo three.gif $((f + 1)) "$x" 24)" = "255 255 255" ] && below=$((below + 1))
		done
		[ "$top" -eq 1 ]
		[ "$below" -eq 1 ]
	done
}

@test "--record of CartPole: one frame more than the episode's steps" {
	run --separate-stderr seed-eval --env cartpole --episodes 1 --seed 5 --record cp.gif --record-fps 50
	[ "$status" -eq 0 ]
	length=$(printf '%s' "$output" | jq .length.max)
	run gifinfo cp.gif
	[ "${lines[0]}" = "size 600 400" ]
	[ "${lines[1]}" = "frames $((length + 1))" ]
	[ "$(printf '%s\n' "${lines[@]:3}" | sort -u)" = "delay 2" ]
	# Background white, the track black at row 299.
	[ "$(gifinfo cp.gif 0 5 5)" = "255 255 255" ]
	[ "$(gifinfo cp.gif 0 5 299)" = "0 0 0" ]
}

# MuJoCo's tasks draw through MuJoCo's renderer with OSMesa (envs/mujoco.c):
# where the build or the machine has none, the error says so, and the
# tests stop there.
mujoco_pictures() {
	seed-eval --list-envs | grep -q '^halfcheetah ' || skip "built without MuJoCo"
	run --separate-stderr seed-eval --env halfcheetah --episodes 1 --max-episode-steps 5 "$@"
	if [ "$status" -ne 0 ] && [[ "$stderr" == *OSMesa* ]]; then
		[ "$status" -eq 1 ]
		[[ "$stderr" == "seed-eval: halfcheetah draws pictures through MuJoCo's renderer with OSMesa"* ]]
		[ -z "$(ls -A)" ]
		skip "no pictures here: $stderr"
	fi
}

@test "--record of MuJoCo's HalfCheetah: Gymnasium's 480 x 480 through OSMesa (skipped without)" {
	mujoco_pictures --record hc.gif
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(jq '.length.max' <<<"$output")" -eq 5 ]
	run gifinfo hc.gif
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "size 480 480" ]
	[ "${lines[1]}" = "frames 6" ]
	# Not one colour: the sky above, the floor below.
	[ "$(gifinfo hc.gif 0 240 10)" != "$(gifinfo hc.gif 0 240 470)" ]
}

@test "--render of MuJoCo's HalfCheetah draws in the terminal (skipped without OSMesa)" {
	mujoco_pictures --render --render-delay 0
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | grep -ac '^env 0 ')" -eq 6 ]
	[ "$(printf '%s\n' "$output" | picture_rows | wc -l)" -gt 6 ]
}

@test "--render and --record together" {
	run --separate-stderr seed-eval --env catch --episodes 1 --render --render-delay 0 --record both.gif
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -ac '^env 0 ')" -eq 10 ]
	[ "$(gifinfo both.gif | sed -n 2p)" = "frames 10" ]
}

@test "a GIF path that cannot be written is an error before playing" {
	run seed-eval --env catch --episodes 1 --record no/such/dir/x.gif
	[ "$status" -eq 1 ]
	[[ "$output" == *"seed-eval: --record: no/such/dir/x.gif: directory no/such/dir: No such file or directory"* ]]
	mkdir adir
	run seed-eval --env catch --episodes 1 --record adir
	[ "$status" -eq 1 ]
	[[ "$output" == *"seed-eval: --record: adir: is a directory"* ]]
	touch afile
	run seed-eval --env catch --episodes 1 --record afile/x.gif
	[ "$status" -eq 1 ]
	[[ "$output" == *"afile is not a directory"* ]]
	[ "$(ls -A | tr '\n' ' ')" = "adir afile " ]
}

@test "bad picture options are usage errors" {
	run seed-eval --env catch --render --render-width 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--render-width"* ]]
	run seed-eval --env catch --render --render-delay -1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--render-delay"* ]]
	run seed-eval --env catch --record x.gif --record-fps 51
	[ "$status" -eq 2 ]
	[[ "$output" == *"--record-fps"* ]]
	run seed-eval --env catch --record x.gif --record-fps 0
	[ "$status" -eq 2 ]
	run seed-eval --env catch --record x.gif --record-episodes 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--record-episodes"* ]]
	run seed-eval --env catch --record
	[ "$status" -eq 2 ]
	[[ "$output" == *"needs a value"* ]]
	[ ! -e x.gif ]
}

@test "--help lists the picture options" {
	run seed-eval --help
	[ "$status" -eq 0 ]
	for opt in --render --render-width --render-delay --record --record-episodes --record-fps; do
		[[ "$output" == *"$opt"* ]]
	done
}
