#!/usr/bin/env bats
# The example environment plugin, examples/plugin/ (Gymnasium's
# MountainCar-v0): built out of the tree as its README says, with pkg-config
# answering from the build tree (lib/seed-uninstalled.pc) and with nothing
# but the headers make install installs; loaded by seed-eval, seed-actor and
# seed-train, by PATH.so:NAME and through SEED_ENV_PATH; its trajectories
# checked step for step against the gymnasium package
# (tests/golden/mountaincar_ref.py), skipped, saying so, without it.

setup_file() {
	# One build of the plugin for every test, the way a user makes it.
	export PLUGIN_DIR="$BATS_FILE_TMPDIR/plugin"
	mkdir -p "$PLUGIN_DIR"
	local src=${SEED_SRCDIR:-$BATS_TEST_DIRNAME/../..} build=${SEED_BUILDDIR:-$BATS_TEST_DIRNAME/../..}
	cp "$src/examples/plugin/mountaincar.c" "$src/examples/plugin/Makefile" "$PLUGIN_DIR/"
	PKG_CONFIG_PATH="$build/lib" MAKEFLAGS= make -C "$PLUGIN_DIR" >"$PLUGIN_DIR/build.log" 2>&1 || true
}

setup() {
	load helpers
	load_helpers
	D=$(mktemp -d)
	SO="$PLUGIN_DIR/mountaincar.so"
}

teardown() {
	rm -rf "$D"
}

need_gymnasium() {
	command -v python3 >/dev/null || skip "no python3 to run Gymnasium with"
	python3 -c 'import gymnasium' 2>/dev/null ||
		skip "the gymnasium Python package is missing (pip install gymnasium; scripts/install-deps)"
}

@test "the example builds out of tree with pkg-config seed against the build tree, warning-free" {
	cat "$PLUGIN_DIR/build.log"
	[ -f "$SO" ]
	run grep -i warning "$PLUGIN_DIR/build.log"
	[ "$status" -eq 1 ]
	# pkg-config answered from the build tree, not from an installed Seed.
	run env PKG_CONFIG_PATH="$SEED_BUILDDIR/lib" pkg-config --cflags --libs seed
	assert_output --partial "-I$SEED_SRCDIR/lib"
	assert_output --partial "-L$SEED_BUILDDIR/lib/.libs"
}

@test "the headers make install installs are all a plugin needs" {
	MAKEFLAGS= make -C "$SEED_BUILDDIR" install-seedincludeHEADERS DESTDIR="$D/inst" >/dev/null
	inc=$(find "$D/inst" -type d -name seed -path '*/include/seed')
	[ -f "$inc/env_plugin.h" ]
	run cc -std=c11 -Wall -Wextra -Wno-unused-parameter -fsyntax-only -I"$(dirname "$inc")" \
		$(pkg-config --cflags jansson) "$SEED_SRCDIR/examples/plugin/mountaincar.c"
	echo "$output"
	assert_success
}

@test "seed-eval plays it by PATH.so:NAME, by PATH.so and by SEED_ENV_PATH" {
	# A random policy never reaches the flag: every episode is truncated at 200.
	run seed-eval --env "$SO:mountaincar" --episodes 4 --seed 3
	assert_success
	[ "$(jq -c '[.return.mean, .length.max, .length.min]' <<<"$output")" = '[-200,200,200]' ]
	run seed-eval --env "$SO" --episodes 1
	assert_success
	SEED_ENV_PATH="/nonexistent:$PLUGIN_DIR" run seed-eval --env mountaincar --episodes 2
	assert_success
	[ "$(jq -r .env <<<"$output")" = mountaincar ]
	# From 0.49 at 0.02 a step the car passes 0.5 on the first step whatever
	# it does (velocity 0.02 - 0.001 - 0.0025 cos(1.47) > 0.018): return -1.
	run seed-eval --env "$SO:mountaincar" --env-options '{"init_state": [0.49, 0.02]}' --episodes 3
	assert_success
	[ "$(jq -c '[.return.mean, .length.mean]' <<<"$output")" = '[-1,1]' ]
	# Its own options are checked, and a missing plugin is named.
	run seed-eval --env "$SO:mountaincar" --env-options '{"init_state": [0.49]}' --episodes 1
	[ "$status" -ne 0 ]
	assert_output --partial 'mountaincar: option "init_state" must be an array of 2 numbers'
	run seed-eval --env "$D/none.so:mountaincar" --episodes 1
	[ "$status" -ne 0 ]
	assert_output --partial "$D/none.so: No such file"
}

@test "its trajectories are Gymnasium's MountainCar-v0, step for step (seed-actor offline)" {
	need_gymnasium
	# Several starts, five action sequences each (left, none, right, random,
	# pumping), 450 steps: truncations at 200, terminations at the flag, the
	# left wall, both speed limits.
	local total_term=0 total_trunc=0
	for init in "-0.5 0" "-1.19 -0.05" "0.45 0.03" "-0.3 0.07" "0.3 -0.07"; do
		set -- $init
		python3 "$SEED_SRCDIR/tests/golden/mountaincar_ref.py" actions "$1" "$2" 450 >"$D/actions"
		seed-actor --env "$SO:mountaincar" --env-options "{\"init_state\": [$1, $2]}" --envs 5 \
			--actions "$D/actions" --out "$D/steps.msgpack" --quiet
		run sh -c "seed-cat '$D/steps.msgpack' | python3 '$SEED_SRCDIR/tests/golden/mountaincar_ref.py' check $1 $2 '$D/actions'"
		echo "$output"
		assert_success
		assert_output --regexp '^ok: 2250 steps'
		total_term=$((total_term + $(sed -n 's/.*, \([0-9]*\) terminated.*/\1/p' <<<"$output")))
		total_trunc=$((total_trunc + $(sed -n 's/.* \([0-9]*\) truncated.*/\1/p' <<<"$output")))
	done
	# Both ends were exercised.
	[ "$total_term" -gt 0 ] && [ "$total_trunc" -gt 0 ]
}

@test "seed-train trains on it and seed-eval plays the checkpoint (SEED_ENV_PATH)" {
	export SEED_ENV_PATH="$PLUGIN_DIR"
	run seed-train "$SEED_SRCDIR/examples/plugin/mountaincar.json" --frames 30000 --dir "$D/run" --quiet \
		--set eval_episodes=5
	echo "$output"
	assert_success
	result=$(tail -n 1 <<<"$output") # the JSON line, after the programs' messages
	[ "$(jq -r .eval.env <<<"$result")" = mountaincar ]
	[ "$(jq '.eval.episodes' <<<"$result")" = 5 ]
	[ "$(jq '.eval.length.max <= 200 and .eval.return.max <= -1' <<<"$result")" = true ]
	[ "$(jq -r .env "$D/run/config.json")" = mountaincar ]
	# Without the search path the run's environment is not found, and the
	# message says where it looked.
	unset SEED_ENV_PATH
	run seed-eval --checkpoint "$D/run" --episodes 1
	[ "$status" -ne 0 ]
	assert_output --partial 'no environment called "mountaincar"'
	assert_output --partial SEED_ENV_PATH
}
