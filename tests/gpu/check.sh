#!/bin/sh
# tests/gpu/check.sh: build Seed with CUDA on a GPU machine, run every GPU
# test and the GPU benchmarks, print a summary; in about 5 minutes.
#
# Usage: tests/gpu/check.sh [DEBS]     (from the source tree's root)
#
# The machine is expected to have the CUDA Toolkit (nvcc, cuBLAS) and a C
# compiler, and nothing of Seed's: no network, so its libraries come as the
# Debian packages in DEBS (default .gpu-debs; scripts/gpu-debs fetches them),
# unpacked with dpkg-deb -x (or ar and tar) into a prefix, of which every
# library the machine already has is dropped (its own are kept).  Seed is
# built from a tarball in DEBS (seed-*.tar.gz, make dist) when there is one,
# else from this tree with autoreconf; out of tree, with --enable-cuda, in
# WORK (default /tmp/seed-gpu-check, emptied first).
# Then, each under a time limit:
#   tests/gpu/test_cuda   the backend against the CPU (TAP; exit 77: no GPU)
#   tests/unit/nn/test_device     device names
#   seed-train            short runs of r2d2-cartpole-masked, ppo-cartpole and
#                         lstm-cartpole-masked with --device cuda
#   bench/gpu_bench       inference forward and learner update rows/s:
#                         MinAtar at 4096 rows (targets 5M and 2M rows/s),
#                         Nature DQN at 1024, CartPole at 4096
#   bench/gpu-train.sh    end-to-end env frames/s with seed-train --device
#                         cuda, MinAtar (target 1M) and CartPole (target 3M),
#                         FRAMES_MINATAR and FRAMES_CARTPOLE frames (default
#                         10M and 20M), actors on the cores less two
# and prints a summary with each figure beside its target.  Without a GPU it
# still builds and runs what skips, and says "no GPU" plainly.
# SEED_CHECK_DEVICE=cpu runs the benchmarks on the CPU instead (to try the
# script itself on a machine without a GPU: the figures are then the CPU's).  The full log
# is WORK/check.log.  Exit status: 0 when everything ran and passed (targets
# missed are reported, not failures), 1 otherwise, 77 when no GPU was found.
set -u
top=$(pwd)
debs=${1:-.gpu-debs}
case $debs in /*) ;; *) debs=$top/$debs ;; esac
work=${WORK:-/tmp/seed-gpu-check}
dev=${SEED_CHECK_DEVICE:-cuda}
jobs=$(nproc 2>/dev/null || echo 4)
start=$(date +%s)
log=$work/check.log
summary=""
status=0
say() { printf '%s\n' "$*"; printf '%s\n' "$*" >>"$log"; }
note() { summary="$summary
$*"; say "$*"; }
elapsed() { echo $(($(date +%s) - start)); }
die() {
	note "FAILED: $*"
	say "---- summary ($(elapsed) s)$summary"
	exit 1
}

[ -f "$top/configure.ac" ] && [ -f "$top/lib/nn/cuda.cu" ] || { echo "check.sh: run it from Seed's source tree" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work/root" "$work/build" || exit 1
: >"$log"
say "check.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n), $jobs cores"

# ---- the GPU and the toolkit ------------------------------------------------
gpu=""
if command -v nvidia-smi >/dev/null 2>&1; then
	gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>>"$log" | head -1)
fi
note "GPU: ${gpu:-none found by nvidia-smi}"
nvcc=$(command -v nvcc 2>/dev/null || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -n "$nvcc" ] || die "no nvcc (in PATH or /usr/local/cuda/bin): the CUDA Toolkit is needed to build"
note "nvcc: $nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"

# ---- the libraries, from the carried packages -------------------------------
root=$work/root
n=0
for f in "$debs"/*.deb; do
	[ -f "$f" ] || continue
	if command -v dpkg-deb >/dev/null 2>&1; then
		dpkg-deb -x "$f" "$root" || die "dpkg-deb -x $f"
	else
		(cd "$work" && rm -rf ar && mkdir ar && cd ar && ar x "$f" && tar xf data.tar.* -C "$root") ||
			die "unpacking $f with ar and tar"
	fi
	n=$((n + 1))
done
[ $n -gt 0 ] || say "no .deb files in $debs: using the machine's own libraries"
ma=x86_64-linux-gnu
# Keep the machine's own copy of any library it already has (the carried ones
# are Debian's, maybe older): only what is missing is used from the prefix.
if [ $n -gt 0 ] && command -v ldconfig >/dev/null 2>&1; then
	have=$(ldconfig -p 2>/dev/null | awk '{print $1}')
	for so in "$root"/usr/lib/$ma/lib*.so.* "$root"/lib/$ma/lib*.so.*; do
		[ -e "$so" ] || continue
		base=$(basename "$so")
		case $base in *.so.*.*) continue ;; esac # the sonames (links) decide
		if printf '%s\n' "$have" | grep -qx "$base"; then
			# The prefix's names (the soname, the file the -dev link
			# names) point at the machine's library.
			sys=$(ldconfig -p | awk -v b="$base" '$1 == b {print $NF; exit}')
			real=$(readlink -f "$so")
			ln -sf "$sys" "$real" && ln -sf "$sys" "$so"
			say "using the machine's $base ($sys)"
		fi
	done
fi
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_PATH="$root/usr/lib/$ma/pkgconfig:$root/usr/lib/$ma/openblas-pthread/pkgconfig:$root/usr/share/pkgconfig"
export PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
export CPATH="$root/usr/include:$root/usr/include/$ma${CPATH:+:$CPATH}"
export LIBRARY_PATH="$root/usr/lib/$ma:$root/lib/$ma:$root/usr/lib/$ma/openblas-pthread${LIBRARY_PATH:+:$LIBRARY_PATH}"
export LD_LIBRARY_PATH="$root/usr/lib/$ma:$root/lib/$ma:$root/usr/lib/$ma/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$root/usr/bin:$(dirname "$nvcc"):$PATH"
if [ -z "${PKG_CONFIG:-}" ]; then
	if [ -x "$root/usr/bin/pkgconf" ]; then
		export PKG_CONFIG="$root/usr/bin/pkgconf"
	elif command -v pkg-config >/dev/null 2>&1; then
		export PKG_CONFIG=pkg-config
	else
		die "no pkg-config: carry pkgconf (scripts/gpu-debs)"
	fi
fi
note "libraries: $n packages unpacked into $root ($(elapsed) s)"

# ---- the build ---------------------------------------------------------------
tarball=$(ls "$debs"/seed-*.tar.gz 2>/dev/null | tail -1)
if [ -n "$tarball" ]; then
	(cd "$work" && tar xzf "$tarball") || die "unpacking $tarball"
	src=$(ls -d "$work"/seed-*/ | head -1)
	src=${src%/}
	say "source: $tarball"
