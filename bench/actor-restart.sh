#!/bin/sh
# bench/actor-restart.sh: how fast an actor runs right after another one died.
#
# One seed-infer (random policy, its default batching: --max-batch 256,
# --timeout-us 500, --idle-expiry 60) and actors of ENVS CartPole envs.  Per
# run: a fresh actor does STEPS steps of every env on a server that knows no
# other actor (its rate is "fresh"); then an actor runs for a second and is
# killed with SIGKILL, and at once a new actor (a new run id, so new halves)
# does the same STEPS ("restarted").  The dead actor's halves stay known to
# the server until their idle expiry; they must not hold its batches up.
# Prints both rates per run, and the median of restarted / fresh.  STEPS is
# chosen so that a run takes about a second: the issue asks for 90% of the
# fresh rate within one second of the restart.
#
# Usage: bench/actor-restart.sh [RUNS [STEPS [ENVS]]]   (defaults 5 4000 32; from the build dir)
set -eu
runs=${1:-5}
steps=${2:-4000}
envs=${3:-32}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$d"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rate() { sed -n 's/.*(\([0-9.]*\) steps\/s).*/\1/p' "$1"; }
actor() { exec "$bin/seed-actor" --env cartpole --envs "$envs" --connect "ipc://$d/infer" "$@"; }

: >"$d/ratios"
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --stats-interval 0 --quiet &
	infer=$!
	(actor --actor 1 --steps "$steps" 2>"$d/fresh")
	actor --actor 2 --quiet &
	doomed=$!
	sleep 1
	kill -9 $doomed
	wait $doomed 2>/dev/null || true
	(actor --actor 2 --steps "$steps" 2>"$d/restarted")
	kill $infer
	wait $infer 2>/dev/null || true
	f=$(rate "$d/fresh") r=$(rate "$d/restarted")
	printf 'run %d: fresh %.0f steps/s, restarted %.0f steps/s (%.2f)\n' $i "$f" "$r" "$(echo "$r / $f" | bc -l)"
	echo "$r / $f" | bc -l >>"$d/ratios"
done
printf 'median restarted/fresh over %d runs: %.2f (%d envs, %d steps)\n' "$runs" "$(median <"$d/ratios")" "$envs" \
	"$steps"
