#!/bin/bash
# fuzz.sh [-k KERNEL] [-s SEED]... [-n SEQUENCES] [-m OPS] [-t SECONDS]
#         [-b BOOTS] [-S SHRINK] [-T SECONDS] [-L] [-G] [-r]:
# bench/fuzz, a seeded fuzzer over the tun/tap uAPI, in one guest of KERNEL
# (default series, built first): SEQUENCES sequences (2000) of OPS ops (20; a
# guided one up to twice that) for each SEED (default 1), within SECONDS (240)
# in all, guided by KCOV where the kernel has it (the coverage kernel; -G:
# not).  Prints an ok/not ok line per seed.  When a check fails, or the kernel
# splats, hangs or crashes inside a sequence, it takes that sequence's op list
# (saved by the fuzzer before it ran it) and shrinks it
# (scripts/fuzz-shrink.sh): guests replay it with ops removed (halves, then
# quarters, down to single ops, until a pass of single ops removes none),
# keeping each removal after which it still fails the same way (the same check
# on the same device, or the same first splat line).  A guest tries candidates
# in turn until one fails, so one that passes costs no boot; but it may have
# passed only for what the candidates before it left behind: the list kept is
# replayed again in a fresh guest, and where it does not fail there the shrink
# starts again from the last lists that did, one candidate a guest.  The result
# is short, not proven minimal.  Where the sequence fails only after the one
# before it, that one is shrunk too, and replayed first.  The reproducer is
# printed and left in build/fuzz/KERNEL/sSEEDS/repro.ops (and repro-pre.ops;
# KERNEL is image-CKSUM for a bzImage path, SEEDS the seeds joined by "-"),
# with a note where the guests ran out before it was confirmed.  At most BOOTS guests (24),
# the run's included, though a finding is always replayed once; no guest
# starts after SHRINK seconds (-S, 1800) of the shrink, nor runs more than its
# boot and a minute past them.  A failure outside any sequence (a splat at boot
# or in the kmemleak pass after the run) or of the fuzzer itself is reported,
# not shrunk.  -T: the seconds a guest gets on top of its work, for its boot
# and teardown (120; 900 for a *debug kernel: KASAN under TCG, kmemleak's two
# scans).  -L: no ledger check (bench/fuzz --no-ledger), for a kernel without
# the `net` fixes, which loses frames uncounted; implied for base and
# base-debug.  -r: record the run in results/fuzz.jsonl beside the runs of
# other seeds on the same code of the same kernel and mode (guided,
# unguided or without KCOV), so that runs of a seed each add up, and write
# results/fuzz.md from those records (scripts/fuzz-record.sh); otherwise
# nothing under results/ is written.
# FUZZ_LOSE_ONE=1: the ledger check pretends a frame was lost, to test the
# check and the shrinker (bench/fuzz.c).
. "$(dirname "$0")/lib.sh"

kernel=series seeds=() n=2000 ops=20 budget=240 boots=24 shrink_s=1800
slack= checks=() rec=
while getopts k:s:n:m:t:b:S:T:LGr opt; do
	case $opt in
	k) kernel=$OPTARG ;; s) seeds+=("$OPTARG") ;; n) n=$OPTARG ;;
	m) ops=$OPTARG ;; t) budget=$OPTARG ;; b) boots=$OPTARG ;;
	S) shrink_s=$OPTARG ;;
	T) slack=$OPTARG ;; L) checks+=(--no-ledger) ;; G) checks+=(--no-guide) ;;
	r) rec=1 ;;
	*) die "usage: fuzz.sh [-k kernel] [-s seed]... [-n sequences]" \
		"[-m ops] [-t seconds] [-b boots] [-S seconds] [-T seconds] [-L] [-G] [-r]" ;;
	esac
