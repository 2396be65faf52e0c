#!/bin/bash
# Build a guest kernel: build.sh KIND [make args...], KIND one of lib.sh's
# KERNEL_KINDS, from the tree kernel_tree gives.
# The config is tinyconfig plus kernel-config/ fragments; every requested
# symbol is checked in the result, so a fragment that silently stopped
# applying fails the build.
. "$(dirname "$0")/lib.sh"

kind=${1:?usage: build.sh $(echo $KERNEL_KINDS | tr ' ' '|') [make args...]}; shift
tree=$(kernel_tree "$kind")
cfg=$TOP/kernel-config
frags=("$cfg/guest.config") prof=()
case $kind in
*debug) frags+=("$cfg/debug.config") ;;
rt) frags+=("$cfg/debug.config" "$cfg/rt.config") ;;
check) frags+=("$cfg/check.config") ;;	# check.sh: each prefix
coverage) frags+=("$cfg/coverage.config")
	# gcov and KCOV for the code under test only (kbuild's per-object
	# switches, by object name)
	for o in tun.o tap.o net.o; do
		prof+=("GCOV_PROFILE_$o=y" "KCOV_INSTRUMENT_$o=y")
	done ;;
esac
[ -d "$tree" ] || die "no tree at $tree: run 'make base' first"
out=$(kout "$kind")
mkdir -p "$out"
# One build per output folder at a time: two would corrupt each other.
exec 9>"$out/.lock"
flock 9
kmake() { make -C "$tree" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" "$@"; }

start=$SECONDS
log=$out/build.log
: >"$log"
# Regenerate .config only when a fragment changed: a new .config relinks.
sum=$(cat "${frags[@]}" | sha256sum)
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.fragments" 2>/dev/null)" != "$sum" ]; then
	{
		kmake tinyconfig
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}"
		kmake olddefconfig
	} >>"$log" 2>&1 || { tail -20 "$log"; die "$kind: config failed (log: $log)"; }
	echo "$sum" >"$out/.fragments"
fi

bad=$(cat "${frags[@]}" | sed -n -e 's/^\(CONFIG_[A-Z0-9_]*\)=\(.*\)/\1=\2/p' \
	-e 's/^# \(CONFIG_[A-Z0-9_]*\) is not set/\1=n/p' | while IFS== read -r sym val; do
	got=$(sed -n -e "s/^$sym=//p" -e "s/^# $sym is not set/n/p" "$out/.config")
	[ "${got:-n}" = "$val" ] || echo "$sym=$val (got ${got:-n})"
done)
[ -z "$bad" ] || die "$kind: config fragments not honoured: $(echo $bad)"

kmake -j"$(nproc)" "${prof[@]}" "$@" bzImage >>"$log" 2>&1 ||
	{ grep -E 'error|Error' "$log" | tail -20; die "$kind: build failed (log: $log)"; }
# piggy.S holds two sizes and an .incbin of the compressed vmlinux.  ccache
# sees an .incbin only when it preprocesses, which its depend mode, used
# here before, never did: a cache filled then still hands a kernel whose
# image has the sizes of an earlier one that one's piggy.o.  Compare, and
# assemble it again without ccache.
piggy=$out/arch/x86/boot/compressed/piggy
piggy_ok() {
	local img
	img=$(sed -n 's/^\.incbin "\(.*\)"$/\1/p' "$piggy.S")
	[ -n "$img" ] && [ -f "$out/$img" ] || die "$kind: no .incbin image in $piggy.S"
	objcopy -O binary -j .rodata..compressed "$piggy.o" "$piggy.payload" ||
		die "$kind: cannot read $piggy.o"
	cmp -s "$piggy.payload" "$out/$img"
}
if ! piggy_ok; then
	rm -f "$piggy.o"
	CCACHE_DISABLE=1 kmake -j"$(nproc)" "${prof[@]}" "$@" bzImage >>"$log" 2>&1 ||
		die "$kind: build failed (log: $log)"
	piggy_ok || die "$kind: its bzImage does not hold the vmlinux just built"
fi
rm -f "$piggy.payload"
say "build: $kind $(cat "$out/include/config/kernel.release") ($((SECONDS - start))s)"
