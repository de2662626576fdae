#!/bin/sh
# bench/minatar-train.sh: the MinAtar results table, reproduced with one command.
#
# Trains each MinAtar preset (minatar-breakout, -asterix, -freeway, -seaquest,
# -space-invaders) with seed-train for SEEDS seeds at FRAMES env frames, one
# run after another, and prints one row per run:
#   game, seed, frames, the mean return of the last 100 training episodes
#   (the last episode_return of metrics.jsonl), the 100-episode evaluation of
#   the final checkpoint greedy (seed-train's own) and sampled (seed-eval
#   without --greedy), the wall time of the training, and the median env
#   frames/s of the run (metrics.jsonl's fps lines);
# then per game the means over the seeds beside the MinAtar paper's DQN and
# best AC(lambda) figures at 5M frames, and the median fps over all runs.
#
# Usage: bench/minatar-train.sh [OUTDIR [SEEDS [FRAMES [GAMES]]]]  (from the build dir)
# Defaults: a new temporary directory (kept), seeds 1 2 3, 5000000 frames,
# all five games.  Each 5M-frame run takes about a minute on two cores.
# FIRST_SEED=K in the environment numbers the seeds from K instead of 1
# (SEEDS of them), to add seeds to a table run earlier.
#
# PRESETS=r2d2-minatar- in the environment trains the R2D2 presets
# (r2d2-minatar-GAME) instead.  Their evaluation is seed-train's, epsilon-
# greedy at r2d2.eval_epsilon (the "greedy" column); a Q network has no
# sampled policy, so the sampled column is left out (-).
#
# PRESETS=es-minatar- or ga-minatar- trains the evolution presets: the
# "greedy" column is seed-train's evaluation of the checkpoint (the ES
# centre, the GA elite; members act greedily, so no sampled column), the
# training return is the last round's mean fitness over the members, and the
# frames/s the median of the rounds' frames_per_s.
set -eu
out=${1:-}
seeds=${2:-3}
frames=${3:-5000000}
games=${4:-breakout asterix freeway seaquest space-invaders}
prefix=${PRESETS:-minatar-}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/minatar-train.XXXXXX")
mkdir -p "$out"
# Presets from the source tree, so an uninstalled build finds them.
SEED_PRESETS=${SEED_PRESETS:-$top/examples/presets}
export SEED_PRESETS

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# The number after "KEY": in a JSON line (flat enough for our files).
field() { sed -n "s/.*\"$1\": *\\([-0-9.eE+]*\\).*/\\1/p"; }
# The mean return of a seed-eval result.
retmean() { sed -n 's/.*"return": *{ *"mean": *\([-0-9.eE+]*\).*/\1/p'; }
# The MinAtar paper's figures at 5M frames, sticky actions: DQN, AC(lambda).
paper() {
	case $1 in
	breakout) echo "10.0 17.6" ;;
	asterix) echo "16.8 20.4" ;;
	freeway) echo "50.2 47.5" ;;
	seaquest) echo "20.0 15.4" ;;
	space-invaders) echo "43.6 184.7" ;;
	esac
}

echo "# output in $out"
printf '%-15s %4s %8s %10s %10s %10s %8s %7s\n' game seed frames train_ret eval_grd eval_smp wall_s fps
: >"$out/rows"
for g in $games; do
	s=${FIRST_SEED:-1}
	while [ $s -lt $((${FIRST_SEED:-1} + seeds)) ]; do
		d="$out/$g-$s"
		rm -rf "$d"
		r=$("$bin/seed-train" "$prefix$g" --dir "$d" --seed "$s" --frames "$frames" --quiet)
		wall=$(echo "$r" | field train_seconds)
		greedy=$(echo "$r" | retmean)
		sampled=-
		if [ "$prefix" = minatar- ]; then
			"$bin/seed-eval" --checkpoint "$d" --episodes 100 --envs 20 --seed "$s" >"$d/eval-sampled.json"
			sampled=$(retmean <"$d/eval-sampled.json")
		fi
		last=$(tail -n 1 "$d/metrics.jsonl")
		fr=$(echo "$last" | field frames)
		case $prefix in
		es-* | ga-*)
			train=$(echo "$last" | field mean)
			fps=$(field frames_per_s <"$d/metrics.jsonl" | median)
			;;
		*)
			train=$(echo "$last" | field episode_return)
			fps=$(field fps <"$d/metrics.jsonl" | median)
			;;
		esac
		printf '%-15s %4d %8d %10.2f %10.2f %10s %8.1f %7.0f\n' "$g" "$s" "$fr" "$train" "$greedy" "$sampled" \
			"$wall" "$fps"
		echo "$g $s $fr $train $greedy $sampled $wall $fps" >>"$out/rows"
		s=$((s + 1))
	done
done
echo
printf '%-15s %10s %10s %10s %8s %8s %8s\n' game train_ret eval_grd eval_smp wall_s DQN AC
for g in $games; do
	set -- $(paper "$g")
	awk -v g="$g" -v dqn="$1" -v ac="$2" '$1 == g { n++; t += $4; e += $5; m += $6; w += $7; if ($6 == "-") ns++ }
		END { if (n) printf "%-15s %10.2f %10.2f %10s %8.1f %8.1f %8.1f\n", g, t/n, e/n,
			ns ? "-" : sprintf("%.2f", m/n), w/n, dqn, ac }' \
		"$out/rows"
done
echo
printf 'median fps over the runs: %.0f\n' "$(awk '{print $8}' "$out/rows" | median)"
