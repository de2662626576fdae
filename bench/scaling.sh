#!/bin/sh
# bench/scaling.sh: the figures of doc/scaling.md, measured with light
# clients (tests/cli/lightclient) against one seed-infer --policy random.
#
#   bench/scaling.sh latency [RUNS [SECONDS [K [THINK_US [N...]]]]]
#       For each number N of connected actor halves (default 1 2 4 8 16 32
#       64 128 256 512 1024): a fresh seed-infer (its default batching:
#       --max-batch 256, --timeout-us 500; unrolls of 20 steps assembled
#       into /dev/null), light clients holding N halves of K env rows each
#       (one process up to 64 halves, four above: on two cores, more client
#       processes cost more in context switches than they add), for SECONDS (the first
#       second left out), RUNS times.  Each half waits THINK_US after an
#       answer before its next request, as an actor stepping its envs would
#       (0: at once; the clients' poll has millisecond precision).  Prints
#       per N the medians over the runs of: the median and p99 latency of a
#       request (us), answered env steps/s, requests/s, and the server's CPU
#       time per request (us of user+system CPU, from /proc/PID/stat).
#       Defaults: 3 runs, 4 s, K 1, THINK_US 0.
#   bench/scaling.sh frames
#       Bytes on the wire per frame, from frames encoded by libseed: step
#       and action frames of K = 1 and 64 (tests/cli/lightclient --frame-sizes),
#       and unroll frames of 20 steps of one env (what seed-infer wrote with
#       --unrolls to a file, from a light client of one half, K = 1, no
#       episode ends): CartPole f32[4], MinAtar u8[10,10,4] and [10,10,10]
#       (the fewest and the most channels of the five games) and Atari
#       u8[84,84,4].
#   bench/scaling.sh spread [SERVERS [HALVES [SECONDS]]]
#       Several inference servers behind one learner's endpoint: SERVERS
#       seed-infers (default 2), every one pushing its unrolls to one bound
#       sink (seed-cat --bind, where seed-learn --unrolls @URL would be), and
#       four light clients holding HALVES halves (default 256) spread over
#       the servers (slot i to server i mod SERVERS), for SECONDS (default
#       5).  Prints the answered env steps/s and median latency, and how
#       many unroll frames of how many actors reached the sink.
#
# SEED_INFER_OPTS: more options for seed-infer (e.g. --timeout-us 0).
# SEED_ENDPOINT: where the server binds (default an ipc endpoint in a
# temporary directory); for tcp, run the script in a private network
# namespace so that no port collides:
#   unshare --net sh -c 'ip link set lo up; SEED_ENDPOINT=tcp://127.0.0.1:5555 bench/scaling.sh latency'
#
# Run from the build directory after make check (which builds
# tests/cli/lightclient).  The machine is shared: take the medians of several
# runs, and say what else ran.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
lc=${SEED_LIGHTCLIENT:-$top/tests/cli/lightclient}
d=$(mktemp -d "${TMPDIR:-/tmp}/seed-scaling.XXXXXX")
infer=""
cleanup() {
	[ -z "$infer" ] || kill "$infer" 2>/dev/null || :
	rm -rf "$d"
}
trap cleanup EXIT
trap "exit 1" INT TERM
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# user+system CPU ticks of a process
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
ep=${SEED_ENDPOINT:-ipc://$d/infer}
iopts=${SEED_INFER_OPTS:-}

latency() {
	runs=${1:-3} secs=${2:-4} k=${3:-1} think=${4:-0}
	shift $(($# < 4 ? $# : 4))
	ns=${*:-1 2 4 8 16 32 64 128 256 512 1024}
	printf '# K=%d, think %d us, %d runs of %d s, %s %s; medians\n' "$k" "$think" "$runs" "$secs" "${SEED_ENDPOINT:-ipc}" "$iopts"
	printf '%6s %10s %10s %12s %12s %14s\n' halves p50_us p99_us steps/s requests/s cpu_us/request
	for n in $ns; do
		: >"$d/p50"
		: >"$d/p99"
		: >"$d/sps"
		: >"$d/rps"
		: >"$d/cpu"
		i=0
		while [ $i -lt "$runs" ]; do
			i=$((i + 1))
			# shellcheck disable=SC2086
			"$bin/seed-infer" --bind "$ep" --policy random --unrolls /dev/null --unroll-length 20 \
				--stats-interval 0 --quiet $iopts &
			infer=$!
			sleep 0.3
			procs=1
			[ "$n" -le 64 ] || procs=4
			j=0
			pids=""
			c0=$(ticks $infer)
			while [ $j -lt $procs ]; do
				per=$((n / procs + (j < n % procs ? 1 : 0)))
				"$lc" --connect "$ep" --connections $per --actor-base $((j * 100000)) --envs "$k" \
					--think-us "$think" --duration "$secs" --warmup 1 >"$d/out$j" &
				pids="$pids $!"
				j=$((j + 1))
			done
			# shellcheck disable=SC2086
			wait $pids
			c1=$(ticks $infer)
			kill $infer
			wait $infer || :
			infer=""
			# The halves of all processes together: latency percentiles
			# weighted by answers (close enough: the processes see the same
			# server), rates summed.
			cat "$d"/out* | jq -s -r --argjson cpu "$((c1 - c0))" --argjson hz "$hz" '
				(map(.all.answers) | add) as $a |
				[(map(.all.p50_us * .all.answers) | add) / $a,
				 (map(.all.p99_us * .all.answers) | add) / $a,
				 (map(.all.steps_per_s) | add), (map(.all.requests_per_s) | add),
				 $cpu / $hz * 1e6 / ((map(.all.answers) | add) * (1 + 1 / (.[0].all.seconds)))] | @tsv' \
				>"$d/row"
			read -r p50 p99 sps rps cpu <"$d/row"
			echo "$p50" >>"$d/p50"
			echo "$p99" >>"$d/p99"
			echo "$sps" >>"$d/sps"
			echo "$rps" >>"$d/rps"
			echo "$cpu" >>"$d/cpu"
			rm -f "$d"/out*
		done
		printf '%6d %10.0f %10.0f %12.0f %12.0f %14.1f\n' "$n" "$(median <"$d/p50")" "$(median <"$d/p99")" \
			"$(median <"$d/sps")" "$(median <"$d/rps")" "$(median <"$d/cpu")"
	done
}

frames() {
	printf '%-22s %4s %12s %12s %14s\n' observation K step_bytes action_bytes unroll_bytes
	for spec in "cartpole f32 4" "minatar-4ch u8 10,10,4" "minatar-10ch u8 10,10,10" "atari u8 84,84,4"; do
		# shellcheck disable=SC2086
		set -- $spec
		for k in 1 64; do
			"$lc" --frame-sizes --envs $k --obs-dtype "$2" --obs-shape "$3" >"$d/sizes"
			step=$(jq .step_frame_bytes "$d/sizes")
			act=$(jq .action_frame_bytes "$d/sizes")
			unroll=-
			if [ $k -eq 1 ]; then
				"$bin/seed-infer" --bind "ipc://$d/infer" --policy random --unrolls "$d/u.msgpack" \
					--unroll-length 20 --stats-interval 0 --quiet &
				infer=$!
				sleep 0.3
				"$lc" --connect "ipc://$d/infer" --connections 1 --envs 1 --obs-dtype "$2" --obs-shape "$3" \
					--episode-length 0 --duration 0.5 --warmup 0 >/dev/null
				kill $infer
				wait $infer || :
				infer=""
				frames=$("$bin/seed-cat" "$d/u.msgpack" | jq -s 'map(select(.type == "unroll")) | length')
				bytes=$(wc -c <"$d/u.msgpack")
				unroll=$((bytes / frames))
				rm -f "$d/u.msgpack"
			fi
			printf '%-22s %4d %12d %12d %14s\n' "$1 $2[$3]" $k "$step" "$act" "$unroll"
		done
	done
}

spread() {
	servers=${1:-2} n=${2:-256} secs=${3:-5}
	eps=""
	pids=""
	sinkep="ipc://$d/unrolls"
	"$bin/seed-cat" --bind "$sinkep" >"$d/sink.jsonl" &
	sink=$!
	i=0
	while [ $i -lt "$servers" ]; do
		# shellcheck disable=SC2086
		"$bin/seed-infer" --bind "ipc://$d/infer$i" --policy random --unrolls ">$sinkep" --unroll-length 20 \
			--stats-interval 0 --quiet $iopts &
		pids="$pids $!"
		eps="$eps --connect ipc://$d/infer$i"
		i=$((i + 1))
	done
	sleep 0.3
	cpids=""
	j=0
	while [ $j -lt 4 ]; do
		# shellcheck disable=SC2086
		"$lc" $eps --connections $((n / 4)) --actor-base $((j * 100000)) --duration "$secs" --warmup 1 \
			>"$d/out$j" &
		cpids="$cpids $!"
		j=$((j + 1))
	done
	# shellcheck disable=SC2086
	wait $cpids
	# shellcheck disable=SC2086
	kill $pids
	# shellcheck disable=SC2086
	wait $pids || :
	sleep 0.5
	kill $sink
	wait $sink || :
	cat "$d"/out* | jq -s -r --argjson s "$servers" \
		'"servers \($s), halves \(map(.connections) | add): \(map(.all.steps_per_s) | add | floor) answered env steps/s, median latency \((map(.all.p50_us * .all.answers) | add) / (map(.all.answers) | add) | floor) us"'
	jq -s -r 'map(select(.type == "unroll")) | "\(length) unroll frames reached the one sink, from \(map(.actor) | unique | length) actors"' \
		"$d/sink.jsonl"
	rm -f "$d"/out* "$d/sink.jsonl"
}

case "${1:-}" in
latency)
	shift
	latency "$@"
	;;
frames) frames ;;
spread)
	shift
	spread "$@"
	;;
*)
	echo "usage: bench/scaling.sh latency [RUNS [SECONDS [K [THINK_US [N...]]]]] | frames | spread [SERVERS [HALVES [SECONDS]]]" >&2
	exit 2
	;;
esac
