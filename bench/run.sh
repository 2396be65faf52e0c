#!/bin/bash
# In the guest, or natively (bench.sh MODE=native, in a netns of its own):
# run one bench scenario, append one JSON line per case to
# $GUEST_OUT/results.jsonl.  run.sh SCENARIO PACKETS
#   {"case": ..., "params": {...}, "result": {program's JSON}}
# A program that fails (or whose counters do not add up) fails the run.
# BENCH_CPU=1 (wall-clock modes): the programs also report the CPU time
# all CPUs were busy in their measured window (common.c, busy_ticks()).
# NATIVE=1: a case whose facility the running kernel lacks (vhost-net,
# pktgen) is left out with a "skipped" line, a scenario that has no case
# left exits 4 after such a line; in a guest, whose kernel has them all,
# it fails.  BENCH_TMP: where scratch files go (default /tmp).
set -euo pipefail
cd "$(dirname "$0")"
scenario=$1 n=$2
out=$GUEST_OUT/results.jsonl
tr=/sys/kernel/tracing
tmp=${BENCH_TMP:-/tmp}

case_() { # case_ NAME PARAMS-JSON CMD...: run CMD, record its JSON line
	local name=$1 params=$2; shift 2
	local res
	res=$("$@") || { echo "bench: case $name failed: $*" >&2; exit 1; }
	echo "{\"scenario\":\"$scenario\",\"case\":\"$name\",\"params\":$params,\"result\":$res}" >>"$out"
	echo "$scenario $name: $res"
}

# have WHAT: whether the kernel has vhost (/dev/vhost-net) or pktgen, loading
# its module if need be.  Natively, a missing one is recorded as skipped.
have() {
	local dev mod
	case $1 in
	vhost) dev=/dev/vhost-net mod=vhost_net ;;
	pktgen) dev=/proc/net/pktgen mod=pktgen ;;
	esac
	[ -e $dev ] || modprobe -q $mod 2>/dev/null || true
	[ -e $dev ] && return
	[ -n "${NATIVE:-}" ] || { echo "bench: no $dev in this kernel" >&2; exit 1; }
	echo "{\"scenario\":\"$scenario\",\"skipped\":\"$1: no $dev ($mod not built or not loadable)\"}" >>"$out"
	return 1
}

# count FUNC CMD...: run CMD with FUNC's calls counted by a kprobe, in a run
# of its own (a probe costs instructions), and record the count.
count() {
	local fn=$1 name=$2; shift 2
	[ -z "${NATIVE:-}" ] || return 0	# a probe's cost is in no native figure
	echo "p:bench_$fn $fn" >>$tr/kprobe_events
	echo 1 >$tr/events/kprobes/bench_$fn/enable
	"$@" >/dev/null
	echo 0 >$tr/events/kprobes/bench_$fn/enable
	local hits
	hits=$(awk -v e="bench_$fn" '$1 == e { print $2 }' $tr/kprobe_profile)
	echo "-:bench_$fn" >>$tr/kprobe_events
	echo "{\"scenario\":\"$scenario\",\"case\":\"$name\",\"count\":{\"$fn\":$hits}}" >>"$out"
}

tap() { # tap NAME [ip tuntap flags]: a persistent tap the programs attach to
	local t=$1; shift
	ip tuntap add dev "$t" mode tap "$@"
	ip link set "$t" up
}
untap() { ip link del "$1" 2>/dev/null || true; }
mac() { ip ${1:+-n "$1"} -br link show "$2" | awk '{ print $3 }'; } # mac NETNS DEV
# link NETNS NET: tap0 here (NET.1) and tap1 in NETNS (NET.2) up, each with
# the other's address in its neighbour table, so that no ARP comes into a
# measurement
link() {
	ip link set tap0 up
	ip -n "$1" link set lo up
	ip -n "$1" link set tap1 up
	ip addr add "$2.1/24" dev tap0
	ip -n "$1" addr add "$2.2/24" dev tap1
	ip neigh add "$2.2" lladdr "$(mac "$1" tap1)" dev tap0
	ip -n "$1" neigh add "$2.1" lladdr "$(mac "" tap0)" dev tap1
}
wait_for() { # wait_for FILE: up to 30 s, for a program's --ready file
	local i
	for i in $(seq 300); do [ -e "$1" ] && return; sleep 0.1; done
	echo "bench: $1 did not appear in 30 s" >&2; exit 1
}

