#!/bin/sh
# bench/evo-peers.sh: Seed's evolution strategies side by side with evosax, in
# one sitting.
#
#   bench/evo-peers.sh setup-evosax VENV
#       makes a Python virtual environment VENV with evosax, gymnax and jax
#       (and six, which gymnax imports without declaring it).
#   bench/evo-peers.sh cartpole VENV [SEEDS]
#       per seed (default 1 2 3 4 5), one after the other: evosax's Open_ES on
#       gymnax's CartPole-v1 until its centre's 100-episode greedy evaluation
#       reaches 475 (bench/peers/evosax_cartpole.py; PEER_ARGS="MAX_S POP LR
#       SIGMA" changes its settings, default "300 64 0.05 0.1"), then
#       `seed-train es-cartpole --seed S` (time of the whole command, its
#       100-episode greedy evaluation); then the medians.  PRESET=ga-cartpole
#       (or any preset) times another preset against the same peer.
#
# Run from the build directory; every figure is a wall time from a cold start.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SEED_BIN:-$top/cmd}
SEED_PRESETS=${SEED_PRESETS:-$top/examples/presets}
export SEED_PRESETS
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
what=$1 venv=$2
shift 2
py=$venv/bin/python3
preset=${PRESET:-es-cartpole}

median() { sort -g | awk '{a[NR]=$1} END {if (NR) printf "%.2f", (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\": *\\([-0-9.eE+]*\\).*/\\1/p" | head -1; }
retmean() { sed -n 's/.*"return": *{ *"mean": *\([-0-9.eE+]*\).*/\1/p'; }
now() { date +%s.%N; }

d=$(mktemp -d "${TMPDIR:-/tmp}/evo-peers.XXXXXX")
trap 'rm -rf "$d"' EXIT

case $what in
setup-evosax)
	python3 -m venv "$venv"
	"$py" -m pip install -q evosax gymnax jax six
	"$py" -m pip list 2>/dev/null | grep -iE '^(jax|jaxlib|evosax|gymnax|flax|optax) '
	;;
cartpole)
	seeds=${*:-1 2 3 4 5}
	for s in $seeds; do
		# shellcheck disable=SC2086 # PEER_ARGS is a list of words
		c=$("$py" "$top/bench/peers/evosax_cartpole.py" "$s" ${PEER_ARGS:-} | tail -n 1)
		echo "$c"
		echo "$c" | field wall_s >>"$d/peer"
		t0=$(now)
		out=$("$bin/seed-train" "$preset" --seed "$s" --dir "$d/run-$s" --quiet)
		t=$(awk "BEGIN { printf \"%.2f\", $(now) - $t0 }")
		frames=$(field frames <"$d/run-$s/checkpoint.json")
		printf '{"seed-train": "%s", "seed": %s, "wall_s": %s, "frames": %s, "eval": %s}\n' \
			"$preset" "$s" "$t" "$frames" "$(echo "$out" | retmean)"
		echo "$t" >>"$d/seed"
	done
	echo "median wall time to solved: evosax $(median <"$d/peer") s, Seed $(median <"$d/seed") s"
	;;
*) usage ;;
esac
