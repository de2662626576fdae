#!/usr/bin/env bats
# MinAtar through the programs a user runs: seed-eval's random policy over
# 10,000 episodes per game must agree with the original Python package's
# statistics (tests/golden/minatar_ref.h, produced by tests/golden/minatar_ref.py with
# minatar 1.0.15, default settings) within 4 standard errors of the
# difference, for the mean return and the mean length.

bats_require_minimum_version 1.5.0

setup() {
	load helpers
	load_helpers
}

# ref GAME: "return_mean return_std length_mean length_std" from the header.
ref() {
	sed -n "s/.*{\"$1\", 10000, \([^,]*\), \([^,]*\), \([^,]*\), \([^}]*\)}.*/\1 \2 \3 \4/p" \
		"$SEED_SRCDIR/tests/golden/minatar_ref.h"
}

check_game() {
	local game=$1 r
	r=$(ref "$(echo "$game" | tr - _)")
	[ -n "$r" ]
	# stdout alone: a slow run (valgrind, a busy machine) also says its progress on stderr.
	run --separate-stderr seed-eval --env "minatar-$game" --policy random --episodes 10000 --envs 16 --seed 7
	assert_success
	set -- $r
	echo "ours: $(jq -c '[.return.mean, .return.std, .length.mean, .length.std]' <<<"$output"); python: [$1,$2,$3,$4]"
	jq -e --argjson rm "$1" --argjson rs "$2" --argjson lm "$3" --argjson ls "$4" '
		def agree(a; sa; b; sb): ((a - b) | fabs) <= 4 * (((sa * sa + sb * sb) / 10000) | sqrt) + 1e-9;
		agree(.return.mean; .return.std; $rm; $rs) and agree(.length.mean; .length.std; $lm; $ls)' <<<"$output"
}

@test "minatar-breakout: random play agrees with the original" { check_game breakout; }
@test "minatar-asterix: random play agrees with the original" { check_game asterix; }
@test "minatar-freeway: random play agrees with the original" { check_game freeway; }
@test "minatar-seaquest: random play agrees with the original" { check_game seaquest; }
@test "minatar-space-invaders: random play agrees with the original" { check_game space-invaders; }