# consume_with CASE PARAMS CONSUMER... -- GENERATOR...: a tap consumer
# (./reader or ./vhost --mode rx) waiting while a generator sends through
# the tap; the generator starts first and waits for the consumer (--after).
consume_with() {
	local name=$1 params=$2 cons=() ready=$tmp/ready.$$
	shift 2
	while [ "$1" != -- ]; do cons+=("$1"); shift; done; shift
	rm -f $ready
	"${cons[@]}" --start-timeout 30 --ready $ready >$tmp/consumer.json &
	local pid=$!
	"$@" --after $ready >$tmp/gen.json
	wait $pid || { echo "bench: consumer failed in $name" >&2; exit 1; }
	echo "{\"scenario\":\"$scenario\",\"case\":\"$name\",\"params\":$params,\"result\":$(cat $tmp/consumer.json),\"generator\":$(cat $tmp/gen.json)}" >>"$out"
	echo "$scenario $name: $(cat $tmp/consumer.json)"
}

case $scenario in
s000)	# generator -> tap1 -> br0 -> tap0 -> consumer (seed 000)
	ip link add br0 type bridge
	sysctl -qw net.ipv6.conf.br0.disable_ipv6=1
	ip link set br0 up
	# The fdb is an rhashtable seeded at random on each boot: its lookups
	# walked chains whose length changed from boot to boot, 1% of the
	# cost of a packet.  Without learning and the ports' local entries
	# every lookup misses in an empty table, and the unknown destination
	# floods to tap0 as before.
	for t in tap0 tap1; do
		tap $t
		ip link set $t master br0
		ip link set $t type bridge_slave learning off
		bridge fdb del "$(cat /sys/class/net/$t/address)" dev $t master
	done
	if bridge fdb show br br0 | grep -q ' master br0'; then
		echo "bench: br0's fdb is not empty" >&2; exit 1
	fi
	for w in read poll; do
		consume_with "consumer $w" "{\"wait\":\"$w\",\"size\":64}" \
			./reader --tap tap0 --packets "$n" --wait $w -- \
			./writer --tap tap1 --no-addr --flows 0 --size 64 --packets "$n" \
				--dst-mac 02:00:00:00:00:03
	done
	;;
s001)	# write() into a tap, delivered to a UDP socket (seed 001)
	case_ "write 512" '{"size":512}' ./writer --tap tap0 --flows 1 --size 512 --packets "$n"
	case_ "write 64" '{"size":64}' ./writer --tap tap0 --flows 1 --size 64 --packets "$n"
	# the same frames sent by af_packet into a veth, received on its
	# peer: another caller of skb_probe_transport_header()
	ip link add vp0 type veth peer name vp1
	case_ "af_packet veth 64" '{"size":64,"via":"af_packet"}' \
		./writer --packet vp0 --tap vp1 --flows 1 --size 64 --packets "$n"
	ip link del vp0
	;;
