#!/usr/bin/env bats
# seed-cat's command line: printing recorded streams, encoding JSON lines,
# bad frames, sockets, usage errors.  The golden streams come from Python's
# msgpack (tests/golden/make_golden.py); golden.jsonl is their JSON by Python.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	DATA="$SEED_SRCDIR/tests/golden/data"
	PUSH="$SEED_BUILDDIR/tests/cli/frame_push"
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	# What a failing (or timed out) test left running.
	[ -z "${pid:-}" ] || kill "$pid" 2>/dev/null || true
}

# JSON lines compared by value (jq normalises numbers and key order).
same_json() {
	diff <(jq -cS . "$1") <(jq -cS . "$2")
}

@test "--help prints the usage on stdout and exits 0" {
	run --separate-stderr seed-cat --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: seed-cat [OPTION]... [FILE|-|ENDPOINT]"* ]]
	[[ "$output" == *"--connect ENDPOINT"* ]]
	[ -z "$stderr" ]
}

@test "--version names the program" {
	run seed-cat --version
	[ "$status" -eq 0 ]
	[[ "$output" == "seed-cat (seed) "* ]]
}

@test "usage errors exit 2 with the usage line on stderr" {
	for args in "--bogus" "--count" "--count 0" "--count x" "a b" "--sub" "--raw --encode" \
		"--connect ipc://x file" "--connect ipc://x --encode" "--connect ipc://x --bind ipc://y" \
		"--connect nonsense" "--connect foo://x" "--out="; do
		# shellcheck disable=SC2086
		run --separate-stderr seed-cat $args
		echo "args: $args, status $status, stderr: $stderr"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == *"usage: seed-cat"* ]]
	done
}

@test "prints a recorded stream as JSON lines, the same values Python wrote" {
	run --separate-stderr seed-cat "$DATA/golden.frames"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 8 ]
	echo "$output" >out.jsonl
	same_json out.jsonl "$DATA/golden.jsonl"
}

@test "reads standard input, with - or no file" {
	seed-cat <"$DATA/golden.frames" >a.jsonl
	seed-cat - <"$DATA/golden.frames" >b.jsonl
	same_json a.jsonl "$DATA/golden.jsonl"
	cmp a.jsonl b.jsonl
}

@test "output is jq-friendly: fields, tensors as nested lists, non-finite floats as strings" {
	run bash -c "seed-cat '$DATA/golden.frames' | jq -c 'select(.type == \"step\") | [.run, .obs.shape, .reward.data, .obs.data[0][1]]'"
	[ "$status" -eq 0 ]
	[ "$output" = '[3735928559,[3,4],[1,-0.5,0.1],-0]' ]
	run bash -c "seed-cat '$DATA/golden.frames' | jq -c 'select(.type == \"episode\" and .member == null) | .return.data'"
	[ "$output" = '[21,"nan","-inf"]' ]
}

@test "--encode and back through pipes gives the same frames" {
	seed-cat "$DATA/golden.frames" >a.jsonl
	seed-cat "$DATA/golden.frames" | seed-cat --encode | seed-cat >b.jsonl
	cmp a.jsonl b.jsonl
	# Python's JSON encodes to the frames Python packed.
	seed-cat --encode "$DATA/golden.jsonl" | seed-cat >c.jsonl
	cmp a.jsonl c.jsonl
	# And a second round changes no byte of our own encoding.
	seed-cat --encode a.jsonl >a.frames
	seed-cat a.frames | seed-cat --encode >b.frames
	cmp a.frames b.frames
}

