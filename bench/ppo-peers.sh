#!/bin/sh
# bench/ppo-peers.sh: Seed's PPO side by side with its peers, in one sitting.
#
#   bench/ppo-peers.sh setup-cleanrl VENV
#       makes a Python virtual environment VENV for CleanRL: torch, tyro,
#       tensorboard, gymnasium 0.29.1 (CleanRL's pin: its ppo.py reads the
#       episodes from the "final_info" that gymnasium 1.x no longer gives)
#       mujoco 2.3.3 (its MuJoCo benchmark's pin) and imageio (which
#       gymnasium's MuJoCo environments import).
#   bench/ppo-peers.sh halfcheetah VENV CLEANRL [SEEDS]
#       per seed (default 1 2 3): CleanRL's ppo_continuous_action.py on
#       HalfCheetah-v4 for 1M steps, one torch thread
#       (bench/peers/cleanrl_halfcheetah.py: wall time, the mean of its last
#       10 training episodes), then `seed-train ppo-halfcheetah --seed S`
#       (time of the whole command, its training return, its greedy
#       evaluation of 10 episodes); then the medians.  PEER_JOBS=2 runs the
#       peer's seeds two at a time first, each pinned to a core of its own
#       (taskset), since each uses one thread; Seed's runs follow one at a
#       time on both cores.
#   bench/ppo-peers.sh setup-purejaxrl VENV
#       the same for PureJaxRL: jax, flax, optax, distrax, brax, navix and
#       gymnax 0.0.9 (its wrappers import brax and navix; gymnax 1.x changed
#       step's results, which PureJaxRL's wrappers do not unpack).
#   bench/ppo-peers.sh cartpole VENV CLEANRL [SEEDS]
#       per seed (default 1 2 3 4 5), one after the other: CleanRL's ppo.py
#       (CLEANRL: a checkout of github.com/vwxyzjn/cleanrl) until its last
#       20 episodes average 475 (bench/peers/cleanrl_cartpole.py), then
#       `seed-train ppo-cartpole --seed S` (time of the whole command, its
#       100-episode greedy evaluation); then the medians.
#   bench/ppo-peers.sh minatar VENV PUREJAXRL [SEEDS [FRAMES [GAMES]]]
#       per game (default all five) and seed (default 1 2 3): PureJaxRL's
#       PPO (PUREJAXRL: a checkout of github.com/luchris429/purejaxrl) on
#       gymnax's GAME-MinAtar for FRAMES steps (default 5000000)
#       (bench/peers/purejaxrl_minatar.py), then seed-train
#       ppo-minatar-GAME at the same frames on gymnax's settings: no sticky
#       actions, the minimal action set, an episode cap of 1000 steps (2500 on
#       Freeway); PRESETS=minatar- compares the V-trace presets instead.
#       SETTINGS=minatar plays MinAtar's own settings on both sides instead:
#       all 6 actions and sticky actions 0.1 (for the peer, a wrapper of
#       gymnax.make: gymnax has no sticky actions), the same episode caps.
#       Each Seed line says when its training return first reached the
#       peer's final return (reached_peer_s, from the cold start); KEEP=DIR
#       keeps the run directories there. SEED_FRAMES=N gives Seed a budget
#       of its own (default FRAMES): the peer's return at FRAMES is the mark,
#       and the question is whether Seed reaches it in less wall time.
#   bench/ppo-peers.sh setup-cleanrl-atari VENV
#       a virtual environment for CleanRL's ppo_atari_envpool.py: torch,
#       tyro, tensorboard, gym 0.23.1 and envpool 0.8.4 (its pins), numpy<2.
#   bench/ppo-peers.sh atari VENV CLEANRL [SECONDS [SEEDS [PRESETS]]]
#       the rates on Pong, in one sitting: per seed (default 1), CleanRL's
#       ppo_atari_envpool.py on Pong-v5 for SECONDS (default 300) with
#       torch's default threads (bench/peers/cleanrl_atari.py), then each
#       Seed preset (default ppo-atari-pong atari-pong; seed-gym and ale-py:
#       scripts/install-deps --atari) for the same SECONDS, stopped by
#       SIGTERM.  Agent steps/s over the wall time from the cold start, and
#       the network arithmetic that rate makes: the Nature network's forward
#       on Pong (6 actions) is 9.35M multiply-adds a row, 18.7 MFLOP; its
#       backward the weights' gradients (the same again) and the data
#       gradients of all but the first convolution (whose input needs none:
#       neither torch nor Seed computes it), 30.8 MFLOP; so PPO's 4 epochs
#       and its rollout forward make 4 x 49.5 + 18.7 = 216.8 MFLOP an agent
#       step, and V-trace's learner and server 49.5 + 18.7 = 68.2.
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

