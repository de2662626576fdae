#!/usr/bin/env bats
# seed-gym with Box action spaces: Gymnasium's Pendulum-v1 stepped offline
# from a file of actions gives Gymnasium's own observations and rewards
# (tests/golden/gym_box.py replays the same actions in Gymnasium); the
# actions reach env.step as they were written, unclipped, in the space's
# dtype (an environment of gym_box.py's that shows what it was stepped
# with); malformed lines and replies are refused with what was wrong and
# where.  Without python3's gymnasium, numpy, pyzmq or msgpack they skip.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	export TMPDIR=$D
}

teardown() {
	for p in ${PIDS:-}; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$D"
}

@test "Pendulum-v1: --spec gives the Box and its bounds; every frame of an offline run is Gymnasium's own" {
	need_gym
	run --separate-stderr seed-gym --env gym:Pendulum-v1 --spec
	assert_success
	assert_output '{"env": "gym:Pendulum-v1", "obs_dtype": "f32", "obs_shape": [3], "action_space": "box", "num_actions": 1, "action_low": [-2.0], "action_high": [2.0], "max_steps": 200}'
	# Two envs, one torque each: inside the bounds [-2, 2], at them, just
	# past them (the float32 on either side of 2), far beyond; episodes
	# of 6 steps, so that two end truncated (final_obs) on the way.
	cat >"$D/actions" <<-EOF
		0.5 -1.25
		2 -2
		2.00000024 -1.99999988
		3.7 -1e6
		1e-3 0.1
		-0.333333343 1.5
		1000000 -2.5
		0 -0
		1.75 0.25
		-2 2
		0.1 0.2
		0.3 0.4
		-1.9 1.9
		5 -5
	EOF
	opts='{"max_episode_steps": 6}'
	seed-gym --env Pendulum-v1 --env-options "$opts" --envs 2 --seed 3 --actions "$D/actions" \
		--out "$D/frames" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/gym_box.py" compare Pendulum-v1 "$opts" 3 "$D/actions" "$D/frames"
	echo "$output"
	assert_success
	assert_output "15 frames equal"
	[ "$(seed-cat "$D/frames" | jq -s '[.[] | select(.final_obs != null)] | length')" -eq 2 ]
	# A different seed is another trajectory: the comparison can tell.
	run python3 "$SEED_SRCDIR/tests/golden/gym_box.py" compare Pendulum-v1 "$opts" 4 "$D/actions" "$D/frames"
	assert_failure
	assert_output --partial "frame 0: obs is "
}

