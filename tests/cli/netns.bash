# tests/cli/netns.bash: "hosts" for the .bats tests, as Linux network namespaces.
#
# netns_init makes a switch: a namespace holding one bridge.  netns_host
# makes a host: a namespace whose eth0 is one end of a veth pair, the other
# end a port of the bridge, with an address 10.$NETNS_NET.N/24.  Hosts reach
# each other through the switch and nothing else: not the machine's own
# network, not another test's hosts.  Every name carries a suffix unique to
# this run (the test's process id and a counter), and the veth pairs are made
# inside their namespaces, so tests running at once on one machine never
# share a name, an address or a port.
#
# netns_run starts a program in a host in the background and remembers its
# pid; netns_cleanup (call it from teardown, whatever happened) stops every
# process left in the run's namespaces (`ip netns pids` lists them, started
# by netns_run or not), reaps the remembered ones and deletes the
# namespaces, which removes the veth pairs and the bridge with them.  Making namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN
# (root, or a user namespace that has them): netns_usable says whether this
# process may.
#
# Variables: NETNS_ID (the run's suffix), NETNS_SWITCH (the switch's
# namespace), NETNS_NET (the first two octets after 10.: the /24 of the run),
# NETNS_HOSTS (the hosts made, by name), NETNS_PIDS (the processes started),
# and for host H: NETNS_NS_H (its namespace), NETNS_IP_H (its address),
# NETNS_PORT_H (its switch port, in NETNS_SWITCH).

# netns_usable: whether this process may make network namespaces with a
# bridge and veth pairs (0) or not (1, with the reason on stdout, for a
# test's skip).
netns_usable() {
	local probe="seedprobe$BASHPID" out
	if ! command -v ip >/dev/null 2>&1; then
		echo "no ip command (iproute2)"
		return 1
	fi
	if ! out=$(ip netns add "$probe" 2>&1); then
		echo "ip netns add is not permitted here: $out"
		return 1
	fi
	if ! out=$(ip -n "$probe" link add "b$BASHPID" type bridge 2>&1); then
		ip netns del "$probe" 2>/dev/null
		echo "no bridges in a network namespace here: $out"
		return 1
	fi
	if ! out=$(ip -n "$probe" link add v0 type veth peer name v1 2>&1); then
		ip netns del "$probe" 2>/dev/null
		echo "no veth pairs in a network namespace here: $out"
		return 1
	fi
	ip netns del "$probe"
	return 0
}

# netns_init: make the switch (a namespace with bridge br0, up).
netns_init() {
	NETNS_ID="$BASHPID"
	NETNS_SWITCH="seed$NETNS_ID-sw"
	# A /24 per run, from the pid: 10.A.B.0/24.
	NETNS_NET="$(((NETNS_ID >> 8) % 200 + 20)).$((NETNS_ID % 256))"
	NETNS_HOSTS=""
	NETNS_PIDS=""
	NETNS_N=0
	ip netns add "$NETNS_SWITCH" || return 1
	ip -n "$NETNS_SWITCH" link set lo up
	ip -n "$NETNS_SWITCH" link add br0 type bridge || return 1
	ip -n "$NETNS_SWITCH" link set br0 up
}

# netns_host NAME: make host NAME (letters and digits) on the switch, with
# eth0 at the next address of the run's /24 and lo up.
netns_host() {
	local name=$1 ns port
	NETNS_N=$((NETNS_N + 1))
	ns="seed$NETNS_ID-$name"
	port="p$NETNS_N"
	ip netns add "$ns" || return 1
	NETNS_HOSTS="$NETNS_HOSTS $name"
	# Both ends are made where they live: no name in the machine's own
	# namespace, so no clash with another run's.
	ip link add eth0 netns "$ns" type veth peer name "$port" netns "$NETNS_SWITCH" || return 1
	ip -n "$NETNS_SWITCH" link set "$port" master br0
	ip -n "$NETNS_SWITCH" link set "$port" up
	ip -n "$ns" addr add "10.$NETNS_NET.$NETNS_N/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	eval "NETNS_NS_$name=\$ns NETNS_IP_$name=10.\$NETNS_NET.\$NETNS_N NETNS_PORT_$name=\$port"
}

# netns_ip NAME: host NAME's address.
netns_ip() {
	eval "echo \"\$NETNS_IP_$1\""
}

# netns_exec NAME CMD...: run CMD in host NAME, in the foreground.
netns_exec() {
	local ns
	eval "ns=\$NETNS_NS_$1"
	shift
	ip netns exec "$ns" "$@"
}

# netns_run NAME VAR CMD...: start CMD in host NAME in the background; its
# pid goes to VAR and to NETNS_PIDS.  Redirections given to netns_run apply
# to CMD.  `ip netns exec` replaces itself with CMD, so the pid is CMD's.
netns_run() {
	local ns var=$2
	eval "ns=\$NETNS_NS_$1"
	shift 2
	ip netns exec "$ns" "$@" &
	eval "$var=\$!"
	NETNS_PIDS="$NETNS_PIDS $!"
}

# netns_cut NAME / netns_restore NAME: take host NAME's link down (its eth0:
# the host loses its route to the others, as with an unplugged cable) and
# bring it back up (the kernel puts the route back with the address).
netns_cut() {
	netns_exec "$1" ip link set eth0 down
}
netns_restore() {
	netns_exec "$1" ip link set eth0 up
}

# netns_link_up NAME: whether host NAME's eth0 is up and running (0 or 1).
netns_link_up() {
	netns_exec "$1" ip -o link show eth0 | grep -q 'state UP'
}

# rss_kib PID: the resident set of process PID in KiB (VmRSS in
# /proc/PID/status); fails when there is no such process.
rss_kib() {
	local v
	v=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$v" ] || return 1
	echo "$v"
}

# netns_alive PID...: whether every PID is still running (not a zombie).
netns_alive() {
	local p state
	for p in "$@"; do
		state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$p/status" 2>/dev/null)
		[ -n "$state" ] && [ "$state" != Z ] || return 1
	done
}

# netns_pids: the pids of the processes running in the run's hosts (a
# process that has exited, a zombie not yet reaped, is in none).
netns_pids() {
	local name ns
	for name in $NETNS_HOSTS; do
		eval "ns=\$NETNS_NS_$name"
		ip netns pids "$ns" 2>/dev/null
	done
}

# netns_cleanup: stop every process still running in the run's namespaces
# (SIGTERM, then SIGKILL after 5 s), reap those this shell started, and
# delete the namespaces.  Only processes that `ip netns pids` finds in them
# get a signal: a remembered pid that has exited and been reaped may already
# name someone else's process.  Safe to call twice, and after netns_init
# failed half way.
netns_cleanup() {
	[ -n "${NETNS_ID:-}" ] || return 0
	local name ns p
	for p in $(netns_pids); do kill -TERM "$p" 2>/dev/null || true; done
	for _ in $(seq 50); do
		[ -n "$(netns_pids)" ] || break
		sleep 0.1
	done
	for p in $(netns_pids); do kill -KILL "$p" 2>/dev/null || true; done
	for p in $NETNS_PIDS; do wait "$p" 2>/dev/null || true; done
	for name in $NETNS_HOSTS; do
		eval "ns=\$NETNS_NS_$name"
		ip netns del "$ns" 2>/dev/null || true
	done
	ip netns del "$NETNS_SWITCH" 2>/dev/null || true
	NETNS_HOSTS=""
	NETNS_PIDS=""
	NETNS_ID=""
}
