#!/usr/bin/env bats
# CURVE and message bounds: seed-keygen's files, key files that are refused,
# the options misused, a CartPole run over tcp with keys (learner, inference
# server, actor), clients without keys or with a key not allowed (refused,
# counted and logged by the server, said by the client), an oversized
# message (that peer dropped, the server serving on), the warning for tcp
# beyond this machine without keys, and a packet capture between two network
# namespaces: frame keys in the clear without CURVE, none with it.
#
# Every tcp test runs in network namespaces of its own (named with this
# run's PID and the test's number), so ports never collide with anything
# else on the machine; they are removed in teardown.

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export SEED_PRESETS="$SEED_SRCDIR/examples/presets"
	SUF="$$n$BATS_TEST_NUMBER"
	NSA="" NSB="" PIDS=""
	cd "$D"
}

teardown() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	[ -n "$NSA" ] && ip netns del "$NSA" 2>/dev/null
	[ -n "$NSB" ] && ip netns del "$NSB" 2>/dev/null
	cd /
	rm -rf "$D"
}

# One namespace, NSA, with its loopback up (and, with an argument, a veth
# pair within it, one end holding that address: an address beyond loopback).
one_ns() {
	NSA="seedcvA$SUF"
	ip netns add "$NSA" || skip "cannot create network namespaces here (needs root)"
	ip -n "$NSA" link set lo up
	if [ -n "${1:-}" ]; then
		ip -n "$NSA" link add "cvd$SUF" type veth peer name "cve$SUF"
		ip -n "$NSA" addr add "$1/24" dev "cvd$SUF"
		ip -n "$NSA" link set "cvd$SUF" up
		ip -n "$NSA" link set "cve$SUF" up
	fi
}

# Two namespaces joined by a veth pair: NSA holds 10.91.0.1 on cva$SUF,
# NSB 10.91.0.2.
two_ns() {
	one_ns
	NSB="seedcvB$SUF"
	ip netns add "$NSB"
	ip -n "$NSB" link set lo up
	ip link add "cva$SUF" netns "$NSA" type veth peer name "cvb$SUF" netns "$NSB"
	ip -n "$NSA" addr add 10.91.0.1/24 dev "cva$SUF"
	ip -n "$NSB" addr add 10.91.0.2/24 dev "cvb$SUF"
	ip -n "$NSA" link set "cva$SUF" up
	ip -n "$NSB" link set "cvb$SUF" up
}

# A background process is started with "ip netns exec NS PROGRAM ... &"
# itself, so that $! is the program (a function run in the background would
# be a subshell around it); the foreground ones under timeout, so that a
# failure cannot hang the test.

