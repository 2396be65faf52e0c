#!/bin/bash
# drops.sh [--debug]: a `net` series' selftest on base and on the stack cut
# after that series (STACK=NAME, default accounting), or after a series
# above it (CUT=NAME, its table in build/: make test tests both `net`
# series on one kernel), or on that series alone on base (ALONE=1, as a
# `net` series is applied; its table in results/alone-NAME/);
# with --debug on the debug kernels of both (KASAN, lockdep, kmemleak).
#   accounting: tun_drops, each case's counters in results/drops.md
#     (drops-debug.md); a case fails where a packet the tap accepted was
#     neither read nor counted.  Its controls, a ring that grows and the
#     XDP verdicts that send a frame on (*_native, *_generic), drop
#     nothing and pass on both.
#   vhost-tx: tun_vhost's malformed_descriptors cases (the test is new in
#     rx-list, so its binary comes from the series tree), in
#     results/drops-vhost-tx.md (drops-vhost-tx-debug.md); a case fails
#     where the vhost worker spins on a bad descriptor or the queue stalls.
#     The fix is on the XDP-batch path (sndbuf unlimited); the sndbuf
#     limited cases take the sendmsg path, which base already handles, and
#     pass on both, as controls.
#   route-hint: route_hint_saddr.sh, a router receiving a burst as lists,
#     in results/route-hint.md (route-hint-debug.md); a case that
#     "refuses" a source fails where a spoofed frame behind a good one was
#     forwarded; the others (two good sources, an IPv6 source route) pass
#     on both, as controls.
#   napi-lockdep (--debug only): tun_vhost's bursts through a tap with
#     rx-frames 8 and a limited sndbuf, then through one with IFF_NAPI, in
#     one guest, in results/napi-lockdep-debug.md; the guest's console is a
#     row of its own, which fails on base, where lockdep reports an
#     inconsistent lock state.  Both cases pass on both, as controls.
#   tap-stats: tun's bad_gso_type_frame_error, a tap's rx_frame_errors
#     after a refused virtio-net header, in results/tap-stats.md; it fails
#     on base, where a tap does not report the counter.
#   rmnet-ack: rmnet_ack, an rmnet link on a tun writing a MAP command and
#     reading the ack, in results/rmnet-ack.md, each case in a guest of its
#     own: on base one oopses, and the kernel panics; its row shows the
#     console's first splat line.
# Exit status 1 unless every case the fixes fix fails on base, and every
# case passes with the fixes: the test must catch what the fixes fix.
. "$(dirname "$0")/lib.sh"

kernels=(base stack) limit=900 res=drops cmd="make drops" kind='' on=on
case ${1:-} in
--debug) kernels=(base-debug stack-debug) limit=2400 res=drops-debug
	cmd="make drops-debug" kind="the debug kernels (KASAN, lockdep, kmemleak) of " on=of ;;
"") ;;
*) die "usage: drops.sh [--debug]" ;;
esac
STACK=${STACK:-accounting}
cut_given=${CUT:-}
CUT=${CUT:-$STACK}
check_args
# the test, the tree it is built from, its arguments; runs: the harness's
# variants, where each needs a guest of its own
helpers=() tests= runs=("") console_row=
case $STACK in
accounting) test=tun_drops src=$STACK_TREE args=() hdr=${kernels[1]} ;;
vhost-tx) test=tun_vhost src=$TREE args=(-t malformed_descriptors)
	hdr=series res=${res/drops/drops-vhost-tx} cmd+=" STACK=vhost-tx"
	[ -n "$kind" ] && hdr=debug ;;
route-hint) test=route_hint_saddr.sh src=$STACK_TREE args=() hdr=${kernels[1]}
	helpers=(net/route_hint_burst) res=${res/drops/route-hint} cmd+=" STACK=route-hint"
	# On a debug kernel under TCG a case takes minutes: there, a case of
	# each driver, and a control.
	[ -n "$kind" ] && tests="veth_rp_strict tap_local_source veth_two_sources" ;;
rmnet-ack) test=rmnet/rmnet_ack src=$STACK_TREE args=() hdr=${kernels[1]}
	res=${res/drops/rmnet-ack} cmd+=" STACK=rmnet-ack"
	runs=(one_queue last_of_256_queues csum_trailer) ;;
napi-lockdep) test=tun_vhost src=$TREE hdr=debug console_row=1
	args=(-r tun_vhost.sndbuf_limited_rx_frames_8.bursts -r tun_vhost.sndbuf_limited_napi.bursts)
	res=${res/drops/napi-lockdep} cmd+=" STACK=napi-lockdep"
	[ -n "$kind" ] || die "STACK=napi-lockdep: what it fixes is a lockdep report: make drops-debug STACK=napi-lockdep" ;;
