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
 * The report itself, text or JSON: cli/write/stats_report.c.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace stats LOG... [--ascii] [--width N] [--rows N] [--json] [--span ...] [FILTERS]\n"
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
"      --rows N     the processes and threads tables show the N with the\n"
"                   most events (default 50; 0: every one), then how many\n"
"                   more and their events (--json: every one)\n"
"  -h, --help       this help\n"
"The slowest spans' starts count from time 0 (--t0).  With filters, every\n"
"figure is of the events they keep (spans too are made of those).\n";

/* What the command line asks. */
struct stats_opts { int ascii, width, json; unsigned rows; struct span_args sa; const char *path; };

/* The options into o (the filters into f); -1 to go on, else the exit status. */
static int stats_options(int argc, char **argv, struct stats_opts *o, struct evfilter *f)
{
	static const struct option lopts[] = {
		{ "ascii", no_argument, NULL, 'A' },
		{ "width", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'J' },
		{ "rows", required_argument, NULL, 'R' },
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
		case 'R':
			if (parse_rows(optarg, &o->rows))
				return usage_error("--rows: '%s' is not a count of rows (0: all)", optarg);
			break;
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
	struct stats_counts *k = &s->k;
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
	s->rows = o->rows;
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

/* The least x (an offset from t0) in column c: x * cols / (span + 1) >= c
 * from it on */
static uint64_t col_start(const struct stats *s, uint64_t c, uint64_t span_ns)
{
	unsigned __int128 v = (unsigned __int128)c * (span_ns + 1);

	return (uint64_t)((v + (unsigned)s->cols - 1) / (unsigned)s->cols);
}

/* The chart's column of x = ts - t0 (x <= span_ns), x * cols / (span + 1):
 * the last event's column as a rule (the events come in time order), a
 * division of 128 bits only when it moves (one an event was 4% of stats). */
static uint64_t chart_col(struct stats *s, uint64_t x, uint64_t span_ns)
{
	if (x >= s->col_lo && x < s->col_hi)
		return s->col;
	s->col = (uint64_t)((unsigned __int128)x * (unsigned)s->cols / (span_ns + 1));
	s->col_lo = col_start(s, s->col, span_ns);
	s->col_hi = col_start(s, s->col + 1, span_ns);
	return s->col;
}

/* One event into the counts, its type's gaps and chart, and the spans;
 * 0, or -1 (said). */
static int stats_event(struct stats *s, const struct tev *e, int filtered)
{
	struct stats_counts *k = &s->k;
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
	struct stats_type *t = &s->ts[e->id];
	int r = 0;
	if (t->seen) { /* in the log's order; an event stamped before the latest is a 0 gap */
		if (hist_add(&t->gaps, e->ts > t->last ? e->ts - t->last : 0))
			r = -1;
	}
	if (!t->seen || e->ts > t->last)
		t->last = e->ts;
	t->seen = 1;
	if (t->act && e->ts >= s->t0 && e->ts <= s->t1) { /* (a summary that lies: not charted) */
		t->act[span_ns ? chart_col(s, e->ts - s->t0, span_ns) : 0]++;
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
	for (size_t i = 0; i < s->known; i++) { /* (to its process: l->th[i].proc) */
		uint32_t p = l->th[i].proc;
		if (p < l->npr && l->pr[p].pid == l->th[i].pid && s->k.th[i]) {
			s->k.pr[p] += s->k.th[i];
			s->k.prth[p]++;
		}
	}
	return 0;
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

int cmd_stats(int argc, char **argv, const struct tlog_front *front)
{
	static struct evfilter f;
	struct stats_opts o = { .width = 0, .rows = ROWS_DEFAULT };
	struct stats s = { .sp = NULL };
	int c;

	if ((c = stats_options(argc, argv, &o, &f)) >= 0)
		return c;
	if ((c = spans_load(&o.sa, &s.sp, &s.l, o.path, 0, front)) != 0)
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
	if (o.json)
		stats_json(&s);
	else
		stats_print(&s);
	c = fflush(stdout) == 0 ? 0 : 1;
out:
	filter_free(&f);
	stats_free(&s);
	return c;
}

