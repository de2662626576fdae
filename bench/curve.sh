#!/bin/sh
# bench/curve.sh: what CURVE costs on the actor <-> inference loop.
#
# In a private network namespace (root; ports cannot collide), one
# seed-infer without keys and one with CURVE keys (random policy) on tcp
# loopback, and one seed-actor of ENVS envs played against each in turn,
# RUNS times: prints each run's env steps per second, plain and CURVE, then
# the medians.
#
# Usage: bench/curve.sh [RUNS [STEPS [ENVS [ENV]]]]   (from the build dir)
# Defaults: 3 runs, 8000 steps per env, 256 envs, cartpole.
set -eu
runs=${1:-3}
steps=${2:-8000}
envs=${3:-256}
env=${4:-cartpole}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
if [ -z "${SEED_CURVE_NS:-}" ]; then
	SEED_CURVE_NS=1 exec unshare --net sh "$0" "$runs" "$steps" "$envs" "$env"
fi
ip link set lo up
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$d"' EXIT
cd "$d"
"$bin/seed-keygen" srv >/dev/null
"$bin/seed-keygen" act >/dev/null
mkdir allow && cp act.pub allow/

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sps() { sed -n 's/.*(\([0-9]*\) steps\/s).*/\1/p'; }

"$bin/seed-infer" --bind tcp://127.0.0.1:7101 --policy random --stats-interval 0 --quiet &
"$bin/seed-infer" --bind tcp://127.0.0.1:7102 --policy random --stats-interval 0 --quiet \
	--curve-key srv.key --curve-allow allow &
sleep 0.5
: >plain
: >curve
for i in $(seq "$runs"); do
	a=$("$bin/seed-actor" --env "$env" --envs "$envs" --steps "$steps" --connect tcp://127.0.0.1:7101 2>&1 | sps)
	b=$("$bin/seed-actor" --env "$env" --envs "$envs" --steps "$steps" --connect tcp://127.0.0.1:7102 \
		--curve-key act.key --curve-server srv.pub 2>&1 | sps)
	echo "run $i: plain $a, CURVE $b env steps/s"
	echo "$a" >>plain
	echo "$b" >>curve
done
printf 'median of %d runs (%s, %d envs): plain %.0f, CURVE %.0f env steps/s\n' "$runs" "$env" "$envs" \
	"$(median <plain)" "$(median <curve)"