s002)	# vhost-net TX into a tap (seed 002)
	have vhost || exit 4
	for f in 0 4 8 16 32 48 64; do
		tap tap0 vnet_hdr; ethtool -C tap0 rx-frames $f
		case_ "msg_more rx-frames $f" "{\"mode\":\"msg_more\",\"rx_frames\":$f,\"burst\":64}" \
			./vhost --mode tx --tap tap0 --sndbuf limited --burst 64 --packets "$n"
		untap tap0
	done
	for b in 1 2 4 8 16 32 64; do
		case_ "xdp_batch burst $b" "{\"mode\":\"xdp_batch\",\"burst\":$b}" \
			./vhost --mode tx --tap tap0 --sndbuf unlimited --burst $b --packets "$n"
	done
	# peer: the opt-in a user can pick today, IFF_NAPI (NAPI + GRO lists)
	tap tap0 vnet_hdr; ethtool -C tap0 rx-frames 64
	case_ "napi msg_more rx-frames 64" '{"mode":"msg_more","rx_frames":64,"burst":64,"napi":true}' \
		./vhost --mode tx --tap tap0 --napi --sndbuf limited --burst 64 --packets "$n"
	untap tap0
	for b in 1 64; do
		case_ "napi xdp_batch burst $b" "{\"mode\":\"xdp_batch\",\"burst\":$b,\"napi\":true}" \
			./vhost --mode tx --tap tap0 --napi --sndbuf unlimited --burst $b --packets "$n"
	done
	# vhost-net's own options: busy polling of the TX ring (50 us), and
	# an IOTLB (VIRTIO_F_ACCESS_PLATFORM) whose misses the driver answers
	for v in busyloop iotlb; do
		case $v in
		busyloop) vopt=(--busyloop 50) vparam='"busyloop_us":50' ;;
		iotlb) vopt=(--iotlb) vparam='"iotlb":true' ;;
		esac
		tap tap0 vnet_hdr; ethtool -C tap0 rx-frames 64
		case_ "$v msg_more rx-frames 64" "{\"mode\":\"msg_more\",\"rx_frames\":64,\"burst\":64,$vparam}" \
			./vhost --mode tx --tap tap0 "${vopt[@]}" --sndbuf limited --burst 64 --packets "$n"
		untap tap0
		case_ "$v xdp_batch burst 64" "{\"mode\":\"xdp_batch\",\"burst\":64,$vparam}" \
			./vhost --mode tx --tap tap0 "${vopt[@]}" --sndbuf unlimited --burst 64 --packets "$n"
	done
	# floor: the cheapest path there is, an XDP program on the tap
	for x in drop pass; do
		case_ "floor xdp_$x burst 64" "{\"mode\":\"xdp_batch\",\"burst\":64,\"xdp\":\"$x\"}" \
			./vhost --mode tx --tap tap0 --sndbuf unlimited --burst 64 --xdp $x --packets "$n"
	done
	;;
s003)	# host -> guest: tun_net_xmit -> ptr_ring -> reader (seed 003)
	# gen_for GEN: the generator command line g, and its name and params
	gen_for() {
		if [ "$1" = pktgen ]; then
			g=(./pktgen --dev tap0 --dst 10.0.2.2 --dst-mac 02:00:00:00:00:02)
			gname=pktgen gparams='"gen":"pktgen"'
		else
			local segs=${1#gso }
			g=(./gso --dst 10.0.2.2 --port 9000 --segs "$segs" --seg-size 22)
			gname="gso $segs segs" gparams="\"gen\":\"gso\",\"segs\":$segs"
		fi
	}
	# measure NAME PARAMS CONSUMER... -- GEN...: once plain, once with the
	# reader wakeups (sock_def_readable, tun's sk_data_ready) counted; a
	# count per packet needs a fifth of the packets
	measure() {
		local name=$1 params=$2 c=()
		shift 2
		while [ "$1" != -- ]; do c+=("$1"); shift; done; shift
		tap tap0
		ip addr add 10.0.2.1/24 dev tap0
		ip neigh add 10.0.2.2 lladdr 02:00:00:00:00:02 dev tap0
		consume_with "$name" "$params" "${c[@]}" --packets "$n" -- "$@" --packets "$n"
		count sock_def_readable "$name" consume_with "$name (counted)" "$params" \
			"${c[@]}" --packets $((n / 5)) -- "$@" --packets $((n / 5))
		untap tap0
	}
	# consumers: read(), poll(), and the vhost-net RX ring (a VM's
	# receive path)
	for bp in "" backpressure; do
		flags=() p=false
		[ -n "$bp" ] && flags=(--backpressure) p=true
		for w in read poll vhost; do
			[ $w != vhost ] || have vhost || continue
			for gen in "pktgen" "gso 1" "gso 32"; do
				[ "$gen" != pktgen ] || have pktgen || continue
				gen_for "$gen"
				if [ $w = vhost ]; then
					c=(./vhost --mode rx --dst-ip 10.0.2.1) wname="vhost-net rx"
				else
					c=(./reader --wait $w) wname=$w
				fi
				measure "$gname, $wname${bp:+, $bp}" "{$gparams,\"wait\":\"$w\",\"backpressure\":$p}" \
					"${c[@]}" --tap tap0 "${flags[@]}" -- "${g[@]}"
			done
		done
	done
	;;
s004)	# 10 UDP flows of 1-byte payload written into a tap (seed 004)
	case_ "10 flows, 1 B" '{"flows":10,"payload":1}' \
		./writer --tap tap0 --flows 10 --size 43 --packets "$n"
	;;
