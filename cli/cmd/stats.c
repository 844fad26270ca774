/*
 * stats.c -- `posixtrace stats FILE`: per event type the count, the rate
 * over the trace, the gaps between consecutive events of the type
 * (smallest, median, 99th percentile, largest, from a histogram: hist.c)
 * and a bar of the count; then per process and per thread the count and
 * rate; then when each type happened, one column per slice of the trace.
 * Bars fill the terminal's width (COLUMNS, else 80 when not a terminal);
 * block characters on a UTF-8 locale, '#' otherwise (or with --ascii).
 * --json: the same figures for scripts (docs/posixtrace.1, STATS JSON).
 *
 * The log is read as a stream, once: the totals (and the trace's span,
 * which the activity chart needs before its first event) come first
 * (tlog_load: the log's summary, or the count the library made when it
 * opened the log), then the events give the gaps and the chart.  Memory: a histogram per
 * event type and a row of the chart per type, whatever the length.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace stats LOG... [--ascii] [--width N] [--json] [--span ...] [FILTERS]\n"
"\n"
"LOG: a log file; or a directory, whose *.ptlog files (the parts of one\n"
"recording, as record --rotate cuts it) are read as one trace, in the\n"
"order of their first events; or several logs, read the same way.\n"
"\n"
"Per event type of LOG: count, rate (events per second over the\n"
"whole trace), min / median / 99th percentile / max gap between\n"
"consecutive events of that type, and a bar proportional to the count;\n"
"per process and per thread (PID/TID and name, as show prints them): count\n"
"and rate, and with --no-loss waits how many and how long; then an\n"
"activity chart: how many events of each type fell in each slice of the\n"
"trace.\n"
"Spans (NAME/begin and NAME/end events, or --span): count, incomplete,\n"
"total, mean, p50/p90/p99/p99.9/max duration, the 10 slowest (start and\n"
"thread, for show --from) and each one's share of its threads' time.\n"
"\n"
"      --ascii      '#' bars and ' .:-=+*#%@' shades, whatever the locale\n"
"      --json       the same figures as one JSON object (see posixtrace(1))\n"
"  -w, --width N    the width to fill (default: the terminal's, or 80)\n"
"  -h, --help       this help\n"
"The slowest spans' starts count from time 0 (--t0).  With filters, every\n"
"figure is of the events they keep (spans too are made of those).\n";

/* A duration in 3 significant digits: "927 us", "1.21 ms". */
static void short_duration(char *buf, size_t cap, uint64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	int u = 0;
	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, cap, "%.3g %s", v, unit[u]);
}

static void bar(int n, int utf8)
{
	for (int i = 0; i < n; i++)
		fputs(utf8 ? "\xe2\x96\x88" : "#", stdout);
}

/* One row of the activity chart: a shade per slice. */
static void activity(const uint64_t *h, int cols, int utf8)
{
	static const char *const blocks[] = { " ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
	                                      "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
	                                      "\xe2\x96\x87", "\xe2\x96\x88" };
	static const char ramp[] = " .:-=+*#%@";
	uint64_t max = 0;

	for (int c = 0; c < cols; c++)
		max = h[c] > max ? h[c] : max;
	for (int c = 0; c < cols; c++) {
		if (utf8) {
			int k = h[c] ? 1 + (int)((h[c] - 1) * 8 / max) : 0;
			fputs(blocks[k > 8 ? 8 : k], stdout);
		} else {
			int k = h[c] ? 1 + (int)((h[c] - 1) * 9 / max) : 0;
			putchar(ramp[k > 9 ? 9 : k]);
		}
	}
}

static void rate_text(char *rate, size_t cap, uint64_t n, double span)
{
	double r = span > 0 ? (double)n / span : 0;
	if (r >= 1e6)
		snprintf(rate, cap, "%.2fM/s", r / 1e6);
	else if (r >= 1e4)
		snprintf(rate, cap, "%.1fk/s", r / 1e3);
	else if (span > 0)
		snprintf(rate, cap, "%.1f/s", r);
	else
		snprintf(rate, cap, "-");
}

/* per type: the gaps and the last timestamp seen */
struct tstat { struct hist gaps; uint64_t last; int seen; uint64_t *act; };

static void json_gaps(const struct hist *h)
{
	if (!h->n) {
		fputs("null", stdout);
		return;
	}
	printf("{\"n\":%llu,\"min\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,"
	       "\"p999\":%llu,\"max\":%llu,\"mean\":%.1f}",
	       (unsigned long long)h->n, (unsigned long long)h->min,
	       (unsigned long long)hist_quantile(h, 0.5), (unsigned long long)hist_quantile(h, 0.9),
	       (unsigned long long)hist_quantile(h, 0.99),
	       (unsigned long long)hist_quantile(h, 0.999), (unsigned long long)h->max,
	       h->sum / (double)h->n);
}

