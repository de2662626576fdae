#!/usr/bin/env bats
# seed-actor's command line: offline mode, errors, signals.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
}

teardown() {
	# What a failing test left running.
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	rm -rf "$D"
}

@test "--help and --version go to stdout and exit 0" {
	run seed-actor --help
	assert_success
	assert_output --partial "Usage: seed-actor"
	run seed-actor --version
	assert_success
	assert_output --regexp '^seed-actor \(seed\) [0-9]'
}

@test "misuse gets a short usage on stderr and exit 2" {
	run seed-actor
	[ "$status" -eq 2 ]
	assert_output --partial "--env is required"
	run seed-actor --env cartpole
	[ "$status" -eq 2 ]
	assert_output --partial "give either --connect, or --actions and --out"
	run seed-actor --env cartpole --actions - 
	[ "$status" -eq 2 ]
	run seed-actor --env cartpole --envs 0 --actions - --out -
	[ "$status" -eq 2 ]
	assert_output --partial "--envs"
	run seed-actor --env cartpole --bogus
	[ "$status" -eq 2 ]
}

@test "a bad environment or options are configuration errors (status 2) that say what was wrong" {
	run seed-actor --env no-such-env --actions /dev/null --out /dev/null
	[ "$status" -eq 2 ]
	assert_output --partial "no-such-env"
	run seed-actor --env cartpole --env-options '{"max_stepz": 3}' --actions /dev/null --out /dev/null
	[ "$status" -eq 2 ]
	assert_output --partial "max_stepz"
}

@test "offline: the reset observation, then one frame per line of actions" {
	# CartPole from a fixed state: pushing right (1) three times.
	printf '1 0\n1 0\n1 0\n' | seed-actor --env cartpole --env-options '{"init_state": [0, 0, 0, 0]}' --envs 2 \
		--actions - --out "$D/steps.msgpack" --quiet
	run sh -c "seed-cat '$D/steps.msgpack' | jq -c '[.seq, .env0, .num_actions, (.reward.data), (.ep_length.data)]'"
	assert_success
	assert_line --index 0 '[0,0,2,[0,0],[0,0]]'
	assert_line --index 1 '[1,0,2,[1,1],[1,1]]'
	assert_line --index 3 '[3,0,2,[1,1],[3,3]]'
	# From rest (theta = 0), one push right, worked by hand from the
	# CartPole equations: temp = F / m_total, theta_acc = -temp /
	# (l (4/3 - m_pole / m_total)), x_acc = temp - m_pole l theta_acc / m_total,
	# then Euler steps of tau = 0.02.
	run sh -c "seed-cat '$D/steps.msgpack' | jq -c '.obs.data | flatten' | sed -n 2p"
	x_dot=$(echo "$output" | jq '.[1]')
	theta_dot=$(echo "$output" | jq '.[3]')
	[ "$(jq -n "(10 / 1.1) as \$t | (-\$t / (0.5 * (4 / 3 - 0.1 / 1.1))) as \$a
		| ((\$t - 0.05 * \$a / 1.1) * 0.02 - $x_dot | fabs < 1e-6) and (\$a * 0.02 - $theta_dot | fabs < 1e-6)")" = true ]
	# and the other env, pushed left, mirrors it.
	[ "$(echo "$output" | jq '.[5] == -.[1]')" = true ]
}

@test "offline: a line with the wrong number of actions is an error naming the line" {
	run sh -c "printf '0 1\n0\n' | seed-actor --env cartpole --envs 2 --actions - --out /dev/null --quiet"
	[ "$status" -eq 1 ]
	assert_output --partial "-:2: expected 2 integer actions"
	run sh -c "printf '0 7\n' | seed-actor --env cartpole --envs 2 --actions - --out /dev/null --quiet"
	[ "$status" -eq 1 ]
}

