#!/bin/bash
# Netdev's per-patch checks on the exported series, one line per check:
#   ok|not ok check/<patch>/<what> [# detail]
# checkpatch --strict, Signed-off-by, subject prefix, a build of every prefix,
# W=1 + sparse and kernel-doc on the touched files (no new warnings against
# base), coccicheck on the series' touched files, selftests listed in their
# Makefile and .gitignore, and patches/ equal to the branch's export; each
# Fixes: id and subject against the base's history ("skip" on a base that
# has none); the figures each commit message quotes against the results
# file it names.  Writes results/bloat.md: bloat-o-meter of every patch,
# and results/bloat/PATCH.txt its -t output (functions) less the total,
# which the message of a net-next patch that changes any must quote,
# indented by two spaces below a "bloat-o-meter -t ... (gcc N, x86_64):"
# line (a `net` fix may say its cost in a sentence instead).
# It records in results/check.trees the tree of every prefix (with its
# parent's) whose build and warnings passed, and the series tree when
# coccicheck passed, keyed by the toolchain (its binaries' hashes) and
# this script's inputs.  check.sh --changed (make test) gives those a
# "skip" and does not build them again, but for one patch picked at
# random (CHECK_PICK=N, counted from 0, picks patch N), and checks each
# message's sizes against results/bloat/; it writes nothing under
# results/.  check.sh --applies runs only the export and apply checks
# (a minute, no build); check.sh --key prints the key and exits.
. "$(dirname "$0")/lib.sh"
# Checks report failures as lines; greps that find nothing are not errors.
set +e +o pipefail
# The checks are of every series, as a dry run.
unset SERIES V SEND
changed= key= applies=
case "$*" in
--changed) changed=1 ;;
--applies) applies=1 ;;
--key) key=1 ;;
"") ;;
*) die "usage: check.sh [--changed|--applies|--key]" ;;
esac

fails=0
record=$TOP/results/check.trees
sparse=$BUILD/sparse/sparse
# --applies needs none of the tools.
if [ -z "$applies" ]; then
	[ -x "$sparse" ] || die "no sparse at $sparse: run 'make setup'"
	# kbuild prints CHECK before it runs sparse: one that cannot run would
	# leave only a failed make behind.
	sparse_version=$("$sparse" --version 2>/dev/null) ||
		die "sparse at $sparse does not run: $("$sparse" --version 2>&1 | tail -1)"
	# What a recorded pass depends on besides the trees: the tools (the
	# binaries that compile, check and link, not only their versions),
	# the configs of the check kernel and the scripts that build and
	# check.  Only the binaries' contents: setup.sh's sparse wrapper names
	# the checkout's path, which must not decide whether a fresh clone may
	# use the record.
	tools=$(for t in "$(gcc -print-prog-name=cc1)" "$(command -v as)" "$(command -v ld)" \
			"$BUILD/sparse/root/usr/bin/sparse" "$(command -v spatch)"; do
			sha256sum <"$(readlink -f "$(command -v "$t")")"
		done | sha256sum | cut -c1-16)
	inputs=$(cd "$TOP" && cat kernel-config/guest.config kernel-config/check.config \
		scripts/build.sh scripts/check.sh scripts/lib.sh | sha256sum | cut -c1-16)
	toolchain="gcc $(gcc -dumpfullversion), sparse $sparse_version, $(spatch --version | head -n 1 | cut -d' ' -f1-3), tools $tools, inputs $inputs"
fi
[ -z "$key" ] || { echo "$toolchain"; exit 0; }
usable=
if [ -n "$changed" ]; then
	if [ ! -f "$record" ]; then
		echo "skip check/changed # no results/check.trees: every prefix is built"
	elif [ "$(sed -n 's/^# toolchain: //p' "$record")" != "$toolchain" ]; then
		echo "skip check/changed # results/check.trees is of $(sed -n 's/^# toolchain: //p' "$record"), not $toolchain: every prefix is built"
	else
		usable=1
	fi