@test "Box frames (f32 [K,A] actions, bounds, Gaussian unrolls, evolution's noise and statistics) print and encode back byte for byte" {
	run --separate-stderr seed-cat "$DATA/box.frames"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 5 ]
	echo "$output" >box.jsonl
	same_json box.jsonl "$DATA/box.jsonl"
	run bash -c "jq -c 'select(.type == \"action\") | [.action.shape, .action.data]' box.jsonl"
	[ "$output" = '[[2,3],[[0.5,-1.25,3e-08],[-0,1e+30,-2.5]]]' ]
	run bash -c "jq -c 'select(.type == \"step\") | [.action_low.data, .action_high.data]' box.jsonl"
	[ "$output" = '[[-1,"-inf",0.5],[1,"inf",0.5]]' ]
	run bash -c "jq -c 'select(.type == \"generation\") | [.action_noise, .obs_mean.data, .obs_var.shape]' box.jsonl"
	[ "$output" = '[0.1,[0.5,-3.25,0.001],[3]]' ]
	run bash -c "jq -c 'select(.type == \"episode\") | [.obs_count, .obs_sum.dtype, .obs_sumsq.data[1]]' box.jsonl"
	[ "$output" = '[261,"f64",2760.0625]' ]
	# The JSON encodes to the bytes Python packed.
	seed-cat --encode box.jsonl >box.frames
	cmp box.frames "$DATA/box.frames"
	seed-cat --encode "$DATA/box.jsonl" | cmp - "$DATA/box.frames"
}

@test "--encode refuses a Box action that is not finite" {
	echo '{"type":"action","version":1,"run":5,"actor":1,"seq":9,"env0":0,"policy_version":3,"action":{"dtype":"f32","shape":[2,2],"data":[[0,1],[2,"inf"]]}}' >bad.jsonl
	run --separate-stderr seed-cat --encode bad.jsonl
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"action frame: field 'action': element 3 is not finite"* ]]
}

@test "--encode turns hand-written JSON into frames" {
	cat >hand.jsonl <<-'EOF'
	{"type":"action","version":1,"run":5,"actor":1,"seq":9,"env0":0,"policy_version":3,"action":{"dtype":"i32","shape":[3],"data":[0,1,1]}}

	{"type":"error","version":1,"code":-10001,"message":"hello \"world\"","frame":"step"}
	EOF
	run --separate-stderr bash -c 'seed-cat --encode hand.jsonl | seed-cat'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = '{"type":"action","version":1,"run":5,"actor":1,"seq":9,"env0":0,"policy_version":3,"action":{"dtype":"i32","shape":[3],"data":[0,1,1]}}' ]
	[ "${lines[1]}" = '{"type":"error","version":1,"code":-10001,"message":"hello \"world\"","frame":"step"}' ]
}

@test "bad frames in a stream are reported with their number and skipped" {
	run --separate-stderr seed-cat "$DATA/mixed.frames"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "$(echo "$output" | jq -r .type | tr '\n' ' ')" = "step unroll episode " ]
	[[ "$stderr" == *"seed-cat: frame 2 (byte 516): step frame: field 'reward': dtype i32, expected f32"* ]]
	[[ "$stderr" == *"seed-cat: frame 4 (byte "*"): frame: field 'type': unknown frame type 'stepp'"* ]]
	[[ "$stderr" == *"seed-cat: frame 6 (byte "*"): frame: not a map but int"* ]]
	[[ "$stderr" == *"seed-cat: 3 bad frames of 6"* ]]
}

@test "--strict stops at the first bad frame" {
	run --separate-stderr seed-cat --strict "$DATA/mixed.frames"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$stderr" == *"frame 2 (byte 516)"* ]]
	[[ "$stderr" != *"frame 4"* ]]
}

@test "--raw writes the good frames' bytes: a filter for streams" {
	seed-cat --raw "$DATA/mixed.frames" >good.frames || true
	run --separate-stderr seed-cat good.frames
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	# The bytes are passed on untouched.
	seed-cat --raw "$DATA/golden.frames" | cmp - "$DATA/golden.frames"
}

