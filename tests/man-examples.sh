#!/usr/bin/env bash
# tests/man-examples.sh: the examples of the manuals run as tests (TAP).
#
# An example runs when a roff comment marks it.  The marker, and what it
# may say the example expects, come on comment lines just before the block
# (.EX ... .EE, or .nf ... .fi; requests such as .RS inside are dropped):
#
#   .\" test                 the next block is a test: it must exit 0
#   .\" expect: REGEX        some line of its output (stdout or stderr)
#                            matches the extended REGEX (repeatable)
#   .\" exit: N              it must exit N instead
#   .\" output               the block after it is its exact standard output
#   .\" timeout: SECONDS     how long it may run (default 120)
#   .\" run: COMMAND         (last) the test is COMMAND, not a block: for
#                            a program whose manual says in words how to
#                            build and run it
#   .\" file: NAME           not a test: the next block is saved as NAME in
#                            the scratch directory (a C program, a config)
#
# A block whose first line starts with "$ " is a transcript instead: each
# "$ " line (with its continuation lines) is a command, and the lines up to
# the next command are exactly what it prints, stdout and stderr together.
#
# The roff escapes \-, \e, \(aq, \(dq, \(ti, \(ha and \& are undone.  Each
# manual's examples run in order in one scratch directory of their own (an
# example may use what an earlier one made), with the programs under test on
# PATH, the presets of the source tree (SEED_PRESETS), pkg-config answering
# for "seed" with the headers and library of the tree, and every ipc:///tmp/
# endpoint moved into the scratch directory, so that runs in parallel never
# meet.  Each example runs in a session of its own: whatever it left running
# in the background is stopped when it ends.
#
# Usage: tests/man-examples.sh [MANUAL...]   (default: man/*.1 man/*.3)
# make check runs .sh tests with $(SHELL): this one needs bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
top=${SEED_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${SEED_BUILDDIR:-$top}
export PATH="$build/cmd:$top/cmd:$PATH"
export SEED_PRESETS="$top/examples/presets"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-examples.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if [ $# -gt 0 ]; then
	pages=("$@")
else
	pages=("$top"/man/*.1 "$top"/man/*.3)
fi

# `pkg-config --cflags --libs seed` for the tree under test, not an
# installed Seed: the headers of the sources, the library just built.  A
# library built with sanitizers (configure --enable-asan) needs their
# runtime in the programs linked to it: the build's -fsanitize flags go into
# Cflags and Libs too.
mkdir -p "$tmp/pkgconfig"
san=$(sed -n 's/^CFLAGS = //p' "$build/Makefile" 2>/dev/null | grep -o -- '-fsanitize=[^ ]*' | tr '\n' ' ')
sed -n '/^Name:/,$p' "$top/lib/seed.pc.in" |
	sed -e 's|^Version:.*|Version: 0|' -e "s|^Libs:.*|Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lseed $san|" \
		-e "s|^Cflags:.*|Cflags: -I\${includedir} $san|" -e 's|^Libs.private:.*||' >"$tmp/pkgconfig/seed.pc.body"
{
	echo "libdir=$build/lib/.libs"
	echo "includedir=$top/lib"
	cat "$tmp/pkgconfig/seed.pc.body"
} >"$tmp/pkgconfig/seed.pc"
export PKG_CONFIG_PATH="$tmp/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

# Split manual $1 into $2/ex.N.{sh,meta,out}: the script, its expectations
# (lines "expect RE", "exit N", "timeout S", "output"), its exact output;
# the blocks marked "file: NAME" go to $3/NAME.
extract() {
	awk -v dir="$2" -v files="$3" '
		function unescape(s) {
			gsub(/\\e/, "\001", s)
			gsub(/\\-/, "-", s)
			gsub(/\\\(aq/, "\047", s)
			gsub(/\\\(dq/, "\"", s)
			gsub(/\\\(ti/, "~", s)
			gsub(/\\\(ha/, "^", s)
			gsub(/\\&/, "", s)
			gsub(/\001/, "\\", s)
			return s
		}
		/^\.\\" test[ \t]*$/ { n++; pending = 1; meta = dir "/ex." n ".meta"; printf "" > meta; next }
		pending && /^\.\\" expect: / { sub(/^\.\\" expect: /, ""); print "expect " $0 > meta; next }
		pending && /^\.\\" exit: [0-9]+$/ { print "exit " $3 > meta; next }
		pending && /^\.\\" timeout: [0-9]+$/ { print "timeout " $3 > meta; next }
		pending && /^\.\\" output[ \t]*$/ { print "output" > meta; wantout = 1; next }
		pending && /^\.\\" run: / {
			sub(/^\.\\" run: /, "")
			print unescape($0) > (dir "/ex." n ".sh")
			pending = 0
			next
		}
		/^\.\\" file: [^ \/]+$/ { fname = $3; wantfile = 1; next }
		wantfile && /^\.(EX|nf)/ { inblock = 1; wantfile = 0; target = files "/" fname; printf "" > target; next }
		pending && /^\.(EX|nf)/ { inblock = 1; pending = 0; target = dir "/ex." n ".sh"; printf "" > target; next }
		waitout && /^\.(EX|nf)/ { inblock = 1; waitout = 0; target = dir "/ex." n ".out"; printf "" > target; next }
		inblock && /^\.(EE|fi)/ {
			inblock = 0
			if (wantout) { wantout = 0; waitout = 1 }
			next
		}
		inblock && /^\./ { next }
		inblock { print unescape($0) > target }
	' "$1"
}

# Run script $1 in directory $2 in a session of its own, for at most $3
# seconds; stdout to $4, stderr to $5; return its exit status.  Whatever it
# left in the background is stopped afterwards.
run_in_session() {
	local script=$1 dir=$2 limit=$3 out=$4 err=$5 status pgid
	(cd "$dir" && setsid sh -c 'echo $$ >"$1"; exec timeout -k 5 "$2" bash "$3"' sh \
		"$tmp/pgid" "$limit" "$script") </dev/null >"$out" 2>"$err"
	status=$?
	pgid=$(cat "$tmp/pgid" 2>/dev/null)
	if [ -n "$pgid" ]; then
		kill -TERM -- "-$pgid" 2>/dev/null && sleep 0.2
		kill -KILL -- "-$pgid" 2>/dev/null
	fi
	rm -f "$tmp/pgid"
	return $status
}

n=0
comment() { sed 's/^/# /'; }

# A transcript: commands after "$ " and what each prints.
run_transcript() {
	local ex=$1 dir=$2 limit=$3 i=0 cont=0 line ok=1
	rm -f "$tmp"/cmd.* "$tmp"/want.*
	while IFS= read -r line; do
		if [ $cont -eq 0 ] && [ "${line#\$ }" != "$line" ]; then
			i=$((i + 1))
			printf '%s\n' "${line#\$ }" >"$tmp/cmd.$i"
			: >"$tmp/want.$i"
		elif [ $cont -eq 1 ]; then
			printf '%s\n' "$line" >>"$tmp/cmd.$i"
		else
			printf '%s\n' "$line" >>"$tmp/want.$i"
		fi
		case $line in *\\) cont=1 ;; *) cont=0 ;; esac
	done <"$ex"
	for j in $(seq 1 $i); do
		run_in_session "$tmp/cmd.$j" "$dir" "$limit" "$tmp/got" "$tmp/got.err"
		cat "$tmp/got.err" >>"$tmp/got"
		if ! diff -u "$tmp/want.$j" "$tmp/got" >"$tmp/diff"; then
			ok=0
			{
				echo "\$ $(cat "$tmp/cmd.$j")"
				cat "$tmp/diff"
			} | comment
		fi
	done
	[ $ok -eq 1 ]
}

# A script, with what its meta file expects.
run_script() {
	local ex=$1 dir=$2 limit=$3 meta=$4 want=0 status ok=1 re
	if grep -q '^exit ' "$meta"; then
		want=$(sed -n 's/^exit //p' "$meta")
	fi
	run_in_session "$ex" "$dir" "$limit" "$tmp/out" "$tmp/err"
	status=$?
	if [ "$status" -ne "$want" ]; then
		ok=0
		echo "exit status $status, want $want" | comment
	fi
	cat "$tmp/out" "$tmp/err" >"$tmp/all"
	while IFS= read -r re; do
		if ! grep -Eq -- "$re" "$tmp/all"; then
			ok=0
			echo "no line of the output matches: $re" | comment
		fi
	done < <(sed -n 's/^expect //p' "$meta")
	if grep -qx output "$meta"; then
		if ! diff -u "${ex%.sh}.out" "$tmp/out" >"$tmp/diff"; then
			ok=0
			comment <"$tmp/diff"
		fi
	fi
	if [ $ok -eq 0 ]; then
		{
			echo "the example:"
			cat "$ex"
			echo "its output (the end):"
			tail -n 15 "$tmp/all"
		} | comment
	fi
	[ $ok -eq 1 ]
}

failed=0
for page in "${pages[@]}"; do
	name=$(basename "$page")
	man="${name%.*}(${name##*.})"
	work=$tmp/$name.d
	dir=$tmp/$name
	mkdir -p "$work" "$dir"
	extract "$page" "$work" "$dir"
	# In the page's order, by number (ex.10 after ex.9: the sort sees only
	# the numbers, not the paths, whose other dots would decide it).
	for num in $(cd "$work" && ls ex.*.meta 2>/dev/null | sed 's/^ex\.\([0-9]*\)\.meta$/\1/' | sort -n); do
		ex=$work/ex.$num.sh meta=$work/ex.$num.meta
		n=$((n + 1))
		if [ ! -s "$ex" ]; then
			echo "not ok $n - $man example $num: a marker without a block after it"
			failed=1
			continue
		fi
		first=$(grep -m1 -v '^[[:space:]]*$' "$ex")
		title="$man example $num: ${first#\$ }"
		title=${title:0:100}
		# Private ipc endpoints, so that parallel runs never meet.
		sed -i "s|ipc:///tmp/|ipc://$dir/|g" "$ex"
		limit=$(sed -n 's/^timeout //p' "$meta")
		limit=${limit:-120}
		if [ "${first#\$ }" != "$first" ]; then
			run_transcript "$ex" "$dir" "$limit" >"$tmp/why"
		else
			run_script "$ex" "$dir" "$limit" "$meta" >"$tmp/why"
		fi
		if [ $? -eq 0 ]; then
			echo "ok $n - $title"
		else
			echo "not ok $n - $title"
			cat "$tmp/why"
			failed=1
		fi
	done
done
# The plan comes last: the number of examples is known only now.
echo "1..$n"
exit $failed
