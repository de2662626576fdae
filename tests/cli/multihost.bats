#!/usr/bin/env bats
# Training across hosts: three network namespaces on one switch
# (tests/cli/netns.bash), seed-learn and seed-infer on host A, one seed-actor on
# each of hosts B and C, every link over tcp between the hosts' addresses.
#
# Which host's frames reach the learner is read from the learner's own
# metrics, exactly: B's actor plays CartPole with a time limit of 4 steps and
# C's with one of 6, and no CartPole episode can end before its 8th step (the
# fastest fall, a constant push from the worst corner of the reset range:
# tests/golden/cartpole_min_steps.py), so every episode of B has return 4 and
# every one of C return 6.  The learner's mean return over its window (the
# last 1000 episodes here, metrics.jsonl's episode_return) is then 4 when
# only B's episodes reach it, 6 when only C's do, and strictly between when
# both do; episode frames travel on the unroll channel, just before their
# half's unrolls.  (Episodes come in bunches, one frame per half and unroll:
# a window of 1000 holds dozens of frames, so both hosts' mix in it.)

setup() {
	load helpers
	load_helpers
	load netns
	local why
	why=$(netns_usable) || skip "$why"
	D=$(mktemp -d)
	# The learner's preset, from the source tree (a VPATH build, as in
	# make distcheck, has no examples/ beside it).
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	netns_init
	netns_host A
	netns_host B
	netns_host C
	IPA=$(netns_ip A)
}

teardown() {
	netns_cleanup
	rm -rf "$D"
}

# start_a [SEED-INFER OPTION]...: the server and the learner on host A.
start_a() {
	netns_run A INFER seed-infer --bind "tcp://$IPA:5555" --model "tcp://$IPA:5556" \
		--unrolls "tcp://$IPA:5557" --unroll-length 16 --max-batch 64 --timeout-us 200 \
		--stats-interval 0.5 "$@" 2>"$D/infer.err"
	netns_run A LEARN seed-learn --config cartpole --set target_return=null --set return_window=1000 \
		--frames 1000000000000 --unrolls "tcp://$IPA:5557" --params "tcp://$IPA:5556" --dir "$D/run" \
		--quiet 2>"$D/learn.err"
}

# start_actor HOST VAR MAX_STEPS: host HOST's actor (actor id = its letter's
# place), episodes cut at MAX_STEPS steps, counters every half second.
start_actor() {
	local id
	case $1 in B) id=1 ;; C) id=2 ;; esac
	netns_run "$1" "$2" seed-actor --env cartpole --env-options "{\"max_steps\":$3}" --envs 16 \
		--actor "$id" --connect "tcp://$IPA:5555" --stats-interval 0.5 2>>"$D/$1.err"
}

# metric KEY: KEY of the learner's last metrics line (empty before one).
metric() {
	[ -s "$D/run/metrics.jsonl" ] || return 0
	tail -n 1 "$D/run/metrics.jsonl" | jq -r ".$1 // empty"
}

# Whose episodes the learner's window holds: only B's, only C's, or both.
window_is() {
	local r
	r=$(metric episode_return)
	[ -n "$r" ] || return 1
	case $1 in
	B) awk "BEGIN { exit !($r == 4) }" ;;
	C) awk "BEGIN { exit !($r == 6) }" ;;
	both) awk "BEGIN { exit !($r > 4 && $r < 6) }" ;;
	esac
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s until it succeeds; fail
# (saying what was awaited) after SECONDS.
wait_until() {
	local n=$(($1 * 5))
	shift
	while ! "$@"; do
		n=$((n - 1))
		if [ "$n" -le 0 ]; then
			echo "waited in vain for: $*" >&2
			return 1
		fi
		sleep 0.2
	done
}

# server_stat FIELD: the count before FIELD in seed-infer's last stats line.
server_stat() {
	grep 'env steps/s' "$D/infer.err" | tail -n 1 | sed -n "s/.* \([0-9][0-9]*\) $1\(,.*\)*\$/\1/p"
}

# actor_stat HOST FIELD: the same for the last stats line of HOST's actor.
actor_stat() {
	grep 'env steps/s' "$D/$1.err" | tail -n 1 | sed -n "s/.* \([0-9][0-9]*\) $2\(,.*\)*\$/\1/p"
}

# frames_grow_from N: whether the learner has trained past N frames.
frames_grow_from() {
	local f
	f=$(metric frames)
	[ -n "$f" ] && [ "$f" -gt "$1" ]
}

# frames_kept_growing SINCE_LINE: every metrics line after line SINCE_LINE
# (one a second) has more frames than the line before it: training never
# stood still for a whole interval.
frames_kept_growing() {
	tail -n "+$1" "$D/run/metrics.jsonl" | jq -s -e \
		'[.[].frames] as $f | ($f | length) >= 2 and all(range(1; $f | length); $f[.] > $f[. - 1])'
}

# stop_all: stop the learner (it checkpoints), then the actors and the
# server; every one must exit with status 0, which a crash would not.
stop_all() {
	local p st
	for p in LEARN AB AC INFER; do
		eval "p=\${$p:-}"
		[ -n "$p" ] || continue
		kill -TERM "$p"
		st=0
		wait "$p" || st=$?
		echo "pid $p exited with $st"
		[ "$st" -eq 0 ]
	done
}

