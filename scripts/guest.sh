#!/bin/bash
# Boot a kernel in QEMU and run a command in it:
#   guest.sh [-k base|series|debug|base-debug|BZIMAGE] [-m auto|kvm|tcg|icount]
#            [-t SECONDS] [-o DIR] -- COMMAND...
# The guest sees the host's root read-only (virtme style) and DIR read-write
# at $GUEST_OUT.  Exit status: the command's, or 1 when the guest hung,
# crashed, or printed a splat (BUG, WARNING, KASAN, lockdep, kmemleak...).
# icount mode: one vCPU, guest time advances 1 ns per guest instruction.
# GUEST_QEMU_ARGS: extra QEMU arguments (scripts/profile.sh loads a plugin);
# GUEST_APPEND: extra kernel parameters (KUnit at boot: lib.sh KUNIT_APPEND).
. "$(dirname "$0")/lib.sh"

kernel=series mode=${GUEST_MODE:-auto} timeout=${GUEST_TIMEOUT:-600} dir=
while getopts k:m:t:o: opt; do
	case $opt in
	k) kernel=$OPTARG ;; m) mode=$OPTARG ;; t) timeout=$OPTARG ;;
	o) dir=$OPTARG ;; *) die "bad option" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || die "usage: guest.sh [-k kernel] [-m mode] [-t secs] [-o dir] -- command"
# A kernel with a slash is a bzImage path, else a kind: "series" is also the
# name of the patch order file in the checkout.
case $kernel in
*/*) img=$kernel ;;
*) img=$(kout "$kernel")/arch/x86/boot/bzImage ;;
esac
[ -f "$img" ] || die "no kernel $img: run 'make build' first"
# The guest sees the host's root, but mounts tmpfs over these and binds a
# checkout under /tmp, /run or /var back (guest-init.sh).
case $TOP/ in
/dev/shm/*) die "the checkout $TOP is under /dev/shm, which the guest mounts over: clone it elsewhere" ;;
esac

if [ -n "$dir" ]; then
	rm -rf "$dir"; mkdir -p "$dir"
else
	mkdir -p "$BUILD/guest"
	dir=$(mktemp -d "$BUILD/guest/$(basename "$kernel").XXXXXX")
fi
printf '%q ' "$@" >"$dir/cmd"
pwd >"$dir/cwd"

if [ "$mode" = auto ]; then
	mode=tcg
	"$TOP/scripts/kvm-probe.sh" "$img" && mode=kvm
fi
case $mode in
kvm) accel=(-accel kvm -cpu host -smp 2) ;;
tcg) accel=(-accel tcg -cpu max -smp 2) ;;
icount) accel=(-accel tcg -cpu max -smp 1 -icount shift=0,sleep=off) ;;
*) die "unknown mode '$mode' (auto, kvm, tcg, icount)" ;;
esac
echo "${accel[*]}" >"$dir/accel"	# how it ran, for whoever reads the runs
mem=1G extra=
# A KASAN kernel interprets ACPI's PCI interrupt routing method (_PRT) so
# slowly under TCG that ACPICA gives up on it and virtio gets no interrupt:
# route from the BIOS's PIR table instead.
grep -qs '^CONFIG_KASAN=y' "$(dirname "$img")/../../../.config" && mem=3G extra=acpi=noirq

console=$dir/console
timeout -s KILL "$timeout" qemu-system-x86_64 "${accel[@]}" -m $mem \
	-nodefaults -display none -no-reboot -serial "file:$console" \
	-kernel "$img" \
	-append "console=ttyS0 root=rootfs rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=1048576 ro init=$TOP/scripts/guest-init.sh panic=-1 loglevel=5 tsc=reliable $extra ${GUEST_APPEND:-}" \
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=root,mount_tag=rootfs \
	-fsdev local,id=out,path="$dir",security_model=none \
	-device virtio-9p-pci,fsdev=out,mount_tag=out ${GUEST_QEMU_ARGS:-} || qrc=$?

[ -f "$dir/output" ] && cat "$dir/output"
if [ "${qrc:-0}" = 137 ]; then
	echo "guest: $(basename "$kernel") hung: killed after ${timeout}s ($mode); console tail:" >&2
	tail -n 15 "$console" | sed 's/^/  | /' >&2
	exit 1
fi
splat=$(console_splat "$console")
if [ -n "$splat" ]; then
	echo "guest: kernel splat in console ($console): $splat" >&2
	grep -m1 -B2 -A25 -F "$splat" "$console" | sed 's/^/  | /' >&2
	exit 1
fi
if [ ! -f "$dir/status" ]; then
	echo "guest: $(basename "$kernel") exited without a status (qemu rc ${qrc:-0}); console tail:" >&2
	tail -n 15 "$console" | sed 's/^/  | /' >&2
	exit 1
fi
exit "$(cat "$dir/status")"
