#!/bin/bash
# bench.sh [--smoke] SCENARIO|all: run bench scenarios on the base and series
# kernels and write results/<scenario>.{json,md} (scripts/report.py).
# MODE=icount (default where KVM does not work): one vCPU, figures are guest
#   instructions per packet, two boots per kernel to show they repeat (five
#   where bench/seeds.json names rows that follow timing, which report.py
#   shows with their spread over those five);
#   PACKETS a case (default 20,000; five times that in s000 and s003).
# MODE=kvm (default where the KVM probe boots): wall-clock pps, 5 boots.
#   KVM_STANDIN=tcg runs that pipeline, -smp 2 and all, under TCG: a test of
#   the pipeline whose figures measure nothing, so it writes only to
#   BENCH_RESULTS, never to results/.
# MODE=native RUN=base|series: the running kernel, no QEMU, for a test box
#   booted into base, then into series (scripts/native.sh says how).
# --smoke: small packet counts on the series kernel only (SMOKE_KERNEL=KIND:
#   that one), nothing written to results/; prints ok/not ok per scenario.
. "$(dirname "$0")/lib.sh"

smoke=
[ "${1:-}" = --smoke ] && { smoke=1; shift; }
sel=${1:-all}
SCENARIO=$sel check_args
read -ra scenarios <<<"$BENCH_SCENARIOS"
[ "$sel" = all ] || scenarios=("$sel")
[ "${MODE:-}" != native ] || SCENARIO=$sel exec "$TOP/scripts/native.sh" ${smoke:+--smoke} "${scenarios[@]}"

# STACK=NAME: against the stack cut after series NAME, not the whole of it;
# results in results/stack-NAME/.  With ALONE=1, against series NAME alone
# on base (and the series it needs); results in results/alone-NAME/.  With
# EACH=1, each patch of NAME that changes the kernel against the tree just
# before it, on the stack: results/each-NAME/SCENARIO-N.md for patch N.
[ -n "${ALONE:-}" ] && [ -n "${EACH:-}" ] && die "ALONE=1 and EACH=1: one or the other"
kernels=(base series) cut=() runs_tag= points=() refs=()
if [ -n "${STACK:-}" ]; then
	if [ "${EACH:-}" = 1 ]; then
		stack_checkout "$STACK"
		# The points: the stack below NAME (p0), then pN after each
		# patch N that touches more than tools/ (a selftest alone
		# builds the kernel before it again).
		below=$(series_below "$STACK") points=(0) refs=("$below") i=0
		for c in $(tgit rev-list --reverse "$below..stack/$STACK"); do
			i=$((i + 1))
			[ -n "$(tgit diff --name-only "$c^" "$c" -- . ':!tools')" ] || continue
			points+=("$i") refs+=("$c")
		done
		[ ${#points[@]} -gt 1 ] || die "EACH=1: no patch of $STACK changes the kernel"
		cut=(--each "$STACK" --points "${points[*]}" --refs "${refs[*]}")
		runs_tag=-each-$STACK kernels=()
		for p in "${points[@]}"; do kernels+=("p$p"); done
	elif [ "${ALONE:-}" = 1 ]; then
		alone_checkout "$STACK"
		cut=(--alone "$STACK") runs_tag=-alone-$STACK kernels=(base stack)
	else
		stack_checkout "$STACK"
		cut=(--stack "$STACK") runs_tag=-stack-$STACK kernels=(base stack)
	fi
elif [ -n "${ALONE:-}${EACH:-}" ]; then
	die "${ALONE:+ALONE=1}${EACH:+EACH=1} needs STACK=NAME, the series to measure"
fi
# A kernel of the bench: base, series or stack, or an EACH=1 point pN,
# for which the stack kernel is built at that point just before its runs.
kind() { case $1 in p*) echo stack ;; *) echo "$1" ;; esac; }
build_kernel() {
	local i
	for i in "${!points[@]}"; do
		[ "p${points[$i]}" = "$1" ] && git -C "$STACK_TREE" checkout -q -f --detach "${refs[$i]}"
	done
	"$TOP/scripts/build.sh" "$(kind "$1")" >&2
}
if [ -n "$smoke" ]; then
	[ -z "${EACH:-}" ] || die "EACH=1 has no smoke run"
	kernels=("${SMOKE_KERNEL:-${kernels[1]}}")
