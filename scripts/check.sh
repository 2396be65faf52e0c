#!/bin/bash
# Netdev's per-patch checks on the exported series, one line per check:
#   ok|not ok check/<patch>/<what> [# detail]
# checkpatch --strict, Signed-off-by, subject prefix, a build of every prefix,
# W=1 + sparse and kernel-doc on the touched files (no new warnings against
# base), coccicheck on the series' touched files, selftests listed in their
# Makefile and .gitignore, and patches/ equal to the branch's export.
. "$(dirname "$0")/lib.sh"
# Checks report failures as lines; greps that find nothing are not errors.
set +e +o pipefail

sparse=$BUILD/sparse/sparse
[ -x "$sparse" ] || die "no sparse at $sparse: run 'make setup'"
fails=0
ok() { echo "ok check/$*"; }
nok() { echo "not ok check/$*"; fails=$((fails + 1)); }
verdict() { # verdict NAME DETAIL: ok when DETAIL is empty
	local name=$1; shift
	if [ -z "$*" ]; then ok "$name"; else nok "$name # $(echo "$*" | head -3 | tr '\n' ' ')"; fi
}

mapfile -t patches < <(grep -v '^\s*#' "$TOP/series" 2>/dev/null | grep .)
mapfile -t commits < <(tgit rev-list --reverse base..series)
if [ ${#patches[@]} -eq 0 ]; then
	echo "ok check/series # no patches yet: nothing to check"
	exit 0
fi
[ ${#patches[@]} -eq ${#commits[@]} ] ||
	nok "series # ${#patches[@]} patches in series, ${#commits[@]} commits on the branch"
[ ${#patches[@]} -le 15 ] || nok "series # ${#patches[@]} patches, netdev takes at most 15"

# patches/ and series must be exactly what the export step makes of the
# branch (cover letter included, with its tables from results/), but for
# the commit ids on the mbox "From " lines, which apply does not keep.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
verdict export "$(EXPORT_DIR=$tmp/export "$TOP/scripts/export.sh" 2>&1 >/dev/null | grep -v '^==')$(
	diff -r -x series -I '^From [0-9a-f]\{40\} ' "$tmp/export" "$TOP/patches" | grep -E '^(Only|diff)')$(
	diff -q "$tmp/export/series" "$TOP/series")"

# The send dry run: one mail per patch plus the cover letter, each to every
# to: and cc: recipient of MAINTAINERS-notes (send.sh lists them).  Then the mbox it wrote must
# git am onto base into exactly the series branch: same messages, same trees.
if sent=$("$TOP/scripts/send.sh" 2>&1); then
	want=$(cat "$BUILD/send/recipients")
	verdict send-dry-run "$(awk '/^Dry-OK/ { n++ } /^RCPT TO:/ { print n, $0 }' "$BUILD/send/dry-run.log" |
		sed -E 's/RCPT TO:<(.*)>/\1/' | sort -u | awk '{ r[$1] = r[$1] " " $2 } END { for (m in r) print r[m] }' |
		while read -r got; do
			[ "$(echo "$got" | tr ' ' '\n' | sort)" = "$want" ] || echo "a mail goes to $got"
		done)$(n=$(grep -c '^Result: OK' "$BUILD/send/dry-run.log")
		[ "$n" = $((${#patches[@]} + 1)) ] || echo "$n mails for ${#patches[@]} patches and a cover letter")"
	rt=$BUILD/roundtrip/linux
	[ -d "$rt" ] || tgit worktree add -q --detach "$rt" base
	git -C "$rt" am --abort 2>/dev/null
	git -C "$rt" checkout -q -f --detach base
	if git -C "$rt" am -q --empty=drop "$BUILD/send/series.mbox" >"$tmp/am.log" 2>&1; then
		shape() { git -C "$1" log --format='%T %an <%ae>%n%B' "base..$2"; }
		cmp -s <(shape "$rt" HEAD) <(shape "$TREE" series) && ok mbox-round-trip ||
			nok "mbox-round-trip # git am of $BUILD/send/series.mbox differs from the series branch"
	else
		nok "mbox-round-trip # git am: $(grep -m1 -i 'error\|fail' "$tmp/am.log")"
	fi
else
	nok "send-dry-run # $(echo "$sent" | tail -1)"
fi

[ -d "$CHECK_TREE" ] || tgit worktree add -q --detach "$CHECK_TREE" base
cgit() { git -C "$CHECK_TREE" "$@"; }
cmake() { make -C "$CHECK_TREE" O="$(kout check)" CC="ccache gcc" "$@"; }
files=$(tgit diff --name-only --diff-filter=AM base series)
cfiles=$(echo "$files" | grep -v '^tools/' | grep '\.c$' || true)
dfiles=$(echo "$files" | grep -v '^tools/' | grep '\.[ch]$' || true)

# warnings FILE...: W=1 and sparse warnings of the objects, line numbers cut
warnings() {
	local f o log=$tmp/w.log
	for f in $cfiles; do
		o=${f%.c}.o
		[ -f "$(kout check)/$o" ] || continue
		touch "$CHECK_TREE/$f"
		cmake W=1 C=2 CHECK="$sparse" "$o" >"$log" 2>&1 || true
		grep -q "CHECK.*$f" "$log" || echo "$f: sparse did not run"
		grep -E '^[^ ]+:[0-9]+(:[0-9]+)?: (warning|error):' "$log" |
			sed -E 's/:[0-9]+(:[0-9]+)?:/:/'
	done
	for f in $dfiles; do
		[ -f "$CHECK_TREE/$f" ] || continue
		"$CHECK_TREE/scripts/kernel-doc" -none -Wall "$CHECK_TREE/$f" 2>&1 |
			sed -E "s|$CHECK_TREE/||; s/:[0-9]+:/:/"
	done
}
new_warnings() { comm -13 <(sort "$tmp/base.w") <(warnings | sort); }

cgit checkout -q --detach base
scripts_build() { "$TOP/scripts/build.sh" check >/dev/null 2>"$tmp/b.log" || cat "$tmp/b.log"; }
out=$(scripts_build)
[ -z "$out" ] || { echo "$out" >&2; die "base does not build with the guest config"; }
warnings | sort >"$tmp/base.w"

name=$(git config user.name); email=$(git config user.email)
codespell=
dict=/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt
[ -f $dict ] && codespell="--codespell --codespellfile $dict"
for i in "${!patches[@]}"; do
	p=${patches[$i]}; c=${commits[$i]}; s=${p%.patch}
	# FILE_PATH_CHANGES asks whether MAINTAINERS needs updating for a new
	# file; new selftests fall under tools/testing/selftests/net/ already.
	cp=$(cd "$TREE" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict \
		--max-line-length=80 --ignore FILE_PATH_CHANGES $codespell \
		"$TOP/patches/$p" 2>&1)
	echo "$cp" | grep -q '^total: 0 errors, 0 warnings, 0 checks' && ok "$s/checkpatch" ||
		nok "$s/checkpatch # $(echo "$cp" | grep -E '^(ERROR|WARNING|CHECK):' | head -2 | tr '\n' ' ')"
	grep -qxF "Signed-off-by: $name <$email>" "$TOP/patches/$p" && ok "$s/signed-off-by" ||
		nok "$s/signed-off-by # no Signed-off-by: $name <$email>"
	grep -q '^Subject: \[PATCH net-next' "$TOP/patches/$p" && ok "$s/subject-prefix" ||
		nok "$s/subject-prefix # subject is not [PATCH net-next ...]"
	cgit checkout -q --detach "$c"
	verdict "$s/build" "$(scripts_build)"
	verdict "$s/w1-sparse-kdoc" "$(new_warnings)"
done

# coccicheck is slow: once, on the series' touched files, against base.
cocci() {
	local f
	for f in $cfiles; do
		cmake C=2 CHECK="$CHECK_TREE/scripts/coccicheck" MODE=report "${f%.c}.o" 2>/dev/null |
			grep -E "^$f:" | sed -E 's/:[0-9]+(:[0-9]+)?[:-]/:/'
	done
}
cocci | sort >"$tmp/cocci.series"
cgit checkout -q --detach base
cocci | sort >"$tmp/cocci.base"
verdict coccicheck "$(comm -13 "$tmp/cocci.base" "$tmp/cocci.series")"

# New selftests: listed in their Makefile and .gitignore, each in order
# between its neighbours.
in_order() { # in_order FILE LINE: LINE present, sorted against its neighbours
	LC_ALL=C awk -v l="$2" '$0 ~ "^[ \t]*" l "( \\\\)?$" {
			f = 1; ok = p <= $1; getline n; split(n, a)
			ok = ok && (a[1] == "" || a[1] ~ /^#/ || $1 <= a[1])
		}
		{ p = $1 } END { exit !(f && ok) }' "$1"
}
for f in $(tgit diff --name-only --diff-filter=A base series -- 'tools/testing/selftests/*.c'); do
	d=$(dirname "$f"); p=$(basename "$f" .c)
	in_order "$TREE/$d/.gitignore" "$p" && in_order "$TREE/$d/Makefile" "$p" &&
		ok "selftest-listed/$p" ||
		nok "selftest-listed/$p # not listed in order in $d/Makefile and $d/.gitignore"
done
[ $fails -eq 0 ]
