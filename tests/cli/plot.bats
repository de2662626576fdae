#!/usr/bin/env bats
# tests/cli/plot.bats: the seed-plot command line.
#
# The runs are metrics.jsonl files written here by hand, a few lines each,
# in the keys seed-learn writes (V-trace's, and R2D2's with env_frames).
# PNG pictures are checked by their bytes: the 8-byte PNG signature and the
# IHDR chunk's width and height (big-endian, bytes 16 to 23).  The tests
# that draw need gnuplot and skip, saying so, where it is missing
# (scripts/install-deps installs gnuplot-nox); the errors found before
# gnuplot runs are tested everywhere.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	mkdir "$D/tmp"
	export TMPDIR="$D/tmp"
	cd "$D"
	mkdir a b r2 disjoint
	# V-trace: no return yet on the first line, as seed-learn writes it.
	line() { # time frames return loss pg baseline entropy_loss
		printf '{"time":%s,"frames":%s,"updates":1,"fps":1000,"loss":%s,"pg_loss":%s,"baseline_loss":%s,"entropy_loss":%s,"entropy":0.6,"episode_return":%s,"algorithm":"vtrace","bad_frames":0}\n' \
			"$1" "$2" "$4" "$5" "$6" "$7" "$3"
	}
	{
		line 0.5 1000 null 3 1 2.5 -0.5
		line 1.0 2000 10 2 0.5 1.75 -0.25
		line 1.5 3000 30 1.5 0.25 1.5 -0.25
		line 2.0 4000 60 1 0.1 0.95 -0.05
	} >a/metrics.jsonl
	{
		line 0.4 1000 12 2.5 0.5 2 0
		line 1.1 2500 20 2 0.25 1.8 -0.05
		line 2.2 5000 80 0.5 0.1 0.45 -0.05
	} >b/metrics.jsonl
	{
		line 0.5 90000 5 1 1 1 0
		line 1.0 99000 6 1 1 1 0
	} >disjoint/metrics.jsonl
	printf '%s\n' \
		'{"time":1,"frames":9600,"env_frames":3000,"loss":0.8,"mean_q":0.5,"mean_abs_td":0.4,"mean_priority":0.45,"episode_return":null,"algorithm":"r2d2"}' \
		'{"time":2,"frames":19200,"env_frames":7000,"loss":0.6,"mean_q":1.5,"mean_abs_td":0.3,"mean_priority":0.35,"episode_return":14,"algorithm":"r2d2"}' \
		'{"time":3,"frames":28800,"env_frames":11000,"loss":0.4,"mean_q":2.5,"mean_abs_td":0.2,"mean_priority":0.25,"episode_return":21,"algorithm":"r2d2"}' \
		>r2/metrics.jsonl
}

teardown() {
	cd /
	rm -rf "$D"
}

need_gnuplot() {
	command -v gnuplot >/dev/null || skip "gnuplot is not installed (scripts/install-deps installs gnuplot-nox)"
}

