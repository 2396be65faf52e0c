#!/usr/bin/env python3
"""trailers.py MBOX: the trailers that replies in a saved thread give, one
line each: the patch's subject, a tab, the trailer.  A reply to a patch (or
to a reply to it) gives its own unquoted Reviewed-by, Acked-by, Tested-by,
Reported-by and Suggested-by lines to that patch; a reply to a cover letter
gives them to every patch of its series.
trailers.py --amend LIST: add to HEAD's message the trailers LIST gives
its subject (git interpret-trailers, no duplicates)."""
import email.policy
import mailbox
import os
import re
import subprocess
import sys

TRAILER = re.compile(r"^(Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by):"
                     r"\s+\S.*<[^<>@\s]+@[^<>@\s]+>\s*$")
PATCH = re.compile(r"^\[(?:RFC )?PATCH[^\]]*?(?:(\d+)/(\d+))?\]\s*(.*)$", re.S)
MSGID = re.compile(r"<[^<>\s]+>")


def body(msg):
    part = msg.get_body(preferencelist=("plain",))
    return part.get_content() if part else ""


def parent(msg, by_id):
    """The nearest message this one replies to that the thread has."""
    refs = MSGID.findall(msg.get("References", "") or "") + \
        MSGID.findall(msg.get("In-Reply-To", "") or "")
    for ref in reversed(refs):
        if ref in by_id and by_id[ref] is not msg:
            return by_id[ref]
    return None


def collect(path):
    msgs = list(mailbox.mbox(path, factory=lambda f: email.message_from_binary_file(
        f, policy=email.policy.default)))
    by_id = {m.get("Message-ID", "").strip(): m for m in msgs}
    patches = {}  # Message-ID -> (n, subject)
    for m in msgs:
        hit = PATCH.match(" ".join(str(m.get("Subject", "")).split()))
        if hit:
            patches[m.get("Message-ID", "").strip()] = (int(hit.group(1) or 1), hit.group(3))
    given = []
    for m in msgs:
        if m.get("Message-ID", "").strip() in patches:
            continue
        p = parent(m, by_id)
        while p is not None and p.get("Message-ID", "").strip() not in patches:
            p = parent(p, by_id)
        if p is None:
            continue
        n, subj = patches[p.get("Message-ID", "").strip()]
        lines = [l.strip() for l in body(m).splitlines() if TRAILER.match(l.strip())]
        pid = p.get("Message-ID", "").strip()
        targets = [subj]
        if n == 0:
            targets = [s for q, (k, s) in patches.items() if k > 0 and pid in
                       (by_id[q].get("References", "") or "") + (by_id[q].get("In-Reply-To", "") or "")]
        given += [(t, l) for t in targets for l in lines]
    seen = set()
    for t, l in given:
        if (t, l) not in seen:
            seen.add((t, l))
            print(f"{t}\t{l}")


def amend(path):
    subj = subprocess.run(["git", "log", "-1", "--format=%s"], capture_output=True,
                          text=True, check=True).stdout.strip()
    add = [l.split("\t", 1)[1].rstrip("\n") for l in open(path) if l.split("\t", 1)[0] == subj]
    if not add:
        return
    msg = subprocess.run(["git", "log", "-1", "--format=%B"], capture_output=True,
                         text=True, check=True).stdout
    args = ["git", "interpret-trailers", "--if-exists", "addIfDifferent"]
    for t in add:
        args += ["--trailer", t]
    new = subprocess.run(args, input=msg, capture_output=True, text=True, check=True).stdout
    # Dated as the patch, as the rest of the branch is.
    date = subprocess.run(["git", "log", "-1", "--format=%ad", "--date=raw"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "commit", "-q", "--amend", "--no-verify", "-F", "-"], input=new,
                   text=True, check=True, env=dict(os.environ, GIT_COMMITTER_DATE=date))


if sys.argv[1] == "--amend":
    amend(sys.argv[2])
else:
    collect(sys.argv[1])
