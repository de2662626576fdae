#!/bin/sh
# bench/replay.sh: insert, sample (batch 64) and priority-update throughput
# of the sequence replay at a capacity of 1M CartPole-size sequences (T+1 =
# 21), and its bytes per stored frame.
#
# Runs bench/replay_bench RUNS times and prints every run, then the median
# of each figure.  Usage, from the build directory after `make bench`:
#   bench/replay.sh [RUNS [CAPACITY [SEQUENCES]]]   (defaults 3, 1048576, 2097152)
set -eu
runs=${1:-3}
cap=${2:-1048576}
n=${3:-2097152}
bin=${SEED_BENCH:-$(dirname "$0")/replay_bench}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
	"$bin" "$cap" "$n" | tee -a "$d/runs"
	i=$((i + 1))
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*$1: \([0-9.]*\) \/s.*/\1/p" "$d/runs" | median; }
printf 'median of %s runs at capacity %s: insert %s sequences/s, sample64 %s batches/s, update %s priorities/s; %s\n' \
	"$runs" "$cap" "$(field sequences)" "$(field 'batches of 64')" "$(field priorities)" \
	"$(sed -n 's/.*\/s, \([0-9]* item bytes.*frame (T+1 [0-9]*)\).*/\1/p' "$d/runs" | head -n 1)"