bridged)	# vhost-net TX into a tap that is a bridge port: tap0 -> br0 -> vp0
	# -> vp1, where the sinks are.  The bridge's rx_handler consumes each
	# skb in __netif_receive_skb_core(), so a list gains nothing there.
	# As in s000, no learning and no local entries: every lookup misses
	# in an empty fdb, and each frame floods to vp0 alone.
	have vhost || exit 4
	# br0's address is set, so it does not follow its ports' as the tap
	# comes and goes, and its own entry goes once
	ip link add br0 address 02:00:00:00:0b:00 type bridge
	bridge fdb del 02:00:00:00:0b:00 dev br0 self
	ip link add vp0 type veth peer name vp1
	for d in br0 vp0 vp1; do sysctl -qw net.ipv6.conf.$d.disable_ipv6=1; done
	for d in br0 vp0 vp1; do ip link set $d up; done
	port() { # port DEV: a bridge port that neither learns nor is local
		ip link set "$1" master br0
		ip link set "$1" type bridge_slave learning off
		bridge fdb del "$(mac "" "$1")" dev "$1" master
	}
	port vp0
	bridged() { # bridged NAME PARAMS RX-FRAMES VHOST-ARGS...: a case, a fresh tap
		local name=$1 params=$2 frames=$3; shift 3
		ip tuntap add dev tap0 mode tap vnet_hdr
		sysctl -qw net.ipv6.conf.tap0.disable_ipv6=1
		ethtool -C tap0 rx-frames "$frames"
		port tap0
		if bridge fdb show br br0 | grep -q ' master br0'; then
			echo "bench: br0's fdb is not empty" >&2; exit 1
		fi
		case_ "$name" "$params" ./vhost --mode tx --tap tap0 --sink vp1 "$@" --packets "$n"
		untap tap0
	}
	for f in 0 64; do
		bridged "msg_more rx-frames $f" "{\"mode\":\"msg_more\",\"rx_frames\":$f,\"burst\":64}" \
			$f --sndbuf limited --burst 64
	done
	for b in 1 64; do
		bridged "xdp_batch burst $b" "{\"mode\":\"xdp_batch\",\"burst\":$b}" \
			0 --sndbuf unlimited --burst $b
	done
	;;
