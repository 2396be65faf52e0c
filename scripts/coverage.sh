#!/bin/bash
# coverage.sh: the lines of the code under test that make test's guest
# workloads execute, measured with gcov on the coverage kernel (the series
# with kernel-config/coverage.config: gcov for tun.o, tap.o and
# drivers/vhost/net.o only).  It runs what make test runs on the release
# kernel, there: the selftests, the bench smoke run, the fuzzer's make test
# budget and the short robustness matrix; each guest's init copies the
# .gcda files out (scripts/guest-init.sh), they are summed with gcov-tool,
# and scripts/coverage.py writes results/coverage.md: per file and
# function, and every line the series adds or changes that nothing ran.
. "$(dirname "$0")/lib.sh"

[ $# = 0 ] || die "usage: coverage.sh (no arguments)"
command -v gcov-tool >/dev/null || die "no gcov-tool: apt install gcc"
"$TOP/scripts/build.sh" coverage >&2
# gcc records the paths kbuild gives it, the real ones
obj=$(realpath "$(kout coverage)") tree=$(realpath "$TREE")
w=$(realpath -m "$BUILD/coverage-run")
rm -rf "$w"
mkdir -p "$w"
stamp=$w/stamp
touch "$stamp"
objs=(drivers/net/tun drivers/net/tap drivers/vhost/net)
# Counts are only summed against the notes they were made for.
notes() { (cd "$obj" && sha256sum "${objs[@]/%/.gcno}"); }
notes >"$w/gcno.sum"

# The workloads' own ok/not ok lines, kept for the report.
log=$w/workloads.log
{
	"$TOP/selftests/run.sh" coverage
	SMOKE_KERNEL=coverage "$TOP/scripts/bench.sh" --smoke all
	"$TOP/scripts/fuzz.sh" -k coverage -s 1 -s 2 -t 240
	ROBUST_CASES=$RELEASE_CASES "$TOP/scripts/robust.sh" --short coverage
} 2>"$w/workloads.err" | tee "$log" | grep '^not ok' >&2 || true

notes | cmp -s - "$w/gcno.sum" ||
	die "the coverage kernel was rebuilt during the run: its counts do not add up"
# Every guest of those runs left its counts in DIR/gcov/<build path>/,
# beside its console.
mapfile -t runs < <(find "$BUILD" -path '*/gcov/*' -name '*.gcda' \
	-newer "$stamp" | sed 's#/gcov/.*#/gcov#' | sort -u |
	while read -r d; do [ -f "${d%/gcov}/console" ] && echo "$d"; done)
[ ${#runs[@]} -gt 0 ] || die "no guest left gcov counts (see $w/workloads.err)"
sum=$w/sum
cp -r "${runs[0]}" "$sum"
for r in "${runs[@]:1}"; do
	gcov-tool merge -o "$w/next" "$sum" "$r" >/dev/null ||
		die "gcov-tool merge failed on $r"
	rm -rf "$sum"
	mv "$w/next" "$sum"
done

# gcov reads an object's .gcno beside its summed .gcda.
json=$w/json
mkdir -p "$json"
for o in "${objs[@]}"; do
	d=$sum$obj/$(dirname "$o")
	[ -f "$d/$(basename "$o").gcda" ] || die "no counts for $o.o"
	cp "$obj/$o.gcno" "$d/"
	(cd "$json" && gcov -j -o "$d" "$tree/$o.c" >/dev/null) ||
		die "gcov failed on $o"
	mv "$json/$(basename "$o").gcov.json.gz" "$json/${o//\//_}.json.gz"
done

files=(drivers/net/tun.c drivers/vhost/net.c include/linux/ptr_ring.h
	drivers/net/tap.c)
# what the kernel was built from: the working tree
tgit diff --no-ext-diff --no-color --src-prefix=a/ --dst-prefix=b/ -U0 \
	base -- "${files[@]}" >"$w/series.diff"
/usr/bin/python3 "$TOP/scripts/coverage.py" --tree "$tree" \
	--diff "$w/series.diff" --workloads "$log" --guests ${#runs[@]} \
	--series "$(tgit log -1 --abbrev=12 --format='"%s" (tree %t)')$(tgit diff --quiet ||
		echo ', with uncommitted changes')" \
	--reasons "$TOP/scripts/coverage.reasons" \
	--out "$TOP/results/coverage.md" "$json"/*.json.gz "${files[@]}"
say "coverage: results/coverage.md"