median() { sort -g | awk '{a[NR]=$1} END {if (NR) printf "%.2f", (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\": *\\([-0-9.eE+]*\\).*/\\1/p" | head -1; }
retmean() { sed -n 's/.*"return": *{ *"mean": *\([-0-9.eE+]*\).*/\1/p'; }
now() { date +%s.%N; }

d=$(mktemp -d "${TMPDIR:-/tmp}/ppo-peers.XXXXXX")
trap 'rm -rf "$d"' EXIT

case $what in
setup-cleanrl)
	python3 -m venv "$venv"
	"$py" -m pip install -q torch tyro tensorboard 'gymnasium==0.29.1' 'numpy<2' 'mujoco==2.3.3' imageio
	"$py" -m pip list 2>/dev/null | grep -iE '^(torch|gymnasium|tyro|numpy) '
	;;
setup-cleanrl-atari)
	python3 -m venv "$venv"
	"$py" -m pip install -q torch tyro tensorboard 'gym==0.23.1' 'envpool==0.8.4' 'numpy<2'
	"$py" -m pip list 2>/dev/null | grep -iE '^(torch|gym|envpool|numpy|tyro) '
	;;
atari)
	[ $# -ge 1 ] || usage
	cleanrl=$1
	secs=${2:-300}
	seeds=${3:-1}
	presets=${4:-ppo-atari-pong atari-pong}
	export SEED_GYM="${SEED_GYM:-$bin/seed-gym}"
	# MFLOP an agent step: PPO 4 x 49.5 + 18.7, V-trace 49.5 + 18.7.
	for s in $seeds; do
		c=$("$py" "$top/bench/peers/cleanrl_atari.py" "$cleanrl" "$s" "$secs" | tail -n 1)
		echo "$c"
		awk -v r="$(echo "$c" | field agent_steps_per_s_cold)" -v m=216.8 'BEGIN {
			printf "  CleanRL: %.1f agent steps/s, %.1f GFLOP/s of network arithmetic\n", r, r * m / 1000 }'
		for p in $presets; do
			case $p in ppo-*) m=216.8 ;; *) m=68.2 ;; esac
			r="$d/$p-$s"
			t0=$(now)
			timeout -s TERM "$secs" "$bin/seed-train" "$p" --seed "$s" --dir "$r" --quiet --no-eval >/dev/null || :
			t=$(awk "BEGIN { printf \"%.2f\", $(now) - $t0 }")
			steps=$(field agent_steps <"$r/checkpoint.json")
			awk -v p="$p" -v s="$s" -v t="$t" -v n="$steps" -v m="$m" 'BEGIN {
				printf "{\"seed-train\": \"%s\", \"seed\": %s, \"wall_s\": %s, \"agent_steps\": %s, \"agent_steps_per_s_cold\": %.1f}\n", p, s, t, n, n / t
				printf "  Seed %s: %.1f agent steps/s, %.1f GFLOP/s of network arithmetic\n", p, n / t, n / t * m / 1000 }'
		done
	done
	;;
setup-purejaxrl)
	python3 -m venv "$venv"
	"$py" -m pip install -q jax flax optax distrax brax navix 'gymnax==0.0.9'
	"$py" -m pip list 2>/dev/null | grep -iE '^(jax|jaxlib|flax|optax|distrax|gymnax) '
	;;
