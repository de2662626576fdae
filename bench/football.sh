#!/bin/sh
# bench/football.sh: what Google Research Football costs on this machine,
# the figures doc/football.md's estimate of SEED's 11-vs-11 runs is made of.
#
#   engine   gfootball's steps/s on one core: one seed-gym, one env, offline
#            (--actions: a fixed cycle of the 19 actions), for each scenario
#            and representation; the rate is the one seed-gym's summary line
#            gives (steps over the time spent stepping and resetting, the
#            engine's start-up left out); median of RUNS runs.
#   learner  the learner alone on a recorded Football stream: seed-infer
#            --policy random serving 2 seed-gym actors of ENVS envs each
#            writes every unroll (PRESET's unroll length) to a file, then
#            seed-learn --config PRESET --unrolls FILE trains on it, RUNS
#            times; agent steps/s = the steps it trained on / its wall time
#            (start-up included), and per CPU second where /usr/bin/time is.
#
# Usage: bench/football.sh engine [RUNS [STEPS [SCENARIO...]]]
#        bench/football.sh learner [RUNS [STEPS [ENVS [PRESET]]]]
#   engine:  RUNS 3, STEPS 2000 per run, scenarios academy_empty_goal_close
#            academy_3_vs_1_with_keeper 11_vs_11_easy_stochastic
#            11_vs_11_hard_stochastic, each with extracted and simple115v2
#   learner: RUNS 5, STEPS 2000 per env recorded, ENVS 8 per actor, PRESET
#            football-empty-goal-close
#   SEED_BIN: where the programs are (default: this tree's cmd/)
# Needs gfootball (scripts/install-deps --football).  Run it alone: the two
# cores are the measurement.
set -eu
what=${1:-}
[ $# -eq 0 ] || shift
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
export SEED_PRESETS="${SEED_PRESETS:-$top/examples/presets}"
export SEED_GYM="${SEED_GYM:-$bin/seed-gym}"
d=$(mktemp -d "${TMPDIR:-/tmp}/seed-fb.XXXXXX")
infer_pid=""
cleanup() {
	[ -z "$infer_pid" ] || kill "$infer_pid" 2>/dev/null || :
	rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }

case $what in
engine)
	runs=${1:-3}
	steps=${2:-2000}
	if [ $# -gt 2 ]; then
		shift 2
	else
		set -- academy_empty_goal_close academy_3_vs_1_with_keeper 11_vs_11_easy_stochastic \
			11_vs_11_hard_stochastic
	fi
	awk -v n="$steps" 'BEGIN { for (i = 0; i < n; i++) print i % 19 }' >"$d/actions"
	printf '| scenario | representation | steps/s on one core (median of %d runs of %d steps) |\n|---|---|---|\n' \
		"$runs" "$steps"
	for scen in "$@"; do
		for rep in extracted simple115v2; do
			: >"$d/rates"
			i=0
			while [ $i -lt "$runs" ]; do
				i=$((i + 1))
				"$bin/seed-gym" --env "football:$scen" --env-options "{\"representation\": \"$rep\"}" \
					--actions "$d/actions" --out /dev/null 2>"$d/log"
				sed -n 's/.* env steps in .* (\([0-9.]*\) steps\/s).*/\1/p' "$d/log" >>"$d/rates"
				[ -s "$d/rates" ] || { cat "$d/log" >&2; exit 1; }
			done
			printf '| %s | %s | %s (%s) |\n' "$scen" "$rep" "$(median <"$d/rates")" \
				"$(sort -g "$d/rates" | tr '\n' ' ' | sed 's/ $//')"
		done
	done
	;;
learner)
	runs=${1:-5}
	steps=${2:-2000}
	envs=${3:-8}
	preset=${4:-football-empty-goal-close}
	get() { "$bin/seed-learn" --config "$preset" --get "$1"; }
	env=$(get env)
	unroll=$(get unroll_length)
	opts=$(get env_options)
	timer=""
	[ ! -x /usr/bin/time ] || timer="/usr/bin/time -f %U_%S -o $d/cpu"
	"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --unrolls "$d/stream" --unroll-length "$unroll" \
		--max-batch $((2 * envs)) --quiet &
	infer_pid=$!
	"$bin/seed-gym" --env "$env" --env-options "$opts" --envs "$envs" --actor 0 --steps "$steps" \
		--connect "ipc://$d/infer" -q &
	a0=$!
	"$bin/seed-gym" --env "$env" --env-options "$opts" --envs "$envs" --actor 1 --steps "$steps" \
		--connect "ipc://$d/infer" -q &
	a1=$!
	wait $a0
	wait $a1
	kill -TERM "$infer_pid"
	wait "$infer_pid" || :
	infer_pid=""
	printf 'stream: %s bytes, 2 actors x %d envs x %d steps of %s\n' "$(wc -c <"$d/stream" | tr -d ' ')" \
		"$envs" "$steps" "$env"
	i=0
	while [ $i -lt "$runs" ]; do
		i=$((i + 1))
		t0=$(now)
		$timer "$bin/seed-learn" --config "$preset" --set target_return=null --set total_frames=1000000000000 \
			--unrolls "$d/stream" --params "ipc://$d/params" 2>"$d/log" || { cat "$d/log" >&2; exit 1; }
		t1=$(now)
		n=$(sed -n 's/.*end of the unroll stream: \([0-9]*\) frames.*/\1/p' "$d/log")
		[ -n "$n" ] || { cat "$d/log" >&2; exit 1; }
		sps=$(awk "BEGIN { print $n / ($t1 - $t0) }")
		cpu=$(if [ -n "$timer" ]; then tr _ ' ' <"$d/cpu" | awk '{ print $1 + $2 }'; else echo 0; fi)
		csps=$(awk "BEGIN { print ($cpu > 0) ? $n / $cpu : 0 }")
		printf 'run %d: %d agent steps in %.3f s (%.3f s CPU), %.0f agent steps/s, %.0f per CPU s\n' \
			$i "$n" "$(awk "BEGIN { print $t1 - $t0 }")" "$cpu" "$sps" "$csps"
		echo "$sps" >>"$d/sps"
		echo "$csps" >>"$d/csps"
	done
	printf 'median of %d runs: %.0f agent steps/s, %.0f per CPU second (%s, batch %s x %s steps)\n' \
		"$runs" "$(median <"$d/sps")" "$(median <"$d/csps")" "$preset" "$(get batch_size)" "$unroll"
	;;
*)
	echo "usage: bench/football.sh engine [RUNS [STEPS [SCENARIO...]]]" >&2
	echo "       bench/football.sh learner [RUNS [STEPS [ENVS [PRESET]]]]" >&2
	exit 2
	;;
esac
