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

/* What the command line asks. */
struct stats_opts { int ascii, width, json; struct span_args sa; const char *path; };

/* Everything one run holds: the log, its spans, the counts and per type
 * the gaps and the chart's row; and the layout of the text report. */
struct stats {
	struct tlog l;
	struct spans *sp;
	struct counts k;
	struct tstat *ts;
	size_t known;                /* the threads the log's header knew */
	uint64_t t0, t1, rel0;       /* the trace's span; time 0 of the slowest spans */
	int name_w, cols, utf8, width;
};

/* The options into o (the filters into f); -1 to go on, else the exit status. */
static int stats_options(int argc, char **argv, struct stats_opts *o, struct evfilter *f)
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
	int c;

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
			if ((c = filter_option(f, c, optarg)) != 0)
				return c;
			break;
		case 'A': o->ascii = 1; break;
		case 'S':
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		case 'J': o->json = 1; break;
		case 'w':
			o->width = atoi(optarg);
			if (o->width < 40 || o->width > 1000)
				return usage_error("--width: '%s' is not a width of 40 to 1000", optarg);
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("which log? give a FILE (or a directory of parts, or several logs)");
	o->path = tlog_operands(argc - optind, argv + optind);
	return -1;
}

/* The counts (the log's totals, or zero to count the events the filter
 * keeps), the layout and a row per type; 0, or 1 said. */
static int stats_prepare(struct stats *s, const struct stats_opts *o, const struct evfilter *f)
{
	struct tlog *l = &s->l;
	struct counts *k = &s->k;
	char tmp[32];

	k->nev = l->nev;
	k->type = calloc(PT_NIDS, sizeof *k->type);
	k->th = calloc(l->nth + 1, sizeof *k->th);
	k->pr = calloc(l->npr + 1, sizeof *k->pr);
	k->prth = calloc(l->npr + 1, sizeof *k->prth);
	k->wait = calloc(l->nth + 1, sizeof *k->wait);
	if (!k->type || !k->th || !k->pr || !k->prth || !k->wait) {
		err_msg("out of memory");
		return 1;
	}
	if (!f->on) {
		memcpy(k->type, l->count, PT_NIDS * sizeof *k->type);
		for (size_t i = 0; i < l->nth; i++)
			k->th[i] = l->th[i].count;
	} else {
		k->nev = 0;
	}
	s->utf8 = !o->ascii && utf8_output();
	s->width = o->width ? o->width : terminal_width();
	s->t0 = l->first;
	s->t1 = l->nev ? l->last : s->t0;
	s->rel0 = s->t0;
	if (tlog_t0(l, &s->rel0)) /* time 0 of the slowest spans' starts */
		return 1;
	s->name_w = 10;
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l->count[i]) {
			int w = (int)strlen(tlog_name(l, i, tmp, sizeof tmp));
			s->name_w = w > s->name_w ? (w < 30 ? w : 30) : s->name_w;
		}
	s->cols = s->width - s->name_w - 3 > 10 ? s->width - s->name_w - 3 : 10;

	/* per type the gaps, and (for the text) the activity chart's row */
	s->ts = calloc(PT_NIDS, sizeof *s->ts);
	int rc = !s->ts;
	for (unsigned i = 0; i < PT_NIDS && !rc && !o->json; i++)
		if (l->count[i] && !(s->ts[i].act = calloc((size_t)s->cols, sizeof *s->ts[i].act)))
			rc = 1;
	if (rc)
		err_msg("out of memory");
	return rc;
}

/* One event into the counts, its type's gaps and chart, and the spans;
 * 0, or -1 (said). */