# wait_grep FILE TEXT: wait (10 s at most) until FILE holds TEXT.
wait_grep() {
	local i
	for i in $(seq 100); do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "never found '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}

# Key pairs: srv (the servers of this deployment), act (an actor allowed),
# bad (a key pair nobody allowed); allow/ holds the allowed public keys.
make_keys() {
	seed-keygen srv >/dev/null
	seed-keygen act >/dev/null
	seed-keygen bad >/dev/null
	mkdir allow
	cp srv.pub act.pub allow/
}

@test "seed-keygen writes NAME.key (0600) and NAME.pub, prints the public key, never overwrites without --force" {
	run seed-keygen k
	assert_success
	pub=$output
	[ "${#pub}" -eq 40 ]
	[ "$(stat -c %a k.key)" = 600 ]
	[ "$(stat -c %a k.pub)" = 644 ]
	grep -qxF "public-key = $pub" k.pub
	grep -qxF "public-key = $pub" k.key
	[ "$(grep -c '^secret-key = ' k.key)" -eq 1 ]
	! grep -q secret-key k.pub
	# That the secret key belongs to the public key is checked by every
	# program that reads it (test_curve has zmq_curve(7)'s pair as golden).
	run seed-keygen k
	assert_failure
	assert_output --partial "k.key exists (--force replaces it)"
	grep -qxF "public-key = $pub" k.pub
	run seed-keygen --force k
	assert_success
	[ "$output" != "$pub" ]
	grep -qxF "public-key = $output" k.pub
	# No temporary file is left beside them.
	[ "$(ls -A | sort | tr '\n' ' ')" = "k.key k.pub " ]
	run seed-keygen
	[ "$status" -eq 2 ]
	run seed-keygen no-such-dir/k
	assert_failure
	assert_output --partial "no-such-dir/"
}

@test "key files that are wrong are refused, naming the file and what is wrong" {
	seed-keygen a >/dev/null
	seed-keygen b >/dev/null
	mkdir allow && cp a.pub allow/
	start() { seed-infer --bind "ipc://$D/s" --policy random --quiet "$@"; }
	chmod 644 a.key
	run start --curve-key a.key --curve-allow allow
	assert_failure
	assert_output --partial "a.key: mode 0644: a secret key must be readable by its owner only"
	chmod 600 a.key
	# A public key where a key pair is needed.
	run start --curve-key a.pub --curve-allow allow
	assert_failure
	assert_output --partial "a.pub: mode 0644"
	cp a.pub apub.key && chmod 600 apub.key
	run start --curve-key apub.key --curve-allow allow
	assert_failure
	assert_output --partial "apub.key: no secret-key line"
	# a's public key with b's secret key.
	{ grep public-key a.key; grep secret-key b.key; } >mixed.key
	chmod 600 mixed.key
	run start --curve-key mixed.key --curve-allow allow
	assert_failure
	assert_output --partial "mixed.key: the secret key does not belong to the public key"
	printf 'public-key = short\n' >allow/c.pub
	run start --curve-key a.key --curve-allow allow
	assert_failure
	assert_output --partial "allow/c.pub:1: public-key: not a key"
	printf '# comment\n\npublik-key = x\n' >allow/c.pub
	run start --curve-key a.key --curve-allow allow
	assert_failure
	assert_output --partial "allow/c.pub:3: unknown name 'publik-key'"
	rm allow/c.pub allow/a.pub
	run start --curve-key a.key --curve-allow allow
	assert_failure
	assert_output --partial "allow: no .pub file"
	run seed-actor --env cartpole --connect "ipc://$D/s" --curve-key a.key --curve-server no-such.pub
	assert_failure
	assert_output --partial "--curve-server: no-such.pub"
}

@test "CURVE options misused are usage errors (exit 2)" {
	make_keys
	run seed-actor --env cartpole --connect "ipc://$D/s" --curve-server srv.pub
	[ "$status" -eq 2 ]
	assert_output --partial "--curve-server needs --curve-key"
	run seed-actor --env cartpole --connect "ipc://$D/s" --curve-key act.key
	[ "$status" -eq 2 ]
	assert_output --partial "--connect ipc://$D/s: connecting with --curve-key needs --curve-server FILE"
	run seed-infer --bind "ipc://$D/s" --policy random --curve-key srv.key
	[ "$status" -eq 2 ]
	assert_output --partial "--bind ipc://$D/s: binding with --curve-key needs --curve-allow DIR"
	run seed-learn --config cartpole --unrolls "ipc://$D/u" --params "ipc://$D/p" --curve-allow allow
	[ "$status" -eq 2 ]
	assert_output --partial "--curve-allow needs --curve-key"
	# Every program that opens sockets has the three options.
	for p in seed-actor seed-infer seed-learn seed-cat; do
		run "$p" --help
		assert_output --partial "--curve-key FILE"
		assert_output --partial "--curve-server FILE"
		assert_output --partial "--curve-allow DIR"
	done
}

@test "with keys over tcp, the learner trains on an allowed actor's unrolls and nobody is refused" {
	one_ns
	make_keys
	K="--curve-key srv.key --curve-server srv.pub --curve-allow allow"
	ip netns exec "$NSA" seed-infer --bind tcp://127.0.0.1:7001 --model tcp://127.0.0.1:7003 --unrolls tcp://127.0.0.1:7002 \
		--unroll-length 16 --stats-interval 0 $K 2>infer.err &
	PIDS="$!"
	wait_for_handler "$!" 15
	ip netns exec "$NSA" seed-actor --env cartpole --envs 16 --connect tcp://127.0.0.1:7001 \
		--curve-key act.key --curve-server srv.pub 2>actor.err &
	PIDS="$PIDS $!"
	run timeout 120 ip netns exec "$NSA" seed-learn --config cartpole --set target_return=null --frames 4096 --batch-size 4 \
		--unrolls tcp://127.0.0.1:7002 --params tcp://127.0.0.1:7003 --dir run $K
	echo "$output"
	assert_success
	assert_output --partial "refused 0 peers"
	# 4096 frames of 16-step unrolls in batches of 4: 64 updates at least.
	[ "$(jq -s 'last | .frames' run/metrics.jsonl)" -ge 4096 ]
	[ "$(jq .policy_version run/checkpoint.json)" -ge 64 ]
	kill -TERM $PIDS
	wait $PIDS || true
	PIDS=""
	cat infer.err actor.err
	grep -qF "refused 0 peers" infer.err
	! grep -q "did not accept" actor.err
	# The actor's episodes reached the learner through the encrypted link.
	[ "$(jq -s 'last | .episodes' run/metrics.jsonl)" -gt 0 ]
}

@test "a client without keys and one whose key is not allowed are refused, counted and logged; each says so" {
	one_ns
	make_keys
	ip netns exec "$NSA" seed-infer --bind tcp://127.0.0.1:7001 --policy random --stats-interval 0 \
		--curve-key srv.key --curve-allow allow 2>infer.err &
	infer=$!
	PIDS="$infer"
	wait_for_handler "$infer" 15
	# No keys at all.
	ip netns exec "$NSA" seed-actor --env cartpole --envs 2 --connect tcp://127.0.0.1:7001 2>nokey.err &
	PIDS="$PIDS $!"
	wait_grep nokey.err "tcp://127.0.0.1:7001: the server did not accept this client"
	# A key pair the server never allowed.
	ip netns exec "$NSA" seed-actor --env cartpole --envs 2 --connect tcp://127.0.0.1:7001 \
		--curve-key bad.key --curve-server srv.pub 2>badkey.err &
	PIDS="$PIDS $!"
	wait_grep badkey.err "the server did not accept this client: this client's public key is not allowed there"
	badpub=$(sed -n 's/^public-key = //p' bad.pub)
	wait_grep infer.err "refused a client at 127.0.0.1: its public key $badpub is not allowed"
	wait_grep infer.err "tcp://127.0.0.1:7001: refused a peer:"
	# An allowed actor is served meanwhile.
	run timeout 30 ip netns exec "$NSA" seed-actor --env cartpole --envs 2 --steps 50 --connect tcp://127.0.0.1:7001 \
		--curve-key act.key --curve-server srv.pub
	assert_success
	assert_output --partial "100 env steps"
	kill -TERM $PIDS
	wait $PIDS || true
	PIDS=""
	cat infer.err nokey.err badkey.err
	# The refused actors never got a step through; they kept retrying.
	grep -qF "retrying" nokey.err
	grep -qF "seed-actor: 0 env steps" nokey.err
	grep -qF "seed-actor: 0 env steps" badkey.err
	# Both refused clients are counted (each at least once; they retry).
	n=$(sed -n 's/^seed-infer: refused \([0-9]*\) peers.*/\1/p' infer.err)
	[ "$n" -ge 2 ]
	grep -qF "100 steps" infer.err
}

@test "an oversized message drops that peer's connection; the server goes on serving" {
	one_ns
	# --max-envs 4 --max-obs-bytes 64: a step frame holds at most
	# 65536 + 4 * (2 * 64 + 14) = 66104 bytes (seed/limits.h).
	ip netns exec "$NSA" seed-infer --bind tcp://127.0.0.1:7001 --policy random --max-envs 4 --max-obs-bytes 64 \
		--stats-interval 0 2>infer.err &
	infer=$!
	PIDS="$infer"
	wait_for_handler "$infer" 15
	head -c 66104 /dev/zero | tr '\0' 'x' >small
	head -c 66105 /dev/zero | tr '\0' 'x' >big
	# At the bound: the server reads it and answers with an error frame.
	run sh -c "ip netns exec $NSA zreq tcp://127.0.0.1:7001 small | seed-cat | jq -r .type"
	assert_success
	assert_output error
	# One byte over: ZeroMQ drops the connection, no answer comes.
	run timeout 30 ip netns exec "$NSA" zreq tcp://127.0.0.1:7001 big
	assert_failure
	# And an actor is served as before.
	run timeout 30 ip netns exec "$NSA" seed-actor --env cartpole --envs 4 --steps 20 --connect tcp://127.0.0.1:7001
	assert_success
	assert_output --partial "80 env steps"
	kill -TERM "$infer"
	wait "$infer"
	PIDS=""
	cat infer.err
	# Only the message at the bound reached the service (one bad frame).
	grep -qF "80 steps" infer.err
	grep -qF " 1 bad frames" infer.err
}

@test "tcp beyond this machine without keys warns once; loopback and ipc do not" {
	one_ns 10.92.0.1
	ip netns exec "$NSA" seed-infer --bind tcp://10.92.0.1:7001 --unrolls tcp://10.92.0.1:7002 --policy random \
		--stats-interval 0 --quiet 2>wide.err &
	infer=$!
	PIDS="$infer"
	wait_for_handler "$infer" 15
	run timeout 30 ip netns exec "$NSA" seed-actor --env cartpole --envs 2 --steps 5 --connect tcp://10.92.0.1:7001 --quiet
	assert_success
	[ "$(grep -c 'no CURVE keys' <<<"$output")" -eq 1 ]
	assert_output --partial "--connect tcp://10.92.0.1:7001: no CURVE keys: frames cross the network in the clear"
	kill -TERM "$infer"
	wait "$infer"
	PIDS=""
	# Two tcp endpoints beyond loopback: one warning.
	[ "$(grep -c 'no CURVE keys' wide.err)" -eq 1 ]
	grep -qF -- "--bind tcp://10.92.0.1:7001: no CURVE keys" wide.err
	# Bound and connected: loopback by address and by name, and ipc.
	for pair in "tcp://127.0.0.1:7003 tcp://localhost:7003" "tcp://127.0.0.9:7004 tcp://127.0.0.9:7004" \
		"ipc://$D/s ipc://$D/s"; do
		set -- $pair
		ip netns exec "$NSA" seed-infer --bind "$1" --policy random --stats-interval 0 --quiet 2>narrow.err &
		infer=$!
		PIDS="$infer"
		wait_for_handler "$infer" 15
		run timeout 20 ip netns exec "$NSA" seed-actor --env cartpole --envs 2 --steps 5 --connect "$2" --quiet
		assert_success
		refute_output --partial "no CURVE keys"
		kill -TERM "$infer"
		wait "$infer"
		PIDS=""
		! grep -q "no CURVE keys" narrow.err
	done
}

# capture_run NAME [KEY OPTIONS...]: the actor in NSB plays 200 steps of
# CartPole against seed-infer in NSA over the veth pair while tcpdump
# records that link into NAME.pcap.
capture_run() {
	local name=$1
	shift
	ip netns exec "$NSA" tcpdump -i "cva$SUF" --immediate-mode -U -w "$name.pcap" tcp port 7001 2>"$name.tcpdump" &
	local dump=$!
	PIDS="$dump"
	wait_grep "$name.tcpdump" "listening on"
	local srv=() cli=()
	if [ $# -gt 0 ]; then
		srv=(--curve-key srv.key --curve-allow allow)
		cli=(--curve-key act.key --curve-server srv.pub)
	fi
	ip netns exec "$NSA" seed-infer --bind tcp://10.91.0.1:7001 --policy random --stats-interval 0 "${srv[@]}" \
		2>"$name.infer" &
	local infer=$!
	PIDS="$PIDS $infer"
	wait_for_handler "$infer" 15
	timeout 30 ip netns exec "$NSB" seed-actor --env cartpole --envs 4 --steps 200 --connect tcp://10.91.0.1:7001 "${cli[@]}" \
		2>"$name.actor"
	kill -TERM "$infer"
	wait "$infer"
	sleep 0.5 # the last packets into the file (immediate mode, -U: each as it comes)
	kill -INT "$dump"
	wait "$dump" || true
	PIDS=""
	grep -qF "800 env steps" "$name.actor"
}

@test "a packet capture on the link shows the frames' keys in the clear without CURVE, and nothing of them with it" {
	command -v tcpdump >/dev/null || skip "tcpdump is not installed (scripts/install-deps installs it)"
	two_ns
	make_keys
	capture_run plain
	[ "$(tcpdump -r plain.pcap 2>/dev/null | wc -l)" -ge 200 ]
	# The check can fail: in the clear, the step and action frames' keys
	# and the ZMTP greeting's mechanism are there to read.
	for word in terminated ep_return ep_length reward policy_version NULL; do
		grep -qaF "$word" plain.pcap || { echo "not in the capture: $word" && cat plain.* && false; }
	done
	capture_run curve with-keys
	# The whole run was captured: 200 steps of two halves, a request and a
	# reply each, are 800 messages (ZeroMQ may put several in a packet).
	[ "$(tcpdump -r curve.pcap 2>/dev/null | wc -l)" -ge 200 ]
	# The greeting names the mechanism in the clear; the frames are sealed.
	grep -qaF CURVE curve.pcap
	for word in terminated ep_return ep_length reward policy_version; do
		! grep -qaF "$word" curve.pcap
	done
}
