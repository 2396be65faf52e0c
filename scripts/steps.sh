# steps.sh: make test's steps, sourced by test.sh (and by
# test-workbench.sh, which tests them).  Each step appends its ok/not
# ok/skip lines to $log and its time to $times.

took() { # took NAME START: how long the step took, kept for CI's budget
	echo "$1 $((SECONDS - $2))s" >>"$times"
	say "test: took $(tail -n 1 "$times")"
}
lines() { grep -cE '^(ok|not ok|skip) ' "$log"; }
run() { # run NAME CMD...: a step printing its own ok/not ok/skip lines
	local name=$1 t=$SECONDS nok n rc; shift
	say "test: $name"
	nok=$(grep -c '^not ok ' "$log") n=$(lines)
	"$@" | tee -a "$log"
	rc=${PIPESTATUS[0]}
	# A step that failed must have said so itself, or it is said here;
	# one that said nothing checked nothing.
	if [ "$(lines)" -eq "$n" ]; then
		echo "not ok $name # printed no result (exit status $rc)" | tee -a "$log"
	elif [ "$rc" -ne 0 ] && [ "$(grep -c '^not ok ' "$log")" -eq "$nok" ]; then
		echo "not ok $name # failed without saying why" | tee -a "$log"
	fi
	took "$name" $t
}
step() { # step NAME CMD...: a step that prints no lines of its own
	local name=$1 slog=$BUILD/test-${1//\//-}.log t=$SECONDS rc=0; shift
	say "test: $name"
	if "$@" >"$slog" 2>&1; then
		echo "ok $name" | tee -a "$log"
	else
		echo "not ok $name # $(grep -v '^==' "$slog" | tail -1)" | tee -a "$log"
		rc=1
	fi
	took "$name" $t
	return $rc
}
