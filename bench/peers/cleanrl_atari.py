"""Time CleanRL's Atari PPO (cleanrl/ppo_atari_envpool.py, unmodified) on a
game for a fixed wall time and read its rate.

usage: python3 cleanrl_atari.py CLEANRL_DIR SEED [SECONDS [ENV_ID]]

Runs `python3 CLEANRL_DIR/cleanrl/ppo_atari_envpool.py --seed SEED --no-cuda
--env-id ENV_ID` (default Pong-v5; its other defaults: 8 envpool envs x 128
steps, 4 epochs of 4 minibatches, the Nature network, 10M agent steps) with
torch's own choice of threads (one per core), its working directory in a
temporary directory (it writes TensorBoard files under runs/), and stops it
after SECONDS (default 300) of wall time.  CleanRL prints "SPS: N" after
each update, N its agent steps (global_step, 8 per vector step) over the
seconds since its start (the envs made, the network built); the rate here is
the last one it printed before the stop, and also the agent steps of the last
update over the wall time from the process start (imports included).  With
frame skip 4 an agent step is 4 emulator frames.  Prints one JSON line.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

if len(sys.argv) < 3:
    sys.exit(__doc__)
root, seed = sys.argv[1], int(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0
env_id = sys.argv[4] if len(sys.argv) > 4 else "Pong-v5"
script = os.path.abspath(os.path.join(root, "cleanrl", "ppo_atari_envpool.py"))
ret_pat = re.compile(r"global_step=(\d+), episodic_return=\[?([-0-9.e+]+)")
sps_pat = re.compile(r"^SPS: (\d+)")
t0 = time.time()
returns, sps, updates, last_update_wall = [], None, 0, None
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.Popen([sys.executable, script, "--seed", str(seed), "--no-cuda", "--env-id", env_id],
                         cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stop = threading.Timer(seconds, p.terminate)
    stop.start()
    for line in p.stdout:
        wall = time.time() - t0
        if wall > seconds:
            continue
        m = ret_pat.search(line)
        if m:
            returns.append(float(m.group(2)))
        m = sps_pat.match(line)
        if m:
            sps, updates, last_update_wall = int(m.group(1)), updates + 1, wall
    stop.cancel()
    p.wait()
# An update is 8 envs x 128 steps: CleanRL's global_step at its n-th "SPS".
steps = updates * 8 * 128
tail = returns[-20:]
result = {"peer": "cleanrl-ppo-atari-envpool", "env": env_id, "seed": seed, "seconds": seconds,
          "updates": updates, "agent_steps": steps, "sps_printed": sps,
          "agent_steps_per_s_cold": round(steps / last_update_wall, 1) if updates else None,
          "episodes": len(returns),
          "mean_return_last_20": round(sum(tail) / len(tail), 2) if tail else None}
print(json.dumps(result))
