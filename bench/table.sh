#!/bin/sh
# table.sh -- the tables of a `make bench` run, in Markdown (make docs-plots).
#
#   sh bench/table.sh RESULTS.json            print them
#   sh bench/table.sh RESULTS.json FILE.md    replace what FILE.md holds
#                                             between the lines
#                                             <!-- bench:begin --> and
#                                             <!-- bench:end -->
#
# RESULTS.json is what bench/results.sh wrote (one row a line).  A row the
# run lacks is left out, and a program with no rows is named as missing.
set -u

res=${1:?usage: table.sh RESULTS.json [FILE.md]}
[ -r "$res" ] || { echo "table: $res not found: run make bench first" >&2; exit 1; }

tables() {
	awk "$(cat "$(dirname "$0")/rows.awk")"'
	function f(v, d) { return v == "" ? "—" : sprintf("%." d "f", v) }
	function mb(v) { return v == "" ? "—" : sprintf("%.1f", v) }
	function pct(a, b) { return a == "" || b == "" || b + 0 == 0 ? "—" : sprintf("%.0f (%.1f%%)", a, 100 * a / b) }
	/^ *"date":/ { gsub(/^ *"date": "|",$/, ""); date = $0 }
	/^ *"commit":/ { gsub(/^ *"commit": "|",$/, ""); commit = $0 }
	/^ *"complete":/ { complete = $0 ~ /true/ }
	/^ *"load_before":/ { gsub(/^ *"load_before": \[|\],$/, ""); lb = $0 }
	/^ *"load_after":/ { gsub(/^ *"load_after": \[|\],$/, ""); la = $0 }
	/^ *"machine":/ {
		gsub(/": /, "\":")
		nproc = num("nproc"); model = str("model"); kernel = str("kernel"); virt = str("virt")
		cs = str("clocksource")
		if (num("hypervisor") == "true") virt = virt " under a hypervisor"
	}
	/^\{"bench":/ {
		b = str("bench"); c = str("case"); seen[b] = 1
		if (b == "bench") bench[c] = $0
		else if (b == "lttng_cmp") { lt[nl++] = $0; ltc[c] = $0 }
		else if (b == "reader") rd[nr++] = $0
		else if (b == "clock") ck[nc++] = $0
		else if (b == "flush") fl[nf++] = $0
		else if (b == "paced") pc[np++] = $0
		else if (b == "keep") kp[nk++] = $0
		else if (b == "ablate") ab[na++] = $0
		else if (b == "query") qy[nq++] = $0
		else other[no++] = $0
	}
	END {
		printf "Run: %s, commit %s; %s, %s CPUs, %s, kernel %s, clocksource %s; load average (1, 5, 15 min) %s before, %s after%s.\n\n",
		       date, commit, model, nproc, virt, kernel, cs, lb, la, (complete ? "" : "; **the run did not complete**")

		print "### Recording (ns per event, 32-byte payload, medians)\n"
		if (nl) {
			print "| case | posixtrace | LTTng-UST | ratio | lost, posixtrace | lost, LTTng-UST |"
			print "|---|---:|---:|---:|---:|---:|"
			for (i = 0; i < nl; i++) {
				$0 = lt[i]; c = str("case")
				if (c == "baseline") { base = $0; continue }
				p = num("posixtrace_ns"); l = num("lttng_ns"); e = num("emitted")
				printf "| %s | %s | %s | %s | %s | %s |\n", c, f(p, 2), f(l, 2),
				       (p != "" && l + 0 > 0 ? sprintf("%.3f", p / l) : "—"),
				       (e == "" ? "" : pct(num("posixtrace_lost"), e)), (e == "" ? "" : pct(num("lttng_lost"), e))
			}
			if (base != "") {
				$0 = base
				printf "\nIn the same run: `rdtsc` alone %s ns, `clock_gettime(CLOCK_MONOTONIC)` %s ns, the loop calling an empty function %s ns.\n",
				       f(num("rdtsc_ns"), 2), f(num("clock_gettime_ns"), 2), f(num("empty_function_ns"), 2)
			}
		} else
			print "No LTTng-UST rows in this run (`make bench-lttng` printed why it skipped)."
		if (seen["bench"]) {
			print "\n`bench/bench` (posixtrace alone):\n"
			print "| case | ns/event |"
			print "|---|---:|"
			n = split("no stream|filtered out|no stream, called|empty function|rdtsc|floor|loop 1 thread|loop 2 threads each|loop 2 threads aggregate|loop + trygetnext reader|loop paced|loop paced + getnext reader", names, "|")
			for (i = 1; i <= n; i++)
				if (names[i] in bench) { $0 = bench[names[i]]; printf "| %s | %s |\n", names[i], f(num("ns_per_event"), 2) }
			if ("floor vs recorder" in bench) { $0 = bench["floor vs recorder"]; printf "| recorder − floor (median of interleaved pairs) | %+.2f |\n", num("above_floor_ns") }
			if ("loop 2 threads aggregate" in bench) { $0 = bench["loop 2 threads aggregate"]; printf "\n2 threads / 1 thread: %s (the floor: %s); by each thread CPU time %s (the floor: %s) (two CPU-bound threads of plain arithmetic: %s). ", f(num("ratio_to_1_thread"), 2), f(num("floor_ratio"), 2), f(num("cpu_ratio"), 2), f(num("floor_cpu_ratio"), 2), f(num("machine_scaling"), 2) }
			if ("stream reader getnext" in bench) { $0 = bench["stream reader getnext"]; printf "getnext on a filled stream: %s M events/s. ", f(num("events_per_s") / 1e6, 1) }
			if (na) {
				printf "\n`bench/ablate`, each step of the recording path added to the floor (ns, median of interleaved pairs; a `+` step adds to the ones before it; `recorder` is the library):"
				for (i = 0; i < na; i++) { $0 = ab[i]; printf " %s %+.2f%s%s", str("case"), num("difference_ns"), (num("added_to_floor") + 0 ? "" : " (over all)"), (i + 1 < na ? ";" : ".") }
				print ""
			}
			if ("stream bytes per event" in bench) { $0 = bench["stream bytes per event"]; printf "A LOOP stream keeps one 8-byte event per %s bytes.", f(num("bytes"), 1) }
			print ""
		}

		print "\n### Reading and export (each command on a generated log, then on one `record` made; wall time, peak RSS)\n"
		if (nr) {
			print "| events in the trace | command | s | M events/s | peak RSS (MB) | output B/event |"
			print "|---:|---|---:|---:|---:|---:|"
			for (i = 0; i < nr; i++) {
				$0 = rd[i]; c = str("case")
				if (c == "log") { printf "| %.0f | (the log itself, %s B/event) | | | | |\n", num("trace_events"), f(num("bytes_per_event"), 1); continue }
				if (c == "recorded: log") { printf "| %.0f | (a log `record --no-loss` made of one busy thread, %s B/event: the rows \"recorded\") | | | | |\n", num("trace_events"), f(num("bytes_per_event"), 1); continue }
				r = num("events_per_s")
				printf "| %.0f | %s | %s | %s | %s | %s |\n", num("trace_events"), c, f(num("s"), 2),
				       (r == "" ? "—" : sprintf("%.2f", r / 1e6)), mb(num("rss_mb")), f(num("bytes_per_event"), 1)
			}
		} else
			print "No rows of `bench/reader` in this run."

		print "\n### SQL over a log (`bench/query`: each statement from `posixtrace query` and from Python'"'"'s sqlite3 with the extension; wall and CPU time, peak RSS)\n"
		if (nq) {
			print "| events in the log | statement | s | CPU s | M events/s | peak RSS (MB) | answer = stats |"
			print "|---:|---|---:|---:|---:|---:|---|"
			for (i = 0; i < nq; i++) {
				$0 = qy[i]; r = num("events_per_s"); eq = num("equal_stats")
				printf "| %.0f | %s | %s | %s | %s | %s | %s |\n", num("trace_events"), str("case"), f(num("s"), 2),
				       f(num("cpu_s"), 2), (r == "" ? "—" : sprintf("%.2f", r / 1e6)), mb(num("rss_mb")),
				       (eq == "" ? "" : eq + 0 ? "yes" : "**no**")
			}
			print "\nThe statements: count `SELECT count(*) FROM event`; group `SELECT name, count(*) FROM event GROUP BY name`; quantiles p50 and p99 of the span req over its slices; slowest the 100 slowest slices with their thread names; range `count(*)` over 1% of the log'"'"'s time; slice range p50 and p99 of each span name over the slices that begin in 1% of the log'"'"'s time. `stats --json` is the reference the answers are compared with."
		} else
			print "No rows of `bench/query` in this run (a build without SQLite has none)."

		print "\n### Writing a log (FLUSH stream, log on tmpfs)\n"
		if (nf) {
			print "| producer | ns/event | lost | log MB/s | flusher user ns/event |"
			print "|---|---:|---:|---:|---:|"
			for (i = 0; i < nf; i++) {
				$0 = fl[i]; c = str("case")
				if (c == "machine write") { mw = $0; continue }
				if (c == "flusher alone") { fa = $0; continue }
				if (c == "keep up") { ku = $0; continue }
				printf "| %s | %s | %s | %s | %s |\n", c, f(num("ns_per_event"), 2), pct(num("lost"), num("recorded")),
				       f(num("log_mb_s"), 0), f(num("flusher_user_ns"), 1)
			}
			if (mw != "") { $0 = mw; printf "\nThe machine, same run: a new file %s MB/s, at once after %s MB/s; writing what another CPU has just written %s MB/s (%s warm).", f(num("new_file_mb_s"), 0), f(num("again_mb_s"), 0), f(num("behind_cold_mb_s"), 0), f(num("behind_warm_mb_s"), 0) }
			if (fa != "") { $0 = fa; printf " The flusher alone: %s ns/event, %s MB/s (4 writers: %s ns/event).", f(num("ns_per_event"), 1), f(num("log_mb_s"), 0), f(num("ns_per_event_4_writers"), 1) }
			if (ku != "") { $0 = ku; printf " A consumer that keeps up (log on /dev/null): %s ns/event against the flight recorder'"'"'s %s (median).", f(num("devnull_median_ns"), 2), f(num("loop_median_ns"), 2) }
			print ""
		} else
			print "No rows of `bench/flush` in this run."
		if (np) {
			print "\n`posixtrace record` of paced producers (`bench/paced`):\n"
			print "| producer | events (M) | lost | elapsed / paced | flusher CPU ns/event | log MB/s |"
			print "|---|---:|---:|---:|---:|---:|"
			for (i = 0; i < np; i++) {
				$0 = pc[i]; c = str("case")
				if (c == "machine write") continue
				ps = num("paced_s")
				printf "| %s | %.1f | %s | %s | %s | %s |\n", c, num("events") / 1e6, pct(num("lost"), num("events")),
				       (ps == "" ? "—" : sprintf("%.2f", num("elapsed_s") / ps)), f(num("flusher_ns"), 1), f(num("log_mb_s"), 0)
			}
		}

		if (nk) {
			print "\nEvents kept at full speed, 20 M events split over the threads (`bench/keep`; kept M/s over the producers'"'"' wall time):\n"
			print "| case | threads | kept M/s | lost | producers M/s (wall) | producer CPU ns/event | writer CPU ns/event kept | log MB/s |"
			print "|---|---:|---:|---:|---:|---:|---:|---:|"
			split("flight|record|noloss|lttng|lttngb", kord, "|")
			split("flight recorder (LOOP, no log)|posixtrace record|posixtrace record --no-loss|LTTng-UST discard channel + consumerd|LTTng-UST blocking channel (lossless) + consumerd", klab, "|")
			for (t = 1; t <= 4; t *= 2)
				for (k = 1; k <= 5; k++)
					for (i = 0; i < nk; i++) {
						$0 = kp[i]
						if (str("case") != kord[k] "/" t) continue
						lp = num("lost_pct"); kps = num("kept_per_s")
						printf "| %s | %d | %s | %s | %s | %s | %s | %s |\n", klab[k], t,
						       (k == 1 || kps == "" ? "—" : sprintf("%.2f", kps / 1e6)),
						       (lp == "" ? "—" : sprintf("%.2f%%", lp)), f(num("made_per_s") / 1e6, 2),
						       f(num("producer_cpu_ns"), 1), f(num("writer_cpu_ns"), 1), f(num("log_mb_s"), 0)
					}
			for (i = 0; i < nk; i++) {
				$0 = kp[i]
				if (str("case") == "machine write")
					printf "\nThe machine, same run: a new file %s MB/s; writing what another CPU has just written %s MB/s; the copy alone (pages the file has) %s MB/s.", f(num("new_file_mb_s"), 0), f(num("behind_mb_s"), 0), f(num("rewrite_mb_s"), 0)
				if (str("case") == "noloss vs flight")
					printf " `--no-loss`, 1 thread, against the flight recorder: %sx by wall, %sx by CPU time.", f(num("wall_1"), 2), f(num("cpu_1"), 2)
			}
			print ""
		}

		print "\n### Timestamps under load (ns: a mark'"'"'s distance to the middle of its CLOCK_REALTIME bracket, over the brackets at most 1 µs wide)\n"
		if (nc) {
			print "| read | marks | in brackets ≤ 1 µs | median | 99th percentile | 99.9th | worst | worst outside any bracket | median bracket |"
			print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
			for (i = 0; i < nc; i++) {
				$0 = ck[i]
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", str("case"), f(num("marks"), 0), f(num("narrow"), 0),
				       f(num("narrow_median_ns"), 0), f(num("narrow_p99_ns"), 0), f(num("narrow_p999_ns"), 0),
				       f(num("worst_narrow_ns"), 0), f(num("worst_outside_ns"), 0), f(num("median_bracket_ns"), 0)
			}
		} else
			print "No rows of `bench/clock` in this run."

		if (no) {
			print "\n### Other costs\n"
			print "| program | case | figures |"
			print "|---|---|---|"
			for (i = 0; i < no; i++) {
				$0 = other[i]; line = $0
				sub(/^\{"bench":"[^"]*","case":"[^"]*","load1":[^,}]*,?/, "", line); sub(/\},?$/, "", line)
				nkv = split(line, kv, ","); figs = ""
				for (k = 1; k <= nkv; k++) {
					split(kv[k], pr, ":"); key = pr[1]; v = pr[2]; gsub(/"/, "", key)
					if (v != "null")
						v = (v + 0 >= 1000 || v + 0 <= -1000) ? sprintf("%.0f", v) : sprintf("%.3g", v)
					figs = figs (figs == "" ? "" : ", ") key " " v
				}
				printf "| %s | %s | %s |\n", str("bench"), str("case"), figs
			}
		}
	}' "$res"
}

if [ $# -lt 2 ]; then
	tables
	exit
fi
doc=$2
if ! grep -q '^<!-- bench:begin' "$doc" || ! grep -q '^<!-- bench:end' "$doc"; then
	echo "table: $doc has no <!-- bench:begin --> ... <!-- bench:end --> lines" >&2
	exit 1
fi
tables >"$doc.table" || exit 1
awk -v t="$doc.table" '
	/^<!-- bench:begin/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
	/^<!-- bench:end/ { skip = 0 }
	!skip' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
rm -f "$doc.table"
