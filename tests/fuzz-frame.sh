#!/bin/sh
# tests/fuzz-frame.sh: a short libFuzzer run over the frame decoder and JSON
# (tests/fuzz_frame.c), as one TAP test.
#
# Builds the target with clang -fsanitize=fuzzer,address,undefined straight
# from the library sources into a temporary directory (the source tree may be
# read-only), starts from the seed corpus in tests/fuzz/corpus, and runs for
# SEED_FUZZ_TIME seconds (default 20) or SEED_FUZZ_RUNS inputs (default
# 500000), whichever ends first.  Skips when clang or its libFuzzer runtime
# is missing.  A crash prints the log and the input (hex) as TAP comments.
#   SEED_FUZZ_TIME=600 sh tests/fuzz-frame.sh     # a longer run by hand
set -u

src=${SEED_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cc=${FUZZ_CC:-clang}
time=${SEED_FUZZ_TIME:-20}
runs=${SEED_FUZZ_RUNS:-500000}
# A fixed seed keeps make check reproducible; vary it (SEED_FUZZ_SEED=0 takes
# a random one) to explore further by hand.
fuzz_seed=${SEED_FUZZ_SEED:-1}

echo "1..1"
comment() { sed 's/^/# /'; }

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "ok 1 - fuzz_frame # SKIP $cc not found"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-frame.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The runtime first: without it this is a skip, not a failure.
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$tmp/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
	echo "ok 1 - fuzz_frame # SKIP $cc cannot build libFuzzer targets (libclang-rt-dev missing?)"
	exit 0
fi

if pkg-config --exists msgpack-c 2>/dev/null; then msgpack=msgpack-c; else msgpack=msgpack; fi
# shellcheck disable=SC2046
if ! "$cc" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$src/lib" "$src/tests/fuzz_frame.c" \
	"$src/lib/proto/frame.c" "$src/lib/proto/frame_msgpack.c" "$src/lib/proto/frame_json.c" "$src/lib/proto/frame_reader.c" \
	"$src/lib/core/buf.c" "$src/lib/core/error.c" "$src/lib/core/tensor.c" \
	$(pkg-config --cflags --libs "$msgpack" jansson) -lm -o "$tmp/fuzz_frame" >"$tmp/cc.log" 2>&1; then
	echo "not ok 1 - fuzz_frame: the target does not build"
	comment <"$tmp/cc.log"
	exit 1
fi

mkdir "$tmp/corpus"
cp "$src"/tests/fuzz/corpus/* "$tmp/corpus/"
"$tmp/fuzz_frame" -seed="$fuzz_seed" -max_total_time="$time" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
	-max_len=8192 -artifact_prefix="$tmp/" "$tmp/corpus" >"$tmp/fuzz.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	echo "ok 1 - fuzz_frame: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$tmp/fuzz.log" || echo done)"
	exit 0
fi
echo "not ok 1 - fuzz_frame: libFuzzer found a failure (exit $rc)"
tail -n 60 "$tmp/fuzz.log" | comment
for f in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
	[ -f "$f" ] || continue
	echo "# input $(basename "$f"):"
	od -An -tx1 -v "$f" | head -n 64 | comment
done
exit 1
