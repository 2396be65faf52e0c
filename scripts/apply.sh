#!/bin/bash
# Rebuild the series branch from base + patches/NAME/ of every series in
# `series`, bottom first, and point branch stack/NAME at each series' last
# commit.  Refuses to throw away kernel work that was never exported; names
# the patch and the file of the failing hunk when a patch does not apply.
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "no build tree: run 'make base' first"
stamp=$BUILD/series.head heads=$BUILD/stack.heads
if [ -z "${FORCE:-}" ]; then
	[ -z "$(tgit status --porcelain --untracked-files=no)" ] ||
		die "uncommitted changes in $TREE (commit and 'make export', or FORCE=1 to drop them)"
	last=
	for name in $(stack_names); do
		h=$(tgit rev-parse -q --verify "refs/heads/stack/$name" || true)
		[ -n "$h" ] && last=$h
		[ -z "$h" ] || [ ! -f "$heads/$name" ] || [ "$(cat "$heads/$name")" = "$h" ] ||
			die "series $name has commits not exported to patches/$name ('make export SERIES=$name', or FORCE=1 to drop them)"
	done
	[ -z "$last" ] || [ ! -f "$stamp" ] || [ "$last" = "$(tgit rev-parse series)" ] ||
		die "the series branch has commits above the stack's last series (move that stack/ branch, 'make export', or FORCE=1 to drop them)"
fi

# Apply on a scratch branch: a failure leaves the series branch as it was.
patches=${PATCHES:-$TOP/patches}
fail() {
	tgit am --abort 2>/dev/null || true
	tgit checkout -q -f series
	tgit branch -q -D series.apply
	die "$@"
}
tgit checkout -q -f -B series.apply base
n=0 tips=()
for name in $(stack_names); do
	list=$patches/$name/series
	[ -f "$list" ] || fail "series $name has no $list"
	while read -r p; do
		case $p in '' | '#'*) continue ;; esac
		[ -f "$patches/$name/$p" ] || fail "$list names $p, which is not in $patches/$name"
		if ! msg=$(tgit am -q --committer-date-is-author-date "$patches/$name/$p" 2>&1); then
			where=$(echo "$msg" | sed -n 's/^error: patch failed: //p; s/^error: \(.*\): does not exist in index/\1 (missing)/p' | head -1)
			fail "$name/$p does not apply to base + $n patches: ${where:-$(echo "$msg" | head -1)}"
		fi
		n=$((n + 1))
	done <"$list"
	tips+=("$name $(tgit rev-parse HEAD)")
done
tgit checkout -q -B series
tgit branch -q -D series.apply
# The stack's branches, only now that every series applied.
mkdir -p "$heads"
for t in "${tips[@]}"; do
	tgit branch -q -f "stack/${t% *}" "${t#* }"
	echo "${t#* }" >"$heads/${t% *}"
done
tgit rev-parse series >"$stamp"
say "apply: $n patches in ${#tips[@]} series on base ($(tgit log -1 --format=%h series))"
