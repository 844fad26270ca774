/*
 * stats_report.c -- stats' report (cli/cmd/stats.c gathers the figures):
 * per event type the count, rate, gaps and a bar; per process and per
 * thread the count and rate (and --no-loss waits); the activity chart;
 * then the spans (spans_report.c).  As text, or as one JSON object.
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

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

/* The figures as one JSON object (docs/posixtrace.1, STATS JSON). */
void stats_json(const struct stats *s)
{
	const struct tlog *l = &s->l;
	const struct stats_counts *k = &s->k;
	const struct stats_type *ts = s->ts;
	uint64_t t0 = s->rel0;
	double span = (double)(s->t1 - s->t0) / 1e9;
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
		printf("%s\n{\"pid\":%d,\"threads\":%u,\"count\":%llu,\"rate\":%.3f,"
		       "\"first_ns\":%llu,\"last_ns\":%llu}",
		       first ? "" : ",", (int)l->pr[p].pid, k->prth[p], (unsigned long long)k->pr[p],
		       span > 0 ? (double)k->pr[p] / span : 0.0, (unsigned long long)l->pr[p].first,
		       (unsigned long long)l->pr[p].last);
		first = 0;
	}
	fputs("],\n\"threads\":[", stdout);
	first = 1;
	for (size_t p = 0; p < l->npr; p++)
		TLOG_PROC_THREADS(l, p, q, i) {
			const struct tthread *t = &l->th[i];
			if (!k->th[i])
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
	spans_json(stdout, s->sp, l, t0);
	fputs("}\n", stdout);
}

/* The text report's table of event types: count, rate, gaps and a bar. */
static void text_types(const struct stats *s, double span)
{
	const struct tlog *l = &s->l;
	const struct stats_counts *k = &s->k;
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
 * (and how long --no-loss held each thread), a process's first event
 * (seconds since time 0, as info gives it); each cut at --rows. */
static void text_threads(const struct stats *s, double span)
{
	const struct tlog *l = &s->l;
	const struct stats_counts *k = &s->k;
	uint64_t *count = malloc((l->nth + l->npr + 1) * sizeof *count), rest = 0;
	size_t n = 0, more = 0;

	/* (the rows: processes and threads with events) */
	for (size_t p = 0; count && p < l->npr; p++)
		if (k->pr[p])
			count[n++] = k->pr[p];
	unsigned char *keep = count ? rows_pick(count, n, s->rows) : NULL;
	printf("\n%-12s %7s %7s %9s %12s\n", "process", "threads", "count", "rate", "first (s)");
	n = 0;
	for (size_t p = 0; p < l->npr; p++) {
		char rate[24], since[40];
		if (!k->pr[p])
			continue;
		if (keep && !keep[n++]) {
			more++, rest += k->pr[p];
			continue;
		}
		rate_text(rate, sizeof rate, k->pr[p], span);
		/* (when it began tells apart two processes that had one pid) */
		fmt_since(since, sizeof since, l->pr[p].first, s->rel0);
		printf("%-12d %7u %7llu %9s %12s\n", (int)l->pr[p].pid, k->prth[p],
		       (unsigned long long)k->pr[p], rate, since);
	}
	rows_more(more, "process", rest, "events", 0);
	free(keep);
	n = more = rest = 0;
	for (size_t p = 0; count && p < l->npr; p++)
		TLOG_PROC_THREADS(l, p, q, i)
			if (i < s->known && k->th[i])
				count[n++] = k->th[i];
	keep = count ? rows_pick(count, n, s->rows) : NULL;
	n = 0;
	if (k->waits) /* and how long --no-loss held each */
		printf("\n%-14s %-16s %7s %9s %7s %11s\n", "pid/tid", "thread", "count", "rate",
		       "waits", "waited");
	else
		printf("\n%-14s %-16s %7s %9s\n", "pid/tid", "thread", "count", "rate");
	for (size_t p = 0; p < l->npr; p++)
		TLOG_PROC_THREADS(l, p, q, i) {
			const struct tthread *t = &l->th[i];
			char rate[24], who[48], name[40];
			if (i >= s->known || !k->th[i])
				continue;
			if (keep && !keep[n++]) {
				more++, rest += k->th[i];
				continue;
			}
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
	rows_more(more, "thread", rest, "events", 0);
	free(keep);
	free(count);
}

/* The text report: the tables, the activity chart, the spans. */
void stats_print(const struct stats *s)
{
	const struct tlog *l = &s->l;
	double span = (double)(s->t1 - s->t0) / 1e9;
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
