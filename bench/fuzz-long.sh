#!/bin/sh
# bench/fuzz-long.sh: long libFuzzer runs of the targets of tests/fuzz/fuzz.sh,
# one after another, and their corpora minimised.
#
#   nice -n 15 sh bench/fuzz-long.sh [TARGET...]      # default: every target
#
# Each target is built with -O2 (and the sanitizers of make check's runs),
# run for SEED_FUZZ_RUNS inputs (default 10,000,000) from a copy of
# tests/fuzz/corpus/TARGET with the seed SEED_FUZZ_SEED (default 1), then
# the corpus it grew is merged (-merge=1) into the kept one: the kept seed
# files stay, and only inputs that add coverage are added.  With
# SEED_FUZZ_UPDATE=1 the merged corpus replaces tests/fuzz/corpus/TARGET.
# Prints one line per target: executions, seconds, executions per second,
# coverage (libFuzzer's cov: edges and ft: features), corpus files and bytes
# before and after, and the failures found (their inputs are kept in the
# work directory, SEED_FUZZ_WORK, default a new one under /tmp).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
runs=${SEED_FUZZ_RUNS:-10000000}
seed=${SEED_FUZZ_SEED:-1}
work=${SEED_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/fuzz-long.XXXXXX")}
mkdir -p "$work"
targets=${*:-frame stream config model safetensors checkpoint}
echo "# work directory: $work"
echo "# target  executions  seconds  exec/s  cov  ft  corpus-before  corpus-after  failures"
status=0
for t in $targets; do
	max_len=$(sh "$src/tests/fuzz/fuzz.sh" --max-len "$t") || exit 2
	FUZZ_CFLAGS=-O2 SEED_BUILDDIR=${SEED_BUILDDIR:-$src} sh "$src/tests/fuzz/fuzz.sh" --build "$t" "$work/fuzz_$t" ||
		exit 1
	rm -rf "$work/$t.grown" "$work/$t.merged"
	mkdir "$work/$t.grown" "$work/$t.merged"
	cp "$src/tests/fuzz/corpus/$t"/* "$work/$t.grown/"
	cp "$src/tests/fuzz/corpus/$t"/* "$work/$t.merged/"
	before="$(ls "$src/tests/fuzz/corpus/$t" | wc -l) files/$(cat "$src/tests/fuzz/corpus/$t"/* | wc -c)B"
	start=$(date +%s)
	OPENBLAS_NUM_THREADS=1 "$work/fuzz_$t" -seed="$seed" -runs="$runs" -max_len="$max_len" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/$t-" "$work/$t.grown" \
		>"$work/$t.log" 2>&1
	rc=$?
	end=$(date +%s)
	OPENBLAS_NUM_THREADS=1 "$work/fuzz_$t" -merge=1 -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
		"$work/$t.merged" "$work/$t.grown" >"$work/$t.merge.log" 2>&1
	after="$(ls "$work/$t.merged" | wc -l) files/$(cat "$work/$t.merged"/* | wc -c)B"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
	done_line=$(grep -E '(DONE|pulse|NEW|REDUCE) +cov:' "$work/$t.log" | tail -n 1)
	cov=$(echo "$done_line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	secs=$((end - start))
	failures=$(ls "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* "$work/$t"-oom-* 2>/dev/null | wc -l)
	[ $rc -eq 0 ] || status=1
	echo "$t  ${execs:-?}  $secs  $(( ${execs:-0} / (secs > 0 ? secs : 1) ))  $cov  $ft  $before  $after  $failures"
	if [ "${SEED_FUZZ_UPDATE:-0}" = 1 ] && [ $rc -eq 0 ]; then
		rm -f "$src/tests/fuzz/corpus/$t"/*
		cp "$work/$t.merged"/* "$src/tests/fuzz/corpus/$t/"
	fi
done
exit $status
