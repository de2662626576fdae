#!/bin/sh
# bench/faults.sh: `seed-train cartpole` undisturbed and under SIGKILLs.
#
# For each seed, two runs of the whole command (processes started, trained
# to the preset's target or budget, final checkpoint evaluated over 100
# episodes): one undisturbed, and one during which one program of the run,
# chosen at random (seeded: seed-learn, seed-infer or an actor), is killed
# with SIGKILL every INTERVAL seconds from its first checkpoint on.  Both
# save a checkpoint every second (checkpoint_interval=1), so that they
# differ only by the kills.  Prints each run's wall time, kills, restarts
# and evaluation, then the medians.
#
# Usage: bench/faults.sh [INTERVAL [SEEDS...]]   (from the build dir;
#        default: 2 s, seeds 1 2 3)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
train=${SEED_BIN:-$top/cmd}/seed-train
interval=${1:-2}
[ $# -gt 0 ] && shift
seeds=${*:-1 2 3}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
: >"$d/calm"
: >"$d/killed"

# killer RUNDIR TMP SEED: until seed-train ($pid) ends, kill one program of
# the run whose sockets are under TMP every $interval seconds; prints the
# number of kills.
killer() {
	while kill -0 "$pid" 2>/dev/null && [ ! -f "$1/checkpoint.json" ]; do sleep 0.05; done
	n=0
	awk -v s="$3" 'BEGIN { srand(s); for (i = 0; i < 10000; i++) print int(rand() * 3), int(rand() * 2) }' |
		while read -r kind actor; do
			sleep "$interval"
			kill -0 "$pid" 2>/dev/null || break
			# The program itself, not a libtool wrapper (bash .../seed-actor).
			case $kind in
			0) pat="^[^ ]*seed-learn .*ipc://$2/" ;;
			1) pat="^[^ ]*seed-infer .*ipc://$2/" ;;
			*) pat="^[^ ]*seed-actor .*--actor $actor .*ipc://$2/" ;;
			esac
			p=$(pgrep -f "$pat" | head -1) || true
			[ -n "$p" ] && kill -KILL "$p" 2>/dev/null && n=$((n + 1))
			echo $n >"$d/kills"
		done
}

for s in $seeds; do
	for mode in calm killed; do
		mkdir -p "$d/tmp-$s-$mode"
		t0=$(date +%s.%N)
		TMPDIR="$d/tmp-$s-$mode" "$train" cartpole --seed "$s" --dir "$d/run-$s-$mode" \
			--set checkpoint_interval=1 --max-restarts 100 --quiet >"$d/out" 2>"$d/err" &
		pid=$!
		echo 0 >"$d/kills"
		[ $mode = killed ] && killer "$d/run-$s-$mode" "$d/tmp-$s-$mode" "$s" &
		st=0
		wait $pid || st=$?
		wait
		t1=$(date +%s.%N)
		t=$(awk "BEGIN { print $t1 - $t0 }")
		[ $st -eq 0 ] || { cat "$d/err" >&2; echo "seed $s, $mode: seed-train failed ($st)" >&2; exit 1; }
		restarts=$(sed -n 's/.*"restarts":\({[^}]*}\).*/\1/p' "$d/out")
		ret=$(sed -n 's/.*"return": {"mean": \([0-9.]*\).*/\1/p' "$d/out")
		printf 'seed %s, %s: %.2f s, %s kills, restarts %s, evaluation mean return %s\n' "$s" "$mode" "$t" \
			"$(cat "$d/kills")" "$restarts" "$ret"
		echo "$t $(cat "$d/kills")" >>"$d/$mode"
	done
done
for mode in calm killed; do
	sort -g "$d/$mode" | awk -v m=$mode '{ t[NR] = $1; k[NR] = $2 } END {
		med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
		printf "%s: median %.2f s over %d runs", m, med, NR
		if (m == "killed") { s = 0; for (i = 1; i <= NR; i++) s += k[i]; printf ", %.1f kills a run on average", s / NR }
		printf "\n" }'
done
