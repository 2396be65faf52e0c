#!/bin/bash
# In the guest: the robustness matrix.  robust.sh PACKETS FRAMES [CASE...]
# Each case pushes PACKETS packets (FRAMES malformed frames) through a tap
# while something disturbs it, then checks that the counters add up, that
# the tap can be deleted, that the kernel printed no splat and that
# kmemleak finds nothing.  One JSON line per case in
# $GUEST_OUT/robustness.jsonl:
#   {"case", "pushed", "faults", "drops", "lost", "overcounted", "splats",
#    "leaks", "ok", "note"}
# lost: packets neither received nor counted as dropped by the tap;
# overcounted: received and counted packets beyond those pushed, a count
# taken twice.  Both null where the case cannot measure them.
set -uo pipefail
all=(rx-frames-churn xdp-toggle-xdp_batch xdp-toggle-msg_more
	txqlen-churn txqlen-churn-backpressure requeue reader-stall close-mid-burst
	delete-under-load malformed-write malformed-vhost-xdp_batch malformed-vhost-msg_more
	failslab-write failslab-vhost-xdp_batch failslab-vhost-msg_more)
# robust.sh --list: the cases, one a line (scripts/robust.sh)
[ "${1:-}" = --list ] && { printf '%s\n' "${all[@]}"; exit 0; }
# --base: a kernel without the `net` accounting fixes, whose known gaps
# (uncounted losses) are reported and not failed on.
base=
[ "${1:-}" = --base ] && { base=1; shift; }
cd "$(dirname "$0")"
n=$1 frames=$2; shift 2
out=$GUEST_OUT/robustness.jsonl
dbg=/sys/kernel/debug
splat='BUG:|WARNING:|KASAN:|UBSAN:|Oops|Call Trace:|possible (recursive|circular) locking|inconsistent lock state|suspicious RCU usage'
sysctl -qw net.ipv6.conf.default.disable_ipv6=1
dmesg -C

tap() { ip tuntap add dev tap0 mode tap "$@" && ip link set tap0 up; }
# j FILTER FILE: a figure of a program's JSON.  Where the program printed
# none, or not that figure, 0, and the case fails (record): a ledger
# missing a term would read as nothing lost.
j() {
	local v
	v=$(jq -er "$1" "$2" 2>/dev/null) && [ -n "$v" ] ||
		{ echo "no $1 in $2" >>/tmp/j.err; v=0; }
	echo "$v"
}
tap_stat() { cat /sys/class/net/tap0/statistics/"$1"; }
# ip_in: the packets IPv4 has taken in (InReceives)
ip_in() { awk '$1 == "Ip:" && $4 ~ /^[0-9]+$/ { print $4 }' /proc/net/snmp; }
# unhandled_on, unhandled: the frames the stack frees for want of a
# protocol handler (kfree_skb, reason UNHANDLED_PROTO), which the core
# counts in the tap's rx_dropped after tun counted them received: 0
# where the kernel has no such event
ev=/sys/kernel/tracing/events/skb/kfree_skb
unhandled_on() {
	local r
	r=$(sed -n 's/.*{ *\([0-9]*\), "UNHANDLED_PROTO" }.*/\1/p' $ev/format 2>/dev/null)
	[ -n "$r" ] || return 0
	echo "reason == $r" >$ev/filter && echo >/sys/kernel/tracing/trace && echo 1 >$ev/enable
}
unhandled() {
	[ "$(cat $ev/enable 2>/dev/null)" = 1 ] || { echo 0; return; }
	echo 0 >$ev/enable
	grep -c 'kfree_skb:' /sys/kernel/tracing/trace
	echo 0 >$ev/filter
}
# qdisc_drops: what tap0's root qdisc has dropped (an mq root: its children)
# (through a file: the guest's devtmpfs has no /dev/fd for a <(...))
qdisc_drops() { tc -s -j qdisc show dev tap0 >/tmp/qdisc.json; j '.[0].drops // 0' /tmp/qdisc.json; }

