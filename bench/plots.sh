#!/bin/sh
# plots.sh -- the figures of a `make bench` run (make plots).
#
#   sh bench/plots.sh RESULTS.json OUTDIR
#
# Reads the rows bench/results.sh gathered (one JSON object a line, see
# bench_json() in bench/bench_util.h) and draws, with gnuplot, into OUTDIR:
#   recording.svg  ns per event, posixtrace against LTTng-UST (lttng_cmp)
#   reader.svg     events per second of each command that reads a log,
#                  against babeltrace2 on the CTF export (reader)
#   size.svg       time and peak memory of each command against the
#                  trace's size (reader, view)
#   query.svg      events per second of each SQL statement, from
#                  posixtrace query and from Python's sqlite3 with the
#                  extension, on the largest log, and their peak RSS (query)
#   clock.svg      the timestamps' error under load (clock)
#   keep.svg       events per second kept at full speed against producer
#                  threads (1, 2, 4): posixtrace record, record --no-loss,
#                  LTTng-UST's discard and blocking channels with their
#                  consumer, and the flight recorder's rate for reference (keep)
# Each figure names the run: date, machine, load average.  A figure whose
# rows the run lacks (LTTng-UST or babeltrace2 not installed, a program
# that did not run) is drawn with a line saying so, not skipped.
set -u

res=${1:?usage: plots.sh RESULTS.json OUTDIR}
out=${2:?usage: plots.sh RESULTS.json OUTDIR}
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plots: gnuplot not found (Debian package gnuplot-nox)" >&2
	exit 1
fi
if [ ! -r "$res" ]; then
	echo "plots: $res not found: run make bench first" >&2
	exit 1
