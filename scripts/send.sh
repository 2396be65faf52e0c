#!/bin/bash
# send.sh: mail every series of the stack (SERIES=NAME: one) as a thread of
# its own to the recipients of its section in MAINTAINERS-notes, as the
# sender.  The exported patches carry the project's neutral identity; the
# mails carry the sender's: SENDER="Name <address>", else git's
# sendemail.from, else user.name and user.email.
#   SEND unset   a dry run
#   SEND=reflect every mail to the sender only
#   SEND=1       for real, through b4's or git send-email's configuration
# With b4 installed (SEND_WITH=git: not) the mails come from `b4 send` on a
# b4 prep branch of the build tree, b4/NAME: a cover letter commit with the
# series' change-id (letters/NAME/change-id) under the patches.  Otherwise
# git send-email sends the exported patches.  Either way every mail lands
# in build/send/NAME/ (series.mbox, and the recipients every mail must
# reach) for the round trip in scripts/check.sh.
. "$(dirname "$0")/lib.sh"
check_args

notes=$TOP/MAINTAINERS-notes
addr() { sed -E 's/ \(.*\)$//; s/.*<(.*)>.*/\1/'; }

neutral=$(sed -n 's/^neutral: //p' "$notes")
[ -n "$neutral" ] || die "no 'neutral:' identity in MAINTAINERS-notes"
sender=${SENDER:-$(git config sendemail.from || true)}
if [ -z "$sender" ]; then
	n=$(git config user.name || true) e=$(git config user.email || true)
	[ -n "$n" ] && [ -n "$e" ] && sender="$n <$e>"
fi
[ -n "$sender" ] ||
	die "no sender: set git config user.name and user.email (or sendemail.from), or SENDER='Name <address>'"
[[ $sender =~ ^[^\<\>]+\ \<[^@\ \<\>]+@[^@\ \<\>]+\>$ ]] ||
	die "sender '$sender' is not 'Name <address>'"
[ "$(echo "$sender" | addr)" != "$(echo "$neutral" | addr)" ] ||
	die "the sender is the patches' neutral identity ($neutral): set your own git config user.name and user.email, or SENDER='Name <address>'"
if [ "${SEND:-}" = 1 ] && [[ $sender =~ @([^.>]+\.)*(example|invalid|test|localhost|example\.(com|net|org))\>$ ]]; then
	die "sender '$sender' has a reserved domain: mail for real from your own address"
fi
use_b4=
[ "$(send_with)" = b4 ] && use_b4=1

section() { # section NAME: the lines of MAINTAINERS-notes about series NAME
	awk -v h="Series $1" '$0 == h { on = 1; next } /^Series / { on = 0 } on' "$notes"
}

