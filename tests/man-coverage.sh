#!/bin/sh
# tests/man-coverage.sh: the manuals keep up with the code (TAP).
#
# 1. Every function declared in lib/seed/*.h is named in the NAME or
#    SYNOPSIS section of some man/*.3 page (one test per header).
# 2. Every page in man/ is installed (listed in Makefile.am's dist_man_MANS).
# 3. Every reference to a Seed page, NAME(N) with NAME starting with "seed",
#    names a page that exists in man/.
# 4. Every page renders without warnings: groff with tbl, the warnings man(1)
#    shows with --warnings, at man's line length for an 80-column terminal
#    (skipped when groff is not installed).
# 5. Every section 1 page has an EXAMPLES section with at least one example
#    marked to run as a test (a '.\" test' comment: tests/man-examples.sh).
set -u
top=${SEED_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-coverage.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

headers=$(ls "$top"/lib/seed/*.h)
pages=$(ls "$top"/man/*.[1-9])
count=$(($(echo "$headers" | wc -l) + 3 * $(echo "$pages" | wc -l) + $(ls "$top"/man/*.1 | wc -l)))
echo "1..$count"

# The NAME and SYNOPSIS sections of every section 3 page, one word a line.
for p in "$top"/man/*.3; do
	awk '/^\.SH/ { keep = ($2 == "NAME" || $2 == "SYNOPSIS") } keep' "$p"
done | tr -c 'A-Za-z0-9_' '\n' | sort -u >"$tmp/documented"

# Functions a header declares: names followed by "(" outside comments.
for h in $headers; do
	name=seed/$(basename "$h")
	awk '
		{
			line = $0; out = ""
			while (line != "") {
				if (incomment) {
					i = index(line, "*/")
					if (i == 0) { line = ""; break }
					line = substr(line, i + 2); incomment = 0
				} else {
					i = index(line, "/*")
					if (i == 0) { out = out line; line = ""; break }
					out = out substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1
				}
			}
			print out
		}' "$h" | grep -o 'seed_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u >"$tmp/declared"
	missing=$(comm -23 "$tmp/declared" "$tmp/documented" | tr '\n' ' ')
	total=$(wc -l <"$tmp/declared")
	if [ -z "$missing" ]; then
		ok "$name: all $total declared functions are named by man/*.3 pages"
	else
		not_ok "$name: not in any man/*.3 page: $missing"
	fi
done

# Pages installed: the names after dist_man_MANS in Makefile.am.
awk '{ line = line $0 } /\\$/ { sub(/\\$/, "", line); next } { print line; line = "" }' "$top/Makefile.am" |
	grep '^dist_man_MANS' | tr ' \t' '\n\n' | grep '^man/' >"$tmp/installed"

if command -v groff >/dev/null 2>&1; then
	have_groff=1
else
	have_groff=0
fi

for p in $pages; do
	rel=man/$(basename "$p")
	if grep -qx "$rel" "$tmp/installed"; then
		ok "$rel is installed (dist_man_MANS)"
	else
		not_ok "$rel is not in any dist_man_MANS of Makefile.am"
	fi

	# References such as ".BR seed_env (3)" or "\fBseed-cat\fR(1)".
	refs=$({
		grep -o '^\.BR seed[-_a-z0-9]* ([1-9])' "$p" | sed 's/^\.BR \(.*\) (\(.\))$/\1.\2/'
		grep -o '\\fBseed[-_a-z0-9]*\\fR([1-9])' "$p" | sed 's/^\\fB\(.*\)\\fR(\(.\))$/\1.\2/'
	} | sort -u)
	dangling=""
	for r in $refs; do
		[ -f "$top/man/$r" ] || dangling="$dangling $r"
	done
	if [ -z "$dangling" ]; then
		ok "$rel: its references to Seed pages resolve"
	else
		not_ok "$rel: no such page:$dangling"
	fi

	if [ $have_groff = 0 ]; then
		skip "$rel renders without warnings (groff is not installed)"
		continue
	fi
	# man(1) at MANWIDTH=80 sets a line length of 78n.
	if groff -t -man -ww -z -Tutf8 -rLL=78n "$p" >"$tmp/warnings" 2>&1 && [ ! -s "$tmp/warnings" ]; then
		ok "$rel renders without warnings"
	else
		not_ok "$rel renders with warnings: $(tr '\n' ' ' <"$tmp/warnings")"
	fi
done

for p in "$top"/man/*.1; do
	rel=man/$(basename "$p")
	marked=$(awk '/^\.SH/ { ex = ($2 == "EXAMPLES") } ex && /^\.\\" test[ \t]*$/ { n++ } END { print n + 0 }' "$p")
	if [ "$marked" -gt 0 ]; then
		ok "$rel: $marked of its examples run as tests"
	else
		not_ok "$rel: no example in EXAMPLES is marked '.\\\" test' (tests/man-examples.sh)"
	fi
done
