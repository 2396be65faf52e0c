#!/bin/bash
# kvm-probe.sh BZIMAGE: exit 0 when a KVM guest really boots here.  Some
# machines have /dev/kvm but hang at boot, so boot one with a short timeout.
# The answer is kept in $BUILD/kvm-probe; delete it to probe again.
. "$(dirname "$0")/lib.sh"

cache=$BUILD/kvm-probe
if [ ! -f "$cache" ]; then
	verdict=no
	if [ -w /dev/kvm ] && "$TOP/scripts/guest.sh" -k "$1" -m kvm -t 60 \
		-o "$BUILD/guest/kvm-probe" -- true >/dev/null 2>&1; then
		verdict=yes
	fi
	echo $verdict >"$cache"
	[ $verdict = yes ] && say "kvm: guests boot under KVM" ||
		say "kvm: no working KVM here (a probe boot failed or hung): guests run under TCG"
fi
[ "$(cat "$cache")" = yes ]
