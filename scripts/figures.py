#!/usr/bin/python3
"""figures.py PATCH...: the figures a commit message quotes, against their file.

A figure is "A -> B  (+C%)".  A message that names results/X.md may quote
only rows of the tables there: each figure must be a row's base, series and
change.  Prints per patch, for make check:
  ok check/figures/PATCH # N figures from results/X.md
  not ok check/figures/PATCH # A -> B (C%) is in no table of results/X.md
  skip check/figures/PATCH # N figures name no results file
and nothing for a patch that quotes none.  Exits 1 on a "not ok".
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUM = r"[0-9][0-9,]*(?:\.[0-9]+)?"
FIGURE = re.compile(rf"({NUM}) +-> +({NUM})\s+\(([+-]{NUM})%\)")
CITED = re.compile(r"\bresults/[\w./-]+\.md\b")


def message(path):
    """The commit message of a git format-patch file: Subject to "---"."""
    text = open(path, encoding="utf-8").read()
    head, _, rest = text.partition("\n\n")
    return re.sub(r"\n---\n.*", "\n", rest, flags=re.S)


def rows(path):
    """(base, series, change) of every table row of a results file."""
    found = set()
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(NUM, cells[1]) and re.fullmatch(NUM, cells[2]):
            found.add((cells[1], cells[2], cells[3].rstrip("%")))
    return found


def main():
    bad = 0
    for path in sys.argv[1:]:
        name = "/".join(path.split("/")[-2:])
        msg = message(path)
        figures = FIGURE.findall(msg)
        if not figures:
            continue
        cited = sorted(set(CITED.findall(msg)))
        if not cited:
            print(f"skip check/figures/{name} # {len(figures)} figures name no results file")
            continue
        missing = [c for c in cited if not os.path.exists(os.path.join(TOP, c))]
        if missing:
            print(f"not ok check/figures/{name} # {', '.join(missing)}: no such file")
            bad += 1
            continue
        table = set().union(*(rows(os.path.join(TOP, c)) for c in cited))
        wrong = [f for f in figures if f not in table]
        if wrong:
            a, b, c = wrong[0]
            print(f"not ok check/figures/{name} # {a} -> {b} ({c}%) is in no table of "
                  f"{' '.join(cited)}" + (f", nor {len(wrong) - 1} more" if len(wrong) > 1 else ""))
            bad += 1
        else:
            print(f"ok check/figures/{name} # {len(figures)} figures from {' '.join(cited)}")
    sys.exit(1 if bad else 0)


main()
