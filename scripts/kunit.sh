#!/bin/bash
# make kunit: the series' KUnit tests (net_core, CONFIG_NET_TEST) on UML,
# through the tree's own tools/testing/kunit/kunit.py; one "ok"/"not ok"/
# "skip" line a test case, from kunit.py's JSON.
. "$(dirname "$0")/lib.sh"

[ $# = 0 ] || die "usage: kunit.sh (no arguments; the series tree is tested)"
[ -d "$TREE" ] || die "no tree at $TREE: run 'make base' first"
out=$BUILD/kunit log=$BUILD/kunit.log json=$BUILD/kunit.json
# UML maps its memory from a file in TMPDIR, which must allow exec
# (a container's /dev/shm may not).
export TMPDIR=$out/tmp
mkdir -p "$TMPDIR"
rm -f "$json"
rc=0
(cd "$TREE" && python3 tools/testing/kunit/kunit.py run net_core \
	--kunitconfig="$TOP/kernel-config/kunit.config" --build_dir="$out" \
	--jobs="$(nproc)" --make_options "CC=ccache gcc" --json="$json") \
	>"$log" 2>&1 || rc=$?
[ -s "$json" ] || { echo "not ok kunit # no results: $(grep -m1 -E 'ERROR|rror:' "$log" || tail -n 1 "$log") (log: $log)"; exit 1; }
# Leaf cases by their path (suite/test/parameter); the series' own must be
# there, so that losing them cannot pass.
python3 - "$json" "$rc" <<'PY'
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
if int(sys.argv[2]) and not bad:
    print(f"not ok kunit # kunit.py exited {sys.argv[2]}")
sys.exit(1 if bad or int(sys.argv[2]) else 0)
PY
