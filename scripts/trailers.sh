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
/usr/bin/python3 "$TOP/scripts/trailers.py" "$mbox" >"$list" || die "cannot read $mbox"
[ -s "$list" ] || { say "trailers: none in $mbox"; exit 0; }
# Each commit whose subject a reply named takes its trailers.
subjects=$(tgit log --format=%s base..series)
unknown=$(cut -f1 "$list" | sort -u | grep -vxF -f <(echo "$subjects") || true)
[ -z "$unknown" ] || die "replies name patches the series branch does not have: $(echo "$unknown" | head -1)"
GIT_SEQUENCE_EDITOR="sed -i '/^pick /a exec /usr/bin/python3 $TOP/scripts/trailers.py --amend $list'" \
	tgit rebase -q -i --update-refs base >/dev/null ||
	{ tgit rebase --abort; die "rebase with the trailers failed; the series branch is as it was"; }
say "trailers: $(wc -l <"$list") added: $(cut -f2 "$list" | cut -d: -f1 | sort | uniq -c | tr -s ' ' | tr '\n' ',')"