@test "over tcp across hosts: learner and server on A, actors on B and C, frames from both reach the learner" {
	start_a
	start_actor B AB 4
	start_actor C AC 6
	wait_until 120 window_is both
	[ "$(server_stat halves)" -eq 4 ]
	# Training proceeds: frames grow line after line.
	n=$(wc -l <"$D/run/metrics.jsonl")
	f=$(metric frames)
	wait_until 30 frames_grow_from "$((f + 100000))"
	frames_kept_growing "$n"
	wait_until 30 window_is both
	# Both actors keep being answered: their own counters grow.
	b=$(actor_stat B "env steps")
	c=$(actor_stat C "env steps")
	sleep 1
	[ "$(actor_stat B "env steps")" -gt "$b" ]
	[ "$(actor_stat C "env steps")" -gt "$c" ]
	# Nothing was lost on the way: no gaps, no refused frames.
	[ "$(server_stat gaps)" -eq 0 ]
	[ "$(server_stat "bad frames")" -eq 0 ]
	stop_all
	# The learner saved what it trained on.
	[ "$(jq .frames "$D/run/checkpoint.json")" -gt 100000 ]
}

@test "SIGKILL of host B's actor and its restart never stop training; the server forgets B's old halves" {
	# B's halves are forgotten 2 s after B falls silent.
	start_a --idle-expiry 2
	start_actor B AB 4
	start_actor C AC 6
	wait_until 120 window_is both
	n=$(wc -l <"$D/run/metrics.jsonl")
	kill -KILL "$AB"
	wait "$AB" || true
	# C's frames alone reach the learner, and training goes on.
	wait_until 30 window_is C
	f=$(metric frames)
	wait_until 30 frames_grow_from "$((f + 50000))"
	# The server forgot B's two halves: two halves left, two expired.
	wait_until 30 eval '[ "$(server_stat halves)" -eq 2 ]'
	[ "$(server_stat expired)" -eq 2 ]
	# B comes back (a new run id: new halves).
	start_actor B AB 4
	wait_until 120 window_is both
	wait_until 30 eval '[ "$(server_stat halves)" -eq 4 ]'
	f=$(metric frames)
	wait_until 30 frames_grow_from "$((f + 50000))"
	# Not one metrics line (a second each) without progress, from before
	# the kill until now.
	frames_kept_growing "$n"
	netns_alive "$INFER" "$LEARN" "$AC"
	stop_all
}

@test "cutting host C's link for 10 s: C resends and says so, the server counts resends, nothing crashes or grows" {
	start_a
	start_actor B AB 4
	start_actor C AC 6
	wait_until 120 window_is both
	# The server's resident memory, once it has served for a while.
	sleep 2
	rss0=$(rss_kib "$INFER")
	resends0=$(server_stat resends)
	n=$(wc -l <"$D/run/metrics.jsonl")
	netns_cut C
	run netns_link_up C
	[ "$status" -ne 0 ]
	t0=$(date +%s)
	# While C is cut off: only B's frames reach the learner, training goes
	# on, and C's actor reports its two halves unanswered and resending.
	wait_until 10 window_is B
	wait_until 10 eval '[ "$(actor_stat C "halves unanswered")" -eq 2 ]'
	grep -q "no answer from tcp://$IPA:5555 for [0-9.]* s: resending the request of envs" "$D/C.err"
	[ "$(server_stat halves)" -eq 4 ]
	left=$((10 - ($(date +%s) - t0)))
	[ "$left" -le 0 ] || sleep "$left"
	window_is B
	netns_restore C
	netns_link_up C
	# C is answered again, says so, and its frames reach the learner again.
	wait_until 60 grep -q "tcp://$IPA:5555 answers again: the request of envs .* was resent [0-9]* times" "$D/C.err"
	wait_until 30 eval '[ "$(actor_stat C "halves unanswered")" -eq 0 ]'
	wait_until 120 window_is both
	# The actor's counters count the resends: about one every --retry-ms
	# (2 s) per half over the cut.
	[ "$(actor_stat C resends)" -ge 6 ]
	# The server's stats lines count the resent copies that reached it, and
	# no gap: TCP delivered every request once the link was back.
	wait_until 10 eval '[ "$(server_stat resends)" -gt "$resends0" ]'
	[ "$(server_stat gaps)" -eq 0 ]
	# C's halves were silent for less than --idle-expiry (60 s): the server
	# kept them and C's requests went on with them, in sequence.
	[ "$(server_stat halves)" -eq 4 ]
	[ "$(server_stat expired)" -eq 0 ]
	frames_kept_growing "$n"
	# Nothing crashed, and the server's memory after the cut stays within
	# 4 MiB of before: requests and replies queued for C during the cut are
	# a few hundred kilobytes, and nothing is kept per request.
	netns_alive "$INFER" "$LEARN" "$AB" "$AC"
	sleep 2
	rss1=$(rss_kib "$INFER")
	echo "seed-infer RSS: $rss0 KiB before the cut, $rss1 KiB after"
	# Under AddressSanitizer (SEED_ASAN=1, from .ci/run) freed memory sits in
	# its quarantine and RSS says nothing of the program's own use.
	[ -n "${SEED_ASAN:-}" ] || [ "$rss1" -le $((rss0 + 4096)) ]
	stop_all
}
