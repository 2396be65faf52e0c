# Sourced by the guest-side scripts run.sh and robust.sh.

# pktgen N: N 64-byte frames sent through tap0 by the pktgen kthread (burst
# 1: pktgen refuses more on a tap, which does not allow shared skbs); prints
# {"role":"pktgen","packets":<sent>}.
pktgen() {
	local pg=/proc/net/pktgen
	echo rem_device_all >$pg/kpktgend_0
	echo "add_device tap0" >$pg/kpktgend_0
	for c in "count $1" "pkt_size 60" "clone_skb 0" "burst 1" "delay 0" \
		"dst 10.0.2.2" "dst_mac 02:00:00:00:00:02"; do
		echo "$c" >$pg/tap0
	done
	echo start >$pg/pgctrl
	echo "{\"role\":\"pktgen\",\"packets\":$(sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p' $pg/tap0)}"
	echo rem_device_all >$pg/kpktgend_0
}
