#!/bin/bash
# In the guest: run each kselftest program given, bounded in time, keeping
# its KTAP output and exit status in $GUEST_OUT.
for t in "$@"; do
	p=$(basename "$t")
	cd "$(dirname "$t")" || exit 1
	timeout -s KILL 600 "$t" >"$GUEST_OUT/$p.ktap" 2>&1
	echo $? >"$GUEST_OUT/$p.rc"
	echo "$p: exit $(cat "$GUEST_OUT/$p.rc")"
done
