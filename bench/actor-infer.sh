#!/bin/sh
# bench/actor-infer.sh: end-to-end throughput of the actor <-> inference loop.
#
# Starts seed-infer (random policy, unrolls of 20 pushed over ipc to a
# counting sink) and two seed-actors of 256 CartPole envs each, RUNS times,
# and prints per run and as medians: env steps per second (all env steps of
# both actors over the wall time of the actors) and the unroll stream in MB/s.
#
# Usage: bench/actor-infer.sh [RUNS [STEPS [ENVS [ENV]]]]   (from the build dir)
# Defaults: 5 runs, 4000 steps per env, 256 envs per actor, cartpole.
set -eu
runs=${1:-5}
steps=${2:-4000}
envs=${3:-256}
env=${4:-cartpole}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
sink=${SEED_SINK:-$top/bench/sink}
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$d"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

: >"$d/sps"
: >"$d/mbs"
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --max-batch "$envs" --timeout-us 0 \
		--unrolls "ipc://$d/unrolls" --unroll-length 20 --hwm 256 --quiet &
	infer=$!
	"$sink" "ipc://$d/unrolls" >"$d/sink.out" &
	sinkpid=$!
	sleep 0.2
	t0=$(date +%s.%N)
	"$bin/seed-actor" --env "$env" --envs "$envs" --actor 0 --steps "$steps" --connect "ipc://$d/infer" --quiet &
	a0=$!
	"$bin/seed-actor" --env "$env" --envs "$envs" --actor 1 --steps "$steps" --connect "ipc://$d/infer" --quiet
	wait $a0
	t1=$(date +%s.%N)
	sleep 0.3
	kill -TERM $infer
	wait $infer || true
	kill -TERM $sinkpid
	wait $sinkpid || true
	read -r frames bytes secs <"$d/sink.out"
	sps=$(awk "BEGIN { print 2 * $envs * $steps / ($t1 - $t0) }")
	mbs=$(awk "BEGIN { print $bytes / 1000000 / ($t1 - $t0) }")
	printf 'run %d: %.0f env steps/s, %d frames (unrolls and episodes), %.1f MB/s of unrolls\n' $i "$sps" "$frames" "$mbs"
	echo "$sps" >>"$d/sps"
	echo "$mbs" >>"$d/mbs"
done
printf 'median of %d runs: %.0f env steps/s, %.1f MB/s of unrolls (2 actors x %d %s envs, %d steps each)\n' \
	"$runs" "$(median <"$d/sps")" "$(median <"$d/mbs")" "$envs" "$env" "$steps"