fi
mkdir -p "$out" || exit 1
tmp=$(mktemp -d /tmp/posixtrace-plots.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# the run: "2026-11-27T18:30:00Z, MODEL, N CPUs (virt), load 1.2 before, 0.9 after"
head_field() { # a string field of results.json's header, or a number
	sed -n "s/^ *\"$1\": \"\{0,1\}\([^\"]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$res" | head -n 1
}
mach=$(sed -n 's/^ *"machine": //p' "$res" | head -n 1)
mfield() {
	printf '%s' "$mach" | sed -n "s/.*\"$1\": \"\{0,1\}\([^\",}]*\).*/\1/p"
}
load1() { printf '%s' "$1" | sed 's/^\[\([^,]*\),.*/\1/'; }
run="$(head_field date | sed 's/T/ /; s/:[0-9]*Z$/ UTC/'), $(mfield model), $(mfield nproc) CPUs ($(mfield virt)), load average $(load1 "$(head_field load_before)") before, $(load1 "$(head_field load_after)") after"
[ "$(head_field complete | tr -d ,)" = true ] || run="$run, INCOMPLETE run" # ("true,")
# gnuplot strings are in double quotes: keep the model's text plain
run=$(printf '%s' "$run" | tr -d '"\\')

# awk over the rows of one program, with bench/rows.awk's num(), numq()
# and str() to read a field
rowsawk=$(cat "$(dirname "$0")/rows.awk") || exit 1
rows() {
	prog=$1
	shift
	grep "^{\"bench\":\"$prog\"" "$res" | awk "$rowsawk
$*"
}

# a figure that says why it has nothing to show
empty() { # FILE TITLE REASON
	gnuplot <<EOF
set terminal svg size 900,500 dynamic noenhanced font "sans,12" background "white"
set output "$1"
set title "$2\n$run"
unset border; unset xtics; unset ytics; unset key
set xrange [0:1]; set yrange [0:1]
set label 1 "$3" at 0.5,0.5 center
plot NaN notitle
EOF
}

common='set terminal svg size 900,560 dynamic noenhanced font "sans,12" background "white"
set style fill solid 0.85 border -1
set grid ytics lc rgb "#dddddd"
set key top left
set rmargin 12'

# ------------------------------------------------------------ recording
rows lttng_cmp '{ if (str("case") != "baseline") printf "\"%s\" %s %s\n", str("case"), numq("posixtrace_ns"), numq("lttng_ns") }' >"$tmp/rec.dat"
rdtsc=$(rows lttng_cmp '$0 ~ /"case":"baseline"/ { v = numq("rdtsc_ns"); if (v != "?") printf "%.2f\n", v }')
floor=$(rows bench '$0 ~ /"case":"floor"/ { v = numq("ns_per_event"); if (v != "?") printf "%.2f\n", v }')
[ -n "$rdtsc" ] || rdtsc=$(rows bench '$0 ~ /"case":"rdtsc"/ { v = numq("ns_per_event"); if (v != "?") printf "%.2f\n", v }')
# the reference lines: drawn across, named in the key
refs='' keys=''
if [ -n "$floor" ]; then
	refs="$refs
set arrow 1 from graph 0, first $floor to graph 1, first $floor nohead dt 2 lc rgb \"#2ca02c\" lw 1.5"
	keys="$keys, NaN with lines dt 2 lc rgb \"#2ca02c\" lw 1.5 title \"the floor: a minimal per-thread ring, $floor ns\""
fi
if [ -n "$rdtsc" ]; then
	refs="$refs
set arrow 2 from graph 0, first $rdtsc to graph 1, first $rdtsc nohead dt 3 lc rgb \"#7f7f7f\" lw 1.5"
	keys="$keys, NaN with lines dt 3 lc rgb \"#7f7f7f\" lw 1.5 title \"rdtsc alone, $rdtsc ns\""
fi
recset="set style data histogram
set style histogram clustered gap 1
set logscale y
set yrange [0.1:*]
set ylabel \"ns per event (log scale)\"
set xtics rotate by -25 nomirror
set datafile missing \"?\"
$refs"
if [ -s "$tmp/rec.dat" ]; then
	gnuplot <<EOF
$common
set output "$out/recording.svg"
set title "Recording: ns per event, posixtrace and LTTng-UST in the same run (32-byte payload; lower is better)\n$run"
$recset
plot "$tmp/rec.dat" using 2:xtic(1) title "posixtrace" lc rgb "#1f77b4", \
     "" using 3 title "LTTng-UST" lc rgb "#d62728"$keys
EOF
else
	# no LTTng-UST rows: posixtrace's own from bench/bench, and why
	rows bench '{ c = str("case"); if (c ~ /^(no stream|filtered out|loop 1 thread|loop 2 threads each|loop \+ trygetnext reader|loop paced)$/) printf "\"%s\" %s\n", c, numq("ns_per_event") }' >"$tmp/rec1.dat"
	if [ -s "$tmp/rec1.dat" ]; then
		gnuplot <<EOF
$common
set output "$out/recording.svg"
set title "Recording: ns per event, posixtrace (32-byte payload; lower is better)\n$run"
$recset
set label 3 "LTTng-UST: no rows in this run (make bench-lttng skipped it: lttng-tools or liblttng-ust-dev missing?)" at graph 0.5, graph 0.95 center tc rgb "#d62728"
plot "$tmp/rec1.dat" using 2:xtic(1) title "posixtrace" lc rgb "#1f77b4"$keys
EOF
	else
		empty "$out/recording.svg" "Recording: ns per event" "no rows of bench/bench or bench/lttng in this run"
	fi
fi

# ------------------------------------------------------------ reader throughput
big=$(rows reader '{ n = numq("trace_events"); if (n != "?" && n + 0 > m) m = n + 0 } END { if (m) printf "%.0f\n", m }')
if [ -n "$big" ]; then
	rows reader '{ c = str("case"); n = numq("trace_events") + 0; r = numq("events_per_s")
		if (n != '"$big"' || c == "log" || c == "info" || c ~ /--from/ || c ~ /^recorded: /) next
		bt = c ~ /^babeltrace2/
		sub(/ > file$/, "", c); sub(/ > \/dev\/null$/, "", c)
		printf "\"%s\" %s %d\n", c, r == "?" ? "?" : r / 1e6, bt }' >"$tmp/read.dat"
	nobt=
	grep -q ' 1$' "$tmp/read.dat" ||
		nobt='set label 3 "babeltrace2: no rows in this run (not installed, or READER_BT=0)" at graph 0.5, graph 0.95 center tc rgb "#d62728"'
	gnuplot <<EOF
$common
set output "$out/reader.svg"
set title "Reading a log of $(awk "BEGIN { printf \"%.3g\", $big / 1e6 }") M events: events per second of wall time (higher is better)\n$run"
set ylabel "M events/s"
set yrange [0:*]
set xtics rotate by -25 nomirror
set datafile missing "?"
set boxwidth 0.7
$nobt
plot "$tmp/read.dat" using 0:2:(\$3 == 1 ? 0xd62728 : 0x1f77b4):xtic(1) with boxes lc rgb variable notitle, \
     NaN with boxes lc rgb "#1f77b4" title "posixtrace", \
     NaN with boxes lc rgb "#d62728" title "babeltrace2 (on posixtrace's CTF export)"
EOF
else
	empty "$out/reader.svg" "Reading a log: events per second" "no rows of bench/reader in this run"
fi

