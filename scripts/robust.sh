#!/bin/bash
# robust.sh [--short|--long|--table] [KERNEL...]: the robustness matrix
# (bench/robust.sh: stress, fault injection, malformed input) on each
# kernel, by default the debug kernels of base (base-debug), of base with
# the `net` fixes (stack-debug: the stack cut after the last `net` series,
# or ROBUST_STACK; left out when that cut is the whole series) and of the
# series (debug).  Prints one ok/not ok line per kernel and case.
#   --short: 200 packets and 500 frames a case, nothing written (make test)
#   default: 2,000 packets and 10,000 malformed frames a case; writes
#            results/robustness.{jsonl,md} once every case has run so on
#            the three kernels on the same code (one call, one per kernel,
#            or cases rerun alone: a case's row is from its latest run)
#   --long:  500,000 packets and 100,000 frames a case (make stress)
#   --table: runs nothing; writes the default run's table again from the
#            runs recorded for today's code
# ROBUST_CASES="case ...": only these (bench/robust.sh --list).
. "$(dirname "$0")/lib.sh"
stack_hold	# from the start, not hours in when it reaches the stack kernel

table_only= size=default n=2000 frames=10000 limit=5400
case ${1:-} in
--short) size=short n=200 frames=500 limit=2400; shift ;;
--long) size=long n=500000 frames=100000 limit=36000; shift ;;
--table) table_only=1; shift ;;
esac
all=(base-debug stack-debug debug)
fixes=${ROBUST_STACK:-$(last_net)}
# With a `net` series last, the cut after it is the whole series: the
# fixes kernel is the series kernel, and its rows would be the series'
# rows a second time.
whole=
[ -z "$fixes" ] || ! tgit rev-parse -q --verify "stack/$fixes" >/dev/null ||
	[ "$(tgit rev-parse "stack/$fixes^{tree}")" != "$(tgit rev-parse 'series^{tree}')" ] ||
	whole=1 all=(base-debug debug)
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=("${all[@]}")
[ -z "$table_only" ] || kernels=()
case " ${kernels[*]} " in *" stack"*)
	[ -n "$fixes" ] || die "no \`net\` series in $TOP/series: set ROBUST_STACK"
	SERIES=$fixes selected_series >/dev/null || exit
	tgit rev-parse -q --verify "stack/$fixes" >/dev/null ||
		die "no branch stack/$fixes: run 'make apply' first" ;;
esac
make -s -C "$TOP/bench" >&2 || die "bench programs do not build"
# run_id KERNEL: the code a run of KERNEL tests (the trees of the series
# and, for the fixes kernel, of its stack cut)
run_id() {
	local cut=
	case $1 in stack*) cut=" $fixes $(tgit rev-parse "stack/$fixes^{tree}")" ;; esac
	echo "$size $(tgit rev-parse 'series^{tree}')$cut"
}

rc=0
mkdir -p "$BUILD/robust"
for k in "${kernels[@]}"; do
	# What is built now is what is tested, whatever moves meanwhile.
	id=$(run_id "$k")
	boot=$k
	case $k in stack*)
		stack_checkout "$fixes"
		# A cut that is the whole series is the series kernel: boot
		# that, not a second build of the same tree.
		[ -z "$whole" ] || boot=${k#stack-} boot=${boot/#stack/series} ;;
	esac
	"$TOP/scripts/build.sh" "$boot" >&2
	d=$BUILD/robust/$k
	# Some cases alone (ROBUST_CASES) keep a folder of their own: in the
	# table a case's row is from whichever ran later.
	[ -n "${ROBUST_CASES:-}" ] && d=$d.part
	rm -f "$d.run"	# a run cut short vouches for nothing
	say "robust: $k ($size: $n packets, $frames malformed frames a case)"
	known=()
	case $k in base*) known=(--base) ;; esac
	"$TOP/scripts/guest.sh" -k "$boot" -m tcg -t $limit -o "$d" -- \
		"$TOP/bench/robust.sh" "${known[@]}" $n $frames ${ROBUST_CASES:-} >"$d.log" 2>&1 ||
		{ echo "not ok robust/$k/guest # $(grep -m1 -E '^guest:' "$d.log" ||
			echo "robust.sh exited $(cat "$d/status" 2>/dev/null)")"; rc=1; }
	[ -f "$d/robustness.jsonl" ] || { echo "not ok robust/$k # no results"; rc=1; continue; }
	echo "$id" >"$d.run"
	while read -r line; do
		c=$(jq -r .case <<<"$line")
		if [ "$(jq -r .ok <<<"$line")" = true ]; then
			echo "ok robust/$k/$c"
		else
			echo "not ok robust/$k/$c # $(jq -r '"lost \(.lost), overcounted \(.overcounted), splats \(.splats), leaks \(.leaks): \(.note)"' <<<"$line")"
			rc=1
		fi
	done <"$d/robustness.jsonl"
done

