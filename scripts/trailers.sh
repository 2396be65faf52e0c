#!/bin/bash
# trailers.sh MBOX: take the Reviewed-by, Acked-by, Tested-by, Reported-by
# and Suggested-by that replies in a saved thread (b4 mbox, lei, a mail
# client's export) give, into the commits of the series branch, keeping the
# stack's branches; `make export` then carries them.  With a b4 prep branch
# of your own, `b4 trailers -u` does the same from lore.
. "$(dirname "$0")/lib.sh"

mbox=${1:?usage: trailers.sh MBOX}
[ -f "$mbox" ] || die "no mbox $mbox"
[ -z "$(tgit status --porcelain --untracked-files=no)" ] ||
	die "uncommitted changes in $TREE: commit them first"
list=$BUILD/trailers.list
/usr/bin/python3 "$TOP/scripts/trailers.py" "$mbox" >"$list.all" || die "cannot read $mbox"
# Replies to patches the branch no longer has (an older version's) are
# passed over, and said so.
subjects=$(tgit log --format=%s base..series)
awk -F'\t' 'NR == FNR { s[$0]; next } $1 in s' <(echo "$subjects") "$list.all" >"$list"
cut -f1 "$list.all" | sort -u | grep -vxF -f <(echo "$subjects") |
	sed 's/^/== trailers: no patch on the series branch is named: /' >&2 || true
[ -s "$list" ] || { say "trailers: none for the series branch in $mbox"; exit 0; }
before=$(tgit log --format=%B base..series | grep -c .)
tgit rebase -q --update-refs --committer-date-is-author-date \
	-x "/usr/bin/python3 $TOP/scripts/trailers.py --amend $list" base series >/dev/null ||
	{ tgit rebase --abort; die "rebase with the trailers failed; the series branch is as it was"; }
say "trailers: $(($(tgit log --format=%B base..series | grep -c .) - before)) added to the series branch"