cartpole)
	[ $# -ge 1 ] || usage
	cleanrl=$1
	shift
	seeds=${*:-1 2 3 4 5}
	for s in $seeds; do
		c=$("$py" "$top/bench/peers/cleanrl_cartpole.py" "$cleanrl" "$s" | tail -n 1)
		echo "$c"
		echo "$c" | field wall_s >>"$d/peer"
		t0=$(now)
		out=$("$bin/seed-train" ppo-cartpole --seed "$s" --dir "$d/run-$s" --quiet)
		t=$(awk "BEGIN { printf \"%.2f\", $(now) - $t0 }")
		frames=$(field frames <"$d/run-$s/checkpoint.json")
		printf '{"seed-train": "ppo-cartpole", "seed": %s, "wall_s": %s, "frames": %s, "eval": %s}\n' \
			"$s" "$t" "$frames" "$(echo "$out" | retmean)"
		echo "$t" >>"$d/seed"
	done
	echo "median wall time to solved: CleanRL $(median <"$d/peer") s, Seed $(median <"$d/seed") s"
	;;
halfcheetah)
	[ $# -ge 1 ] || usage
	cleanrl=$1
	shift
	seeds=${*:-1 2 3}
	# peer SEED [CORE]: CleanRL's run of SEED into $d/peer-SEED, pinned to
	# CORE when given.
	peer() {
		pin=
		[ $# -lt 2 ] || pin="taskset -c $2"
		$pin "$py" "$top/bench/peers/cleanrl_halfcheetah.py" "$cleanrl" "$1" | tail -n 1 >"$d/peer-$1"
	}
	if [ "${PEER_JOBS:-1}" = 2 ]; then
		set -- $seeds
		while [ $# -gt 0 ]; do
			peer "$1" 0 &
			shift
			if [ $# -gt 0 ]; then
				peer "$1" 1 &
				shift
			fi
			wait
		done
	else
		for s in $seeds; do
			peer "$s"
		done
	fi
	for s in $seeds; do
		cat "$d/peer-$s"
		field wall_s <"$d/peer-$s" >>"$d/peer"
		field final_return <"$d/peer-$s" >>"$d/peer-ret"
	done
	for s in $seeds; do
		r="$d/run-$s"
		t0=$(now)
		out=$("$bin/seed-train" ppo-halfcheetah --seed "$s" --dir "$r" --quiet)
		t=$(awk "BEGIN { printf \"%.2f\", $(now) - $t0 }")
		train=$(tail -n 1 "$r/metrics.jsonl" | field episode_return | awk '{ printf "%.2f", $1 }')
		ev=$(echo "$out" | retmean)
		printf '{"seed-train": "ppo-halfcheetah", "seed": %s, "wall_s": %s, "frames": %s, "final_return": %s, "eval": %s}\n' \
			"$s" "$t" "$(field frames <"$r/checkpoint.json")" "$train" "$ev"
		echo "$t" >>"$d/seed"
		echo "$train" >>"$d/seed-ret"
		echo "$ev" >>"$d/seed-eval"
	done
	echo "medians: CleanRL $(median <"$d/peer") s, training return $(median <"$d/peer-ret");" \
		"Seed $(median <"$d/seed") s, training return $(median <"$d/seed-ret"), greedy evaluation $(median <"$d/seed-eval")"
	;;
minatar)
	[ $# -ge 1 ] || usage
	pjr=$1
	seeds=${2:-1 2 3}
	frames=${3:-5000000}
	seed_frames=${SEED_FRAMES:-$frames}
	games=${4:-breakout asterix freeway seaquest space-invaders}
	prefix=${PRESETS:-ppo-minatar-}
	settings=${SETTINGS:-gymnax}
	case $settings in
	gymnax) sticky=0 minimal=true ;;
	minatar) sticky=0.1 minimal=false ;;
	*) echo "ppo-peers: SETTINGS is gymnax or minatar, not $settings" >&2; exit 2 ;;
	esac
	for g in $games; do
		case $g in
		breakout) gx=Breakout cap=1000 ;;
		asterix) gx=Asterix cap=1000 ;;
		freeway) gx=Freeway cap=2500 ;;
		seaquest) gx=Seaquest cap=1000 ;;
		space-invaders) gx=SpaceInvaders cap=1000 ;;
		*) echo "ppo-peers: unknown game $g" >&2; exit 2 ;;
		esac
		for s in $seeds; do
			# (the JSON line is the last: brax's import prints notes on stdout)
			p=$("$py" "$top/bench/peers/purejaxrl_minatar.py" "$pjr" "$gx" "$s" "$frames" "$settings" 2>/dev/null | tail -n 1)
			echo "$p"
			r="$d/$g-$s"
			t0=$(now)
			out=$("$bin/seed-train" "$prefix$g" --seed "$s" --frames "$seed_frames" --dir "$r" --quiet \
				--set "env_options={\"sticky_action_prob\": $sticky, \"minimal_action_set\": $minimal, \"max_steps\": $cap}")
			t=$(awk "BEGIN { printf \"%.2f\", $(now) - $t0 }")
			train=$(tail -n 1 "$r/metrics.jsonl" | field episode_return | awk '{ printf "%.2f", $1 }')
			# When Seed's training return first reached the peer's final
			# return: the learner's clock at that metrics line, plus the
			# start-up (the wall time less the learner's last clock).
			goal=$(echo "$p" | field final_return)
			reach=null
			if [ -n "$goal" ]; then
				reach=$(while read -r l; do
					printf '%s %s\n' "$(echo "$l" | field time)" "$(echo "$l" | field episode_return)"
				done <"$r/metrics.jsonl" | awk -v goal="$goal" -v wall="$t" '
					$2 != "" && !hit && $2 + 0 >= goal + 0 { hit = $1 }
					{ last = $1 }
					END { if (hit != "") printf "%.2f", hit + wall - last; else printf "null" }')
			fi
			printf '{"seed-train": "%s", "settings": "'"$settings"'", "seed": %s, "wall_s": %s, "frames": %s, "final_return": %s, "eval": %s, "reached_peer_s": %s}\n' \
				"$prefix$g" "$s" "$t" "$(field frames <"$r/checkpoint.json")" "$train" "$(echo "$out" | retmean)" "$reach"
			[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp -r "$r" "$KEEP/"; }
		done
	done
	;;
*) usage ;;
esac
