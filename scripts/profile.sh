#!/bin/bash
# Guest instructions per packet per kernel function:
#   profile.sh [-k base|series|BZIMAGE] [-n PACKETS] [-t SECONDS] [-o NAME]
#              -- COMMAND...
# ftrace's function profiler costs more per call than the functions it would
# measure; a TCG plugin (bench/tbcount.so) counting each translated block's
# instructions costs the guest nothing.  Boots the kernel twice in icount
# mode with the plugin, running COMMAND from bench/ with "--packets N", then
# "--packets 3N", appended, and prints the difference per extra packet by
# function and by area (scripts/profile.py); -o NAME also writes
# results/profile-NAME.md.  Only what runs from the getrusage() before the
# program's timed loop to the one after counts, as the bench programs do.
# Example: profile.sh -k base -o xdp-batch-64 -- ./vhost --mode tx --tap tap0 \
#		--sndbuf unlimited --burst 64
. "$(dirname "$0")/lib.sh"

cmdline="scripts/profile.sh$(printf ' %q' "$@")"
kernel=series n=2000 timeout=600 name=
while getopts k:n:t:o: opt; do
	case $opt in
	k) kernel=$OPTARG ;; n) n=$OPTARG ;; t) timeout=$OPTARG ;;
	o) name=$OPTARG ;; *) die "bad option" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || die "usage: profile.sh [-k kernel] [-n packets] [-t secs] [-o name] -- command"
[ -z "$name" ] || [[ $kernel != */* ]] ||
	die "-o $name: a table names the tree it measured, which a bzImage path does not say: -k KERNEL"
# A path to a bzImage has a slash; "series" is also the name of a file here.
if [[ $kernel = */* ]] && [ -f "$kernel" ]; then
	kernel=$(realpath "$kernel")	# guest.sh runs from bench/
	map=$(dirname "$kernel")/../../../System.map src=
else
	src=$(kernel_tree "$kernel")
	map=$(kout "$kernel")/System.map
fi
[ -f "$map" ] || die "no $map: run 'make build' first"
mark=$(awk '$3 == "__x64_sys_getrusage" { print $1 }' "$map")

make -s -C "$TOP/bench" >&2 || die "bench programs do not build"
runs=$BUILD/profile/${name:-run}
mkdir -p "$runs"
# the tree measured, for scripts/listcost.py and the table to name
rm -f "$runs/tree"
[ -z "$src" ] || git -C "$src" rev-parse --short=12 'HEAD^{tree}' >"$runs/tree"
for p in "$n" $((3 * n)); do
	d=$runs/$p
	say "profile: $* --packets $p on $(basename "$kernel")"
	(cd "$TOP/bench" &&
	 GUEST_QEMU_ARGS="-plugin $TOP/bench/tbcount.so,out=$d/tbcount,mark=$mark" \
		"$TOP/scripts/guest.sh" -k "$kernel" -m icount -t "$timeout" \
		-o "$d" -- "$@" --packets "$p") >"$d.log" 2>&1 ||
		{ tail -n 15 "$d.log" >&2; die "run with $p packets failed"; }
	[ -s "$d/tbcount" ] || die "no counts from the plugin in $d"
done
python3 "$TOP/scripts/profile.py" --map "$map" --areas \
	${name:+--out "$TOP/results/profile-$name.md" --command "$cmdline"} \
	--kernel "$(basename "$kernel")" ${src:+--tree "$(cat "$runs/tree")"} \
	"$runs/$n" "$runs/$((3 * n))"
