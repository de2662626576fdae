#!/usr/bin/env python3
"""The golden --help text of tests/unit/core/test_opts.c, laid out by Python's textwrap.

seed_opts(3)'s rule: the left parts ("  -e, --env NAME") of at most 28
characters set the help column (the widest + 2); a longer left part is
followed by two spaces; help words wrap before column 81 and continue at the
help column; '\\n' in a help text starts a new line.  Run it and paste its
output over help_golden in tests/unit/core/test_opts.c.
"""
import textwrap

WIDTH, MAX_LEFT = 80, 28

options = [
    ("  -e, --env NAME", "environment to play"),
    ("  -k, --envs K", "environments stepped side by side in one vector, a help text long enough that it "
     "must be wrapped twice at the eightieth column of the terminal"),
    ("      --retry-ms MS", "resend after MS ms\n(default 2000)"),
    ("  -q, --quiet", "no summary"),
    ("      --a-very-long-option-name VALUE", "long"),
    ("  -h, --help", "show this help and exit"),
    ("  -V, --version", "show the version and exit"),
]
col = max(len(left) for left, _ in options if len(left) <= MAX_LEFT) + 2

lines = ["Usage: prog --env NAME [OPTION]...", "       prog --list", "Play things.", ""]
for left, text in options:
    if len(left) + 2 > col:
        lines.append(left + "  " + text)
        continue
    for i, para in enumerate(text.split("\n")):
        first = left.ljust(col) if i == 0 else " " * col
        lines += textwrap.wrap(para, width=WIDTH, initial_indent=first, subsequent_indent=" " * col)
lines += ["", "  Examples: prog -e x", "", "See prog(1)."]

print("static const char help_golden[] =")
for line in lines:
    print('    "%s\\n"' % line.replace("\\", "\\\\").replace('"', '\\"'))
print("    ;")
