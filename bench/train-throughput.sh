#!/bin/sh
# bench/train-throughput.sh: end-to-end training throughput on CartPole.
#
# Trains the cartpole preset's model (MLP 64-64) with 2 actors x ENVS envs,
# batches of BATCH unrolls of 16 steps, for FRAMES frames with no target (so it
# never stops early), RUNS times; per run, the median of the learner's
# per-second frame rates (metrics.jsonl, first two seconds and the last line
# left out); then the median over runs.  Frames are env frames the learner
# trained on: the whole pipeline, actors to updates, moves at this rate.
#
# Usage: bench/train-throughput.sh [RUNS [FRAMES [ENVS [BATCH]]]]   (defaults 3 6000000 128 64)
set -eu
runs=${1:-3}
frames=${2:-6000000}
envs=${3:-128}
batch=${4:-64}
top=$(cd "$(dirname "$0")/.." && pwd)
train=${SEED_BIN:-$top/cmd}/seed-train
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$d/all"
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	rm -rf "$d/run"
	"$train" cartpole --dir "$d/run" --no-eval --quiet --set target_return=null --frames "$frames" \
		--set envs_per_actor="$envs" --set batch_size="$batch" --set infer.max_batch=$((2 * envs)) >/dev/null
	fps=$(sed -n 's/.*"fps":\([0-9.e+]*\).*/\1/p' "$d/run/metrics.jsonl" | sed '1,2d;$d' | median)
	printf 'run %d: %.0f env frames/s\n' $i "$fps"
	echo "$fps" >>"$d/all"
done
printf 'median of %d runs: %.0f env frames/s (2 actors x %d envs, batch %d x 16 steps)\n' "$runs" \
	"$(median <"$d/all")" "$envs" "$batch"
