#!/bin/sh
# bench/serve-take.sh: instructions seed-infer spends taking one step
# request (seed_serve_take), and how many of them decoding the frame.
#
# Runs seed-infer --policy random under callgrind, collecting only inside
# seed_serve_take, while light clients (tests/cli/lightclient) hold HALVES
# actor halves of K env rows each, asking without think time for SECONDS;
# prints the instructions of seed_serve_take per call, those of the frame
# decoder within it, and the rest.  Instruction counts do not move with the
# machine's load, so two builds can be compared on a shared machine where
# CPU clocks cannot tell a few percent apart (bench/RESULTS.md).
#
# Usage: bench/serve-take.sh [K [HALVES [SECONDS]]]   (from the build dir)
# Defaults: K 1, 16 halves, 6 s.  SEED_BIN names another build's cmd/
# (its libtool wrapper is used to reach its libseed).
set -eu
k=${1:-1}
halves=${2:-16}
secs=${3:-6}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
lc=${SEED_LIGHTCLIENT:-$top/tests/cli/lightclient}
for t in valgrind callgrind_annotate; do
	command -v $t >/dev/null || {
		echo "serve-take.sh: $t is needed" >&2
		exit 1
	}
done
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || :; rm -rf "$d"' EXIT

"$(dirname "$bin")/libtool" --mode=execute valgrind --tool=callgrind --toggle-collect=seed_serve_take \
	--callgrind-out-file="$d/cg.out" "$bin/seed-infer" --bind "ipc://$d/infer" --policy random \
	--unrolls /dev/null --unroll-length 20 --stats-interval 0 --quiet 2>"$d/vg.log" &
infer=$!
sleep 3
"$lc" --connect "ipc://$d/infer" --connections "$halves" --envs "$k" --think-us 0 --duration "$secs" \
	--warmup 1 >"$d/lc.out"
kill -INT $infer
wait $infer || :

# Inclusive instructions of a function, and the calls of seed_serve_take.
ir() { callgrind_annotate --auto=no --inclusive=yes "$d/cg.out" 2>/dev/null | grep -m1 "[:]$1 " | awk '{gsub(",", "", $1); print $1}'; }
take=$(ir seed_serve_take)
dec=$(ir seed_frame_decoder_decode)
calls=$(callgrind_annotate --auto=no --inclusive=yes --tree=caller "$d/cg.out" 2>/dev/null |
	grep -m1 "< .*:seed_serve_turn (" | sed 's/.*(\([0-9,]*\)x).*/\1/' | tr -d ,)
echo "K=$k, $halves halves, $secs s: $calls requests taken; instructions per request:" \
	"take $((take / calls)) = decoding $((dec / calls)) + the rest $(((take - dec) / calls))"
