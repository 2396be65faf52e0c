# ktap.awk: one ok/not ok/skip line per case of a selftest's output (KTAP,
# or a net/lib.sh script's "TEST: NAME  [ OK ]" lines), each named
# pre/NAME (awk -v pre=KERNEL/PROGRAM).  Exit status 1 if a case failed or
# none ran: a program whose every case skipped tested nothing.
# a script of lib.sh: "TEST: NAME (DETAIL)  [ OK ]"
/^TEST: .*\[ *(OK|FAIL|SKIP|XFAIL) *\]$/ {
	name = $0; sub(/^TEST: /, "", name); sub(/ *\[[^[]*\]$/, "", name)
	res = $0; sub(/.*\[ */, "", res); sub(/ *\]$/, "", res)
	if (res == "SKIP") { print "skip " pre "/" name " # SKIP"; next }
	if (res == "FAIL") { print "not ok " pre "/" name; bad = 1; next }
	print "ok " pre "/" name (res == "XFAIL" ? " # XFAIL" : ""); n++; next
}
/^(not )?ok [0-9]+ / {
	line = $0; sub(/^(not )?ok [0-9]+ /, "", line)
	name = line; reason = ""
	if (match(line, / # /)) { name = substr(line, 1, RSTART - 1); reason = substr(line, RSTART + 3) }
	if (reason ~ /^SKIP/) { print "skip " pre "/" name " # " reason; next }
	if ($1 == "not") { print "not ok " pre "/" name; bad = 1; next }
	print "ok " pre "/" name; n++
}
END {
	if (!n && !bad) print "not ok " pre " # no test case ran"
	exit bad || !n
}
