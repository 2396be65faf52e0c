#!/bin/bash
# send.sh: mail the exported series (cover letter and patches) to the
# recipients in MAINTAINERS-notes.  By default a dry run: git send-email
# --dry-run, its log in build/send/dry-run.log, the addresses every mail
# must reach in build/send/recipients, and every mail in
# build/send/series.mbox for the round trip in scripts/check.sh.
# SEND=1 sends for real through the user's sendemail.* configuration.
. "$(dirname "$0")/lib.sh"

notes=$TOP/MAINTAINERS-notes out=$BUILD/send
mkdir -p "$out"
mapfile -t patches < <(grep -v '^\s*#' "$TOP/series" | grep . | sed "s|^|$TOP/patches/|")
cover=$(ls "$TOP"/patches/*0000-cover-letter.patch 2>/dev/null) ||
	die "no cover letter in patches/: run 'make export'"
[ ${#patches[@]} -gt 0 ] || die "no patches in series"

# The recipients were chosen from get_maintainer.pl's answer; when that
# answer changes, the choice needs a new look.
now=$(cd "$TREE" && ./scripts/get_maintainer.pl --no-git --no-git-fallback "${patches[@]}") ||
	die "get_maintainer.pl failed"
then=$(sed -n '/^get_maintainer.pl says/,/^Recipients/s/^    //p' "$notes")
[ "$now" = "$then" ] || die "get_maintainer.pl's answer changed; update MAINTAINERS-notes:
$(diff <(echo "$then") <(echo "$now") | grep '^[<>]')"
addr() { sed -E 's/ \(.*\)$//; s/.*<(.*)>.*/\1/'; }
mapfile -t to < <(sed -n 's/^to: //p' "$notes")
mapfile -t cc < <(sed -n 's/^cc: //p' "$notes")
[ ${#to[@]} -gt 0 ] || die "no 'to:' lines in MAINTAINERS-notes"
chosen=$(sed -n 's/^\(to\|cc\|skip\): //p' "$notes" | addr)
missing=$(echo "$now" | addr | grep -vxF -f <(echo "$chosen") || true)
[ -z "$missing" ] || die "get_maintainer.pl names $(echo $missing), which MAINTAINERS-notes neither sends to nor skips"

printf '%s\n' "${to[@]}" "${cc[@]}" | addr | sort >"$out/recipients"
cat "$cover" "${patches[@]}" >"$out/series.mbox"
dry=(--dry-run)
[ "${SEND:-}" = 1 ] && dry=()
git send-email "${dry[@]}" --confirm=never --suppress-cc=self --thread --no-chain-reply-to \
	--8bit-encoding=UTF-8 --from="$(git config user.name) <$(git config user.email)>" \
	"${to[@]/#/--to=}" "${cc[@]/#/--cc=}" "$cover" "${patches[@]}" </dev/null >"$out/dry-run.log" 2>&1 ||
	{ tail -5 "$out/dry-run.log"; die "git send-email failed (log: $out/dry-run.log)"; }
mails=$(grep -c '^Result: OK' "$out/dry-run.log")
say "send: ${dry:+dry run: }$mails mails to ${#to[@]} + ${#cc[@]} Cc; mbox: $out/series.mbox"
