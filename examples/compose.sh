#!/bin/sh
# examples/compose.sh: the training topology composed by hand.
#
# seed-train does this for you; here every process is spelled out, so that
# you can move any of them to another machine (replace ipc:// by tcp://), run
# one stage alone to debug it, or add a second server.  Processes may start
# in any order: they connect and reconnect on their own.
#
#   examples/compose.sh [PRESET]      (default cartpole; stop with Ctrl-C)
set -eu
preset=${1:-cartpole}
run=runs/compose-$preset
mkdir -p "$run"
sock=$(mktemp -d)
pids=""
trap 'kill $pids 2>/dev/null; wait; rm -rf "$sock"' EXIT INT TERM

# The learner: pulls unrolls, publishes parameters, checkpoints into $run.
seed-learn --config "$preset" --unrolls "ipc://$sock/unrolls" --params "ipc://$sock/params" --dir "$run" &
learn=$!

# The inference server: follows the learner's parameters, serves actors,
# pushes unrolls of 16 steps to the learner.
seed-infer --bind "ipc://$sock/infer" --model "ipc://$sock/params" --unrolls "ipc://$sock/unrolls" \
	--unroll-length "$(seed-learn --config "$preset" --get unroll_length)" --stats-interval 10 &
pids="$!"

# Two actors of 32 environments each.
env=$(seed-learn --config "$preset" --get env)
for i in 0 1; do
	seed-actor --env "$env" --envs 32 --actor $i --seed $i --connect "ipc://$sock/infer" &
	pids="$pids $!"
done

# The learner stops at the preset's target or frame budget.
wait $learn
seed-eval --checkpoint "$run" --episodes 20 --greedy
