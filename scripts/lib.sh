# Shared paths and helpers, sourced by every script.  One place knows where
# the trees, the kernels and the base live.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
# Each kernel builds in $BUILD/<kind>/out.  Trees sit at $BUILD/<kind>/linux,
# the same path relative to their out folder, so that ccache (with
# CCACHE_BASEDIR) shares objects between base, series and check builds.
TREE=$BUILD/series/linux	# the series branch: edit kernel code here
BASE_TREE=$BUILD/base/linux	# a worktree at tag "base"
CHECK_TREE=$BUILD/check/linux	# a worktree make check moves along the series
kout() { echo "$BUILD/$1/out"; }
# The kernels build.sh builds, and kernel_tree KIND: the tree each is
# built from.
KERNEL_KINDS="base series debug base-debug stack stack-debug coverage rt check"
kernel_tree() {
	case $1 in
	base | base-debug) echo "$BASE_TREE" ;;
	stack | stack-debug) echo "$STACK_TREE" ;;
	check) echo "$CHECK_TREE" ;;
	series | debug | coverage | rt) echo "$TREE" ;;
	*) die "unknown kernel '$1' ($KERNEL_KINDS)" ;;
	esac
}
BASE_SHA256=$(cut -d' ' -f1 "$TOP/scripts/base.sha256")
BASE_DEB_VERSION=7.3~rc7-1~exp1
SHARED_BASE=${SHARED_BASE:-$TOP/../shared/base/linux-source-7.3.tar.xz}

export CCACHE_BASEDIR=$BUILD
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}

# What a guest's console shows of a kernel in trouble (scripts/guest.sh
# fails a guest on it): splats, leaks, lockdep, a task hung in D state
# (hung_task's line is KERN_ERR, on the console at loglevel=5; its trace
# is not), an RCU stall, a panic.
SPLAT_RE='BUG:|WARNING:|KASAN:|UBSAN:|Oops|Call Trace:'
SPLAT_RE+='|kmemleak: [0-9]+ new suspected|unreferenced object'
SPLAT_RE+='|possible (recursive|circular) locking|inconsistent lock state'
SPLAT_RE+='|suspicious RCU usage|INFO: task .* blocked.* for more than [0-9]+ seconds'
SPLAT_RE+='|rcu: INFO: .*detected stall|Kernel panic'
# console_splat FILE: the first such line of a console, if any
console_splat() { grep -m1 -E "$SPLAT_RE" "$1" || true; }

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
say() { echo "== $*" >&2; }

# git in the build tree, with the fixed identity dates that keep the base and
# series commits (and so the exported patches) reproducible.
tgit() { git -C "$TREE" "$@"; }

# The stack of series, in `series` bottom first, one a line: NAME TREE
# [NEEDS...].  Each series' export is patches/NAME/, its letter, changelog
# and recipients letters/NAME/; on the build tree's series branch its last
# commit is branch stack/NAME.  SERIES=NAME picks one for a step.
stack() { sed -e 's/#.*//' "$TOP/series" | awk 'NF'; }
stack_names() { stack | awk '{ print $1 }'; }
series_field() { stack | awk -v n="$1" -v f="$2" '$1 == n { print $f }'; }
series_tree() { series_field "$1" 2; }
series_needs() { stack | awk -v n="$1" '$1 == n { for (i = 3; i <= NF; i++) print $i }'; }
# The last `net` series of the stack: the cut make test's drops steps run
# on, and make robustness's fixes kernel.
last_net() { stack | awk '$2 == "net" { n = $1 } END { print n }'; }
# is_series TREE: the series kernels (build.sh's series and debug), built
# from the series tree's checkout, are of tree TREE: it is the checkout's,
# with nothing uncommitted.
is_series() {
	[ "$1" = "$(tgit rev-parse 'HEAD^{tree}')" ] &&
		[ -z "$(tgit --no-optional-locks status --porcelain --untracked-files=no)" ]
}
# The ref just below series NAME on the stack: the series before it, or base.
series_below() {
	local prev
	prev=$(stack_names | awk -v n="$1" '$1 == n { print p; exit } { p = $1 }')
	echo "${prev:+stack/}${prev:-base}"
}
# The worktree where build.sh's "stack" kernel builds, checked out at the
# stack cut after series NAME (bench.sh STACK=, drops.sh).
STACK_TREE=$BUILD/stack/linux
# net/core's KUnit suite (CONFIG_NET_TEST, in the debug kernel) and the
# kernel parameters that run it at boot (scripts/kunit.sh).
KUNIT_SUITE=net_core
KUNIT_APPEND="kunit.enable=1 kunit.filter_glob=$KUNIT_SUITE"
# The robustness cases a release kernel runs (make test, make coverage):
# all but fault injection, which needs a debug kernel.
RELEASE_CASES="rx-frames-churn xdp-toggle-xdp_batch xdp-toggle-msg_more
	txqlen-churn txqlen-churn-backpressure requeue reader-stall
	close-mid-burst delete-under-load malformed-write
	malformed-vhost-xdp_batch malformed-vhost-msg_more"
