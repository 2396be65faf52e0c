# Sourced by scripts/fuzz.sh (and scripts/test-fuzz-shrink.sh, with a
# stub guest): how a guest ran, and the shrinker.  They use fuzz.sh's
# variables: out, kernel, fz, checks, env and slack for a guest; want (the
# run's failure), until and boots, used, pre and batch for the shrink,
# which sets spent, stopped, unconfirmed and fallback.

# guest NAME LIMIT CMD...: CMD in a guest; its folder $out/NAME, its log
# $out/NAME.log; returns the guest's status.
guest() {
	local name=$1 limit=$2
	shift 2
	"$TOP/scripts/guest.sh" -k "$kernel" -m tcg -t "$limit" \
		-o "$out/$name" -- "${env[@]}" "$@" >"$out/$name.log" 2>&1
}

# A log line without what differs from boot to boot: time, CPU, PID,
# addresses.
norm() {
	sed -E -e 's/^\[ *[0-9.]+\] //' \
		-e 's/(CPU|PID|pid|cpu)[:= ]+[0-9]+/\1 N/g' \
		-e 's/(INFO: task [^ ]*):[0-9]+ /\1:N /' \
		-e 's/0x[0-9a-f]+/0xN/g' -e 's/\b[0-9a-f]{8,}\b/N/g' |
		cut -c1-200
}

# where NAME: two lines: the last marker of bench/fuzz on guest NAME's
# console before its first splat ("seed S sequence K", "replay FILE",
# "done", or an empty line), and that splat (empty if none).
where() {
	[ -f "$out/$1/console" ] || { printf '\n\n'; return; }
	awk -v re="$SPLAT_RE" '
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

# seeds_ran OUTPUT SEED...: a line per seed of the run whose fuzzer output
# is OUTPUT: ok for a result line without failures; where the run passed
# (v_sig ok), not ok for a seed without one (the fuzzer never reported
# it) and a status of 1; where it failed, skip for the seeds it did not
# run to their end (the failing one, v_at's, is the shrink's).
seeds_ran() {
	local f=$1 s line sum rc=0
	shift
	sum='"\(.sequences) sequences, \(.ops) ops, \(.ops_per_sec) ops/s;'
	sum+=' \(.lives_checked) ledgers: \(.handed) frames handed, \(.read) read,'
	sum+=' \(.tx_dropped) dropped\(if .unaccounted then ", \(.unaccounted)'
	sum+=' unaccounted (no ledger check)" else "" end)'
	sum+='\(if .pcs then "; KCOV: \(.pcs) PCs, guided: \(.guided)" else "" end)"'
	for s; do
		line=$(grep "^{\"role\":\"fuzz\",\"seed\":$s," "$f" 2>/dev/null || true)
		if [ -n "$line" ] && [ "$(jq .failures <<<"$line")" = 0 ]; then
			echo "ok fuzz/$kernel/seed-$s # $(jq -r "$sum" <<<"$line")"
		elif [ "$v_sig" = ok ]; then
			echo "not ok fuzz/$kernel/seed-$s # ${line:+failures in its result}${line:-no result: the fuzzer never reported it} (see $f)"
			rc=1
		elif [ "$s" != "${v_at% *}" ]; then
			echo "skip fuzz/$kernel/seed-$s # not run to its end: the run failed"
		fi
	done
	return $rc
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

# minimize: the sequence's list shrunk, then the one before it (pre=1),
# each confirmed in a fresh guest; repro.ops and repro-pre.ops hold lists
# that failed in one already.
minimize() {
	keep_confirmed
	shrink seq
	confirm seq
	[ -z "$pre" ] || [ -n "$spent$stopped" ] || { shrink pre; confirm pre; }
}
