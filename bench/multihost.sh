#!/bin/bash
# bench/multihost.sh: the actor <-> inference loop across hosts, over tcp.
#
# Hosts are network namespaces on one bridge (tests/cli/netns.bash): seed-infer
# (random policy, unrolls of 20 pushed to a counting sink on the same host)
# on host A, and two seed-actors of ENVS CartPole envs each, laid out three
# ways, in turn within every run so that the machine's noise falls on all
# three alike:
#
#   two-hosts  one actor on host B, one on host C: tcp over two veth pairs
#              and the bridge
#   one-host   both actors on host B: tcp over one veth pair and the bridge
#   same-host  both actors on host A, beside the server: tcp over A's
#              loopback, no veth and no bridge
#
# Prints per run and as medians the env steps per second through seed-infer
# (both actors' env steps over the actors' wall time).  Making namespaces
# needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run it as root.
#
# Usage: bench/multihost.sh [RUNS [STEPS [ENVS]]]   (from the build dir, after make bench)
# Defaults: 5 runs, 4000 steps per env, 256 envs per actor.
set -eu
runs=${1:-5}
steps=${2:-4000}
envs=${3:-256}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
sink=${SEED_SINK:-$top/bench/sink}
[ -x "$sink" ] || {
	echo "$0: no $sink: run make bench first" >&2
	exit 1
}
# shellcheck source=../tests/cli/netns.bash
. "$top/tests/cli/netns.bash"
if ! why=$(netns_usable); then
	echo "$0: $why (this benchmark needs root)" >&2
	exit 1
fi
d=$(mktemp -d)
trap 'netns_cleanup; rm -rf "$d"' EXIT
netns_init
netns_host A
netns_host B
netns_host C
ipa=$(netns_ip A)

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# one LAYOUT HOST0 HOST1: one run with actor 0 on HOST0 and actor 1 on
# HOST1; prints its env steps per second.
one() {
	local layout=$1 h0=$2 h1=$3 infer sinkpid a0 a1 t0 t1
	netns_run A infer "$bin/seed-infer" --bind "tcp://$ipa:5555" --policy random --max-batch "$envs" \
		--timeout-us 0 --unrolls "ipc://$d/unrolls" --unroll-length 20 --hwm 256 --quiet
	netns_run A sinkpid "$sink" "ipc://$d/unrolls" >"$d/sink.out"
	sleep 0.3
	t0=$(date +%s.%N)
	netns_run "$h0" a0 "$bin/seed-actor" --env cartpole --envs "$envs" --actor 0 --steps "$steps" \
		--connect "tcp://$ipa:5555" --quiet
	netns_run "$h1" a1 "$bin/seed-actor" --env cartpole --envs "$envs" --actor 1 --steps "$steps" \
		--connect "tcp://$ipa:5555" --quiet
	wait "$a0"
	wait "$a1"
	t1=$(date +%s.%N)
	kill -TERM "$infer"
	wait "$infer" || true
	kill -TERM "$sinkpid"
	wait "$sinkpid" || true
	NETNS_PIDS="" # all reaped: nothing for netns_cleanup to stop
	awk "BEGIN { print 2 * $envs * $steps / ($t1 - $t0) }" >>"$d/$layout"
	printf '  %-9s %.0f env steps/s\n' "$layout" "$(tail -n 1 "$d/$layout")"
}

i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	echo "run $i:"
	one two-hosts B C
	one one-host B B
	one same-host A A
done
printf 'medians of %d runs (2 actors x %d CartPole envs, %d steps each, random policy, over tcp):\n' \
	"$runs" "$envs" "$steps"
for layout in two-hosts one-host same-host; do
	printf '  %-9s %.0f env steps/s\n' "$layout" "$(median <"$d/$layout")"
done
