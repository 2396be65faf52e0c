#!/usr/bin/env python3
"""mails.py rcpts|unfold MBOX: what scripts/check.sh reads of a series'
mails.
  rcpts   one line a mail: its To and Cc addresses, sorted
  unfold  the mbox with folded header lines joined: b4 0.12's am fails on a
          folded Subject read from a local mbox"""
import email.utils
import mailbox
import sys


def rcpts(path):
    for msg in mailbox.mbox(path):
        fields = msg.get_all("To", []) + msg.get_all("Cc", [])
        addrs = sorted({a for _, a in email.utils.getaddresses(fields) if a})
        print(" ".join(addrs))


def unfold(path):
    out, head = [], False
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        if line.startswith("From "):
            head = True
        elif head and line == "\n":
            head = False
        elif head and line[:1] in " \t" and out:
            out[-1] = out[-1].rstrip("\n") + " " + line.lstrip()
            continue
        out.append(line)
    sys.stdout.write("".join(out))


{"rcpts": rcpts, "unfold": unfold}[sys.argv[1]](sys.argv[2])
