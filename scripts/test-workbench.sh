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

# A make test step that printed no result line checked nothing: it
# fails, whatever its exit status.
got=$(log=$tmp/steps.log times=$tmp/steps.times; : >"$log"
	. "$TOP/scripts/steps.sh"; run quiet true >/dev/null 2>&1; cat "$log")
if [ "$got" = "not ok quiet # printed no result (exit status 0)" ]; then
	echo "ok workbench/step-no-result # $got"
else
	echo "not ok workbench/step-no-result # ${got:-no line}"
fi

head -c 4096 /dev/urandom >"$tmp/corrupt.tar.xz"
expect corrupt-tarball 'sha256 [0-9a-f]+, expected' \
	env BUILD="$tmp/b" LINUX_SRC_TARBALL="$tmp/corrupt.tar.xz" "$TOP/scripts/base.sh"
expect missing-tarball 'no such file' \
	env BUILD="$tmp/b" LINUX_SRC_TARBALL="$tmp/none.tar.xz" "$TOP/scripts/base.sh"

expect fuzz-bad-seed "not a decimal number: '0x10'" \
	"$TOP/scripts/fuzz.sh" -s 0x10
expect drops-unknown-series 'STACK=rx-list: drops.sh knows the selftests of' \
	env STACK=rx-list "$TOP/scripts/drops.sh"
expect drops-lockdep-release 'STACK=napi-lockdep: what it fixes is a lockdep report' \
	env STACK=napi-lockdep "$TOP/scripts/drops.sh"
expect drops-cut-below 'CUT=accounting: the stack cut after accounting does not hold series vhost-tx' \
	env STACK=vhost-tx CUT=accounting "$TOP/scripts/drops.sh"
expect drops-alone-and-cut 'ALONE=1 and CUT=wakeup: one or the other' \
	env STACK=route-hint ALONE=1 CUT=wakeup "$TOP/scripts/drops.sh"
expect kunit-no-guest "no guest folder $tmp/none" "$TOP/scripts/kunit.sh" "$tmp/none"
# The series' own KUnit cases skipped (no BPF in that kernel, say)
# tested nothing: they must pass.
mkdir -p "$tmp/kg/kunit"
cat >"$tmp/kg/kunit/$KUNIT_SUITE.ktap" <<EOF
KTAP version 1
1..1
    KTAP version 1
    # Subtest: $KUNIT_SUITE
    1..3
        KTAP version 1
        # Subtest: probe_test_run
        ok 1 tcp # SKIP no BPF
    ok 1 probe_test_run # SKIP
    ok 2 probe_test_keeps_header # SKIP no BPF
    ok 3 other_test
ok 1 $KUNIT_SUITE
EOF
expect kunit-skipped "not ok kunit/$KUNIT_SUITE/probe_test_run # not run, or skipped" \
	"$TOP/scripts/kunit.sh" "$tmp/kg"
expect coverage-args 'usage: coverage.sh' "$TOP/scripts/coverage.sh" extra
# a profile's table names the tree it measured: not one of a bare bzImage
mkdir -p "$tmp/img/arch/x86/boot" && : >"$tmp/img/arch/x86/boot/bzImage"
expect profile-bzimage-table 'o x: a table names the tree it measured' \
	"$TOP/scripts/profile.sh" -k "$tmp/img/arch/x86/boot/bzImage" -o x -- ./vhost
expect rt-args 'usage: rt.sh' "$TOP/scripts/rt.sh" extra
expect bench-alone-needs-stack 'ALONE=1 needs STACK=NAME' \
	env -u STACK ALONE=1 "$TOP/scripts/bench.sh" s001
expect bench-each-needs-stack 'EACH=1 needs STACK=NAME' \
	env -u STACK EACH=1 "$TOP/scripts/bench.sh" s001
mkdir -p "$tmp/lock"
expect bench-stack-in-use 'the stack tree .* is in use by another run' \
	flock -n "$tmp/lock/stack.lock" env -u STACK_HELD BUILD="$tmp/lock" STACK=accounting \
	"$TOP/scripts/bench.sh" s002
expect fuzz-stack-in-use 'the stack tree .* is in use by another run' \
	flock -n "$tmp/lock/stack.lock" env -u STACK_HELD BUILD="$tmp/lock" \
	"$TOP/scripts/fuzz.sh" -k stack
expect bench-each-or-alone 'ALONE=1 and EACH=1: one or the other' \
	env STACK=rx-list ALONE=1 EACH=1 "$TOP/scripts/bench.sh" s001

# Bad input is refused before any work: before a kernel is built or a guest
# booted, and, from make, before the base is fetched.
expect bench-unknown-scenario 'SCENARIO=s009: no such scenario \(all s000 ' \
	env BUILD="$tmp/none" "$TOP/scripts/bench.sh" s009
expect bench-unknown-stack 'STACK=bogus: no such series in ' \
	env BUILD="$tmp/none" STACK=bogus "$TOP/scripts/bench.sh" s002
expect send-unknown-send 'SEND=relfect: 1, reflect, or unset' \
	env BUILD="$tmp/none" SEND=relfect "$TOP/scripts/send.sh"