@test "--count N stops after N frames" {
	run --separate-stderr seed-cat --count 2 "$DATA/golden.frames"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "--out writes a file, and leaves it alone on failure" {
	run seed-cat --out out.jsonl "$DATA/golden.frames"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same_json out.jsonl "$DATA/golden.jsonl"
	echo old >keep.jsonl
	run seed-cat --strict --out keep.jsonl "$DATA/mixed.frames"
	[ "$status" -eq 1 ]
	[ "$(cat keep.jsonl)" = old ]
	# Bad frames skipped without --strict: the good ones are written.
	run seed-cat --out keep.jsonl "$DATA/mixed.frames"
	[ "$status" -eq 1 ]
	[ "$(wc -l <keep.jsonl)" -eq 3 ]
	# No temporary files are left behind.
	[ "$(ls | grep -c XXXXXX)" -eq 0 ]
	[ "$(ls keep.jsonl.* out.jsonl.* 2>/dev/null | wc -l)" -eq 0 ]
	run seed-cat --out no/such/dir/x "$DATA/golden.frames"
	[ "$status" -eq 1 ]
}

@test "--encode reports a bad line by number and goes on" {
	{
		sed -n 1p "$DATA/golden.jsonl"
		echo '{"type":"step","version":1}'
		echo 'not json'
		sed -n 2p "$DATA/golden.jsonl"
	} >lines.jsonl
	run --separate-stderr bash -c 'seed-cat --encode lines.jsonl >two.frames'
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"seed-cat: line 2: step frame: field 'run': missing"* ]]
	[[ "$stderr" == *"seed-cat: line 3: frame: bad JSON at line 1"* ]]
	run seed-cat two.frames
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "a truncated stream: the whole frames, then an error naming the byte" {
	head -c 1000 "$DATA/golden.frames" >cut.frames
	run --separate-stderr seed-cat cut.frames
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$stderr" == *"seed-cat: cut.frames: frame at byte 516: the input ends inside it (truncated)"* ]]
}

@test "input that is not msgpack, or missing" {
	printf '\xc1' >junk
	run --separate-stderr seed-cat junk
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"junk: frame at byte 0: not msgpack"* ]]
	run --separate-stderr seed-cat no-such-file
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no-such-file: No such file or directory"* ]]
}

@test "--connect receives from a PUSH peer; bad frames are reported" {
	"$PUSH" "ipc://$BATS_TEST_TMPDIR/push" "$DATA/mixed.frames" 2>push.err &
	pid=$!
	run --separate-stderr timeout 20 seed-cat --connect "ipc://$BATS_TEST_TMPDIR/push" --count 6
	wait "$pid"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "$stderr" == *"seed-cat: frame 2: step frame: field 'reward': dtype i32, expected f32"* ]]
	echo "$output" >got.jsonl
	seed-cat "$DATA/mixed.frames" 2>/dev/null >want.jsonl || true
	cmp got.jsonl want.jsonl
}

@test "a multi-part message is one bad frame, and the next frame is printed" {
	"$SEED_BUILDDIR/tests/cli/push_parts" "ipc://$BATS_TEST_TMPDIR/parts" "$DATA/golden.frames" 2>parts.err &
	pid=$!
	run --separate-stderr timeout 20 seed-cat --count 2 "ipc://$BATS_TEST_TMPDIR/parts"
	wait "$pid"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	# The third frame of the stream is the one printed.
	[ "$output" = "$(seed-cat "$DATA/golden.frames" | sed -n 3p)" ]
	[[ "$stderr" == *"seed-cat: frame 1: ipc://$BATS_TEST_TMPDIR/parts: multi-part message (a frame is one part)"* ]]
	[[ "$stderr" == *"seed-cat: 1 bad frame of 2"* ]]
}

@test "--connect --sub receives from a PUB peer" {
	"$PUSH" --pub "ipc://$BATS_TEST_TMPDIR/pub" "$DATA/golden.frames" 2>push.err &
	pid=$!
	run --separate-stderr timeout 20 seed-cat --sub --connect "ipc://$BATS_TEST_TMPDIR/pub" --count 8
	wait "$pid"
	[ "$status" -eq 0 ]
	echo "$output" >got.jsonl
	same_json got.jsonl "$DATA/golden.jsonl"
}

@test "--connect ends cleanly on SIGINT and SIGTERM, and --out is written then" {
	for sig in INT TERM; do
		seed-cat --connect "ipc://$BATS_TEST_TMPDIR/nobody" --out got.jsonl &
		pid=$!
		wait_for_handler "$pid" 2
		kill -s "$sig" "$pid"
		status=0
		wait "$pid" || status=$?
		[ "$status" -eq 0 ]
		[ -f got.jsonl ]
		[ ! -s got.jsonl ]
		rm got.jsonl
	done
}

