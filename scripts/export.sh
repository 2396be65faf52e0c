#!/bin/bash
# Regenerate patches/ and `series` from the build tree's series branch with
# git format-patch.  V=N makes a vN posting ("PATCH net-next vN").
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "no build tree: run 'make base' first"
[ -z "$(tgit status --porcelain --untracked-files=no)" ] ||
	die "uncommitted changes in $TREE: commit them on the series branch first"
n=$(tgit rev-list --count base..series)
[ "$n" -le 15 ] || die "$n patches: netdev takes at most 15 in a series"
[ "$n" -gt 0 ] || die "the series branch has no commits on top of base"

reroll=()
[ "${V:-1}" -gt 1 ] && reroll=(--reroll-count="$V")
# "%% results/X.md %%" in the letter stands for that file's table rows.
cover=$(awk -v top="$TOP" '/^%% .* %%$/ {
		f = top "/" $2; n = 0
		while ((getline l < f) > 0) {
			if (l ~ /^\| case \|/)
				on = 1
			if (on && l ~ /^\|/) { print l; n++ }
		}
		on = 0
		if (!n) { print "export: no table in " $2 > "/dev/stderr"; exit 1 }
		next
	} { print }' "$TOP/cover-letter.txt") || die "cover letter: a results table is missing"
tgit config branch.series.description "$cover"
rm -f "$TOP"/patches/*.patch
tgit format-patch -q --numbered --cover-letter --cover-from-description=subject \
	--subject-prefix="PATCH net-next" "${reroll[@]}" -o "$TOP/patches" base..series
(cd "$TOP/patches" && ls -1 -- *.patch | grep -v -- '-0000-cover-letter.patch$\|^0000-cover-letter.patch$') >"$TOP/series"
tgit rev-parse series >"$BUILD/series.head"
say "export: $n patches, $(head -1 "$TOP/series") .. $(tail -1 "$TOP/series")"