else
	command -v autoreconf >/dev/null 2>&1 || die "no seed-*.tar.gz in $debs and no autoreconf here: make dist, then scripts/gpu-debs DIR TARBALL"
	src=$work/src
	mkdir -p "$src" && (cd "$top" && tar cf - --exclude=./.git --exclude=./.gpu-debs .) | (cd "$src" && tar xf -) || die "copying the tree"
	(cd "$src" && { [ ! -f config.status ] || make distclean >/dev/null 2>&1; } && autoreconf -fi >>"$log" 2>&1) || die "autoreconf (see $log)"
	say "source: this tree (autoreconf)"
fi
b0=$(date +%s)
# libzmq's pkg-config file requires the -dev files of its private
# dependencies (for static links) that are not carried: give its flags.
zmq=""
[ $n -gt 0 ] && zmq=1
(cd "$work/build" && "$src/configure" --enable-cuda NVCC="$nvcc" ${zmq:+"ZMQ_CFLAGS=-I$root/usr/include"} \
	${zmq:+"ZMQ_LIBS=-L$root/usr/lib/$ma -lzmq"} >>"$log" 2>&1) || die "configure --enable-cuda (see $log)"
(cd "$work/build" && make -j"$jobs" >>"$log" 2>&1 &&
	make -j"$jobs" tests/gpu/test_cuda tests/unit/nn/test_device bench/gpu_bench >>"$log" 2>&1) || die "the build (see $log)"
note "build: configure --enable-cuda and make in $(($(date +%s) - b0)) s"
B=$work/build
export SEED_BUILDDIR=$B SEED_SRCDIR=$src