@test "a Box's actions reach env.step as written (float32, unclipped, in the space's dtype); infinite bounds; other shapes are refused" {
	need_gym
	export PYTHONPATH="$SEED_SRCDIR/tests/golden${PYTHONPATH:+:$PYTHONPATH}"
	# BoxEcho-v0: three float64 actions in [-1, 1]; its observation is the
	# action it got (an episode ends where the first is above 100).
	printf '%s\n' '0.5 -1.25 3 1e30 -0 0.1' '200 0.999999 -1 1 1 1' '-1e-45 2e-38 7 0.2 0.3 0.4' \
		'0.1 0.2 0.3 0.4 0.5 0.6' >"$D/actions"
	seed-gym --env gym_box:BoxEcho-v0 --envs 2 --actions "$D/actions" --out "$D/frames" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/gym_box.py" compare gym_box:BoxEcho-v0 '{}' 0 "$D/actions" \
		"$D/frames"
	echo "$output"
	assert_success
	assert_output "5 frames equal"
	# Beyond the bounds, as they came: 3 and -1.25 are not clipped to 1, -1.
	[ "$(seed-cat "$D/frames" | jq -c 'select(.seq == 1) | [.obs.data[0], .action_low.data, .action_high.data]')" = \
		'[[0.5,-1.25,3],[-1,-1,-1],[1,1,1]]' ]
	# Infinite bounds (and one past float32's range): "inf" and "-inf" in
	# --spec's JSON; infinities in the frames, which Seed's decoder takes.
	run --separate-stderr seed-gym --env gym_box:BoxWide-v0 --spec
	assert_success
	assert_output '{"env": "gym:gym_box:BoxWide-v0", "obs_dtype": "f32", "obs_shape": [3], "action_space": "box", "num_actions": 3, "action_low": ["-inf", "-inf", 0.1], "action_high": ["inf", 5.0, 0.3], "max_steps": 0}'
	printf '%s\n' '-1e30 -1e30 7' '3.5 1e38 -0.25' >"$D/wide"
	seed-gym --env gym_box:BoxWide-v0 --actions "$D/wide" --out "$D/frames" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/gym_box.py" compare gym_box:BoxWide-v0 '{}' 0 "$D/wide" "$D/frames"
	assert_output "3 frames equal"
	[ "$(seed-cat "$D/frames" | jq -c 'select(.seq == 2) | [.action_low.data, .action_high.data, .obs.data[0]]')" = \
		'[["-inf","-inf",0.1],["inf",5,0.3],[3.5,1e+38,-0.25]]' ]
	run --separate-stderr seed-gym --env gym_box:BoxSquare-v0 --spec
	[ "$status" -eq 2 ]
	[ "$stderr" = "seed-gym: --env gym_box:BoxSquare-v0: its action space is Box(-1.0, 1.0, (2, 2), float64): seed-gym takes a Box of shape (A,) with 1 <= A <= 64" ]
}

@test "a malformed line of Box actions names the file, the line and what is wrong; nothing of it is stepped" {
	need_gym
	bad() {
		printf '0.5 1\n%s\n' "$1" >"$D/actions"
		run --separate-stderr seed-gym --env Pendulum-v1 --envs 2 --actions "$D/actions" --out "$D/frames" --quiet
		[ "$status" -eq 1 ]
		[ "$stderr" = "seed-gym: $D/actions:2: $2" ]
		# The first frame and line 1's only.
		[ "$(seed-cat "$D/frames" | jq -s 'length')" -eq 2 ]
	}
	bad '0.5' "expected 2 numbers (1 for each of 2 envs), not 1"
	bad '0.5 1 2' "expected 2 numbers (1 for each of 2 envs), not 3"
	bad '0.5 half' "'half' (number 2) is not a number"
	bad 'nan 1' "'nan' (number 1: action 0 of env 0) is not a finite float32"
	bad '1 -inf' "'-inf' (number 2: action 0 of env 1) is not a finite float32"
	bad '1 1e39' "'1e39' (number 2: action 0 of env 1) is not a finite float32"
}

