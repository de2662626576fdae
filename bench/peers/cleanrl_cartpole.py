"""Time CleanRL's PPO (cleanrl/ppo.py, unmodified) to a solved CartPole-v1.

usage: python3 cleanrl_cartpole.py CLEANRL_DIR SEED [TARGET [WINDOW]]

Runs `python3 CLEANRL_DIR/cleanrl/ppo.py --seed SEED --no-cuda` (its defaults:
4 envs x 128 steps, 500K steps) with its working directory in a temporary
directory (it writes TensorBoard files under runs/), reads the return of every
episode it prints, and stops it as soon as the mean of the last WINDOW episodes
(20) reaches TARGET (475).  The time counts from the process start (imports
included), as Seed's figures count a cold start.  Prints one JSON line.
"""
import collections
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
target = float(sys.argv[3]) if len(sys.argv) > 3 else 475.0
window = int(sys.argv[4]) if len(sys.argv) > 4 else 20
script = os.path.abspath(os.path.join(root, "cleanrl", "ppo.py"))
pat = re.compile(r"global_step=(\d+), episodic_return=\[?([-0-9.e+]+)")
t0 = time.time()
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.Popen([sys.executable, script, "--seed", str(seed), "--no-cuda"],
                         cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    last = collections.deque(maxlen=window)
    result = {"peer": "cleanrl-ppo", "seed": seed, "solved": False}
    for line in p.stdout:
        m = pat.search(line)
        if not m:
            continue
        last.append(float(m.group(2)))
        if len(last) == window and sum(last) / window >= target:
            result.update(solved=True, steps=int(m.group(1)), wall_s=round(time.time() - t0, 2))
            p.kill()
            break
    p.wait()
    if not result["solved"]:
        result.update(wall_s=round(time.time() - t0, 2))
print(json.dumps(result))