# is_png FILE WIDTH HEIGHT: FILE starts with the PNG signature and its IHDR
# says WIDTH x HEIGHT.
is_png() {
	local sig ihdr
	sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
	[ "$sig" = 89504e470d0a1a0a ] || { echo "$1: not a PNG: $sig"; return 1; }
	ihdr=$(od -An -tx1 -j12 -N12 "$1" | tr -d ' \n')
	[ "${ihdr:0:8}" = 49484452 ] || { echo "$1: no IHDR first: $ihdr"; return 1; }
	[ $((16#${ihdr:8:8})) -eq "$2" ] && [ $((16#${ihdr:16:8})) -eq "$3" ] ||
		{ echo "$1: $((16#${ihdr:8:8}))x$((16#${ihdr:16:8})), want $2x$3"; return 1; }
}

# Nothing left behind: no temporary directory, no temporary PNG.
nothing_left() {
	[ -z "$(ls -A "$D/tmp")" ] || { echo "left in TMPDIR: $(ls -A "$D/tmp")"; return 1; }
	! ls -A "$D" | grep -q '\.tmp-' || { echo "left: $(ls -A "$D")"; return 1; }
}

@test "--help and --version" {
	run seed-plot --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: seed-plot"*"RUN_DIR..."* ]]
	[[ "$output" == *"--mean"* && "$output" == *"--out FILE.png"* && "$output" == *"SEED_GNUPLOT"* ]]
	run seed-plot --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^seed-plot\ \(seed\)\ [0-9]+\.[0-9]+ ]]
}

@test "-O writes the returns and the loss terms as two PNGs of the size asked" {
	need_gnuplot
	run seed-plot -O curve.png --size 640x480 a b
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	is_png curve.png 640 480
	is_png curve-loss.png 640 480
	nothing_left
	# The default size; a name without .png gets -loss.png after it.
	run seed-plot -O out r2
	[ "$status" -eq 0 ]
	is_png out 1000 700
	is_png out-loss.png 1000 700
	# Runs of both algorithms: seven terms, four rows, the loss page
	# taller by half for each of the two rows past the second.
	run seed-plot -O mix.png --size 400x300 a r2
	[ "$status" -eq 0 ]
	is_png mix.png 400 300
	is_png mix-loss.png 400 600
	nothing_left
}

@test "-O replaces a picture that is there, and --mean draws the band" {
	need_gnuplot
	echo old >curve.png
	run seed-plot --mean --points 7 -O curve.png --size 300x200 a b
	[ "$status" -eq 0 ]
	is_png curve.png 300 200
	is_png curve-loss.png 300 200
	nothing_left
}

@test "without -O: a text plot of the returns, sized by --size or the terminal" {
	need_gnuplot
	run seed-plot --size 72x30 a b
	[ "$status" -eq 0 ]
	[[ "$output" == *"mean return against frames"* ]]
	[[ "$output" == *"mean return against time"* ]]
	[[ "$output" == *"seconds of training"* ]]
	# One line in the key per run, labelled by its directory's name.
	echo "$output" | grep -Eq ' a \*+'
	echo "$output" | grep -Eq ' b #+'
	[ "$(echo "$output" | wc -l)" -eq 30 ]
	[ "$(echo "$output" | tr -d '\f' | awk '{ if (length($0) > m) m = length($0) } END { print m }')" -le 72 ]
	[[ "$output" != *"pg_loss"* ]]
	# Not a terminal: COLUMNS and LINES, less a line for the prompt.
	COLUMNS=100 LINES=21 run seed-plot a
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | wc -l)" -eq 20 ]
	[ "$(echo "$output" | tr -d '\f' | awk '{ if (length($0) > m) m = length($0) } END { print m }')" -gt 90 ]
	nothing_left
}

@test "a neuroevolution run (no episode_return) is drawn by its rounds' mean return" {
	need_gnuplot
	mkdir es
	printf '{"time":%s,"algorithm":"es","generation":%s,"phase":0,"best":%s,"mean":%s,"median":%s,"elite":null,"frames":%s}\n' \
		1 1 50 20 19 128000 2 2 90 60 58 256000 3 3 120 100 97 384000 >es/metrics.jsonl
	run seed-plot --size 72x30 es
	[ "$status" -eq 0 ]
	[[ "$output" == *"mean return against frames"* ]]
	[[ "$output" != *"left out"* ]]
	# The y axis spans the means (20 to 100), not the best (120).
	echo "$output" | grep -Eq '^ *100 '
	echo "$output" | grep -Eq '^ *20 '
	run seed-plot --size 72x30 es a
	[ "$status" -eq 0 ]
	echo "$output" | grep -Eq ' es \*+'
	nothing_left
}

@test "--losses: the text plot of the loss terms (V-trace's, R2D2's)" {
	need_gnuplot
	run seed-plot --losses --size 100x40 a b
	[ "$status" -eq 0 ]
	for k in loss pg_loss baseline_loss entropy_loss; do
		[[ "$output" == *" $k "* ]]
	done
	[[ "$output" != *"mean return"* ]]
	run seed-plot --losses --size 100x40 r2
	[ "$status" -eq 0 ]
	for k in loss mean_abs_td mean_q mean_priority; do
		[[ "$output" == *" $k "* ]]
	done
	[[ "$output" != *"pg_loss"* ]]
}

