#!/usr/bin/env bats
# seed-replay's command line: sampling and priorities over its sockets, bad
# frames, the rate limiter holding either side back, snapshots and resume,
# and unrolls from a real seed-infer.  The peer is tests/cli/replay_client: its
# `unrolls` rows carry their own key as every observation value, so a
# sampled row can be checked against the key it came with.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	CLIENT="$SEED_BUILDDIR/tests/cli/replay_client"
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$D"
}

# start_replay NAME OPTION...: seed-replay on ipc://$D/NAME-l (learners) and
# ipc://$D/NAME-u (unrolls), stderr to $D/NAME.err; its pid in $REPLAY.
start_replay() {
	local name=$1
	shift
	seed-replay --bind "ipc://$D/$name-l" --unrolls "ipc://$D/$name-u" "$@" 2>"$D/$name.err" &
	REPLAY=$!
	PIDS+=("$REPLAY")
	wait_for_handler "$REPLAY" 15
}

# wait_for FILE REGEX: until a line of FILE matches (10 s at most).
wait_for() {
	local i
	for i in $(seq 100); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no line matching '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}

stop_replay() {
	kill -TERM "$1"
	wait "$1"
}

@test "--help and --version go to stdout and exit 0" {
	run seed-replay --help
	assert_success
	assert_output --partial "Usage: seed-replay"
	assert_output --partial "--samples-per-insert"
	run seed-replay --version
	assert_success
	assert_output --regexp '^seed-replay \(seed\) [0-9]'
}

@test "misuse gets a short usage on stderr and exit 2" {
	run seed-replay --unrolls "ipc://$D/u"
	[ "$status" -eq 2 ]
	assert_output --partial "--bind is required"
	run seed-replay --bind "ipc://$D/l"
	[ "$status" -eq 2 ]
	assert_output --partial "--unrolls is required"
	run seed-replay --bind "ipc://$D/l" --unrolls "ipc://$D/u" --resume
	[ "$status" -eq 2 ]
	assert_output --partial "--resume needs --dir"
	run seed-replay --bind "ipc://$D/l" --unrolls "ipc://$D/u" --capacity 10 --min-size 11
	[ "$status" -eq 2 ]
	assert_output --partial "minimum size 11"
	run seed-replay --bind "ipc://$D/l" --unrolls "ipc://$D/u" --alpha -1
	[ "$status" -eq 2 ]
	: >"$D/file"
	run seed-replay --bind "ipc://$D/l" --unrolls "$D/file"
	[ "$status" -eq 2 ]
	assert_output --partial "ZeroMQ endpoints"
}

@test "samples are the rows inserted under their keys; priorities steer them" {
	start_replay r --capacity 64 --min-size 8 --stats-interval 0.1
	"$CLIENT" unrolls "ipc://$D/r-u" 3 4 5
	wait_for "$D/r.err" " 12 inserted"
	run "$CLIENT" sample "ipc://$D/r-l" 6 3 5000
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	local line keys obs
	for line in "${lines[@]}"; do
		[[ $line == "sequences 6 5 "* ]]
		keys=$(sed 's/.*keys=\([^ ]*\).*/\1/' <<<"$line")
		obs=$(sed 's/.*obs=\([^ ]*\).*/\1/' <<<"$line")
		[ "$keys" = "$obs" ]
		# Equal first priorities (no priority field: 1 each): weights all 1.
		[[ $line == *" weights=1,1,1,1,1,1" ]]
	done
	# Every key but 7 gets priority 0: only 7 comes back, weight 1.
	local upd=() k
	for k in $(seq 0 11); do
		[ "$k" -eq 7 ] && upd+=("$k=2") || upd+=("$k=0")
	done
	"$CLIENT" priority "ipc://$D/r-l" "${upd[@]}" 99=1 -1=1
	wait_for "$D/r.err" " 12 updated, 2 stale keys"
	run "$CLIENT" sample "ipc://$D/r-l" 4 1 5000
	assert_success
	assert_output "sequences 4 5 keys=7,7,7,7 obs=7,7,7,7 weights=1,1,1,1"
	stop_replay "$REPLAY"
	grep -q "layout: T+1 5, obs f32 (1 dims), 2 actions, state 0" "$D/r.err"
	grep -q "done: .* 12 inserted, 22 sampled, 12 updated, 2 stale keys" "$D/r.err"
}

@test "first priorities come with the unroll and set the importance weights" {
	start_replay r --capacity 64 --min-size 2 --alpha 1 --beta 1 --stats-interval 0.1
	# Two frames of 2 rows: keys 0, 1 at priority 1, keys 2, 3 at 3.  P =
	# 1/8, 1/8, 3/8, 3/8; w = (1/4)/P = 2, 2, 2/3, 2/3 over the largest, 2.
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 3 1
	wait_for "$D/r.err" " 2 inserted"
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 3 3
	wait_for "$D/r.err" " 4 inserted"
	# Stratified over 8 segments of mass 1: keys 0, 1, then 2 three times
	# (mass [2, 5)) and 3 three times.
	run "$CLIENT" sample "ipc://$D/r-l" 8 1 5000
	assert_success
	assert_output --regexp "^sequences 8 3 keys=0,1,2,2,2,3,3,3 obs=[^ ]* weights=1,1,0.333333,0.333333,0.333333,0.333333,0.333333,0.333333$"
}

@test "bad frames are counted, said and answered; the service keeps serving" {
	start_replay r --capacity 64 --min-size 2 --max-batch 100 --stats-interval 0.1
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 5
	wait_for "$D/r.err" " 2 inserted"
	printf '\x93\x01\x02' >"$D/array"
	printf '\xc1junk' >"$D/junk"
	run "$CLIENT" send "ipc://$D/r-l" "$D/array" 2000
	assert_output --partial "error -10001: frame: "
	run "$CLIENT" send "ipc://$D/r-l" "$D/junk" 2000
	assert_output --partial "error -10001:"
	run "$CLIENT" sample "ipc://$D/r-l" 101 1 2000
	assert_output --partial "batch 101 can never be answered"
	"$CLIENT" push "ipc://$D/r-u" "$D/junk"
	# Another layout (T+1 6) is refused; episode frames are not bad.
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 6
	wait_for "$D/r.err" "layout T\+1 6, obs f32 \[4\], A 2, S 0, but the replay holds T\+1 5"
	# The same again is counted, not said again (rate-limited).
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 6
	wait_for "$D/r.err" " 6 bad frames"
	run "$CLIENT" sample "ipc://$D/r-l" 2 1 5000
	assert_success
	assert_output --partial "sequences 2 5 "
	stop_replay "$REPLAY"
	[ "$(grep -c "but the replay holds" "$D/r.err")" -eq 1 ]
	grep -q "6 bad frames" "$D/r.err"
	grep -q "3 bad unrolls, 2 bad requests, 1 requests refused" "$D/r.err"
}

@test "a first unroll too large for --max-memory is refused; one that fits fixes the layout" {
	# A sequence of T+1 300 takes 300 x (16 + 18 + 8) + 12 = 12612 bytes:
	# 10000 of them are more than 64 MiB; of T+1 5, 222 bytes, 2.2 MB.
	start_replay r --capacity 10000 --min-size 1 --max-memory 64 --stats-interval 0.1
	"$CLIENT" unrolls "ipc://$D/r-u" 1 1 300
	wait_for "$D/r.err" "more than the 67108864 allowed"
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 5
	wait_for "$D/r.err" " 2 inserted"
	run "$CLIENT" sample "ipc://$D/r-l" 1 1 5000
	assert_output --regexp "^sequences 1 5 "
}

@test "a fast learner waits: for the minimum size, then for the ratio" {
	# R 1, E 2, M 4: c = 4; a sample of 2 is answered while
	# inserted - sampled - 2 >= 2.
	start_replay r --capacity 64 --min-size 4 --samples-per-insert 1 --rate-tolerance 2 --stats-interval 0.1
	"$CLIENT" unrolls "ipc://$D/r-u" 1 3 2
	wait_for "$D/r.err" " 3 inserted"
	run "$CLIENT" sample "ipc://$D/r-l" 2 1 500
	[ "$status" -eq 3 ]
	assert_output "timeout after 0 answers"
	# 6 inserted: diff 6 - 2 = 4 >= 2 answers one (the one still waiting, or a
	# new one), then 6 - 2 - 2 = 2 >= 2 a second, then no more.
	"$CLIENT" unrolls "ipc://$D/r-u" 1 3 2
	wait_for "$D/r.err" " 6 inserted"
	wait_for "$D/r.err" " 2 sampled"
	run "$CLIENT" sample "ipc://$D/r-l" 2 3 700
	[ "$status" -eq 3 ]
	assert_output --partial "timeout after 1 answers"
	stop_replay "$REPLAY"
	grep -q "done: .* 6 inserted, 4 sampled" "$D/r.err"
	grep -Eq "samples waited [1-9][0-9]*\.[0-9]%" "$D/r.err"
}

@test "a slow learner throttles inserts: the unroll socket is not read" {
	# R 1, E 2, M 4: inserts are taken while inserted - sampled <= 6.
	start_replay r --capacity 1000 --min-size 4 --samples-per-insert 1 --rate-tolerance 2 --hwm 2 \
		--stats-interval 0.1
	"$CLIENT" unrolls "ipc://$D/r-u" 40 1 2 &
	PIDS+=($!)
	wait_for "$D/r.err" " 7 inserted"
	sleep 1
	# Nothing more while nobody samples.
	stop_replay "$REPLAY"
	grep -q "done: .* 7 inserted, 0 sampled" "$D/r.err"
	grep -Eq "inserts blocked [1-9][0-9]*\.[0-9]%" "$D/r.err"

	# Each answered sample of 2 lets 2 more in.
	start_replay s --capacity 1000 --min-size 4 --samples-per-insert 1 --rate-tolerance 2 --hwm 2 \
		--stats-interval 0.1
	# Two senders: a sender's last frames can sit on the receiving side
	# after the pause, not handed on until new data arrives on that
	# connection (seen in CI: inserts allowed, nothing more coming, once at
	# 16 inserted, once at 11); seed-infer never stops sending, so only an
	# idle sender meets this.  With two, one going idle does not stop the
	# inserts the limiter allows.
	"$CLIENT" unrolls "ipc://$D/s-u" 40 1 2 &
	PIDS+=($!)
	wait_for "$D/s.err" " 7 inserted"
	"$CLIENT" unrolls "ipc://$D/s-u" 40 1 2 &
	PIDS+=($!)
	run "$CLIENT" sample "ipc://$D/s-l" 2 5 5000
	assert_success
	wait_for "$D/s.err" " 17 inserted"
	sleep 0.5
	stop_replay "$REPLAY"
	grep -q "done: .* 17 inserted, 10 sampled" "$D/s.err"
}

@test "SIGTERM snapshots; --resume brings back the items and priorities" {
	start_replay r --capacity 10 --min-size 2 -d "$D/snap" --stats-interval 0.1
	"$CLIENT" unrolls "ipc://$D/r-u" 4 3 3
	wait_for "$D/r.err" " 12 inserted"
	# Keys 2..11 are stored (10 slots); all but 5 to priority 0.
	local upd=() k
	for k in 2 3 4 6 7 8 9 10 11; do upd+=("$k=0"); done
	"$CLIENT" priority "ipc://$D/r-l" "${upd[@]}" 5=4
	wait_for "$D/r.err" " 10 updated"
	stop_replay "$REPLAY"
	grep -q "snapshot: 10 sequences, 12 inserted, 0 sampled, 10 updated, to $D/snap/replay.snap" "$D/r.err"
	start_replay r --capacity 10 --min-size 2 -d "$D/snap" --resume --stats-interval 0.1
	wait_for "$D/r.err" "resumed with 10 stored, 12 inserted"
	run "$CLIENT" sample "ipc://$D/r-l" 3 1 5000
	assert_output "sequences 3 3 keys=5,5,5 obs=5,5,5 weights=1,1,1"
	# Inserting goes on from key 12 (evicting key 2).
	"$CLIENT" unrolls "ipc://$D/r-u" 1 1 3
	wait_for "$D/r.err" " 13 inserted"
	stop_replay "$REPLAY"
	grep -q "done: .* size 10/10, 13 inserted, 3 sampled" "$D/r.err"
}

@test "kill -9 after a snapshot loses nothing before it: the same samples as without the kill" {
	# Run a: fill, update, sample.  Run b: the same, killed after its
	# snapshot, resumed; the samples must be those of run a.
	local r
	for r in a b; do
		start_replay $r --capacity 16 --min-size 2 --seed 11 -d "$D/$r" --snapshot-every 0.2 \
			--stats-interval 0.1
		"$CLIENT" unrolls "ipc://$D/$r-u" 5 4 3
		wait_for "$D/$r.err" " 20 inserted"
		"$CLIENT" priority "ipc://$D/$r-l" 6=5 9=0.5 12=3
		wait_for "$D/$r.err" "snapshot: 16 sequences, 20 inserted, 0 sampled, 3 updated"
		if [ $r = b ]; then
			kill -9 "$REPLAY"
			wait "$REPLAY" || true
			# Another seed: the generator's state comes from the snapshot.
			start_replay b2 --capacity 16 --min-size 2 --seed 999 -d "$D/b" --resume --stats-interval 0
			r=b2
		fi
		"$CLIENT" sample "ipc://$D/$r-l" 8 4 5000 >"$D/$r.out"
	done
	[ "$(wc -l <"$D/a.out")" -eq 4 ]
	diff "$D/a.out" "$D/b2.out"
	# The first priorities and the updates make the weights differ.
	grep -q "weights=.*0\." "$D/a.out"
}

@test "a corrupt or mismatching snapshot is refused, naming the file" {
	start_replay r --capacity 8 --min-size 2 -d "$D/snap" --quiet
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 3
	sleep 0.3
	stop_replay "$REPLAY"
	run seed-replay --bind "ipc://$D/x-l" --unrolls "ipc://$D/x-u" --capacity 9 --min-size 2 -d "$D/snap" --resume
	[ "$status" -eq 2 ]
	assert_output --partial "$D/snap/replay.snap: snapshot of capacity 8, but --capacity is 9"
	printf 'X' | dd of="$D/snap/replay.snap" bs=1 seek=200 conv=notrunc status=none
	run seed-replay --bind "ipc://$D/x-l" --unrolls "ipc://$D/x-u" --capacity 8 --min-size 2 -d "$D/snap" --resume
	[ "$status" -eq 1 ]
	assert_output --partial "$D/snap/replay.snap: snapshot checksum does not match"
	run seed-replay --bind "ipc://$D/x-l" --unrolls "ipc://$D/x-u" --capacity 8 --min-size 2 -d "$D/none" --resume
	[ "$status" -eq 1 ]
	assert_output --partial "$D/none/replay.snap"
}

@test "a snapshot of other settings is a configuration error: status 2, naming the setting" {
	# Under seed-train status 1 means "restart it"; no restart takes a
	# snapshot of another capacity or alpha, so it is status 2.
	start_replay r --capacity 8 --alpha 0.5 --min-size 2 -d "$D/snap" --quiet
	"$CLIENT" unrolls "ipc://$D/r-u" 1 2 3
	sleep 0.3
	stop_replay "$REPLAY"
	[ -s "$D/snap/replay.snap" ]
	run seed-replay --bind "ipc://$D/x-l" --unrolls "ipc://$D/x-u" --capacity 16 --alpha 0.5 --min-size 2 -d "$D/snap" --resume
	[ "$status" -eq 2 ]
	assert_output --partial "seed-replay: --resume: $D/snap/replay.snap: snapshot of capacity 8, but --capacity is 16"
	assert_output --partial "resume with the snapshot's setting, or move the snapshot away"
	run seed-replay --bind "ipc://$D/x-l" --unrolls "ipc://$D/x-u" --capacity 8 --alpha 0.9 --min-size 2 -d "$D/snap" --resume
	[ "$status" -eq 2 ]
	assert_output --partial "$D/snap/replay.snap: snapshot of alpha 0.5, but alpha is 0.9"
	# Nor a layout over --max-memory: 8 sequences of 4000 steps take more
	# than 1 MiB.
	start_replay b --capacity 8 --min-size 2 -d "$D/big" --quiet
	"$CLIENT" unrolls "ipc://$D/b-u" 1 1 4000
	sleep 0.3
	stop_replay "$REPLAY"
	run seed-replay --bind "ipc://$D/x-l" --unrolls "ipc://$D/x-u" --capacity 8 --min-size 2 --max-memory 1 -d "$D/big" \
		--resume
	[ "$status" -eq 2 ]
	assert_output --partial "$D/big/replay.snap: replay: layout"
	assert_output --partial "(--max-memory 1 MiB)"
	# The snapshot is left as it was: with its own settings it resumes.
	start_replay y --capacity 8 --alpha 0.5 --min-size 2 -d "$D/snap" --resume
	wait_for "$D/y.err" "resumed with 2 stored, 2 inserted"
	stop_replay "$REPLAY"
}

@test "unrolls from seed-infer and seed-actor: sequences of the env's layout" {
	start_replay r --capacity 1000 --min-size 8 --stats-interval 0.1
	seed-infer --bind "ipc://$D/infer" --policy random --unrolls ">ipc://$D/r-u" --unroll-length 4 \
		--stats-interval 0 --quiet &
	PIDS+=($!)
	seed-actor --env cartpole --envs 4 --steps 50 --connect "ipc://$D/infer" --quiet
	wait_for "$D/r.err" " 48 inserted"
	run "$CLIENT" sample "ipc://$D/r-l" 16 1 5000
	assert_success
	assert_output --regexp "^sequences 16 5 keys="
	grep -q "layout: T+1 5, obs f32 (1 dims), 2 actions, state 0" "$D/r.err"
}

@test "seed-cat speaks the replay's frames and refuses bad ones, naming the field" {
	cat >"$D/in.jsonl" <<'JSON'
{"type":"sample","version":1,"batch":3}
{"type":"priority","version":1,"key":{"dtype":"i64","shape":[2],"data":[4,5]},"priority":{"dtype":"f32","shape":[2],"data":[0.5,2]}}
{"type":"priority","version":1,"key":{"dtype":"i64","shape":[2],"data":[4,5]},"priority":{"dtype":"f32","shape":[1],"data":[0.5]}}
{"type":"sample","version":1,"batch":0}
JSON
	run sh -c "seed-cat --encode '$D/in.jsonl' | seed-cat"
	assert_output --partial '{"type":"sample","version":1,"batch":3}'
	assert_output --partial '"priority":{"dtype":"f32","shape":[2],"data":[0.5,2]}}'
	assert_output --partial "line 3: priority frame: field 'priority': shape [1], expected [N]"
	assert_output --partial "line 4: sample frame: field 'batch': 0 out of range"
}

@test "with --curve-key both sockets are CURVE servers: keyed peers get through, a client without keys is refused" {
	cd "$D"
	seed-keygen srv >/dev/null
	seed-keygen act >/dev/null
	mkdir allow
	cp srv.pub act.pub allow/
	start_replay r --capacity 100 --min-size 4 --stats-interval 0.1 --curve-key srv.key --curve-allow allow
	seed-infer --bind "ipc://$D/infer" --policy random --unrolls ">ipc://$D/r-u" --unroll-length 4 \
		--stats-interval 0 --quiet --curve-key srv.key --curve-server srv.pub --curve-allow allow &
	PIDS+=($!)
	seed-actor --env cartpole --envs 2 --steps 10 --connect "ipc://$D/infer" --quiet \
		--curve-key act.key --curve-server srv.pub
	wait_for "$D/r.err" " 4 inserted"
	# The test client has no keys: its requests never get through.
	run "$CLIENT" sample "ipc://$D/r-l" 2 1 1000
	[ "$status" -eq 3 ]
	wait_for "$D/r.err" "refused a peer"
	stop_replay "$REPLAY"
	grep -Eq "^seed-replay: refused [1-9][0-9]* peer" "$D/r.err"
}

@test "episode frames on the unroll socket are relayed to the learners that have asked, dropped before" {
	cd "$D"
	echo '{"type":"episode","version":1,"run":0,"actor":0,"env":{"dtype":"i32","shape":[1],"data":[0]},"return":{"dtype":"f32","shape":[1],"data":[3.5]},"length":{"dtype":"i32","shape":[1],"data":[4]},"truncated":{"dtype":"u8","shape":[1],"data":[0]}}' |
		seed-cat --encode --out episode.frame
	echo '{"type":"priority","version":1,"key":{"dtype":"i64","shape":[1],"data":[0]},"priority":{"dtype":"f32","shape":[1],"data":[1]}}' |
		seed-cat --encode --out priority.frame
	start_replay r --stats-interval 0.1
	# No learner yet: dropped.
	"$CLIENT" push "ipc://$D/r-u" episode.frame
	wait_for "$D/r.err" "0 episode frames relayed, 1 dropped"
	# A learner that has sent a frame (here a priority frame of a key not
	# stored, which has no answer and counts as stale) gets the next one,
	# as it came.
	"$CLIENT" send "ipc://$D/r-l" priority.frame 5000 >learner.out &
	LEARNER=$!
	wait_for "$D/r.err" " 1 stale keys"
	"$CLIENT" push "ipc://$D/r-u" episode.frame
	wait_for "$D/r.err" "1 episode frames relayed, 1 dropped"
	wait "$LEARNER"
	[ "$(cat learner.out)" = "a episode frame" ]
	stop_replay "$REPLAY"
	grep -q "done: .*1 episode frames relayed, 1 dropped" "$D/r.err"
	# The episodes were not stored as sequences.
	grep -Eq "done: .* size 0/" "$D/r.err"
}
