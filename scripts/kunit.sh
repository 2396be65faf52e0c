#!/bin/bash
# make kunit: the series' KUnit tests (net_core, CONFIG_NET_TEST), built
# into the debug kernel and run at its boot (kernel-config/debug.config);
# one "ok"/"not ok"/"skip" line a test case, from the tree's own
# tools/testing/kunit/kunit.py parsing the suite's KTAP.
. "$(dirname "$0")/lib.sh"

[ $# = 0 ] || die "usage: kunit.sh (no arguments; the debug kernel is tested)"
suite=net_core out=$BUILD/kunit
img=$(kout debug)/arch/x86/boot/bzImage
[ -f "$img" ] || { echo "not ok kunit # no debug kernel at $img: run 'make build KERNELS=debug'"; exit 1; }
rm -rf "$out"; mkdir -p "$out"
# debugfs keeps each suite's KTAP, which the console (loglevel 5) does not show.
guest=0
GUEST_APPEND="kunit.enable=1 kunit.filter_glob=$suite" "$TOP/scripts/guest.sh" \
	-k debug -o "$out/guest" -- cat "/sys/kernel/debug/kunit/$suite/results" \
	>"$out/ktap" 2>"$out/guest.log" || guest=1
# A splat after the tests ran still leaves their results to report.
[ $guest = 0 ] || echo "not ok kunit/guest # $(grep -m1 '^guest' "$out/guest.log" || head -n 1 "$out/ktap") (logs: $out)"
grep -q '^KTAP version' "$out/ktap" || { echo "not ok kunit # no KTAP from the debug guest (logs: $out)"; exit 1; }
# parse exits 1 unless the run succeeded, all-skipped included: the cases'
# statuses below decide.
python3 "$TREE/tools/testing/kunit/kunit.py" parse --json="$out/kunit.json" \
	"$out/ktap" >"$out/parse.log" 2>&1 || true
[ -s "$out/kunit.json" ] || { echo "not ok kunit # kunit.py parse: $(tail -n 1 "$out/parse.log")"; exit 1; }
# Leaf cases by their path (suite/test/parameter); the series' own must be
# there, so that losing them cannot pass.
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
    if not any(l.split(" ", 2)[-1].startswith(f"kunit/{want}") for l in lines):
        lines.append(f"not ok kunit/{want.rstrip('/')} # not run")
print("\n".join(lines))
bad = any(l.startswith("not ok") for l in lines)
sys.exit(1 if bad or int(sys.argv[2]) else 0)
PY
