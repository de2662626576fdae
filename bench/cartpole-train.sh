#!/bin/sh
# bench/cartpole-train.sh: time `seed-train cartpole` from a cold start.
#
# For each seed: wall time of the whole command (processes started, trained to
# the preset's target, final checkpoint evaluated over 100 episodes), the
# frames it took, and the evaluation's mean return.  Prints the median time.
#
# Usage: bench/cartpole-train.sh [SEEDS...]     (from the build dir; default 1 2 3 4 5)
# PRESET=ppo-cartpole in the environment times that preset instead.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
train=${SEED_BIN:-$top/cmd}/seed-train
seeds=${*:-1 2 3 4 5}
preset=${PRESET:-cartpole}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
: >"$d/times"
for s in $seeds; do
	t0=$(date +%s.%N)
	out=$("$train" "$preset" --seed "$s" --dir "$d/run-$s" --quiet)
	t1=$(date +%s.%N)
	t=$(awk "BEGIN { print $t1 - $t0 }")
	frames=$(sed -n 's/.*"frames": *\([0-9]*\).*/\1/p' "$d/run-$s/checkpoint.json" | head -1)
	ret=$(printf '%s' "$out" | sed -n 's/.*"return": {"mean": \([0-9.]*\).*/\1/p')
	printf 'seed %s: %.2f s, %s frames, evaluation mean return %s\n' "$s" "$t" "$frames" "$ret"
	echo "$t" >>"$d/times"
done
sort -g "$d/times" | awk '{a[NR]=$1} END {printf "median %.2f s, max %.2f s over %d runs\n", (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2, a[NR], NR}'
