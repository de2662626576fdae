#!/bin/sh
# bench/gpu-train.sh: end-to-end training throughput with the models on a GPU.
#
# Trains minatar-breakout (V-trace, the MinAtar network) and cartpole (V-trace,
# MLP 64-64) with seed-train --device DEV, each for FRAMES env frames with no
# target (so that neither stops early) and ACTORS seed-actor processes of ENVS
# environments each, batches of BATCH unrolls, seed-infer batching up to
# ACTORS * ENVS rows; prints per run the median of the learner's per-second
# frame rates (metrics.jsonl's "fps", the first two seconds and the last line
# left out), which is what the whole pipeline moves, actors to updates.
# The issue's targets on one H200 with 16 cores: MinAtar >= 1M env frames/s,
# CartPole >= 3M.
#
# Usage: bench/gpu-train.sh [DEV [FRAMES [ACTORS [ENVS [BATCH]]]]]   (from the build dir)
# Defaults: cuda, 20000000, the cores less two (for seed-infer and seed-learn,
# at least 1), 256, 256.  GAMES="cartpole" (the presets to run, default
# "minatar-breakout cartpole") narrows it; TRAIN_TIMEOUT (seconds, default
# 600) stops a run that is slower than expected, and its rate so far is
# reported.  Metrics are written every second.
set -eu
dev=${1:-cuda}
frames=${2:-20000000}
cores=$(nproc 2>/dev/null || echo 4)
actors=${3:-$((cores > 3 ? cores - 2 : 1))}
envs=${4:-256}
batch=${5:-256}
games=${GAMES:-minatar-breakout cartpole}
limit=${TRAIN_TIMEOUT:-600}
top=$(cd "$(dirname "$0")/.." && pwd)
train=${SEED_BIN:-$top/cmd}/seed-train
[ -x "$train" ] || train=${SEED_BUILDDIR:-.}/cmd/seed-train
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
status=0
for g in $games; do
	rm -rf "$d/run"
	t0=$(date +%s)
	rc=0
	timeout "$limit" "$train" "$g" --device "$dev" --dir "$d/run" --no-eval --quiet --set target_return=null \
		--frames "$frames" --set actors="$actors" --set envs_per_actor="$envs" --set batch_size="$batch" \
		--set infer.max_batch=$((actors * envs)) --set checkpoint_interval=0 --set metrics_interval=1 \
		>"$d/out" 2>&1 || rc=$?
	if [ $rc -eq 124 ]; then
		echo "$g: stopped after $limit s (TRAIN_TIMEOUT), before $frames frames: the rate is of the run so far"
	elif [ $rc -ne 0 ]; then
		echo "$g: seed-train failed (exit $rc):"
		tail -5 "$d/out"
		status=1
		continue
	fi
	t1=$(date +%s)
	sed -n 's/.*"fps":\([0-9.e+]*\).*/\1/p' "$d/run/metrics.jsonl" | sed '1,2d;$d' >"$d/fps"
	fps=$(median <"$d/fps")
	if [ ! -s "$d/fps" ]; then
		echo "$g on $dev: too short a run to measure (under 4 metrics lines): give more FRAMES"
		continue
	fi
	printf '%s on %s: %.0f env frames/s (median; %d actors x %d envs, batch %d, %s frames asked, %d s)\n' \
		"$g" "$dev" "$fps" "$actors" "$envs" "$batch" "$frames" $((t1 - t0))
done
exit $status
