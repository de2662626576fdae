#!/usr/bin/env bats
# tests/cli/faults.bats: seed-train under faults.
#
# Fault injection: a CartPole run (the cartpole preset, checkpoints every
# second) while a killer sends SIGKILL to one program of the run every 1.5
# seconds, chosen at random with a fixed seed: rounds of the three kinds
# (seed-learn, seed-infer, an actor) in a random order, so that every kind
# is hit within the first three kills.  The run trains the preset's whole
# frame budget (target_return=null): with the target, a run may end after
# two or three kills, since a resumed learner sees its 100 episodes again
# within a second.  What must hold:
# - the run ends at the budget, as an undisturbed one does, and its final
#   evaluation reaches 475 (the preset's target);
# - every checkpoint seen during the run loads (seed-eval --checkpoint, which
#   checks every tensor's CRC-32), and their frames and versions never go
#   back; nor do the published versions (the metrics' "version");
# - after each kill of the learner, every metrics line the restarted one
#   writes has at least the frames of the checkpoint that was there at the
#   kill (nothing saved is lost: it resumed from it), and a version past
#   everything reserved before the kill (no version names two parameters);
# - seed-train counts one restart for every kill (the last kill may have
#   hit a program as the run was ending: then it is not restarted), and the
#   logs say each restart.
# The preset's budget takes 7 s or more to train on a 2-core machine
# (10 s and more here), the kills make it longer, so the run sees at least
# four (the first 1.5 s after the first checkpoint, which comes a second
# into the run).  The wait before a restart is capped at 1 s, as the kills
# come faster than --restart-reset.  About 30 s in all.  For the same
# reason each kind's count of restarts in a row only grows (one kill every
# 4.5 s, under the 10 s of uptime that resets it), so --max-restarts is out
# of reach of any run: at 20, a sanitizer build slowed further by other
# work gave up on seed-infer after 21 kills, a failure of the bound, not of
# the programs.  Giving up has tests of its own below.
#
# Then: a crash loop (a program killed at every start) ends the run after
# --max-restarts with a message naming the program and its log; a learner
# killed before the run's first checkpoint starts again from the
# configuration (an earlier run's checkpoint in the directory does not
# count); Ctrl-C restarts nothing; a stop during a restart's delay is
# immediate; a program that exits with status 2 (a configuration that
# cannot work) is not restarted: the run ends at once with its message last;
# an r2d2 run's seed-replay killed with SIGKILL comes back with what its last
# snapshot held, and so does the replay of a --resume run.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	# seed-train puts its sockets under TMPDIR: the programs of this test's
	# run are the processes whose command line names $D/tmp.
	mkdir "$D/tmp"
	export TMPDIR="$D/tmp"
	RUN="$D/run"
	PIDS=""
}

teardown() {
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	for p in ${PIDS:-}; do wait "$p" 2>/dev/null || true; done
	# Whatever a failed test left of the run (seed-train stopped the rest).
	for p in $(pgrep -f "ipc://$D/tmp/" || true); do kill -KILL "$p" 2>/dev/null || true; done
	rm -rf "$D"
}

# The pid of the run's PROGRAM (seed-learn, seed-infer, seed-actor; for an
# actor, ACTOR its number), none while it is being restarted.  The program
# itself, whose command line starts with its path: not the libtool wrapper
# of an uninstalled build (a shell script, "bash .../seed-actor ..."), nor a
# subshell of that script, which would die alone.
pid_of() {
	local pat="^[^ ]*/?$1 .*ipc://$D/tmp/"
	[ "$1" = seed-actor ] && pat="^[^ ]*/?$1 .*--actor $2 .*ipc://$D/tmp/"
	pgrep -f -- "$pat" | head -1
}

# wait_pid NAME [ACTOR]: pid_of, once the program runs (30 s at most).  The
# learner's metrics file does not wait for every program: on a loaded
# machine, under a sanitizer, actor 0 was once still in its libtool wrapper
# script then, which pid_of rightly does not take for the program.
wait_pid() {
	local i pid
	for i in $(seq 300); do
		pid=$(pid_of "$@")
		[ -n "$pid" ] && echo "$pid" && return 0
		sleep 0.1
	done
	echo "wait_pid: no $* of this run after 30 s" >&2
	return 1
}

