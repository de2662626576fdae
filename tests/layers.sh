#!/bin/sh
# tests/layers.sh: libseed's layers, checked.  Every source under lib/LAYER/
# (and envs/, the built-in environments) may include the public headers of its
# own layer and of the layers it is built on, and no others; doc/design.md
# draws the same picture.  A header <seed/x.h> belongs to the layer whose
# directory holds lib/LAYER/x.c (or to the layer named in the table below for
# the few headers whose code is spread over other files).  TAP, one test per
# source file.
set -u
src=${SEED_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}

# What each layer may use (itself included).
allowed() {
	case $1 in
	core) echo "core" ;;
	proto) echo "core proto" ;;
	net) echo "core proto net" ;;
	env) echo "core env" ;;
	envs) echo "core env" ;;
	nn) echo "core nn" ;;
	io) echo "core nn io" ;;
	rl) echo "core proto net env nn io rl" ;;
	*) echo "" ;;
	esac
}

# The layer of a public header's name (without .h).
layer_of() {
	case $1 in
	nn) echo nn ;; # lib/nn/model.c and lib/nn/cpu.c
	esac
	for d in "$src"/lib/*/; do
		if [ -f "$d$1.c" ]; then
			basename "$d"
			return
		fi
	done
}

files=$(cd "$src" && ls lib/*/*.c lib/*/*.h envs/*.c envs/*.h 2>/dev/null | grep -v '^lib/seed/')
n=$(echo "$files" | wc -l)
echo "1..$n"
i=0
for f in $files; do
	i=$((i + 1))
	dir=$(dirname "$f")
	case $dir in
	envs) layer=envs ;;
	*) layer=$(basename "$dir") ;;
	esac
	ok=$(allowed "$layer")
	bad=""
	for h in $(sed -n 's/^#include "seed\/\([a-z_]*\)\.h".*/\1/p; s/^#include <seed\/\([a-z_]*\)\.h>.*/\1/p' "$src/$f"); do
		hl=$(layer_of "$h" | head -n 1)
		if [ -z "$hl" ]; then
			bad="$bad seed/$h.h (a header of no layer: add it to tests/layers.sh)"
			continue
		fi
		case " $ok " in
		*" $hl "*) ;;
		*) bad="$bad seed/$h.h ($hl)" ;;
		esac
	done
	if [ -z "$bad" ]; then
		echo "ok $i - $f ($layer) uses only: $ok"
	else
		echo "not ok $i - $f ($layer) includes a header of a layer above it or beside it:$bad"
	fi
done
