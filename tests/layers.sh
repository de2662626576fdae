#!/bin/sh
# tests/layers.sh: libseed's folders and what each may include, checked.
#
# Every include of every source and header under lib/ (and envs/, the
# built-in environments, and cmd/, the programs) is read, quoted or angled:
#   - a public header <seed/x.h> (or "seed/x.h") belongs to the folder whose
#     directory holds lib/FOLDER/x.c (or to the folder the table below names
#     for the few headers whose code is spread over other files), and a
#     folder may use its own and those of the folders below it (allowed());
#     nothing reaches up or sideways;
#   - any other quoted include is a private header: it must be a file in the
#     including file's own folder ("model_internal.h", not
#     "nn/model_internal.h"; lib/env and envs/, the classes it is built
#     with, are one folder here);
#   - <zmq.h> only in lib/net (every socket goes through seed/chan.h) and
#     <msgpack.h> only in lib/proto (every frame through seed/frame.h);
#     the programs in cmd/ may use any public header.
# doc/design.md draws the same picture.  TAP, one test per file.
#
# SEED_SRCDIR names the tree to check (the test of this test runs it on a
# copy with a bad include put in: tests/layers-mutation.sh).
set -u
src=${SEED_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}

# What each folder may use (itself included), from the bottom up.
# env uses proto for one reason: a Gymnasium environment lives in another
# process, seed-gym(1), which answers in step frames (seed-frames(7)), so
# lib/env/env_gym.c reads them with seed/frame.h; the built-in classes
# (envs/) stay on core.
allowed() {
	case $1 in
	core) echo "core" ;;
	proto) echo "core proto" ;;
	net) echo "core proto net" ;;
	env) echo "core proto env" ;;
	envs) echo "core env" ;;
	nn) echo "core nn" ;;
	io) echo "core nn io" ;;
	rl) echo "core proto nn io rl" ;;
	replay) echo "core proto net nn io rl replay" ;;
	evo) echo "core proto env nn io rl evo" ;;
	serve) echo "core proto net env nn io rl evo serve" ;;
	learn) echo "core proto net env nn io rl replay evo learn" ;;
	cmd) echo "core proto net env nn io rl replay evo serve learn" ;;
	*) echo "" ;;
	esac
}

# Known exceptions, each with its reason, as "FILE HEADER-FOLDER" (none
# now: the last, nn's population building its members from evo's
# generations, went when the building moved to lib/evo/population.c over
# nn's seed/popnet.h).
exceptions=""

# The folder of a public header's name (without .h).
layer_of() {
	case $1 in
	nn) echo nn && return ;;       # lib/nn/model.c and lib/nn/cpu.c
	bytes) echo core && return ;;  # static inline: core's byte layouts
	esac
	for d in "$src"/lib/*/; do
		if [ -f "$d$1.c" ]; then
			basename "$d"
			return
		fi
	done
}

files=$(cd "$src" && ls lib/*/*.c lib/*/*.h lib/*/*.cu envs/*.c envs/*.h cmd/*.c cmd/*.h 2>/dev/null)
n=$(echo "$files" | wc -l)
echo "1..$n"
i=0
for f in $files; do
	i=$((i + 1))
	dir=$(dirname "$f")
	case $dir in
	envs | cmd) layer=$dir ;;
	lib/seed)
		layer=$(layer_of "$(basename "$f" .h)")
		[ -n "$layer" ] || layer=unknown
		;;
	*) layer=$(basename "$dir") ;;
	esac
	ok=$(allowed "$layer")
	bad=""
	if [ -z "$ok" ]; then
		bad=" the folder $layer has no place in tests/layers.sh"
	fi
	# Every include line: its kind (" or <) and its name.
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\(["<][^">]*[">]\).*/\1/p' "$src/$f" | tr -d '>"' | sed 's/^</angle:/; s/^\([^a]\)/quote:\1/'); do
		kind=${inc%%:*}
		name=${inc#*:}
		case $name in
		seed/*.h)
			h=$(basename "$name" .h)
			hl=$(layer_of "$h" | head -n 1)
			if [ -z "$hl" ]; then
				bad="$bad $name (a header of no folder: add it to tests/layers.sh)"
				continue
			fi
			case " $ok " in
			*" $hl "*) ;;
			*)
				case " $exceptions " in
				*" $f:$hl "*) ;;
				*) bad="$bad $name ($hl, above or beside $layer)" ;;
				esac
				;;
			esac
			;;
		zmq.h)
			[ "$layer" = net ] || bad="$bad <zmq.h> (only lib/net talks to ZeroMQ: use seed/chan.h)"
			;;
		msgpack.h)
			[ "$layer" = proto ] || bad="$bad <msgpack.h> (only lib/proto reads msgpack: use seed/frame.h)"
			;;
		*)
			if [ "$kind" = quote ]; then
				case $layer:$name in
				env:../../envs/*.h) ;; # the built-in classes are env's own (envs/builtin.h)
				*/*) bad="$bad \"$name\" (a private header of another folder)" ;;
				*) [ -f "$src/$dir/$name" ] || [ "$name" = config.h ] ||
					bad="$bad \"$name\" (not a header of $dir)" ;;
				esac
			fi
			;;
		esac
	done
	if [ -z "$bad" ]; then
		echo "ok $i - $f ($layer) uses only: $ok"
	else
		echo "not ok $i - $f ($layer) includes what it may not:$bad"
	fi
done
