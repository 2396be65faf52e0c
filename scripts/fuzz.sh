#!/bin/bash
# fuzz.sh [-k KERNEL] [-s SEED]... [-n SEQUENCES] [-m OPS] [-t SECONDS]
#         [-b BOOTS] [-S SHRINK] [-T SECONDS] [-L] [-G] [-r]: bench/fuzz, a seeded fuzzer over the
# tun/tap uAPI, in one guest of KERNEL (default series, built first):
# SEQUENCES sequences (2000) of OPS ops (20; a guided one up to twice that)
# for each SEED (default 1), within SECONDS (240) in all, guided by KCOV
# where the kernel has it (the coverage kernel; -G: not).  Prints an ok/not
# ok line per seed.  When a check fails, or the kernel splats, hangs or
# crashes inside a sequence, it takes that sequence's op list (saved by the
# fuzzer before it ran it) and shrinks it: guests replay it
# with ops removed (halves, then quarters, down to single ops, until a
# pass of single ops removes none), keeping each removal after which it
# still fails the same way (the same check on the same device, or the same
# first splat line).  A guest tries candidates in turn until one fails, so
# one that passes costs no boot; but it may have passed only for what the
# candidates before it left behind: the list kept is replayed again in a
# fresh guest, and where it does not fail there the shrink starts again
# from the last lists that did, one candidate a guest.  The result is
# short, not proven minimal.  Where the sequence fails only after the one
# before it, that one is shrunk too, and replayed first.  The reproducer
# is printed and left in build/fuzz/repro.ops (and repro-pre.ops), with a
# note where the guests ran out before it was confirmed.  At most BOOTS
# guests (24), the run's included, though a finding is always replayed
# once; no guest starts after SHRINK seconds (-S, 1800) of the shrink,
# nor runs more than its boot and a minute past them.  A failure outside
# any sequence (a splat at boot or in the kmemleak pass after the run) or
# of the fuzzer itself is reported, not shrunk.  -T: the seconds a guest
# gets on top of its work, for its boot and teardown (120; 900 for a
# *debug kernel: KASAN under TCG, kmemleak's two scans).  -L: no ledger
# check (bench/fuzz --no-ledger), for a kernel without the `net` fixes,
# which loses frames uncounted; implied for base and base-debug.  -r:
# record the run in results/fuzz.jsonl, the latest of each kernel and
# mode (guided, unguided or without KCOV), and write results/fuzz.md from
# those records; otherwise nothing under results/ is written.
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
# What is built now is what is tested (a bzImage path is taken as it is).
case $kernel in */*) ;; *) "$TOP/scripts/build.sh" "$kernel" >&2 ;; esac
make -s -C "$TOP/bench" >&2 || die "bench programs do not build"
fz=$TOP/bench/fuzz out=$BUILD/fuzz
mkdir -p "$out"
# what a run before this one shrank is not this run's
rm -f "$out"/{seq,prev}.ops "$out"/repro{,-pre}{,.ok}.ops \
	"$out"/{cand,with}-*.ops "$out"/repro{,.ok}.trace
env=()
[ -z "${FUZZ_LOSE_ONE:-}" ] || env=(env FUZZ_LOSE_ONE=1)

# guest NAME LIMIT CMD...: CMD in a guest; its folder $out/NAME, its log
# $out/NAME.log; returns the guest's status.
guest() {
	local name=$1 limit=$2
	shift 2
	"$TOP/scripts/guest.sh" -k "$kernel" -m tcg -t "$limit" \
		-o "$out/$name" -- "${env[@]}" "$@" >"$out/$name.log" 2>&1
}

# scripts/guest.sh's splats
splat_re='BUG:|WARNING:|KASAN:|UBSAN:|Oops|Call Trace:'
splat_re+='|kmemleak: [0-9]+ new suspected|unreferenced object'
splat_re+='|possible (recursive|circular) locking|inconsistent lock state'
splat_re+='|suspicious RCU usage|Kernel panic'

# A log line without what differs from boot to boot: time, CPU, PID,
# addresses.
norm() {
	sed -E -e 's/^\[ *[0-9.]+\] //' \
		-e 's/(CPU|PID|pid|cpu)[:= ]+[0-9]+/\1 N/g' \
		-e 's/0x[0-9a-f]+/0xN/g' -e 's/\b[0-9a-f]{8,}\b/N/g' |
		cut -c1-200
}

# where NAME: two lines: the last marker of bench/fuzz on guest NAME's
# console before its first splat ("seed S sequence K", "replay FILE",
# "done", or an empty line), and that splat (empty if none).
where() {
	[ -f "$out/$1/console" ] || { printf '\n\n'; return; }
	awk -v re="$splat_re" '
		{ sub(/\r$/, "") }	# the serial console ends lines CRLF
		/fuzz: (seed [0-9]+ sequence [0-9]+|replay .*|done)$/ {
			sub(/.*fuzz: /, ""); m = $0; next
		}
		$0 ~ re { s = $0; exit }
		END { print m; print s }' "$out/$1/console"
}

# verdict NAME RC: how guest NAME ended.  Sets v_sig, what two runs that
# fail the same way share: ok, "CHECK DEVICE" (ledger fz0), "splat: LINE",
# hang, crash or error (the fuzzer's own: not the kernel's); v_why, in
# words; v_at, where: "S K" (seed S sequence K), replay, or empty:
# outside any sequence; v_file, the op list a failed replay was running;
# v_mark, the fuzzer's last marker before it failed ("done": after them
# all).
verdict() {
	local st='' line m splat u
	local -a w
	v_sig=ok v_why='' v_at='' v_file='' v_mark=''
	[ "$2" = 0 ] && return
	[ -f "$out/$1/status" ] && st=$(cat "$out/$1/status")
	line=$(grep -m1 '^fuzz: FAIL ' "$out/$1/output" 2>/dev/null || true)
	if [ "$st" = 2 ] && [ -n "$line" ]; then
		# the fuzzer's checks name their sequence themselves
		# fuzz: FAIL seed S sequence K: WHY, or FAIL replay FILE: WHY
		v_why=$(sed -E 's/^[^:]*: FAIL [^:]*: //' <<<"$line")
		v_at=$(awk '$3 == "seed" { print $4, $6 + 0 }' <<<"$line")
		v_at=${v_at:-replay}
		v_file=$(sed -nE 's/^fuzz: FAIL replay ([^:]*): .*/\1/p' <<<"$line")
		v_mark=${v_file:+replay $v_file}
		case $v_why in
		splat:*) v_sig="splat: $(norm <<<"${v_why#splat: }")" ;;
		*) u=$(grep -om1 'fz[01]' <<<"$v_why" || true)
		   v_sig="${v_why%%:*} $u" ;;
		esac
		return
	fi
	mapfile -t w < <(where "$1")
	m=${w[0]:-} splat=${w[1]:-} v_mark=${w[0]:-}
	case $m in
	seed*) v_at=$(awk '{ print $2, $4 }' <<<"$m") ;;
	replay*) v_at=replay v_file=${m#replay } ;;
	esac
	# All of the fuzzer's checks passed: what came later is the run's.
	[ "$st" != 0 ] || v_at=
	if [ -n "$splat" ]; then
		v_sig="splat: $(norm <<<"$splat")" v_why=$v_sig
	elif grep -q '^guest: .* hung' "$out/$1.log"; then
		u=$({ grep -m1 'unregister_netdevice: waiting for' \
			"$out/$1/console" || true; } | norm |
			sed 's/ to become free.*//')
		v_sig="hang${u:+: $u}" v_why="$v_sig (see $out/$1.log)"
	elif [ -z "$st" ]; then
		v_sig=crash v_why="crash: no exit status (see $out/$1.log)"
	else
		v_sig=error v_at=
		v_why="error: the fuzzer exited $st (see $out/$1/output)"
	fi
}