# ------------------------------------------------------------ SQL statements
qbig=$(rows query '{ n = numq("trace_events"); if (n != "?" && n + 0 > m) m = n + 0 } END { if (m) printf "%.0f\n", m }')
if [ -n "$qbig" ]; then
	rows query '{ c = str("case"); n = numq("trace_events") + 0; r = numq("events_per_s")
		if (n != '"$qbig"') next
		py = c ~ /^python /
		printf "\"%s\" %s %s %d\n", c, r == "?" ? "?" : r / 1e6, numq("rss_mb"), py }' >"$tmp/query.dat"
	gnuplot <<EOF
set terminal svg size 1300,620 dynamic noenhanced font "sans,12" background "white"
set style fill solid 0.85 border -1
set grid ytics lc rgb "#dddddd"
set key top center font ",10"
set output "$out/query.svg"
set datafile missing "?"
set xtics rotate by -30 nomirror font ",10"
set bmargin 7
set boxwidth 0.7
set yrange [0:*]
set offsets 0, 0, graph 0.15, 0
set multiplot layout 1,2 title "SQL over a log of $(awk "BEGIN { printf \"%.3g\", $qbig / 1e6 }") M events (bench/query)\n$run"
set title "events per second of wall time (higher is better)"
set ylabel "M events/s"
plot "$tmp/query.dat" using 0:2:(\$4 == 1 ? 0xd62728 : 0x1f77b4):xtic(1) with boxes lc rgb variable notitle, \
     NaN with boxes lc rgb "#1f77b4" title "posixtrace query (stats: the reference)", \
     NaN with boxes lc rgb "#d62728" title "python3, sqlite3 module + extension"
set title "peak RSS (MB)"
set ylabel "MB"
plot "$tmp/query.dat" using 0:3:(\$4 == 1 ? 0xd62728 : 0x1f77b4):xtic(1) with boxes lc rgb variable notitle
unset multiplot
EOF
else
	empty "$out/query.svg" "SQL over a log: events per second" "no rows of bench/query in this run (a build without SQLite has none)"
fi

# ------------------------------------------------------------ size: time and memory
rows reader '{ c = str("case"); if (c == "log" || c ~ /--from/ || c ~ /^recorded: /) next
	sub(/ > file$/, "", c); sub(/ > \/dev\/null$/, "", c)
	printf "%s\t%s\t%s\t%s\n", c, numq("trace_events"), numq("s"), numq("rss_mb") }' >"$tmp/size.tsv"
rows view '{ if (str("case") == "index build") printf "view (index build)\t%s\t%s\t%s\n", numq("trace_events"), numq("s"), numq("rss_mb") }' >>"$tmp/size.tsv"
if [ -s "$tmp/size.tsv" ]; then
	# one block per command (gnuplot's index), in the order they came
	awk -F '\t' '{ if (!($1 in k)) { k[$1] = n++; name[k[$1]] = $1 } line[k[$1]] = line[k[$1]] $2 " " $3 " " $4 "\n" }
		END { for (i = 0; i < n; i++) printf "# %s\n%s\n\n", name[i], line[i] }' "$tmp/size.tsv" >"$tmp/size.dat"
	names=$(awk -F '\t' '!($1 in k) { k[$1] = 1; print $1 }' "$tmp/size.tsv")
	t='' m='' i=0
	IFS='
'
	for nm in $names; do
		t="$t${t:+, }\"$tmp/size.dat\" index $i using 1:2 with linespoints title \"$nm\""
		m="$m${m:+, }\"$tmp/size.dat\" index $i using 1:3 with linespoints title \"$nm\""
		i=$((i + 1))
	done
	unset IFS
	gnuplot <<EOF
set terminal svg size 1100,560 dynamic noenhanced font "sans,12" background "white"
set output "$out/size.svg"
set datafile missing "?"
set grid lc rgb "#dddddd"
set logscale xy
set xlabel "events in the trace"
set key top left font ",10"
set multiplot layout 1,2 title "Each command against the trace's size: elapsed time and peak RSS\n$run"
set title "elapsed time (s)"
plot $t
set title "peak RSS (MB)"
set key off
plot $m
unset multiplot
EOF
else
	empty "$out/size.svg" "Time and memory against trace size" "no rows of bench/reader or bench/view in this run"
fi

