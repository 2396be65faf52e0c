#!/bin/bash
# run.sh KERNEL...: build the kselftests in selftests/list from the series
# tree, run them in one guest per kernel, and print one line per test case:
#   ok|not ok|skip <kernel>/<program>/<case> [# reason]
# Exit status 1 if any case failed or a guest crashed, hung or splatted.
# SELFTEST_ONLY="net/tun_vhost ...": run only these of the list.  A script
# using net/lib.sh reports a line per case, "TEST: NAME  [ OK ]".
. "$(dirname "$0")/../scripts/lib.sh"

kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(series)
mapfile -t tests < <(selftest_lines | awk '{ print $1 }')
mapfile -t progs < <(selftest_lines | tr -s ' \t' '\n')
st=$BUILD/selftests
selftest_build "$TREE" series "$st" "${progs[@]}"

rc=0
for k in "${kernels[@]}"; do
	tree=$(kernel_tree "$k")
	run=()
	for t in "${tests[@]}"; do
		[ -f "$tree/tools/testing/selftests/$t.c" ] || [ -f "$tree/tools/testing/selftests/$t" ] &&
			run+=("$st/$t")
	done
	# a kernel whose tree has none of them would pass, having run nothing
	[ ${#run[@]} -gt 0 ] || { echo "not ok $k # none of selftests/list is in $tree"; rc=1; continue; }
	out=$BUILD/guest/selftest-$k
	say "selftest: ${#run[@]} programs on $k"
	if ! "$TOP/scripts/guest.sh" -k "$k" -m tcg -t 1800 -o "$out" -- \
		"$TOP/selftests/guest-run.sh" "${run[@]}" >/dev/null; then
		echo "not ok $k/guest # crashed, hung or splatted (console: $out/console)"
		rc=1
	fi
	for t in "${run[@]}"; do
		p=$(basename "$t")
		log=$out/$p.ktap
		if [ ! -f "$log" ]; then
			echo "not ok $k/$p # no output"; rc=1; continue
		fi
		awk -v pre="$k/$p" -f "$TOP/selftests/ktap.awk" "$log" || rc=1
		st_rc=$(cat "$out/$p.rc" 2>/dev/null || echo missing)
		[ "$st_rc" = 0 ] || [ "$st_rc" = 4 ] ||
			{ echo "not ok $k/$p # exit status $st_rc"; rc=1; }
	done
done
exit $rc