# churn CMD: eval CMD over and over while the process $target runs, in the
# background; its pid in $churn
churn() {
	( while kill -0 "$target" 2>/dev/null; do eval "$1" >/dev/null 2>&1; done ) &
	churn=$!
}

# record CASE PUSHED FAULTS DROPS LEDGER OK NOTE: check the kernel's side
# (splats, leaks, the tap deletable) and write the case's line.  LEDGER
# is what was pushed less what was received or counted: above 0 it is
# lost, below 0 overcounted (a failure unless $over_ok says why the case
# counts a packet twice); "-" where the case cannot measure it
# ($unmeasured says why).
record() {
	local name=$1 pushed=$2 faults=$3 drops=$4 ledger=$5 ok=$6 note=$7
	local splats leaks=0 lost=0 over=0
	ip link del tap0 2>/dev/null
	if ip link show tap0 >/dev/null 2>&1; then ok=false note="$note; tap0 not deletable"; fi
	if [ -e $dbg/kmemleak ]; then
		# an object is reported once unreferenced across two scans
		sleep 6; echo scan >$dbg/kmemleak; echo scan >$dbg/kmemleak
		leaks=$(grep -c '^unreferenced object' $dbg/kmemleak)
		[ "$leaks" = 0 ] || cat $dbg/kmemleak >&2
		echo clear >$dbg/kmemleak
	fi
	splats=$(dmesg | grep -cE "$splat")
	[ "$splats" = 0 ] || dmesg | grep -m1 -A20 -E "$splat" >&2
	dmesg -C
	[ "$splats" = 0 ] && [ "$leaks" = 0 ] || ok=false
	if [ -s /tmp/j.err ]; then
		ok=false note="${note:+$note; }$(tr -d '"' </tmp/j.err | paste -sd ';')"
	fi
	if [ "$ledger" = - ]; then
		lost=null over=null note="${note:+$note; }$unmeasured"
	elif [ "$ledger" -lt 0 ]; then
		over=$((-ledger))
		[ -n "${over_ok:-}" ] || ok=false
		note="${note:+$note; }${over_ok:-overcounted: $over packets counted twice}"
	elif [ "$ledger" -gt 0 ]; then
		lost=$ledger
		if [ -n "${lost_ok:-}" ]; then note="${note:+$note; }$lost_ok"; else ok=false; fi
	fi
	printf '{"case":"%s","pushed":%s,"faults":%s,"drops":%s,"lost":%s,"overcounted":%s,"splats":%s,"leaks":%s,"ok":%s,"note":"%s"}\n' \
		"$name" "$pushed" "$faults" "$drops" "$lost" "$over" "$splats" "$leaks" "$ok" "$note" | tee -a "$out"
}

# vhost_case NAME CHURN-CMD VHOST-ARGS...: vhost-net TX into tap0 while the
# churn command runs; the driver itself checks sent = received + dropped.
vhost_case() {
	local name=$1 cmd=$2 rc; shift 2
	tap vnet_hdr
	./vhost --mode tx --tap tap0 --packets "$n" --timeout 120 "$@" >/tmp/v.json 2>/tmp/v.err &
	target=$!
	churn "$cmd"
	wait $target; rc=$?
	kill $churn 2>/dev/null; wait $churn 2>/dev/null
	[ "$(j '.packets // 0' /tmp/v.json)" -gt 0 ] || { rc=1; echo "; vhost sent nothing" >>/tmp/v.err; }
	record "$name" "$(j .packets /tmp/v.json)" 0 \
		"$(j '.tap_rx_dropped' /tmp/v.json)" \
		"$(j '.packets - .received - .tap_rx_dropped - .udp_in_errors' /tmp/v.json)" \
		"$([ $rc = 0 ] && echo true || echo false)" "$(tr -d '"\n' </tmp/v.err)"
}

