#!/bin/bash
# args.sh: the make variables given (STACK, CUT, SERIES, SEND, ALONE, EACH,
# SCENARIO, KERNEL, KERNELS, SELFTEST_KERNELS, MODE, RUN) and `series`
# checked before make fetches or builds anything.
. "$(dirname "$0")/lib.sh"
check_args
# Those only make passes on: names as common as MODE or RUN may be in a
# script's environment for something else.
kind() { [[ $1 != *[[:space:]]* ]] && [[ " $KERNEL_KINDS " = *" $1 "* ]]; }
for v in KERNELS SELFTEST_KERNELS; do
	read -ra ks <<<"${!v:-}"
	for k in "${ks[@]}"; do
		kind "$k" || die "$v=${!v}: no kernel '$k' ($KERNEL_KINDS)"
	done
done
# fuzz.sh also boots a bzImage given by its path
[ -z "${KERNEL:-}" ] || kind "$KERNEL" || { [[ $KERNEL = */* ]] && [ -f "$KERNEL" ]; } ||
	die "KERNEL=$KERNEL: no such kernel ($KERNEL_KINDS, or a bzImage's path)"
case ${MODE:-icount} in icount | kvm | native) ;; *) die "MODE=$MODE: icount, kvm or native" ;; esac
case ${RUN:-base} in base | series) ;; *) die "RUN=$RUN: base or series, the kernel this machine runs" ;; esac
