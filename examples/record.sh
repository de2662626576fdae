#!/bin/sh
# examples/record.sh: recorded frame streams.
#
# Any endpoint may be a file: record what an actor sends, what the server
# pushes, and learn from the recording later, with no server running.
#
#   examples/record.sh
set -eu
d=$(mktemp -d)
infer=""
trap '[ -z "$infer" ] || kill $infer 2>/dev/null; rm -rf "$d"' EXIT

# 1. An actor alone, actions from a file: the step frames, as JSON.
printf '0 1\n1 1\n0 0\n' | seed-actor --env cartpole --envs 2 --actions - --out "$d/steps.msgpack"
seed-cat "$d/steps.msgpack" | jq -c '{seq, reward: .reward.data, terminated: .terminated.data}'

# 2. A random policy serving two actors; the unrolls go to a file.
seed-infer --bind "ipc://$d/infer" --policy random --unrolls "$d/unrolls.msgpack" --unroll-length 16 \
	--stats-interval 0 --quiet &
infer=$!
seed-actor --env cartpole --envs 32 --actor 0 --steps 400 --connect "ipc://$d/infer" --quiet &
actor=$!
seed-actor --env cartpole --envs 32 --actor 1 --steps 400 --connect "ipc://$d/infer" --quiet
wait $actor
kill $infer
wait $infer
infer=""
seed-cat "$d/unrolls.msgpack" | jq -r .type | sort | uniq -c

# 3. Learn from the recording: the learner stops at the end of the stream.
seed-learn --config cartpole --unrolls "$d/unrolls.msgpack" --params "ipc://$d/params" --dir "$d/run" \
	--batch-size 16
jq -c '{frames, policy_version}' "$d/run/checkpoint.json"
