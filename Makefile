# tun/tap batching series for net-next: the workbench.  One target per step;
# `make help` lists them.  Build output goes to build/ (ignored).
#   Base tree:  KERNEL_TREE=<net-next checkout>, or LINUX_SRC_TARBALL=<path>,
#               else Debian's linux-source-7.3 is downloaded.

SHELL := /bin/bash
BUILD ?= $(CURDIR)/build
export BUILD
# The trees under build/ sit side by side, each beside the folder its
# release kernel is built in (base/linux and base/out, series/linux and
# series/out, ...): with paths relative to the build folder,
# ccache gives a tree the objects another tree compiled from the same
# source and config, so the series kernel reuses most of base's.
export CCACHE_BASEDIR ?= $(BUILD)
KERNELS ?= base series debug
SELFTEST_KERNELS ?= base series debug
SCENARIO ?= all
MODE ?= icount
KERNEL ?= series

.PHONY: help args setup base apply export build selftest kunit check bench robustness drops drops-debug stress fuzz coverage rt send trailers profile profile-lists test clean distclean

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## setup      install the Debian packages the workbench needs
setup:
	scripts/setup.sh

## base       unpack or clone the base tree into build/series/linux (tag "base")
base: args
	scripts/base.sh

# the variables given, and `series`, refused before any work
args:
	scripts/args.sh

$(BUILD)/series.head: series $(wildcard patches/*/series patches/*/*.patch) | base
	scripts/apply.sh

## apply      rebuild the series branch, and its stack/NAME branches, from
##            patches/NAME/ of every series in `series` (FORCE=1 drops local work)
apply: base
	scripts/apply.sh

## export     regenerate patches/NAME/ from the series branch, every series or
##            SERIES=NAME (V=2 ...; letters/NAME/changelog gives "Changes in vN")
export:
	scripts/export.sh

## build      build the kernels in KERNELS (base series debug base-debug)
build: $(BUILD)/series.head
	for k in $(KERNELS); do scripts/build.sh $$k || exit; done

## selftest   run the kselftests in selftests/list on SELFTEST_KERNELS
selftest: $(BUILD)/series.head
	for k in $(SELFTEST_KERNELS); do scripts/build.sh $$k || exit; done
	selftests/run.sh $(SELFTEST_KERNELS)

## kunit      the series' KUnit tests (net_core) at the debug kernel's boot
kunit: $(BUILD)/series.head
	scripts/build.sh debug
	scripts/kunit.sh

## check      netdev's per-patch checks (checkpatch, builds, W=1, sparse, cocci)
check: $(BUILD)/series.head
	scripts/check.sh

## bench      run bench scenarios (SCENARIO=s002, MODE=icount|kvm) on base and the
##            whole stack, or the stack cut after STACK=NAME (results/stack-NAME/),
##            or series NAME alone on base with STACK=NAME ALONE=1 (alone-NAME/),
##            or each patch of NAME against the tree before it with EACH=1
##            (results/each-NAME/SCENARIO-N.md for patch N); MODE=native
##            RUN=base|series: on the running kernel of a real machine,
##            booted into each in turn (results/native/; README, Measuring)
bench: $(BUILD)/series.head
	scripts/bench.sh $(SCENARIO)

## robustness the robustness matrix on the debug kernels of base, base with the
##            `net` fixes (unless a `net` series ends the stack) and series;
##            writes results/robustness.md
robustness: $(BUILD)/series.head
	scripts/robust.sh

## drops      a `net` series' selftest on base and on the stack cut after it:
##            tun_drops for STACK=accounting (the default), results/drops.md;
##            tun_vhost's malformed_descriptors for STACK=vhost-tx,
##            results/drops-vhost-tx.md; route_hint_saddr.sh for
##            STACK=route-hint, results/route-hint.md; rmnet_ack for
##            STACK=rmnet-ack, results/rmnet-ack.md; tun's
##            bad_gso_type_frame_error for STACK=tap-stats,
##            results/tap-stats.md; CUT=NAME: on the cut
##            after a series above it instead, its table in build/ (make
##            test: the last `net` series); ALONE=1: on the series alone,
##            results/alone-NAME/
drops: $(BUILD)/series.head
	scripts/drops.sh

