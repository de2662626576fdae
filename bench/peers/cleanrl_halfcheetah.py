"""Time CleanRL's continuous PPO (cleanrl/ppo_continuous_action.py, unmodified)
on HalfCheetah-v4 and read its return at the end.

usage: python3 cleanrl_halfcheetah.py CLEANRL_DIR SEED [STEPS [WINDOW]]

Runs `python3 CLEANRL_DIR/cleanrl/ppo_continuous_action.py --seed SEED
--no-cuda --env-id HalfCheetah-v4 --total-timesteps STEPS` (default 1M steps;
its other defaults: one env, 2048 steps a batch, 10 epochs of 32
minibatches) with one torch thread (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1),
its working directory in a temporary directory (it writes TensorBoard files
under runs/).  It prints the return of every training episode (the
stochastic policy's, as CleanRL's published figures are); the result is the
mean of the last WINDOW (10) of them.  The time counts from the process
start (imports included), as Seed's figures count a cold start.  Prints one
JSON line.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

if len(sys.argv) < 3:
    sys.exit(__doc__)
root, seed = sys.argv[1], int(sys.argv[2])
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
window = int(sys.argv[4]) if len(sys.argv) > 4 else 10
script = os.path.abspath(os.path.join(root, "cleanrl", "ppo_continuous_action.py"))
pat = re.compile(r"global_step=(\d+), episodic_return=\[?([-0-9.e+]+)")
env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
t0 = time.time()
returns = []
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.Popen([sys.executable, script, "--seed", str(seed), "--no-cuda",
                          "--env-id", "HalfCheetah-v4", "--total-timesteps", str(steps)],
                         cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    last_step = 0
    for line in p.stdout:
        m = pat.search(line)
        if m:
            last_step = int(m.group(1))
            returns.append(float(m.group(2)))
    rc = p.wait()
wall = round(time.time() - t0, 2)
tail = returns[-window:]
result = {"peer": "cleanrl-ppo-continuous", "env": "HalfCheetah-v4", "seed": seed, "steps": steps,
          "exit": rc, "episodes": len(returns), "last_episode_step": last_step, "wall_s": wall,
          "final_return": round(sum(tail) / len(tail), 2) if tail else None}
print(json.dumps(result))
