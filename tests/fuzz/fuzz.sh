#!/bin/sh
# tests/fuzz/fuzz.sh: build a libFuzzer target (tests/fuzz/fuzz_TARGET.c) and run it
# briefly, as one TAP test; tests/fuzz/fuzz-TARGET.sh are the make check entries.
#
#   sh tests/fuzz/fuzz.sh TARGET             # the bounded run make check does
#   sh tests/fuzz/fuzz.sh --build TARGET BIN # only build the target, into BIN
#   sh tests/fuzz/fuzz.sh --max-len TARGET   # the largest input it is run with
#
# Targets, each over a parser of what comes from outside (man pages say
# what the formats are; each target's opening comment says what it checks):
#   frame        seed_frame_decode, seed_frame_from_json (one frame)
#   stream       a recorded stream through seed_frame_reader and a kept
#                seed_frame_decoder; JSON lines as seed-cat --encode reads them
#   config       seed_config_resolve on a configuration file and --set values
#   model        seed_model_new on a model description, then a forward pass
#   safetensors  seed_safetensors_parse
#   checkpoint   seed_checkpoint_parse (a lone file) and seed_checkpoint_load
#                (a run directory: checkpoint.json and its .safetensors)
#   replay       seed_replay_restore on a replay snapshot (seed-replay --resume)
#
# Builds with clang -fsanitize=fuzzer,address,undefined straight from the
# library sources into a temporary directory (the source tree may be
# read-only), starts from the corpus in tests/fuzz/corpus/TARGET, and runs for
# SEED_FUZZ_TIME seconds (default 15) or SEED_FUZZ_RUNS inputs (default
# 1000000), whichever ends first, from the fixed seed SEED_FUZZ_SEED (default
# 1; 0 takes a random one).  Skips when clang or its libFuzzer runtime is
# missing, or SEED_FUZZ_SKIP is set.  A crash prints the log and the input (hex) as TAP comments.
# bench/fuzz-long.sh makes the long runs.
set -u

src=${SEED_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${SEED_BUILDDIR:-$src}
cc=${FUZZ_CC:-clang}
time=${SEED_FUZZ_TIME:-15}
runs=${SEED_FUZZ_RUNS:-1000000}
fuzz_seed=${SEED_FUZZ_SEED:-1}

out= print_max_len=
case ${1:-} in
--build) out=${3:?usage: fuzz.sh --build TARGET BIN} target=$2 ;;
--max-len) print_max_len=1 target=${2:?usage: fuzz.sh --max-len TARGET} ;;
*) target=${1:?usage: fuzz.sh TARGET} ;;
esac

core="lib/core/buf.c lib/core/error.c lib/core/tensor.c"
proto="lib/proto/frame.c lib/proto/frame_step.c lib/proto/frame_msgpack.c lib/proto/frame_json.c lib/proto/frame_reader.c"
nn="lib/core/rng.c lib/nn/model.c lib/nn/model_parse.c lib/nn/model_layout.c lib/nn/cpu.c lib/nn/gaussian.c lib/nn/lstm.c lib/nn/blas.c lib/nn/nn_kernels.c"
io="lib/core/fsutil.c lib/io/safetensors.c"
case $target in
frame) sources="$core $proto" max_len=8192 ;;
stream) sources="$core $proto" max_len=2048 ;;
config) sources="$core $io lib/io/checkpoint.c lib/rl/config.c lib/rl/config_keys.c lib/nn/optim.c lib/rl/loss.c lib/rl/vtrace.c lib/rl/ppo.c $nn" max_len=4096 ;;
model) sources="$core $nn" max_len=2048 ;;
safetensors) sources="$core $io" max_len=8192 ;;
checkpoint) sources="$core $io lib/io/checkpoint.c $nn" max_len=8192 ;;
replay) sources="$core $proto lib/core/rng.c lib/core/fsutil.c lib/replay/sumtree.c lib/replay/replay.c" max_len=8192 ;;
*)
	echo "fuzz.sh: no target '$target' (frame, stream, config, model, safetensors, checkpoint, replay)" >&2
	exit 2
	;;
esac

if [ -n "$print_max_len" ]; then
	echo "$max_len"
	exit 0
fi
[ -n "$out" ] || echo "1..1"
comment() { sed 's/^/# /'; }
skip() {
	if [ -n "$out" ]; then
		echo "fuzz.sh: $*" >&2
		exit 77
	fi
	echo "ok 1 - fuzz_$target # SKIP $*"
	exit 0
}

if [ -z "$out" ] && [ -n "${SEED_FUZZ_SKIP:-}" ]; then
	skip "SEED_FUZZ_SKIP is set (.ci/run fuzzes in its plain build only)"
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	skip "$cc not found"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The runtime first: without it this is a skip, not a failure.
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$tmp/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
	skip "$cc cannot build libFuzzer targets (libclang-rt-dev missing?)"
fi

if pkg-config --exists msgpack-c 2>/dev/null; then msgpack=msgpack-c; else msgpack=msgpack; fi
paths=
for s in $sources; do paths="$paths $src/$s"; done
bin=${out:-$tmp/fuzz_$target}
# config.h (blas.c) comes from the build tree; lib/nn for the kernels' header.
# shellcheck disable=SC2046,SC2086
if ! "$cc" -std=c11 -D_GNU_SOURCE -g ${FUZZ_CFLAGS:--O1} -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I"$build" -I"$src/lib" -I"$src/lib/nn" -I"$src/tests" -I"$src/tests/golden" \
	"$src/tests/fuzz/fuzz_$target.c" $paths \
	$(pkg-config --cflags --libs "$msgpack" jansson) -ldl -lpthread -lm -o "$bin" >"$tmp/cc.log" 2>&1; then
	if [ -n "$out" ]; then
		cat "$tmp/cc.log" >&2
		exit 1
	fi
	echo "not ok 1 - fuzz_$target: the target does not build"
	comment <"$tmp/cc.log"
	exit 1
fi
[ -z "$out" ] || exit 0

mkdir "$tmp/corpus"
cp "$src/tests/fuzz/corpus/$target"/* "$tmp/corpus/"
# One BLAS thread: the model targets compute tiny batches.
OPENBLAS_NUM_THREADS=1 "$bin" -seed="$fuzz_seed" -max_total_time="$time" -runs="$runs" -timeout=10 \
	-rss_limit_mb=2048 -max_len="$max_len" -artifact_prefix="$tmp/" "$tmp/corpus" >"$tmp/fuzz.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	echo "ok 1 - fuzz_$target: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$tmp/fuzz.log" || echo done)"
	exit 0
fi
echo "not ok 1 - fuzz_$target: libFuzzer found a failure (exit $rc)"
# What broke first, where a short excerpt of this log (CI's) shows it.
grep -m 4 -E 'property broken|ERROR: |SUMMARY: |runtime error' "$tmp/fuzz.log" | comment
tail -n 60 "$tmp/fuzz.log" | comment
for f in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
	[ -f "$f" ] || continue
	echo "# input $(basename "$f"):"
	od -An -tx1 -v "$f" | head -n 64 | comment
done
exit 1
