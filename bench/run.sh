#!/bin/bash
# In the guest: run one bench scenario, append one JSON line per case to
# $GUEST_OUT/results.jsonl.  run.sh SCENARIO PACKETS
#   {"case": ..., "params": {...}, "result": {program's JSON}}
# A program that fails (or whose counters do not add up) fails the run.
set -euo pipefail
cd "$(dirname "$0")"
scenario=$1 n=$2
out=$GUEST_OUT/results.jsonl
tr=/sys/kernel/tracing

case_() { # case_ NAME PARAMS-JSON CMD...: run CMD, record its JSON line
	local name=$1 params=$2; shift 2
	local res
	res=$("$@") || { echo "bench: case $name failed: $*" >&2; exit 1; }
	echo "{\"scenario\":\"$scenario\",\"case\":\"$name\",\"params\":$params,\"result\":$res}" >>"$out"
	echo "$scenario $name: $res"
}

# count FUNC CMD...: run CMD with FUNC's calls counted by a kprobe, in a run
# of its own (a probe costs instructions), and record the count.
count() {
	local fn=$1 name=$2; shift 2
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

# consume_with CASE PARAMS CONSUMER... -- GENERATOR...: a tap consumer
# (./reader or ./vhost --mode rx) waiting while a generator sends through
# the tap; the generator starts first and waits for the consumer (--after).
consume_with() {
	local name=$1 params=$2 cons=() ready=/tmp/ready.$$
	shift 2
	while [ "$1" != -- ]; do cons+=("$1"); shift; done; shift
	rm -f $ready
	"${cons[@]}" --start-timeout 30 --ready $ready >/tmp/consumer.json &
	local pid=$!
	"$@" --after $ready >/tmp/gen.json
	wait $pid || { echo "bench: consumer failed in $name" >&2; exit 1; }
	echo "{\"scenario\":\"$scenario\",\"case\":\"$name\",\"params\":$params,\"result\":$(cat /tmp/consumer.json),\"generator\":$(cat /tmp/gen.json)}" >>"$out"
	echo "$scenario $name: $(cat /tmp/consumer.json)"
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
			for gen in "pktgen" "gso 1" "gso 32"; do
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
*)	echo "bench: unknown scenario $scenario" >&2; exit 1 ;;
esac