# killer SEED INTERVAL: until seed-train ($TRAIN) ends, SIGKILL one program
# every INTERVAL seconds, and log each kill to $D/kills.log as "K KIND PID".
# After killing the learner (once it is gone, and before its restart: no
# seed-learn of the run exists), record the run's state: the metrics lines
# written so far ($D/kill-K.lines), the checkpoint ($D/kill-K.ckpt.json) and
# the reservations ($D/kill-K.versions.json).  Should a restarted learner
# already exist after that, the state may be its own: the kill is then left
# unchecked (kill-K.lines is not written).
killer() {
	RANDOM=$1
	local interval=$2 k=0 round=() kind pid n lines
	while kill -0 "$TRAIN" 2>/dev/null && [ ! -f "$RUN/checkpoint.json" ]; do sleep 0.05; done
	local actors
	actors=$(jq .actors "$RUN/config.json")
	while kill -0 "$TRAIN" 2>/dev/null; do
		sleep "$interval"
		if [ ${#round[@]} -eq 0 ]; then
			round=(seed-learn seed-infer seed-actor)
			for i in 2 1; do # Fisher-Yates
				n=$((RANDOM % (i + 1)))
				kind=${round[i]} round[i]=${round[n]} round[n]=$kind
			done
		fi
		kind=${round[0]} round=("${round[@]:1}")
		n=$((RANDOM % actors))
		[ "$kind" = seed-actor ] || n=""
		pid=""
		while kill -0 "$TRAIN" 2>/dev/null && [ -z "$pid" ]; do
			pid=$(pid_of $kind $n)
			[ -n "$pid" ] || sleep 0.05
		done
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || continue
		k=$((k + 1))
		echo "$k ${kind#seed-}${n:+ $n} $pid" >>"$D/kills.log"
		[ "$kind" = seed-learn ] || continue
		while [ -e "/proc/$pid" ]; do sleep 0.01; done
		[ -z "$(pid_of seed-learn)" ] || continue
		lines=$(grep -c . "$RUN/metrics.jsonl")
		cp "$RUN/checkpoint.json" "$D/kill-$k.ckpt.json"
		cp "$RUN/versions.json" "$D/kill-$k.versions.json"
		[ -z "$(pid_of seed-learn)" ] && echo "$lines" >"$D/kill-$k.lines"
	done
}

# snapshots: until seed-train ends, copy every new checkpoint (checkpoint.json
# and the tensors it names) to $D/snap/N/.  A checkpoint replaced before its
# tensors were copied is skipped: its file was removed, as it should be.
snapshots() {
	local n=0 file
	mkdir "$D/snap"
	: >"$D/last.json"
	while kill -0 "$TRAIN" 2>/dev/null; do
		if cp "$RUN/checkpoint.json" "$D/new.json" 2>/dev/null && ! cmp -s "$D/new.json" "$D/last.json"; then
			file=$(jq -r .file "$D/new.json")
			mkdir "$D/snap/$n"
			if cp "$RUN/$file" "$D/snap/$n/" 2>/dev/null; then
				cp "$D/new.json" "$D/snap/$n/checkpoint.json"
				cp "$D/new.json" "$D/last.json"
				n=$((n + 1))
			else
				rm -r "$D/snap/${n:?}"
			fi
		fi
		sleep 0.1
	done
}

@test "SIGKILLs of random programs of a CartPole run: it trains on, no checkpoint lost or corrupt" {
	seed-train cartpole --seed 5 --dir "$RUN" --set checkpoint_interval=1 --set target_return=null \
		--max-restarts 1000 --restart-max-delay 1 --quiet >"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	killer 7 1.5 &
	PIDS="$PIDS $!"
	snapshots &
	PIDS="$PIDS $!"
	st=0
	wait $TRAIN || st=$?
	wait # the killer and the snapshots end with the run
	cat "$D/kills.log" "$D/err" "$D/out"
	[ "$st" -eq 0 ]
	kills=$(grep -c . "$D/kills.log")
	[ "$kills" -ge 4 ]

	# The run trained its whole budget, and the policy is good.
	jq -e '.eval.return.mean >= 475' "$D/out"
	[ "$(jq .frames "$RUN/checkpoint.json")" -ge 2500000 ]
	[ "$(jq -s 'last | .frames >= 2500000' "$RUN/metrics.jsonl")" = true ]

	# One restart per kill, but maybe the last; each said in the logs.
	last=$(tail -1 "$D/kills.log" | cut -d' ' -f2)
	for kind in learn infer actor; do
		killed=$(grep -c " $kind" "$D/kills.log" || true)
		restarted=$(jq ".restarts.$kind" "$D/out")
		echo "$kind: killed $killed times, restarted $restarted times"
		[ "$restarted" -le "$killed" ]
		[ "$restarted" -eq "$killed" ] || { [ "$kind" = "$last" ] && [ "$restarted" -eq $((killed - 1)) ]; }
		[ "$kind" = "$last" ] || [ "$restarted" -ge 1 ]
	done
	[ "$(grep -c '^seed-train: restart [0-9]* of seed-infer (was killed by signal 9 after' "$RUN/infer.log")" \
		-eq "$(jq .restarts.infer "$D/out")" ]
	[ "$(cat "$RUN"/actor-*.log | grep -c '^seed-train: restart [0-9]* of seed-actor')" \
		-eq "$(jq .restarts.actor "$D/out")" ]
	[ "$(grep -c '^seed-train: seed-learn was killed by signal 9 after .* s; restart' "$D/err")" \
		-eq "$(jq .restarts.learn "$D/out")" ]

	# Every checkpoint seen loads, checksums and all; counters never go back.
	cp "$RUN/checkpoint.json" "$D/final.json"
	n=$(ls "$D/snap" | wc -l)
	echo "$n checkpoints seen"
	[ "$n" -ge 5 ]
	for s in $(ls "$D/snap" | sort -n); do
		seed-eval --checkpoint "$D/snap/$s" --episodes 1 --envs 1 --greedy >/dev/null
		jq -c '{frames, policy_version}' "$D/snap/$s/checkpoint.json"
	done >"$D/ckpts.jsonl"
	jq -c '{frames, policy_version}' "$D/final.json" >>"$D/ckpts.jsonl"
	jq -se '. as $c | all(range(1; length); $c[.].frames >= $c[. - 1].frames and
		$c[.].policy_version >= $c[. - 1].policy_version)' "$D/ckpts.jsonl"
	jq -se 'map(.version) as $v | all(range(1; length); $v[.] >= $v[. - 1])' "$RUN/metrics.jsonl"

	# After each learner kill: resumed from the checkpoint, versions past
	# every reservation made before.
	checked=0
	for f in "$D"/kill-*.lines; do
		[ -e "$f" ] || continue
		k=$(basename "$f" .lines)
		k=${k#kill-}
		lines=$(cat "$f")
		frames=$(jq .frames "$D/kill-$k.ckpt.json")
		version=$(jq .policy_version "$D/kill-$k.ckpt.json")
		reserved=$(jq .reserved_through "$D/kill-$k.versions.json")
		echo "kill $k of the learner: checkpoint at $frames frames, version $version; reserved through $reserved"
		head -n "$lines" "$RUN/metrics.jsonl" | jq -se --argjson r "$reserved" 'all(.version <= $r)'
		tail -n +$((lines + 1)) "$RUN/metrics.jsonl" >"$D/after.jsonl"
		head -1 "$D/after.jsonl" | jq -c '{first_after: {frames, version}}'
		# A learner killed after its final checkpoint (the budget reached)
		# resumes with nothing left to train: its lines keep the
		# checkpoint's frames and version, and publish nothing new.
		jq -se --argjson f "$frames" --argjson r "$reserved" --argjson v "$version" \
			'length > 0 and all(.frames >= $f and .version >= $v and (.version > $r or .frames == $f))' \
			"$D/after.jsonl"
		[ "$frames" -gt 0 ] && checked=$((checked + 1))
	done
	[ "$checked" -ge 1 ]

	# Nothing is left running, and the socket directory is gone.
	run pgrep -f "ipc://$D/tmp/"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
	[ -z "$(ls "$D/tmp")" ]
}

# kill_every_start PROGRAM [ACTOR]: SIGKILL the run's PROGRAM as soon as it
# appears, every time, until seed-train ($TRAIN) ends.
kill_every_start() {
	local pid
	while kill -0 "$TRAIN" 2>/dev/null; do
		pid=$(pid_of "$@")
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && echo "$pid" >>"$D/killed"
		sleep 0.02
	done
}

@test "an actor that dies at every start ends the run after --max-restarts, naming it and its log" {
	seed-train cartpole --seed 1 --dir "$RUN" --set target_return=null --frames 100000000 \
		--max-restarts 2 --restart-delay 0.1 --restart-reset 60 --quiet >"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	kill_every_start seed-actor 1 &
	PIDS="$PIDS $!"
	st=0
	wait $TRAIN || st=$?
	wait
	cat "$D/err"
	[ "$st" -eq 1 ]
	[ ! -s "$D/out" ]
	grep -q "^seed-train: seed-actor 1 died 3 times in a row (the last time it was killed by signal 9 after [0-9.]* s): giving up (--max-restarts 2); see $RUN/actor-1.log\$" "$D/err"
	grep -q "^seed-train: training stopped; the last checkpoint is in $RUN\$" "$D/err"
	# Two restarts, each in the log, with the delay doubling; no third.
	grep -q "restart 1 in 0.1 s (log: $RUN/actor-1.log)" "$D/err"
	grep -q "restart 2 in 0.2 s (log: $RUN/actor-1.log)" "$D/err"
	[ "$(grep -c '^seed-train: restart [12] of seed-actor 1 (was killed by signal 9' "$RUN/actor-1.log")" -eq 2 ]
	! grep -q 'restart 3' "$RUN/actor-1.log" "$D/err"
	[ "$(sort -u "$D/killed" | wc -l)" -eq 3 ]
	# The learner was stopped, not killed: its checkpoint is there.
	[ -f "$RUN/checkpoint.json" ]
	run pgrep -f "ipc://$D/tmp/"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
}

@test "a learner that dies at every start: the message names seed-learn; with --max-restarts 0 no restart" {
	seed-train cartpole --seed 1 --dir "$RUN" --max-restarts 0 --quiet >"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	kill_every_start seed-learn &
	PIDS="$PIDS $!"
	st=0
	wait $TRAIN || st=$?
	wait
	cat "$D/err"
	[ "$st" -eq 1 ]
	grep -q "^seed-train: seed-learn died once (it was killed by signal 9 after [0-9.]* s): giving up (--max-restarts 0); its messages are above\$" "$D/err"
	grep -q "^seed-train: training stopped before the learner wrote a checkpoint\$" "$D/err"
	! grep -q restart "$D/err" "$RUN/infer.log" "$RUN"/actor-*.log
	run pgrep -f "ipc://$D/tmp/"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
}

@test "a configuration error (a program's status 2) ends the run at once, its message last, no restart" {
	# An option cartpole does not take: seed-actor and seed-learn refuse it
	# with status 2 (no Gymnasium needed).  Restarting would take 6 tries and
	# about 12 s (--max-restarts 5): none is made.
	run --separate-stderr timeout 60 seed-train cartpole --dir "$RUN" --set 'env_options={"bogus":1}'
	echo "$stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ] # no JSON line
	last=$(tail -n 1 <<<"$stderr")
	[[ "$last" =~ ^seed-(actor|learn):\ (config:\ )?cartpole:\ unknown\ option\ \"bogus\" ]]
	if [[ "$last" == seed-actor:* ]]; then
		# seed-train names the actor and its log, then repeats its message.
		n=$(tail -n 2 <<<"$stderr" | sed -n 's/^seed-train: seed-actor \([01]\) exited with status 2 (a usage or configuration error, which no restart mends): training stopped; its message, from .*actor-\([01]\)\.log:$/\1\2/p')
		[ "$n" = 00 ] || [ "$n" = 11 ]
		grep -qxF "$last" "$RUN/actor-${n:0:1}.log"
	fi
	[[ "$stderr" != *"; restart "* ]]
	! grep -q '^seed-train: restart' "$RUN/infer.log" "$RUN"/actor-*.log
	# The learner alone: a model that does not fit the observations.  Its
	# message, on seed-train's standard error, is the last line there.
	run --separate-stderr timeout 60 seed-train cartpole --dir "$D/run2" \
		--set 'model={"torso": [{"type": "conv2d", "filters": 2, "kernel": 3}]}'
	echo "$stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$(tail -n 1 <<<"$stderr")" = "seed-learn: config: model: torso[0] (conv2d): input has shape [4], not [H,W,C]" ]
	[[ "$stderr" != *"; restart "* ]]
	run pgrep -f "ipc://$D/tmp/"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
}

@test "r2d2: a seed-replay killed with SIGKILL comes back with its snapshot, and so does --resume's" {
	# The masked CartPole with R2D2, checkpoints (and so replay snapshots)
	# every second, no periodic evaluations.
	seed-train r2d2-cartpole-masked --seed 2 --frames 200000 --dir "$RUN" --set eval_episodes=2 \
		--set replay.min_size=50 --set checkpoint_interval=1 --set periodic_eval.interval=0 --quiet \
		>"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	# Once a snapshot holds sequences, kill the replay.
	for i in $(seq 600); do
		grep -qE '^seed-replay: snapshot: [1-9][0-9]* sequences' "$RUN/replay.log" 2>/dev/null && break
		sleep 0.1
	done
	pid=$(wait_pid seed-replay)
	kill -KILL "$pid"
	st=0
	wait $TRAIN || st=$?
	cat "$D/err" "$RUN/replay.log"
	[ "$st" -eq 0 ]
	grep -q "^seed-train: seed-replay was killed by signal 9 after [0-9.]* s; restart 1 in 0.25 s (log: $RUN/replay.log)\$" "$D/err"
	# The restarted replay resumed with what the last snapshot before the
	# kill held (the replay's own lines), and the JSON line says so.
	held=$(sed -n '/^seed-train: restart 1 of seed-replay/q; s/^seed-replay: snapshot: \([0-9]*\) sequences.*/\1/p' \
		"$RUN/replay.log" | tail -n 1)
	[ "$held" -gt 0 ]
	sed -n '/^seed-train: restart 1 of seed-replay/,$p' "$RUN/replay.log" | sed -n 2p |
		grep -q "^seed-replay: capacity 20000 sequences ([0-9]* bytes), resumed with $held stored, $held inserted\$"
	last=$(tail -n 1 "$D/out")
	[ "$(jq .restarts.replay <<<"$last")" -eq 1 ]
	[ "$(jq .replay_restored <<<"$last")" -eq "$held" ]
	[ "$(jq .eval.episodes <<<"$last")" -eq 2 ]
	# --resume: the replay starts from the snapshot the run's replay wrote
	# when it was stopped.
	final=$(sed -n 's/^seed-replay: snapshot: \([0-9]*\) sequences.*/\1/p' "$RUN/replay.log" | tail -n 1)
	[ "$final" -gt "$held" ]
	run --separate-stderr seed-train --resume "$RUN" --frames 260000 --no-eval
	echo "$stderr"
	assert_success
	[ "$(jq .replay_restored <<<"$output")" -eq "$final" ]
	[ "$(jq .restarts.replay <<<"$output")" -eq 0 ]
	[[ "$stderr" == *"seed-train: seed-replay restored $final sequences from its snapshots in $RUN/replay (see $RUN/replay.log)"* ]]
	sed -n '/^seed-train: resumed /,$p' "$RUN/replay.log" | sed -n 2p |
		grep -q "^seed-replay: capacity 20000 sequences ([0-9]* bytes), resumed with $final stored, $final inserted\$"
}

@test "a learner killed before this run's first checkpoint starts again from the configuration" {
	# An earlier run's checkpoint in the directory is not this run's.
	seed-train cartpole --seed 1 --dir "$RUN" --frames 20000 --no-eval --quiet >/dev/null
	old=$(jq .frames "$RUN/checkpoint.json")
	seed-train cartpole --seed 2 --dir "$RUN" --set target_return=null --frames 100000000 \
		--set checkpoint_interval=1000 >"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	for i in $(seq 100); do
		[ "$(grep -c '^seed-learn: .*; new run$' "$D/err")" -ge 1 ] && break
		sleep 0.1
	done
	reserved=$(jq .reserved_through "$RUN/versions.json")
	pid=$(wait_pid seed-learn)
	kill -KILL "$pid"
	for i in $(seq 100); do
		[ "$(grep -c '^seed-learn: ' "$D/err")" -ge 2 ] && break
		sleep 0.1
	done
	kill -TERM $TRAIN
	st=0
	wait $TRAIN || st=$?
	cat "$D/err"
	[ "$st" -eq 143 ]
	grep -q '^seed-train: seed-learn was killed by signal 9 after .*; restart 1 in 0.25 s$' "$D/err"
	# Both starts trained from the configuration: none resumed the old run.
	[ "$(grep -c '^seed-learn: .*; new run$' "$D/err")" -eq 2 ]
	! grep -q 'resumed' "$D/err"
	# The checkpoint written on SIGTERM is the new run's, with versions
	# past those reserved before the kill.
	[ "$(jq .config.seed "$RUN/checkpoint.json")" -eq 2 ]
	[ "$(jq .policy_version "$RUN/checkpoint.json")" -gt "$reserved" ]
	echo "old run: $old frames; new: $(jq .frames "$RUN/checkpoint.json")"
}

@test "Ctrl-C after restarts stops everything and restarts nothing" {
	setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' seed-train cartpole --seed 2 --dir "$RUN" \
		--set target_return=null --frames 100000000 --quiet >"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	for i in $(seq 100); do
		[ -s "$RUN/metrics.jsonl" ] && break
		sleep 0.1
	done
	pid=$(wait_pid seed-actor 0)
	kill -KILL "$pid"
	for i in $(seq 100); do
		grep -q 'restart 1 of seed-actor 0' "$RUN/actor-0.log" && break
		sleep 0.1
	done
	sleep 0.5
	kill -INT -- "-$TRAIN"
	st=0
	wait $TRAIN || st=$?
	cat "$D/err"
	# (Shown when the test fails: a program that exits non-zero on the way
	# out says why at the end of its log, a sanitizer's report included.)
	tail -n 40 "$RUN"/*.log
	[ "$st" -eq 130 ]
	# One restart (the kill: said on stderr and in the log), none on the way
	# out; the learner saved its checkpoint.
	[ "$(cat "$RUN"/*.log "$D/err" | grep -c 'restart [0-9]')" -eq 2 ]
	[ "$(jq .frames "$RUN/checkpoint.json")" -gt 0 ]
	run pgrep -f "ipc://$D/tmp/"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
}

@test "SIGTERM during a restart's delay stops at once" {
	seed-train cartpole --seed 2 --dir "$RUN" --set target_return=null --frames 100000000 \
		--restart-delay 60 --quiet >"$D/out" 2>"$D/err" &
	TRAIN=$!
	PIDS=$TRAIN
	for i in $(seq 100); do
		[ -s "$RUN/metrics.jsonl" ] && break
		sleep 0.1
	done
	pid=$(wait_pid seed-infer)
	kill -KILL "$pid"
	for i in $(seq 100); do
		grep -q 'seed-infer was killed by signal 9 after .* restart 1 in 60 s' "$D/err" && break
		sleep 0.1
	done
	t0=$(date +%s)
	kill -TERM $TRAIN
	st=0
	wait $TRAIN || st=$?
	cat "$D/err"
	[ "$st" -eq 143 ]
	[ $(($(date +%s) - t0)) -lt 20 ]
	! grep -q 'restart 1 of seed-infer' "$RUN/infer.log"
	[ -z "$(pid_of seed-infer)" ]
	run pgrep -f "ipc://$D/tmp/"
	[ "$status" -ne 0 ] || { echo "left running: $output"; false; }
}

@test "restart options: bad values are refused" {
	run seed-train cartpole --max-restarts -1
	[ "$status" -eq 2 ]
	assert_output --partial "seed-train: --max-restarts: '-1' is not a whole number"
	run seed-train cartpole --restart-delay 1s
	[ "$status" -eq 2 ]
	assert_output --partial "seed-train: --restart-delay: '1s' is not a number of seconds"
	run seed-train --help
	assert_success
	assert_output --partial "--max-restarts N"
}
