#!/usr/bin/env bats
# seed-learn's TensorBoard event files, read back by TensorBoard's own reader
# (the tensorboard Python package, tests/golden/read_tfevents.py): every metrics
# line as scalars at step "frames", a new file for a resumed run, and a
# damaged last record that costs only that record.  Without the package the
# reading is skipped, saying so (CI installs it: scripts/install-deps).

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
}

teardown() {
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$D"
}

need_tensorboard() {
	command -v python3 >/dev/null || skip "no python3 to read the event files with"
	python3 -c 'import tensorboard' 2>/dev/null ||
		skip "the tensorboard Python package is missing (pip install tensorboard; scripts/install-deps)"
}

# learn ARGS...: seed-learn on that topology, a metrics line every 0.1 s.
learn() {
	run seed-learn --set target_return=null --set metrics_interval=0.1 --unrolls "ipc://$D/unrolls" \
		--params "ipc://$D/params" --quiet "$@"
	echo "$output"
	assert_success
}

@test "every metrics line is in the event file, and a resumed run adds a file: as TensorBoard reads them" {
	start_topology
	learn --config cartpole --frames 20000 --dir "$D/run"
	run ls "$D/run"
	[ "$(grep -c '^events\.out\.tfevents\.[0-9]\{10\}\.' <<<"$output")" -eq 1 ]
	learn --resume "$D/run" --frames 30000
	run ls "$D/run"
	[ "$(grep -c '^events\.out\.tfevents\.[0-9]\{10\}\.' <<<"$output")" -eq 2 ]
	[ "$(wc -l <"$D/run/metrics.jsonl")" -ge 4 ]
	need_tensorboard
	run python3 "$SEED_SRCDIR/tests/golden/read_tfevents.py" "$D/run"
	echo "$output"
	assert_success
	assert_output --partial "2 files"
	# The steps go on across the resume: the second file starts past the first's end.
	[ "$(jq -s 'map(.frames) | . == sort' "$D/run/metrics.jsonl")" = true ]
}

@test "a truncated or corrupted last record loses that record only" {
	start_topology
	learn --config cartpole --frames 10000 --dir "$D/run"
	need_tensorboard
	n=$(wc -l <"$D/run/metrics.jsonl")
	[ "$n" -ge 2 ]
	head -n $((n - 1)) "$D/run/metrics.jsonl" >"$D/fewer.jsonl"
	# A write cut short by a full disk: the last record without its last 3 bytes.
	mkdir "$D/cut" "$D/flip"
	cp "$D"/run/events.out.tfevents.* "$D/cut/"
	cp "$D"/run/events.out.tfevents.* "$D/flip/"
	truncate -s -3 "$D"/cut/events.out.tfevents.*
	run python3 "$SEED_SRCDIR/tests/golden/read_tfevents.py" "$D/cut" "$D/fewer.jsonl"
	echo "$output"
	assert_success
	# A flipped bit in the last record's data (before its 4-byte CRC): the
	# reader's CRC check refuses it.
	python3 - "$D"/flip/events.out.tfevents.* <<-'PY'
		import os, sys
		with open(sys.argv[1], "r+b") as f:
		    f.seek(-6, os.SEEK_END)
		    b = f.read(1)
		    f.seek(-6, os.SEEK_END)
		    f.write(bytes([b[0] ^ 0x10]))
	PY
	run python3 "$SEED_SRCDIR/tests/golden/read_tfevents.py" "$D/flip" "$D/fewer.jsonl"
	echo "$output"
	assert_success
	# The untouched file has every line.
	run python3 "$SEED_SRCDIR/tests/golden/read_tfevents.py" "$D/run"
	assert_success
	assert_output --partial "$n events"
}