static int stats_event(struct stats *s, const struct tev *e, int filtered)
{
	struct counts *k = &s->k;
	uint64_t span_ns = s->t1 - s->t0, wns;

	if (filtered) {
		k->nev++;
		k->type[e->id]++;
		if (e->thread < s->known)
			k->th[e->thread]++;
	}
	if (e->id == PT_EXT_NOLOSS_WAIT && e->thread < s->known && tlog_wait_of(e, &wns)) {
		struct twait *wt = &k->wait[e->thread];
		wt->n++;
		wt->ns += wns;
		wt->max = wns > wt->max ? wns : wt->max;
		k->waits = 1;
	}
	struct tstat *t = &s->ts[e->id];
	int r = 0;
	if (t->seen) { /* in the log's order; an event stamped before the latest is a 0 gap */
		if (hist_add(&t->gaps, e->ts > t->last ? e->ts - t->last : 0))
			r = -1;
	}
	if (!t->seen || e->ts > t->last)
		t->last = e->ts;
	t->seen = 1;
	if (t->act && e->ts >= s->t0 && e->ts <= s->t1) { /* (a summary that lies: not charted) */
		uint64_t x = e->ts - s->t0;
		/* (x * cols / (span + 1), without overflowing 64 bits) */
		uint64_t col = span_ns ? (uint64_t)((unsigned __int128)x * (unsigned)s->cols /
		                                    (span_ns + 1)) : 0;
		t->act[col]++;
	}
	struct span_mark m;
	if (r >= 0 && spans_event(s->sp, &s->l, e, &m)) {
		err_msg("out of memory");
		r = -1;
	}
	return r;
}

/* Reads the log once, with a progress line; then the counts per process. 0, or 1. */
static int stats_read(struct stats *s, int filtered)
{
	struct tlog *l = &s->l;
	struct tev e;
	struct progress pg;
	char what[300];
	int r;

	snprintf(what, sizeof what, "reading %s", l->path);
	progress_begin(&pg, what, 0);
	s->known = l->nth;
	while ((r = tlog_next(l, &e)) > 0) {
		if ((e.n & 1023) == 0)
			progress_update(&pg, e.n);
		if ((r = stats_event(s, &e, filtered)) < 0)
			break;
	}
	spans_end(s->sp);
	pg.done = l->nev;
	progress_end(&pg);
	if (r < 0)
		return 1;
	for (size_t p = 0; p < l->npr; p++)
		for (size_t i = 0; i < s->known; i++)
			if (l->th[i].pid == l->pr[p].pid && s->k.th[i]) {
				s->k.pr[p] += s->k.th[i];
				s->k.prth[p]++;
			}
	return 0;
}

/* The text report's table of event types: count, rate, gaps and a bar. */
static void text_types(const struct stats *s, double span)
{
	const struct tlog *l = &s->l;
	const struct counts *k = &s->k;
	char tmp[32], d1[24], d2[24], d3[24], d4[24];
	uint64_t maxcount = 0;
	int name_w = s->name_w;

	for (unsigned i = 0; i < PT_NIDS; i++)
		maxcount = k->type[i] > maxcount ? k->type[i] : maxcount;
	int fixed = name_w + 1 + 7 + 1 + 9 + 4 * 9 + 2;
	int bar_w = s->width - fixed > 5 ? s->width - fixed : 5;
	printf("%-*s %7s %9s %8s %8s %8s %8s\n", name_w, "event type", "count", "rate",
	       "min gap", "med gap", "p99 gap", "max gap");
	for (unsigned i = 0; i < PT_NIDS; i++) {
		uint64_t n = k->type[i];
		const struct hist *h = &s->ts[i].gaps;
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
		       tlog_name(l, i, tmp, sizeof tmp), (unsigned long long)n, rate, d1, d2, d3, d4);
		int len = (int)((double)n * bar_w / (double)maxcount + 0.5);
		bar(len ? len : 1, s->utf8);
		putchar('\n');
	}
}

/* The text report's tables of processes and threads: count and rate
 * (and how long --no-loss held each thread). */