# ---- the tests ---------------------------------------------------------------
run_limited() { # SECONDS COMMAND...: the command's output into the log and $out
	lim=$1
	shift
	out=$(timeout "$lim" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" >>"$log"
	return $rc
}
run_limited 60 "$B/tests/unit/nn/test_device"
rc=$?
note "test_device: $(printf '%s\n' "$out" | grep -c '^ok ') passed, $(printf '%s\n' "$out" | grep -c '^not ok ') failed (exit $rc)"
[ $rc -eq 0 ] || status=1
run_limited 150 "$B/tests/gpu/test_cuda"
rc=$?
if [ $rc -eq 77 ] && [ "$dev" != cpu ]; then
	why=$(printf '%s\n' "$out" | sed -n 's/^1\.\.0 # SKIP //p')
	if [ -n "$gpu" ]; then
		# nvidia-smi sees a GPU that Seed cannot use (a library missing,
		# a driver too old for this CUDA): that is a failure, said so.
		note "test_cuda: SKIPPED although nvidia-smi sees a GPU: $why"
		note "FAILED: the GPU is there but Seed's CUDA backend cannot use it (see above)"
		say "---- summary ($(elapsed) s)$summary"
		exit 1
	fi
	note "test_cuda: SKIPPED, no GPU: $why"
	note "no GPU: nothing ran on a GPU; the build and the skips are all this run shows"
	say "---- summary ($(elapsed) s)$summary"
	exit 77
fi
note "test_cuda: $(printf '%s\n' "$out" | grep -c '^ok ') passed, $(printf '%s\n' "$out" | grep -c '^not ok ') failed (exit $rc)"
printf '%s\n' "$out" | grep -E '^(not ok|# )' | head -20 | while IFS= read -r l; do say "  $l"; done
[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1

# ---- the programs on the device: short runs of the other learners ------------
# R2D2 (an LSTM core under a dueling head, a target network, sequences with
# burn-in), PPO (minibatch epochs) and V-trace through an LSTM: each must
# finish its frames with seed-infer and seed-learn on the device (no training
# target, no periodic evaluations: those presets stop on them).
for spec in "r2d2-cartpole-masked 60000" "ppo-cartpole 100000" "lstm-cartpole-masked 60000"; do
	set -- $spec
	if run_limited 90 "$B/cmd/seed-train" "$1" --device "$dev" --frames "$2" --no-eval --quiet \
		--set target_return=null --set periodic_eval.interval=0 --dir "$work/run-$1"; then
		last=$(printf '%s\n' "$out" | tail -1)
		if printf '%s\n' "$last" | grep -q '"restarts":{[^}]*[1-9]'; then
			# A program died on the way (see WORK/run-PRESET/*.log).
			note "seed-train $1 --device $dev, $2 frames: FAILED, programs restarted: $last"
			status=1
		else
			note "seed-train $1 --device $dev, $2 frames: ok $last"
		fi
	else
		note "seed-train $1 --device $dev: FAILED (exit $?): $(printf '%s\n' "$out" | tail -3 | tr '\n' ' ')"
		status=1
	fi
done

# ---- the benchmarks ------------------------------------------------------------
# target FIGURE GOAL: "(target GOAL: met|missed)"
target() { awk -v f="$1" -v g="$2" 'BEGIN { printf "(target %.3g: %s)", g, (f + 0 >= g) ? "met" : "MISSED" }'; }
rate() { printf '%s\n' "$out" | sed -n "s/^$1 .*: \([0-9.e+]*\) rows\/s.*/\1/p"; }
for spec in "minatar 4096 5e6 2e6" "nature 1024 0 0" "cartpole 4096 0 0"; do
	set -- $spec
	if run_limited 60 "$B/bench/gpu_bench" --device "$dev" --model "$1" --rows "$2" --seconds "${BENCH_SECONDS:-2}"; then
		fi=$(rate infer) fl=$(rate learn)
		if [ "$3" != 0 ]; then
			note "gpu_bench $1 rows=$2: infer $fi rows/s $(target "$fi" "$3"), learn $fl rows/s $(target "$fl" "$4")"
		else
			note "gpu_bench $1 rows=$2: infer $fi rows/s, learn $fl rows/s"
		fi
	else
		note "gpu_bench $1: FAILED (exit $?): $(printf '%s\n' "$out" | tail -2 | tr '\n' ' ')"
		status=1
	fi
done
left=$((300 - $(elapsed)))
for spec in "minatar-breakout ${FRAMES_MINATAR:-10000000} 1e6" "cartpole ${FRAMES_CARTPOLE:-20000000} 3e6"; do
	set -- $spec
	lim=$((left / 2 > 30 ? left / 2 : 30))
	if run_limited $((lim + 30)) env GAMES="$1" SEED_BIN="$B/cmd" TRAIN_TIMEOUT="$lim" sh "$src/bench/gpu-train.sh" "$dev" "$2"; then
		f=$(printf '%s\n' "$out" | sed -n 's/.*: \([0-9]*\) env frames\/s.*/\1/p')
		note "$(printf '%s\n' "$out" | tail -1)${f:+ $(target "$f" "$3")}"
	else
		note "gpu-train.sh $1: FAILED or over ${lim} s (exit $?): $(printf '%s\n' "$out" | tail -3 | tr '\n' ' ')"
		status=1
	fi
	left=$((300 - $(elapsed)))
done
say "---- summary ($(elapsed) s)$summary"
exit $status