@test "offline, Box actions: K x A numbers a line; frames carry the bounds; Pendulum as numpy steps it" {
	# tests/golden/pendulum_ref.py: from (theta, theta_dot) = (1, 0.5), torques 0.5, 3 (clipped
	# to 2 inside the environment), -2.5, 0; both envs start there, the second pushed back.
	printf '0.5 -0.5\n3, -3\n-2.5 2.5\n0 0\n' >"$D/a"
	seed-actor --env pendulum --env-options '{"init_state": [1.0, 0.5]}' --envs 2 \
		--actions "$D/a" --out "$D/s" --quiet
	run seed-cat "$D/s"
	assert_success
	[ "$(echo "$output" | wc -l)" -eq 5 ]
	last=$(echo "$output" | tail -n 1)
	[ "$(echo "$last" | jq -c '[.num_actions, .action_low.data, .action_high.data]')" = '[1,[-2],[2]]' ]
	[ "$(echo "$last" | jq '(.obs.data[0][0] - 0.111090265 | fabs) < 1e-6 and
		(.obs.data[0][2] - 3.272386 | fabs) < 1e-6 and (.reward.data[0] + 2.3297784 | fabs) < 1e-6')" = true ]
	# The second env was pushed the other way: a different state.
	[ "$(echo "$last" | jq '.obs.data[1][2] < .obs.data[0][2]')" = true ]
}

@test "offline, Box actions: a short line or a non-finite number is an error naming the line" {
	run sh -c "printf '0.5 1\n0.5\n' | seed-actor --env pendulum --envs 2 --actions - --out /dev/null --quiet"
	[ "$status" -eq 1 ]
	assert_output --partial "-:2: expected 2 finite numbers (2 environments x 1)"
	run sh -c "printf '0.5 nan\n' | seed-actor --env pendulum --envs 2 --actions - --out /dev/null --quiet"
	[ "$status" -eq 1 ]
	assert_output --partial "-:1: expected 2 finite numbers"
	run sh -c "printf 'inf 0\n' | seed-actor --env pendulum --envs 2 --actions - --out /dev/null --quiet"
	[ "$status" -eq 1 ]
}

@test "offline: auto-reset reports the ended episode and starts the next" {
	# Catch: the ball reaches the bottom after 9 steps; the episode ends with +1 or -1.
	seq 12 | sed 's/.*/1/' | seed-actor --env catch --envs 1 --actions - --out "$D/c.msgpack" --quiet
	run sh -c "seed-cat '$D/c.msgpack' | jq -c 'select(.terminated.data[0] == 1) | [.seq, .ep_length.data[0], (.ep_return.data[0] | fabs)]'"
	assert_success
	assert_output '[9,9,1]'
}

@test "SIGTERM and SIGINT stop a serving actor cleanly" {
	seed-infer --bind "ipc://$D/infer" --policy random --stats-interval 0 --quiet &
	infer=$!
	seed-actor --env cartpole --envs 8 --connect "ipc://$D/infer" --quiet &
	actor=$!
	PIDS="$infer $actor"
	wait_for_handler $actor 15
	wait_for_handler $infer 2
	sleep 0.3
	kill -TERM $actor
	st=0
	wait $actor || st=$?
	[ "$st" -eq 0 ]
	kill -INT $infer
	st=0
	wait $infer || st=$?
	[ "$st" -eq 0 ]
}

@test "a half left unanswered is resent every --retry-ms while the other half is served" {
	# Counts of resends and stats lines per interval of time: valgrind
	# slows the actor many times over.
	[ "${SEED_VALGRIND:-0}" != 1 ] || skip "timing-dependent; the actor runs too slowly under valgrind"
	# The server answers the first half (env0 0) at once and never the
	# second: the quick replies keep the actor busy, and the second half's
	# request must still be resent every 200 ms (about 7 times in 1.5 s).
	half_server "ipc://$D/half" 1.5 >"$D/counts" &
	srv=$!
	seed-actor --env cartpole --envs 4 --connect "ipc://$D/half" --retry-ms 200 --quiet &
	actor=$!
	wait "$srv"
	kill -TERM "$actor"
	wait "$actor" || true
	cat "$D/counts"
	read -r _ answered _ ignored <"$D/counts"
	[ "$answered" -gt 20 ]
	[ "$ignored" -ge 4 ]
}

@test "--stats-interval reports resends and the unanswered half while the actor runs; a resend is said once" {
	# Counts of resends and stats lines per interval of time: valgrind
	# slows the actor many times over.
	[ "${SEED_VALGRIND:-0}" != 1 ] || skip "timing-dependent; the actor runs too slowly under valgrind"
	# As above: half 0 (envs 0..1) answered at once, half 1 (envs 2..3)
	# never; a resend every 200 ms, a stats line every 300 ms, for 1.5 s.
	half_server "ipc://$D/half" 1.5 >/dev/null &
	srv=$!
	seed-actor --env cartpole --envs 4 --connect "ipc://$D/half" --retry-ms 200 --stats-interval 0.3 \
		--quiet 2>"$D/err" &
	actor=$!
	PIDS="$srv $actor"
	wait "$srv"
	kill -TERM "$actor"
	wait "$actor"
	cat "$D/err"
	# Four lines or more while it ran (not only at exit); while the server
	# ran, half 1 unanswered (both once it is gone) and half 0 stepping;
	# resends counted as they go.
	[ "$(grep -c ' env steps/s, ' "$D/err")" -ge 4 ]
	grep ' env steps/s, ' "$D/err" | head -n 3 | grep -q ' resends, 1 halves unanswered$'
	counts=$(grep ' env steps/s, ' "$D/err" | sed -n 's/.* \([0-9]*\) resends, .*/\1/p')
	first=$(head -n 1 <<<"$counts")
	last=$(tail -n 1 <<<"$counts")
	[ "$last" -gt "$first" ]
	[ "$last" -ge 4 ]
	# The first resend is said, naming the half; the next ones within ten
	# seconds are not.
	grep -q "no answer from ipc://$D/half for [0-9.]* s: resending the request of envs 2..3 (seq 0); 1 resends so far" "$D/err"
	[ "$(grep -c 'no answer from' "$D/err")" -eq 1 ]
	# The exit line counts every resend, those after the last stats line too.
	total=$(sed -n 's/.*: resent \([0-9]*\) unanswered requests$/\1/p' "$D/err")
	[ "$total" -ge "$last" ]
}

@test "a misuse is one message and the short usage, on stderr only" {
	run --separate-stderr seed-actor --env cartpole --envs
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "seed-actor: --envs: needs a value (K)
usage: seed-actor --env NAME --envs K (--connect ENDPOINT | --actions FILE --out FILE) [OPTION]...
Try 'seed-actor --help' for more information." ]
	run --separate-stderr seed-actor --env cartpole --retry-ms 0 --connect ipc://x
	[ "$status" -eq 2 ]
	[[ "$stderr" == "seed-actor: --retry-ms: 0 is out of range [1, 3600000]"* ]]
}

@test "every program answers -h/--help and -V/--version alike" {
	for p in seed-actor seed-infer seed-learn seed-eval seed-cat seed-train; do
		echo "program: $p"
		run --separate-stderr "$p" --help
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$output" == "Usage: $p "* ]]
		long=$output
		run --separate-stderr "$p" -h
		[ "$status" -eq 0 ]
		[ "$output" = "$long" ]
		run --separate-stderr "$p" --version
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$output" =~ ^$p\ \(seed\)\ [0-9] ]]
		run --separate-stderr "$p" -V
		[ "$status" -eq 0 ]
		[[ "$output" =~ ^$p\ \(seed\)\ [0-9] ]]
	done
}
