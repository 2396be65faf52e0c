#!/bin/bash
# kunit.sh [GUEST_FOLDER]: the series' KUnit tests (net_core,
# CONFIG_NET_TEST), built into the debug kernel and run at its boot
# (kernel-config/debug.config); one "ok"/"not ok"/"skip" line a test case,
# from the tree's own tools/testing/kunit/kunit.py parsing the suite's
# KTAP.  It boots the debug kernel for them, or reads them from
# GUEST_FOLDER, a debug guest's that scripts/guest.sh booted with
# GUEST_APPEND=$KUNIT_APPEND (make test: the selftest-debug guest, whose
# verdict that step gives).
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || die "usage: kunit.sh [GUEST_FOLDER]"
out=$BUILD/kunit guest=0 dir=${1:-}
[ -z "$dir" ] || [ -d "$dir" ] || { echo "not ok kunit # no guest folder $dir"; exit 1; }
rm -rf "$out"; mkdir -p "$out"
if [ -z "$dir" ]; then
	img=$(kout debug)/arch/x86/boot/bzImage
	[ -f "$img" ] || { echo "not ok kunit # no debug kernel at $img: run 'make build KERNELS=debug'"; exit 1; }
	dir=$out/guest
	GUEST_APPEND=$KUNIT_APPEND "$TOP/scripts/guest.sh" -k debug -o "$dir" \
		-- true >"$out/guest.log" 2>&1 || guest=1
	# A splat after the tests ran still leaves their results to report.
	[ $guest = 0 ] || echo "not ok kunit/guest # $(grep -m1 '^guest' "$out/guest.log") (logs: $out)"
fi
ktap=$dir/kunit/$KUNIT_SUITE.ktap
[ -f "$ktap" ] || { echo "not ok kunit # no $KUNIT_SUITE KTAP from the debug guest (booted without $KUNIT_APPEND? logs: $dir)"; exit 1; }
cp "$ktap" "$out/ktap"
# parse exits 1 unless the run succeeded, all-skipped included: the cases'
# statuses below decide.
python3 "$TREE/tools/testing/kunit/kunit.py" parse --json="$out/kunit.json" \
	"$out/ktap" >"$out/parse.log" 2>&1 || true
[ -s "$out/kunit.json" ] || { echo "not ok kunit # kunit.py parse: $(tail -n 1 "$out/parse.log")"; exit 1; }
# Leaf cases by their path (suite/test/parameter); the series' own must be
# there and pass, so that losing or skipping them cannot pass.
python3 - "$out/kunit.json" "$guest" <<'PY'
import json, sys
status = {"PASS": "ok", "SKIP": "skip"}
lines = []
def walk(group, path):
    for case in group["test_cases"]:
        lines.append(f'{status.get(case["status"], "not ok")} kunit/{path}{case["name"]}')
    for sub in group["sub_groups"]:
        walk(sub, f'{path}{sub["name"]}/')
walk(json.load(open(sys.argv[1])), "")
for want in ("net_core/probe_test_run/", "net_core/probe_test_keeps_header"):
    if not any(l.startswith(f"ok kunit/{want}") for l in lines):
        lines.append(f"not ok kunit/{want.rstrip('/')} # not run, or skipped")
print("\n".join(lines))
bad = any(l.startswith("not ok") for l in lines)
sys.exit(1 if bad or int(sys.argv[2]) else 0)
PY