# xmit_case NAME CHURN-CMD READER-ARGS -- GEN: a generator transmits through
# tap0 (tun_net_xmit) to readers while the churn command runs; every packet
# sent is read or counted in tx_dropped.
xmit_case() {
	local name=$1 cmd=$2 rargs=() readers=1 rc=0 read=0 sent p; shift 2
	while [ "$1" != -- ]; do rargs+=("$1"); shift; done; shift
	[[ " ${rargs[*]} " = *" --multi-queue "* ]] && readers=2
	tap ${mq:-}
	[ -z "${qdisc:-}" ] || tc qdisc replace dev tap0 root $qdisc
	ip addr add 10.0.2.1/24 dev tap0
	ip neigh add 10.0.2.2 lladdr 02:00:00:00:00:02 dev tap0
	local pids=()
	for r in $(seq $readers); do
		# A debug kernel under TCG may take long to start the generator,
		# and make stress's packets take many minutes: the readers stop
		# 3 s after the last packet, not while the generator still sends.
		./reader --tap tap0 --packets $((n * 2)) --timeout 3 --max-time 86400 "${rargs[@]}" \
			--start-timeout 60 --ready /tmp/ready.$r >/tmp/r$r.json 2>/tmp/r$r.err &
		pids+=($!)
	done
	for r in $(seq $readers); do
		for _ in $(seq 100); do [ -e /tmp/ready.$r ] && break; sleep 0.1; done
	done
	target=${pids[0]}
	local d0 q0; d0=$(tap_stat tx_dropped) q0=$(qdisc_drops)
	churn "$cmd"
	local st=0
	"$@" >/tmp/g.json 2>/tmp/g.err || st=$?
	[ $st = 0 ] || { rc=1; echo "; the generator exited $st" >>/tmp/g.err; }
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	kill $churn 2>/dev/null; wait $churn 2>/dev/null
	rm -f /tmp/ready.*
	# pktgen sends another frame for each the tap refused (and counted
	# in tx_dropped): those were pushed too.
	sent=$(j '.packets + (.errors // 0)' /tmp/g.json)
	# a case where nothing was sent tested nothing
	[ "$sent" -gt 0 ] || { rc=1; echo "; the generator sent nothing" >>/tmp/g.err; }
	for r in $(seq $readers); do read=$((read + $(j .packets /tmp/r$r.json))); done
	# What the qdisc itself dropped (pfifo: a full queue) is counted too.
	local dropped=$(($(tap_stat tx_dropped) - d0 + $(qdisc_drops) - q0))
	local lost=$((sent - read - dropped))
	# readers that gave up before the traffic would make it all "lost"
	[ $read -gt 0 ] || [ $lost -le 0 ] || { rc=1; echo "the readers read nothing" >>/tmp/g.err; }
	# A loss is tun's only if the qdisc passed the packets on (passed
	# counts GSO segments, drops whole skbs) and the readers read to the
	# end.
	if [ $lost -gt 0 ]; then
		tc -s -j qdisc show dev tap0 |
			jq -r '"; qdisc \(.[0].kind): passed \(.[0].packets), dropped \(.[0].drops)"'
		for r in $(seq $readers); do echo "; reader $r read for $(j '.ns / 1e9 | floor' /tmp/r$r.json) s"; done
	fi >>/tmp/g.err
	record "$name" "$sent" 0 "$dropped" "$lost" \
		"$([ $rc = 0 ] && echo true || echo false)" "$(cat /tmp/r*.err /tmp/g.err | tr -d '"\n')"
}

gso32() { ./gso --dst 10.0.2.2 --port 9000 --segs 32 --seg-size 22 --packets "$n" --timeout 600; }
# One datagram a send: where the noop qdisc may drop (a device deactivated
# for a tx_queue_len change), it counts one drop an skb, not a segment.
udp1() { ./gso --dst 10.0.2.2 --port 9000 --segs 1 --seg-size 22 --packets "$n" --timeout 600; }

