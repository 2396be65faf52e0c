#!/bin/bash
# native.sh [--smoke] SCENARIO...: the bench on the running kernel, with no
# QEMU (bench.sh MODE=native), for a developer who boots a test box into
# base, then into series.  RUN=base|series names the kernel booted now.
# Each scenario runs 5 times in network and mount namespaces of their own,
# with a tmpfs on /run (the host's interfaces and netns names are not
# touched; a module that a case needs may be loaded).  The runs go to
# $NATIVE_DIR/SCENARIO (default $BUILD/native) beside RUN.meta.json: the
# kernel's release and version, its command line, a hash of its config
# (/proc/config.gz, /boot/config-RELEASE or KERNEL_CONFIG=FILE) and what
# identifies the machine.  Once both kernels are recorded, report.py
# compares them into results/native/ (or BENCH_RESULTS), and refuses two
# machines, configs or command lines, or one kernel recorded twice.
# --smoke: one run of 300 packets in $NATIVE_DIR-smoke, nothing compared.
# NATIVE_SAME_KERNEL=1: compare one kernel with itself (the workbench's own
# test, scripts/test-bench-modes.sh, has only the one).
. "$(dirname "$0")/lib.sh"

smoke=
[ "${1:-}" = --smoke ] && { smoke=1; shift; }
case ${RUN:-} in
base | series) ;;
*) die "MODE=native needs RUN=base or RUN=series: the kernel this machine is booted into" ;;
esac
[ -z "${STACK:-}${ALONE:-}${EACH:-}" ] ||
	die "MODE=native measures the running kernel: no STACK=, ALONE= or EACH="
[ "$(id -u)" = 0 ] || die "MODE=native needs root: it makes taps and network namespaces"
[ -c /dev/net/tun ] || die "no /dev/net/tun: this kernel has no tun (CONFIG_TUN)"
[[ ${PACKETS:-1} =~ ^[1-9][0-9]*$ ]] || die "PACKETS=$PACKETS: a whole number of packets a case"
dir=${NATIVE_DIR:-$BUILD/native}
reps=5 n=${PACKETS:-500000}
[ -n "$smoke" ] && reps=1 n=300 dir=$dir-smoke

# The running kernel's config without what names its version: the header
# comment and CONFIG_LOCALVERSION, which a series build may set apart.
config() {
	local f=${KERNEL_CONFIG:-/boot/config-$(uname -r)}
	if [ -n "${KERNEL_CONFIG:-}" ] || [ ! -r /proc/config.gz ]; then
		[ -r "$f" ] || die "no kernel config: no /proc/config.gz or $f (set KERNEL_CONFIG=FILE)"
		cat "$f"
	else
		zcat /proc/config.gz
	fi | grep -vE '^(# [^C]|#$|$|CONFIG_LOCALVERSION=)'
}
# json STRING: STRING as a JSON string
json() { /usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
cfg=$(config) || exit
cfg=$(echo "$cfg" | sha256sum | cut -c1-12)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
id=$(sha256sum /etc/machine-id 2>/dev/null | cut -c1-12) || id=
meta() {
	cat <<EOF
{"run": "$RUN", "release": "$(uname -r)", "version": $(json "$(cat /proc/version)"),
 "cmdline": $(json "$(cat /proc/cmdline)"), "config": "$cfg",
 "machine": {"cpu": $(json "${cpu:-unknown}"), "cpus": $(nproc --all), "memory_gib": $mem,
	     "machine_id": "${id:-unknown}"},
 "date": "$(date -u +%FT%TZ)"}
EOF
}

make -s -C "$TOP/bench" >&2 || die "bench programs do not build"
rc=0 done=()
for s in "$@"; do
	rm -rf "${dir:?}/$s/$RUN"-* "$dir/$s/$RUN.meta.json"
	for r in $(seq $reps); do
		d=$dir/$s/$RUN-$r
		mkdir -p "$d/tmp"
		say "bench: $s natively on $(uname -r) as $RUN (run $r of $reps, $n packets)"
		src=0
		# a /sys that shows the netns's devices, a /run of its own
		unshare -n -m env NATIVE=1 BENCH_CPU=1 BENCH_TMP="$d/tmp" GUEST_OUT="$d" \
			bash -c 'mount -t sysfs sysfs /sys && mount -t tmpfs tmpfs /run &&
				 ip link set lo up && exec "$@"' - \
			"$TOP/bench/run.sh" "$s" "$n" >"$d.log" 2>&1 || src=$?
		why=$(grep -m1 -o '"skipped":"[^"]*' "$d/results.jsonl" 2>/dev/null | cut -d'"' -f4) || why=
		if [ $src = 4 ] && [ -n "$why" ]; then
			echo "skip bench/native/$s # $why"
		elif [ $src != 0 ]; then
			rc=1
			echo "not ok bench/native/$s/$RUN-$r # $(grep -m1 '^bench:' "$d.log")"
			sed 's/^/  | /' "$d.log" | tail -15 >&2
		elif [ $r = $reps ]; then
			meta >"$dir/$s/$RUN.meta.json"
			done+=("$s")
			echo "ok bench/native/$s # $RUN, $(grep -c '"case"' "$d/results.jsonl") cases"
			continue
		else
			continue
		fi
		# no runs of a scenario that did not run through
		rm -rf "${dir:?}/$s/$RUN"-*
		break
	done
done
[ -n "$smoke" ] || [ $rc != 0 ] || [ ${#done[@]} = 0 ] && exit $rc
other=base
[ "$RUN" = base ] && other=series
ready=()
for s in "${done[@]}"; do
	[ -f "$dir/$s/$other.meta.json" ] && ready+=("$s")
done
if [ ${#ready[@]} = 0 ]; then
	say "bench: $RUN recorded in $dir; boot $other and run 'make bench MODE=native RUN=$other' to compare"
	exit 0
fi
/usr/bin/python3 "$TOP/scripts/report.py" --runs "$dir" --mode native \
	${BENCH_RESULTS:+--out "$BENCH_RESULTS"} ${NATIVE_SAME_KERNEL:+--same-kernel-ok} \
	--command "make bench SCENARIO=${SCENARIO:-$*} MODE=native RUN=base, then RUN=series" "${ready[@]}"