static void text_threads(const struct stats *s, double span)
{
	const struct tlog *l = &s->l;
	const struct counts *k = &s->k;

	printf("\n%-12s %7s %7s %9s\n", "process", "threads", "count", "rate");
	for (size_t p = 0; p < l->npr; p++) {
		char rate[24];
		if (!k->pr[p])
			continue;
		rate_text(rate, sizeof rate, k->pr[p], span);
		printf("%-12d %7u %7llu %9s\n", (int)l->pr[p].pid, k->prth[p],
		       (unsigned long long)k->pr[p], rate);
	}
	if (k->waits) /* and how long --no-loss held each */
		printf("\n%-14s %-16s %7s %9s %7s %11s\n", "pid/tid", "thread", "count", "rate",
		       "waits", "waited");
	else
		printf("\n%-14s %-16s %7s %9s\n", "pid/tid", "thread", "count", "rate");
	for (size_t p = 0; p < l->npr; p++)
		for (size_t i = 0; i < s->known; i++) {
			const struct tthread *t = &l->th[i];
			char rate[24], who[48], name[40];
			if (t->pid != l->pr[p].pid || !k->th[i])
				continue;
			rate_text(rate, sizeof rate, k->th[i], span);
			tlog_thread_id(l, (uint32_t)i, t->last, who, sizeof who, name, sizeof name, NULL);
			printf("%-14s %-16s %7llu %9s", who, t->pid ? name : "(the trace)",
			       (unsigned long long)k->th[i], rate);
			if (k->waits) {
				char wd[24];
				fmt_duration(wd, sizeof wd, k->wait[i].ns);
				printf(" %7llu %11s", (unsigned long long)k->wait[i].n,
				       k->wait[i].n ? wd : "-");
			}
			putchar('\n');
		}
}

/* The text report: the tables, the activity chart, the spans. */
static void text_out(const struct stats *s, double span)
{
	const struct tlog *l = &s->l;
	char tmp[32], d1[24], span_s[24];

	fmt_duration(span_s, sizeof span_s, s->t1 - s->t0);
	printf("%llu events over %s\n\n", (unsigned long long)s->k.nev, span_s);
	text_types(s, span);
	text_threads(s, span);
	fmt_duration(d1, sizeof d1, (s->t1 - s->t0) / (uint64_t)s->cols);
	printf("\nactivity over time (one column = %s)\n", d1);
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (s->k.type[i]) {
			printf("%-*.*s |", s->name_w, s->name_w, tlog_name(l, i, tmp, sizeof tmp));
			activity(s->ts[i].act, s->cols, s->utf8);
			printf("|\n");
		}
	spans_print(stdout, s->sp, l, s->rel0);
}

static void stats_free(struct stats *s)
{
	if (s->ts)
		for (unsigned i = 0; i < PT_NIDS; i++) {
			hist_free(&s->ts[i].gaps);
			free(s->ts[i].act);
		}
	free(s->ts);
	free(s->k.type);
	free(s->k.th);
	free(s->k.pr);
	free(s->k.prth);
	free(s->k.wait);
	spans_free(s->sp);
	tlog_free(&s->l);
}

int cmd_stats(int argc, char **argv)
{
	static struct evfilter f;
	struct stats_opts o = { .width = 0 };
	struct stats s = { .sp = NULL };
	int c;

	if ((c = stats_options(argc, argv, &o, &f)) >= 0)
		return c;
	if ((c = spans_load(&o.sa, &s.sp, &s.l, o.path, 0)) != 0)
		return c;
	tlog_warn(&s.l); /* a cut-short or damaged log: its figures are partial */
	if (filter_check(&f, &s.l)) {
		c = 1;
		goto out;
	}
	if (f.on)
		s.l.filter = &f;
	if ((c = stats_prepare(&s, &o, &f)) != 0 || (c = stats_read(&s, f.on)) != 0)
		goto out;
	double span = (double)(s.t1 - s.t0) / 1e9;
	if (o.json)
		json_out(&s.l, s.ts, span, s.sp, s.rel0, &s.k);
	else
		text_out(&s, span);
	c = fflush(stdout) == 0 ? 0 : 1;
out:
	filter_free(&f);
	stats_free(&s);
	return c;
}
