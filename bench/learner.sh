#!/bin/sh
# bench/learner.sh: the learner's throughput alone, on a recorded stream.
#
# The whole pipeline (bench/train-throughput.sh) shares two cores among four
# processes, so its figures move with whatever else runs.  This bench takes
# the learner out of it: it records, once, the stream seed-learn would get
# in that pipeline (seed-infer --policy random serving 2 seed-actors x ENVS
# CartPole envs, unrolls of 16 steps, written with --unrolls to a file: one
# unroll frame per actor half of ENVS/2 envs, plus the episode frames), then
# times `seed-learn --unrolls FILE` consuming it, RUNS times, with batches
# of BATCH unrolls and the cartpole preset's model (MLP 64-64).  seed-learn
# stops at the end of a file stream; its parameters are published to an
# ipc endpoint nobody listens to, so the encoding is paid as in training.
# The random policy ends episodes after about 22 steps, so the stream holds
# more episode frames than a trained policy's would (one per episode); the
# unroll frames, where the work is, are the same shape as in training.
#
# frames/s = env frames trained (from seed-learn's final report) / the wall
# time of the whole process (start-up included: a few milliseconds); the
# median over the runs is reported.  Where /usr/bin/time is there, also
# frames per CPU second (user + system): on a machine shared with other
# work the wall time counts the waits for a core, the CPU time does not,
# and the CPU time is what the learner takes away from the actors and the
# server in the pipeline.
#
# To compare builds in one sitting, set SEED_LEARNERS to several seed-learn
# binaries: the runs alternate between them (A B A B ...), on the same
# stream, so that a burst of load elsewhere hits them alike, and each gets
# its own median.
#
# Usage: bench/learner.sh [RUNS [STEPS [ENVS [BATCH]]]]   (defaults 7 8000 128 64)
#   STEPS: steps of every env recorded (2 x ENVS x STEPS frames)
#   SEED_BIN: where seed-infer and seed-actor are (default: this tree's cmd/)
#   SEED_LEARNERS: the seed-learn binaries to time (default: $SEED_BIN/seed-learn)
set -eu
runs=${1:-7}
steps=${2:-8000}
envs=${3:-128}
batch=${4:-64}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
learners=${SEED_LEARNERS:-$bin/seed-learn}
export SEED_PRESETS="${SEED_PRESETS:-$top/examples/presets}"
d=$(mktemp -d "${TMPDIR:-/tmp}/seed-lb.XXXXXX")
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
timer=""
[ ! -x /usr/bin/time ] || timer="/usr/bin/time -f %U_%S -o $d/cpu"

# Record: the server writes every unroll and episode frame to the file; it
# is stopped once both actors have made their steps.
"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --unrolls "$d/stream" --unroll-length 16 \
	--max-batch $((2 * envs)) --quiet &
infer_pid=$!
"$bin/seed-actor" --env cartpole --envs "$envs" --actor 0 --steps "$steps" --connect "ipc://$d/infer" -q &
a0=$!
"$bin/seed-actor" --env cartpole --envs "$envs" --actor 1 --steps "$steps" --connect "ipc://$d/infer" -q &
a1=$!
wait $a0
wait $a1
kill -TERM "$infer_pid"
wait "$infer_pid" || :
infer_pid=""
printf 'stream: %s bytes, 2 actors x %d envs x %d steps\n' "$(wc -c <"$d/stream" | tr -d ' ')" "$envs" "$steps"

i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	k=0
	for learn in $learners; do
		k=$((k + 1))
		t0=$(now)
		$timer "$learn" --config cartpole --set target_return=null --set total_frames=1000000000000 \
			--set batch_size="$batch" --unrolls "$d/stream" --params "ipc://$d/params" 2>"$d/log"
		t1=$(now)
		frames=$(sed -n 's/.*end of the unroll stream: \([0-9]*\) frames.*/\1/p' "$d/log")
		[ -n "$frames" ] || { cat "$d/log" >&2; exit 1; }
		fps=$(awk "BEGIN { print $frames / ($t1 - $t0) }")
		cpu=$(if [ -n "$timer" ]; then tr _ ' ' <"$d/cpu" | awk '{ print $1 + $2 }'; else echo 0; fi)
		cfps=$(awk "BEGIN { print ($cpu > 0) ? $frames / $cpu : 0 }")
		printf 'run %d, learner %d: %d frames in %.3f s (%.3f s CPU), %.0f env frames/s, %.0f per CPU s\n' \
			$i $k "$frames" "$(awk "BEGIN { print $t1 - $t0 }")" "$cpu" "$fps" "$cfps"
		echo "$fps" >>"$d/fps.$k"
		echo "$cfps" >>"$d/cfps.$k"
	done
done
k=0
for learn in $learners; do
	k=$((k + 1))
	printf 'median of %d runs: %.0f env frames/s, %.0f per CPU second (%s; 2 x %d envs, batch %d x 16 steps)\n' \
		"$runs" "$(median <"$d/fps.$k")" "$(median <"$d/cfps.$k")" "$learn" "$envs" "$batch"
done