# The table needs every case on the three kernels, from runs on this
# code (trees: a reworded commit message does not call for a new run); a
# case's row is its latest: from a run of some cases, or the full run,
# whichever ran later (the .run files' times).
[ $size = default ] || exit $rc
# A run of none of the three (make rt's) leaves the table as it is.
table=
for k in "${kernels[@]}"; do case " ${all[*]} " in *" $k "*) table=1 ;; esac; done
[ -n "$table$table_only" ] || exit $rc
order=$("$TOP/bench/robust.sh" --list | jq -Rsc 'split("\n") | map(select(. != ""))')
rows() { # rows KERNEL
	local f want runs=("$BUILD/robust/$1" "$BUILD/robust/$1.part")
	want=$(run_id "$1")
	[ "${runs[0]}.run" -nt "${runs[1]}.run" ] && runs=("${runs[1]}" "${runs[0]}")
	# A run of other code is left out, and must not end the script
	# (pipefail, set -e): it is no error.
	for f in "${runs[@]}"; do
		if [ "$(cat "$f.run" 2>/dev/null)" = "$want" ] && [ -f "$f/robustness.jsonl" ]; then
			jq -c --arg k "$1" --arg run "$(basename "$f")" '. + {kernel: $k, run: $run}' "$f/robustness.jsonl"
		fi
	done | jq -sc --argjson order "$order" \
		'group_by(.case) | map(last) | sort_by(.case as $c | $order | index($c)) | .[]'
}
res=$TOP/results
for k in "${all[@]}"; do rows $k; done >"$res/robustness.jsonl.new"
for k in "${all[@]}"; do
	have=$(jq -r --arg k $k 'select(.kernel == $k) | .case' "$res/robustness.jsonl.new" | sort | tr '\n' ' ')
	[ "$have" = "$(jq -r '.[]' <<<"$order" | sort | tr '\n' ' ')" ] || {
		rm "$res/robustness.jsonl.new"
		say "robust: results/robustness.md left as it is: $k has no run of every case on today's code"
		[ -z "$table_only" ] || rc=1
		exit $rc
	}
done
mv "$res/robustness.jsonl.new" "$res/robustness.jsonl"
label='.kernel | sub("-debug$"; "") | sub("^debug$"; "series") | sub("^stack$"; "fixes")'
part=$(jq -r 'select(.run | endswith(".part")) | "\(.case) (\('"$label"'))"' "$res/robustness.jsonl" | paste -sd, | sed 's/,/, /g')
{
	echo "# Robustness: stress, fault injection and malformed input"
	echo
	# One line names every tree, for scripts/figures.py.
	tree_of() { tgit rev-parse --short=12 "$1^{tree}"; }
	subject_of() { tgit log -1 --format=%s "$1"; }
	printf 'Generated by `make robustness` on the debug kernels (KASAN, lockdep, kmemleak, DEBUG_NET, fault injection: kernel-config/debug.config) of base %s (tree %s)' \
		"$(cat "$(kout base-debug)/include/config/kernel.release")" "$(tree_of base)"
	if [ -n "$whole" ]; then
		printf ' and of series at "%s" (tree %s), which is also the stack cut after the last `net` series, %s;\n' \
			"$(subject_of series)" "$(tree_of series)" "$fixes"
	else
		printf ', of fixes, base with the `net` series: the stack cut after %s at "%s" (tree %s), and of series at "%s" (tree %s);\n' \
			"$fixes" "$(subject_of "stack/$fixes")" "$(tree_of "stack/$fixes")" "$(subject_of series)" "$(tree_of series)"
	fi
	echo "in a 2-vCPU TCG guest;"
	echo "$n packets a stress case, $frames frames a malformed-input case (fixed seeds)."
	[ -z "$part" ] || echo "Rerun alone (ROBUST_CASES=...), on the same code: $part."
	echo
	echo "pushed: packets or frames sent; faults: allocations failed on purpose;"
	echo "drops: counted by the tap (rx_dropped or tx_dropped) or its qdisc, or"
	echo "rejected by write(); lost: neither received nor counted; overcounted:"
	echo "received and counted beyond what was pushed (a count taken twice);"
	echo "-: not measurable (the result says why); splats and leaks: console"
	echo "splats and kmemleak reports after the case.  A case passes with a"
	echo "loss or a count taken twice only for a reason it gives."
	echo
	echo "| case | kernel | pushed | faults | drops | lost | overcounted | splats | leaks | result |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
	jq -r '"| \(.case) | \('"$label"') | \(.pushed) | \(.faults) | \(.drops) | \(.lost // "-") | \(.overcounted // "-") | \(.splats) | \(.leaks) | \(if .ok then "pass" + ([.note | splits("; ") | select(test("^(lost|overcounted): "))] | if length > 0 then " (" + join("; ") + ")" else "" end) else "FAIL: \(.note)" end) |"' \
		"$res/robustness.jsonl" | sort -s -t'|' -k2,2
	echo
} >"$res/robustness.md"
say "robust: wrote results/robustness.md"
exit $rc
