#!/bin/bash
# PID 1 of a guest booted by scripts/guest.sh.  The root is the host's, read
# only over 9p; the run's folder is shared read-write at /tmp/guest.  Runs the
# command found there, records its exit status, and reboots (QEMU exits).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
# A checkout under one of the folders that get a tmpfs stays visible: the
# host's folder is kept at /mnt and the checkout bound back over the tmpfs.
top=$(cd "$(dirname "$0")/.." && pwd) keep=
for d in /tmp /run /var; do
	case $top/ in $d/*) keep=$d; mount --bind $d /mnt ;; esac
done
for d in /tmp /run /var /dev/shm; do mount -t tmpfs tmpfs $d; done
if [ -n "$keep" ]; then
	mkdir -p "$top" && mount --bind "/mnt${top#"$keep"}" "$top"
fi
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /tmp/guest
mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 out /tmp/guest
ip link set lo up
leaks=/sys/kernel/debug/kmemleak
[ -e $leaks ] && echo clear >$leaks

# The KUnit suites that ran before init, on a kernel booted with
# kunit.enable=1 (kernel-config/debug.config), for scripts/kunit.sh.
# debugfs keeps each suite's KTAP, which the console (loglevel 5) does not
# show.
for r in /sys/kernel/debug/kunit/*/results; do
	grep -q '^KTAP version' "$r" 2>/dev/null || continue
	mkdir -p /tmp/guest/kunit
	cp "$r" "/tmp/guest/kunit/$(basename "$(dirname "$r")").ktap"
done

export HOME=/tmp GUEST_OUT=/tmp/guest TERM=dumb
cd "$(cat /tmp/guest/cwd)"
bash /tmp/guest/cmd </dev/null >/tmp/guest/output 2>&1
echo $? >/tmp/guest/status
# A coverage kernel's line counts (kernel-config/coverage.config), for
# scripts/coverage.sh: its .gcda files, by their paths in the build.
if [ -d /sys/kernel/debug/gcov ]; then
	mkdir -p /tmp/guest/gcov
	(cd /sys/kernel/debug/gcov && find . -name '*.gcda' \
		-exec cp --parents {} /tmp/guest/gcov/ \;)
fi

if [ -e $leaks ]; then
	# kmemleak only reports an object unreferenced across two scans.
	echo scan >$leaks; sleep 6; echo scan >$leaks
	n=$(grep -c '^unreferenced object' $leaks)
	[ "$n" = 0 ] || { echo "kmemleak: $n new suspected memory leaks"; cat $leaks; } >/dev/kmsg
fi
echo b >/proc/sysrq-trigger
