#!/bin/bash
# make test: every step CI runs, each printing "ok"/"not ok"/"skip" lines;
# ends with the tally "N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
set +e

mkdir -p "$BUILD"
log=$BUILD/test.log times=$BUILD/test.times
: >"$log"; : >"$times"
. "$TOP/scripts/steps.sh"

if step setup "$TOP/scripts/setup.sh" && step base "$TOP/scripts/base.sh" &&
	step apply "$TOP/scripts/apply.sh"; then
	for k in base series debug; do step "build/$k" "$TOP/scripts/build.sh" $k; done
	run workbench "$TOP/scripts/test-workbench.sh"
	# The patches whose trees the last make check passed (results/
	# check.trees, when its toolchain is this one) are not built again.
	run check "$TOP/scripts/check.sh" --changed
	# Every table under results/ is of the trees its command measures
	# today: a patch or a series order that moved leaves none stale.
	run results /usr/bin/python3 "$TOP/scripts/figures.py" --results
	# The series' own selftests and the upstream tun/tap ones on the release
	# kernel, but for route_hint_saddr.sh, which drops-route-hint below
	# runs on base and on the cut after the last `net` series; on the
	# slow debug kernel the series' own, but for route_hint_saddr.sh,
	# which needs more than its 600 s there (make drops-debug
	# STACK=route-hint runs some of its cases).  (make selftest runs every
	# test on base, series and debug.)
	SELFTEST_ONLY=$(selftest_lines | awk '$1 != "net/route_hint_saddr.sh" { print $1 }') \
		run selftest "$TOP/selftests/run.sh" series
	# That debug guest runs net/core's KUnit tests at its boot too (a
	# splat from them fails selftest-debug's guest line); no results of
	# an earlier run may stand in for them.
	rm -rf "$BUILD/guest/selftest-debug"
	GUEST_APPEND=$KUNIT_APPEND \
		SELFTEST_ONLY="net/tun_drops net/tun_vhost net/tun_wakeup net/flow_dissector_probe" \
		run selftest-debug "$TOP/selftests/run.sh" debug
	run kunit "$TOP/scripts/kunit.sh" "$BUILD/guest/selftest-debug"
	# Each `net` series' selftest fails on base and passes with the `net`
	# series: one kernel, the stack cut after the last of them (make drops:
	# on each series' own cut, into results/).
	net=$(last_net)
	STACK=accounting CUT=$net step drops "$TOP/scripts/drops.sh"
	STACK=vhost-tx CUT=$net step drops-vhost-tx "$TOP/scripts/drops.sh"
	STACK=route-hint CUT=$net step drops-route-hint "$TOP/scripts/drops.sh"
	STACK=rmnet-ack CUT=$net step drops-rmnet-ack "$TOP/scripts/drops.sh"
	STACK=tap-stats CUT=$net step drops-tap-stats "$TOP/scripts/drops.sh"
	run bench "$TOP/scripts/bench.sh" --smoke all
	# MODE=native on this machine's own kernel, and MODE=kvm's pipeline
	# with TCG standing in for KVM (no figure from either)
	run bench-modes "$TOP/scripts/test-bench-modes.sh"
	# Four minutes of the fuzzer on the release kernel, two fixed seeds; a
	# finding is shrunk in up to 24 guests, none started after 15 minutes
	# (make fuzz: as long as asked, on any kernel).
	run fuzz "$TOP/scripts/fuzz.sh" -k series -s 1 -s 2 -t 240 -S 900
	# A short robustness matrix: stress and malformed input on the release
	# kernel (make robustness: all of it, fault injection too, on the
	# debug kernels of base, fixes and series).
	ROBUST_CASES=$RELEASE_CASES \
		run robustness "$TOP/scripts/robust.sh" --short series
fi

pass=$(grep -c '^ok ' "$log"); fail=$(grep -c '^not ok ' "$log")
skip=$(grep -c '^skip ' "$log")
echo "$pass passed, $fail failed, $skip skipped" | tee "$BUILD/test.tally"
[ "$fail" -eq 0 ]