@test "connected: f32 [K, A] actions from the server; a reply of another shape or with NaN is refused and the request resent" {
	need_gym
	export PYTHONPATH="$SEED_SRCDIR/tests/golden${PYTHONPATH:+:$PYTHONPATH}"
	# A server that answers each request first with an i32 [K] action (the
	# wrong kind), then an f32 [K, A] holding a NaN, then the right one,
	# 0.75 * (seq + 1) everywhere; seed-gym warns of the first two and
	# resends.  BoxEcho-v0's observations show the actions that reached it.
	cat >"$D/server.py" <<-'EOF'
		import sys, msgpack, numpy as np, zmq
		s = zmq.Context().socket(zmq.ROUTER)
		s.bind(sys.argv[1])
		tries, good = {}, []
		while len(good) < 4:
		    peer, raw = s.recv_multipart()
		    f = msgpack.unpackb(raw, raw=False)
		    key = (f["env0"], f["seq"])
		    n = tries[key] = tries.get(key, 0) + 1
		    k, a = f["obs"]["shape"][0], f["num_actions"]
		    obs = np.frombuffer(f["obs"]["data"], "<f4")
		    if n == 1:
		        act = {"dtype": "i32", "shape": [k], "data": bytes(4 * k)}
		    else:
		        x = np.full((k, a), 0.75 * (f["seq"] + 1), "<f4")
		        if n == 2:
		            x[1, 0] = np.nan
		        act = {"dtype": "f32", "shape": [k, a], "data": x.tobytes()}
		    if n == 3:
		        good.append([f["env0"], f["seq"], float(obs.min()), float(obs.max())])
		    s.send_multipart([peer, msgpack.packb({"type": "action", "version": 1, "run": f["run"],
		        "actor": f["actor"], "seq": f["seq"], "env0": f["env0"], "policy_version": 0,
		        "action": act}, use_bin_type=True)])
		print(sorted(good))
	EOF
	python3 "$D/server.py" "ipc://$D/s" >"$D/served" &
	PIDS=$!
	run --separate-stderr seed-gym --env gym_box:BoxEcho-v0 --envs 4 --steps 2 --connect "ipc://$D/s" \
		--retry-ms 100 --quiet
	echo "$stderr"
	assert_success
	wait $PIDS
	cat "$D/served"
	# Seq 1's observations are seq 0's actions, 0.75.
	[ "$(cat "$D/served")" = "[[0, 0, 0.0, 0.0], [0, 1, 0.75, 0.75], [2, 0, 0.0, 0.0], [2, 1, 0.75, 0.75]]" ]
	[[ "$stderr" == *"seed-gym: reply for envs 0.. is not an f32 [2, 3] action tensor"* ]]
	[[ "$stderr" == *"seed-gym: reply for envs 2.. is not an f32 [2, 3] action tensor"* ]]
	[[ "$stderr" == *"seed-gym: reply for envs 0..: action 0 of env 1 is nan, not a finite number"* ]]
	[[ "$stderr" == *"seed-gym: reply for envs 2..: action 0 of env 3 is nan, not a finite number"* ]]
}

@test "MuJoCo's Hopper-v5: torques beyond the bounds; every frame is Gymnasium's own; MuJoCo's warnings on stderr" {
	need_python "scripts/install-deps" gymnasium numpy zmq:pyzmq msgpack mujoco imageio
	# Two envs of three torques each, swinging to 2.5 (the bounds are
	# [-1, 1]: MuJoCo clamps the control, but Hopper's control cost is
	# charged on the action as given, so a clipped action would change
	# every reward); the hopper falls, so episodes end terminated.
	awk 'BEGIN { for (t = 1; t <= 60; t++) { for (j = 0; j < 6; j++)
		printf "%s%.6g", j ? " " : "", 2.5 * sin(0.37 * t * (j + 1) + j); print "" } }' >"$D/actions"
	seed-gym --env Hopper-v5 --envs 2 --seed 5 --actions "$D/actions" --out "$D/frames" --quiet
	run python3 "$SEED_SRCDIR/tests/golden/gym_box.py" compare Hopper-v5 '{}' 5 "$D/actions" "$D/frames"
	echo "$output"
	assert_success
	assert_output "61 frames equal"
	[ "$(seed-cat "$D/frames" | jq -s '[.[] | .terminated.data[]] | add')" -ge 2 ]
	[ "$(seed-cat "$D/frames" | jq -c 'select(.seq == 0) | [.num_actions, .action_low.data, .action_high.data]')" = \
		'[3,[-1,-1,-1],[1,1,1]]' ]
	# MuJoCo's warnings (mujoco 4 has one for HalfCheetah's model) go to
	# stderr as seed-gym's, not into MUJOCO_LOG.TXT in the working directory.
	cd "$D"
	run --separate-stderr seed-gym --env HalfCheetah-v5 --spec
	assert_success
	assert_output '{"env": "gym:HalfCheetah-v5", "obs_dtype": "f32", "obs_shape": [17], "action_space": "box", "num_actions": 6, "action_low": [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0], "action_high": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], "max_steps": 1000}'
	[ ! -e "$D/MUJOCO_LOG.TXT" ]
	[ -z "$stderr" ] || [[ "$stderr" == "seed-gym: MuJoCo: "* ]]
}
