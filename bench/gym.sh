#!/bin/sh
# bench/gym.sh: seed-gym's env steps per second against Gymnasium's raw
# stepping of the same environments.
#
# RUNS times each: bench/gym_raw.py (K envs stepped in a Python loop with
# random actions, no frames), seed-gym offline (the same K envs, actions
# from a file, frames encoded and written to /dev/null), and seed-gym in
# server mode against seed-infer --policy random --timeout-us 0 (two halves in flight over
# ipc; the rate seed-gym's summary gives).  Prints each run's steps/s and
# the medians; the ratio of seed-gym's to the raw rate is what the bridge
# (frames, msgpack, ZeroMQ) costs.
#
# Usage: bench/gym.sh [RUNS [STEPS [K [ENV]]]]   (from the build dir)
# Defaults: 3 runs, 2000 steps per env, 32 envs, CartPole-v1.
set -eu
runs=${1:-3}
steps=${2:-2000}
k=${3:-32}
env=${4:-CartPole-v1}
top=$(cd "$(dirname "$0")/.." && pwd)
src=${SEED_SRCDIR:-$top}
bin=${SEED_BIN:-$top/cmd}
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$d"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rate() { sed -n 's/.* env steps in [0-9.]* s (\([0-9]*\) steps\/s).*/\1/p'; }

python3 -c "
import numpy as np
r = np.random.default_rng(1)
for row in r.integers(0, 2, size=($steps, $k)): print(' '.join(map(str, row)))" >"$d/actions"
: >"$d/raw"
: >"$d/off"
: >"$d/srv"
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	raw=$(python3 "$src/bench/gym_raw.py" "$env" "$k" "$steps" | awk '{print $5}')
	off=$("$bin/seed-gym" --env "$env" --envs "$k" --actions "$d/actions" --out /dev/null 2>&1 | rate)
	"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --max-batch "$k" --timeout-us 0 --quiet &
	infer=$!
	srv=$("$bin/seed-gym" --env "$env" --envs "$k" --steps "$steps" --connect "ipc://$d/infer" 2>&1 | rate)
	kill -TERM $infer
	wait $infer || true
	echo "run $i: raw $raw steps/s, seed-gym offline $off, seed-gym with seed-infer $srv"
	echo "$raw" >>"$d/raw"
	echo "$off" >>"$d/off"
	echo "$srv" >>"$d/srv"
done
echo "median: raw $(median <"$d/raw") steps/s, seed-gym offline $(median <"$d/off"), seed-gym with seed-infer $(median <"$d/srv")"
