#!/bin/sh
# bench/atari-bound.sh: where an Atari run's two cores go, the bound that
# puts on its agent steps/s, and how near the pipeline comes to it.
#
# Each part alone on one core, then the whole pipeline:
#   env      one seed-gym of K envs (one actor of the preset) offline:
#            ALE with the preset's env_options (its preprocessing), uniform
#            random actions, its step frames encoded to /dev/null; agent
#            steps/s from seed-gym's summary line, median of RUNS runs.
#   network  bench/nn_bench --nature: the Nature network's rows/s forward
#            at 32 rows (the server's batch) and forward and backward at
#            160 (the learner's T*B rows for 8 unrolls of 20), median of
#            RUNS timings each.
#   bound    CPU seconds an agent step costs: 1/env + 1/forward(32) (the
#            server) + 1/forward+backward(160) + 1/(T*forward(32)) (the
#            learner: every step once, and a bootstrap row per unroll of T
#            forward only); two cores give 2 / that agent steps/s.
#   pipeline seed-train PRESET for SECONDS from a cold start; agent
#            steps/s from the learner's metrics between the first line
#            past WARM seconds and the last.
#
# Usage: bench/atari-bound.sh [RUNS [SECONDS [PRESET [K [WARM]]]]]
#   defaults: 3 runs, 300 s of pipeline, atari-pong, 16 envs, 60 s of warm-up
#   SEED_BIN: where the programs are (default: this tree's cmd/)
# Needs ale-py (scripts/install-deps --atari) and `make bench`.  Run it
# alone: the two cores are the measurement.  Whatever OPENBLAS_CORETYPE the
# environment sets applies to every part; seed-learn's first line, shown,
# names the kernel.
set -eu
runs=${1:-3}
secs=${2:-300}
preset=${3:-atari-pong}
k=${4:-16}
warm=${5:-60}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
export SEED_PRESETS="${SEED_PRESETS:-$top/examples/presets}"
export SEED_GYM="${SEED_GYM:-$bin/seed-gym}"
d=$(mktemp -d "${TMPDIR:-/tmp}/seed-ab.XXXXXX")
trap 'rm -rf "$d"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
get() { "$bin/seed-learn" --config "$preset" --get "$1"; }
env=$(get env)
opts=$(get env_options)
unroll=$(get unroll_length)
batch=$(get batch_size)
[ "$batch" = 8 ] && [ "$unroll" = 20 ] ||
	echo "atari-bound: $preset has batches of $batch unrolls of $unroll; the network part times 160 rows" >&2

steps=500
python3 -c "
import random
r = random.Random(1)
for _ in range($steps): print(' '.join(str(r.randrange(6)) for _ in range($k)))" >"$d/actions"
: >"$d/env"
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	"$bin/seed-gym" --env "$env" --env-options "$opts" --envs "$k" --actions "$d/actions" --out /dev/null \
		2>"$d/log" || { cat "$d/log" >&2; exit 1; }
	sed -n 's/.* env steps in .* (\([0-9.]*\) steps\/s).*/\1/p' "$d/log" >>"$d/env"
done
envr=$(median <"$d/env")
printf 'env: %s, %d envs in one seed-gym, %d steps each: %s agent steps/s (runs: %s)\n' "$env" "$k" "$steps" \
	"$envr" "$(sort -g "$d/env" | tr '\n' ' ' | sed 's/ $//')"

"$top/bench/nn_bench" --nature --repeats "$runs" >"$d/nn"
rows() { awk -F'|' -v b="B=$1" -v c="$2" 'index($2, "Nature") && index($2, b " ") { gsub(/ /, "", $c); print $c }' "$d/nn"; }
f32=$(rows 32 3)
fb160=$(rows 160 4)
[ -n "$f32" ] && [ -n "$fb160" ] || { cat "$d/nn" >&2; exit 1; }
printf 'network: forward %s rows/s at 32 rows, forward+backward %s rows/s at 160 rows\n' "$f32" "$fb160"

awk -v e="$envr" -v f="$f32" -v fb="$fb160" -v t="$unroll" 'BEGIN {
	ce = 1e3 / e; ci = 1e3 / f; cl = 1e3 / fb + 1e3 / (t * f); c = ce + ci + cl
	printf "per agent step: env %.3f ms, server %.3f ms, learner %.3f ms: %.3f ms of CPU\n", ce, ci, cl, c
	printf "bound on 2 cores: %.0f agent steps/s (%.0f frames/s at frame skip 4)\n", 2e3 / c, 8e3 / c
}' | tee "$d/bound"
bound=$(sed -n 's/^bound on 2 cores: \([0-9]*\) .*/\1/p' "$d/bound")

timeout -s TERM "$secs" "$bin/seed-train" "$preset" --seed 1 --dir "$d/run" --no-eval >"$d/train" 2>&1 || :
sed -n 's/^seed-learn: \(.*OpenBLAS[^;]*\).*/\1/p' "$d/train" | head -1
awk -v w="$warm" '{
	t = $0; sub(/.*"time":/, "", t); sub(/,.*/, "", t); t += 0
	s = $0; sub(/.*"agent_steps":/, "", s); sub(/,.*/, "", s); s += 0
	if (t >= w && !seen) { t0 = t; s0 = s; seen = 1 }
	t1 = t; s1 = s
} END {
	if (!seen || t1 <= t0) { print "pipeline: no metrics past the warm-up"; exit 1 }
	printf "pipeline: %d agent steps in %.0f s past %d s of warm-up: %.0f agent steps/s\n", s1 - s0, t1 - t0, w, (s1 - s0) / (t1 - t0)
}' "$d/run/metrics.jsonl" >"$d/pipe" || { cat "$d/pipe" "$d/train" >&2; exit 1; }
cat "$d/pipe"
rate=$(sed -n 's/.*: \([0-9]*\) agent steps\/s$/\1/p' "$d/pipe")
awk -v r="$rate" -v b="$bound" 'BEGIN { printf "the pipeline reaches %.0f%% of the bound\n", 100 * r / b }'