/* What the figures count: the log's totals, or with filters the events kept. */
struct counts { uint64_t nev, *type, *th, *pr; unsigned *prth; struct twait *wait; int waits; };

static void json_out(const struct tlog *l, struct tstat *ts, double span, const struct spans *sp,
                     uint64_t t0, const struct counts *k)
{
	char j[600], tmp[32], lost[240];

	json_str(j, sizeof j, l->path);
	tlog_loss_text(l, lost, sizeof lost);
	printf("{\"log\":%s,\"events\":%llu,\"first_ns\":%llu,\"last_ns\":%llu,"
	       "\"span_ns\":%llu,\"t0_ns\":%llu,", j, (unsigned long long)k->nev,
	       (unsigned long long)l->first, (unsigned long long)(l->nev ? l->last : l->first),
	       (unsigned long long)(l->nev ? l->last - l->first : 0), (unsigned long long)t0);
	json_str(j, sizeof j, lost);
	printf("\"lost\":{\"events\":%llu,\"exact\":%s,\"gaps\":%llu,\"text\":%s},"
	       "\"cut_short\":%s,\"damaged\":%llu,\n\"types\":[",
	       (unsigned long long)tlog_lost_total(l), l->lost_final ? "true" : "false",
	       (unsigned long long)l->overflows, j, l->unfinished ? "true" : "false",
	       (unsigned long long)l->damaged);
	int first = 1;
	for (unsigned i = 0; i < PT_NIDS; i++) {
		if (!k->type[i])
			continue;
		json_str(j, sizeof j, tlog_name(l, i, tmp, sizeof tmp));
		printf("%s\n{\"id\":%u,\"name\":%s,\"count\":%llu,\"rate\":%.3f,\"gap_ns\":",
		       first ? "" : ",", i, j, (unsigned long long)k->type[i],
		       span > 0 ? (double)k->type[i] / span : 0.0);
		json_gaps(&ts[i].gaps);
		putchar('}');
		first = 0;
	}
	fputs("],\n\"processes\":[", stdout);
	first = 1;
	for (size_t p = 0; p < l->npr; p++) {
		if (!k->pr[p])
			continue;
		printf("%s\n{\"pid\":%d,\"threads\":%u,\"count\":%llu,\"rate\":%.3f}",
		       first ? "" : ",", (int)l->pr[p].pid, k->prth[p], (unsigned long long)k->pr[p],
		       span > 0 ? (double)k->pr[p] / span : 0.0);
		first = 0;
	}
	fputs("],\n\"threads\":[", stdout);
	first = 1;
	for (size_t p = 0; p < l->npr; p++)
		for (size_t i = 0; i < l->nth; i++) {
			const struct tthread *t = &l->th[i];
			if (t->pid != l->pr[p].pid || !k->th[i])
				continue;
			printf("%s\n{", first ? "" : ",");
			json_thread(stdout, l, (uint32_t)i, t->last);
			printf(",\"count\":%llu,\"rate\":%.3f,\"noloss_waits\":%llu,"
			       "\"noloss_wait_ns\":%llu}", (unsigned long long)k->th[i],
			       span > 0 ? (double)k->th[i] / span : 0.0,
			       (unsigned long long)k->wait[i].n, (unsigned long long)k->wait[i].ns);
			first = 0;
		}
	fputs("],\n", stdout);
	spans_json(stdout, sp, l, t0);
	fputs("}\n", stdout);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "ascii", no_argument, NULL, 'A' },
		{ "width", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'J' },
		{ "span", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, ascii = 0, width = 0, json = 0;
	static struct evfilter f;
	struct span_args sa = { .n = 0 };
	struct spans *sp;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hw:", lopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(help, stdout);
			fputs(filter_help, stdout);
			fputs(spans_help, stdout);
			front_help(stdout, 19, 1);
			return 0;
		case FILT_PID: case FILT_THREAD: case FILT_TID: case FILT_NAME: case FILT_TYPE:
		case FILT_EXCLUDE: case FILT_WHERE:
			if ((c = filter_option(&f, c, optarg)) != 0)
				return c;
			break;
		case 'A': ascii = 1; break;
		case 'S':
			if (span_arg(&sa, optarg))
				return EXIT_USAGE;
			break;
		case 'J': json = 1; break;
		case 'w':
			width = atoi(optarg);
			if (width < 40 || width > 1000)
				return usage_error("--width: '%s' is not a width of 40 to 1000", optarg);
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("which log? give a FILE (or a directory of parts, or several logs)");
	const char *path = tlog_operands(argc - optind, argv + optind);

	struct tlog l;
	if ((c = spans_load(&sa, &sp, &l, path, 0)) != 0)
		return c;
	tlog_warn(&l); /* a cut-short or damaged log: its figures are partial */
	if (filter_check(&f, &l)) {
		spans_free(sp);
		tlog_free(&l);
		return 1;
	}
	if (f.on)
		l.filter = &f;
	/* the counts: the totals, or counted as the events come */
	struct counts k = { .nev = l.nev };
	k.type = calloc(PT_NIDS, sizeof *k.type);
	k.th = calloc(l.nth + 1, sizeof *k.th);
	k.pr = calloc(l.npr + 1, sizeof *k.pr);
	k.prth = calloc(l.npr + 1, sizeof *k.prth);
	k.wait = calloc(l.nth + 1, sizeof *k.wait);
	if (!k.type || !k.th || !k.pr || !k.prth || !k.wait) {
		err_msg("out of memory");
		spans_free(sp);
		tlog_free(&l);
		return 1;
	}
	if (!f.on) {
		memcpy(k.type, l.count, PT_NIDS * sizeof *k.type);
		for (size_t i = 0; i < l.nth; i++)
			k.th[i] = l.th[i].count;
	} else {
		k.nev = 0;
	}
	int utf8 = !ascii && utf8_output();
	if (!width)
		width = terminal_width();

	uint64_t t0 = l.first, t1 = l.nev ? l.last : t0, maxcount = 0, rel0 = t0;
	if (tlog_t0(&l, &rel0)) { /* time 0 of the slowest spans' starts */
		spans_free(sp);
		tlog_free(&l);
		return 1;
	}
	int name_w = 10;
	char tmp[32], d1[24], d2[24], d3[24], d4[24], span_s[24];
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l.count[i]) {
			int w = (int)strlen(tlog_name(&l, i, tmp, sizeof tmp));
			name_w = w > name_w ? (w < 30 ? w : 30) : name_w;
			maxcount = l.count[i] > maxcount ? l.count[i] : maxcount;
		}
	int cols = width - name_w - 3 > 10 ? width - name_w - 3 : 10;

	/* the events: gaps per type, and the activity chart */
	struct tstat *ts = calloc(PT_NIDS, sizeof *ts);
	int rc = !ts;
	for (unsigned i = 0; i < PT_NIDS && !rc && !json; i++)
		if (l.count[i] && !(ts[i].act = calloc((size_t)cols, sizeof *ts[i].act)))
			rc = 1;
	if (rc) {
		err_msg("out of memory");
		tlog_free(&l);
		return 1;
	}
	struct tev e;
	struct progress pg;
	char what[300];
	int r;
	uint64_t span_ns = t1 - t0;
	snprintf(what, sizeof what, "reading %s", l.path);
	progress_begin(&pg, what, 0);
	size_t known = l.nth;
	while ((r = tlog_next(&l, &e)) > 0) {
		if ((e.n & 1023) == 0)
			progress_update(&pg, e.n);
		if (f.on) {
			k.nev++;
			k.type[e.id]++;
			if (e.thread < known)
				k.th[e.thread]++;
		}
		uint64_t wns;
		if (e.id == PT_EXT_NOLOSS_WAIT && e.thread < known && tlog_wait_of(&e, &wns)) {
			struct twait *wt = &k.wait[e.thread];
			wt->n++;
			wt->ns += wns;
			wt->max = wns > wt->max ? wns : wt->max;
			k.waits = 1;
		}
		struct tstat *t = &ts[e.id];
		if (t->seen) { /* in the log's order; an event stamped before the latest is a 0 gap */
			if (hist_add(&t->gaps, e.ts > t->last ? e.ts - t->last : 0))
				r = -1;
		}
		if (!t->seen || e.ts > t->last)
			t->last = e.ts;
		t->seen = 1;
		if (t->act && e.ts >= t0 && e.ts <= t1) { /* (a summary that lies: not charted) */
			uint64_t x = e.ts - t0;
			/* (x * cols / (span + 1), without overflowing 64 bits) */
			uint64_t col = span_ns ? (uint64_t)((unsigned __int128)x * (unsigned)cols /
			                                    (span_ns + 1)) : 0;
			t->act[col]++;
		}
		struct span_mark m;
		if (r >= 0 && spans_event(sp, &l, &e, &m)) {
			err_msg("out of memory");
			r = -1;
		}
		if (r < 0)
			break;
	}
	spans_end(sp);
	pg.done = l.nev;
	progress_end(&pg);
	if (r < 0) {
		spans_free(sp);
		tlog_free(&l);
		return 1;
	}
	for (size_t p = 0; p < l.npr; p++)
		for (size_t i = 0; i < known; i++)
			if (l.th[i].pid == l.pr[p].pid && k.th[i]) {
				k.pr[p] += k.th[i];
				k.prth[p]++;
			}
	maxcount = 0;
	for (unsigned i = 0; i < PT_NIDS; i++)
		maxcount = k.type[i] > maxcount ? k.type[i] : maxcount;
	double span = (double)(t1 - t0) / 1e9;
	if (json) {
		json_out(&l, ts, span, sp, rel0, &k);
	} else {
		fmt_duration(span_s, sizeof span_s, t1 - t0);
		printf("%llu events over %s\n\n", (unsigned long long)k.nev, span_s);
		int fixed = name_w + 1 + 7 + 1 + 9 + 4 * 9 + 2;
		int bar_w = width - fixed > 5 ? width - fixed : 5;
		printf("%-*s %7s %9s %8s %8s %8s %8s\n", name_w, "event type", "count", "rate",
		       "min gap", "med gap", "p99 gap", "max gap");
		for (unsigned i = 0; i < PT_NIDS; i++) {
			uint64_t n = k.type[i];
			const struct hist *h = &ts[i].gaps;
			if (!n)
				continue;
			char rate[24];
			rate_text(rate, sizeof rate, n, span);
			if (h->n) {
				short_duration(d1, sizeof d1, h->min);
				short_duration(d2, sizeof d2, hist_quantile(h, 0.5));
				short_duration(d3, sizeof d3, hist_quantile(h, 0.99));
				short_duration(d4, sizeof d4, h->max);
			} else {
				strcpy(d1, "-");
				strcpy(d2, "-");
				strcpy(d3, "-");
				strcpy(d4, "-");
			}
			printf("%-*.*s %7llu %9s %8s %8s %8s %8s  ", name_w, name_w,
			       tlog_name(&l, i, tmp, sizeof tmp), (unsigned long long)n, rate, d1, d2, d3,
			       d4);
			int len = (int)((double)n * bar_w / (double)maxcount + 0.5);
			bar(len ? len : 1, utf8);
			putchar('\n');
		}
		printf("\n%-12s %7s %7s %9s\n", "process", "threads", "count", "rate");
		for (size_t p = 0; p < l.npr; p++) {
			char rate[24];
			if (!k.pr[p])
				continue;
			rate_text(rate, sizeof rate, k.pr[p], span);
			printf("%-12d %7u %7llu %9s\n", (int)l.pr[p].pid, k.prth[p],
			       (unsigned long long)k.pr[p], rate);
		}
		if (k.waits) /* and how long --no-loss held each */
			printf("\n%-14s %-16s %7s %9s %7s %11s\n", "pid/tid", "thread", "count", "rate",
			       "waits", "waited");
		else
			printf("\n%-14s %-16s %7s %9s\n", "pid/tid", "thread", "count", "rate");
		for (size_t p = 0; p < l.npr; p++)
			for (size_t i = 0; i < known; i++) {
				const struct tthread *t = &l.th[i];
				char rate[24], who[48], name[40];
				if (t->pid != l.pr[p].pid || !k.th[i])
					continue;
				rate_text(rate, sizeof rate, k.th[i], span);
				tlog_thread_id(&l, (uint32_t)i, t->last, who, sizeof who, name, sizeof name,
				               NULL);
				printf("%-14s %-16s %7llu %9s", who, t->pid ? name : "(the trace)",
				       (unsigned long long)k.th[i], rate);
				if (k.waits) {
					char wd[24];
					fmt_duration(wd, sizeof wd, k.wait[i].ns);
					printf(" %7llu %11s", (unsigned long long)k.wait[i].n,
					       k.wait[i].n ? wd : "-");
				}
				putchar('\n');
			}
		fmt_duration(d1, sizeof d1, (t1 - t0) / (uint64_t)cols);
		printf("\nactivity over time (one column = %s)\n", d1);
		for (unsigned i = 0; i < PT_NIDS; i++)
			if (k.type[i]) {
				printf("%-*.*s |", name_w, name_w, tlog_name(&l, i, tmp, sizeof tmp));
				activity(ts[i].act, cols, utf8);
				printf("|\n");
			}
		spans_print(stdout, sp, &l, rel0);
	}
	for (unsigned i = 0; i < PT_NIDS; i++) {
		hist_free(&ts[i].gaps);
		free(ts[i].act);
	}
	free(ts);
	free(k.type);
	free(k.th);
	free(k.pr);
	free(k.prth);
	free(k.wait);
	filter_free(&f);
	spans_free(sp);
	tlog_free(&l);
	return fflush(stdout) == 0 ? 0 : 1;
}