forwarded)	# vhost-net TX into a tap that is a router's interface: tap0
	# (10.0.5.1) -> forwarding -> fw0 (10.0.6.1) -> fw1 (10.0.6.2) in the
	# netns bench-host, where the sinks are.  With rp_filter 1 the
	# router checks each source against tap0's routes.  Lists reach
	# ip_list_rcv() with IFF_NAPI (GRO, 8 skbs a list), and from the
	# XDP batch and rx-frames where the stack delivers those as lists;
	# with two sources alternating, the route-hint fix validates the
	# source of every other skb.
	have vhost || exit 4
	ip netns add bench-host
	trap 'ip netns del bench-host 2>/dev/null || true; untap tap0' EXIT
	ip link add fw0 type veth peer name fw1 netns bench-host
	sysctl -qw net.ipv6.conf.fw0.disable_ipv6=1
	ip netns exec bench-host sysctl -qw net.ipv6.conf.fw1.disable_ipv6=1
	ip addr add 10.0.6.1/24 dev fw0
	ip link set fw0 up
	ip -n bench-host addr add 10.0.6.2/24 dev fw1
	ip -n bench-host link set fw1 up
	ip neigh add 10.0.6.2 lladdr "$(mac bench-host fw1)" dev fw0
	sysctl -qw net.ipv4.ip_forward=1
	routed() { # routed NAME PARAMS RP RX-FRAMES VHOST-ARGS...: a case, a fresh tap
		local name=$1 params=$2 rp=$3 frames=$4; shift 4
		ip tuntap add dev tap0 mode tap vnet_hdr
		sysctl -qw net.ipv6.conf.tap0.disable_ipv6=1
		sysctl -qw net.ipv4.conf.tap0.rp_filter="$rp"
		ethtool -C tap0 rx-frames "$frames"
		ip addr add 10.0.5.1/24 dev tap0
		case_ "$name" "$params" ./vhost --mode tx --tap tap0 --route bench-host \
			--src-ip 10.0.5.2 --dst-ip 10.0.6.2 "$@" --packets "$n"
		untap tap0
	}
	for rp in 0 1; do
		routed "rp_filter $rp, msg_more rx-frames 64" \
			"{\"rp_filter\":$rp,\"mode\":\"msg_more\",\"rx_frames\":64,\"burst\":64}" \
			$rp 64 --sndbuf limited --burst 64
		for src in 1 2; do
			for napi in false true; do
				name="rp_filter $rp, xdp_batch burst 64"
				napi_opt=()
				[ $napi = false ] || name="rp_filter $rp, napi xdp_batch burst 64" napi_opt=(--napi)
				[ $src = 1 ] || name+=", 2 sources"
				routed "$name" "{\"rp_filter\":$rp,\"mode\":\"xdp_batch\",\"burst\":64,\"sources\":$src,\"napi\":$napi}" \
					$rp 0 "${napi_opt[@]}" --sndbuf unlimited --burst 64 --sources $src
			done
		done
	done
	;;