# ------------------------------------------------------------ clock
# the error a mark is known to have: its distance to the middle of a
# bracket at most 1 us wide (percentiles), and how far any mark lies
# outside its bracket (0 when inside); a wide bracket (a preempted
# thread) is no witness of anything
rows clock '{ if (numq("marks") + 0 > 0 && numq("narrow") + 0 > 0) printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", str("case"), numq("narrow_median_ns"), numq("narrow_p99_ns"), numq("narrow_p999_ns"), numq("worst_narrow_ns"), numq("worst_outside_ns"), numq("median_bracket_ns"), numq("threads"), numq("narrow"), numq("marks") }' >"$tmp/clock.tsv"
if [ -s "$tmp/clock.tsv" ]; then
	# one line per statistic, one column per read (live, log); 0 drawn as 1
	awk -F '\t' '{ n = NR; for (k = 2; k <= 6; k++) v[n, k] = ($k + 0 < 1 ? 1 : $k) }
		END { split("median|99th percentile|99.9th percentile|worst|worst outside any bracket", lab, "|")
			for (k = 2; k <= 6; k++) { printf "\"%s\"", lab[k - 1]; for (r = 1; r <= n; r++) printf " %s", v[r, k]; printf "\n" } }' \
		"$tmp/clock.tsv" >"$tmp/clock.dat"
	bracket=$(awk -F '\t' 'NR == 1 { print $7 }' "$tmp/clock.tsv")
	threads=$(awk -F '\t' 'NR == 1 { print $8 }' "$tmp/clock.tsv")
	plot='' col=2
	tab=$(printf '\t')
	while IFS=$tab read -r nm _ _ _ _ _ _ _ nn nk; do
		plot="$plot${plot:+, }\"$tmp/clock.dat\" using $col$([ $col = 2 ] && printf ':xtic(1)') title \"$nm ($nn of $nk marks in brackets <= 1 us)\""
		col=$((col + 1))
	done <"$tmp/clock.tsv"
	gnuplot <<EOF
$common
set output "$out/clock.svg"
set title "Timestamp error under load: $threads busy threads on $(mfield nproc) CPUs\n$run"
set style data histogram
set style histogram clustered gap 1
set logscale y
set yrange [1:*]
set ylabel "|timestamp - middle of its CLOCK_REALTIME bracket|, ns (log; 0 drawn as 1)"
set datafile missing "?"
set arrow 1 from graph 0, first $bracket / 2.0 to graph 1, first $bracket / 2.0 nohead dt 2 lc rgb "#7f7f7f"
set label 1 "half the median bracket ($bracket ns): what the witness can tell apart" at graph 0.01, first $bracket / 2.0 left offset 0,0.6 tc rgb "#7f7f7f"
plot $plot
EOF
else
	empty "$out/clock.svg" "Timestamp error under load" "no rows of bench/clock in this run"
fi

# ------------------------------------------------------------ events kept
# one line per case ("record/2": case record, 2 threads), M events/s kept
rows keep '{ c = str("case"); if (c !~ /\//) next
	split(c, p, "/"); v = numq(p[1] == "flight" ? "made_per_s" : "kept_per_s")
	printf "%s %s %s\n", p[1], p[2], v == "?" ? "?" : v / 1e6 }' >"$tmp/keep.txt"
if [ -s "$tmp/keep.txt" ]; then
	plot=''
	for c in flight record noloss lttng lttngb; do
		grep "^$c " "$tmp/keep.txt" | cut -d' ' -f2- >"$tmp/keep-$c.dat"
		[ -s "$tmp/keep-$c.dat" ] || continue
		case $c in
		flight) t='flight recorder (LOOP, no log): what the producers make' st='lc rgb "#7f7f7f"' ;;
		record) t='posixtrace record' st='lc rgb "#1f77b4"' ;;
		noloss) t='posixtrace record --no-loss' st='lc rgb "#2ca02c"' ;;
		lttng) t='LTTng-UST discard channel + lttng-consumerd' st='lc rgb "#d62728"' ;;
		lttngb) t='LTTng-UST blocking channel (lossless) + lttng-consumerd' st='lc rgb "#ff7f0e"' ;;
		esac
		plot="$plot${plot:+, }\"$tmp/keep-$c.dat\" using 1:2 with linespoints $st lw 2 pt 7 title \"$t\""
	done
	nolt=
	[ -s "$tmp/keep-lttng.dat" ] ||
		nolt='set label 3 "LTTng-UST: no rows in this run (not installed, or make bench-lttng skipped it)" at graph 0.5, graph 0.95 center tc rgb "#d62728"'
	gnuplot <<EOF
$common
set output "$out/keep.svg"
set title "Events kept at full speed, logs on tmpfs (32-byte payload; higher is better)\n$run"
set datafile missing "?"
set xlabel "producer threads"
set ylabel "M events/s kept (over the producers' wall time; log scale)"
set xtics ("1" 1, "2" 2, "4" 4)
set xrange [0.7:4.3]
set logscale y
set yrange [1:*]
set key bottom left
$nolt
plot $plot
EOF
else
	empty "$out/keep.svg" "Events kept at full speed" "no rows of bench/keep in this run"
fi

ls "$out"/*.svg
