#!/bin/bash
# The workbench's own failure paths: each must stop with a clear one-line
# reason and lose nothing.  Prints ok/not ok lines.
. "$(dirname "$0")/lib.sh"
set +e
tmp=$(mktemp -d -p "$BUILD"); trap 'rm -rf "$tmp"' EXIT
expect() { # expect NAME PATTERN CMD...: CMD fails and says PATTERN
	local name=$1 pat=$2; shift 2
	local out
	out=$("$@" 2>&1) && { echo "not ok workbench/$name # succeeded"; return; }
	if echo "$out" | grep -qE "$pat"; then
		echo "ok workbench/$name # $(echo "$out" | grep -E "$pat" | head -1)"
	else
		echo "not ok workbench/$name # said: $(echo "$out" | tail -1)"
	fi
}

head -c 4096 /dev/urandom >"$tmp/corrupt.tar.xz"
expect corrupt-tarball 'sha256 [0-9a-f]+, expected' \
	env BUILD="$tmp/b" LINUX_SRC_TARBALL="$tmp/corrupt.tar.xz" "$TOP/scripts/base.sh"
expect missing-tarball 'no such file' \
	env BUILD="$tmp/b" LINUX_SRC_TARBALL="$tmp/none.tar.xz" "$TOP/scripts/base.sh"

# A patch whose context is not in tun.c: apply names it and the file, and
# the series branch is left where it was.
before=$(tgit rev-parse series)
cat >"$tmp/0001-bad.patch" <<'EOP'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Workbench Test <test@example.invalid>
Date: Sun, 1 Nov 2026 00:00:00 +0000
Subject: [PATCH net-next] tun: a hunk whose context is not there

---
 drivers/net/tun.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/drivers/net/tun.c b/drivers/net/tun.c
--- a/drivers/net/tun.c
+++ b/drivers/net/tun.c
@@ -1,3 +1,4 @@
 this line is not in tun.c
+/* nor is this one */
 neither is this
 or this
-- 
2.39.5
EOP
echo 0001-bad.patch >"$tmp/series"
expect bad-patch '0001-bad.patch does not apply.*drivers/net/tun.c' \
	env SERIES="$tmp/series" PATCHES="$tmp" FORCE=1 "$TOP/scripts/apply.sh"
[ "$(tgit rev-parse series)" = "$before" ] && echo "ok workbench/bad-patch-keeps-branch" ||
	echo "not ok workbench/bad-patch-keeps-branch # series moved"

# A v2 export: versioned subjects, the cover letter's changelog, and the
# patch's own note below its "---".
subj=$(tgit log -1 --format=%s "$(tgit rev-list --reverse base..series | head -1)")
printf 'v2:\n- %s: a change to this patch\n- a change to the series\n' "$subj" >"$tmp/changelog"
if CHANGELOG=$tmp/changelog EXPORT_DIR=$tmp/v2 V=2 "$TOP/scripts/export.sh" 2>/dev/null &&
	grep -q '^Subject: \[PATCH net-next v2 1/' "$tmp"/v2/v2-0001-*.patch &&
	grep -q '^- a change to the series$' "$tmp"/v2/v2-0000-cover-letter.patch &&
	sed -n '/^---$/,/^diff /p' "$tmp"/v2/v2-0001-*.patch | grep -q 'v2: a change to this patch$'; then
	echo "ok workbench/export-v2"
else
	echo "not ok workbench/export-v2 # no v2 subjects, cover changelog or patch note in $tmp/v2"
fi

expect hung-guest 'hung: killed after 15s' \
	"$TOP/scripts/guest.sh" -k base -m tcg -t 15 -o "$tmp/g1" -- sleep 600
expect guest-splat 'kernel splat in console' \
	"$TOP/scripts/guest.sh" -k base -m tcg -t 60 -o "$tmp/g2" -- sh -c 'echo c >/proc/sysrq-trigger'
"$TOP/scripts/guest.sh" -k base -m tcg -t 60 -o "$tmp/g3" -- sh -c 'exit 3' >/dev/null 2>&1
st=$?
[ $st = 3 ] && echo "ok workbench/guest-exit-status" ||
	echo "not ok workbench/guest-exit-status # guest command exited 3, guest.sh $st"