@test "--mean as text: the band and the mean of the runs" {
	need_gnuplot
	run seed-plot --mean --size 80x30 a b
	[ "$status" -eq 0 ]
	[[ "$output" == *"min-max of 2 runs"* && "$output" == *"mean of 2 runs"* ]]
	run seed-plot --mean a disjoint
	[ "$status" -eq 1 ]
	[[ "$output" == *"--mean: mean return against frames: curves: the runs share no stretch of x: run 0 ends at 4000, before run 1 starts at 90000 (run 0: a, run 1: disjoint)" ]]
	nothing_left
}

@test "--env-frames: R2D2 runs against the frames their actors played" {
	need_gnuplot
	run seed-plot --size 80x30 r2
	[ "$status" -eq 0 ]
	[[ "$output" != *"env frames"* ]]
	run seed-plot --env-frames --size 80x30 r2
	[ "$status" -eq 0 ]
	[[ "$output" == *"env frames"* ]]
}

@test "frames are emulator frames on the axis; --agent-steps draws against agent steps" {
	need_gnuplot
	mkdir atari
	# Four frames an agent step; the first line predates agent_steps (its
	# frames, 500, are agent steps: 2000 frames once read).
	printf '%s\n' \
		'{"time":1,"frames":500,"episode_return":-21,"algorithm":"vtrace"}' \
		'{"time":2,"frames":4000,"agent_steps":1000,"episode_return":-20,"algorithm":"vtrace"}' \
		'{"time":3,"frames":8000,"agent_steps":2000,"episode_return":-18,"algorithm":"vtrace"}' \
		>atari/metrics.jsonl
	run seed-plot --size 80x30 atari
	[ "$status" -eq 0 ]
	[[ "$output" == *"mean return against frames"* ]]
	[[ "$output" == *"frames (emulator)"* ]]
	[[ "$output" != *"agent steps"* ]]
	# From the old line's 2000 frames to 8000.
	echo "$output" | grep -Eq '^ +2\.0k .* 8\.0k *$'
	run seed-plot --agent-steps --size 80x30 atari
	[ "$status" -eq 0 ]
	[[ "$output" == *"mean return against agent steps"* ]]
	[[ "$output" != *"frames (emulator)"* ]]
	# A quarter of it: 500 agent steps to 2000.
	echo "$output" | grep -Eq ' 2\.0k *$'
	! echo "$output" | grep -q '8\.0k'
	run seed-plot --agent-steps --mean --points 4 --size 80x30 atari
	[ "$status" -eq 0 ]
	run seed-plot --agent-steps --env-frames r2
	[ "$status" -eq 2 ]
	[[ "$output" == *"--env-frames and --agent-steps choose two different x axes"* ]]
}

@test "run directories that are not, and metrics files that are bad, are named" {
	run seed-plot nodir
	[ "$status" -eq 1 ]
	[[ "$output" == "seed-plot: nodir: no such directory" ]]
	touch plain
	run seed-plot a plain
	[ "$status" -eq 1 ]
	[[ "$output" == "seed-plot: plain: not a directory"* ]]
	mkdir nometrics
	run seed-plot nometrics
	[ "$status" -eq 1 ]
	[[ "$output" == "seed-plot: nometrics/metrics.jsonl: no such file"* ]]
	mkdir empty
	: >empty/metrics.jsonl
	run seed-plot a empty
	[ "$status" -eq 1 ]
	[[ "$output" == "seed-plot: empty/metrics.jsonl: no metrics lines"* ]]
	head -n 1 a/metrics.jsonl >empty/metrics.jsonl
	echo '{"time": 2, "frames":' >>empty/metrics.jsonl
	run seed-plot empty
	[ "$status" -eq 1 ]
	[[ "$output" == "seed-plot: empty/metrics.jsonl:2: not JSON: "* ]]
	echo '{"time": 2}' >empty/metrics.jsonl
	run seed-plot empty
	[ "$status" -eq 1 ]
	[[ "$output" == 'seed-plot: empty/metrics.jsonl:1: no number "frames"' ]]
	head -n 1 a/metrics.jsonl >empty/metrics.jsonl
	run seed-plot empty
	[ "$status" -eq 1 ]
	[[ "$output" == *"seed-plot: no episode return to draw: every line of empty/metrics.jsonl is null there"* ]]
	nothing_left
}