# guest_left: whether the shrink may boot one more guest (-b, -S).
guest_left() {
	[ "$used" -lt "$boots" ] && [ "$SECONDS" -lt "$until" ]
}

# replay FILE...: v_sig, v_why, v_at, v_file and v_mark of a guest that
# replays the op lists FILE... in order until one fails, given the boot,
# its work and a minute, but no more than that past the -S deadline;
# counted in used.
replay() {
	local rc=0 f lim=$((slack + 60 + 10 * $#))
	local left=$((until - SECONDS + slack + 60))
	local -a args=()
	[ "$lim" -le "$left" ] || lim=$left
	for f; do args+=(--replay "$f"); done
	used=$((used + 1))
	guest replay "$lim" "$fz" "${checks[@]}" "${args[@]}" --trace || rc=$?
	verdict replay $rc
}

# same [FILE]: whether the last replay failed as the run did, inside its
# sequence (inside op list FILE).
same() {
	[ -n "$v_at" ] && [ "$v_sig" = "$want" ] && [ "${1:-$v_file}" = "$v_file" ]
}

# again FILE...: replay, and once more if it did not fail as the run did
# inside the last FILE, guests permitting: a timing-dependent failure may
# not come every time.
again() {
	replay "$@"
	same "${@: -1}" || ! guest_left || {
		say "fuzz: $v_sig; once more"
		replay "$@"
	}
}

# trace_from FILE: the last replay's output from op list FILE on, the
# candidates named as the lists they became (shrink's best and other).
trace_from() {
	awk -v m="fuzz: replay $1" '$0 == m { p = 1 } p' "$out/replay/output" |
		sed -E -e "s#$out/cand-[0-9]+\.ops#$best#g" \
			-e "s#$out/with-[0-9]+\.ops#$other#g"
}

# keep_confirmed: the lists now in repro.ops (and repro-pre.ops) failed
# in a fresh guest, and are what confirm falls back to.
keep_confirmed() {
	cp "$out/repro.ops" "$out/repro.ok.ops"
	[ -z "$pre" ] || cp "$out/repro-pre.ops" "$out/repro-pre.ok.ops"
	cp "$out/repro.trace" "$out/repro.ok.trace"
	unconfirmed=
}

# shrink seq|pre: delta debugging of the reproducer's op list (repro.ops,
# the failing sequence), or of the one replayed before it (repro-pre.ops,
# where the sequence fails only after the one before it), while their
# replay fails as the run did.  A guest replays up to $batch candidates
# (32; 1 after a failed confirmation), each with the other list, in the
# order the search tries them while none fails, and stops at the first
# that fails.  A list kept in a fresh guest (the first candidate) is
# confirmed; one kept after other candidates ran is confirmed later
# (confirm).  spent=1 if it ran out of guests first, stopped=1 if a
# guest failed otherwise than a candidate can.
shrink() {
	local role=$1 best other chunk i=0 gone=0 c j g f x fin n k key retry=
	local -a list cand files hit first state
	local -A seen
	best=$out/repro.ops other=$out/repro-pre.ops
	[ "$role" = seq ] || best=$out/repro-pre.ops other=$out/repro.ops
	mapfile -t list < <(grep -v '^#' "$best")
	chunk=$(((${#list[@]} + 1) / 2))
	while :; do
		# the candidates from here on, as long as none fails; one a
		# batch (a tail chunk repeats at the next size)
		files=() hit=() first=() state=() seen=() c=$chunk j=$i g=$gone fin=
		rm -f "$out"/cand-*.ops "$out"/with-*.ops
		while [ ${#hit[@]} -lt "$batch" ]; do
			if [ "$j" -ge ${#list[@]} ]; then
				# single ops until a pass removes none
				if [ "$c" = 1 ]; then
					[ "$g" = 1 ] || { fin=1; break; }
				else
					c=$(((c + 1) / 2))
				fi
				j=0 g=0
				continue
			fi
			cand=("${list[@]:0:j}" "${list[@]:j+c}")
			key=$(printf '%s\n' "${cand[@]}")
			if [ ${#cand[@]} -gt 0 ] && [ -z "${seen[$key]:-}" ]; then
				seen[$key]=1
				n=${#hit[@]} f=$out/cand-$n.ops x=$out/with-$n.ops
				printf '%s\n' "${cand[@]}" >"$f"
				if [ "$role" = pre ]; then
					cp "$out/repro.ops" "$x"
					files+=("$f" "$x") hit+=("$x") first+=("$f")
				elif [ -n "$pre" ]; then
					cp "$out/repro-pre.ops" "$x"
					files+=("$x" "$f") hit+=("$f") first+=("$x")
				else
					files+=("$f") hit+=("$f") first+=("$f")
				fi
				state+=("$c $j $g")
			fi
			j=$((j + c))
		done
		[ ${#hit[@]} -gt 0 ] || break
		guest_left || { spent=1; break; }
		replay "${files[@]}"
		k=-1
		for n in "${!hit[@]}"; do
			case $v_file in "$out/cand-$n.ops" | "$out/with-$n.ops") k=$n ;; esac
		done
		if [ "$v_sig" = error ]; then
			say "fuzz: shrink $role: $v_why; stopped"
			stopped=1
			break
		elif [ "$v_sig" = ok ] || { [ "$k" -lt 0 ] && [ "$v_mark" = done ]; }; then
			# every candidate passed (what failed came after them)
			chunk=$c i=$j gone=$g retry=
			say "fuzz: shrink $role: ${#hit[@]} candidates of ${#list[@]} ops: all ok${v_mark:+, then $v_sig}"
			[ -z "$fin" ] || break
			continue
		elif [ "$k" -lt 0 ]; then
			# before any candidate ran: the same batch once more
			[ -z "$retry" ] || {
				say "fuzz: shrink $role: $v_sig before any candidate, twice; stopped"
				stopped=1
				break
			}
			retry=1
			say "fuzz: shrink $role: $v_sig before any candidate; once more"
			continue
		fi
		retry=
		read -r chunk i gone <<<"${state[k]}"
		mapfile -t cand <"$out/cand-$k.ops"
		say "fuzz: shrink $role: candidate $((k + 1)) of ${#hit[@]}: ${#cand[@]} ops: $v_sig"
		if same "${hit[k]}"; then
			list=("${cand[@]}") gone=1
			cp "$out/cand-$k.ops" "$best"
			trace_from "${first[k]}" >"$out/repro.trace"
			if [ "$k" = 0 ]; then keep_confirmed; else unconfirmed=1; fi
		elif [ "$role" = seq ] && [ -n "$pre" ] && [ "$k" -gt 0 ] &&
			[ "$v_file" = "${first[k]}" ]; then
			: # the list before candidate k failed: k again, in a fresh guest
		else
			i=$((i + chunk))
		fi
	done
	rm -f "$out"/cand-*.ops "$out"/with-*.ops
}

# confirm ROLE: lists kept after other candidates ran in their guest must
# fail in a fresh guest too; where they do not, the last ones that did are
# the reproducer again (fallback=1), and shrink ROLE starts again from
# them, one candidate a guest, so that what it keeps is confirmed.
confirm() {
	[ -n "$unconfirmed" ] || return 0
	guest_left || { spent=1; return 0; }
	again ${pre:+"$out/repro-pre.ops"} "$out/repro.ops"
	if same "$out/repro.ops"; then
		cp "$out/replay/output" "$out/repro.trace"
		keep_confirmed
		return
	fi
	say "fuzz: shrink: $(grep -vc '^#' "$out/repro.ops") ops fail only after other candidates, not alone; back to the last lists that failed alone"
	cp "$out/repro.ok.ops" "$out/repro.ops"
	[ -z "$pre" ] || cp "$out/repro-pre.ok.ops" "$out/repro-pre.ops"
	cp "$out/repro.ok.trace" "$out/repro.trace"
	unconfirmed= fallback=1
	guest_left || { spent=1; return 0; }
	say "fuzz: shrink $1 again from there, one candidate a guest"
	batch=1
	shrink "$1"
	batch=32
}

say "fuzz: $kernel, seeds ${seeds[*]}: $n sequences of $ops ops each," \
	"${budget}s"
per=$((budget / ${#seeds[@]}))
[ "$per" -gt 0 ] || per=1
summary='"\(.sequences) sequences, \(.ops) ops, \(.ops_per_sec) ops/s;'
summary+=' \(.lives_checked) ledgers: \(.handed) frames handed, \(.read) read,'
summary+=' \(.tx_dropped) dropped\(if .unaccounted then ", \(.unaccounted)'
summary+=' unaccounted (no ledger check)" else "" end)'
summary+='\(if .pcs then "; KCOV: \(.pcs) PCs, guided: \(.guided)" else "" end)"'
rc=0
guest run $((budget + slack)) bash -c \
	'fz=$1 n=$2 m=$3 t=$4 c=$5; shift 5
	for s; do
		"$fz" --seed "$s" --sequences "$n" --ops "$m" --time "$t" $c ||
			exit
	done' fuzz "$fz" "$n" "$ops" "$per" "${checks[*]}" "${seeds[@]}" || rc=$?
verdict run $rc
for s in "${seeds[@]}"; do
	line=$(grep "^{\"role\":\"fuzz\",\"seed\":$s," "$out/run/output" \
		2>/dev/null || true)
	if [ -n "$line" ] && [ "$(jq .failures <<<"$line")" = 0 ]; then
		echo "ok fuzz/$kernel/seed-$s # $(jq -r "$summary" <<<"$line")"
	elif [ "$s" != "${v_at% *}" ]; then
		echo "ok fuzz/$kernel/seed-$s # SKIP not run to its end:" \
			"the run failed"
	fi
done

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
keep_confirmed
shrink seq
confirm seq
[ -z "$pre" ] || [ -n "$spent$stopped" ] || { shrink pre; confirm pre; }
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