tcp-stream)	# TCP through vhost-net, both ways.  To the host: the stack of
	# the netns bench-guest sends on tap1, ./vhost --mode relay posts
	# what it sends to vhost-net TX on tap0, and a socket here receives
	# it; with TSO off as MTU frames (vhost-net's XDP batch), on as GSO
	# frames of up to 64 KB (too large for a batch: one sendmsg each).
	# To the guest (--to-guest): a socket here sends, vhost-net RX takes
	# what tap0 transmits (GSO frames where tap0 has TSO), and the relay
	# writes it into tap1.  Writes of 64 KB, and with TSO off of 1 KB
	# and 64 B on one flow.
	have vhost || exit 4
	ip netns add bench-guest
	trap 'kill $(jobs -p) 2>/dev/null || true; wait; ip netns del bench-guest 2>/dev/null || true; untap tap0' EXIT
	# each connection starts afresh, not from the last one's metrics
	sysctl -qw net.ipv4.tcp_no_metrics_save=1
	ip netns exec bench-guest sysctl -qw net.ipv4.tcp_no_metrics_save=1
	for dir in host guest; do
		# the receiver's and the sender's netns, address and tap
		if [ $dir = host ]; then
			recv=() send=(ip netns exec bench-guest)
			addr=10.0.4.1 rtap=tap0 stap=tap1
		else
			recv=(ip netns exec bench-guest) send=()
			addr=10.0.4.2 rtap=tap1 stap=tap0
		fi
		for tso in off on; do
			ip tuntap add dev tap0 mode tap vnet_hdr
			ip -n bench-guest tuntap add dev tap1 mode tap vnet_hdr
			sysctl -qw net.ipv6.conf.tap0.disable_ipv6=1
			ip netns exec bench-guest sysctl -qw net.ipv6.conf.tap1.disable_ipv6=1
			rm -f $tmp/relay.ready
			t=(); [ $tso = on ] && t=(--tso)
			[ $dir = guest ] && t+=(--to-guest)
			./vhost --mode relay --tap tap0 --from tap1 --from-netns bench-guest "${t[@]}" \
				--ready $tmp/relay.ready >$tmp/relay.json &
			relay=$!
			wait_for $tmp/relay.ready
			link bench-guest 10.0.4
			# Small writes with TSO off alone: with TSO on the
			# stack cuts their GSO frames as the ACKs come, and a
			# boot may fall into sending each write alone, with
			# ten times the task switches
			sizes="1:65536 4:65536"
			[ $tso = on ] || sizes+=" 1:1024 1:64"
			for fs in $sizes; do
				f=${fs%:*} size=${fs#*:}
				# the rows of 64 KB writes to the host keep the
				# names they had before there were others
				name="tso $tso, $f flows"
				[ "$size" = 65536 ] || name+=", $size B writes"
				# 64 B writes cost three to eight times what 64 KB
				# ones do a KiB: a fifth of the bytes repeat as well
				bytes=$((n * 1448))
				[ "$size" != 64 ] || bytes=$((bytes / 5))
				params="{\"tso\":\"$tso\",\"flows\":$f,\"size\":$size"
				[ $dir = host ] || name="to guest, $name" params+=',"to":"guest"'
				consume_with "$name" "$params}" \
					"${recv[@]}" ./stream --serve --addr $addr --tap $rtap --flows $f -- \
					"${send[@]}" ./stream --addr $addr --flows $f \
						--size "$size" --bytes $bytes
			done
			# A frame lost on the way would put TCP's recovery in
			# the figure.  Counted before the relay goes: then the
			# sender's last ACKs are lost, and it retransmits into
			# a tap with no reader.
			lost=$("${send[@]}" cat /sys/class/net/$stap/statistics/tx_dropped)
			kill $relay
			wait $relay
			grep -q '"write_errors":0,' $tmp/relay.json && [ "$lost" = 0 ] ||
				{ echo "bench: the relay lost frames (the sending tap dropped $lost): $(cat $tmp/relay.json)" >&2; exit 1; }
			untap tap0
			ip -n bench-guest link del tap1
		done
	done
	;;
rr)	# request/response, one transaction in flight: tap0 here, tap1 in
	# the netns bench-peer, joined by ./wire; each transaction crosses
	# tun four times (a transmit and a write each way)
	rm -f $tmp/wire.ready $tmp/rr.ready
	ip netns add bench-peer
	wire= srv=
	trap 'kill $wire $srv 2>/dev/null || true; wait; ip netns del bench-peer 2>/dev/null || true; untap tap0' EXIT
	tap tap0
	ip -n bench-peer tuntap add dev tap1 mode tap
	sysctl -qw net.ipv6.conf.tap0.disable_ipv6=1
	ip netns exec bench-peer sysctl -qw net.ipv6.conf.tap1.disable_ipv6=1
	./wire --peer-netns bench-peer --ready $tmp/wire.ready >$tmp/wire.json &
	wire=$!
	wait_for $tmp/wire.ready
	link bench-peer 10.0.3
	for p in udp tcp; do
		t=(); [ $p = tcp ] && t=(--tcp)
		ip netns exec bench-peer ./rr --serve "${t[@]}" --addr 10.0.3.2 --ready $tmp/rr.ready &
		srv=$!
		case_ "$p rr 64" "{\"proto\":\"$p\",\"size\":64}" \
			./rr "${t[@]}" --addr 10.0.3.2 --size 64 --transactions "$n" --after $tmp/rr.ready
		kill $srv 2>/dev/null || true	# TCP's ends with its connection
		wait $srv || true
		srv=
		rm -f $tmp/rr.ready
	done
	kill $wire
	wait $wire || true
	wire=
	grep -q '"write_errors":0}' $tmp/wire.json ||
		{ echo "bench: the wire failed to pass frames: $(cat $tmp/wire.json)" >&2; exit 1; }
	;;
*)	echo "bench: unknown scenario $scenario" >&2; exit 1 ;;
esac