@test "the manual's examples print what the manual says" {
	man="$SEED_SRCDIR/man/seed-cat.1"
	# The blocks after '.\" test': roff escapes undone, one file per block.
	awk '/^\.\\" test$/ { want = 1; next }
	     want && /^\.EX$/ { inblock = 1; n++; next }
	     inblock && /^\.EE$/ { inblock = 0; want = 0; next }
	     inblock { gsub(/\\e/, "\\"); gsub(/\\-/, "-"); print > ("block" n) }' "$man"
	[ -f block1 ]
	[ -f block2 ]
	for block in block*; do
		# Split into commands (with continuations) and their expected output.
		: >script
		n=0
		cont=0
		while IFS= read -r line; do
			if [ "$cont" -eq 0 ] && [ "${line#\$ }" != "$line" ]; then
				n=$((n + 1))
				printf '%s\n' "${line#\$ }" >"cmd$n"
				: >"want$n"
			elif [ "$cont" -eq 1 ]; then
				printf '%s\n' "$line" >>"cmd$n"
			else
				printf '%s\n' "$line" >>"want$n"
			fi
			case "$line" in *\\) cont=1 ;; *) cont=0 ;; esac
		done <"$block"
		[ "$n" -gt 0 ]
		for i in $(seq 1 "$n"); do
			bash "cmd$i" >"got$i" 2>&1 || true
			echo "example: $(cat "cmd$i")"
			diff "want$i" "got$i"
		done
		rm -f cmd* want* got*
	done
}

@test "the input is any endpoint: a URL connects, @URL binds" {
	# A URL as the input connects, as --connect does.
	"$PUSH" "ipc://$BATS_TEST_TMPDIR/push" "$DATA/golden.frames" 2>push.err &
	pid=$!
	run --separate-stderr timeout 20 seed-cat --count 8 "ipc://$BATS_TEST_TMPDIR/push"
	wait "$pid"
	[ "$status" -eq 0 ]
	echo "$output" >got.jsonl
	same_json got.jsonl "$DATA/golden.jsonl"
	# And @URL binds, for a peer that connects: an offline actor pushing
	# its step frames (the reset observation, then one per line).
	timeout 20 seed-cat --count 3 "@ipc://$BATS_TEST_TMPDIR/bound" >bound.jsonl &
	pid=$!
	for _ in $(seq 100); do [ -S "$BATS_TEST_TMPDIR/bound" ] && break; sleep 0.1; done
	printf '0\n1\n' | seed-actor --env cartpole --actions - --out "ipc://$BATS_TEST_TMPDIR/bound" --quiet
	wait "$pid"
	[ "$(jq -r .type bound.jsonl | tr '\n' ' ')" = "step step step " ]
	[ "$(jq -c .seq bound.jsonl | tr '\n' ' ')" = "0 1 2 " ]
}

@test "--sub with a URL input receives from a PUB peer" {
	"$PUSH" --pub "ipc://$BATS_TEST_TMPDIR/pub" "$DATA/golden.frames" 2>push.err &
	pid=$!
	run --separate-stderr timeout 20 seed-cat -S -n 8 "ipc://$BATS_TEST_TMPDIR/pub"
	wait "$pid"
	[ "$status" -eq 0 ]
	echo "$output" >got.jsonl
	same_json got.jsonl "$DATA/golden.jsonl"
}

@test "short letters follow the shared table of seed_opts(3)" {
	seed-cat -R "$DATA/golden.frames" | cmp - "$DATA/golden.frames"
	seed-cat -O out.jsonl -n 2 "$DATA/golden.frames"
	[ "$(wc -l <out.jsonl)" -eq 2 ]
	seed-cat "$DATA/golden.frames" >a.jsonl
	seed-cat -E a.jsonl | seed-cat | cmp - a.jsonl
	# The old letters of --raw, --out, --encode and --sub mean other things
	# elsewhere: here they are unknown.
	for old in -r -o -e -s; do
		run --separate-stderr seed-cat "$old" "$DATA/golden.frames"
		[ "$status" -eq 2 ]
		[[ "$stderr" == *"seed-cat: unknown option '$old'"* ]]
	done
}
