#!/bin/sh
# tests/gpu/test_cuda.sh: make check's door to tests/gpu/test_cuda (TAP).
# Where no CUDA device is found (or CUDA is not built in) the program prints
# a TAP skip plan ("1..0 # SKIP why") and exits 77, which the TAP driver
# would count as an error: here that is the skip it says.
"${SEED_BUILDDIR:-.}/tests/gpu/test_cuda"
rc=$?
[ $rc -eq 77 ] && exit 0
exit $rc
