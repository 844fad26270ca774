#!/bin/sh
# Runs each test program; exit 0 = pass, 77 = skip, anything else = fail.
# Prints one line per test and ends with "N passed, M failed, K skipped".
pass=0; fail=0; skip=0; failed=""
for t in "$@"; do
	name=$(basename "$t")
	out=$("$t" 2>&1); rc=$?
	case $rc in
	0)  pass=$((pass+1)); echo "PASS $name" ;;
	77) skip=$((skip+1)); echo "SKIP $name: $(printf '%s\n' "$out" | grep -m1 SKIP | sed 's/^.*SKIP:* *//')" ;;
	*)  fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name (exit $rc)"
	    printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /' ;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
