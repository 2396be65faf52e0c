#!/bin/bash
# The bench's wall-clock modes, end to end, where this machine allows;
# prints ok/not ok/skip lines.
# - native: the tun-only scenarios on the running kernel, recorded as base
#   and as series (one kernel here, so NATIVE_SAME_KERNEL), compared; the
#   comparison refused across machines, configs, command lines and for one
#   kernel; vhost-net's scenario skipped with its reason where the kernel
#   has none; report.py's medians and skips on made-up runs.
# - kvm pipeline: MODE=kvm's boots (5 a kernel, -smp 2) and pps report with
#   TCG standing in for KVM.  A test of the pipeline, never a figure.
. "$(dirname "$0")/lib.sh"
set +e
tmp=$(mktemp -d -p "$BUILD"); trap 'rm -rf "$tmp"' EXIT
export NATIVE_DIR=$tmp/native BENCH_RESULTS=$tmp/results NATIVE_SAME_KERNEL=1
ok() { echo "ok bench-modes/$1${2:+ # $2}"; }
nok() { echo "not ok bench-modes/$1 # $2"; }
expect() { # expect NAME PATTERN CMD...: CMD fails and says PATTERN
	local name=$1 pat=$2 out; shift 2
	if out=$("$@" 2>&1); then
		nok "$name" "succeeded"
	elif echo "$out" | grep -qE "$pat"; then
		ok "$name" "$(echo "$out" | grep -E "$pat" | head -1)"
	else
		nok "$name" "said: $(echo "$out" | tail -1)"
	fi
}

# native.sh's own ok/skip/not ok lines come through as they are; one that
# fails without saying so is a "not ok" here
native() { # native RUN SCENARIO...
	local r=$1 s out st; shift
	for s in "$@"; do
		out=$(MODE=native RUN=$r PACKETS=20000 "$TOP/scripts/bench.sh" "$s" 2>"$tmp/native.err")
		st=$?
		grep -E '^(ok|not ok|skip) ' <<<"$out" | sed "s|bench/native/$s|bench-modes/native/$r/$s|"
		[ $st = 0 ] || grep -q '^not ok ' <<<"$out" ||
			nok "native/$r/$s" "native.sh exited $st: $(tail -1 "$tmp/native.err")"
	done
}
native base s001 s004 rr s002
native series s001 s004 rr s002
# Each row of each report holds the medians of its own side's runs.
for s in s001 s004 rr; do
	/usr/bin/python3 - "$NATIVE_DIR/$s" "$BENCH_RESULTS/$s.json" <<'EOP'
import glob, json, sys
runs, doc = sys.argv[1], json.load(open(sys.argv[2]))
for side in ("base", "series"):
    per = {}
    for f in sorted(glob.glob(f"{runs}/{side}-*/results.jsonl")):
        for r in map(json.loads, open(f)):
            if "case" in r and "result" in r:
                per.setdefault(r["case"], []).append(
                    r["result"]["packets"] * 1e9 / r["result"]["ns"])
    assert len(doc["cases"]) == len(per) > 0, f"{side}: rows {len(doc['cases'])}, cases {len(per)}"
    for row in doc["cases"]:
        v = sorted(per[row["case"]])
        assert len(v) == 5 and row[side]["runs"] == per[row["case"]], f"{side} {row['case']}: runs"
        assert row[side]["value"] == v[2], f"{side} {row['case']}: not the median"
        assert row[side]["cpu_us_per_pkt"] > 0, f"{side} {row['case']}: no CPU time"
EOP
	[ $? = 0 ] && ok "native-report/$s" "each row the median of its side's 5 runs, CPU time > 0" ||
		nok "native-report/$s" "see the assertion above"
done
grep -q 'p99_us' "$BENCH_RESULTS/rr.md" 2>/dev/null &&
	ok native-rr-latency "p50 and p99 round trips" ||
	nok native-rr-latency "no latency percentiles in rr.md"

report() { # report [ARG...]: compare s001's recorded runs into $tmp/refused
	/usr/bin/python3 "$TOP/scripts/report.py" --runs "$NATIVE_DIR" --mode native \
		--out "$tmp/refused" --command test "$@" s001
}
m=$NATIVE_DIR/s001/series.meta.json
cp "$m" "$tmp/meta"
refused() { # refused NAME PATTERN SED: series' record edited so, refused
	sed -i "$3" "$m"
	expect "$1" "$2" report --same-kernel-ok
	cp "$tmp/meta" "$m"
}
refused native-other-machine 'machine_id [0-9a-f]+ against another' 's/"machine_id": "[^"]*"/"machine_id": "another"/'
refused native-other-config "config '[0-9a-f]+' against 'another'" 's/"config": "[^"]*"/"config": "another"/'
refused native-other-cmdline "cmdline .* against 'another'" 's/"cmdline": "[^"]*"/"cmdline": "another"/'
expect native-one-kernel 'recorded on one kernel' report
[ ! -e "$tmp/refused" ] && ok native-refusal-writes-nothing || nok native-refusal-writes-nothing "$tmp/refused written"
expect native-needs-run 'needs RUN=base or RUN=series' \
	env -u RUN MODE=native "$TOP/scripts/bench.sh" s001
expect native-no-stack 'no STACK=, ALONE= or EACH=' \
	env MODE=native RUN=base STACK=rx-list "$TOP/scripts/bench.sh" s001
expect native-bad-packets 'PACKETS=2k: a whole number' \
	env MODE=native RUN=base PACKETS=2k "$TOP/scripts/bench.sh" s001
expect kvm-standin-not-results 'set BENCH_RESULTS outside results/' \
	env MODE=kvm KVM_STANDIN=tcg BENCH_RESULTS="$TOP/results/../results" "$TOP/scripts/bench.sh" s004

