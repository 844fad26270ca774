# rows.awk -- reading a field of a bench row (bench_json() in
# bench/bench_util.h writes them, one JSON object a line, no spaces):
# prepended to the awk programs of bench/plots.sh and bench/table.sh.
#   num(key)   the number, "" when the row has no such key or it is null
#   numq(key)  the same, "?" instead of "" (gnuplot's missing value)
#   str(key)   the string, "" when there is none
function num(key,   re, v) {
	re = "\"" key "\":[^,}]*"
	if (!match($0, re))
		return ""
	v = substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
	return v == "null" ? "" : v
}
function numq(key,   v) {
	v = num(key)
	return v == "" ? "?" : v
}
function str(key,   re) {
	re = "\"" key "\":\"[^\"]*\""
	if (!match($0, re))
		return ""
	return substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
}