# One run at a time checks out and builds the stack tree: a second one would
# swap the kernel under the first one's boots.  The lock lasts the process.
stack_hold() {
	[ -z "${STACK_HELD:-}" ] || return 0
	mkdir -p "$BUILD"
	exec 8>>"$BUILD/stack.lock"
	flock -n 8 || die "the stack tree $STACK_TREE is in use by another run" \
		"(make bench STACK=, drops, robustness, fuzz -k stack): run one at a time"
	export STACK_HELD=1
}
stack_checkout() {
	stack_hold
	[ -d "$STACK_TREE" ] || tgit worktree add -q --detach "$STACK_TREE" "stack/$1"
	git -C "$STACK_TREE" checkout -q -f --detach "stack/$1"
}
# The series NAME alone on base, with only the series it needs (bench.sh
# ALONE=1): each one's commits from the series branch, picked onto base.
alone_checkout() {
	local d log
	stack_hold
	[ -d "$STACK_TREE" ] || tgit worktree add -q --detach "$STACK_TREE" base
	git -C "$STACK_TREE" checkout -q -f --detach base
	for d in $(needs_closure "$1") "$1"; do
		log=$(git -C "$STACK_TREE" cherry-pick --allow-empty "$(series_below "$d")..stack/$d" 2>&1) || {
			git -C "$STACK_TREE" cherry-pick --abort 2>/dev/null
			die "series $d does not apply on base without the series below it: $(echo "$log" |
				grep -m1 -E '^(error|CONFLICT|fatal)')"
		}
	done
}
# selftest_build TREE KERNEL OUT TEST...: build each kselftest program TEST
# (net/tun_drops) from TREE against the uAPI headers of build.sh's KERNEL,
# into OUT/net/tun_drops.  A script (net/route_hint_saddr.sh) is linked
# there, with its directory's lib.sh, which finds the rest of the tree
# through its own link; the programs it runs are TESTs of their own.
selftest_build() {
	local tree=$1 hdr t d p src
	hdr=$(kout "$2")
	make -C "$tree" O="$hdr" headers >/dev/null 2>&1 || die "make headers failed"
	for t in "${@:4}"; do
		d=${t%/*} p=${t##*/} src=$tree/tools/testing/selftests
		mkdir -p "$3/$d"
		if [[ $p == *.sh ]]; then
			[ -f "$src/$t" ] || die "selftest $t: no such script in $tree"
			ln -sfn "$src/$t" "$3/$t"
			[ ! -f "$src/$d/lib.sh" ] || ln -sfn "$src/$d/lib.sh" "$3/$d/lib.sh"
			continue
		fi
		make -s -C "$src/$d" OUTPUT="$3/$d" \
			KHDR_INCLUDES="-isystem $hdr/usr/include" CC=gcc "$3/$d/$p" >"$3/$p.build.log" 2>&1 ||
			{ tail -20 "$3/$p.build.log"; die "selftest $t: build failed"; }
	done
}
# The selftests/list lines: a test, then the programs it runs (built, not
# run); SELFTEST_ONLY="net/tun_vhost ...": only those tests.
selftest_lines() {
	grep -v '^\s*#' "$TOP/selftests/list" | awk 'NF' |
		if [ -n "${SELFTEST_ONLY:-}" ]; then
			awk -v only="$SELFTEST_ONLY" 'BEGIN { n = split(only, o); for (i = 1; i <= n; i++) want[o[i]] = 1 }
				$1 in want'
		else
			cat
		fi
}
# The series NAME needs, and what those need, bottom first.
needs_closure() {
	local want=" $(series_needs "$1" | tr '\n' ' ') " n
	for n in $(stack_names); do
		case $want in *" $n "*) needs_closure "$n"; echo "$n" ;; esac
	done | awk '!seen[$0]++'
}
# How make send mails: b4 where installed, unless SEND_WITH=git.
send_with() {
	if [ "${SEND_WITH:-}" != git ] && command -v b4 >/dev/null; then echo b4; else echo git; fi
}
# series_named VAR NAME: NAME (the value of VAR) is a series, or stop
series_named() {
	stack_names | grep -qxF "$2" ||
		die "$1=$2: no such series in $TOP/series ($(stack_names | tr '\n' ' '))"
}
# The series a step works on: SERIES, checked, or all of them.
# Use as names=$(selected_series) || exit, so that a bad name stops it.
selected_series() {
	if [ -n "${SERIES:-}" ]; then
		series_named SERIES "$SERIES"
		echo "$SERIES"
	else
		stack_names
	fi
}
# The bench's scenarios (bench/run.sh runs each).
BENCH_SCENARIOS="s000 s001 s002 s003 s004 rr bridged forwarded tcp-stream"
# The make variables a step takes, each that is set checked before any
# work (scripts/args.sh runs this before make fetches the base).
check_args() {
	local v
	for v in STACK CUT SERIES; do
		[ -z "${!v:-}" ] || series_named "$v" "${!v}"
	done
	for v in ALONE EACH; do
		case ${!v:-1} in 1) ;; *) die "$v=${!v}: 1, or unset" ;; esac
	done
	case ${SEND:-1} in 1 | reflect) ;; *) die "SEND=$SEND: 1, reflect, or unset (a dry run)" ;; esac
	[ -z "${SCENARIO:-}" ] || [ "$SCENARIO" = all ] ||
		{ [[ $SCENARIO != *[[:space:]]* ]] && [[ " $BENCH_SCENARIOS " = *" $SCENARIO "* ]]; } ||
		die "SCENARIO=$SCENARIO: no such scenario (all $BENCH_SCENARIOS)"
}

# `series` is checked before any script does any work: each name once, a
# tree of net or net-next, and needs only of series below it, which also
# keeps the stack free of cycles (needs_closure recurses on them).
[ -f "$TOP/series" ] || die "no $TOP/series"
series_problem=$(awk '
	{ sub(/#.*/, "") }
	!NF { next }
	function bad(why) { print "line " FNR ": " why; exit }
	$1 in seen { bad("series " $1 " twice") }
	NF < 2 { bad("series " $1 " has no tree (net or net-next)") }
	$2 != "net" && $2 != "net-next" { bad("series " $1 ": tree " $2 " is not net or net-next") }
	{
		for (i = 3; i <= NF; i++)
			if (!($i in seen))
				bad("series " $1 " needs " $i ", which is not a series above this line")
		seen[$1] = 1
	}' "$TOP/series")
[ -z "$series_problem" ] || die "$TOP/series, $series_problem"
unset series_problem
