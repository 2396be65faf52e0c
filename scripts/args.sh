#!/bin/bash
# args.sh: the make variables given (STACK, CUT, SERIES, SEND, ALONE, EACH,
# SCENARIO) and `series` checked before make fetches or builds anything.
. "$(dirname "$0")/lib.sh"
check_args
