#!/bin/bash
# fuzz.sh's shrinker (scripts/fuzz-shrink.sh) against a stub guest that
# replays op lists "op 0".."op N-1" by a failure rule, so that what it
# keeps can be checked.  Prints an ok/not ok line per rule.
. "$(dirname "$0")/lib.sh"
. "$TOP/scripts/fuzz-shrink.sh"
set +e
tmp=$(mktemp -d -p "$BUILD"); trap 'rm -rf "$tmp"' EXIT

# has FILE N: op N is in list FILE
has() { grep -qx "op $1" "$2"; }
# fails FILE: whether list FILE fails, by $rule; $carry holds the lists
# the guest replayed before it
fails() {
	case $rule in
	pair | hang) has 3 "$1" && has 17 "$1" ;;
	# a failure that needs op 19 in this list or any earlier one
	carry | carry-spent) has 0 "$1" && { has 19 "$1" || grep -qx 'op 19' <<<"$carry"; } ;;
	# a failure that needs pop 5 of the sequence before
	pre) has 2 "$1" && grep -qx 'pop 5' <<<"$carry" ;;
	esac
}
# the stub: replays its --replay lists as bench/fuzz does, until one fails
# ("hang": the first guest hangs before any list, with no netdev message)
guest() {
	local name=$1 f carry=
	local -a lists=()
	shift 2
	while [ $# -gt 0 ]; do
		[ "$1" != --replay ] || { lists+=("$2"); shift; }
		shift
	done
	rm -rf "${out:?}/$name"; mkdir -p "$out/$name"; : >"$out/$name.log"
	guests=$((guests + 1))
	if [ "$rule" = hang ] && [ "$guests" = 1 ]; then
		echo "guest: stub hung" >"$out/$name.log"
		return 124
	fi
	for f in "${lists[@]}"; do
		echo "fuzz: replay $f" >>"$out/$name/output"
		if fails "$f"; then
			echo "fuzz: FAIL replay $f: splat: BUG: stub" >>"$out/$name/output"
			echo 2 >"$out/$name/status"
			return 2
		fi
		carry+=$(cat "$f")$'\n'
	done
	echo 0 >"$out/$name/status"
}

# case RULE OPS PRE_OPS BOOTS WANT: minimize a failing list of OPS ops
# (after one of PRE_OPS) within BOOTS guests; WANT: what it keeps, and
# the notes it sets
case_() {
	local got
	rule=$1 out=$tmp/$1 guests=0
	mkdir -p "$out"
	seq 0 $(($2 - 1)) | sed 's/^/op /' >"$out/repro.ops"
	pre=
	if [ "$3" -gt 0 ]; then
		pre=1
		seq 0 $(($3 - 1)) | sed 's/^/pop /' >"$out/repro-pre.ops"
	fi
	: >"$out/repro.trace"
	kernel=stub fz=fuzz checks=() env=() slack=0 boots=$4 used=1
	until=$((SECONDS + 600)) batch=32 spent= stopped= unconfirmed= fallback=
	want="splat: $(norm <<<"BUG: stub")"
	# errexit as in fuzz.sh
	got=$( (set -e; minimize >/dev/null 2>&1
		echo "$(grep -v '^#' "$out/repro.ops" | cut -d' ' -f2 | xargs)${pre:+ after $(cut -d' ' -f2 "$out/repro-pre.ops" | xargs)}" \
			"${spent:+spent }${stopped:+stopped }${unconfirmed:+unconfirmed }${fallback:+fallback}") )
	got=$(xargs <<<"$got")
	if [ "$got" = "$5" ]; then
		echo "ok workbench/fuzz-shrink-$rule # $got"
	else
		echo "not ok workbench/fuzz-shrink-$rule # kept '$got', not '$5'"
	fi
}

case_ pair 20 0 40 "3 17"
case_ hang 20 0 40 "3 17"
case_ pre 20 12 40 "2 after 5"
# a list kept after op 19 ran in an earlier candidate of its guest does
# not fail in a fresh one: the shrink starts again from the whole list
case_ carry 40 0 60 "0 19 fallback"
# out of guests before that: the lists kept are ones that failed alone
case_ carry-spent 40 0 5 "$(seq 0 39 | xargs) spent fallback"

# The seeds' lines of a run: a seed the fuzzer never reported fails a run
# that passed; one a failed run did not reach is a skip.
out=$tmp/seeds kernel=stub
mkdir -p "$out"
r='{"role":"fuzz","seed":1,"failures":0,"sequences":9,"ops":90,"ops_per_sec":3,"lives_checked":9,"handed":4,"read":4,"tx_dropped":0}'
echo "$r" >"$out/output"
v_sig=ok v_at=
got=$(seeds_ran "$out/output" 1 2)
st=$?
if [ $st = 1 ] && grep -q '^ok fuzz/stub/seed-1 # 9 sequences' <<<"$got" &&
	grep -q '^not ok fuzz/stub/seed-2 # no result: the fuzzer never reported it' <<<"$got"; then
	echo "ok workbench/fuzz-seed-unreported"
else
	echo "not ok workbench/fuzz-seed-unreported # status $st: $(xargs <<<"$got")"
fi
v_sig=crash v_at="2 7"
got=$(seeds_ran "$out/output" 1 2 3)
st=$?
if [ $st = 0 ] && [ "$(cut -d' ' -f1-2 <<<"$got" | xargs)" = "ok fuzz/stub/seed-1 skip fuzz/stub/seed-3" ]; then
	echo "ok workbench/fuzz-seed-not-reached"
else
	echo "not ok workbench/fuzz-seed-not-reached # status $st: $(xargs <<<"$got")"
fi
