/*
 * stats.c -- `posixtrace stats FILE`: per event type the count, the rate
 * over the trace, the smallest, median and largest gap between two
 * consecutive events of the type, and a bar of the count; then when each
 * type happened, one column per slice of the trace.  Bars fill the
 * terminal's width (COLUMNS, else 80 when not a terminal); block
 * characters on a UTF-8 locale, '#' otherwise (or with --ascii).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char help[] =
"usage: posixtrace stats FILE [--ascii] [--width N]\n"
"\n"
"Per event type of the log FILE: count, rate (events per second over the\n"
"whole trace), min / median / max gap between consecutive events of that\n"
"type, and a bar proportional to the count; then an activity chart: how\n"
"many events of each type fell in each slice of the trace.\n"
"\n"
"      --ascii      '#' bars and ' .:-=+*#%@' shades, whatever the locale\n"
"  -w, --width N    the width to fill (default: the terminal's, or 80)\n"
"  -h, --help       this help\n";

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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void bar(int n, int utf8)
{
	for (int i = 0; i < n; i++)
		fputs(utf8 ? "\xe2\x96\x88" : "#", stdout);
}

/* One row of the activity chart: a shade per slice. */
static void activity(const uint64_t *ts, size_t n, uint64_t t0, uint64_t span, int cols,
                     int utf8)
{
	static const char *const blocks[] = { " ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
	                                      "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
	                                      "\xe2\x96\x87", "\xe2\x96\x88" };
	static const char ramp[] = " .:-=+*#%@";
	uint64_t *h = calloc((size_t)cols, sizeof *h), max = 0;

	if (!h)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = span ? (ts[i] - t0) * (uint64_t)cols / (span + 1) : 0;
		if (++h[c] > max)
			max = h[c];
	}
	for (int c = 0; c < cols; c++) {
		if (utf8) {
			int k = h[c] ? 1 + (int)((h[c] - 1) * 8 / max) : 0;
			fputs(blocks[k > 8 ? 8 : k], stdout);
		} else {
			int k = h[c] ? 1 + (int)((h[c] - 1) * 9 / max) : 0;
			putchar(ramp[k > 9 ? 9 : k]);
		}
	}
	free(h);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "ascii", no_argument, NULL, 'A' },
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ascii = 0, width = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hw:", lopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(help, stdout); return 0;
		case 'A': ascii = 1; break;
		case 'w':
			width = atoi(optarg);
			if (width < 40 || width > 1000)
				return usage_error("--width: '%s' is not a width of 40 to 1000", optarg);
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "which log? give a FILE" : "one FILE at a time");

	struct tlog l;
	if (tlog_load(&l, argv[optind]))
		return 1;
	tlog_warn(&l); /* a cut-short or damaged log: its figures are partial */
	int utf8 = !ascii && utf8_output();
	if (!width)
		width = terminal_width();

	uint64_t t0 = l.nev ? l.ev[0].ts : 0, t1 = t0, maxcount = 0;
	for (size_t i = 0; i < l.nev; i++) {
		t0 = l.ev[i].ts < t0 ? l.ev[i].ts : t0;
		t1 = l.ev[i].ts > t1 ? l.ev[i].ts : t1;
	}
	/* each type's timestamps, sorted, side by side in one array */
	size_t start[PT_NIDS + 1], fill[PT_NIDS];
	start[0] = 0;
	for (unsigned i = 0; i < PT_NIDS; i++) {
		start[i + 1] = start[i] + l.count[i];
		fill[i] = start[i];
		maxcount = l.count[i] > maxcount ? l.count[i] : maxcount;
	}
	uint64_t *ts = malloc((l.nev + 1) * sizeof *ts), *gaps = malloc((l.nev + 1) * sizeof *gaps);
	if (!ts || !gaps) {
		err_msg("out of memory");
		return 1;
	}
	for (size_t i = 0; i < l.nev; i++)
		ts[fill[l.ev[i].id]++] = l.ev[i].ts;

	int name_w = 10;
	char tmp[32], d1[24], d2[24], d3[24], span_s[24];
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l.count[i]) {
			int w = (int)strlen(tlog_name(&l, i, tmp, sizeof tmp));
			name_w = w > name_w ? (w < 30 ? w : 30) : name_w;
		}
	double span = (double)(t1 - t0) / 1e9;
	fmt_duration(span_s, sizeof span_s, t1 - t0);
	printf("%zu events over %s\n\n", l.nev, span_s);
	int fixed = name_w + 1 + 7 + 1 + 9 + 3 * 9 + 2;
	int bar_w = width - fixed > 5 ? width - fixed : 5;
	printf("%-*s %7s %9s %8s %8s %8s\n", name_w, "event type", "count", "rate",
	       "min gap", "med gap", "max gap");
	for (unsigned i = 0; i < PT_NIDS; i++) {
		size_t n = l.count[i];
		if (!n)
			continue;
		uint64_t *t = ts + start[i];
		qsort(t, n, sizeof *t, cmp_u64);
		for (size_t k = 1; k < n; k++)
			gaps[k - 1] = t[k] - t[k - 1];
		char rate[24];
		double r = span > 0 ? (double)n / span : 0;
		if (r >= 1e6)
			snprintf(rate, sizeof rate, "%.2fM/s", r / 1e6);
		else if (r >= 1e4)
			snprintf(rate, sizeof rate, "%.1fk/s", r / 1e3);
		else if (span > 0)
			snprintf(rate, sizeof rate, "%.1f/s", r);
		else
			snprintf(rate, sizeof rate, "-");
		if (n > 1) {
			qsort(gaps, n - 1, sizeof *gaps, cmp_u64);
			short_duration(d1, sizeof d1, gaps[0]);
			short_duration(d2, sizeof d2, gaps[(n - 1) / 2]);
			short_duration(d3, sizeof d3, gaps[n - 2]);
		} else {
			strcpy(d1, "-");
			strcpy(d2, "-");
			strcpy(d3, "-");
		}
		printf("%-*.*s %7zu %9s %8s %8s %8s  ", name_w, name_w,
		       tlog_name(&l, i, tmp, sizeof tmp), n, rate, d1, d2, d3);
		int len = (int)((double)n * bar_w / (double)maxcount + 0.5);
		bar(len ? len : 1, utf8);
		putchar('\n');
	}
	int cols = width - name_w - 3 > 10 ? width - name_w - 3 : 10;
	fmt_duration(d1, sizeof d1, (t1 - t0) / (uint64_t)cols);
	printf("\nactivity over time (one column = %s)\n", d1);
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l.count[i]) {
			printf("%-*.*s |", name_w, name_w, tlog_name(&l, i, tmp, sizeof tmp));
			activity(ts + start[i], l.count[i], t0, t1 - t0, cols, utf8);
			printf("|\n");
		}
	free(ts);
	free(gaps);
	tlog_free(&l);
	return fflush(stdout) == 0 ? 0 : 1;
}
