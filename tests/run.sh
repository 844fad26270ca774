#!/bin/sh
# Runs each test program; exit 0 = pass, 77 = skip, anything else = fail.
# Prints one line per test with its wall time ("PASS name (3.2 s)") and
# ends with "N passed, M failed, K skipped".
pass=0; fail=0; skip=0; failed=""
now() { date +%s.%N; }
for t in "$@"; do
	name=$(basename "$t")
	t0=$(now)
	out=$("$t" 2>&1); rc=$?
	secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0)  pass=$((pass+1)); echo "PASS $name ($secs s)" ;;
	77) skip=$((skip+1)); echo "SKIP $name ($secs s): $(printf '%s\n' "$out" | grep -m1 SKIP | sed 's/^.*SKIP:* *//')" ;;
	*)  fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name (exit $rc, $secs s)"
	    printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /' ;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
