# tests/helpers.bash: shared setup for the .bats command-line tests.
# The programs under test come first on PATH (set by `make check`); running a
# .bats file by hand from the build directory works too.
#
# With SEED_VALGRIND=1 every Seed program a test runs by name (seed-train's
# children too) runs under valgrind --leak-check=full, which exits 99 on a
# memory error or a definite leak, so the test fails:
#   SEED_VALGRIND=1 make check TESTS='tests/seed-cat.bats'
# SEED_VALGRIND_OPTS adds valgrind options.
load_helpers() {
	if [ -z "${SEED_BUILDDIR:-}" ]; then
		SEED_BUILDDIR=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
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

# wait_for_handler PID SIGNUM: wait (10 s at most) until process PID has
# installed a handler for signal SIGNUM.  A background job of a script starts
# with SIGINT ignored; a signal sent before the program installs its handler
# would be lost (or, for SIGTERM, kill it before it can clean up).
wait_for_handler() {
	local pid=$1 sig=$2 i mask
	for i in $(seq 100); do
		mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
		if [ -n "$mask" ] && [ $(((0x$mask >> (sig - 1)) & 1)) -eq 1 ]; then
			return 0
		fi
		sleep 0.1
	done
	echo "process $pid never caught signal $sig" >&2
	return 1
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