expect make-unknown-stack 'STACK=bogus: no such series in ' \
	make -C "$TOP" bench STACK=bogus BUILD="$tmp/none"
expect make-unknown-scenario 'SCENARIO=s009: no such scenario' \
	make -C "$TOP" bench SCENARIO=s009 BUILD="$tmp/none"
expect make-unknown-kernel "KERNEL=serie: no such kernel \\(base series " \
	make -C "$TOP" fuzz KERNEL=serie BUILD="$tmp/none"
expect make-unknown-kernels "KERNELS=base sereis: no kernel 'sereis'" \
	make -C "$TOP" build KERNELS="base sereis" BUILD="$tmp/none"
expect make-unknown-mode 'MODE=kmv: icount, kvm or native' \
	make -C "$TOP" bench MODE=kmv BUILD="$tmp/none"
expect make-unknown-run 'RUN=bsae: base or series' \
	make -C "$TOP" bench MODE=native RUN=bsae BUILD="$tmp/none"
# the scenarios SCENARIO is checked against are the ones bench/run.sh runs
d=$(diff <(sed -nE 's/^([a-z0-9-]+)\)[[:space:]].*/\1/p' "$TOP/bench/run.sh" | sort) \
	<(tr ' ' '\n' <<<"$BENCH_SCENARIOS" | sort) | grep '^[<>]' | tr '\n' ' ')
[ -z "$d" ] && echo "ok workbench/bench-scenarios-known" ||
	echo "not ok workbench/bench-scenarios-known # bench/run.sh (<) against lib.sh (>): $d"
[ ! -e "$tmp/none" ] && echo "ok workbench/refused-before-work" ||
	echo "not ok workbench/refused-before-work # $(find "$tmp/none" | head -3 | tr '\n' ' ')"
# A bad `series`: every script stops on it with its line, before a cycle
# can send needs_closure round it without end.
mkdir -p "$tmp/top"
cp -r "$TOP/scripts" "$tmp/top/"
bad_series() { # bad_series NAME PATTERN LINES: a `series` of LINES
	printf '%s\n' "${@:3}" >"$tmp/top/series"
	expect "series-$1" "$2" timeout 20 env BUILD="$tmp/none" \
		bash -c '. "$1"; needs_closure b' - "$tmp/top/scripts/lib.sh"
}
bad_series cycle 'series, line 1: series a needs b, which is not a series above' \
	'a net b' 'b net-next a'
bad_series misspelt-need 'line 2: series b needs acounting, which is not' \
	'accounting net' 'b net-next acounting'
bad_series unknown-tree 'line 2: series b: tree net-nxt is not net or net-next' \
	'a net' 'b net-nxt a'
bad_series twice 'line 3: series a twice' 'a net' 'b net a' 'a net-next'

