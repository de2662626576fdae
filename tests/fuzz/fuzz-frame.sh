#!/bin/sh
# tests/fuzz/fuzz-frame.sh: make check's bounded libFuzzer run of tests/fuzz/fuzz_frame.c
# (tests/fuzz/fuzz.sh builds and runs it; SEED_FUZZ_TIME=600 for a longer run).
exec sh "$(dirname "$0")/fuzz.sh" frame