fi
passed() { # passed KEY WHAT: with --changed, the record has WHAT at KEY
	[ -n "$usable" ] && grep -qxF "$1 $2" "$record"
}
ok() { echo "ok check/$*"; }
nok() { echo "not ok check/$*"; fails=$((fails + 1)); }
verdict() { # verdict NAME DETAIL: ok when DETAIL is empty
	local name=$1; shift
	if [ -z "$*" ]; then ok "$name"; else nok "$name # $(echo "$*" | head -3 | tr '\n' ' ')"; fi
}

# Every series' patches, in stack order, against the branch's commits.
patches=() subjects=()
for name in $(stack_names); do
	[ -f "$TOP/patches/$name/series" ] || { nok "series/$name # no patches/$name/series"; continue; }
	while read -r p; do
		patches+=("$name/$p") subjects+=("$(series_tree "$name")")
	done < <(grep -v '^\s*#' "$TOP/patches/$name/series" | grep .)
done
mapfile -t commits < <(tgit rev-list --reverse base..series)
if [ ${#patches[@]} -eq 0 ]; then
	echo "ok check/series # no patches yet: nothing to check"
	exit 0
fi
[ ${#patches[@]} -eq ${#commits[@]} ] ||
	nok "series # ${#patches[@]} patches in patches/, ${#commits[@]} commits on the branch"
# make test builds one recorded prefix again, but the last (the series
# kernel it builds anyway), so that a wrong record cannot stay green.
pick=-1
if [ -n "${CHECK_PICK:-}" ] || [ -n "$usable" ]; then
	pick=${CHECK_PICK:-$((RANDOM % (${#patches[@]} > 1 ? ${#patches[@]} - 1 : 1)))}
	[[ $pick =~ ^[0-9]+$ ]] && [ "$pick" -lt ${#patches[@]} ] ||
		die "CHECK_PICK=$pick: not a patch number (0 to $((${#patches[@]} - 1)))"
fi

# patches/ must be exactly what the export step makes of the branch (cover
# letters included, with their tables from results/), but for the commit
# ids on the mbox "From " lines, which apply does not keep.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
verdict export "$(EXPORT_DIR=$tmp/export "$TOP/scripts/export.sh" 2>&1 >/dev/null | grep -v '^==')$(
	diff -r -I '^From [0-9a-f]\{40\} ' "$tmp/export" "$TOP/patches" | grep -E '^(Only|diff)')"

# Each series applies on its tree with no more than the series it needs.
# rt: a worktree for these applies and the mbox round trips below.
rt=$BUILD/roundtrip/linux
[ -d "$rt" ] || tgit worktree add -q --detach "$rt" base
rtam() { # rtam REF MBOX...: git am the mboxes onto REF in rt
	local ref=$1; shift
	git -C "$rt" am --abort 2>/dev/null
	git -C "$rt" checkout -q -f --detach "$ref" &&
		git -C "$rt" am -q --empty=drop "$@" >"$tmp/am.log" 2>&1
}
series_files() { sed "s|^|$TOP/patches/$1/|" "$TOP/patches/$1/series"; }
for name in $(stack_names); do
	deps=$(needs_closure "$name")
	mapfile -t files < <(for d in $deps "$name"; do series_files "$d"; done)
	if rtam base "${files[@]}"; then
		ok "$name/applies-alone # on base${deps:+ + $(echo $deps | tr ' ' '+')}"
	else
		nok "$name/applies-alone # on base${deps:+ + $(echo $deps | tr ' ' '+')}: $(grep -m1 -i 'error\|fail\|patch does not apply' "$tmp/am.log")"
	fi
done
# The whole stack, every series' patches in order, applies on base and
# gives the series branch's tree.
mapfile -t files < <(for name in $(stack_names); do series_files "$name"; done)
if rtam base "${files[@]}"; then
	verdict stack-applies "$([ "$(git -C "$rt" rev-parse 'HEAD^{tree}')" = "$(tgit rev-parse 'series^{tree}')" ] ||
		echo "the patches applied on base do not give the series branch's tree")"
else
	nok "stack-applies # $(grep -m1 -i 'error\|fail\|patch does not apply' "$tmp/am.log")"
fi
[ -z "$applies" ] || exit $((fails > 0))

# The send dry run of each series, as a sender who is not the neutral
# identity: one mail per patch, plus the cover letter of a series of more
# than one, each to every to: and cc: recipient of its section of
# MAINTAINERS-notes (send.sh lists them), and beyond them only to people
# the series' trailers name (b4 and git send-email Cc them).  Then its
# mbox must git am (and, where b4 made it, b4 am) onto what is below the
# series into exactly its commits: same trees, same messages but for the
# sender's identity.
dryrun="Workbench Dry Run <dry-run@example.invalid>"
if sent=$(SENDER=$dryrun "$TOP/scripts/send.sh" 2>&1); then
	how=$(send_with)
	for name in $(stack_names); do
		d=$BUILD/send/$name lo=$(series_below "$name")
		n=$(grep -c . "$TOP/patches/$name/series"); [ "$n" = 1 ] || n=$((n + 1))
		want=$(cat "$d/recipients")
		named=$( (sed -n 's/^[A-Za-z-]*-by: .*<\([^>]*\)>.*/\1/p' "$TOP/patches/$name"/*.patch
			echo "$dryrun" | sed 's/.*<\(.*\)>/\1/') | sort -u)
		if [ $how = b4 ]; then
			got=$(/usr/bin/python3 "$TOP/scripts/mails.py" rcpts "$d/series.mbox")
		else
			got=$(awk '/^Dry-OK/ { n++ } /^RCPT TO:/ { print n, $0 }' "$d/send.log" |
				sed -E 's/RCPT TO:<(.*)>/\1/' | sort -u |
				awk '{ r[$1] = r[$1] " " $2 } END { for (m in r) print r[m] }')
		fi
		verdict "$name/send-dry-run" "$(echo "$got" | while read -r g; do
				g=$(echo $g | tr ' ' '\n' | sort -u)
				lost=$(comm -23 <(echo "$want") <(echo "$g"))
				extra=$(comm -13 <(echo "$want") <(echo "$g") | grep -vxF -f <(echo "$named"))
				[ -z "$lost$extra" ] || echo "a mail misses $(echo $lost), or goes to $(echo $extra)"
			done)$([ "$(echo "$got" | grep -c .)" = "$n" ] || echo "$(echo "$got" | grep -c .) mails, not $n")"
		# The messages as the neutral identity sent them.
		shape() { git -C "$1" log --format='%T %an <%ae>%n%B' "$2..$3" |
			sed "s|$dryrun|$(sed -n 's/^neutral: //p' "$TOP/MAINTAINERS-notes")|"; }
		roundtrip() { # roundtrip NAME MBOX...
			local how=$1; shift
			if rtam "$lo" "$@"; then
				cmp -s <(shape "$rt" "$lo" HEAD) <(shape "$TREE" "$lo" "stack/$name") &&
					ok "$name/$how-round-trip" ||
					nok "$name/$how-round-trip # $how of $d's mails differs from stack/$name"
			else
				nok "$name/$how-round-trip # git am: $(grep -m1 -i 'error\|fail' "$tmp/am.log")"
			fi
		}
		if [ $how = b4 ]; then
			# git am takes no cover letter without a diff (b4's has none).
			mapfile -t eml < <(ls "$d"/mails/*.eml | grep -v '/0000-')
			roundtrip git-am "${eml[@]}"
		else
			roundtrip git-am "$d/series.mbox"
		fi
		if [ $how = b4 ]; then
			rm -rf "$tmp/b4am"; mkdir -p "$tmp/b4am"
			/usr/bin/python3 "$TOP/scripts/mails.py" unfold "$d/series.mbox" >"$tmp/b4am/in.mbox"
			if b4 -q am -m "$tmp/b4am/in.mbox" -o "$tmp/b4am" -n rt >"$tmp/b4am/log" 2>&1; then
				roundtrip b4-am "$tmp/b4am/rt.mbx"
			else
				nok "$name/b4-am-round-trip # b4 am: $(tail -1 "$tmp/b4am/log")"
			fi
		fi
	done
else
	nok "send-dry-run # $(echo "$sent" | tail -1)"
fi

[ -d "$CHECK_TREE" ] || tgit worktree add -q --detach "$CHECK_TREE" base
cgit() { git -C "$CHECK_TREE" "$@"; }
cmake() { make -C "$CHECK_TREE" O="$(kout check)" CC="ccache gcc" "$@"; }
files=$(tgit diff --name-only --diff-filter=AM base series)
cfiles=$(echo "$files" | grep -v '^tools/' | grep '\.c$' || true)
dfiles=$(echo "$files" | grep -v '^tools/' | grep '\.[ch]$' || true)

# warnings [FILE...]: W=1 and sparse warnings of the objects of the touched
# .c files among FILEs (all of them when none is given, or when one is a
# touched header), and kernel-doc's of the touched files among them; line
# numbers cut.  A patch can add a warning only where it changes the source.
# Lines that say a file went unchecked start "unchecked: ": base's do not
# excuse a patch's.
warnings() {
	local f o log=$tmp/w.log c=$cfiles d=$dfiles
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF -f <(echo "$dfiles" | grep '\.h$'); then
		c=$(printf '%s\n' "$@" | grep -xF -f <(echo "$cfiles"))
		d=$(printf '%s\n' "$@" | grep -xF -f <(echo "$dfiles"))
	fi
	for f in $c; do
		o=${f%.c}.o
		# a file a later patch adds
		[ -f "$CHECK_TREE/$f" ] || continue
		[ -f "$(kout check)/$o" ] || { echo "unchecked: $f: not built by the check config"; continue; }
		touch "$CHECK_TREE/$f"
		if ! cmake W=1 C=2 CHECK="$sparse" "$o" >"$log" 2>&1 &&
			! grep -qE '^[^ ]+:[0-9]+(:[0-9]+)?: (fatal )?error:' "$log"; then
			echo "unchecked: $f: make W=1 C=2 $o failed: $(tail -1 "$log")"
		fi
		grep -q "CHECK.*$f" "$log" || echo "unchecked: $f: sparse did not run"
		grep -E '^[^ ]+:[0-9]+(:[0-9]+)?: (warning|(fatal )?error):' "$log" |
			sed -E 's/:[0-9]+(:[0-9]+)?:/:/'
	done
	for f in $d; do
		[ -f "$CHECK_TREE/$f" ] || continue
		"$CHECK_TREE/scripts/kernel-doc" -none -Wall "$CHECK_TREE/$f" 2>&1 |
			sed -E "s|$CHECK_TREE/||; s/:[0-9]+([: ])/:\1/"
	done
}
new_warnings() { comm -13 <(sort "$tmp/base.w") <(warnings "$@" | sort); }

scripts_build() { "$TOP/scripts/build.sh" check >/dev/null 2>"$tmp/b.log" || cat "$tmp/b.log"; }
# prev.vmlinux is the kernel of tree $prev, the one bloat-o-meter compares
# a patch against; base's warnings are what a patch may not add to.
# prev is "failed:TREE" when TREE did not build.
prev=
built_before() { # built_before COMMIT: base's warnings, and the commit's parent built
	local want
	if [ ! -f "$tmp/base.w" ] && [ -z "$changed" ]; then
		cgit checkout -q --detach base
		out=$(scripts_build)
		[ -z "$out" ] || { echo "$out" >&2; die "base does not build with the guest config"; }
		warnings | grep -v '^unchecked: ' | sort >"$tmp/base.w"
		cp "$(kout check)/vmlinux" "$tmp/prev.vmlinux"
		prev=$(tgit rev-parse 'base^{tree}')
	fi
	want=$(tgit rev-parse "$1^^{tree}")
	if [ "$prev" != "$want" ] && [ "$prev" != "failed:$want" ]; then
		cgit checkout -q --detach "$1^"
		if [ -z "$(scripts_build)" ]; then
			cp "$(kout check)/vmlinux" "$tmp/prev.vmlinux"
			prev=$want
		else
			prev=failed:$want
		fi
	fi
	# --changed builds no base: base's warnings are of its sources
	# compiled in the parent's build, which spares a cold ccache a whole
	# build of the check config.
	if [ ! -f "$tmp/base.w" ]; then
		cgit checkout -q --detach base
		warnings | grep -v '^unchecked: ' | sort >"$tmp/base.w"
	fi
	[ "$prev" = "$want" ]
}
# bloat-o-meter of each patch against the one before it: results/bloat.md.
bloat=$tmp/bloat.rows passes=$tmp/passes
: >"$bloat"; : >"$passes"
sizes=$TOP/results/bloat
[ -n "$changed" ] && sizes=$tmp/bloat
rm -rf "$sizes"
gcc=$(gcc -dumpversion | cut -d. -f1)
bloat_in_message() { # bloat_in_message PATCH FT TREE: the message quotes FT
	local quoted mcc
	[ -f "$2" ] || { nok "${1%.patch}/bloat-in-message # no ${2#"$TOP/"}"; return; }
	# the message's quoted block, and the gcc it names
	quoted=$(awk '/^---$/ { exit } /^bloat-o-meter -t / { on = 1; next }
		on && /^$/ && n { exit } on && /^  / { n = 1; print }' "$TOP/patches/$1")
	mcc=$(awk '/^---$/ { exit } /^bloat-o-meter -t / { print; exit }' "$TOP/patches/$1" |
		sed -n 's/.*(gcc \([0-9]*\), .*/\1/p')
	if grep -q '^add/remove: 0/0 grow/shrink: 0/0 ' "$2"; then
		verdict "${1%.patch}/bloat-in-message" "${quoted:+the message quotes sizes; bloat-o-meter -t finds no change}"
	elif [ -z "$quoted" ] && [ "$3" = net ]; then
		ok "${1%.patch}/bloat-in-message # a net fix, whose message need not quote sizes"
	elif [ -n "$mcc" ] && [ "$mcc" != "$gcc" ]; then
		echo "skip check/${1%.patch}/bloat-in-message # the message's sizes are from gcc $mcc, this is gcc $gcc"
	else
		verdict "${1%.patch}/bloat-in-message" "$(diff <(echo "$quoted") <(sed 's/^/  /' "$2") |
			sed -n '2s/^/the message does not quote bloat-o-meter -t: /p')"
	fi
}

neutral=$(sed -n 's/^neutral: //p' "$TOP/MAINTAINERS-notes")
# A base with no parent (the Debian tarball) has no upstream history.
nohistory=
tgit rev-parse -q --verify 'base^' >/dev/null || nohistory=1
codespell=
dict=/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt
[ -f $dict ] && codespell="--codespell --codespellfile $dict"
for i in "${!patches[@]}"; do
	p=${patches[$i]}; c=${commits[$i]}; s=${p%.patch}
	# FILE_PATH_CHANGES asks whether MAINTAINERS needs updating for a new
	# file; new selftests fall under tools/testing/selftests/net/ already.
	ignore=FILE_PATH_CHANGES
	# A Fixes: tag names a commit of upstream history, with its subject.
	# A base without that history (the Debian tarball) cannot tell.
	fixes=$(sed -n 's/^Fixes: \([0-9a-f]\{12,\}\) ("\(.*\)")$/\1 \2/p' "$TOP/patches/$p")
	if [ -n "$fixes" ] && [ -n "$nohistory" ]; then
		ignore=$ignore,UNKNOWN_COMMIT_ID
		echo "skip check/$s/fixes # the base has no upstream history: $(echo $(cut -d' ' -f1 <<<"$fixes")) not verifiable here"
	elif [ -n "$fixes" ]; then
		verdict "$s/fixes" "$(while read -r id subj; do
			if ! tgit cat-file -e "$id^{commit}" 2>/dev/null; then echo "Fixes: $id is no commit of the base's history"
			elif [ "$(tgit log -1 --format=%s "$id")" != "$subj" ]; then echo "Fixes: $id is not \"$subj\""; fi
		done <<<"$fixes")"
	fi
	cp=$(cd "$TREE" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict \
		--max-line-length=80 --ignore $ignore $codespell \
		"$TOP/patches/$p" 2>&1)
	echo "$cp" | grep -q '^total: 0 errors, 0 warnings, 0 checks' && ok "$s/checkpatch" ||
		nok "$s/checkpatch # $(echo "$cp" | grep -E '^(ERROR|WARNING|CHECK):' | head -2 | tr '\n' ' ')"
	grep -qxF "Signed-off-by: $neutral" "$TOP/patches/$p" && ok "$s/signed-off-by" ||
		nok "$s/signed-off-by # no Signed-off-by: $neutral"
	grep -qE "^Subject: \\[PATCH ${subjects[$i]}( v[0-9]+)?( [0-9]+/[0-9]+)?\\]" "$TOP/patches/$p" &&
		ok "$s/subject-prefix" ||
		nok "$s/subject-prefix # subject is not [PATCH ${subjects[$i]} ...]"
	# The patch's results depend on its tree and its parent's, and for a
	# patch that touches a header on every .c file of the stack, which
	# warnings() then compiles.
	tree=$(tgit rev-parse "$c^{tree}")
	key="$(tgit rev-parse "$c^^{tree}") $tree"
	tgit diff --name-only "$c^" "$c" | grep -qxF -f <(echo "$dfiles" | grep '\.h$') &&
		key+=" c:$(echo "$cfiles" | sha256sum | cut -c1-12)"
	again=
	if [ "$i" = "$pick" ] && passed "$key" "$s"; then
		again=1
	elif passed "$key" "$s"; then
		echo "skip check/$s/build # tree ${tree:0:12} passed make check (results/check.trees)"
		echo "skip check/$s/w1-sparse-kdoc # tree ${tree:0:12} passed make check (results/check.trees)"
		bloat_in_message "$p" "$TOP/results/bloat/$s.txt" "${subjects[$i]}"
		continue
	fi
	before=1
	built_before "$c" || before=
	cgit checkout -q --detach "$c"
	built=$(scripts_build)
	verdict "$s/build" "$built"
	if [ -z "$before" ] && [ -z "$built" ]; then
		echo "skip check/$s/bloat-o-meter # the tree before it does not build"
		echo "| $s | the tree before does not build | | | |" >>"$bloat"
		cp "$(kout check)/vmlinux" "$tmp/prev.vmlinux"
		prev=$tree
	elif [ -z "$built" ]; then
		"$CHECK_TREE/scripts/bloat-o-meter" "$tmp/prev.vmlinux" "$(kout check)/vmlinux" >"$tmp/bloat.txt" 2>&1 ||
			nok "$s/bloat-o-meter # $(tail -1 "$tmp/bloat.txt")"
		t=$(sed -n 's/^Total: Before=\([0-9]*\), After=\([0-9]*\), chg \(.*\)$/\1 | \2 | \3/p' "$tmp/bloat.txt")
		f=$(awk '/^Function/ { on = 1; next } on && NF == 4 && $1 != "Total:" && $4 != 0 { printf "%s%s %+d", sep, $1, $4; sep = ", " }' "$tmp/bloat.txt")
		echo "| $s | ${t:-? | ? | ?} | ${f:-none} |" >>"$bloat"
		# Its -t output less the total, which depends on the series below
		ft=$sizes/$s.txt
		mkdir -p "$(dirname "$ft")"
		"$CHECK_TREE/scripts/bloat-o-meter" -t "$tmp/prev.vmlinux" "$(kout check)/vmlinux" 2>/dev/null |
			grep -v '^Total: ' >"$ft"
		bloat_in_message "$p" "$ft" "${subjects[$i]}"
		cp "$(kout check)/vmlinux" "$tmp/prev.vmlinux"
		prev=$tree
	else
		echo "| $s | build failed | | | |" >>"$bloat"
		prev=failed:$tree
	fi
	w=$(new_warnings $(tgit diff --name-only "$c^" "$c"))
	verdict "$s/w1-sparse-kdoc" "$w"
	if [ -n "$again" ] && [ -z "$built$w" ] && [ -n "$before" ]; then
		ok "random-prefix # $s, recorded in results/check.trees, built again and passed (CHECK_PICK=$i)"
	elif [ -n "$again" ]; then
		nok "random-prefix # $s, recorded in results/check.trees, fails built again (CHECK_PICK=$i)"
	fi
	[ -n "$built$w" ] || [ -z "$before" ] || echo "$key $s" >>"$passes"
done
[ -n "$changed" ] || {
	echo "# Size: scripts/bloat-o-meter (text, data and rodata) of each patch against the one before it"
	echo
	echo "Generated by \`make check\` (scripts/check.sh), from its build of every prefix of the stack (the guest config, $(cat "$(kout check)/include/config/kernel.release")), base first; the series at $(tgit log -1 --abbrev=12 --format='"%s" (tree %t)' series)."
	echo
	echo "| patch | before | after | change | symbols changed (bytes) |"
	echo "|---|---:|---:|---:|---|"
	cat "$bloat"
} >"$TOP/results/bloat.md"

# coccicheck is slow (minutes a file, one spatch each): on the series'
# touched files, as many at once as there are CPUs.  A finding is new on a
# line the series adds (code it moves counts as added); elsewhere when base
# lacks it, so base runs only then.
cocci() { # cocci FILE...: the findings, "file:line:col: message"
	local log=$tmp/cocci.log
	[ $# -gt 0 ] || return 0
	cmake -j"$(nproc)" -Oline C=2 CHECK="$CHECK_TREE/scripts/coccicheck" MODE=report \
		"${@/%.c/.o}" >"$log" 2>&1 || echo "coccicheck failed: $(tail -1 "$log")"
	[ "$(grep -c '^/usr/bin/spatch .*--cocci-file' "$log")" -gt 0 ] || echo "coccicheck did not run"
	# kbuild names the files by the tree's real path
	sed "s|^$(realpath "$CHECK_TREE")/||" "$log" | grep -E "^($(echo "$@" | tr ' ' '|')):[0-9]+"
}
added() { # the "file:line" of every line the series adds to the .c files
	tgit diff --no-color --src-prefix=a/ --dst-prefix=b/ -U0 base series -- $cfiles | awk '
		/^\+\+\+ b\// { f = substr($2, 3) }
		/^@@/ { split(substr($3, 2), r, ","); n = r[2] == "" ? 1 : r[2]
			for (i = 0; i < n; i++) print f ":" r[1] + i }'
}
nolines() { sed -E 's/:[0-9]+(:[0-9]+(-[0-9]+)?)?:/:/; s/line [0-9]+/line N/g' | sort; }
onadded() { # onadded yes|no: the series' findings on added lines, or the rest
	awk -F: -v want=$1 'FILENAME == ARGV[1] { a[$0] = 1; next }
		(($1 ":" $2) in a) == (want == "yes")' "$tmp/added" "$tmp/cocci.series"
}
stree=$(tgit rev-parse 'series^{tree}')
if passed "$stree" coccicheck; then
	echo "skip check/coccicheck # tree ${stree:0:12} passed make check (results/check.trees)"
else
	added >"$tmp/added"
	cgit checkout -q --detach series
	# kbuild needs a configured tree, which --changed may not have built
	[ -f "$(kout check)/.config" ] || out=$(scripts_build)
	cocci $cfiles >"$tmp/cocci.series"
	new=$(grep -v '^[a-z/_.-]*:[0-9]' "$tmp/cocci.series"; onadded yes)
	onadded no | grep '^[a-z/_.-]*:[0-9]' >"$tmp/cocci.rest"
	if [ -s "$tmp/cocci.rest" ]; then
		cgit checkout -q --detach base
		new+=$(echo; comm -13 <(cocci $(cut -d: -f1 "$tmp/cocci.rest" | sort -u) | nolines) <(nolines <"$tmp/cocci.rest"))
	fi
	verdict coccicheck "$new"
	[ -n "$new" ] || echo "$stree coccicheck" >>"$passes"
fi
[ -n "$changed" ] || {
	echo "# make check (scripts/check.sh) passed the build, W=1, sparse and"
	echo "# kernel-doc of these patches (parent tree, tree, patch), and"
	echo "# coccicheck of the series tree; check.sh --changed (make test) does"
	echo "# not run those again."
	echo "# toolchain: $toolchain"
	cat "$passes"
} >"$record"

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

# Each figure a commit message quotes is a row of the results file it names
# (scripts/figures.py); figures that name no file are "skip".
figs=$(/usr/bin/python3 "$TOP/scripts/figures.py" "${patches[@]/#/$TOP/patches/}" 2>&1)
st=$?
[ -z "$figs" ] || echo "$figs" | grep -E '^(ok|not ok|skip) '
fails=$((fails + $(echo "$figs" | grep -c '^not ok')))
[ $st = 0 ] || echo "$figs" | grep -q '^not ok' ||
	nok "figures # scripts/figures.py failed: $(echo "$figs" | tail -1)"
[ $fails -eq 0 ]