# A figure a commit message changes, or a results file it names that is
# not there: make check's figures check says which.
mkdir -p "$tmp/fig/wakeup"
p=$(ls "$TOP"/patches/wakeup/*-tun-wake-the-reader-once-per-transmit-burst.patch)
f=$(grep -m1 -oE '[0-9][0-9,]* -> [0-9][0-9,]*  \([+-][0-9.]+%\)' "$p")
sed "s/$f/9${f}/" "$p" >"$tmp/fig/wakeup/changed.patch"
sed 's|results/s003.md|results/none.md|g' "$p" >"$tmp/fig/wakeup/unnamed.patch"
expect figures-changed "9${f%% *} -> .* is in no table of results/s003.md" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/wakeup/changed.patch"
expect figures-no-file 'results/none.md: no such file' \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/wakeup/unnamed.patch"
# A figure of another row of the table it names: rx-frames 32 quoting the
# figures of another rx-frames row, the first whose figures are not row
# 32's own (two rows can measure the same).
mkdir -p "$tmp/fig/rx-list"
p=$(ls "$TOP"/patches/rx-list/*-tun-hand-rx-batched-skbs-to-the-stack-as-a-list.patch)
t=$TOP/results/each-rx-list/s002-2.md
r32=$(grep -m1 '^| msg_more rx-frames 32 |' "$t" | cut -d'|' -f3-5 | tr -d ' ')
read -r b s c < <(grep '^| msg_more rx-frames [0-9]* |' "$t" | cut -d'|' -f3-5 | tr -d ' ' |
	grep -vxF "$r32" | head -1 | tr '|' ' ')
sed -E "s/^(  rx-frames 32: +)[0-9,]+ -> +[0-9,]+ +\([^)]*\)/\1$b -> $s  ($c)/" "$p" >"$tmp/fig/rx-list/wrong-row.patch"
expect figures-wrong-row "$b -> $s \(${c//+/\\+}\) \(a row of 32\) is in no table" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/rx-list/wrong-row.patch"
# rx-frames 64 quoting the iotlb row's figures: the numbers of the
# label are the iotlb row's too, but "rx-frames 64" picks the row that
# says least beside it, msg_more's.
read -r b s c < <(grep '^| iotlb msg_more rx-frames 64 |' "$t" | cut -d'|' -f3-5 | tr '|' ' ')
sed -E "s/^(  rx-frames 64: +)[0-9,]+ -> +[0-9,]+ +\([^)]*\)/\1$b -> $s  ($c)/" "$p" >"$tmp/fig/rx-list/wrong-words.patch"
expect figures-wrong-words "$b -> $s \(${c//+/\\+}\) \(a row of 64\) is in no table" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/rx-list/wrong-words.patch"
# A counted run whose case got no packets (a stalled boot): report.py says
# so in one line and writes nothing, where it divided by zero.
mkdir -p "$tmp/zero/s003/base-1" "$tmp/zero/s003/series-1" "$tmp/zero/out"
printf '%s\n' '{"case":"gso 32 segs, read (counted)","result":{"packets":0}}' \
	'{"case":"gso 32 segs, read","count":{"tun_net_xmit":3}}' |
	tee "$tmp/zero/s003/series-1/results.jsonl" >"$tmp/zero/s003/base-1/results.jsonl"
expect report-no-packets "counted run of 'gso 32 segs, read' got no packets" \
	/usr/bin/python3 "$TOP/scripts/report.py" --runs "$tmp/zero" --mode icount \
	--command "make bench SCENARIO=s003" --out "$tmp/zero/out" s003
[ -z "$(ls "$tmp/zero/out")" ] || echo "not ok workbench/report-no-packets-wrote # $(ls "$tmp/zero/out")"
# A bench table a cover letter carries that was made at other code than the
# command measures now (here base's), or that names no tree: the check
# says so, and to make it again.
mkdir -p "$tmp/fig/transport-header"
c=$(ls "$TOP"/patches/transport-header/*-cover-letter.patch)
sed "s/(tree [0-9a-f]*)/(tree $(tgit rev-parse --short base^{tree}))/" "$c" \
	>"$tmp/fig/transport-header/stale.patch"
sed 's/ (tree [0-9a-f]*)//' "$c" >"$tmp/fig/transport-header/no-tree.patch"
expect figures-stale 'made at tree [0-9a-f]+, which `make bench [^`]*ALONE=1` does not measure today: make it again' \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/transport-header/stale.patch"
expect figures-no-tree '`make bench [^`]*` names no tree: make it again' \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/transport-header/no-tree.patch"
# make check names the patches, not their cover letter: the check finds it.
mkdir -p "$tmp/fig/th"
cp "$TOP"/patches/transport-header/*.patch "$tmp/fig/th"
cp "$tmp/fig/transport-header/stale.patch" "$tmp/fig/th/$(basename "$c")"
expect figures-letter-beside 'th/[^ ]*cover-letter.patch # made at tree' \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp"/fig/th/*-0002-*.patch
# An EACH=1 table whose patch side names the tree below the series: each
# side must be its own point's.
c=$(ls "$TOP"/patches/wakeup/*-cover-letter.patch)
b=$(grep -oE '\(tree [0-9a-f]+\), the stack below' "$c" | head -1 | grep -oE '[0-9a-f]{7,}')
sed "s/(tree [0-9a-f]*), patch 1\./(tree $b), patch 1./" "$c" >"$tmp/fig/wakeup/each.patch"
expect figures-each-side "made at tree $b, which \`make bench [^\`]*EACH=1\` does not measure today" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/wakeup/each.patch"
# The same for make drops' table (the cut's tree), make profile-lists'
# and make robustness' (base's, then the series').
mkdir -p "$tmp/fig/accounting"
c=$(ls "$TOP"/patches/accounting/*-cover-letter.patch)
b=$(tgit rev-parse --short base^{tree})
sed "/make drops/s/(tree [0-9a-f]*)/(tree $b)/" "$c" >"$tmp/fig/accounting/stale.patch"
expect figures-drops-stale "made at tree $b, which \`make drops\` does not measure today" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/accounting/stale.patch"
printf 'Subject: lists\n\nGenerated by `make profile-lists` on base (tree %s) and series (tree %s).\n' \
	"$b" "$b" >"$tmp/fig/accounting/lists.patch"
expect figures-lists-stale "made at tree $b, which \`make profile-lists\` does not measure today" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/accounting/lists.patch"
printf 'Subject: robustness\n\nGenerated by `make robustness` on base (tree %s) and series (tree %s);\n' \
	"$b" "$b" >"$tmp/fig/accounting/robust.patch"
expect figures-robust-stale "made at tree $b, which \`make robustness\` does not measure today" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/accounting/robust.patch"
# and the tables of scripts/profile.sh, make check (bloat.md) and make
# fuzz, each kernel's code in turn (figures.py --results checks each file
# under results/ so)
printf 'Subject: profile\n\nGenerated by `scripts/profile.sh -k series -o x -- ./vhost` on series (tree %s).\n' \
	"$b" >"$tmp/fig/accounting/profile.patch"
expect figures-profile-stale "made at tree $b, which \`scripts/profile.sh -k series" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/accounting/profile.patch"
printf 'Subject: bloat\n\nGenerated by `make check` (scripts/check.sh); the series at "x" (tree %s).\n' \
	"$b" >"$tmp/fig/accounting/bloat.patch"
expect figures-check-stale "made at tree $b, which \`make check\` does not measure today" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/accounting/bloat.patch"
printf 'Subject: fuzz\n\n%s\n\n%s (tree %s); debug (no KCOV): series x (tree %s).\n' \
	'Generated by `make fuzz FUZZ_ARGS="... -r"` (scripts/fuzz.sh -r,' \
	'The code of each kernel: base-debug (no KCOV): base x' "$b" "$b" >"$tmp/fig/accounting/fuzz.patch"
expect figures-fuzz-stale "# debug \(no KCOV\) ran tree $b, which \`make fuzz\` does not run today" \
	/usr/bin/python3 "$TOP/scripts/figures.py" "$tmp/fig/accounting/fuzz.patch"

# cover-letter.txt is what make export makes of letters/ and results/ now
if /usr/bin/python3 "$TOP/scripts/overview.py" --out "$tmp/overview.txt" $BENCH_SCENARIOS \
	2>"$tmp/overview.err" &&
	cmp -s "$tmp/overview.txt" "$TOP/cover-letter.txt"; then
	echo "ok workbench/overview-current"
else
	echo "not ok workbench/overview-current # $(tail -1 "$tmp/overview.err")$(diff "$TOP/cover-letter.txt" "$tmp/overview.txt" 2>&1 | head -2 | tr '\n' ' '): make export"
fi

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
first=$(stack_names | head -1)
mkdir -p "$tmp/p/$first"
mv "$tmp/0001-bad.patch" "$tmp/p/$first/"
echo 0001-bad.patch >"$tmp/p/$first/series"
expect bad-patch "$first/0001-bad.patch does not apply.*drivers/net/tun.c" \
	env PATCHES="$tmp/p" FORCE=1 "$TOP/scripts/apply.sh"
[ "$(tgit rev-parse series)" = "$before" ] && echo "ok workbench/bad-patch-keeps-branch" ||
	echo "not ok workbench/bad-patch-keeps-branch # series moved"

# A v3 export of the first series: versioned subjects, the cover letter's
# changelog, and the patch's own note below its "---".
subj=$(tgit log -1 --format=%s "$(tgit rev-list --reverse "base..stack/$first" | head -1)")
printf 'v3:\n- %s: a change to this patch\n- a change to the series\n' "$subj" >"$tmp/changelog"
if SERIES=$first CHANGELOG=$tmp/changelog EXPORT_DIR=$tmp/v3 V=3 "$TOP/scripts/export.sh" 2>/dev/null &&
	grep -q "^Subject: \[PATCH $(series_tree "$first") v3 1/" "$tmp/v3/$first"/v3-0001-*.patch &&
	grep -q '^- a change to the series$' "$tmp/v3/$first"/v3-0000-cover-letter.patch &&
	sed -n '/^---$/,/^diff /p' "$tmp/v3/$first"/v3-0001-*.patch | grep -q 'v3: a change to this patch$'; then
	echo "ok workbench/export-v3"
else
	echo "not ok workbench/export-v3 # no v3 subjects, cover changelog or patch note in $tmp/v3/$first"
fi

# make send refuses the patches' neutral identity, as the sender.
neutral=$(sed -n 's/^neutral: //p' "$TOP/MAINTAINERS-notes")
printf '[user]\n\tname = %s\n\temail = %s\n' "${neutral% <*}" \
	"$(echo "$neutral" | sed 's/.*<\(.*\)>/\1/')" >"$tmp/gitconfig"
expect send-neutral-identity "the sender is the patches' neutral identity" \
	env GIT_CONFIG_GLOBAL="$tmp/gitconfig" GIT_CONFIG_NOSYSTEM=1 SENDER= "$TOP/scripts/send.sh"
expect send-bad-identity "is not 'Name <address>'" env SENDER=nobody "$TOP/scripts/send.sh"
# and a patch that does not say a coding assistant helped write it
na=$tmp/no-assisted
mkdir -p "$na/patches"
cp -r "$TOP/scripts" "$TOP/series" "$TOP/MAINTAINERS-notes" "$na/"
cp -r "$TOP/patches/rmnet-ack" "$na/patches/"
sed -i '/^Assisted-by: /d' "$na/patches/rmnet-ack/"*.patch
expect send-no-assisted-by "0001-.*carries no Assisted-by: tag" \
	env BUILD="$tmp/none" SENDER="T <t@t.invalid>" SERIES=rmnet-ack "$na/scripts/send.sh"

# A review thread saved as an mbox: the last series' mails, a Reviewed-by
# on its second patch (and a quoted Tested-by that is no one's), an
# Acked-by on its cover letter, and a Tested-by in a reply to a reply to
# its first patch.  The trailers must land on those patches of a copy of
# the build tree, with the stack's branches kept, and in its export.
last=$(stack_names | tail -1)
tb=$tmp/tb/series/linux
git clone -q --shared --no-checkout "$TREE" "$tb"
git -C "$tb" sparse-checkout set --no-cone /README
# The clone's own branch is the series branch, the checked-out one.
for n in $(stack_names); do git -C "$tb" branch -q -f "stack/$n" "origin/stack/$n"; done
git -C "$tb" checkout -q series
/usr/bin/python3 - "$TOP/patches/$last" "$tmp/thread.mbox" <<'EOP'
import glob, os, sys
d, out = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(d, "*.patch")))
mails = []
def msg(mid, reply, subject, body, frm="Test Reviewer <reviewer@example.invalid>"):
    h = [f"From: {frm}", f"Subject: {subject}", f"Message-ID: <{mid}@test>"]
    if reply:
        h += [f"In-Reply-To: <{reply}@test>", f"References: <c0@test> <{reply}@test>"]
    return "From mboxrd@z Thu Jan  1 00:00:00 1970\n" + "\n".join(h) + "\n\n" + body + "\n"
for i, f in enumerate(files):
    text = open(f).read().split("\n", 1)[1]
    head, body = text.split("\n\n", 1)
    head = "\n".join(l for l in head.split("\n") if not l.startswith("Message-ID"))
    ref = "" if i == 0 else "\nIn-Reply-To: <c0@test>\nReferences: <c0@test>"
    mails.append("From mboxrd@z Thu Jan  1 00:00:00 1970\n" + head +
                 f"\nMessage-ID: <c{i}@test>" + ref + "\n\n" + body)
subj = lambda i: "Re: " + [l for l in open(files[i]).read().split("\n")
                           if l.startswith("Subject: ")][0][9:]
mails.append(msg("r2", "c2", subj(2), "> Tested-by: Quoted Tester <quoted@example.invalid>\n\n"
                 "Reviewed-by: Test Reviewer <reviewer@example.invalid>"))
mails.append(msg("r0", "c0", subj(0), "Acked-by: Test Maintainer <maintainer@example.invalid>",
                 "Test Maintainer <maintainer@example.invalid>"))
mails.append(msg("r1", "c1", subj(1), "A question."))
mails.append(msg("r1b", "r1", subj(1), "Tested-by: Test Runner <runner@example.invalid>",
                 "Test Runner <runner@example.invalid>"))
open(out, "w").write("".join(mails))
EOP
if BUILD=$tmp/tb "$TOP/scripts/trailers.sh" "$tmp/thread.mbox" >/dev/null 2>"$tmp/tr.log"; then
	mapfile -t lc < <(git -C "$tb" rev-list --reverse "origin/stack/$(stack_names | tail -2 | head -1)..series")
	has() { git -C "$tb" log -1 --format=%B "$1" | grep -qxF "$2"; }
	ack="Acked-by: Test Maintainer <maintainer@example.invalid>"
	bad=
	has "${lc[0]}" "Tested-by: Test Runner <runner@example.invalid>" || bad+=" patch 1 has no Tested-by;"
	has "${lc[1]}" "Reviewed-by: Test Reviewer <reviewer@example.invalid>" || bad+=" patch 2 has no Reviewed-by;"
	for c in "${lc[@]}"; do has "$c" "$ack" || bad+=" $(git -C "$tb" log -1 --format=%s "$c" | cut -c1-30) has no Acked-by;"; done
	git -C "$tb" log --format=%B "base..series" | grep -q 'Quoted Tester' && bad+=" a quoted trailer landed;"
	has "${lc[0]}" "Reviewed-by: Test Reviewer <reviewer@example.invalid>" && bad+=" patch 1 took patch 2's Reviewed-by;"
	[ "$(git -C "$tb" rev-parse "stack/$last")" = "$(git -C "$tb" rev-parse series)" ] || bad+=" stack/$last left behind;"
	SERIES=$last BUILD=$tmp/tb EXPORT_DIR=$tmp/tbx "$TOP/scripts/export.sh" 2>/dev/null
	grep -qxF "$ack" "$tmp/tbx/$last"/*0001-*.patch || bad+=" the export lost them;"
	[ -z "$bad" ] && echo "ok workbench/trailers-from-thread" ||
		echo "not ok workbench/trailers-from-thread #$bad"
else
	echo "not ok workbench/trailers-from-thread # $(tail -1 "$tmp/tr.log")"
fi

expect hung-guest 'hung: killed after 15s' \
	"$TOP/scripts/guest.sh" -k base -m tcg -t 15 -o "$tmp/g1" -- sleep 600
expect guest-splat 'kernel splat in console' \
	"$TOP/scripts/guest.sh" -k base -m tcg -t 60 -o "$tmp/g2" -- sh -c 'echo c >/proc/sysrq-trigger'
# What guest.sh's console scan fails a guest on: a task hung in D state
# (hung_task's line; its trace is KERN_INFO, below loglevel=5) and an RCU
# stall, as a debug kernel prints them, and not a clean boot's console.
printf '%s\r\n' '[  123.456789] INFO: task kworker/0:1:17 blocked for more than 122 seconds.' \
	'[  123.456800]       Not tainted 7.3.0-rc7+ #1' >"$tmp/hung.console"
printf '%s\r\n' '[   61.000001] rcu: INFO: rcu_preempt self-detected stall on CPU' >"$tmp/stall.console"
bad=
for c in hung stall; do
	[ -n "$(console_splat "$tmp/$c.console")" ] || bad+=" the $c console passed;"
done
[ -s "$tmp/g1/console" ] && [ -z "$(console_splat "$tmp/g1/console")" ] ||
	bad+=" a clean boot's console (g1) failed;"
[ -z "$bad" ] && echo "ok workbench/console-hung-task" || echo "not ok workbench/console-hung-task #$bad"
# A quick try often starts in /tmp, which the guest mounts a tmpfs over:
# a checkout there must still be what the guest sees.
tc=$(mktemp -d /tmp/workbench.XXXXXX)
git clone -q "$TOP" "$tc/main"
if BUILD=$tmp/tcb "$tc/main/scripts/guest.sh" -k "$(kout base)/arch/x86/boot/bzImage" -m tcg -t 60 \
	-o "$tmp/g4" -- sh -c "cd $tc/main && test -f README && test -w /tmp" >/dev/null 2>"$tmp/g4.log"; then
	echo "ok workbench/checkout-under-tmp"
else
	echo "not ok workbench/checkout-under-tmp # $(tail -1 "$tmp/g4.log")"
fi
rm -rf "$tc"
# A robustness case whose generator sends nothing, or fails, fails:
# sent = read = lost = 0 tested nothing.  And one whose readers read
# more than was sent fails as overcounted, not as lost 0, and for that
# alone (its qdisc's drops were read: a <(...) finds no /dev/fd in the
# guest).  (bench/ copied: its gso sends nothing and exits 0 the first
# time, exits 3 the next, then sends 10; its reader reads nothing twice,
# then 20.  A clean checkout has not built them yet: rm, and chmod.)  A
# malformed-input case takes the tap's frame errors from the driver's
# counts, over the same span as its other counts: its vhost reports 3 of
# 10 frames as frame errors, which the tap itself never shows (lost 0,
# not 3).  A case whose ledger misses a term fails, where it read as
# lost 0: that vhost prints no "received" for rx-frames-churn.  And a
# case that wrote no line (an unknown one) fails the run, wherever it
# stands.
rb=$tmp/rbench
cp -r "$TOP/bench" "$rb"
rm -f "$rb/gso" "$rb/reader" "$rb/vhost"
cat >"$rb/vhost" <<'EOF2'
#!/bin/bash
echo '{"packets":10,"tap_rx_packets":4,"tap_rx_dropped":3,"tap_rx_frame_errors":3,"kept_from_vhost":0}'
EOF2
# $n: how many times the stand-in ran before, counted in the guest's /tmp
cat >"$rb/gso" <<'EOF2'
#!/bin/bash
n=$(cat /tmp/gso.n 2>/dev/null || echo 0); echo $((n + 1)) >/tmp/gso.n
case $n in 0) ;; 1) exit 3 ;; *) echo '{"packets":10}' ;; esac
EOF2
cat >"$rb/reader" <<'EOF2'
#!/bin/bash
for a; do [ "$p" = --ready ] && touch "$a"; p=$a; done
n=$(cat /tmp/reader.n 2>/dev/null || echo 0); echo $((n + 1)) >/tmp/reader.n
if [ "$n" -ge 2 ]; then echo '{"packets":20}'; else echo '{"packets":0}'; fi
EOF2
chmod +x "$rb/gso" "$rb/reader" "$rb/vhost"
"$TOP/scripts/guest.sh" -k base -m tcg -t 180 -o "$tmp/g5" -- \
	"$rb/robust.sh" 10 0 txqlen-churn reader-stall reader-stall malformed-vhost-xdp_batch \
	no-such-case rx-frames-churn >"$tmp/g5.log" 2>&1
st=$?
got=$(jq -r '"\(.case) \(.ok) \(.lost) \(.overcounted) \(.note)"' "$tmp/g5/robustness.jsonl" 2>/dev/null)
if grep -q '^txqlen-churn false .*the generator sent nothing' <<<"$got" &&
	grep -q '^reader-stall false .*the generator exited 3' <<<"$got"; then
	echo "ok workbench/robust-sent-nothing # $(head -2 <<<"$got" | tr '\n' ' ')"
else
	echo "not ok workbench/robust-sent-nothing # $(tr '\n' ' ' <<<"${got:-no case line: $(tail -1 "$tmp/g5.log")}")"
fi
if grep -qx 'reader-stall false 0 10 overcounted: 10 packets counted twice' <<<"$got"; then
	echo "ok workbench/robust-overcounted # $(grep '^reader-stall false 0 10 ' <<<"$got")"
else
	echo "not ok workbench/robust-overcounted # $(tr '\n' ' ' <<<"${got:-no case line: $(tail -1 "$tmp/g5.log")}")"
fi
if grep -q '^malformed-vhost-xdp_batch true 0 0 ' <<<"$got"; then
	echo "ok workbench/robust-frame-errors # $(grep '^malformed-vhost' <<<"$got")"
else
	echo "not ok workbench/robust-frame-errors # $(tr '\n' ' ' <<<"${got:-no case line: $(tail -1 "$tmp/g5.log")}")"
fi
if grep -q '^rx-frames-churn false 0 .*no .packets - .received' <<<"$got"; then
	echo "ok workbench/robust-ledger-term # $(grep '^rx-frames-churn' <<<"$got")"
else
	echo "not ok workbench/robust-ledger-term # $(tr '\n' ' ' <<<"${got:-no case line: $(tail -1 "$tmp/g5.log")}")"
fi
if [ $st != 0 ] && grep -q 'robust: no-such-case wrote no result' "$tmp/g5.log"; then
	echo "ok workbench/robust-case-unreported # exit status $st"
else
	echo "not ok workbench/robust-case-unreported # exit status $st: $(grep -m1 'no-such-case' "$tmp/g5.log")"
fi
"$TOP/scripts/guest.sh" -k base -m tcg -t 60 -o "$tmp/g3" -- sh -c 'exit 3' >/dev/null 2>&1
st=$?
[ $st = 3 ] && echo "ok workbench/guest-exit-status" ||
	echo "not ok workbench/guest-exit-status # guest command exited 3, guest.sh $st"

# fuzz-record.sh: runs of other seeds on the same code add up; one of the
# same seed, or of other code, takes the place of those before it, and
# leaves other kernels' records be.
fr=$tmp/fr
mkdir -p "$fr/scripts" "$fr/results" "$fr/out/run"
cp "$TOP"/scripts/{lib.sh,base.sha256,fuzz-record.sh} "$fr/scripts"
cp "$TOP/series" "$fr"	# lib.sh checks it
for k in debug coverage; do
	mkdir -p "$fr/b/$k/out/include/config"
	echo 7.3.0 >"$fr/b/$k/out/include/config/kernel.release"
done
touch "$fr/b/debug/out/.config"
echo CONFIG_KCOV=y >"$fr/b/coverage/out/.config"
git init -q "$fr/b/series/linux"
fr_git() { git -C "$fr/b/series/linux" -c user.name=t -c user.email=t@t.invalid "$@"; }
fr_commit() { echo "$1" >"$fr/b/series/linux/code"; fr_git add code; fr_git commit -q -m "$1"; }
fr_run() { # fr_run KERNEL SEED SEQUENCES [FINDING]: record a run of seed SEED
	local k=$1 s=$2 n=$3
	: >"$fr/out/run/output"
	# a run that crashed before the fuzzer reported has no line
	[ -n "${4:-}" ] || echo "{\"role\":\"fuzz\",\"seed\":$s,\"sequences\":$n,\"ops\":$((n * 20)),\"seconds\":10,\"ops_per_sec\":$((n * 2)),\"lives_checked\":1,\"handed\":0,\"read\":0,\"tx_dropped\":0,\"failures\":0}" \
		>"$fr/out/run/output"
	BUILD=$fr/b "$fr/scripts/fuzz-record.sh" "$k" "$fr/out" "${4:-}" "" "$s" "$n" 20 10 "" 2>/dev/null
}
fr_all() { # fr_all KERNEL: its seeds, sequences and findings in all
	grep "^| $1 |" "$fr/results/fuzz.md" |
		awk -F' [|] ' '{ sub(/ [|]$/, "", $8); print $4 "/" $5 "/" $8 }'; }
bad=
fr_commit one
fr_run coverage 1 30
fr_run debug 1 100; fr_run debug 2 50
[ "$(fr_all debug)" = "1 2/150/0" ] || bad+=" seeds 1 and 2 gave '$(fr_all debug)', not 150 sequences;"
fr_run debug 2 70
[ "$(fr_all debug)" = "1 2/170/0" ] || bad+=" seed 2 again gave '$(fr_all debug)', not 170;"
fr_run debug 3 0 "a crash"
[ "$(fr_all debug)" = "1 2 3/170/1" ] || bad+=" a crash in seed 3 gave '$(fr_all debug)', not a finding;"
fr_run debug 3 40
[ "$(fr_all debug)" = "1 2 3/210/0" ] || bad+=" seed 3 again gave '$(fr_all debug)', not 210 and no finding;"
fr_commit two
fr_run debug 4 10
[ "$(fr_all debug)" = "4/10/0" ] || bad+=" other code gave '$(fr_all debug)', not 10;"
[ "$(fr_all coverage)" = "1/30/0" ] || bad+=" the coverage kernel's record went: '$(fr_all coverage)';"
# A commit message reworded is the same code, for records that name their
# tree and for those from before, which name only a commit.
fr_git commit -q --amend -m "two, reworded"
fr_run debug 5 20
[ "$(fr_all debug)" = "4 5/30/0" ] || bad+=" a reworded commit gave '$(fr_all debug)', not 30;"
jq -c 'del(.tree)' "$fr/results/fuzz.jsonl" >"$fr/untreed" && mv "$fr/untreed" "$fr/results/fuzz.jsonl"
fr_git commit -q --amend -m "two, reworded again"
fr_run debug 6 5
[ "$(fr_all debug)" = "4 5 6/35/0" ] || bad+=" records without a tree gave '$(fr_all debug)', not 35;"
[ "$(jq -s '[.[] | select(.kernel == "debug" and .tree == null)] | length' "$fr/results/fuzz.jsonl")" = 0 ] ||
	bad+=" records kept without a tree;"
jq -c 'del(.tree)' "$fr/results/fuzz.jsonl" >"$fr/untreed" && mv "$fr/untreed" "$fr/results/fuzz.jsonl"
fr_commit three
fr_run debug 7 3
[ "$(fr_all debug)" = "7/3/0" ] || bad+=" records without a tree of other code gave '$(fr_all debug)', not 3;"
[ -z "$bad" ] && echo "ok workbench/fuzz-record-adds-up" ||
	echo "not ok workbench/fuzz-record-adds-up #$bad"

# make check's record is keyed on every input of its verdicts: a change
# to lib.sh or to the check kernel's config is a new key (check.sh --key),
# but where the checkout lies is not (a fresh clone elsewhere, with its
# own sparse wrapper, may use the record); a bad CHECK_PICK is refused
# before any build.
ck=$tmp/ck
git clone -q "$TOP" "$ck"
cp "$TOP/scripts/check.sh" "$TOP/scripts/lib.sh" "$ck/scripts/"
cp "$TOP"/kernel-config/*.config "$ck/kernel-config/"
bad=
k0=$(BUILD=$BUILD "$ck/scripts/check.sh" --key)
mkdir -p "$tmp/b2/sparse"
ln -s "$BUILD/sparse/root" "$tmp/b2/sparse/root"
sed "s|$BUILD/sparse|$tmp/b2/sparse|g" "$BUILD/sparse/sparse" >"$tmp/b2/sparse/sparse"
chmod +x "$tmp/b2/sparse/sparse"
kb=$(BUILD=$tmp/b2 "$ck/scripts/check.sh" --key)
[ "$kb" = "$k0" ] || bad+=" another build folder gave key '$kb', not '$k0';"
echo "# edited" >>"$ck/scripts/lib.sh"
k1=$(BUILD=$BUILD "$ck/scripts/check.sh" --key)
echo "# edited" >>"$ck/kernel-config/check.config"
k2=$(BUILD=$BUILD "$ck/scripts/check.sh" --key)
[ -n "$k0" ] && [ "$k0" != "$k1" ] || bad+=" lib.sh edited, key '$k1' unchanged;"
[ "$k1" != "$k2" ] || bad+=" check.config edited, key '$k2' unchanged;"
mkdir -p "$tmp/b3/sparse"
printf '#!/bin/sh\necho "libc.so.6: version GLIBC_2.38 not found" >&2\nexit 1\n' >"$tmp/b3/sparse/sparse"
chmod +x "$tmp/b3/sparse/sparse"
# kbuild prints CHECK before sparse runs: one that cannot run is refused
out=$(BUILD=$tmp/b3 "$ck/scripts/check.sh" --key 2>&1)
grep -q "sparse at $tmp/b3/sparse/sparse does not run: libc.so.6" <<<"$out" ||
	bad+=" a sparse that cannot run gave key '$out';"
out=$(CHECK_PICK=x "$TOP/scripts/check.sh" --changed 2>&1)
grep -q "CHECK_PICK=x: not a patch number" <<<"$out" && ! grep -q "^ok check/" <<<"$out" ||
	bad+=" CHECK_PICK=x gave: $(tail -1 <<<"$out");"
[ -z "$bad" ] && echo "ok workbench/check-key" || echo "not ok workbench/check-key #$bad"

# The stack, applied from patches/, must give the series branch: a patch
# left out of its series file fails check/stack-applies.
# --applies stops there, before the send dry run and the builds.
sa=$tmp/sa
mkdir -p "$sa"
cp -r "$TOP/scripts" "$TOP/patches" "$TOP/letters" "$TOP/results" "$TOP/series" \
	"$TOP/MAINTAINERS-notes" "$TOP/cover-letter.txt" "$sa/"
lastp=$(stack_names | tail -1)
sed -i '$d' "$sa/patches/$lastp/series"
out=$(BUILD=$BUILD "$sa/scripts/check.sh" --applies 2>&1); st=$?
if [ $st = 1 ] && tail -1 <<<"$out" |
	grep -qE "^not ok check/stack-applies # the patches applied on base do not give the series branch's tree ?$"; then
	echo "ok workbench/check-stack-applies # $(tail -1 <<<"$out")"
else
	echo "not ok workbench/check-stack-applies # exit status $st, said: $(tail -1 <<<"$out")"
fi

# A selftest whose every case skipped tested nothing: it fails, in its
# line and in the exit status run.sh takes from ktap.awk.
printf 'TAP version 13\n1..2\nok 1 rx # SKIP no /dev/vhost-net\nok 2 tx # SKIP no /dev/vhost-net\n' \
	>"$tmp/skipped.ktap"
expect selftest-all-skipped '^not ok series/tun_vhost # no test case ran' \
	awk -v pre=series/tun_vhost -f "$TOP/selftests/ktap.awk" "$tmp/skipped.ktap"

# The fuzzer's shrinker, against a stub guest
"$TOP/scripts/test-fuzz-shrink.sh"