# The b4 prep branch b4/NAME: base and the series this one needs (so that
# b4's base-commit is base, not another series), a cover letter commit as
# b4 prep makes one (To/Cc trailers, the tracking section with the
# change-id), and the sender's patches, with their changelog notes.
b4_branch() { # b4_branch NAME DIR V TREE: the branch, checked out in DIR/tree
	local name=$1 dir=$2 v=$3 tree=$4 wt=$2/tree msg=$2/cover.msg d c c2 i=0 m note prev
	local id=(-c user.name="${sender% <*}" -c user.email="$(echo "$sender" | addr)")
	local ours=()
	[ -f "$TOP/letters/$name/change-id" ] || die "series $name: no letters/$name/change-id"
	{
		# b4 puts a lone patch's "cover letter" below its "---", where
		# its changelog already is.
		if [ ${#mails[@]} = 1 ]; then
			tgit config "branch.stack/$name.description" | head -1
		else
			tgit config "branch.stack/$name.description"
		fi
		echo
		printf 'To: %s\n' "${to[@]}"
		[ ${#cc[@]} = 0 ] || printf 'Cc: %s\n' "${cc[@]}"
		cat <<EOT

--- b4-submit-tracking ---
# This section is used internally by b4 prep for tracking purposes.
{
  "series": {
    "revision": $v,
    "change-id": "$(cat "$TOP/letters/$name/change-id")",
    "base-branch": null,
    "prefixes": ["$tree"]
  }
}
EOT
	} >"$msg"
	tgit worktree prune
	[ ! -d "$wt" ] || git -C "$wt" am --abort 2>/dev/null || true
	[ -d "$wt" ] || tgit worktree add -q --detach "$wt" base
	git -C "$wt" checkout -q -f -B "b4/$name" base
	git -C "$wt" config "branch.b4/$name.b4-prep-cover-strategy" commit
	for d in $(needs_closure "$name"); do
		git -C "$wt" "${id[@]}" am -q $(sed "s|^|$TOP/patches/$d/|" "$TOP/patches/$d/series") ||
			die "series $name: what it needs ($d) does not apply to base"
	done
	git -C "$wt" "${id[@]}" commit -q --allow-empty -F "$msg"
	git -C "$wt" "${id[@]}" am -q "${mails[@]}" ||
		die "series $name: the sender's patches do not apply below it"
	# The changelog notes, which b4 does not show, go below a "---" of the
	# message, as b4 prep has them: git am cuts them off again.
	mapfile -t ours < <(git -C "$wt" rev-list --reverse "HEAD~${#mails[@]}..HEAD")
	prev=$(git -C "$wt" rev-parse "HEAD~${#mails[@]}")
	for c in $(tgit rev-list --reverse "$(series_below "$name")..stack/$name"); do
		c2=${ours[$i]} i=$((i + 1))
		note=$(tgit notes --ref=changelog show "$c" 2>/dev/null || true)
		m=$(git -C "$wt" log -1 --format=%B "$c2")
		[ -z "$note" ] || m+=$'\n---\n'$note
		prev=$(GIT_AUTHOR_NAME=$(git -C "$wt" log -1 --format=%an "$c2") \
			GIT_AUTHOR_EMAIL=$(git -C "$wt" log -1 --format=%ae "$c2") \
			GIT_AUTHOR_DATE=$(git -C "$wt" log -1 --format=%ad --date=raw "$c2") \
			git -C "$wt" "${id[@]}" commit-tree "$c2^{tree}" -p "$prev" -m "$m")
	done
	git -C "$wt" reset -q --hard "$prev"
}

send_one() { # send_one NAME
	local name=$1 dir=$BUILD/send/$1 v tree now was missing chosen n
	local list=$TOP/patches/$name/series patches=() cover mails=()
	[ -f "$list" ] || die "series $name: no $list: run 'make export'"
	mapfile -t patches < <(grep -v '^\s*#' "$list" | grep . | sed "s|^|$TOP/patches/$name/|")
	[ ${#patches[@]} -gt 0 ] || die "series $name: no patches in $list"
	cover=$(ls "$TOP/patches/$name"/*0000-cover-letter.patch 2>/dev/null || true)
	[ -n "$cover" ] || [ ${#patches[@]} = 1 ] ||
		die "series $name: no cover letter in patches/$name: run 'make export'"
	# Documentation/process/coding-assistants.rst: a patch written with a
	# coding assistant says so (MAINTAINERS-notes)
	for p in "${patches[@]}"; do
		grep -q '^Assisted-by: ' "$p" ||
			die "series $name: $(basename "$p") carries no Assisted-by: tag (coding-assistants.rst): add it on the series branch and make export"
	done
	[ -n "$(section "$name")" ] || die "series $name: no 'Series $name' section in MAINTAINERS-notes"
	# netdev applies a series on its tree alone: one that needs another
	# goes out once that one is merged.
	if [ "${SEND:-}" = 1 ] && [ -n "$(series_needs "$name")" ] && [ -z "${FORCE:-}" ]; then
		die "series $name needs $(series_needs "$name" | tr '\n' ' ')first: send it once that is merged, or FORCE=1"
	fi

	# The recipients were chosen from get_maintainer.pl's answer; when that
	# answer changes, the choice needs a new look.
	# --no-fixes: the authors of the commits Fixes: names are Cc'd by the
	# section, so that the answer is the same on a base without history.
	now=$(cd "$TREE" && ./scripts/get_maintainer.pl --no-git --no-git-fallback --no-fixes "${patches[@]}") ||
		die "get_maintainer.pl failed"
	was=$(section "$name" | sed -n '/^get_maintainer.pl says/,/^\(to\|cc\):/s/^    //p')
	[ "$now" = "$was" ] || die "series $name: get_maintainer.pl's answer changed; update MAINTAINERS-notes:
$(diff <(echo "$was") <(echo "$now") | grep '^[<>]')"
	mapfile -t to < <(section "$name" | sed -n 's/^to: //p')
	mapfile -t cc < <(section "$name" | sed -n 's/^cc: //p')
	[ ${#to[@]} -gt 0 ] || die "series $name: no 'to:' lines in MAINTAINERS-notes"
	chosen=$(section "$name" | sed -n 's/^\(to\|cc\|skip\): //p' | addr)
	missing=$(echo "$now" | addr | grep -vxF -f <(echo "$chosen") || true)
	[ -z "$missing" ] || die "series $name: get_maintainer.pl names $(echo $missing), which MAINTAINERS-notes neither sends to nor skips"

	rm -rf "$dir/out" "$dir/mails" "$dir/series.mbox"
	mkdir -p "$dir/mails"
	/usr/bin/python3 "$TOP/scripts/sender.py" "$neutral" "$sender" "$dir/out" ${cover:+"$cover"} "${patches[@]}"
	for p in "${patches[@]}"; do mails+=("$dir/out/$(basename "$p")"); done
	! grep -qiF "$(echo "$neutral" | addr)" "$dir"/out/* ||
		die "series $name: the neutral identity is still in $(grep -liF "$(echo "$neutral" | addr)" "$dir"/out/* | head -1)"
	if [ "${SEND:-}" = reflect ]; then
		printf '%s\n' "$sender" | addr >"$dir/recipients"
	else
		printf '%s\n' "${to[@]}" "${cc[@]}" | addr | sort >"$dir/recipients"
	fi

	if [ -n "$use_b4" ]; then
		tree=$(series_tree "$name")
		v=$(sed -n '1s/^v\([0-9]*\)-.*/\1/p' "$list"); v=${v:-1}
		b4_branch "$name" "$dir" "$v" "$tree"
		# A dry run writes the mails, asking no SMTP server or b4 web
		# endpoint (the kernel tree's default, which wants signed mail);
		# a real send or a reflection uses the sender's b4 and sendemail
		# configuration, and b4 asks to go ahead on the terminal.
		local b4o=() cfg=(user.name "${sender% <*}" user.email "$(echo "$sender" | addr)"
			sendemail.from "$sender")
		case ${SEND:-} in
		1) ;;
		reflect) b4o+=(--reflect) ;;
		*) b4o+=(--no-sign -o "$dir/mails") cfg+=(sendemail.smtpserver localhost) ;;
		esac
		local k env=(GIT_CONFIG_COUNT=$((${#cfg[@]} / 2)))
		for ((k = 0; k < ${#cfg[@]}; k += 2)); do
			env+=("GIT_CONFIG_KEY_$((k / 2))=${cfg[$k]}" "GIT_CONFIG_VALUE_$((k / 2))=${cfg[$k + 1]}")
		done
		if [ -n "${SEND:-}" ]; then
			(cd "$dir/tree" && env "${env[@]}" b4 send "${b4o[@]}") 2>&1 | tee "$dir/send.log"
			[ "${PIPESTATUS[0]}" = 0 ] || die "series $name: b4 send failed (log: $dir/send.log)"
		else
			(cd "$dir/tree" && env "${env[@]}" b4 send "${b4o[@]}") </dev/null >"$dir/send.log" 2>&1 ||
				{ tail -5 "$dir/send.log"; die "series $name: b4 send failed (log: $dir/send.log)"; }
		fi
		[ -n "${SEND:-}" ] || for m in "$dir"/mails/*.eml; do
			echo "From mboxrd@z Thu Jan  1 00:00:00 1970"; cat "$m"; echo
		done >"$dir/series.mbox"
	else
		local dry=(--dry-run) rcpt=("${to[@]/#/--to=}" "${cc[@]/#/--cc=}")
		[ "${SEND:-}" = 1 ] && dry=()
		[ "${SEND:-}" = reflect ] && dry=() rcpt=(--to="$sender" --suppress-cc=all)
		cat ${cover:+"$dir/out/$(basename "$cover")"} "${mails[@]}" >"$dir/series.mbox"
		git send-email "${dry[@]}" --confirm=never --suppress-cc=self --thread --no-chain-reply-to \
			--8bit-encoding=UTF-8 --from="$sender" "${rcpt[@]}" \
			${cover:+"$dir/out/$(basename "$cover")"} "${mails[@]}" </dev/null >"$dir/send.log" 2>&1 ||
			{ tail -5 "$dir/send.log"; die "series $name: git send-email failed (log: $dir/send.log)"; }
	fi
	n=${#patches[@]}
	[ -z "$cover" ] || n=$((n + 1))
	local how="git send-email" what="a dry run"
	[ -n "$use_b4" ] && how=b4
	case ${SEND:-} in 1) what=sent ;; reflect) what="reflected to the sender" ;; esac
	say "send: $name: $what with $how, $n mails to ${#to[@]} + ${#cc[@]} Cc, as $sender"
}

names=$(selected_series) || exit 1
for name in $names; do send_one "$name"; done