# report.py on made-up runs: a run that says what it skipped may lack a
# case, one that does not is refused; figures are the medians.
fake=$tmp/fake
/usr/bin/python3 - "$fake" <<'EOP'
import json, os, sys
for side, base in (("base", 1e6), ("series", 2e6)):
    for rep in range(1, 6):
        d = f"{sys.argv[1]}/s004/{side}-{rep}"
        os.makedirs(d)
        with open(f"{d}/results.jsonl", "w") as f:
            for case in ("a", "b"):
                if side == "series" and rep == 3 and case == "b":
                    print(json.dumps({"scenario": "s004", "skipped": "b: made up"}), file=f)
                    continue
                ns = 1e9 / (base + rep ** 3 * 1e4)  # median and mean apart
                print(json.dumps({"scenario": "s004", "case": case, "params": {},
                                  "result": {"packets": 1, "ns": ns}}), file=f)
    json.dump({"release": "r", "version": side, "cmdline": "", "config": "c",
               "machine": {"cpu": "x"}, "date": "d"}, open(f"{sys.argv[1]}/s004/{side}.meta.json", "w"))
EOP
if /usr/bin/python3 "$TOP/scripts/report.py" --runs "$fake" --mode native --out "$tmp/fake-out" \
	--command test s004 >/dev/null 2>"$tmp/fake.err" &&
   grep -q '^| a | 1.270 M | 2.270 M | +78.7% ' "$tmp/fake-out/s004.md" &&
   ! grep -q '^| b ' "$tmp/fake-out/s004.md" &&
   grep -q '^Not run on these kernels: b: made up.' "$tmp/fake-out/s004.md"; then
	ok report-medians-and-skips "a: medians 1.27 and 2.27 Mpps (means 1.45, 2.45); b skipped with its reason"
else
	nok report-medians-and-skips "$(tail -1 "$tmp/fake.err") $(grep '^| [ab] ' "$tmp/fake-out/s004.md" 2>/dev/null)"
fi
sed -i '/skipped/d' "$fake/s004/series-3/results.jsonl"
expect report-incomplete-run 'series-3/results.jsonl has no case .b. and skipped nothing' \
	/usr/bin/python3 "$TOP/scripts/report.py" --runs "$fake" --mode native --out "$tmp/fake-out" \
	--command test s004
# fake_boots DIR SCENARIO CASE RESULT: two icount boots of each kernel
# that ran CASE alone, its figure 2% apart between them
fake_boots() {
	/usr/bin/python3 - "$@" <<'EOP'
import json, os, sys
top, scen, case, res = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
for side in ("base", "series"):
    for rep in (1, 2):
        d = f"{top}/{scen}/{side}-{rep}"
        os.makedirs(d)
        with open(f"{d}/results.jsonl", "w") as f:
            print(json.dumps({"scenario": scen, "case": case, "params": {},
                              "result": dict(res, ns=res["packets"] * (5000 + 100 * rep))}), file=f)
EOP
}
# An icount figure that did not repeat (two boots 2% apart) fails the
# report, which then writes nothing.
fake_boots "$tmp/icount" s004 a '{"packets": 1000}'
expect report-unrepeated 'did not repeat within 0.5%, nothing written: s004/a/base' \
	/usr/bin/python3 "$TOP/scripts/report.py" --runs "$tmp/icount" --mode icount \
	--out "$tmp/icount-out" --command test s004
[ ! -e "$tmp/icount-out" ] && ok report-unrepeated-writes-nothing ||
	nok report-unrepeated-writes-nothing "$(ls "$tmp/icount-out" | xargs)"

# A row seeds.json names as following timing leaves the check only with
# its spread over five boots of each kernel: over two, the report refuses.
fake_boots "$tmp/timing" tcp-stream "tso on, 4 flows" \
	'{"role": "stream", "packets": 100, "bytes": 102400}'
expect report-timing-two-boots 'timing row is left out of the check only over 5 boots of each kernel, nothing written: tcp-stream/tso on, 4 flows/base: 2' \
	/usr/bin/python3 "$TOP/scripts/report.py" --runs "$tmp/timing" --mode icount \
	--out "$tmp/timing-out" --command test tcp-stream
[ ! -e "$tmp/timing-out" ] && ok report-timing-two-boots-writes-nothing ||
	nok report-timing-two-boots-writes-nothing "$(ls "$tmp/timing-out" | xargs)"

# kvm pipeline: s004 on base and series, 5 boots each, TCG for KVM
if MODE=kvm KVM_STANDIN=tcg PACKETS=2000 "$TOP/scripts/bench.sh" s004 >"$tmp/kvm.log" 2>&1; then
	f=$BENCH_RESULTS/s004.md
	boots=$(grep -lx -- '-accel tcg -cpu max -smp 2' "$BUILD"/bench-standin/s004/*/accel | wc -l)
	if ! grep -q 'Pipeline test, not a figure' "$f"; then
		nok kvm-pipeline "$f: not marked as a pipeline test"
	elif ! grep -q '^Unit: packets per second (median of 5)' "$f"; then
		nok kvm-pipeline "$f: no pps report"
	elif [ "$boots" != 10 ]; then
		nok kvm-pipeline "$boots boots of 2 vCPUs, not 5 a kernel"
	elif ! grep -q 'cpu_us_per_pkt' "$f"; then
		nok kvm-pipeline "$f: no CPU time per packet"
	else
		ok kvm-pipeline "10 boots of 2 vCPUs under TCG for KVM, pps report marked as no figure"
	fi
else
	nok kvm-pipeline "$(grep -E '^(not ok|bench|guest|report)' "$tmp/kvm.log" | head -1)"
fi
