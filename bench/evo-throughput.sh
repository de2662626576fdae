#!/bin/sh
# bench/evo-throughput.sh: evolution's end-to-end throughput, full-rank
# against low-rank noise, through seed-train.
#
# Trains PRESET (default es-cartpole) with no target, so that it never stops
# early, for FRAMES frames, once per noise rank in RANKS (default "0 1": full
# rank, then rank 1), RUNS rounds of that, alternating the ranks run by run
# so that a change in the machine's load falls on all of them alike.  SETS
# (in the environment; default, for CartPole, the larger batches of
# bench/RESULTS.md: 2 x 512 envs, 512 members, batches of 1,024) adds
# `--set KEY=VALUE` overrides, whitespace-separated.
#
# Per run: the learner's median frames/s over its rounds (metrics.jsonl's
# frames_per_s, one line a round; the first line is left out, since it holds
# the random play before the first generation, which no member played),
# seed-infer's env steps/s over its life (random play included), the
# last round's mean fitness (so that a faster mode that stopped learning
# shows), and the episodes the members played with those of them that were
# stale (cut short by a new round: frames played for nothing).  Then the
# median of each per rank.
#
# Usage: bench/evo-throughput.sh [RUNS [FRAMES [RANKS [PRESET]]]]   (from the build dir)
# Defaults: 3 runs, 6000000 frames, ranks "0 1", es-cartpole.
set -eu
runs=${1:-3}
frames=${2:-6000000}
ranks=${3:-0 1}
preset=${4:-es-cartpole}
sets=${SETS-envs_per_actor=512 evolution.population=512 infer.max_batch=1024}
top=$(cd "$(dirname "$0")/.." && pwd)
train=${SEED_BIN:-$top/cmd}/seed-train
SEED_PRESETS=${SEED_PRESETS:-$top/examples/presets}
export SEED_PRESETS
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# The number after "KEY": in a JSON line (flat enough for metrics.jsonl).
field() { sed -n "s/.*\"$1\": *\\([-0-9.eE+]*\\).*/\\1/p"; }

set --
for s in $sets; do set -- "$@" --set "$s"; done
echo "# $preset, $frames frames a run, ranks $ranks, sets: $sets"
printf '%4s %4s %14s %14s %10s %10s %8s\n' run rank learner_fps infer_fps mean episodes stale
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	for r in $ranks; do
		rm -rf "$d/run"
		"$train" "$preset" --seed "$i" --frames "$frames" --set target_return=null --set "evolution.rank=$r" \
			"$@" --no-eval --quiet --dir "$d/run" >/dev/null
		lf=$(tail -n +2 "$d/run/metrics.jsonl" | field frames_per_s | median)
		inf=$(sed -n 's/.* \([0-9][0-9]*\) env steps\/s.*/\1/p' "$d/run/infer.log" | tail -n 1)
		mean=$(tail -n 1 "$d/run/metrics.jsonl" | field mean)
		eps=$(tail -n 1 "$d/run/metrics.jsonl" | field episodes)
		stale=$(tail -n 1 "$d/run/metrics.jsonl" | field stale)
		printf '%4d %4d %14.0f %14.0f %10.2f %10d %8d\n' "$i" "$r" "$lf" "$inf" "$mean" "$eps" "$stale"
		echo "$lf" >>"$d/lf-$r"
		echo "$inf" >>"$d/inf-$r"
	done
done
for r in $ranks; do
	printf 'rank %d: median learner %.0f frames/s, median seed-infer %.0f env steps/s\n' "$r" \
		"$(median <"$d/lf-$r")" "$(median <"$d/inf-$r")"
done
