# tests/cli/helpers.bash: shared setup for the .bats command-line tests.
# The programs under test come first on PATH (set by `make check`); running a
# .bats file by hand from the build directory works too.
#
# With SEED_VALGRIND=1 every Seed program a test runs by name (seed-train's
# children too) runs under valgrind --leak-check=full, which exits 99 on a
# memory error or a definite leak, so the test fails:
#   SEED_VALGRIND=1 make check TESTS='tests/cli/seed-cat.bats'
# SEED_VALGRIND_OPTS adds valgrind options.
load_helpers() {
	if [ -z "${SEED_BUILDDIR:-}" ]; then
		SEED_BUILDDIR=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
		SEED_SRCDIR=$SEED_BUILDDIR
		PATH="$SEED_BUILDDIR/cmd:$PATH"
	fi
	if [ "${SEED_VALGRIND:-0}" = 1 ]; then
		valgrind_wrappers
	fi
	for d in /usr/lib/bats /usr/lib/bats-core; do
		if [ -f "$d/bats-support/load.bash" ]; then
			load "$d/bats-support/load.bash"
			load "$d/bats-assert/load.bash"
			break
		fi
	done
}

# wait_for_handler PID SIGNUM: wait (10 s at most, 60 under valgrind) until
# process PID has installed a handler for signal SIGNUM.  A background job of a
# script starts with SIGINT ignored; a signal sent before the program installs
# its handler would be lost (or, for SIGTERM, kill it before it can clean up).
# Under valgrind the process catches every signal from its start (valgrind
# does, for its guest), so SigCgt says nothing there: a Seed program's handlers
# are in place once SIGINT is no longer ignored (cli_catch_signals installs
# SIGTERM's first, then SIGINT's).
wait_for_handler() {
	local pid=$1 sig=$2 i mask ign tries=100
	[ "${SEED_VALGRIND:-0}" != 1 ] || tries=600
	for i in $(seq $tries); do
		mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
		ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
		if [ -n "$mask" ] && [ $(((0x$mask >> (sig - 1)) & 1)) -eq 1 ] &&
			{ [ "${SEED_VALGRIND:-0}" != 1 ] || [ $(((0x$ign >> 1) & 1)) -eq 0 ]; }; then
			return 0
		fi
		sleep 0.1
	done
	echo "process $pid never caught signal $sig" >&2
	return 1
}

# need_python HINT MODULE[:PACKAGE]...: skip the test unless python3 (which
# runs seed-gym) can import every MODULE, naming the first missing package
# (PACKAGE: its name on PyPI where that is not the module's) and HINT, what
# installs it.
need_python() {
	local hint=$1 m
	shift
	command -v python3 >/dev/null || skip "no python3 to run seed-gym with"
	for m in "$@"; do
		python3 -c "import ${m%%:*}" 2>/dev/null ||
			skip "python3 lacks the ${m#*:} package ($hint installs it)"
	done
}

# What seed-gym needs (need_gym), with Atari (need_ale), with Google Research
# Football (need_football: gfootball and its gym 0.21), and to draw
# Gymnasium's classic-control environments (need_gym_render: pygame).
need_gym() {
	need_python scripts/install-deps gymnasium numpy zmq:pyzmq msgpack
}
need_ale() {
	need_python "scripts/install-deps --atari" gymnasium numpy zmq:pyzmq msgpack ale_py:ale-py \
		cv2:opencv-python-headless
}
need_envpool() {
	need_python "pip install envpool; scripts/install-deps --envpool" gymnasium numpy zmq:pyzmq msgpack envpool
}
need_football() {
	need_python "scripts/install-deps --football" gymnasium numpy zmq:pyzmq msgpack gym gfootball.env:gfootball
}
need_gym_render() {
	need_python scripts/install-deps gymnasium numpy zmq:pyzmq msgpack pygame
}

# start_topology: seed-infer (unrolls of 16 steps) and one seed-actor of 32
# CartPole envs in the background, their pids in PIDS (the test's teardown
# kills them); learners connect to ipc://$D/unrolls and publish on
# ipc://$D/params.
start_topology() {
	seed-infer --bind "ipc://$D/infer" --model "ipc://$D/params" --unrolls "ipc://$D/unrolls" \
		--unroll-length 16 --stats-interval 0 --quiet &
	PIDS="$!"
	seed-actor --env cartpole --envs 32 --connect "ipc://$D/infer" --quiet &
	PIDS="$PIDS $!"
}

# Wrappers named after the programs, first on PATH, that run the real ones
# (through libtool, which finds the binaries behind its wrapper scripts)
# under valgrind.
valgrind_wrappers() {
	local dir="$BATS_TEST_TMPDIR/valgrind-bin" prog name
	mkdir -p "$dir"
	for prog in "$SEED_BUILDDIR"/cmd/seed-*; do
		name=$(basename "$prog")
		case $name in *.* | seed-train) continue ;; esac
		[ -x "$prog" ] || continue
		cat >"$dir/$name" <<WRAP
#!/bin/sh
exec "$SEED_BUILDDIR/libtool" --mode=execute valgrind --quiet --error-exitcode=99 --leak-check=full \\
	--errors-for-leak-kinds=definite --track-fds=no --suppressions="$SEED_SRCDIR/tests/valgrind.supp" \\
	\${SEED_VALGRIND_OPTS:-} "$prog" "\$@"
WRAP
		chmod +x "$dir/$name"
	done
	PATH="$dir:$PATH"
}
