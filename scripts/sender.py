#!/usr/bin/env python3
"""sender.py NEUTRAL SENDER OUTDIR PATCH...: copy exported patches to OUTDIR
as SENDER ("Name <address>") sends them.  The patches carry the project's
NEUTRAL identity: a From: header (folded or not) of that identity becomes
SENDER, and so does its Signed-off-by: line.  Another author's From: is kept, and the
sender's Signed-off-by is added after the last one, as the DCO asks of
whoever passes a patch on."""
import email.header
import email.utils
import os
import re
import sys


def neutral_of(text):
    """The identity on a patch's From: header, unfolded."""
    m = re.search(r"^From: (.*(?:\n[ \t].*)*)", text, re.M)
    return re.sub(r"\s*\n[ \t]+", " ", m.group(1)).strip() if m else None


def address(ident):
    """The mail address of an identity, however its name is quoted or encoded."""
    name = str(email.header.make_header(email.header.decode_header(ident or "")))
    return email.utils.parseaddr(name)[1].lower()


def rewrite(text, neutral, sender):
    head, sep, body = text.partition("\n\n")
    if address(neutral_of(head)) == address(neutral):
        head = re.sub(r"^From: .*(?:\n[ \t].*)*", lambda _: "From: " + sender,
                      head, count=1, flags=re.M)
    msg, cut, rest = body.partition("\n---\n")
    msg = re.sub(r"^Signed-off-by: .*<" + re.escape(address(neutral)) + r">\s*$",
                 lambda _: "Signed-off-by: " + sender, msg, flags=re.M | re.I)
    sobs = list(re.finditer(r"^Signed-off-by: .*$", msg, re.M))
    if sobs and not any(s.group(0) == "Signed-off-by: " + sender for s in sobs):
        end = sobs[-1].end()
        msg = msg[:end] + "\nSigned-off-by: " + sender + msg[end:]
    return head + sep + msg + cut + rest


def main():
    neutral, sender, out, patches = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    for p in patches:
        text = open(p, encoding="utf-8").read()
        open(os.path.join(out, os.path.basename(p)), "w",
             encoding="utf-8").write(rewrite(text, neutral, sender))


main()