# fault_on KIND: allocations of tasks marked make-it-fail (the programs'
# --fail: the writer while it sends, the vhost worker) fail at random:
# failslab for every slab cache, fail_page_alloc for kernel pages (user
# pages, highmem, are spared so that the process keeps running).  The
# probability goes last: before the task filter it fails every task's
# allocations, this script's and the 9p client's among them.
fault_on() {
	local d=$dbg/$1
	for a in "times 1000000" "interval 1" "verbose 0" "task-filter Y" \
		"ignore-gfp-wait N"; do echo "${a#* }" >"$d/${a% *}"; done
	case $1 in
	failslab) echo N >$d/cache-filter ;;
	fail_page_alloc) echo Y >$d/ignore-gfp-highmem; echo 0 >$d/min-order ;;
	esac
	echo 10 >$d/probability
}
# faults_off: stop injecting; prints how many allocations were failed
faults_off() {
	local d f=0
	for d in failslab fail_page_alloc; do
		[ "$(cat $dbg/$d/times)" -gt 1 ] && f=$((f + 1000000 - $(cat $dbg/$d/times)))
		echo 1 >$dbg/$d/times; echo 0 >$dbg/$d/probability
	done
	echo $f
}

run_case() {
	case $1 in
	rx-frames-churn)	# ethtool -C rx-frames changed under MSG_MORE load
		vhost_case "$1" 'for f in 0 4 64 1 32; do ethtool -C tap0 rx-frames $f; done' \
			--sndbuf limited --burst 64 ;;
	xdp-toggle-xdp_batch | xdp-toggle-msg_more)	# XDP attached and detached
		local sb=unlimited; [ "$1" = xdp-toggle-msg_more ] && sb=limited
		# On the sendmsg path tun runs the program as generic XDP, whose
		# drops no device counts (base too): there, toggle XDP_PASS.
		local act=drop; [ $sb = limited ] && act=pass
		vhost_case "$1" 'sleep 1' --sndbuf $sb --burst 64 --xdp $act --xdp-toggle 3 ;;

	txqlen-churn | txqlen-churn-backpressure)	# ring resize via tx_queue_len
		local bp=()
		# Packets wait in the qdisc while another CPU runs it (and with
		# IFF_BACKPRESSURE while tun's queue is stopped), and the default
		# pfifo_fast's resize frees what no longer fits, counted by no
		# one (net/sched, not tun): a pfifo, which tx_queue_len does not
		# resize, keeps the case to tun's rings.
		[ "$1" = txqlen-churn-backpressure ] && bp=(--backpressure)
		# On base a ring resized smaller frees what does not fit
		# uncounted (tun_queue_resize()): lost packets are reported.
		qdisc="pfifo limit 1000" lost_ok=${base:+"lost: freed by ring shrinks, uncounted (base)"} \
			xmit_case "$1" 'for l in 1 16 500 4 1000; do ip link set tap0 txqueuelen $l; done' \
			"${bp[@]}" -- udp1 ;;
	requeue)	# TUNSETQUEUE detach and attach under load, two queues
		# On base a detached queue's ring is purged uncounted
		# (__tun_detach()): lost packets are reported, not failed on.
		mq=multi_queue lost_ok=${base:+"lost: purged from detached rings, uncounted (base)"} xmit_case "$1" 'sleep 1' --multi-queue --requeue 20 -- \
			./pktgen --dev tap0 --dst 10.0.2.2 --dst-mac 02:00:00:00:00:02 --packets "$n" ;;
	reader-stall)	# the reader stops (ring full) and resumes
		xmit_case "$1" 'kill -STOP $target; sleep 0.5; kill -CONT $target; sleep 0.5' -- gso32 ;;
	close-mid-burst)	# fds closed under load: drivers killed mid-burst
		# A killed driver reports nothing: what the tap counts as
		# received must have reached IP.
		local i rc=true i0
		tap vnet_hdr
		i0=$(ip_in)
		for i in 1 2 3 4 5; do
			./vhost --mode tx --tap tap0 --sndbuf $([ $((i % 2)) = 0 ] && echo limited || echo unlimited) \
				--burst 64 --packets $((n * 100)) --timeout 300 >/dev/null 2>&1 &
			local v=$!
			sleep 0.$((i * 3))
			kill -9 $v; wait $v 2>/dev/null
		done
		local rx; rx=$(tap_stat rx_packets)
		record "$1" "$rx" 0 "$(tap_stat rx_dropped)" $((rx - ($(ip_in) - i0))) $rc \
			"5 vhost-net drivers killed mid-run; pushed: received by the tap, and lost unless IP took it in" ;;
	delete-under-load)	# the device deleted while vhost-net, a reader and a sender use it
		tap vnet_hdr
		ip addr add 10.0.2.1/24 dev tap0
		ip neigh add 10.0.2.2 lladdr 02:00:00:00:00:02 dev tap0
		./vhost --mode tx --tap tap0 --packets $((n * 100)) --timeout 300 >/dev/null 2>&1 &
		local pids=($!)
		./reader --tap tap0 --packets $((n * 100)) --timeout 3 >/dev/null 2>&1 &
		pids+=($!)
		./gso --dst 10.0.2.2 --port 9000 --segs 32 --seg-size 22 --packets $((n * 100)) \
			--timeout 300 >/dev/null 2>&1 &
		pids+=($!)
		sleep 1
		ip link del tap0
		# a blocked reader must return; then every user must exit
		local t=0 p ok=true note="reader returned, all tap users exited after the delete"
		while kill -0 "${pids[1]}" 2>/dev/null && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
		kill -0 "${pids[1]}" 2>/dev/null && ok=false note="reader still blocked 10 s after the delete"
		kill -9 "${pids[@]}" 2>/dev/null
		t=0
		while kill -0 "${pids[@]}" 2>/dev/null && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
		for p in "${pids[@]}"; do
			kill -0 "$p" 2>/dev/null && ok=false note="pid $p did not exit after SIGKILL"
		done
		wait "${pids[@]}" 2>/dev/null
		# The tap's counters go with it.
		unmeasured="lost not measurable: the device and its counters are gone" \
			record "$1" 0 0 0 - $ok "$note" ;;
	malformed-write)	# the corpus through write()
		tap vnet_hdr
		./writer --tap tap0 --malformed 1 --packets "$frames" >/tmp/w.json 2>/tmp/w.err
		local rc=$?
		# tun counts a write it accepts in rx_packets, and some it
		# rejects in rx_dropped: only the accepted ones are its to count.
		record "$1" "$(j .frames /tmp/w.json)" 0 "$(j .rejected /tmp/w.json)" \
			"$(j '.accepted - .tap_rx_packets' /tmp/w.json)" \
			"$([ $rc = 0 ] && echo true || echo false)" "$(j '"accepted \(.accepted)"' /tmp/w.json)$(tr -d '"\n' </tmp/w.err)" ;;
	malformed-vhost-xdp_batch | malformed-vhost-msg_more)	# the corpus through vhost-net
		local sb=unlimited; [ "$1" = malformed-vhost-msg_more ] && sb=limited
		# tun_get_user() refuses some frames before it has an skb (a
		# header past the frame, a frame shorter than ETH_HLEN) with
		# -EINVAL, which vhost-net drops: counted nowhere in net; Jon
		# Kohler's net-next "tun: correct drop statistics in
		# tun_get_user" counts them.  On base a tap also reports no frame
		# errors (tap-stats) and tun_xdp_one() drops short frames
		# uncounted (accounting).  Reported, not failed on.
		local lost_ok=
		[ "$1" = malformed-vhost-msg_more ] &&
			lost_ok="lost: refused by tun_get_user() before any skb, uncounted (net-next)"
		[ -n "$base" ] && lost_ok="lost: short frames and frame errors, uncounted or unreported (base)"
		tap vnet_hdr
		unhandled_on
		./vhost --mode tx --tap tap0 --sndbuf $sb --burst 64 --malformed 2 --packets "$frames" \
			--timeout 600 >/tmp/v.json 2>/tmp/v.err
		local rc=$? u; u=$(unhandled)
		# No socket takes malformed frames: tun delivered, dropped or
		# counted a bad virtio-net header, each frame once.  A random
		# frame it delivered whose protocol nothing handles is in
		# rx_dropped too, counted by the stack: not tun's drop.
		record "$1" "$(j .packets /tmp/v.json)" 0 "$(j ".tap_rx_dropped - $u + .tap_rx_frame_errors" /tmp/v.json)" \
			"$(j ".packets - .tap_rx_packets - (.tap_rx_dropped - $u) - .tap_rx_frame_errors" /tmp/v.json)" \
			"$([ $rc = 0 ] && echo true || echo false)" \
			"$(j '"\(.kept_from_vhost) frames adjusted to pass vhost-net'"'"'s own checks"' /tmp/v.json); $u delivered and dropped by the stack for want of a protocol handler$(tr -d '"\n' </tmp/v.err)" ;;
	failslab-write)	# skb allocations of the writer fail at random
		tap
		fault_on failslab
		./writer --tap tap0 --packets "$n" --timeout 120 --fail >/tmp/w.json 2>/tmp/w.err
		local rc=$? f; f=$(faults_off)
		record "$1" "$(j '.packets + .write_errors' /tmp/w.json)" "$f" \
			"$(j '.tap_rx_dropped + .udp_in_errors' /tmp/w.json)" \
			"$(j '.packets + .write_errors - .received - .tap_rx_dropped - .udp_in_errors' /tmp/w.json)" \
			"$([ $rc = 0 ] && [ "$f" -gt 0 ] && echo true || echo false)" "$(tr -d '"\n' </tmp/w.err)" ;;
	failslab-vhost-xdp_batch | failslab-vhost-msg_more)	# in the vhost worker
		local sb=limited lost_ok= over_ok=
		# tun counts a send that failed for memory as dropped, and
		# vhost-net sends that descriptor again (handle_tx_copy()).
		[ "$1" = failslab-vhost-msg_more ] &&
			over_ok="overcounted: sends that failed for memory, counted dropped, then sent again"
		# On base tun_xdp_one() returns a failed build_skb() uncounted,
		# and vhost-net has used the descriptor: report the loss.
		[ "$1" = failslab-vhost-xdp_batch ] && sb=unlimited \
			lost_ok=${base:+"lost: failed skb builds in tun_xdp_one(), uncounted (base)"}
		tap vnet_hdr
		fault_on failslab; fault_on fail_page_alloc
		./vhost --mode tx --tap tap0 --sndbuf $sb --burst 64 --packets "$n" --timeout 120 \
			--fail >/tmp/v.json 2>/tmp/v.err
		local rc=$? f; f=$(faults_off)
		record "$1" "$(j .packets /tmp/v.json)" "$f" "$(j .tap_rx_dropped /tmp/v.json)" \
			"$(j '.packets - .received - .tap_rx_dropped - .udp_in_errors' /tmp/v.json)" \
			"$([ $rc = 0 ] && [ "$f" -gt 0 ] && echo true || echo false)" "$(tr -d '"\n' </tmp/v.err)" ;;
	*)	echo "robust: unknown case $1" >&2; return 1 ;;
	esac
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${all[@]}")
# A case that wrote no line checked nothing: the run fails, whichever
# case it was.
rc=0
for c in "${cases[@]}"; do
	echo "robust: $c" >&2
	rm -f /tmp/j.err
	lines=$(cat "$out" 2>/dev/null | wc -l)
	run_case "$c" || rc=1
	[ "$(cat "$out" 2>/dev/null | wc -l)" -gt "$lines" ] || { echo "robust: $c wrote no result" >&2; rc=1; }
done
exit $rc
