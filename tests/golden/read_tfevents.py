#!/usr/bin/env python3
"""tests/golden/read_tfevents.py: a run directory's TensorBoard event files, read by TensorBoard, against metrics.jsonl.

Usage: python3 tests/golden/read_tfevents.py RUN_DIR [METRICS]     (METRICS: default RUN_DIR/metrics.jsonl)

Reads every file of RUN_DIR whose name contains "tfevents", in name order
(as TensorBoard does), with TensorBoard's own reader (EventFileLoader: the
TFRecord framing with its CRC checks, the Event protos, the migration of
simple_value scalars to the tensors the scalars plugin plots), and checks:

  - each file starts with an Event of file_version "brain.Event:2" whose
    wall_time is in the second its name gives, and its wall times never go
    back nor past now;
  - after those, the Events are the lines of METRICS, in order, one each:
    step = the line's "frames", and one scalar per other key whose value is
    a JSON number (null, strings, booleans left out), tag = the key, value =
    the number rounded to float32 (exactly: the C writer and numpy round
    alike).

A record that fails its CRC or is cut short ends a file for the reader, as
it ends it for TensorBoard: such a file then matches METRICS without its
last lines.  Prints a summary; exits 1 with the differences if any.
Needs the tensorboard package (pip install tensorboard).
"""
import json
import os
import sys
import time

import numpy as np
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.util import tensor_util

STEP = "frames"


def expected(metrics_path):
    out = []
    with open(metrics_path) as f:
        for line in f:
            o = json.loads(line)
            scalars = [
                (k, np.float32(v))
                for k, v in o.items()
                if k != STEP and isinstance(v, (int, float)) and not isinstance(v, bool)
            ]
            out.append((o[STEP], scalars))
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    run_dir = sys.argv[1]
    metrics = sys.argv[2] if len(sys.argv) == 3 else os.path.join(run_dir, "metrics.jsonl")
    files = sorted(n for n in os.listdir(run_dir) if "tfevents" in n)
    bad = []
    got = []
    now = time.time()
    for name in files:
        events = list(EventFileLoader(os.path.join(run_dir, name)).Load())
        if not events or events[0].file_version != "brain.Event:2":
            bad.append("%s: does not start with file_version brain.Event:2" % name)
            continue
        secs = int(name.split(".")[3])
        if not secs <= events[0].wall_time < secs + 1:
            bad.append("%s: first wall_time %.3f is not in second %d" % (name, events[0].wall_time, secs))
        last = events[0].wall_time
        for ev in events[1:]:
            if not last <= ev.wall_time <= now:
                bad.append("%s: wall_time %.3f after %.3f (now %.3f)" % (name, ev.wall_time, last, now))
            last = ev.wall_time
            scalars = []
            for v in ev.summary.value:
                if v.metadata.plugin_data.plugin_name != "scalars":
                    bad.append("%s: %s is not a scalar" % (name, v.tag))
                scalars.append((v.tag, tensor_util.make_ndarray(v.tensor).item()))
            got.append((ev.step, scalars))
    want = expected(metrics)
    if len(got) != len(want):
        bad.append("%d events with scalars, %d metrics lines" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g[0] != w[0]:
            bad.append("event %d: step %d, the line's %s is %d" % (i, g[0], STEP, w[0]))
        gt, wt = [t for t, _ in g[1]], [t for t, _ in w[1]]
        if gt != wt:
            bad.append("event %d: tags %s, the line's numbers %s" % (i, gt, wt))
            continue
        for (tag, gv), (_, wv) in zip(g[1], w[1]):
            if np.float32(gv) != wv:
                bad.append("event %d: %s = %r, the line's is %r as float32" % (i, tag, gv, wv))
    if bad:
        print("\n".join(bad[:20]))
        sys.exit(1)
    tags = {t for _, s in got for t, _ in s}
    print(
        "%d files, %d events, %d scalars of %d tags, steps %s..%s: as %s"
        % (len(files), len(got), sum(len(s) for _, s in got), len(tags),
           got[0][0] if got else "-", got[-1][0] if got else "-", os.path.basename(metrics))
    )


main()
