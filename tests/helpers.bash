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
