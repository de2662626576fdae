#!/bin/sh
# bench/evo-infer.sh: the population server against the same server with one
# model, end to end with seed-actor on CartPole.
#
# The model is the cartpole preset's MLP 64-64 (tanh), acting greedily.  Per
# run, seed-infer serves two seed-actors of ENVS CartPole envs each for STEPS
# steps per env, pushing to a counting sink (bench/sink) on --unrolls, in
# four modes:
#   rs      a random-search generation of MEMBERS members (one episode
#           wanted of each; every later episode is an extra), published on
#           --model's channel: episode frames only, with generation and
#           member; full rank (each member's weights built once)
#   es      an evolution-strategies generation of MEMBERS members in
#           antithetic pairs around a fixed pseudo-random centre, sigma
#           0.02, full-rank noise
#   es-r1   the same with rank-1 noise (the shared product plus a
#           correction per row)
#   single  the same server with one model (a params frame of the centre):
#           unrolls of 20 steps and episode frames, as a V-trace run has them
# The policies differ, and so do their episodes' lengths: env steps/s is
# what compares the modes; episodes/s is what a learner of each gets.
# and prints env steps/s (all env steps of both actors over the actors' wall
# time) and episodes/s (seed-infer's episode counter over that time), per
# run and as medians.
#
# Usage: bench/evo-infer.sh [RUNS [STEPS [ENVS [MEMBERS]]]]   (from the build dir)
# Defaults: 5 runs, 2000 steps per env, 256 envs per actor, 256 members.
set -eu
runs=${1:-5}
steps=${2:-2000}
envs=${3:-256}
members=${4:-256}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
sink=${SEED_SINK:-$top/bench/sink}
push=${SEED_PUSH:-$top/tests/cli/frame_push}
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$d"' EXIT

model='{"torso":[{"type":"linear","out":64},{"type":"tanh"},{"type":"linear","out":64},{"type":"tanh"}]}'
# Its parameters for CartPole's 4 observations and 2 actions: the torso's
# 4x64+64 and 64x64+64, the policy head's 64x2+2, the value head's 64+1.
P=$((4 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2 + 64 + 1))

jq -nc --argjson M "$members" --arg model "$model" \
	'{type: "generation", version: 1, run: 0, generation: 0, phase: 0, algorithm: "rs",
	  noise_seed: 1, noise_size: 1000, sigma: 0, rank: 0,
	  genome: {dtype: "i64", shape: [$M, 1], data: [range($M) | . + 1]},
	  episodes: {dtype: "i32", shape: [$M], data: [range($M) | 1]}, model: $model}' |
	"$bin/seed-cat" --encode >"$d/rs.frames"
centre='{dtype: "f32", shape: [$P], data: [range($P) | ((. * 7919) % 1000) / 5000 - 0.1]}'
jq -nc --argjson P "$P" --arg model "$model" \
	"{type: \"params\", version: 1, policy_version: 1, run: 0, model: \$model, params: $centre}" |
	"$bin/seed-cat" --encode >"$d/single.frames"
for r in 0 1; do
	jq -nc --argjson P "$P" --argjson M "$members" --argjson R "$r" --arg model "$model" \
		"{type: \"generation\", version: 1, run: 0, generation: 0, phase: 0, algorithm: \"es\",
		  noise_seed: 1, noise_size: 1048576, sigma: 0.02, rank: \$R,
		  genome: {dtype: \"i64\", shape: [\$M, 1], data: [range(\$M) | (. / 2 | floor)]},
		  sign: {dtype: \"f32\", shape: [\$M], data: [range(\$M) | if . % 2 == 0 then 1 else -1 end]},
		  centre: $centre, episodes: {dtype: \"i32\", shape: [\$M], data: [range(\$M) | 1]}, model: \$model}" |
		"$bin/seed-cat" --encode >"$d/es$r.frames"
done
cp "$d/es0.frames" "$d/es.frames"
cp "$d/es1.frames" "$d/es-r1.frames"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# run MODE: one run; appends env steps/s and episodes/s to $d/MODE.sps, .eps
run() {
	mode=$1
	frames=$d/$mode.frames
	extra=""
	[ "$mode" != single ] || extra="--unroll-length 20"
	# shellcheck disable=SC2086
	"$bin/seed-infer" --bind "ipc://$d/infer" --model "ipc://$d/params" --greedy --max-batch "$envs" \
		--timeout-us 0 --unrolls "ipc://$d/unrolls" --hwm 256 --stats-interval 0 $extra 2>"$d/infer.err" &
	infer=$!
	"$sink" "ipc://$d/unrolls" >"$d/sink.out" &
	sinkpid=$!
	"$push" --pub "ipc://$d/params" "$frames" 2>/dev/null
	sleep 0.3
	t0=$(date +%s.%N)
	"$bin/seed-actor" --env cartpole --envs "$envs" --actor 0 --steps "$steps" --connect "ipc://$d/infer" --quiet &
	a0=$!
	"$bin/seed-actor" --env cartpole --envs "$envs" --actor 1 --steps "$steps" --connect "ipc://$d/infer" --quiet
	wait $a0
	t1=$(date +%s.%N)
	sleep 0.3
	kill -TERM $infer
	wait $infer || true
	kill -TERM $sinkpid
	wait $sinkpid || true
	if grep -q "cannot build\|dropped" "$d/infer.err"; then
		cat "$d/infer.err" >&2
		exit 1
	fi
	if [ "$mode" != single ] && ! grep -q "done: generation 0 ($members members)" "$d/infer.err"; then
		cat "$d/infer.err" >&2
		exit 1
	fi
	episodes=$(sed -n 's/.*done: .* \([0-9]*\) episodes, .*/\1/p' "$d/infer.err")
	sps=$(awk "BEGIN { print 2 * $envs * $steps / ($t1 - $t0) }")
	eps=$(awk "BEGIN { print $episodes / ($t1 - $t0) }")
	read -r nframes bytes secs <"$d/sink.out"
	printf '%s run %d: %.0f env steps/s, %.0f episodes/s, %d frames pushed (%d bytes)\n' "$mode" "$i" "$sps" \
		"$eps" "$nframes" "$bytes"
	echo "$sps" >>"$d/$mode.sps"
	echo "$eps" >>"$d/$mode.eps"
}

modes="rs es es-r1 single"
for mode in $modes; do
	: >"$d/$mode.sps"
	: >"$d/$mode.eps"
done
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	for mode in $modes; do
		run $mode
	done
done
for mode in $modes; do
	printf 'median of %d runs, %s: %.0f env steps/s, %.0f episodes/s (2 actors x %d CartPole envs, %d steps each%s)\n' \
		"$runs" "$mode" "$(median <"$d/$mode.sps")" "$(median <"$d/$mode.eps")" "$envs" "$steps" \
		"$([ "$mode" != single ] && echo ", $members members")"
done