done
[ ${#seeds[@]} -gt 0 ] || seeds=(1)
# Decimal only: the seeds are matched in the fuzzer's output as printed.
for v in "${seeds[@]}" "$n" "$ops" "$budget" "$boots" "$shrink_s" ${slack:+"$slack"}; do
	[[ $v =~ ^[0-9]+$ ]] || die "not a decimal number: '$v'"
done
[ -n "$slack" ] || case $kernel in *debug) slack=900 ;; *) slack=120 ;; esac
if [ -n "$rec" ]; then
	case $kernel in */*) die "-r records a kernel the workbench builds, not $kernel" ;; esac
fi
case $kernel in base | base-debug) checks+=(--no-ledger) ;; esac
# stack and stack-debug: the cut the last STACK= run left checked out; no
# other run may move it until this one ends
case $kernel in stack | stack-debug) stack_hold ;; esac
# What is built now is what is tested (a bzImage path is taken as it is).
case $kernel in */*) ;; *) "$TOP/scripts/build.sh" "$kernel" >&2 ;; esac
make -s -C "$TOP/bench" >&2 || die "bench programs do not build"
# a folder a kernel and its seeds, so that runs can go side by side
name=$kernel
case $kernel in */*) name=image-$(cksum <<<"$kernel" | cut -d' ' -f1) ;; esac
fz=$TOP/bench/fuzz out=$BUILD/fuzz/$name/s$(IFS=-; echo "${seeds[*]}")
mkdir -p "$out"
# what a run before this one shrank is not this run's
rm -f "$out"/{seq,prev}.ops "$out"/repro{,-pre}{,.ok}.ops \
	"$out"/{cand,with}-*.ops "$out"/repro{,.ok}.trace
env=()
[ -z "${FUZZ_LOSE_ONE:-}" ] || env=(env FUZZ_LOSE_ONE=1)

. "$TOP/scripts/fuzz-shrink.sh"

say "fuzz: $kernel, seeds ${seeds[*]}: $n sequences of $ops ops each," \
	"${budget}s"
per=$((budget / ${#seeds[@]}))
[ "$per" -gt 0 ] || per=1
rc=0
guest run $((budget + slack)) bash -c \
	'fz=$1 n=$2 m=$3 t=$4 c=$5; shift 5
	for s; do
		"$fz" --seed "$s" --sequences "$n" --ops "$m" --time "$t" $c ||
			exit
	done' fuzz "$fz" "$n" "$ops" "$per" "${checks[*]}" "${seeds[@]}" || rc=$?
verdict run $rc
# a run that passed with a seed unreported records nothing
seeds_ran "$out/run/output" "${seeds[@]}" || exit 1

# finish RC [FINDING [REPLAY]]: with -r, the record; exit RC.
finish() {
	[ -z "$rec" ] || "$TOP/scripts/fuzz-record.sh" "$kernel" "$out" \
		"${2:-}" "${3:-}" "${seeds[*]}" "$n" "$ops" "$budget" \
		"${checks[*]}" || exit 1
	exit "$1"
}
[ "$v_sig" = ok ] && finish 0
if [ -z "$v_at" ]; then
	[ "$v_sig" = error ] || v_why+=", outside any sequence"
	echo "not ok fuzz/$kernel # $v_why: not shrunk (see $out/run.log)"
	finish 1 "$v_why, not shrunk"
fi

read -r s k <<<"$v_at"
echo "not ok fuzz/$kernel/seed-$s # sequence $k: $v_why"
want=$v_sig pre= used=1 spent= stopped= unconfirmed= fallback= batch=32
until=$((SECONDS + shrink_s))
# saved K FILE: sequence K's op list, from the last two the fuzzer wrote
# out before it ran them (a guided sequence cannot be drawn again from its
# seed; a splat printed late may pin the one before the last)
saved() {
	local f
	for f in "$out"/run/fuzz-{current,previous}.ops; do
		grep -qx "# fuzz seed $s sequence $1\( (guided)\)\?" "$f" \
			2>/dev/null && cp "$f" "$2" && return
	done
	return 1
}
if ! saved "$k" "$out/seq.ops"; then
	echo "not ok fuzz/$kernel/seed-$s/replay # sequence $k: its op list" \
		"is not among the last two the fuzzer saved ($out/run)"
	finish 1 "seed $s sequence $k: $want; its op list was not saved"
fi
say "fuzz: seed $s sequence $k in $out/seq.ops; replaying it alone"
again "$out/seq.ops"
alone="alone"
if ! same && [ "$k" -gt 0 ] && guest_left && saved $((k - 1)) "$out/prev.ops"; then
	# What a sequence leaves behind in the kernel may matter.
	say "fuzz: alone: $v_sig; again after sequence $((k - 1))"
	pre=1 alone="after sequence $((k - 1))"
	again "$out/prev.ops" "$out/seq.ops"
fi
if ! same "$out/seq.ops"; then
	echo "not ok fuzz/$kernel/seed-$s/replay # sequence $k $alone:" \
		"${v_why:-ok}, not $want (earlier sequences matter?)"
	finish 1 "seed $s sequence $k: $want; its replay: ${v_why:-ok}"
fi
echo "ok fuzz/$kernel/seed-$s/replay # sequence $k $alone: $want again"
cp "$out/replay/output" "$out/repro.trace"
cp "$out/seq.ops" "$out/repro.ops"
[ -z "$pre" ] || cp "$out/prev.ops" "$out/repro-pre.ops"
minimize
rel=${out#"$TOP"/}
nops() { grep -vc '^#' "$1"; }
what="$(nops "$out/repro.ops") of $(nops "$out/seq.ops") ops"
[ -z "$pre" ] || what+=", after $(nops "$out/repro-pre.ops") of sequence $((k - 1))'s $(nops "$out/prev.ops") (repro-pre.ops)"
note=
[ -z "$spent" ] || note+="; out of guests (-b $boots, -S $shrink_s): it may shrink further"
[ -z "$stopped" ] || note+="; the shrink stopped early (a guest failed otherwise than a candidate can): it may shrink further"
[ -z "$unconfirmed" ] || note+="; NOT confirmed in a fresh guest (out of guests): it failed only after other candidates"
[ -z "$fallback" ] || note+="; shorter lists failed only after other candidates, not in a fresh guest"
echo "# reproducer: $what, $used guests ($out/repro.ops)$note:"
r="bench/fuzz ${checks[*]:+${checks[*]} }${pre:+--replay $rel/repro-pre.ops }--replay $rel/repro.ops"
echo "#   scripts/guest.sh -k $kernel -m tcg -- ${env[*]:+${env[*]} }$r --trace"
[ -z "$pre" ] || { grep -v '^#' "$out/repro-pre.ops"; echo "# then, as a sequence of its own (repro.ops):"; }
grep -v '^#' "$out/repro.ops"
echo "# its last replay:"
sed 's/^/#   /' "$out/repro.trace"
finish 1 "seed $s sequence $k: $want${note:+ (${note#; })}" "scripts/guest.sh -k $kernel -m tcg -- $r"