tap-stats) test=tun src=$STACK_TREE args=(-t bad_gso_type_frame_error) hdr=${kernels[1]}
	res=${res/drops/tap-stats} cmd+=" STACK=tap-stats" ;;
*) die "STACK=$STACK: drops.sh knows the selftests of accounting, vhost-tx, napi-lockdep, route-hint, rmnet-ack and tap-stats" ;;
esac
prog=${test##*/}
rows_of=rows_${prog%.sh}
# A run on a CUT= (make test's) is not the series' own: its table stays
# in build/.  The series alone on base: results/alone-NAME/.
table=$TOP/results/$res.md
[ -z "${ALONE:-}" ] || [ -z "$cut_given" ] || die "ALONE=1 and CUT=$CUT: one or the other"
if [ -n "$cut_given" ]; then
	tgit rev-parse -q --verify "stack/$CUT" >/dev/null ||
		die "CUT=$CUT: no series $CUT on the stack"
	tgit merge-base --is-ancestor "stack/$STACK" "stack/$CUT" ||
		die "CUT=$CUT: the stack cut after $CUT does not hold series $STACK"
	cmd+=" CUT=$CUT" table=$BUILD/$res-cut-$CUT.md
fi
if [ -n "${ALONE:-}" ]; then
	alone_checkout "$STACK"
	cmd+=" ALONE=1" where="series $STACK alone on base"
	table=$TOP/results/alone-$STACK/$res.md
else
	stack_checkout "$CUT"
	where="the stack cut after series $CUT"
fi
wt=$STACK_TREE
# what is built and run, by subject and tree, which amending a message
# keeps (scripts/figures.py checks the tree)
at() { git -C "$1" log -1 --abbrev=12 --format='"%s" (tree %t)' HEAD; }
cut=$(at "$wt")
# A cut that is the whole series boots the series kernels, which make test
# has built.
if is_series "$(git -C "$wt" rev-parse 'HEAD^{tree}')"; then
	case ${kernels[1]} in stack) kernels[1]=series ;; *) kernels[1]=debug ;; esac
	[ "$hdr" = stack ] && hdr=series
	[ "$hdr" = stack-debug ] && hdr=debug
	# and its selftest from the series tree, whose headers those
	# kernels' folders were made from (the other tree's would make
	# their next build regenerate them and rebuild most objects)
	[ "$src" != "$STACK_TREE" ] || src=$TREE
fi
[ -f "$src/tools/testing/selftests/net/${test%.sh}.c" ] ||
	[ -f "$src/tools/testing/selftests/net/$test" ] ||
	die "series $STACK: no $test selftest in $src"
for k in "${kernels[@]}"; do "$TOP/scripts/build.sh" "$k" >&2; done
# accounting's headers are its stack kernel's, built above
[[ " ${kernels[*]} " = *" $hdr "* ]] || "$TOP/scripts/build.sh" "$hdr" >&2

# One binary, from the tree that has the test, for both kernels.
bin=$BUILD/$res
selftest_build "$src" "$hdr" "$bin" "net/$test" "${helpers[@]}"
src_at=$(at "$src")

