# tests/helpers.bash: shared setup for the .bats command-line tests.
# The programs under test come first on PATH (set by `make check`); running a
# .bats file by hand from the build directory works too.
load_helpers() {
	if [ -z "${SEED_BUILDDIR:-}" ]; then
		SEED_BUILDDIR=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
		SEED_SRCDIR=$SEED_BUILDDIR
		PATH="$SEED_BUILDDIR/cmd:$PATH"
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
