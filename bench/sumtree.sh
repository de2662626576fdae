#!/bin/sh
# bench/sumtree.sh: insert, sample (batch 64) and priority-update throughput
# of the replay sum tree at a capacity of 1M slots.
#
# Runs bench/sumtree_bench RUNS times and prints every run, then the median
# of each figure.  Usage, from the build directory after `make bench`:
#   bench/sumtree.sh [RUNS [CAPACITY [OPS]]]   (defaults 7, 1048576, 2000000)
set -eu
runs=${1:-7}
cap=${2:-1048576}
ops=${3:-2000000}
bin=${SEED_BENCH:-$(dirname "$0")/sumtree_bench}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
	"$bin" "$cap" "$ops" | tee -a "$d/runs"
	i=$((i + 1))
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf 'median of %s runs at capacity %s: insert %s/s, sample64 %s batches/s, update %s/s\n' "$runs" "$cap" \
	"$(awk '{print $4 + 0}' "$d/runs" | median)" "$(awk '{print $6 + 0}' "$d/runs" | median)" \
	"$(awk '{print $9 + 0}' "$d/runs" | median)"