@test "a missing or failing gnuplot is said, and the picture there is kept" {
	# PATH without gnuplot: every other program on it, through links (the
	# programs under test may be scripts: libtool's, valgrind's wrappers).
	local d f n
	mkdir nognuplot
	for d in ${PATH//:/ }; do
		for f in "$d"/*; do
			n=${f##*/}
			[[ $n == gnuplot* ]] || [ -e "nognuplot/$n" ] || ln -s "$f" "nognuplot/$n"
		done
	done
	PATH="$D/nognuplot" run seed-plot a
	[ "$status" -eq 1 ]
	[[ "$output" == *"seed-plot: gnuplot: not found on PATH: install gnuplot (Debian: apt-get install gnuplot-nox)"* ]]
	SEED_GNUPLOT="$D/no-gnuplot" run seed-plot a
	[ "$status" -eq 1 ]
	[[ "$output" == *"$D/no-gnuplot: not found (SEED_GNUPLOT)"* ]]
	echo old >curve.png
	printf '#!/bin/sh\necho "line 3: something is wrong" >&2\nexit 1\n' >fail.sh
	chmod +x fail.sh
	SEED_GNUPLOT=./fail.sh run seed-plot -O curve.png a
	[ "$status" -eq 1 ]
	[[ "$output" == *"seed-plot: ./fail.sh failed (exit 1):"*"line 3: something is wrong"* ]]
	[ "$(cat curve.png)" = old ]
	[ ! -e curve-loss.png ]
	nothing_left
}

@test "misuse: no run, --losses with -O, a bad --size" {
	run seed-plot
	[ "$status" -eq 2 ]
	[[ "$output" == *"name at least one RUN_DIR"* ]]
	run seed-plot --losses -O x.png a
	[ "$status" -eq 2 ]
	run seed-plot --size 640 -O x.png a
	[ "$status" -eq 2 ]
	[[ "$output" == *"--size: '640' is not WIDTHxHEIGHT"* ]]
	run seed-plot --size 50x480 -O x.png a
	[ "$status" -eq 2 ]
	[[ "$output" == *"--size width: 50 is out of range [100, 20000]"* ]]
	[ ! -e x.png ]
}

@test "-O into a directory that is not there says so before drawing" {
	run seed-plot -O nodir/curve.png a
	[ "$status" -eq 1 ]
	[[ "$output" == "seed-plot: nodir/curve.png: cannot write: No such file or directory" ]]
	nothing_left
}

@test "examples/Makefile's report draws each group of runs: the seeds' mean, a run alone" {
	need_gnuplot
	command -v jq >/dev/null || skip "jq is not installed"
	for r in sweep/lr-1-seed-1:a sweep/lr-1-seed-2:b cartpole:r2; do
		mkdir -p "ex/${r%%:*}"
		cp "${r#*:}/metrics.jsonl" "ex/${r%%:*}/"
		echo '{"frames": 4000, "wall_time": 2.0}' >"ex/${r%%:*}/checkpoint.json"
		echo '{"return": {"mean": 42.5}}' >"ex/${r%%:*}/eval.json"
	done
	run make -s -f "$SEED_SRCDIR/examples/Makefile" report RUNS=ex SEED_BIN="$(dirname "$(command -v seed-plot)")"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sweep/lr-1-seed-2"*"4000 frames"*"return    42.50"* ]]
	[[ "$output" == *"ex/plots/sweep-lr-1.png: sweep/lr-1, 2 run(s)"* ]]
	[[ "$output" == *"ex/plots/cartpole.png: cartpole, 1 run(s)"* ]]
	is_png ex/plots/sweep-lr-1.png 1000 700
	is_png ex/plots/sweep-lr-1-loss.png 1000 700
	is_png ex/plots/cartpole.png 1000 700
	is_png ex/plots/cartpole-loss.png 1000 700
	nothing_left
}
