#!/bin/sh
# bench/continuous.sh: the continuous-control presets, trained and evaluated
# one run at a time (doc/continuous.md, bench/RESULTS.md).
#
#   bench/continuous.sh [PRESETS [SEEDS]]
#       per preset (default: ppo-halfcheetah ppo-hopper ppo-walker2d) and
#       seed (default 1 2 3 4 5): `seed-train PRESET --seed S --quiet`
#       into a fresh directory, one line of the preset, the seed, the
#       training wall time in seconds (train_seconds), the agent steps
#       trained and the mean return of the final greedy evaluation (10
#       episodes); then per preset the medians of the times and returns.
#       KEEP=DIR keeps the run directories there (for seed-plot).
#   bench/continuous.sh steps [ENV [K [STEPS]]]
#       one core's environment steps per second through seed_envs_step_box
#       (bench/mujoco_bench; default halfcheetah, 16 instances, 200000
#       steps), five times, and their median.
#
# Run from the build directory, on a quiet machine; needs jq.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
SEED_PRESETS=${SEED_PRESETS:-$top/examples/presets}
export SEED_PRESETS

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if [ "${1:-}" = steps ]; then
	env=${2:-halfcheetah} k=${3:-16} n=${4:-200000}
	make -s -C "$top" bench/mujoco_bench >/dev/null
	for i in 1 2 3 4 5; do
		"$top/bench/mujoco_bench" "$env" "$k" "$n"
	done | tee /dev/stderr | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ /^env-steps\/s/) print $i }' |
		median | awk -v e="$env" '{ printf "%s: median %.0f env-steps/s on one core\n", e, $1 }'
	exit 0
fi

presets=${1:-"ppo-halfcheetah ppo-hopper ppo-walker2d"}
seeds=${2:-"1 2 3 4 5"}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
for p in $presets; do
	: >"$work/$p.results"
	for s in $seeds; do
		d="$work/$p-$s"
		rm -rf "$d"
		line=$("$bin/seed-train" "$p" --seed "$s" --dir "$d" --quiet | tail -n 1)
		t=$(echo "$line" | jq .train_seconds)
		r=$(echo "$line" | jq .eval.return.mean)
		f=$(jq .frames "$d/checkpoint.json")
		echo "$p seed $s: $t s, $f agent steps, greedy return $r"
		echo "$t $r" >>"$work/$p.results"
	done
	tm=$(cut -d' ' -f1 "$work/$p.results" | median)
	rm_=$(cut -d' ' -f2 "$work/$p.results" | median)
	echo "$p: median $tm s, median greedy return $rm_ over seeds $seeds"
done
[ -n "${KEEP:-}" ] || rm -rf "$work"
