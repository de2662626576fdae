# tests/cli/topology-check.jq: check a recorded unroll stream (seed-cat output,
# slurped with jq -s) against what the protocol promises.  Prints one line of
# JSON with the counts and a list of problems (empty when all is well).
#
#  - consecutive unrolls of one env overlap by exactly one step;
#  - the episode returns obtained by summing the per-step rewards of the
#    unrolls, cut at terminated/truncated steps, are the returns that the
#    episode frames report for that env, in order (a prefix of them: episodes
#    that ended after the last whole unroll are only in episode frames);
#  - episode lengths agree the same way.
# With --argjson skip_first true, the first episode of every env is left out:
# a stream taken from a restarted server starts in the middle of episodes.

def env_key($f; $e): "\($f.run)/\($f.actor)/\($e)";

# Every unroll frame split into one record per env: {key, n, steps:[...]}.
def unroll_rows:
  to_entries
  | map(select(.value.type == "unroll"))
  | map(.key as $n | .value as $f
        | ($f.reward.shape[1]) as $T1
        | (($f.obs.data | flatten | length) / ($f.reward.shape[0] * $T1)) as $D
        | range(0; $f.env.shape[0]) as $b
        | {key: env_key($f; $f.env.data[$b]), n: $n,
           steps: [($f.obs.data | flatten) as $obs | ($f.reward.data | flatten) as $rew | ($f.terminated.data | flatten) as $te | ($f.truncated.data | flatten) as $tr | ($f.action.data | flatten) as $act | range(0; $T1) as $t | ($b * $T1 + $t) as $i
                   | {r: $rew[$i], te: $te[$i], tr: $tr[$i],
                      a: $act[$i], o: $obs[($i * $D):(($i + 1) * $D)]}]})
  | sort_by([.key, .n]);

# Episodes per env from the episode frames, in stream order.
def episode_rows:
  to_entries
  | map(select(.value.type == "episode"))
  | map(.key as $n | .value as $f
        | range(0; $f.env.shape[0]) as $j
        | {key: env_key($f; $f.env.data[$j]), n: $n,
           ret: $f["return"].data[$j], len: $f.length.data[$j], tr: $f.truncated.data[$j]})
  | sort_by([.key, .n]);

# Episodes (return, length) found by walking the concatenated steps.  The
# first step only opens the walk; when it already carries an end flag (a
# stream taken from a restarted server can start on one), the episode it ends
# was not seen here and is listed as an unknown one, so that the walk stays
# aligned with the episode frames.
def walk_episodes:
  (if (.[0].te == 1 or .[0].tr == 1) then [{ret: null, len: null}] else [] end) as $unseen
  | reduce .[1:][] as $s ({acc: 0, len: 0, eps: []};
    .acc += $s.r | .len += 1
    | if ($s.te == 1 or $s.tr == 1)
      then .eps += [{ret: .acc, len: .len}] | .acc = 0 | .len = 0
      else . end)
  | $unseen + .eps;

. as $all
| ($all | unroll_rows) as $rows
| ($all | episode_rows) as $eps
| ($rows | group_by(.key)) as $by_env
| [ $by_env[]
    | . as $us
    | ($us[0].key) as $k
    # overlap between consecutive unrolls
    | ( range(1; $us | length) as $i
        | select($us[$i - 1].steps[-1] != $us[$i].steps[0])
        | "\($k): unroll \($i) does not start with the last step of unroll \($i - 1)" ),
      # episode returns from rewards vs episode frames
      ( ([$us[0].steps[]] + [$us[1:][] | .steps[1:][]]) as $steps
        | ($steps | walk_episodes) as $mine
        | [$eps[] | select(.key == $k)] as $theirs
        | if ($mine | length) > ($theirs | length)
          then "\($k): \($mine | length) episodes in unrolls, \($theirs | length) episode records"
          else ( range(if ($ARGS.named.skip_first // false) then 1 else 0 end; $mine | length) as $j
                 | select(($mine[$j].ret - $theirs[$j].ret | fabs) > 1e-4 or $mine[$j].len != $theirs[$j].len)
                 | "\($k): episode \($j): rewards sum to \($mine[$j].ret) over \($mine[$j].len) steps, episode frame says \($theirs[$j].ret) over \($theirs[$j].len)" )
          end )
  ] as $problems
| { unroll_frames: ($all | map(select(.type == "unroll")) | length),
    unrolls: ($rows | length),
    envs: ($by_env | length),
    episodes: ($eps | length),
    truncated_episodes: ($eps | map(select(.tr == 1)) | length),
    episodes_checked: ([$by_env[] | ([.[0].steps[]] + [.[1:][] | .steps[1:][]]) | walk_episodes | length] | add),
    problems: $problems }