fi
mode=${MODE:-}
if [ -n "${KVM_STANDIN:-}" ]; then
	[ "$mode" = kvm ] && [ "$KVM_STANDIN" = tcg ] || die "KVM_STANDIN=$KVM_STANDIN: tcg, with MODE=kvm"
	case $(realpath -m "${BENCH_RESULTS:-$TOP/results}")/ in
	"$(realpath -m "$TOP/results")"/*) die "KVM_STANDIN=tcg: its figures are no measurement; set BENCH_RESULTS outside results/" ;;
	esac
fi
if [ -z "$mode" ]; then
	mode=icount
	build_kernel "${kernels[-1]}"
	"$TOP/scripts/kvm-probe.sh" "$(kout "$(kind "${kernels[-1]}")")/arch/x86/boot/bzImage" && mode=kvm
fi
# Wall-clock modes: the programs also report CPU time (busy_ticks()).
cpu=(env)
case $mode in
icount) reps=2 n=${PACKETS:-20000} ;;
kvm) reps=5 n=${PACKETS:-500000} cpu=(env BENCH_CPU=1) ;;
*) die "MODE=$mode: icount, kvm or native" ;;
esac
if [ -n "$smoke" ]; then reps=1 n=300; fi

make -s -C "$TOP/bench" >&2 || die "bench programs do not build"
[ -n "${EACH:-}" ] || for k in "${kernels[@]}"; do build_kernel "$k"; done

runs=$BUILD/bench${smoke:+-smoke}${KVM_STANDIN:+-standin}$runs_tag
# kernel_runs K: every scenario's boots of kernel K; fails if one did
kernel_runs() {
	local k=$1 s r d ns nr c rc=0
	# (called as a condition, so set -e does not stop it here)
	[ -z "${EACH:-}" ] || build_kernel "$k" || return 1
	for s in "${scenarios[@]}"; do
		# no boots of a run with more of them left for the report
		rm -rf "${runs:?}/$s/$k"-*
		# s000, s003 and tcp-stream: a generator and a consumer take
		# turns on the one vCPU, and their first few hundred switches go
		# differently from run to run: up to 1.2% of a figure over 20,000
		# packets, under 0.4% over 100,000 (but for tcp-stream's rows
		# that follow timing, seeds.json).
		ns=$n
		case $mode-$smoke-$s in icount--s000 | icount--s003 | icount--tcp-stream) ns=$((n * 5)) ;; esac
		nr=$reps
		if [ "$mode-$smoke" = icount- ] && jq -e --arg s "$s" '.[$s].timing_cases // [] | length > 0' \
			"$TOP/bench/seeds.json" >/dev/null; then
			nr=5
		fi
		for r in $(seq "$nr"); do
			d=$runs/$s/$k-$r
			mkdir -p "$runs/$s"
			say "bench: $s on $k ($mode, run $r of $nr, $ns packets)"
			if "$TOP/scripts/guest.sh" -k "$(kind "$k")" -m "${KVM_STANDIN:-$mode}" \
				-t 1500 -o "$d" -- "${cpu[@]}" "$TOP/bench/run.sh" "$s" "$ns" \
				>"$d.log" 2>&1; then
				[ -z "$smoke" ] && continue
				# a smoke run passes on the cases it reported
				c=$(grep -c '"case":' "$d/results.jsonl" 2>/dev/null) ||
					{ rc=1; echo "not ok bench/$s # no case reported ($d)"; continue; }
				echo "ok bench/$s # $c cases"
			else
				rc=1
				echo "not ok bench/$s/$k-$r # $(grep -E '^(bench|guest):' "$d.log" | head -1)"
				sed 's/^/  | /' "$d.log" | tail -15 >&2
			fi
		done
	done
	return $rc
}
rc=0
if [ "$mode" = icount ] && [ -z "${EACH:-}" ] && [ ${#kernels[@]} -gt 1 ] &&
	[ "$(nproc)" -gt 1 ]; then
	# An icount figure counts guest instructions, and a run starts on
	# the guest's clock (README, Measuring), so a busy host slows it
	# but does not move it: the kernels boot side by side, a CPU each.
	# (EACH=1 builds one stack kernel a point in turn; kvm and native
	# time.)
	pids=()
	trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
	for k in "${kernels[@]}"; do kernel_runs "$k" & pids+=($!); done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	trap - EXIT
else
	for k in "${kernels[@]}"; do kernel_runs "$k" || rc=1; done
fi
[ -n "$smoke" ] && exit $rc
[ $rc -eq 0 ] || die "a bench run failed: no results written"
/usr/bin/python3 "$TOP/scripts/report.py" --runs "$runs" --mode "$mode" "${cut[@]}" \
	${BENCH_RESULTS:+--out "$BENCH_RESULTS"} ${KVM_STANDIN:+--standin "$KVM_STANDIN"} \
	--command "make bench SCENARIO=$sel${MODE:+ MODE=$MODE}${STACK:+ STACK=$STACK}${ALONE:+ ALONE=1}${EACH:+ EACH=1}" "${scenarios[@]}"