## drops-debug the same on the debug kernels (KASAN, lockdep, kmemleak);
##            writes results/drops-debug.md (drops-vhost-tx-debug.md); and
##            for STACK=napi-lockdep, tun_vhost with rx-frames then
##            IFF_NAPI in one guest, whose console must show no lockdep
##            report, results/napi-lockdep-debug.md
drops-debug: $(BUILD)/series.head
	scripts/drops.sh --debug

## stress     the same matrix, minutes a case (nothing written)
stress: $(BUILD)/series.head
	scripts/robust.sh --long

## fuzz       the seeded tun/tap fuzzer (bench/fuzz) in a guest of KERNEL
##            (series; coverage: guided by KCOV; or a bzImage path); a
##            failure is shrunk to a reproducer,
##            build/fuzz/KERNEL/sSEEDS/repro.ops (after repro-pre.ops, if
##            any) (FUZZ_ARGS="-s 7 -n 1000 -t 600": scripts/fuzz.sh; -r:
##            recorded in results/fuzz.md)
fuzz: $(BUILD)/series.head
	scripts/fuzz.sh -k $(KERNEL) $(FUZZ_ARGS)

## coverage   gcov line coverage of tun.c, tap.c, vhost/net.c and ptr_ring.h
##            by make test's guest workloads, on the coverage kernel (series
##            with kernel-config/coverage.config); writes results/coverage.md
coverage: $(BUILD)/series.head
	scripts/coverage.sh

## rt         the series' kselftests and the robustness matrix on its
##            PREEMPT_RT debug kernel (kernel-config/rt.config); results/rt.md
##            (not in make test: one more debug kernel to build)
rt: $(BUILD)/series.head
	scripts/rt.sh

## send       a dry run of mailing each series (SERIES=NAME: one) as its own thread,
##            as you (SENDER=, else git's identity), with b4 where installed;
##            mails in build/send/NAME/ (SEND=reflect: to you; SEND=1: for real)
send: $(BUILD)/series.head
	scripts/send.sh

## trailers   take the Reviewed-by/Acked-by/Tested-by of a saved review thread
##            (MBOX=thread.mbox) into the series branch; then make export
trailers:
	scripts/trailers.sh "$(MBOX)"

## profile    per-function instructions per packet of one bench command
##            (KERNEL=base|series, NAME=..., PROFILE_CMD="./vhost ...")
PROFILE_CMD ?= ./vhost --mode tx --tap tap0 --sndbuf unlimited --burst 64
NAME ?= $(KERNEL)-xdp-batch-64
profile: $(BUILD)/series.head
	scripts/build.sh $(KERNEL)
	scripts/profile.sh -k $(KERNEL) -o $(NAME) -- $(PROFILE_CMD)

## profile-lists  where netif_receive_skb_list() spends on short lists: the
##            profiles of base and series on XDP-batch bursts of LIST_BURSTS,
##            against each other (scripts/listcost.py): results/profile-lists.md
LIST_BURSTS ?= 1 2 4 8
profile-lists: $(BUILD)/series.head
	for k in base series; do scripts/build.sh $$k || exit; for b in $(LIST_BURSTS); do \
		scripts/profile.sh -k $$k -o $$k-xdp-batch-$$b -- ./vhost --mode tx --tap tap0 \
			--sndbuf unlimited --burst $$b >/dev/null || exit; done; done
	scripts/listcost.py --command "make profile-lists LIST_BURSTS=\"$(LIST_BURSTS)\"" --bursts $(LIST_BURSTS)

## test       everything CI runs; ends with "N passed, N failed"
test:
	scripts/test.sh

## clean      remove kernels and guest output (keeps the trees)
clean:
	rm -rf $(BUILD)/out $(BUILD)/guest

## distclean  remove all of build/
distclean:
	rm -rf $(BUILD)
