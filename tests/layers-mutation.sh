#!/bin/sh
# tests/layers-mutation.sh: tests/layers.sh fails when it should (TAP).
# On a copy of the tree's lib/, envs/ and cmd/, first unchanged (every file
# passes), then with one bad include put into one file at a time: the check
# must fail that file, naming the include, and pass every other.
set -u
top=${SEED_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers-mutation.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# FILE|INCLUDE LINE|what the check must say
mutations='lib/serve/serve.c|#include "nn/model_internal.h"|a private header of another folder
lib/evo/evo.c|#include "../nn/nn_kernels.h"|a private header of another folder
cmd/seed-eval.c|#include "../lib/nn/model_internal.h"|a private header of another folder
lib/nn/model.c|#include "seed/serve.h"|seed/serve.h (serve, above or beside nn)
lib/core/buf.c|#include <seed/frame.h>|seed/frame.h (proto, above or beside core)
lib/replay/replay.c|#include <seed/agent.h>|seed/agent.h (serve, above or beside replay)
lib/seed/unroll.h|#include "seed/learner.h"|seed/learner.h (learn, above or beside rl)
lib/rl/unroll.c|#include <zmq.h>|<zmq.h> (only lib/net
cmd/seed-cat.c|#include <zmq.h>|<zmq.h> (only lib/net
lib/io/metrics.c|#include <msgpack.h>|<msgpack.h> (only lib/proto'
count=$(($(echo "$mutations" | wc -l) + 1))
echo "1..$count"

fresh() {
	rm -rf "$tmp/tree" && mkdir "$tmp/tree" && cp -R "$top/lib" "$top/envs" "$top/cmd" "$tmp/tree/"
}
check() { SEED_SRCDIR="$tmp/tree" sh "$top/tests/layers.sh" >"$tmp/out" 2>&1; }

n=1
fresh
check
if grep -q '^not ok' "$tmp/out" || ! grep -q '^ok' "$tmp/out"; then
	echo "not ok 1 - the unchanged tree passes: $(grep '^not ok' "$tmp/out" | head -n 3)"
else
	echo "ok 1 - the unchanged tree passes ($(grep -c '^ok' "$tmp/out") files)"
fi

echo "$mutations" | while IFS='|' read -r file line says; do
	n=$((n + 1))
	fresh
	# After the file's first line, so that it is read as any include is.
	sed -i "1a $line" "$tmp/tree/$file"
	check
	failed=$(grep '^not ok' "$tmp/out")
	if [ "$(echo "$failed" | grep -c .)" -ne 1 ]; then
		echo "not ok $n - $file with $line: expected exactly one failing file, got: $failed"
	elif ! echo "$failed" | grep -q -- "- $file " || ! echo "$failed" | grep -qF -- "$says"; then
		echo "not ok $n - $file with $line: expected '$says' for $file, got: $failed"
	else
		echo "ok $n - $file with $line fails: $says"
	fi
done
