#!/bin/sh
# bench/atari_backends.sh: seed-gym's env steps per second on Atari Pong
# with each backend: Gymnasium's wrappers over ale-py (--backend gymnasium,
# K envs stepped one by one in Python) and EnvPool (--backend envpool, the
# K envs stepped in its C++ threads), both with the Atari preprocessing
# (frame skip 4, 84x84 grey, a stack of 4, sticky actions 0.25, no-op
# starts).
#
# RUNS times each, per backend: seed-gym offline (actions from a file,
# uniform random in [0, 6), frames encoded and written to /dev/null) and
# seed-gym in server mode against seed-infer --policy random --timeout-us 0
# (two halves in flight over ipc).  Prints each run's rates (the summary
# line seed-gym prints) and the medians.  Needs ale-py,
# opencv-python-headless and envpool.
#
# Usage: bench/atari_backends.sh [RUNS [STEPS [K]]]   (from the build dir)
# Defaults: 3 runs, 500 steps per env, 32 envs.
set -eu
runs=${1:-3}
steps=${2:-500}
k=${3:-32}
env=ALE/Pong-v5
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$d"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rate() { sed -n 's/.* env steps in [0-9.]* s (\([0-9]*\) steps\/s).*/\1/p'; }

python3 -c "
import numpy as np
r = np.random.default_rng(1)
for row in r.integers(0, 6, size=($steps, $k)): print(' '.join(map(str, row)))" >"$d/actions"
for b in gymnasium envpool; do
	: >"$d/off-$b"
	: >"$d/srv-$b"
done
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	for b in gymnasium envpool; do
		off=$("$bin/seed-gym" --env "$env" --backend $b --envs "$k" --actions "$d/actions" --out /dev/null 2>&1 | rate)
		"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --max-batch "$k" --timeout-us 0 --quiet &
		infer=$!
		srv=$("$bin/seed-gym" --env "$env" --backend $b --envs "$k" --steps "$steps" --connect "ipc://$d/infer" 2>&1 | rate)
		kill -TERM $infer
		wait $infer || true
		echo "run $i: --backend $b: offline $off steps/s, with seed-infer $srv"
		echo "$off" >>"$d/off-$b"
		echo "$srv" >>"$d/srv-$b"
	done
done
for b in gymnasium envpool; do
	echo "median: --backend $b: offline $(median <"$d/off-$b") steps/s, with seed-infer $(median <"$d/srv-$b")"
done