rows=$bin/rows rc=0
: >"$rows"
# tun_drops: "#  RUN FIXTURE.CASE.TEST", "# ...:sent N, read N, tx_dropped
# +N, other frames N" (tun_drops) or "# ...:written N, rx_dropped +N"
# (tun_xdp_drops), then "ok|not ok N FIXTURE.CASE.TEST".  A control of
# tun_xdp_drops sends its frames on, which the test counts but does not
# log: read and lost "-".
controls='[.](resize_up|[a-z]+_native|[a-z]+_generic)$'
rows_tun_drops() {
	awk -v k="$1" -v ctl="$controls" '
		function num(re,  t) {
			if (!match($0, re)) return ""
			t = substr($0, RSTART, RLENGTH)
			sub(/^[^0-9]*/, "", t)
			return t + 0
		}
		/^# +RUN / { split($3, c, "."); cs = c[1] "." c[2]; s = r = d = ctr = "" }
		/:(sent|written) [0-9]+, / {
			s = num("(sent|written) [0-9]+")
			r = num("read [0-9]+"); if (r == "") r = 0
			d = num("[rt]x_dropped [+][0-9]+")
			if (match($0, /[rt]x_dropped/)) ctr = substr($0, RSTART, RLENGTH)
		}
		/^(not )?ok [0-9]+ tun_(xdp_)?drops\./ {
			if (s == "" || d == "") { print "| " cs " | " k " | | | | | | no counters |"; next }
			lost = s - r - d
			if (cs ~ ctl && cs ~ /^tun_xdp_drops/) r = lost = "-"
			print "| " cs " | " k " | " s " | " r " | " ctr " | " d " | " lost " | " ($1 == "ok" ? "pass" : "fail") " |"
		}' "$2"
}
# A kselftest harness program: the first line a case logged
# ("# PROG.c:LINE:TEST:WHAT") says why it failed; a case's result line
# names it FIXTURE[.VARIANT].TEST, whatever the fixture is called.
rows_harness() { # rows_harness PROG KERNEL KTAP
	awk -v p="$1" -v k="$2" '
		/^# +RUN / { split($3, c, "."); cs = c[1] "." c[2]; why = "" }
		$0 ~ "^# +" p "\\.c:[0-9]+:" && why == "" {
			why = $0; sub("^# +" p "\\.c:[0-9]+:[^:]*:", "", why)
			gsub(/\|/, "\\|", why)
		}
		/^(not )?ok [0-9]+ [A-Za-z0-9_]+\./ {
			r = $1 == "ok" ? "pass" : "fail"
			if (/# SKIP/) r = "skip"
			print "| " cs " | " k " | " r " | " (r == "fail" ? why : "") " |"
		}' "$3"
}
rows_tun_vhost() { rows_harness tun_vhost "$@"; }
# rmnet_ack: a run that took its guest down has its row made below
rows_rmnet_ack() { rows_harness rmnet_ack "$@"; }
rows_tun() { rows_harness tun "$@"; }
# route_hint_saddr.sh: "TEST: DEV: WHAT (N of M frames forwarded)  [ OK ]",
# or "(N route lookups)"
rows_route_hint_saddr() {
	awk -v k="$1" '
		/^TEST: .*\[ *(OK|FAIL|SKIP) *\]$/ {
			r = $0; sub(/.*\[ */, "", r); sub(/ *\]$/, "", r)
			r = r == "OK" ? "pass" : r == "FAIL" ? "fail" : "skip"
			c = $0; sub(/^TEST: /, "", c); sub(/ *\[[^[]*\]$/, "", c)
			f = ""
			if (match(c, / \([^()]*\)$/)) {
				f = substr(c, RSTART + 2, RLENGTH - 3); c = substr(c, 1, RSTART - 1)
			}
			print "| " c " | " k " | " f " | " r " |"
		}' "$2"
}
for k in "${kernels[@]}"; do
	name=base
	[ "$k" = "${kernels[1]}" ] && name=$CUT
	for v in "${runs[@]}"; do
		out=$BUILD/guest/drops-$k${v:+-$v} console="pass | "
		say "drops: $test${v:+ -v $v} on $name ($k)"
		if ! "$TOP/scripts/guest.sh" -k "$k" -m tcg -t $limit -o "$out" -- \
			bash -c 'cd "$1" && export TESTS=$3 && timeout -s KILL $4 "./$2" "${@:5}" \
				>"$GUEST_OUT/${2##*/}.ktap" 2>&1; echo $? >"$GUEST_OUT/${2##*/}.rc"' \
			run "$bin/net" "$test" "$tests" $((limit - 300)) "${args[@]}" ${v:+-v "$v"} >/dev/null; then
			# with a console row, the console is the verdict
			if [ -n "$console_row" ]; then
				console="fail | guest: $(console_splat "$out/console" | sed 's/|/\\|/g')"
			# a run of its own may take its guest down: that is its row
			elif [ -z "$v" ]; then
				die "the $name guest crashed, hung or splatted (console: $out/console)"
			else
				splat=$(console_splat "$out/console")
				last=$(grep -m1 -o 'Kernel panic - not syncing: .*' "$out/console" || true)
				echo "| $prog.$v | $name | fail | guest: ${splat:-no status}${last:+; $last} |" >>"$rows"
				[ "$name" = base ] || rc=1
				continue
			fi
		fi
		[ "$name" = base ] || [ "$(cat "$out/$prog.rc" 2>/dev/null)" = 0 ] ||
			{ echo "drops.sh: $test exited $(cat "$out/$prog.rc" 2>/dev/null) on $name" >&2; rc=1; }
		[ -z "$console_row" ] || echo "| $prog (console) | $name | $console |" >>"$rows"
		"$rows_of" "$name" "$out/$prog.ktap" >>"$rows"
	done
done

# The same cases on both, each failing on base (tun_drops: losing packets)
# and passing with the fixes (tun_drops: losing none).
cases() { awk -F' \\| ' -v k="$1" '$2 == k { print $1 }' "$rows"; }
if [ "$test" = tun_drops ]; then
	# a fixed case loses packets on base; a control drops none on either
	want_fail=$(awk -F' \\| ' -v ctl="$controls" '$2 == "base" &&
		($1 ~ ctl ? $8 != "pass |" || $6 != 0 : $8 != "fail |" || !($7 > 0))' "$rows")
	want_pass=$(awk -F' \\| ' -v k="$CUT" -v ctl="$controls" '$2 == k &&
		($8 != "pass |" || ($1 ~ ctl ? $6 != 0 : $7 != 0))' "$rows")
else
	# the fixed cases fail on base, the controls pass there; and some
	# case is a fixed one
	fixed=unlimited col=3
	[ "$STACK" = route-hint ] && fixed=refuses col=4
	[ "$STACK" = napi-lockdep ] && fixed=console
	[ "$STACK" = rmnet-ack ] || [ "$STACK" = tap-stats ] && fixed=.
	want_fail=$(awk -F' \\| ' -v re=$fixed -v c=$col '$2 == "base" && ($1 ~ re ? $c !~ /^fail/ : $c !~ /^pass/)' "$rows")
	want_pass=$(awk -F' \\| ' -v k="$CUT" -v c=$col '$2 == k && $c !~ /^pass/' "$rows")
	awk -F' \\| ' -v re=$fixed '$2 == "base" && $1 ~ re' "$rows" | grep -q . ||
		want_fail="no case that the fix fixes"
fi
[ -n "$(cases base)" ] && [ "$(cases base)" = "$(cases "$CUT")" ] &&
	[ -z "$want_fail$want_pass" ] || rc=1
release=$(cat "$(kout "${kernels[0]}")/include/config/kernel.release")
mkdir -p "$(dirname "$table")"
{
	if [ "$test" = tun_drops ]; then
		echo "# tun drop accounting: tun_drops on base and with the \`net\` fixes"
		echo
		echo "Generated by \`$cmd\` (scripts/drops.sh) on ${kind}base $release and $on $where, at $cut, in a 2-vCPU TCG guest; one tun_drops binary, built from that tree."
		echo
		echo "Each tun_drops case sends datagrams out through a tap whose reader"
		echo "has not read yet, then shrinks the tx ring (tx_queue_len 64 -> 8, 1"
		echo "or 0), detaches the queue (TUNSETQUEUE) or closes its fd, and reads"
		echo "what is left.  Each tun_xdp_drops case writes frames to a tap whose"
		echo "XDP program drops them, in a way that makes tun run it as generic"
		echo "XDP.  lost: sent, neither read nor counted in the counter.  The"
		echo "controls drop nothing and pass on both kernels: resize_up raises"
		echo "tx_queue_len to 128, and the *_native and *_generic cases return"
		echo "XDP_PASS, XDP_TX or a redirect to a second tap, on tun's native"
		echo "and generic XDP paths (the test reads XDP_TX's and the redirect's"
		echo "frames back out of a tap, and does not log them: read and lost -)."
		echo
		echo "| case | kernel | sent | read | counter | dropped | lost | result |"
		echo "|---|---|---:|---:|---|---:|---:|---|"
	elif [ "$STACK" = route-hint ]; then
		echo "# Route hints and the source address: route_hint_saddr.sh on base and with the \`net\` fix"
		echo
		echo "Generated by \`$cmd\` (scripts/drops.sh) on ${kind}base $release and $on $where, at $cut, in a 2-vCPU TCG guest; one route_hint_saddr.sh and route_hint_burst, from that tree${tests:+, its cases $tests (TESTS=)}."
		echo
		echo "Each case sends a router a burst of 64 UDP frames that it receives"
		echo "as lists of 8: through a veth with GRO on (veth), or written to a tap"
		echo "with IFF_NAPI (tap).  The first frame has a source the router"
		echo "accepts, the 63 others a source it refuses when a frame arrives"
		echo "alone (rp_filter strict or loose, or one of its own addresses); a"
		echo "case passes when only the first is forwarded.  Before it, each IPv4"
		echo "case sends a burst all from the good source, which must be forwarded"
		echo "whole with fewer route lookups than frames (the figure shown), or"
		echo "the router got no lists.  The controls, which base already gets"
		echo "right: two good sources (all forwarded), and an IPv6 source route"
		echo "(IPv6 keeps its hint from such a table)."
		echo
		echo "| case | kernel | measured | result |"
		echo "|---|---|---|---|"
	elif [ "$STACK" = rmnet-ack ]; then
		echo "# rmnet MAP command acks: rmnet_ack on base and with the \`net\` fix"
		echo
		echo "Generated by \`$cmd\` (scripts/drops.sh) on ${kind}base $release and $on $where, at $cut, in a 2-vCPU TCG guest a case; one rmnet_ack binary, built from that tree."
		echo
		echo "Each case writes a MAP flow enable command into a tun that is an"
		echo "rmnet link's real device, and expects rmnet's ack back on queue 0:"
		echo "on a tun with one queue; on one with 256, the command written into"
		echo "the last; and on a port that strips a checksum trailer, from a tun"
		echo "whose virtio-net header asks for a checksum in it.  A case that took"
		echo "its guest down shows the console's first splat line, and the"
		echo "kernel's last words."
		echo
		echo "| case | kernel | result | what a failing case logged first |"
		echo "|---|---|---|---|"
	elif [ "$STACK" = napi-lockdep ]; then
		echo "# Lockdep and tun's write queues: tun_vhost with rx-frames, then IFF_NAPI, on base and with the \`net\` fix"
		echo
		echo "Generated by \`$cmd\` (scripts/drops.sh) on ${kind}base $release and $on $where, at $cut, in a 2-vCPU TCG guest; one tun_vhost binary, built from the series at $src_at, run as \`tun_vhost ${args[*]}\`."
		echo
		echo "vhost-net sends bursts through a tap with rx-frames 8 and a limited"
		echo "sndbuf, so that tun_rx_batched() holds skbs back in a queue's write"
		echo "queue, with softirqs on; then through a tap with IFF_NAPI, whose"
		echo "poll takes its queue's write queue lock in softirq.  No queue takes"
		echo "its lock both ways; the console row fails where lockdep, which"
		echo "puts every such lock in one class on base, says it does.  The two"
		echo "cases pass on both kernels."
		echo
		echo "| case | kernel | result | what a failing case logged first |"
		echo "|---|---|---|---|"
	elif [ "$STACK" = tap-stats ]; then
		echo "# A tap's rx_frame_errors: tun's bad_gso_type_frame_error on base and with the \`net\` fix"
		echo
		echo "Generated by \`$cmd\` (scripts/drops.sh) on ${kind}base $release and $on $where, at $cut, in a 2-vCPU TCG guest; one tun binary, built from that tree, run as \`tun ${args[*]}\`."
		echo
		echo "The case writes a frame whose virtio-net gso_type no"
		echo "VIRTIO_NET_HDR_GSO_* value has to a tap opened with IFF_VNET_HDR,"
		echo "expects write() to fail with EINVAL, and the tap's rx_frame_errors"
		echo "(RTM_GETLINK) to go up by one with no packet received."
		echo
		echo "| case | kernel | result | what a failing case logged first |"
		echo "|---|---|---|---|"
	else
		echo "# vhost-net TX: malformed descriptors on base and with the \`net\` fix"
		echo
		echo "Generated by \`$cmd\` (scripts/drops.sh) on ${kind}base $release and $on $where, at $cut, in a 2-vCPU TCG guest; one tun_vhost binary, built from the series at $src_at, run as \`tun_vhost ${args[*]}\`."
		echo
		echo "Each case posts a TX descriptor shorter than the virtio-net header,"
		echo "then one whose checksum range ends past its frame, each followed by"
		echo "a good frame, on a tap with the variant's sndbuf (limited: the"
		echo "sendmsg path; unlimited: the XDP-batch path), rx-frames or XDP"
		echo "program.  It fails if the vhost worker stays on a CPU, or if the"
		echo "queue never uses the good frame after the bad one.  The fix is on"
		echo "the XDP-batch path; the sendmsg path's cases, which base already"
		echo "gets right, pass on both kernels as controls."
		echo
		echo "| case | kernel | result | what a failing case logged first |"
		echo "|---|---|---|---|"
	fi
	LC_ALL=C sort -s -t'|' -k2,2 "$rows"	# base's row of a case first
} >"$table"
say "drops: ${table#"$TOP"/}"
[ $rc = 0 ] || echo "drops.sh: expected every case the fixes fix to fail on base," \
	"every case to pass on $CUT" >&2
exit $rc
